#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::support_tests::{
    NO_CATCH_ALL, compile, compile_with, errors, messages, params, policy, spec,
};

const KEYS: &str = "(a rule has arg, mode and one matcher: const, enum, pattern, prefix, \
                    minimum, maximum, exclusive_minimum or exclusive_maximum)";

fn one_error(rule: &str) -> String {
    let found = errors(&format!("[{rule}, {{ mode = \"ask\" }}]"));
    assert_eq!(found.len(), 1, "{found:#?}");
    found.into_iter().next().unwrap()
}

#[test]
fn a_mode_string_is_one_catch_all_rule() {
    let compiled = Policy::compile(
        &spec("\"unattended\""),
        PolicyField::Run,
        RuleOrigin::Tool,
        &params(),
    );
    assert!(compiled.errors.is_empty() && compiled.warnings.is_empty());
    let policy = compiled.policy.unwrap();
    assert_eq!(policy.field(), PolicyField::Run);
    assert!(policy.is_alias());
    assert!(policy.is_unconditional());
    assert_eq!(policy.unconditional_mode(), Some(Mode::Unattended));
    let [rule] = policy.rules() else {
        panic!("one rule")
    };
    assert_eq!(
        (rule.index, rule.mode, rule.describe()),
        (0, Mode::Unattended, "catch-all".to_owned())
    );
}

#[test]
fn the_d25_example_compiles_and_keeps_rule_order() {
    let compiled = compile(
        r#"[
        { arg = "/path", prefix = "src/sensitive/", mode = "ask" },
        { arg = "/path", prefix = "src/", mode = "unattended" },
        { arg = "/path", prefix = ".env", mode = "ask" },
        { mode = "ask" },
    ]"#,
    );
    assert!(compiled.errors.is_empty() && compiled.warnings.is_empty());
    let policy = compiled.policy.unwrap();
    assert!(!policy.is_unconditional());
    assert_eq!(policy.unconditional_mode(), None);
    let described: Vec<_> = policy
        .rules()
        .iter()
        .map(|r| (r.index, r.mode, r.describe()))
        .collect();
    assert_eq!(
        described,
        [
            (
                0,
                Mode::Ask,
                "prefix \"src/sensitive/\" on /path".to_owned()
            ),
            (1, Mode::Unattended, "prefix \"src/\" on /path".to_owned()),
            (2, Mode::Ask, "prefix \".env\" on /path".to_owned()),
            (3, Mode::Ask, "catch-all".to_owned()),
        ]
    );
    let condition = policy.rules()[0].condition.as_ref().unwrap();
    assert_eq!(condition.arg(), "/path");
    assert_eq!(condition.param_type(), ParamType::Path);
    assert!(!condition.traverses_array());
    assert_eq!(
        condition.steps(),
        [super::super::Step::Member("path".into())]
    );
}

#[test]
fn d25_matcher_examples_compile() {
    let policy = policy(
        r#"[
        { arg = "/util", const = "jq", mode = "ask" },
        { arg = "/util", enum = ["date", "wc", "head", "tail"], mode = "unattended" },
        { arg = "/replace_using_regex", const = true, mode = "ask" },
        { arg = "/patterns/old", pattern = "rm\\s+-rf", mode = "ask" },
        { arg = "/start_line", minimum = 1000, mode = "ask" },
        { arg = "/patterns/paths", prefix = ".env", mode = "ask" },
        { mode = "ask" },
    ]"#,
    );
    let described: Vec<_> = policy.rules().iter().map(Rule::describe).collect();
    assert_eq!(
        described,
        [
            "const \"jq\" on /util",
            "enum [\"date\", \"wc\", \"head\", \"tail\"] on /util",
            "const true on /replace_using_regex",
            "pattern \"rm\\\\s+-rf\" on /patterns/old",
            "minimum 1000 on /start_line",
            "prefix \".env\" on /patterns/paths",
            "catch-all",
        ]
    );
    let paths = policy.rules()[5].condition.as_ref().unwrap();
    assert!(paths.traverses_array());
    assert_eq!(paths.param_type(), ParamType::Path);
}

#[test]
fn a_typo_in_a_matcher_key_is_an_error_never_a_catch_all() {
    let compiled = compile(r#"[{ arg = "/path", prefx = "src/", mode = "unattended" }]"#);
    assert!(compiled.policy.is_none());
    assert_eq!(
        messages(&compiled.errors),
        [
            format!("policy.run[0]: unknown key \"prefx\" {KEYS}"),
            "policy.run[0]: \"arg\" without a matcher (add one of const, enum, pattern, prefix, \
             minimum, maximum, exclusive_minimum or exclusive_maximum)"
                .to_owned(),
        ]
    );
    // Without `arg`, a typo'd rule would otherwise look like a catch-all.
    assert_eq!(
        one_error(r#"{ prefx = "src/", mode = "unattended" }"#),
        format!("policy.run[0]: unknown key \"prefx\" {KEYS}")
    );
}

#[test]
fn two_matchers_are_named() {
    assert_eq!(
        one_error(r#"{ arg = "/path", prefix = "src/", pattern = "x", mode = "ask" }"#),
        "policy.run[0]: more than one matcher (\"prefix\" and \"pattern\"); a rule has exactly \
         one, and conditions on several values are not supported"
    );
    assert_eq!(
        one_error(r#"{ arg = "/start_line", minimum = 1, maximum = 2, const = 1, mode = "ask" }"#),
        "policy.run[0]: more than one matcher (\"minimum\", \"maximum\" and \"const\"); a rule \
         has exactly one, and conditions on several values are not supported"
    );
}

#[test]
fn mode_must_be_present_and_known() {
    assert_eq!(
        one_error(r#"{ arg = "/path", prefix = "src/" }"#),
        "policy.run[0]: missing \"mode\" (one of \"unattended\", \"ask\", \"edit\" or \"skip\")"
    );
    assert_eq!(
        one_error(r#"{ mode = "yes" }"#),
        "policy.run[0]: unknown mode \"yes\" (one of \"unattended\", \"ask\", \"edit\" or \
         \"skip\")"
    );
    assert_eq!(
        one_error(r#"{ mode = 3 }"#),
        "policy.run[0]: \"mode\" must be one of \"unattended\", \"ask\", \"edit\" or \"skip\", \
         found 3"
    );
}

#[test]
fn arg_and_matcher_come_together() {
    assert_eq!(
        one_error(r#"{ prefix = "src/", mode = "ask" }"#),
        "policy.run[0]: \"prefix\" without \"arg\" (name the argument it looks at, such as arg = \
         \"/path\")"
    );
    assert_eq!(
        one_error(r#"{ arg = "/path", mode = "ask" }"#),
        "policy.run[0]: \"arg\" without a matcher (add one of const, enum, pattern, prefix, \
         minimum, maximum, exclusive_minimum or exclusive_maximum)"
    );
}

#[test]
fn arg_must_be_a_json_pointer() {
    assert_eq!(
        one_error(r#"{ arg = 3, const = 1, mode = "ask" }"#),
        "policy.run[0]: \"arg\" must be a string holding a JSON pointer such as \"/path\", found 3"
    );
    assert_eq!(
        one_error(r#"{ arg = "path", prefix = "src", mode = "ask" }"#),
        "policy.run[0]: \"arg\" \"path\" is not a JSON pointer: it must start with \"/\", such as \
         \"/path\""
    );
    assert_eq!(
        one_error(r#"{ arg = "/pa~2th", prefix = "src", mode = "ask" }"#),
        "policy.run[0]: \"arg\" \"/pa~2th\" is not a JSON pointer: \"~\" must be followed by \"0\" \
         or \"1\" (\"~0\" is \"~\", \"~1\" is \"/\")"
    );
    // RFC 6901 escapes are decoded: `~1` is a slash inside a name.
    let policy = policy(r#"[{ arg = "/opts/a~1b", const = "x", mode = "ask" }, { mode = "ask" }]"#);
    assert_eq!(
        policy.rules()[0].condition.as_ref().unwrap().tokens(),
        ["opts", "a/b"]
    );
}

#[test]
fn arg_must_resolve_in_the_schema() {
    assert_eq!(
        one_error(r#"{ arg = "/pth", prefix = "src", mode = "ask" }"#),
        "policy.run[0]: \"arg\" \"/pth\": the tool has no parameter \"pth\" (it has /path, /name, \
         /util, /replace_using_regex, /start_line, /ratio, /tags, /list, /patterns, /opts)"
    );
    assert_eq!(
        one_error(r#"{ arg = "/patterns/path", prefix = "src", mode = "ask" }"#),
        "policy.run[0]: \"arg\" \"/patterns/path\": /patterns has no member \"path\" (it has \
         /patterns/old, /patterns/new, /patterns/paths)"
    );
    assert_eq!(
        one_error(r#"{ arg = "/path/x", prefix = "src", mode = "ask" }"#),
        "policy.run[0]: \"arg\" \"/path/x\": /path is a path, which has no members"
    );
    assert_eq!(
        one_error(r#"{ arg = "/patterns/0/paths", prefix = "src", mode = "ask" }"#),
        "policy.run[0]: \"arg\" \"/patterns/0/paths\": array positions are implicit (/patterns is \
         an array and the rule looks at every element), so write \"/patterns/paths\""
    );
    assert_eq!(
        one_error(r#"{ arg = "/tags/-", prefix = "x", mode = "ask" }"#),
        "policy.run[0]: \"arg\" \"/tags/-\": array positions are implicit (/tags is an array and \
         the rule looks at every element), so write \"/tags\""
    );
    assert_eq!(
        one_error(r#"{ arg = "/opts", const = 1, mode = "ask" }"#),
        "policy.run[0]: \"arg\" \"/opts\" ends at an object; point at one of its members (it has \
         /opts/depth, /opts/a~1b)"
    );
    assert_eq!(
        one_error(r#"{ arg = "/patterns", const = 1, mode = "ask" }"#),
        "policy.run[0]: \"arg\" \"/patterns\" ends at an object; point at one of its members (it \
         has /patterns/old, /patterns/new, /patterns/paths)"
    );
    assert_eq!(
        one_error(r#"{ arg = "", const = 1, mode = "ask" }"#),
        "policy.run[0]: \"arg\" \"\" points at all arguments at once; point at one parameter (it \
         has /path, /name, /util, /replace_using_regex, /start_line, /ratio, /tags, /list, \
         /patterns, /opts)"
    );
    assert_eq!(
        one_error(r#"{ arg = "/list", const = 1, mode = "ask" }"#),
        "policy.run[0]: \"arg\" \"/list\": /list is an array without \"items\", so its elements \
         have no type"
    );
}

#[test]
fn matchers_must_fit_the_parameter_type() {
    assert_eq!(
        one_error(r#"{ arg = "/start_line", prefix = "1", mode = "ask" }"#),
        "policy.run[0]: \"prefix\" does not apply to /start_line, an integer (\"prefix\" and \
         \"pattern\" are for string and path parameters)"
    );
    assert_eq!(
        one_error(r#"{ arg = "/path", minimum = 1, mode = "ask" }"#),
        "policy.run[0]: \"minimum\" does not apply to /path, a path (\"minimum\", \"maximum\", \
         \"exclusive_minimum\" and \"exclusive_maximum\" are for number and integer parameters)"
    );
    assert_eq!(
        one_error(r#"{ arg = "/replace_using_regex", pattern = "t", mode = "ask" }"#),
        "policy.run[0]: \"pattern\" does not apply to /replace_using_regex, a boolean (booleans \
         take \"const\" or \"enum\")"
    );
    assert_eq!(
        one_error(r#"{ arg = "/replace_using_regex", maximum = 1, mode = "ask" }"#),
        "policy.run[0]: \"maximum\" does not apply to /replace_using_regex, a boolean (booleans \
         take \"const\" or \"enum\")"
    );
    // Through an array, the element type counts.
    assert_eq!(
        one_error(r#"{ arg = "/tags", exclusive_maximum = 1, mode = "ask" }"#),
        "policy.run[0]: \"exclusive_maximum\" does not apply to /tags, a string (\"minimum\", \
         \"maximum\", \"exclusive_minimum\" and \"exclusive_maximum\" are for number and integer \
         parameters)"
    );
}

#[test]
fn matcher_values_must_fit_the_parameter_type() {
    assert_eq!(
        one_error(r#"{ arg = "/ratio", const = true, mode = "ask" }"#),
        "policy.run[0]: \"const\" must be a number, because /ratio is a number; found true"
    );
    assert_eq!(
        one_error(r#"{ arg = "/start_line", const = 1.5, mode = "ask" }"#),
        "policy.run[0]: \"const\" must be an integer, because /start_line is an integer; found 1.5"
    );
    assert_eq!(
        one_error(r#"{ arg = "/replace_using_regex", const = "true", mode = "ask" }"#),
        "policy.run[0]: \"const\" must be a boolean, because /replace_using_regex is a boolean; \
         found \"true\""
    );
    assert_eq!(
        one_error(r#"{ arg = "/path", const = 3, mode = "ask" }"#),
        "policy.run[0]: \"const\" must be a string, because /path is a path; found 3"
    );
    assert_eq!(
        errors(r#"[{ arg = "/util", enum = ["jq", 3, true], mode = "ask" }, { mode = "ask" }]"#),
        [
            "policy.run[0]: \"enum\"[1] must be a string, because /util is a string; found 3",
            "policy.run[0]: \"enum\"[2] must be a string, because /util is a string; found true",
        ]
    );
    assert_eq!(
        one_error(r#"{ arg = "/util", enum = "jq", mode = "ask" }"#),
        "policy.run[0]: \"enum\" must be an array of values, found \"jq\""
    );
    assert_eq!(
        one_error(r#"{ arg = "/util", enum = [], mode = "ask" }"#),
        "policy.run[0]: \"enum\" is empty, so it would match nothing"
    );
    assert_eq!(
        one_error(r#"{ arg = "/util", pattern = 3, mode = "ask" }"#),
        "policy.run[0]: \"pattern\" must be a string, found 3"
    );
    assert_eq!(
        one_error(r#"{ arg = "/util", prefix = ["a"], mode = "ask" }"#),
        "policy.run[0]: \"prefix\" must be a string, found [\"a\"]"
    );
    assert_eq!(
        one_error(r#"{ arg = "/start_line", minimum = "10", mode = "ask" }"#),
        "policy.run[0]: \"minimum\" must be a number, found \"10\""
    );
    assert_eq!(
        one_error(r#"{ arg = "/start_line", minimum = 9007199254740993, mode = "ask" }"#),
        "policy.run[0]: \"minimum\" 9007199254740993 cannot be compared exactly; use a bound \
         between -2^53 and 2^53"
    );
    // An integral float is an integer; a large exactly representable bound is fine.
    policy(
        r#"[{ arg = "/start_line", const = 1.0, mode = "ask" },
            { arg = "/start_line", minimum = 9007199254740994, mode = "ask" }, { mode = "ask" }]"#,
    );
}

#[test]
fn non_finite_numbers_are_rejected_everywhere() {
    assert_eq!(
        one_error(r#"{ arg = "/ratio", minimum = nan, mode = "ask" }"#),
        "policy.run[0]: \"minimum\" is nan, inf or null; only finite values are allowed"
    );
    assert_eq!(
        one_error(r#"{ arg = "/ratio", const = inf, mode = "ask" }"#),
        "policy.run[0]: \"const\" is nan, inf or null; only finite values are allowed"
    );
    assert_eq!(
        one_error(r#"{ arg = "/ratio", enum = [1, -inf], mode = "ask" }"#),
        "policy.run[0]: \"enum\" contains nan, inf or null; only finite values are allowed"
    );
    assert_eq!(
        errors(r#"[{ arg = "/ratio", exclusive_maximum = -nan, mode = nan }, { mode = "ask" }]"#),
        [
            "policy.run[0]: \"exclusive_maximum\" is nan, inf or null; only finite values are \
             allowed",
            "policy.run[0]: \"mode\" is nan, inf or null; only finite values are allowed",
        ]
    );
}

#[test]
fn patterns_must_be_valid_rust_regex() {
    assert_eq!(
        one_error(r#"{ arg = "/util", pattern = "a(b", mode = "ask" }"#),
        "policy.run[0]: \"pattern\" \"a(b\" is not a valid regular expression: unclosed group"
    );
    assert_eq!(
        one_error(r#"{ arg = "/util", pattern = "(?<=a)b", mode = "ask" }"#),
        "policy.run[0]: \"pattern\" \"(?<=a)b\" uses look-around ((?=, (?!, (?<= or (?<!), which \
         Rust regex syntax does not support"
    );
    assert_eq!(
        one_error(r#"{ arg = "/util", pattern = "foo(?!bar)", mode = "ask" }"#),
        "policy.run[0]: \"pattern\" \"foo(?!bar)\" uses look-around ((?=, (?!, (?<= or (?<!), \
         which Rust regex syntax does not support"
    );
    assert_eq!(
        one_error(r#"{ arg = "/util", pattern = '(a)\1', mode = "ask" }"#),
        "policy.run[0]: \"pattern\" \"(a)\\\\1\" uses a backreference, which Rust regex syntax \
         does not support"
    );
    assert_eq!(
        one_error(r#"{ arg = "/util", pattern = "", mode = "ask" }"#),
        "policy.run[0]: \"pattern\" is empty, so it would match every value; remove \"arg\" and \
         \"pattern\" for a catch-all"
    );
    // Whatever can match nothing at the start or the end of any value,
    // matches every value.
    for source in [
        ".*",
        "x?",
        "(?:)",
        "a*|b",
        "(?i)",
        "[a-z]{0,3}",
        "^",
        "$",
        "^.*",
        ".*$",
        "\\A",
        "\\z",
        "(?m)^",
        "^|x",
        "^$|",
        "^.?",
        "(^)",
        "x|^|y",
    ] {
        let rule = format!("{{ arg = \"/util\", pattern = '{source}', mode = \"ask\" }}");
        assert_eq!(
            one_error(&rule),
            format!(
                "policy.run[0]: \"pattern\" {} matches every value (it can match nothing at \
                 all at the start or at the end of any value); remove \"arg\" and \"pattern\" \
                 for a catch-all",
                crate::pointer::quote(source)
            ),
            "{source}"
        );
    }
    // Held by an anchor or a boundary, or needing a character, it does not.
    for source in [
        "^$",
        "^a*$",
        "\\ba*",
        "x+",
        "a?b",
        "\\.rs$",
        ".*\\.rs$",
        "(?i)readme",
        "^(foo)?$",
        "x?y",
    ] {
        let rule = format!("{{ arg = \"/util\", pattern = '{source}', mode = \"ask\" }}");
        let found = errors(&format!("[{rule}, {{ mode = \"ask\" }}]"));
        assert!(found.is_empty(), "{source}: {found:?}");
    }
    assert_eq!(
        one_error(r#"{ arg = "/util", pattern = 'a{99999999}', mode = "ask" }"#),
        "policy.run[0]: \"pattern\" \"a{99999999}\" is not a valid regular expression: it is too \
         large (it compiles to more than 10485760 bytes)"
    );
}

#[test]
fn prefixes_are_checked_and_normalized() {
    assert_eq!(
        one_error(r#"{ arg = "/path", prefix = "", mode = "ask" }"#),
        "policy.run[0]: \"prefix\" is empty, so it would match every value; remove \"arg\" and \
         \"prefix\" for a catch-all"
    );
    assert_eq!(
        one_error(r#"{ arg = "/name", prefix = "", mode = "ask" }"#),
        "policy.run[0]: \"prefix\" is empty, so it would match every value; remove \"arg\" and \
         \"prefix\" for a catch-all"
    );
    assert_eq!(
        one_error(r#"{ arg = "/path", prefix = "../secrets", mode = "ask" }"#),
        "policy.run[0]: \"prefix\" \"../secrets\" leaves the workspace; write an absolute path to \
         match outside it"
    );
    assert_eq!(
        one_error(r#"{ arg = "/path", prefix = "src/../../x", mode = "ask" }"#),
        "policy.run[0]: \"prefix\" \"src/../../x\" leaves the workspace; write an absolute path to \
         match outside it"
    );
    assert_eq!(
        one_error(r#"{ arg = "/path", const = "a\u0000b", mode = "ask" }"#),
        "policy.run[0]: \"const\" contains a NUL character, which no path can hold"
    );
    assert_eq!(
        one_error(r#"{ arg = "/path", enum = ["a", ""], mode = "ask" }"#),
        "policy.run[0]: \"enum\"[1] is an empty path; write \".\" for the workspace root"
    );
    for spelling in ["./src", "src", "src/", "src//", "src/./", "lib/../src"] {
        let policy = policy(&format!(
            r#"[{{ arg = "/path", prefix = "{spelling}", mode = "ask" }}, {{ mode = "ask" }}]"#
        ));
        let Matcher::Prefix(Literal::Path(path)) =
            policy.rules()[0].condition.as_ref().unwrap().matcher()
        else {
            panic!("a path prefix")
        };
        assert_eq!(path, &PolicyPath::Relative("src".into()), "{spelling}");
    }
    let policy =
        policy(r#"[{ arg = "/path", prefix = "/etc//ssh/", mode = "ask" }, { mode = "ask" }]"#);
    let Matcher::Prefix(Literal::Path(path)) =
        policy.rules()[0].condition.as_ref().unwrap().matcher()
    else {
        panic!("a path prefix")
    };
    assert_eq!(path, &PolicyPath::Absolute("/etc/ssh".into()));
}

#[test]
fn every_rule_is_checked_and_errors_come_in_rule_order() {
    assert_eq!(
        errors(
            r#"[
            { arg = "/path", prefix = "src/", mode = "unattended" },
            { arg = "/pth", prefix = "src/", mode = "ask" },
            { mode = "ask", extra = 1 },
            { arg = "/start_line", pattern = "(", mode = "ask" },
        ]"#
        ),
        [
            "policy.run[1]: \"arg\" \"/pth\": the tool has no parameter \"pth\" (it has /path, \
             /name, /util, /replace_using_regex, /start_line, /ratio, /tags, /list, /patterns, \
             /opts)",
            &format!("policy.run[2]: unknown key \"extra\" {KEYS}"),
            "policy.run[3]: \"pattern\" \"(\" is not a valid regular expression: unclosed group",
            "policy.run[3]: \"pattern\" does not apply to /start_line, an integer (\"prefix\" and \
             \"pattern\" are for string and path parameters)",
        ]
    );
}

#[test]
fn default_rules_for_other_parameters_are_skipped() {
    let compiled = compile_with(
        RuleOrigin::Defaults,
        PolicyField::Run,
        r#"[
        { arg = "/command", prefix = "rm", mode = "ask" },
        { arg = "/path", prefix = "src/", mode = "unattended" },
        { arg = "/patterns/nothing", const = "x", mode = "ask" },
        { arg = "/path/deeper", const = "x", mode = "ask" },
        { mode = "ask" },
    ]"#,
    );
    assert!(compiled.errors.is_empty());
    assert_eq!(compiled.skipped, [0, 2, 3]);
    let policy = compiled.policy.unwrap();
    assert_eq!(policy.origin(), RuleOrigin::Defaults);
    let indices: Vec<_> = policy.rules().iter().map(|r| r.index).collect();
    assert_eq!(indices, [1, 4]);
}

#[test]
fn default_rules_still_report_other_errors() {
    let compiled = compile_with(
        RuleOrigin::Defaults,
        PolicyField::Result,
        r#"[
        { arg = "/start_line", prefix = "1", mode = "ask" },
        { arg = "/command", prefx = "rm", mode = "ask" },
        { arg = "/command", pattern = "(?=x)", mode = "ask" },
        { arg = "/command", prefix = "rm", mode = "maybe" },
        { arg = "command", prefix = "rm", mode = "ask" },
        { arg = "/patterns/0/old", const = "x", mode = "ask" },
        { mode = "ask" },
    ]"#,
    );
    assert!(compiled.policy.is_none());
    assert_eq!(compiled.skipped, Vec::<usize>::new());
    assert_eq!(
        messages(&compiled.errors),
        [
            "policy.result[0]: \"prefix\" does not apply to /start_line, an integer (\"prefix\" \
             and \"pattern\" are for string and path parameters)"
                .to_owned(),
            format!("policy.result[1]: unknown key \"prefx\" {KEYS}"),
            "policy.result[1]: \"arg\" without a matcher (add one of const, enum, pattern, prefix, \
             minimum, maximum, exclusive_minimum or exclusive_maximum)"
                .to_owned(),
            "policy.result[2]: \"pattern\" \"(?=x)\" uses look-around ((?=, (?!, (?<= or (?<!), \
             which Rust regex syntax does not support"
                .to_owned(),
            "policy.result[3]: unknown mode \"maybe\" (one of \"unattended\", \"ask\", \"edit\" \
             or \"skip\")"
                .to_owned(),
            "policy.result[4]: \"arg\" \"command\" is not a JSON pointer: it must start with \
             \"/\", such as \"/path\""
                .to_owned(),
            "policy.result[5]: \"arg\" \"/patterns/0/old\": array positions are implicit \
             (/patterns is an array and the rule looks at every element), so write \
             \"/patterns/old\""
                .to_owned(),
        ]
    );
}

#[test]
fn a_missing_final_catch_all_is_a_warning() {
    let compiled = compile(r#"[{ arg = "/path", prefix = "src/", mode = "unattended" }]"#);
    assert!(compiled.errors.is_empty());
    assert!(compiled.policy.is_some());
    assert_eq!(messages(&compiled.warnings), [NO_CATCH_ALL]);

    let compiled = compile("[]");
    assert!(compiled.errors.is_empty());
    assert_eq!(
        messages(&compiled.warnings),
        [
            "policy.run: has no rules, so every call falls back to \"ask\"; write a mode such as \
          \"ask\" instead of an empty list"
        ]
    );
    let policy = compiled.policy.unwrap();
    assert!(policy.is_unconditional());
    assert_eq!(policy.unconditional_mode(), Some(Mode::Ask));

    // A first catch-all decides without arguments, even from a list.
    let policy = compile(r#"[{ mode = "skip" }]"#).policy.unwrap();
    assert!(!policy.is_alias());
    assert_eq!(policy.unconditional_mode(), Some(Mode::Skip));
}

#[test]
fn issues_display_with_field_and_rule() {
    let issue = PolicyIssue {
        field: PolicyField::Result,
        rule: Some(2),
        message: "oops".into(),
    };
    assert_eq!(issue.to_string(), "policy.result[2]: oops");
    let issue = PolicyIssue {
        field: PolicyField::Run,
        rule: None,
        message: "oops".into(),
    };
    assert_eq!(issue.to_string(), "policy.run: oops");
}
