#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::Mode;
use crate::support_tests::{compile, policy};

const ROOT: &str = "/nonexistent-jp-workspace";

fn workspace() -> Workspace {
    Workspace::new(Path::new(ROOT))
}

fn state(rules: &str) -> StreamingPolicyState {
    StreamingPolicyState::new(Arc::new(policy(rules)))
}

/// What a stream reports as `args` arrive, one top-level parameter after
/// another, in document order: every nested value the state asks for as it
/// completes, then the parameter. Returns the status after each step, in
/// short form (`wait /path` or `ask@1`).
fn feed(state: &mut StreamingPolicyState, args: &Value) -> Vec<String> {
    let ws = workspace();
    let mut seen = vec![short(&state.status())];
    for (key, value) in args.as_object().unwrap() {
        let mut path = vec![Segment::Key(key.clone())];
        elements(state, &mut path, value, &ws, &mut seen);
        state.parameter_done(key, value, &ws);
        seen.push(short(&state.status()));
    }
    seen.dedup();
    seen
}

fn elements(
    state: &mut StreamingPolicyState,
    path: &mut Vec<Segment>,
    value: &Value,
    ws: &Workspace,
    seen: &mut Vec<String>,
) {
    if path.len() > 1 {
        let piece = match value {
            Value::Object(map) if map.is_empty() => Some(Piece::EmptyObject),
            Value::Array(items) if items.is_empty() => Some(Piece::EmptyArray),
            Value::Object(_) | Value::Array(_) => None,
            _ => Some(Piece::Value),
        };
        if let Some(piece) = piece {
            state.seen(path, piece);
        }
    }
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                path.push(Segment::Key(key.clone()));
                elements(state, path, value, ws, seen);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                path.push(Segment::Index(i));
                elements(state, path, value, ws, seen);
                path.pop();
            }
        }
        _ => {}
    }
    if path.len() > 1 && state.wants(path) {
        state.element_done(path, value, ws);
        seen.push(short(&state.status()));
    }
}

fn short(status: &Streaming) -> String {
    match status {
        Streaming::Decided(d) => match d.rule {
            Some(rule) => format!("{}@{rule}", d.mode),
            None => format!("{}@fallback", d.mode),
        },
        Streaming::Waiting { on, rule } => format!("wait {on} ({rule})"),
    }
}

/// The batch decision, which the streaming one must equal.
fn batch(rules: &str, args: &Value) -> Decision {
    policy(rules).evaluate(args, Path::new(ROOT))
}

/// The streaming decision is the batch one: mode, rule and reason (its
/// trace names only the deciding rule).
fn assert_same(streamed: Option<&Decision>, batch: &Decision) {
    let streamed = streamed.expect("decided");
    assert_eq!(
        (streamed.mode, streamed.rule, &streamed.reason),
        (batch.mode, batch.rule, &batch.reason)
    );
    if streamed.rule.is_some() {
        assert_eq!(streamed.trace.last(), batch.trace.last());
    }
}

const PATH_RULES: &str = r#"[
    { arg = "/path", prefix = ".env", mode = "ask" },
    { arg = "/path", prefix = "src/", mode = "unattended" },
    { mode = "skip" },
]"#;

#[test]
fn a_catch_all_decides_before_any_argument() {
    assert_eq!(feed(&mut state(r#""ask""#), &json!({})), ["ask@0"]);
    assert_eq!(
        feed(&mut state(r#"[{ mode = "unattended" }]"#), &json!({})),
        ["unattended@0"]
    );
}

#[test]
fn a_rule_decides_when_its_parameter_completes() {
    let args = json!({ "path": ".env", "name": "x" });
    assert_eq!(
        feed(&mut state(PATH_RULES), &args),
        ["wait path (0)", "ask@0"]
    );
    let mut s = state(PATH_RULES);
    feed(&mut s, &args);
    assert_same(s.decision(), &batch(PATH_RULES, &args));
}

#[test]
fn eliminated_rules_fall_through_to_the_next_and_the_catch_all() {
    let args = json!({ "path": "src/lib.rs" });
    assert_eq!(
        feed(&mut state(PATH_RULES), &args),
        ["wait path (0)", "unattended@1"]
    );
    let args = json!({ "path": "README.md" });
    let mut s = state(PATH_RULES);
    assert_eq!(feed(&mut s, &args), ["wait path (0)", "skip@2"]);
    assert_same(s.decision(), &batch(PATH_RULES, &args));
    assert_eq!(
        s.decision().unwrap().reason,
        "policy.run[2] (catch-all) matched"
    );
}

#[test]
fn every_rule_eliminated_gives_the_implicit_ask() {
    let rules = r#"[{ arg = "/path", prefix = "src/", mode = "unattended" }]"#;
    let args = json!({ "path": "docs/a.md" });
    let mut s = state(rules);
    assert_eq!(feed(&mut s, &args), ["wait path (0)", "ask@fallback"]);
    assert_same(s.decision(), &batch(rules, &args));
}

#[test]
fn a_rule_whose_parameter_has_not_arrived_blocks_the_rules_below() {
    // `name` arrives first, but rule 0 looks at `path`: rule 1 could
    // match `name` already, and must not decide over rule 0.
    let rules = r#"[
        { arg = "/path", prefix = "src/", mode = "unattended" },
        { arg = "/name", const = "x", mode = "skip" },
        { mode = "ask" },
    ]"#;
    let args = json!({ "name": "x", "content": "...", "path": "src/a.rs" });
    assert_eq!(
        feed(&mut state(rules), &args),
        ["wait path (0)", "unattended@0"]
    );
    let args = json!({ "name": "x", "path": "lib/a.rs" });
    assert_eq!(feed(&mut state(rules), &args), ["wait path (0)", "skip@1"]);
}

#[test]
fn a_nested_rule_that_is_not_unattended_decides_on_the_first_matching_element() {
    let rules = r#"[
        { arg = "/patterns/paths", prefix = ".ssh", mode = "skip" },
        { mode = "unattended" },
    ]"#;
    let args = json!({ "patterns": [
        { "old": "a", "paths": ["src/a.rs", ".ssh/id_rsa"] },
        { "old": "b", "paths": ["src/b.rs"] },
    ]});
    let mut s = state(rules);
    let ws = workspace();
    let at = |i: usize, j: usize| {
        vec![
            Segment::Key("patterns".into()),
            Segment::Index(i),
            Segment::Key("paths".into()),
            Segment::Index(j),
        ]
    };
    assert!(s.wants(&at(0, 0)));
    assert!(!s.wants(&[Segment::Key("patterns".into()), Segment::Index(0)]));
    assert_eq!(s.element_done(&at(0, 0), &json!("src/a.rs"), &ws), None);
    let decided = s
        .element_done(&at(0, 1), &json!(".ssh/id_rsa"), &ws)
        .cloned();
    assert_eq!(
        decided.as_ref().map(|d| (d.mode, d.rule)),
        Some((Mode::Skip, Some(0)))
    );
    // Decided before the array ended, and as the batch decides.
    assert_same(decided.as_ref(), &batch(rules, &args));
    assert_eq!(
        decided.unwrap().reason,
        "policy.run[0] (prefix \".ssh\" on /patterns/paths) matched: \".ssh/id_rsa\" at \
         /patterns/0/paths/1 is under .ssh/"
    );
    assert!(!s.wants(&at(1, 0)), "nothing more is needed once decided");
}

#[test]
fn an_unattended_nested_rule_is_eliminated_by_one_element_and_matches_only_at_the_end() {
    let rules = r#"[
        { arg = "/patterns/paths", prefix = "src/", mode = "unattended" },
        { mode = "ask" },
    ]"#;
    // One element outside src/: eliminated at once, the catch-all decides
    // while the rest of `patterns` still streams.
    let args = json!({ "patterns": [{ "paths": ["src/a.rs", "../x", "src/b.rs"] }] });
    assert_eq!(
        feed(&mut state(rules), &args),
        ["wait patterns (0)", "ask@1"]
    );
    let mut s = state(rules);
    let ws = workspace();
    let at = |j: usize| {
        vec![
            Segment::Key("patterns".into()),
            Segment::Index(0),
            Segment::Key("paths".into()),
            Segment::Index(j),
        ]
    };
    s.element_done(&at(0), &json!("src/a.rs"), &ws);
    assert_eq!(short(&s.status()), "wait patterns (0)");
    s.element_done(&at(1), &json!("../x"), &ws);
    assert_eq!(short(&s.status()), "ask@1");

    // Every element inside: only the end of `patterns` decides.
    let args = json!({ "patterns": [{ "paths": ["src/a.rs"] }, { "paths": ["src/b.rs"] }] });
    let mut s = state(rules);
    assert_eq!(feed(&mut s, &args), ["wait patterns (0)", "unattended@0"]);
    assert_same(s.decision(), &batch(rules, &args));
}

#[test]
fn an_array_that_ends_without_a_match_eliminates_the_rule() {
    let rules = r#"[
        { arg = "/patterns/paths", prefix = ".ssh", mode = "skip" },
        { mode = "unattended" },
    ]"#;
    for args in [
        json!({ "patterns": [{ "paths": ["src/a.rs"] }, { "paths": [] }] }),
        json!({ "patterns": [] }),
    ] {
        let mut s = state(rules);
        assert_eq!(feed(&mut s, &args), ["wait patterns (0)", "unattended@1"]);
        assert_same(s.decision(), &batch(rules, &args));
    }
}

#[test]
fn arguments_of_the_wrong_shape_are_settled_when_the_parameter_completes() {
    // `patterns` should be an array of objects; a string in its place is
    // malformed, which matches any rule that is not unattended (fail
    // closed), and the batch test on the completed parameter says so.
    let rules = r#"[
        { arg = "/patterns/paths", prefix = ".ssh", mode = "skip" },
        { mode = "unattended" },
    ]"#;
    let args = json!({ "patterns": ["oops", { "paths": 7 }] });
    let mut s = state(rules);
    assert_eq!(feed(&mut s, &args), ["wait patterns (0)", "skip@0"]);
    assert_same(s.decision(), &batch(rules, &args));
}

#[test]
fn a_parameter_that_never_arrives_keeps_it_waiting() {
    let mut s = state(PATH_RULES);
    assert_eq!(feed(&mut s, &json!({ "name": "x" })), ["wait path (0)"]);
    assert_eq!(s.decision(), None);
}

#[test]
fn a_long_parameter_before_a_needed_one_is_warned_about() {
    let params: crate::parameter::ToolParameters = toml::from_str(
        r#"
        content = { type = "string" }
        tags = { type = "array", items = { type = "string" } }
        path = { type = "path" }
        n = { type = "integer" }
        "#,
    )
    .unwrap();
    let policy = Policy::compile(
        &crate::support_tests::spec(
            r#"[{ arg = "/path", prefix = "src/", mode = "unattended" }, { arg = "/n", minimum = 3, mode = "skip" }, { mode = "ask" }]"#,
        ),
        crate::PolicyField::Run,
        crate::RuleOrigin::Tool,
        &params,
    )
    .policy
    .unwrap();
    assert_eq!(
        ordering_warnings(&policy, &params),
        [
            "`content` (string), `tags` (array) are declared before `path`, which policy.run[0] \
             needs: models send arguments in this order, so jp must wait for all of it before \
             deciding; declare `path` first",
            "`content` (string), `tags` (array) are declared before `n`, which policy.run[1] \
             needs: models send arguments in this order, so jp must wait for all of it before \
             deciding; declare `n` first",
        ]
    );
    // Short parameters first: nothing to say.
    assert_eq!(
        ordering_warnings(
            &crate::support_tests::policy(PATH_RULES),
            &crate::support_tests::params()
        ),
        Vec::<String>::new()
    );
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    fn path_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            8 => prop::sample::select(vec!["src/a.rs", ".env", "../x", "src", ".ssh/k", "a/../src/b", ""])
                .prop_map(Value::from),
            1 => Just(json!(3)),
            1 => Just(json!(["src/a.rs"])),
            1 => Just(json!({ "src": 1 })),
            1 => Just(json!([])),
        ]
    }

    fn arguments() -> impl Strategy<Value = Value> {
        let pattern = (path_value(), prop::collection::vec(path_value(), 0..3))
            .prop_map(|(old, paths)| json!({ "old": old, "paths": paths }));
        (
            prop::option::of(path_value()),
            prop::option::of(prop::sample::select(vec!["x", "y"])),
            prop::option::of(prop_oneof![
                4 => prop::collection::vec(pattern, 0..3).prop_map(Value::from),
                1 => Just(json!("oops")),
            ]),
            prop::sample::subsequence(vec!["path", "name", "patterns"], 3),
            any::<prop::sample::Index>(),
        )
            .prop_map(|(path, name, patterns, _, rotate)| {
                let mut entries: Vec<(&str, Value)> = Vec::new();
                if let Some(p) = path {
                    entries.push(("path", p));
                }
                if let Some(n) = name {
                    entries.push(("name", Value::from(n)));
                }
                if let Some(p) = patterns {
                    entries.push(("patterns", p));
                }
                if !entries.is_empty() {
                    let by = rotate.index(entries.len());
                    entries.rotate_left(by);
                }
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            })
    }

    fn rule() -> impl Strategy<Value = String> {
        let mode = prop::sample::select(vec!["unattended", "ask", "edit", "skip"]);
        let condition = prop::sample::select(vec![
            r#"arg = "/path", prefix = "src","#,
            r#"arg = "/path", const = ".env","#,
            r#"arg = "/name", const = "x","#,
            r#"arg = "/patterns/paths", prefix = "src","#,
            r#"arg = "/patterns/paths", prefix = ".ssh","#,
            r#"arg = "/patterns/old", pattern = "env","#,
            "",
        ]);
        (condition, mode).prop_map(|(c, m)| format!("{{ {c} mode = \"{m}\" }}"))
    }

    proptest! {
        #[test]
        fn streaming_equals_batch(
            rules in prop::collection::vec(rule(), 0..5),
            args in arguments(),
        ) {
            let rules = format!("[{}]", rules.join(", "));
            // Rule lists that do not load (a rule shadowed by one above it)
            // never reach evaluation.
            let Some(compiled) = compile(&rules).policy else {
                return Ok(());
            };
            let compiled = Arc::new(compiled);
            let mut s = StreamingPolicyState::new(compiled.clone());
            feed(&mut s, &args);
            let expected = compiled.evaluate(&args, Path::new(ROOT));
            match s.decision() {
                // Decided early or at a parameter's end: the same decision
                // (mode, rule and reason, which names the same value).
                Some(decided) => {
                    prop_assert_eq!((decided.mode, decided.rule), (expected.mode, expected.rule));
                    prop_assert_eq!(&decided.reason, &expected.reason);
                }
                // Still waiting: only when a parameter a rule needs never
                // arrived; the batch evaluation at the end decides.
                None => {
                    let Streaming::Waiting { on, .. } = s.status() else { unreachable!() };
                    prop_assert!(args.get(&on).is_none(), "waiting on {on}, which arrived");
                }
            }
        }
    }
}
