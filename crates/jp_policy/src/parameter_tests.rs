#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn path_is_a_string_to_the_model() {
    let params: ToolParameters = toml::from_str(
        r#"
            path = { type = "path", summary = "The file.", required = true }
            lines = { type = "array", items = { type = "integer" } }
            "#,
    )
    .unwrap();
    assert_eq!(
        parameters_json_schema(&params),
        serde_json::json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "The file." },
                "lines": { "type": "array", "items": { "type": "integer" } },
            },
            "required": ["path"],
            "additionalProperties": false,
        })
    );
}

#[test]
fn unknown_keys_and_types_are_rejected() {
    let err = toml::from_str::<ToolParameterConfig>("type = \"path\"\nsumary = \"x\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `sumary`"), "{err}");
    let err = toml::from_str::<ToolParameterConfig>("type = \"file\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown variant `file`"), "{err}");
}
