use super::*;

fn segments(path: &str) -> Vec<String> {
    path.split('.').map(str::to_owned).collect()
}

#[test]
fn an_enum_names_its_values() {
    assert_eq!(
        type_mismatch(
            &segments("style.color"),
            "wanted string or table",
            Some(&Value::from(5))
        ),
        "expected one of `auto`, `always`, `never`, found the number 5"
    );
}

#[test]
fn a_policy_string_says_which_part_to_write() {
    assert_eq!(
        type_mismatch(
            &segments("conversation.tools.save.policy"),
            "invalid type: string \"unattended\", expected struct PartialPolicyConfig",
            Some(&Value::from("unattended"))
        ),
        "expected a table with the keys `result`, `run`, found the string \"unattended\"; \
             a tool's policy has two parts: write `policy.run = \"unattended\"` for running \
             the tool, `policy.result = \"unattended\"` for its result"
    );
}

#[test]
fn rust_type_names_become_words() {
    assert_eq!(
        type_mismatch(
            &segments("style.tool_call.argument_lines"),
            "invalid type: string \"abc\", expected u32",
            None
        ),
        "expected a whole number from 0 to 4294967295, found the string \"abc\""
    );
    assert_eq!(
        type_mismatch(
            &segments("style.tool_call.argument_lines"),
            "invalid value: integer `-1`, expected u32",
            None
        ),
        "expected a whole number from 0 to 4294967295, found the number -1"
    );
    assert_eq!(
        type_mismatch(
            &segments("assistant.model.parameters.temperature"),
            "invalid type: string \"hot\", expected f64",
            Some(&Value::from("hot"))
        ),
        "expected a number, found the string \"hot\""
    );
    assert_eq!(
        type_mismatch(
            &segments("x.y"),
            "invalid type: sequence, expected a map",
            None
        ),
        "expected a table, found an array"
    );
    assert_eq!(
        type_mismatch(
            &segments("x.y"),
            "invalid type: floating point `1e20`, expected i64",
            None
        ),
        "expected a whole number from -9223372036854775808 to 9223372036854775807, found the number 1e20"
    );
}

#[test]
fn other_messages_are_kept() {
    assert_eq!(
        type_mismatch(&segments("style.color"), "unknown field `x`", None),
        "unknown field `x`"
    );
}

#[test]
fn duplicate_tables_and_keys_are_named() {
    let text = "[assistant]\nmax_tokens = 5\n\n[assistant] # again\ntemperature = 0.5\n";
    let at = text.rfind("assistant").unwrap_or_default();
    assert_eq!(
        duplicate_key(text, at..at + "assistant".len()),
        "the table [assistant] is written twice (first at line 1); merge the two into one"
    );
    let text = "a = 1\na = 2\n";
    assert_eq!(
        duplicate_key(text, 6..7),
        "`a` is set twice in the same table; keep one"
    );
}
