#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support_tests::{NO_CATCH_ALL, compile, errors, messages};

/// The unreachable-rule errors of two rules followed by a catch-all.
fn pair(earlier: &str, later: &str) -> Vec<String> {
    errors(&format!("[{earlier}, {later}, {{ mode = \"ask\" }}]"))
}

fn unreachable(later: usize, earlier: usize, describe: &str) -> String {
    format!(
        "policy.run[{later}]: can never match: policy.run[{earlier}] ({describe}) matches \
         everything it matches; move it above policy.run[{earlier}] or remove it"
    )
}

#[test]
fn d25_table_prefix_before_longer_prefix() {
    assert_eq!(
        pair(
            r#"{ arg = "/path", prefix = "src/", mode = "ask" }"#,
            r#"{ arg = "/path", prefix = "src/sensitive/", mode = "ask" }"#
        ),
        [unreachable(1, 0, "prefix \"src/\" on /path")]
    );
}

#[test]
fn d25_table_prefix_before_const() {
    assert_eq!(
        pair(
            r#"{ arg = "/path", prefix = "src/", mode = "ask" }"#,
            r#"{ arg = "/path", const = "src/lib.rs", mode = "edit" }"#
        ),
        [unreachable(1, 0, "prefix \"src/\" on /path")]
    );
}

#[test]
fn d25_table_enum_before_const() {
    assert_eq!(
        pair(
            r#"{ arg = "/util", enum = ["jq", "wc"], mode = "ask" }"#,
            r#"{ arg = "/util", const = "jq", mode = "skip" }"#
        ),
        [unreachable(1, 0, "enum [\"jq\", \"wc\"] on /util")]
    );
}

#[test]
fn d25_table_enum_before_subset_enum() {
    assert_eq!(
        pair(
            r#"{ arg = "/util", enum = ["jq", "wc", "date"], mode = "unattended" }"#,
            r#"{ arg = "/util", enum = ["wc", "jq"], mode = "unattended" }"#
        ),
        [unreachable(
            1,
            0,
            "enum [\"jq\", \"wc\", \"date\"] on /util"
        )]
    );
    // Not a subset: no error.
    assert_eq!(
        pair(
            r#"{ arg = "/util", enum = ["jq", "wc"], mode = "ask" }"#,
            r#"{ arg = "/util", enum = ["jq", "date"], mode = "ask" }"#
        ),
        Vec::<String>::new()
    );
}

/// The error on rule `later`, which comes after the catch-all `catch_all`.
fn after_catch_all(later: usize, catch_all: usize) -> String {
    format!(
        "policy.run[{later}]: can never match: policy.run[{catch_all}] (catch-all) matches every \
         call; move the catch-all to the end or remove this rule"
    )
}

#[test]
fn d25_table_catch_all_before_any_rule() {
    // An error on every rule after the catch-all, each by its index.
    let text = r#"[
            { arg = "/path", prefix = "src/", mode = "unattended" },
            { mode = "ask" },
            { arg = "/path", prefix = "docs/", mode = "unattended" },
            { mode = "skip" },
        ]"#;
    assert_eq!(errors(text), [after_catch_all(2, 1), after_catch_all(3, 1)]);
    assert_eq!(messages(&compile(text).warnings), Vec::<String>::new());
}

#[test]
fn a_catch_all_first_before_laxer_rules_is_an_error_for_each() {
    // Rules laxer than the catch-all are as unreachable as stricter ones:
    // D25 makes every one of them a config error, not a warning.
    let compiled = compile(
        r#"[
            { mode = "ask" },
            { arg = "/path", prefix = "src/", mode = "unattended" },
            { arg = "/path", prefix = "docs/", mode = "ask" },
            { arg = "/path", prefix = "x/", mode = "unattended" },
        ]"#,
    );
    assert!(compiled.policy.is_none());
    assert_eq!(
        messages(&compiled.errors),
        [
            after_catch_all(1, 0),
            after_catch_all(2, 0),
            after_catch_all(3, 0)
        ]
    );
    assert_eq!(messages(&compiled.warnings), Vec::<String>::new());
}

/// Catch-alls in every place a list can have them: which rules are
/// errors, and whether the "no final catch-all" warning is given.
#[test]
fn catch_alls_anywhere_in_a_list() {
    const R: &str = r#"{ arg = "/path", prefix = "src/", mode = "unattended" }"#;
    const S: &str = r#"{ arg = "/name", const = "x", mode = "skip" }"#;
    const ASK: &str = r#"{ mode = "ask" }"#;
    const UNATTENDED: &str = r#"{ mode = "unattended" }"#;
    /// The rules, the unreachable ones as (index, catch-all), and whether
    /// the "no final catch-all" warning is given.
    type Case<'a> = (&'a [&'a str], &'a [(usize, usize)], bool);
    let table: &[Case<'_>] = &[
        (&[], &[], false),
        (&[ASK], &[], false),
        (&[R], &[], true),
        (&[R, S], &[], true),
        (&[R, S, ASK], &[], false),
        (&[ASK, R], &[(1, 0)], false),
        (&[UNATTENDED, S], &[(1, 0)], false),
        (&[ASK, ASK], &[(1, 0)], false),
        (&[ASK, UNATTENDED], &[(1, 0)], false),
        (&[R, ASK, S], &[(2, 1)], false),
        (
            &[R, ASK, S, R, UNATTENDED],
            &[(2, 1), (3, 1), (4, 1)],
            false,
        ),
        (&[R, S, UNATTENDED, ASK], &[(3, 2)], false),
        (&[ASK, R, ASK, S], &[(1, 0), (2, 0), (3, 0)], false),
    ];
    for (rules, unreachable, no_catch_all) in table {
        let text = format!("[{}]", rules.join(", "));
        let compiled = compile(&text);
        let want: Vec<String> = unreachable
            .iter()
            .map(|&(later, catch_all)| after_catch_all(later, catch_all))
            .collect();
        assert_eq!(messages(&compiled.errors), want, "{text}");
        assert_eq!(compiled.policy.is_some(), want.is_empty(), "{text}");
        let warned = messages(&compiled.warnings).contains(&NO_CATCH_ALL.to_owned());
        assert_eq!(warned, *no_catch_all, "{text}");
    }
}

#[test]
fn broken_and_skipped_rules_after_a_catch_all_are_unreachable_too() {
    use crate::support_tests::compile_with;
    use crate::{PolicyField, RuleOrigin};

    // A rule with its own error gets that error and the catch-all's.
    assert_eq!(
        errors(r#"[{ mode = "ask" }, { arg = "/path", prefx = "src/", mode = "ask" }]"#),
        [
            "policy.run[1]: unknown key \"prefx\" (a rule has arg, mode and one matcher: const, \
             enum, pattern, prefix, minimum, maximum, exclusive_minimum or exclusive_maximum)"
                .to_owned(),
            "policy.run[1]: \"arg\" without a matcher (add one of const, enum, pattern, prefix, \
             minimum, maximum, exclusive_minimum or exclusive_maximum)"
                .to_owned(),
            after_catch_all(1, 0),
        ]
    );
    // A `'*'` rule this tool skips (no /command parameter) is reported
    // as well: it is unreachable for every tool.
    let compiled = compile_with(
        RuleOrigin::Defaults,
        PolicyField::Run,
        r#"[{ mode = "ask" }, { arg = "/command", prefix = "cargo ", mode = "unattended" }]"#,
    );
    assert_eq!(compiled.skipped, [1]);
    assert_eq!(messages(&compiled.errors), [after_catch_all(1, 0)]);
    assert!(compiled.policy.is_none());
}

#[test]
fn prefix_spellings_are_normalized_before_comparing() {
    assert_eq!(
        pair(
            r#"{ arg = "/path", prefix = "./src", mode = "ask" }"#,
            r#"{ arg = "/path", prefix = "src//lib/", mode = "ask" }"#
        ),
        [unreachable(1, 0, "prefix \"./src\" on /path")]
    );
    assert_eq!(
        pair(
            r#"{ arg = "/path", prefix = "src/", mode = "ask" }"#,
            r#"{ arg = "/path", prefix = "src", mode = "ask" }"#
        ),
        [unreachable(1, 0, "prefix \"src/\" on /path")]
    );
    assert_eq!(
        pair(
            r#"{ arg = "/path", prefix = "/etc", mode = "ask" }"#,
            r#"{ arg = "/path", const = "/etc/ssh/../hosts", mode = "ask" }"#
        ),
        [unreachable(1, 0, "prefix \"/etc\" on /path")]
    );
}

#[test]
fn path_prefixes_compare_components_and_string_prefixes_bytes() {
    assert_eq!(
        pair(
            r#"{ arg = "/path", prefix = "src", mode = "ask" }"#,
            r#"{ arg = "/path", prefix = "src-old", mode = "ask" }"#
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        pair(
            r#"{ arg = "/name", prefix = "src", mode = "ask" }"#,
            r#"{ arg = "/name", prefix = "src-old", mode = "ask" }"#
        ),
        [unreachable(1, 0, "prefix \"src\" on /name")]
    );
    // A relative and an absolute prefix are never compared: the root is not
    // known when the policy is compiled.
    assert_eq!(
        pair(
            r#"{ arg = "/path", prefix = "src", mode = "ask" }"#,
            r#"{ arg = "/path", prefix = "/work/src", mode = "ask" }"#
        ),
        Vec::<String>::new()
    );
    // A longer prefix first is the right order.
    assert_eq!(
        pair(
            r#"{ arg = "/path", prefix = "src/sensitive", mode = "ask" }"#,
            r#"{ arg = "/path", prefix = "src", mode = "ask" }"#
        ),
        Vec::<String>::new()
    );
}

#[test]
fn equal_consts_compare_numerically() {
    assert_eq!(
        pair(
            r#"{ arg = "/start_line", const = 1, mode = "ask" }"#,
            r#"{ arg = "/start_line", const = 1.0, mode = "skip" }"#
        ),
        [unreachable(1, 0, "const 1 on /start_line")]
    );
    assert_eq!(
        pair(
            r#"{ arg = "/ratio", enum = [1, 2.5], mode = "ask" }"#,
            r#"{ arg = "/ratio", const = 1.0, mode = "skip" }"#
        ),
        [unreachable(1, 0, "enum [1, 2.5] on /ratio")]
    );
    assert_eq!(
        pair(
            r#"{ arg = "/replace_using_regex", const = true, mode = "ask" }"#,
            r#"{ arg = "/replace_using_regex", enum = [true], mode = "skip" }"#
        ),
        [unreachable(1, 0, "const true on /replace_using_regex")]
    );
    assert_eq!(
        pair(
            r#"{ arg = "/start_line", const = 1, mode = "ask" }"#,
            r#"{ arg = "/start_line", const = 2, mode = "skip" }"#
        ),
        Vec::<String>::new()
    );
}

#[test]
fn numeric_bounds() {
    let cases = [
        // (earlier, later, unreachable?)
        ("minimum = 10", "minimum = 20", true),
        ("minimum = 10", "minimum = 10", true),
        ("minimum = 10", "exclusive_minimum = 10", true),
        ("exclusive_minimum = 10", "minimum = 11", true),
        ("exclusive_minimum = 10", "minimum = 10", false),
        // Not for integers either: no integrality is assumed.
        ("minimum = 11", "exclusive_minimum = 10", false),
        ("minimum = 20", "minimum = 10", false),
        ("maximum = 10", "maximum = 5", true),
        ("maximum = 10", "exclusive_maximum = 10", true),
        ("exclusive_maximum = 10", "maximum = 9.5", true),
        ("exclusive_maximum = 10", "maximum = 10", false),
        ("minimum = 10", "maximum = 20", false),
        ("maximum = 20", "minimum = 10", false),
        ("minimum = 1000", "const = 1200", true),
        ("minimum = 1000", "enum = [1000, 2000]", true),
        ("minimum = 1000", "enum = [999, 2000]", false),
        ("exclusive_minimum = 1000", "const = 1000", false),
        ("maximum = 1.5", "const = 1", true),
        ("const = 5", "minimum = 5", false),
    ];
    for (earlier, later, shadowed) in cases {
        let found = pair(
            &format!(r#"{{ arg = "/start_line", {earlier}, mode = "ask" }}"#),
            &format!(r#"{{ arg = "/start_line", {later}, mode = "ask" }}"#),
        );
        let describe = format!("{} on /start_line", earlier.replace(" = ", " "));
        let expected = if shadowed {
            vec![unreachable(1, 0, &describe)]
        } else {
            Vec::new()
        };
        assert_eq!(found, expected, "{earlier} before {later}");
    }
}

#[test]
fn no_claims_across_arguments_or_for_patterns() {
    assert_eq!(
        pair(
            r#"{ arg = "/util", prefix = "a", mode = "ask" }"#,
            r#"{ arg = "/name", prefix = "ab", mode = "ask" }"#
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        pair(
            r#"{ arg = "/util", pattern = "a", mode = "ask" }"#,
            r#"{ arg = "/util", pattern = "a", mode = "ask" }"#
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        pair(
            r#"{ arg = "/util", pattern = ".", mode = "ask" }"#,
            r#"{ arg = "/util", const = "jq", mode = "ask" }"#
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        pair(
            r#"{ arg = "/util", const = "jq", mode = "ask" }"#,
            r#"{ arg = "/util", pattern = "^jq$", mode = "ask" }"#
        ),
        Vec::<String>::new()
    );
}

#[test]
fn an_unattended_rule_over_an_array_only_warns() {
    let compiled = compile(
        r#"[
        { arg = "/tags", prefix = "safe-", mode = "unattended" },
        { arg = "/tags", prefix = "safe-x", mode = "ask" },
        { mode = "skip" },
    ]"#,
    );
    assert!(compiled.errors.is_empty());
    assert_eq!(
        messages(&compiled.warnings),
        [
            "policy.run[1]: policy.run[0] (prefix \"safe-\" on /tags) comes first and matches every \
          value this rule matches, but as an \"unattended\" rule it needs every value to match, \
          so this rule only fires when that fails; move it above policy.run[0] if it should \
          decide every value it matches"
        ]
    );
}

#[test]
fn an_unattended_rule_over_a_single_path_is_an_error_and_over_an_array_a_warning() {
    let compiled = compile(
        r#"[
        { arg = "/path", prefix = "src/", mode = "unattended" },
        { arg = "/path", prefix = "src/sensitive/", mode = "ask" },
        { arg = "/patterns/paths", prefix = "src/", mode = "unattended" },
        { arg = "/patterns/paths", const = "src/a.rs", mode = "edit" },
    ]"#,
    );
    // D25's headline ordering mistake: the later rule could only fire when
    // a symlink defeats the earlier one, so it is reported as unreachable.
    assert_eq!(
        messages(&compiled.errors),
        [
            "policy.run[1]: can never match: policy.run[0] (prefix \"src/\" on /path) matches \
          everything it matches; move it above policy.run[0] or remove it"
        ]
    );
    // Through an array the later rule still decides mixed arrays.
    assert_eq!(
        messages(&compiled.warnings),
        [
            "policy.run[3]: policy.run[2] (prefix \"src/\" on /patterns/paths) comes first and \
             matches every value this rule matches, but as an \"unattended\" rule it needs every \
             value, each with its symlink-resolved form, to match, so this rule only fires when \
             that fails; move it above policy.run[2] if it should decide every value it matches",
            NO_CATCH_ALL,
        ]
    );
}

#[test]
fn quantifiers_only_matter_in_one_direction() {
    // Earlier unattended, later unattended: the later one needs even more.
    assert_eq!(
        pair(
            r#"{ arg = "/path", prefix = "src/", mode = "unattended" }"#,
            r#"{ arg = "/path", prefix = "src/a", mode = "unattended" }"#
        ),
        [unreachable(1, 0, "prefix \"src/\" on /path")]
    );
    // Earlier "any value" rule: one matching value is enough for it.
    assert_eq!(
        pair(
            r#"{ arg = "/patterns/paths", prefix = "src/", mode = "ask" }"#,
            r#"{ arg = "/patterns/paths", prefix = "src/a", mode = "unattended" }"#
        ),
        [unreachable(1, 0, "prefix \"src/\" on /patterns/paths")]
    );
    // A single string value has one form and one value.
    assert_eq!(
        pair(
            r#"{ arg = "/util", enum = ["jq", "wc"], mode = "unattended" }"#,
            r#"{ arg = "/util", const = "jq", mode = "ask" }"#
        ),
        [unreachable(1, 0, "enum [\"jq\", \"wc\"] on /util")]
    );
}

#[test]
fn an_error_wins_over_a_warning_for_the_same_rule() {
    let compiled = compile(
        r#"[
        { arg = "/tags", prefix = "a", mode = "unattended" },
        { arg = "/tags", prefix = "a", mode = "ask" },
        { arg = "/tags", prefix = "ab", mode = "ask" },
        { mode = "ask" },
    ]"#,
    );
    assert_eq!(
        messages(&compiled.errors),
        [unreachable(2, 1, "prefix \"a\" on /tags")]
    );
    assert_eq!(compiled.warnings.len(), 1);
    assert_eq!(compiled.warnings[0].rule, Some(1));
}
