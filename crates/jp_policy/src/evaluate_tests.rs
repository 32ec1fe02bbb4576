#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::json;

use super::*;
use crate::support_tests::{compile_with, policy, spec};
use crate::{PolicyField, RuleOrigin};

const ROOT: &str = "/nonexistent-jp-workspace";

fn decide(policy: &Policy, args: &Value) -> (Mode, Option<usize>) {
    let d = policy.evaluate(args, Path::new(ROOT));
    (d.mode, d.rule)
}

fn trace(d: &Decision) -> Vec<(usize, bool, &str)> {
    d.trace
        .iter()
        .map(|t| (t.rule, t.matched, t.reason.as_str()))
        .collect()
}

const D25: &str = r#"[
    { arg = "/path", prefix = "src/sensitive/", mode = "ask" },
    { arg = "/path", prefix = "src/", mode = "unattended" },
    { mode = "ask" },
]"#;

#[test]
fn d25_first_match_wins() {
    let policy = policy(D25);
    let root = Path::new(ROOT);

    let d = policy.evaluate(&json!({ "path": "src/sensitive/secret.rs" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(0)));
    assert_eq!(
        d.reason,
        "policy.run[0] (prefix \"src/sensitive/\" on /path) matched: \"src/sensitive/secret.rs\" \
         is under src/sensitive/"
    );
    assert_eq!(
        trace(&d),
        [(
            0,
            true,
            "\"src/sensitive/secret.rs\" is under src/sensitive/"
        )]
    );

    let d = policy.evaluate(&json!({ "path": "src/lib.rs" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Unattended, Some(1)));
    assert_eq!(
        trace(&d),
        [
            (0, false, "\"src/lib.rs\" is not under src/sensitive/"),
            (1, true, "\"src/lib.rs\" is under src/"),
        ]
    );

    let d = policy.evaluate(&json!({ "path": "README.md" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(2)));
    assert_eq!(d.reason, "policy.run[2] (catch-all) matched");
    assert_eq!(
        trace(&d),
        [
            (0, false, "\"README.md\" is not under src/sensitive/"),
            (1, false, "\"README.md\" is not under src/"),
            (2, true, "catch-all"),
        ]
    );
}

#[test]
fn a_mode_string_decides_with_rule_zero() {
    let compiled = Policy::compile(
        &spec("\"skip\""),
        PolicyField::Run,
        RuleOrigin::Tool,
        &crate::support_tests::params(),
    );
    let d = compiled
        .policy
        .unwrap()
        .evaluate(&json!({}), Path::new(ROOT));
    assert_eq!((d.mode, d.rule), (Mode::Skip, Some(0)));
    assert_eq!(d.reason, "policy.run is \"skip\"");
    assert_eq!(trace(&d), [(0, true, "catch-all")]);
}

#[test]
fn nothing_matching_falls_back_to_ask() {
    let policy = policy(r#"[{ arg = "/path", prefix = "src/", mode = "unattended" }]"#);
    let d = policy.evaluate(&json!({ "path": "docs/x" }), Path::new(ROOT));
    assert_eq!((d.mode, d.rule), (Mode::Ask, None));
    assert_eq!(
        d.reason,
        "no rule of policy.run matched, so the implicit fallback \"ask\" applies"
    );
    assert_eq!(trace(&d), [(0, false, "\"docs/x\" is not under src/")]);

    let d = policy.evaluate(&json!({}), Path::new(ROOT));
    assert_eq!((d.mode, d.rule), (Mode::Ask, None));
    assert_eq!(trace(&d), [(0, false, "/path is absent")]);
}

const PATTERNS: &str = r#"[
    { arg = "/patterns/paths", prefix = ".env", mode = "ask" },
    { arg = "/patterns/paths", prefix = "src/", mode = "unattended" },
    { mode = "ask" },
]"#;

#[test]
fn d25_array_example_any_sensitive_value_asks() {
    let policy = policy(PATTERNS);
    let args = json!({
        "patterns": [
            { "old": "foo", "new": "bar", "paths": ["src/a.rs"] },
            { "old": "x", "new": "y", "paths": [".env"] },
        ]
    });
    let d = policy.evaluate(&args, Path::new(ROOT));
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(0)));
    assert_eq!(
        trace(&d),
        [(0, true, "\".env\" at /patterns/1/paths/0 is under .env/")]
    );
}

#[test]
fn an_unattended_rule_needs_every_element() {
    let policy = policy(PATTERNS);
    let root = Path::new(ROOT);

    let all_src =
        json!({ "patterns": [{ "paths": ["src/a.rs", "src/b.rs"] }, { "paths": ["src/c"] }] });
    let d = policy.evaluate(&all_src, root);
    assert_eq!((d.mode, d.rule), (Mode::Unattended, Some(1)));
    assert_eq!(
        trace(&d),
        [
            (
                0,
                false,
                "none of the 3 values of /patterns/paths is under .env/"
            ),
            (
                1,
                true,
                "each of the 3 values of /patterns/paths is under src/"
            ),
        ]
    );

    // One element outside the prefix: the unattended rule does not match.
    let mixed = json!({ "patterns": [{ "paths": ["src/a.rs", "../.ssh/id_rsa"] }] });
    let d = policy.evaluate(&mixed, root);
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(2)));
    assert_eq!(
        trace(&d),
        [
            (
                0,
                false,
                "none of the 2 values of /patterns/paths is under .env/"
            ),
            (
                1,
                false,
                "\"../.ssh/id_rsa\" at /patterns/0/paths/1 (normalized: /.ssh/id_rsa) is not \
                 under src/"
            ),
            (2, true, "catch-all"),
        ]
    );

    // No values at all: an unattended rule needs at least one.
    let d = policy.evaluate(
        &json!({ "patterns": [{ "old": "x" }, { "paths": [] }] }),
        root,
    );
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(2)));
    assert_eq!(
        trace(&d),
        [
            (0, false, "/patterns/paths has no values"),
            (1, false, "/patterns/paths has no values"),
            (2, true, "catch-all"),
        ]
    );
}

#[test]
fn a_restrictive_rule_needs_only_one_element() {
    let policy = policy(
        r#"[
        { arg = "/patterns/paths", prefix = "src/", mode = "ask" },
        { mode = "unattended" },
    ]"#,
    );
    let mixed = json!({ "patterns": [{ "paths": ["docs/a.md", "src/x.rs"] }] });
    assert_eq!(decide(&policy, &mixed), (Mode::Ask, Some(0)));
    let d = policy.evaluate(&mixed, Path::new(ROOT));
    assert_eq!(
        trace(&d),
        [(0, true, "\"src/x.rs\" at /patterns/0/paths/1 is under src/")]
    );
    let none = json!({ "patterns": [{ "paths": ["docs/a.md"] }] });
    assert_eq!(decide(&policy, &none), (Mode::Unattended, Some(1)));
}

#[test]
fn d25_const_enum_and_bounds_examples() {
    let policy = policy(
        r#"[
        { arg = "/util", const = "jq", mode = "ask" },
        { arg = "/util", enum = ["date", "wc", "head", "tail"], mode = "unattended" },
        { arg = "/replace_using_regex", const = true, mode = "ask" },
        { arg = "/start_line", minimum = 1000, mode = "ask" },
        { mode = "edit" },
    ]"#,
    );
    let root = Path::new(ROOT);
    assert_eq!(
        decide(&policy, &json!({ "util": "jq" })),
        (Mode::Ask, Some(0))
    );
    let d = policy.evaluate(&json!({ "util": "wc" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Unattended, Some(1)));
    assert_eq!(
        trace(&d),
        [
            (0, false, "\"wc\" does not equal \"jq\""),
            (
                1,
                true,
                "\"wc\" is one of [\"date\", \"wc\", \"head\", \"tail\"]"
            ),
        ]
    );
    let d = policy.evaluate(&json!({ "util": "rm", "replace_using_regex": true }), root);
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(2)));
    assert_eq!(
        trace(&d),
        [
            (0, false, "\"rm\" does not equal \"jq\""),
            (
                1,
                false,
                "\"rm\" is not one of [\"date\", \"wc\", \"head\", \"tail\"]"
            ),
            (2, true, "true equals true"),
        ]
    );
    let d = policy.evaluate(
        &json!({ "replace_using_regex": false, "start_line": 1200 }),
        root,
    );
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(3)));
    assert_eq!(
        d.reason,
        "policy.run[3] (minimum 1000 on /start_line) matched: 1200 is at least 1000"
    );
    let d = policy.evaluate(&json!({ "start_line": 999 }), root);
    assert_eq!((d.mode, d.rule), (Mode::Edit, Some(4)));
    assert_eq!(
        trace(&d),
        [
            (0, false, "/util is absent"),
            (1, false, "/util is absent"),
            (2, false, "/replace_using_regex is absent"),
            (3, false, "999 is less than 1000"),
            (4, true, "catch-all"),
        ]
    );
}

#[test]
fn d25_result_policy_example() {
    let compiled = compile_with(
        RuleOrigin::Tool,
        PolicyField::Result,
        r#"[
        { arg = "/path", prefix = ".env", mode = "ask" },
        { mode = "unattended" },
    ]"#,
    );
    let policy = compiled.policy.unwrap();
    assert_eq!(policy.field(), PolicyField::Result);
    let d = policy.evaluate(&json!({ "path": ".env" }), Path::new(ROOT));
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(0)));
    assert_eq!(
        d.reason,
        "policy.result[0] (prefix \".env\" on /path) matched: \".env\" is under .env/"
    );
    // Component-aware: `.env.local` is not under `.env`.
    assert_eq!(
        decide(&policy, &json!({ "path": ".env.local" })),
        (Mode::Unattended, Some(1))
    );
    assert_eq!(
        decide(&policy, &json!({ "path": ".env/prod" })),
        (Mode::Ask, Some(0))
    );
}

const SRC_THEN_ASK: &str = r#"[
    { arg = "/path", prefix = "src/", mode = "unattended" },
    { mode = "ask" },
]"#;

#[test]
fn dot_dot_and_json_escapes_cannot_sneak_out_of_a_prefix() {
    let policy = policy(SRC_THEN_ASK);
    // The model wrote `src\u002f..\u002f.env`; serde_json decodes the escapes.
    let args: Value = serde_json::from_str(r#"{ "path": "src\u002f..\u002f.env" }"#).unwrap();
    let d = policy.evaluate(&args, Path::new(ROOT));
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(1)));
    assert_eq!(
        trace(&d)[0],
        (
            0,
            false,
            "\"src/../.env\" (normalized: .env) is not under src/"
        )
    );
    assert_eq!(
        decide(&policy, &json!({ "path": "src/./a/../b.rs" })),
        (Mode::Unattended, Some(0))
    );
}

#[test]
fn path_prefixes_are_per_component_and_string_prefixes_per_byte() {
    let policy_on_path = policy(SRC_THEN_ASK);
    assert_eq!(
        decide(&policy_on_path, &json!({ "path": "src-old/lib.rs" })),
        (Mode::Ask, Some(1))
    );
    assert_eq!(
        decide(&policy_on_path, &json!({ "path": "src" })),
        (Mode::Unattended, Some(0))
    );
    let policy_on_string =
        policy(r#"[{ arg = "/name", prefix = "src", mode = "unattended" }, { mode = "ask" }]"#);
    let d = policy_on_string.evaluate(&json!({ "name": "src-old/lib.rs" }), Path::new(ROOT));
    assert_eq!((d.mode, d.rule), (Mode::Unattended, Some(0)));
    assert_eq!(
        trace(&d),
        [(0, true, "\"src-old/lib.rs\" starts with \"src\"")]
    );
}

#[test]
fn absolute_values_inside_and_outside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let policy = policy(
        r#"[
        { arg = "/path", prefix = "/etc", mode = "skip" },
        { arg = "/path", prefix = "src/", mode = "unattended" },
        { mode = "ask" },
    ]"#,
    );
    let inside = format!("{}/src/a.rs", root.display());
    let d = policy.evaluate(&json!({ "path": inside }), root);
    assert_eq!((d.mode, d.rule), (Mode::Unattended, Some(1)));
    assert_eq!(
        trace(&d)[1],
        (
            1,
            true,
            format!("\"{inside}\" (normalized: src/a.rs) is under src/").as_str()
        )
    );
    assert_eq!(
        decide_in(&policy, &json!({ "path": "/etc/passwd" }), root),
        (Mode::Skip, Some(0))
    );
    // Outside the root, a relative prefix never matches, even with the
    // same components.
    let outside = format!("{}/src/a.rs", root.parent().unwrap().display());
    assert_eq!(
        decide_in(&policy, &json!({ "path": outside }), root),
        (Mode::Ask, Some(2))
    );
    assert_eq!(
        decide_in(&policy, &json!({ "path": "../src/a.rs" }), root),
        (Mode::Ask, Some(2))
    );
}

fn decide_in(policy: &Policy, args: &Value, root: &Path) -> (Mode, Option<usize>) {
    let d = policy.evaluate(args, root);
    (d.mode, d.rule)
}

#[cfg(unix)]
#[test]
fn a_symlink_inside_src_pointing_outside_is_not_unattended() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("src")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("src/link")).unwrap();
    let outside_real = std::fs::canonicalize(outside.path()).unwrap();
    let outside_prefix = outside_real.display().to_string();

    let policy = policy(SRC_THEN_ASK);
    let d = policy.evaluate(&json!({ "path": "src/link/secret" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(1)));
    assert_eq!(
        d.trace[0].reason,
        format!(
            "\"src/link/secret\" is under src/, but resolves to {outside_prefix}/secret, which is \
             not under src/"
        )
    );
    // A plain file in src/ still runs unattended.
    assert_eq!(
        decide_in(&policy, &json!({ "path": "src/lib.rs" }), root),
        (Mode::Unattended, Some(0))
    );

    // A restrictive rule fires on either form: by name...
    let ask_src = policy_text(r#"{ arg = "/path", prefix = "src/", mode = "ask" }"#);
    let d = ask_src.evaluate(&json!({ "path": "src/link/secret" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(0)));
    assert_eq!(
        d.trace[0].reason,
        format!("\"src/link/secret\" is under src/ (resolved: {outside_prefix}/secret)")
    );
    // ...or by target.
    let ask_outside = policy_text(&format!(
        r#"{{ arg = "/path", prefix = "{outside_prefix}", mode = "ask" }}"#
    ));
    let d = ask_outside.evaluate(&json!({ "path": "src/link/secret" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(0)));
    assert_eq!(
        d.trace[0].reason,
        format!(
            "\"src/link/secret\" resolves to {outside_prefix}/secret, which is under \
             {outside_prefix}/"
        )
    );

    // The condition API gives the same answers one value at a time.
    let condition = policy.rules()[0].condition.as_ref().unwrap();
    let value = json!("src/link/secret");
    assert!(!condition.matches_value(&value, Mode::Unattended, root));
    assert!(condition.matches_value(&value, Mode::Ask, root));
}

fn policy_text(rule: &str) -> Policy {
    policy(&format!("[{rule}, {{ mode = \"unattended\" }}]"))
}

#[test]
fn nul_in_a_path_fails_closed() {
    let policy = policy(
        r#"[
        { arg = "/path", prefix = "src/", mode = "unattended" },
        { arg = "/path", prefix = ".env", mode = "edit" },
        { mode = "skip" },
    ]"#,
    );
    let args: Value = serde_json::from_str(r#"{ "path": "src/a\u0000.rs" }"#).unwrap();
    let d = policy.evaluate(&args, Path::new(ROOT));
    assert_eq!((d.mode, d.rule), (Mode::Edit, Some(1)));
    assert_eq!(
        trace(&d),
        [
            (
                0,
                false,
                "\"src/a\\u0000.rs\" contains NUL, which no path can hold"
            ),
            (
                1,
                true,
                "\"src/a\\u0000.rs\" contains NUL, which no path can hold, which matches any rule \
                 that is not \"unattended\""
            ),
        ]
    );
}

#[test]
fn values_of_the_wrong_type_fail_closed() {
    let policy = policy(
        r#"[
        { arg = "/start_line", maximum = 10, mode = "unattended" },
        { arg = "/start_line", minimum = 1000, mode = "ask" },
        { mode = "skip" },
    ]"#,
    );
    let d = policy.evaluate(&json!({ "start_line": "5" }), Path::new(ROOT));
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(1)));
    assert_eq!(
        trace(&d),
        [
            (0, false, "\"5\" is not an integer"),
            (
                1,
                true,
                "\"5\" is not an integer, which matches any rule that is not \"unattended\""
            ),
        ]
    );
    // null is no value of any type.
    assert_eq!(
        decide(&policy, &json!({ "start_line": null })),
        (Mode::Ask, Some(1))
    );
    let tags = policy_text(r#"{ arg = "/tags", const = "a", mode = "unattended" }"#);
    assert_eq!(
        decide(&tags, &json!({ "tags": ["a", 1] })),
        (Mode::Unattended, Some(1))
    );
}

#[test]
fn arguments_of_the_wrong_shape_fail_closed() {
    let policy = policy(PATTERNS);
    let d = policy.evaluate(&json!({ "patterns": "src/a.rs" }), Path::new(ROOT));
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(0)));
    assert_eq!(
        trace(&d),
        [(
            0,
            true,
            "/patterns is \"src/a.rs\", not an array, which matches any rule that is not \
             \"unattended\""
        )]
    );
    let unattended =
        policy_text(r#"{ arg = "/patterns/paths", prefix = "src", mode = "unattended" }"#);
    let d = unattended.evaluate(&json!({ "patterns": ["src/a.rs"] }), Path::new(ROOT));
    assert_eq!((d.mode, d.rule), (Mode::Unattended, Some(1)));
    assert_eq!(
        d.trace[0].reason,
        "/patterns/0 is \"src/a.rs\", not an object"
    );
    let d = unattended.evaluate(&json!(["src/a.rs"]), Path::new(ROOT));
    assert_eq!(
        d.trace[0].reason,
        "the arguments are [\"src/a.rs\"], not an object"
    );
}

#[test]
fn numbers_compare_numerically() {
    let policy = policy(
        r#"[
        { arg = "/start_line", const = 1, mode = "skip" },
        { arg = "/ratio", enum = [1, 2.5], mode = "edit" },
        { arg = "/ratio", exclusive_minimum = 2.5, mode = "unattended" },
        { mode = "ask" },
    ]"#,
    );
    assert_eq!(
        decide(&policy, &json!({ "start_line": 1.0 })),
        (Mode::Skip, Some(0))
    );
    assert_eq!(
        decide(&policy, &json!({ "start_line": 1 })),
        (Mode::Skip, Some(0))
    );
    assert_eq!(
        decide(&policy, &json!({ "ratio": 1.0 })),
        (Mode::Edit, Some(1))
    );
    assert_eq!(
        decide(&policy, &json!({ "ratio": 2.5 })),
        (Mode::Edit, Some(1))
    );
    assert_eq!(
        decide(&policy, &json!({ "ratio": 3 })),
        (Mode::Unattended, Some(2))
    );
    assert_eq!(
        decide(&policy, &json!({ "ratio": 2.4 })),
        (Mode::Ask, Some(3))
    );
    // Large integers are compared exactly, not through f64.
    let big = policy_text(r#"{ arg = "/start_line", const = 9007199254740993, mode = "skip" }"#);
    assert_eq!(
        decide(&big, &json!({ "start_line": 9_007_199_254_740_992_u64 })),
        (Mode::Unattended, Some(1))
    );
    assert_eq!(
        decide(&big, &json!({ "start_line": 9_007_199_254_740_993_u64 })),
        (Mode::Skip, Some(0))
    );
}

#[test]
fn patterns_are_unanchored_and_apply_to_normalized_paths() {
    let policy = policy(
        r#"[
        { arg = "/patterns/old", pattern = "rm\\s+-rf", mode = "ask" },
        { arg = "/path", pattern = "^\\.env", mode = "skip" },
        { mode = "unattended" },
    ]"#,
    );
    let d = policy.evaluate(
        &json!({ "patterns": [{ "old": "x && rm  -rf /" }] }),
        Path::new(ROOT),
    );
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(0)));
    assert_eq!(
        trace(&d),
        [(
            0,
            true,
            "\"x && rm  -rf /\" at /patterns/0/old matches pattern \"rm\\\\s+-rf\""
        )]
    );
    assert_eq!(
        decide(&policy, &json!({ "path": "./src/../.env.local" })),
        (Mode::Skip, Some(1))
    );
}

#[test]
fn conditions_resolve_values_through_arrays() {
    let policy = policy(PATTERNS);
    let condition = policy.rules()[0].condition.as_ref().unwrap();
    let args = json!({ "patterns": [{ "paths": ["a", "b"] }, { "old": "x" }, { "paths": ["c"] }] });
    assert_eq!(
        condition.values(&args),
        [&json!("a"), &json!("b"), &json!("c")]
    );
    assert_eq!(condition.values(&json!({})), Vec::<&Value>::new());
    assert_eq!(condition.values(&json!({ "patterns": 3 })), [&Value::Null]);
    let root = Path::new(ROOT);
    assert!(condition.matches_value(&json!(".env"), Mode::Ask, root));
    assert!(!condition.matches_value(&json!("src/a"), Mode::Ask, root));
    assert!(condition.matches_value(&Value::Null, Mode::Ask, root));
    assert!(!condition.matches_value(&Value::Null, Mode::Unattended, root));
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// An independent model of decision 3 for relative values: resolve the
    /// components against the root, and say whether the result is inside
    /// the root and under `src`. Relative `..` that leave the root make
    /// the value absolute and outside; nothing after them brings it back.
    fn inside_src(value: &str) -> bool {
        if value.starts_with('/') {
            // Absolute, and the root (`ROOT`) is never generated.
            return false;
        }
        let mut stack: Vec<&str> = Vec::new();
        let mut escaped = false;
        for part in value.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if stack.pop().is_none() {
                        escaped = true;
                    }
                }
                other => {
                    if !escaped {
                        stack.push(other);
                    }
                }
            }
        }
        !escaped && stack.first() == Some(&"src")
    }

    fn path_strategy() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(vec!["src", "..", ".", "", "a", "src-old", ".env"]),
            0..6,
        )
        .prop_map(|parts| parts.join("/"))
    }

    proptest! {
        #[test]
        fn unattended_needs_every_value_and_ask_needs_one(
            paths in prop::collection::vec(path_strategy(), 0..4)
        ) {
            let unattended = policy(r#"[{ arg = "/patterns/paths", prefix = "src", mode = "unattended" }]"#);
            let ask = policy(r#"[{ arg = "/patterns/paths", prefix = "src", mode = "ask" }]"#);
            let args = json!({ "patterns": [{ "paths": paths }] });
            let all = !paths.is_empty() && paths.iter().all(|p| inside_src(p));
            let any = paths.iter().any(|p| inside_src(p));
            prop_assert_eq!(decide(&unattended, &args).0 == Mode::Unattended, all);
            prop_assert_eq!(decide(&ask, &args).1 == Some(0), any);
        }
    }
}

#[cfg(unix)]
#[test]
fn an_unresolvable_path_never_runs_unattended() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("src")).unwrap();
    symlink("b", root.join("src/a")).unwrap();
    symlink("a", root.join("src/b")).unwrap();

    let d = policy(SRC_THEN_ASK).evaluate(&json!({ "path": "src/a/x.rs" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(1)));
    assert_eq!(
        trace(&d),
        [
            (
                0,
                false,
                "\"src/a/x.rs\" is under src/, but cannot be resolved: symbolic links loop at \
                 src/a"
            ),
            (1, true, "catch-all"),
        ]
    );

    // Any other rule still matches on the lexical form.
    let d = policy(
        r#"[
        { arg = "/path", prefix = "src/", mode = "edit" },
        { mode = "unattended" },
    ]"#,
    )
    .evaluate(&json!({ "path": "src/a/x.rs" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Edit, Some(0)));
    assert_eq!(
        d.trace[0].reason,
        "\"src/a/x.rs\" is under src/ (cannot be resolved: symbolic links loop at src/a)"
    );
    // And does not match when the lexical form does not.
    let d = policy(
        r#"[
        { arg = "/path", prefix = "docs/", mode = "skip" },
        { mode = "ask" },
    ]"#,
    )
    .evaluate(&json!({ "path": "src/a/x.rs" }), root);
    assert_eq!(
        d.trace[0],
        RuleTrace {
            rule: 0,
            matched: false,
            reason: "\"src/a/x.rs\" is not under docs/ (cannot be resolved: symbolic links loop \
                     at src/a)"
                .into()
        }
    );
}

#[test]
fn an_unattended_pattern_approves_only_paths_inside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let rs = policy(
        r#"[
        { arg = "/path", pattern = "\\.rs$", mode = "unattended" },
        { mode = "ask" },
    ]"#,
    );
    let d = rs.evaluate(&json!({ "path": "src/lib.rs" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Unattended, Some(0)));

    let d = rs.evaluate(&json!({ "path": "../../etc/x.rs" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(1)));
    let outside = root.parent().unwrap().parent().unwrap().join("etc/x.rs");
    assert_eq!(
        d.trace[0].reason,
        format!(
            "\"../../etc/x.rs\" (normalized: {}) matches pattern \"\\\\.rs$\", but is outside \
             the workspace",
            outside.display()
        )
    );
    let d = rs.evaluate(&json!({ "path": "/etc/x.rs" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(1)));

    // A rule that is not unattended matches outside paths as before.
    let ask_rs = policy(
        r#"[
        { arg = "/path", pattern = "\\.rs$", mode = "ask" },
        { mode = "unattended" },
    ]"#,
    );
    let d = ask_rs.evaluate(&json!({ "path": "/etc/x.rs" }), root);
    assert_eq!((d.mode, d.rule), (Mode::Ask, Some(0)));
}

#[test]
fn an_unattended_rule_that_names_an_absolute_location_approves_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let tmp = policy(
        r#"[
        { arg = "/path", prefix = "/tmp/jp-scratch", mode = "unattended" },
        { arg = "/path", const = "/etc/jp.conf", mode = "unattended" },
        { arg = "/path", enum = ["README.md", "/var/jp.log"], mode = "unattended" },
        { mode = "ask" },
    ]"#,
    );
    for (path, rule) in [
        ("/tmp/jp-scratch/a", 0),
        ("/etc/jp.conf", 1),
        ("/var/jp.log", 2),
        ("README.md", 2),
    ] {
        assert_eq!(
            decide_in(&tmp, &json!({ "path": path }), root),
            (Mode::Unattended, Some(rule)),
            "{path}"
        );
    }
    assert_eq!(
        decide_in(&tmp, &json!({ "path": "/tmp/other" }), root),
        (Mode::Ask, Some(3))
    );
}
