#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn text_falls_back_to_json_for_typed_keys() {
    let a = Assignment::parse("assistant.model.parameters.max_tokens=1024").unwrap();
    let (partial, _) = a.to_partial().unwrap();
    let tokens = partial
        .assistant
        .unwrap()
        .model
        .unwrap()
        .parameters
        .unwrap()
        .max_tokens;
    assert_eq!(tokens, Some(1024));

    // A string key keeps text that looks like a number.
    let a = Assignment::parse("assistant.model.id=123").unwrap();
    let (partial, _) = a.to_partial().unwrap();
    assert_eq!(
        partial.assistant.unwrap().model.unwrap().id.as_deref(),
        Some("123")
    );
}

#[test]
fn errors_name_the_key() {
    let err = Assignment::parse("assistant.model.parameters.max_tokens=lots")
        .unwrap()
        .to_partial()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "assistant.model.parameters.max_tokens: expected a whole number from 0 to 4294967295, found the string \"lots\""
    );
    let err = Assignment::parse("assistant.modle.id=x")
        .unwrap()
        .to_partial()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "assistant.modle: unknown field `modle`, expected one of `system_prompt`, `instructions`, `instruction_files`, `agents_md`, `repository_state`, `model`"
    );
    assert_eq!(
        Assignment::parse("style.color").unwrap_err().to_string(),
        "expected `key=value`, `key:=json` or `@file`, found `style.color`"
    );
}

#[test]
fn null_is_never_a_silent_no_op() {
    let err = Assignment::parse("style.color:=null")
        .unwrap()
        .to_partial()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "style.color: null cannot be assigned; to unset a key, remove it from the file that sets it"
    );
    let err = Assignment::parse("style.color=null")
        .unwrap()
        .to_partial()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "style.color: unknown variant `null`, expected one of `auto`, `always`, `never`"
    );
}

#[test]
fn quoted_keys_and_json_values() {
    let a = Assignment::parse("conversation.tools.'*'.policy.run:=[{\"mode\":\"ask\"}]").unwrap();
    assert_eq!(
        a.path.segments(),
        ["conversation", "tools", "*", "policy", "run"]
    );
    assert!(matches!(
        a.value,
        AssignedValue::Json(serde_json::Value::Array(_))
    ));
    let a = Assignment::parse("conversation.tools.'a=b'.enable=false").unwrap();
    assert_eq!(a.path.segments()[2], "a=b");
}

#[test]
fn env_names_split_on_double_underscore() {
    let a = Assignment::from_env("JP_CFG_CONVERSATION__TOOLS__FS_READ_FILE__RUN", "ask").unwrap();
    assert_eq!(a.path.to_string(), "conversation.tools.fs_read_file.run");
    assert_eq!(
        Assignment::from_env("JP_CFG_A____B", "x")
            .unwrap_err()
            .to_string(),
        "`JP_CFG_A____B` does not name a config key: a segment between `__` separators is empty"
    );
}
