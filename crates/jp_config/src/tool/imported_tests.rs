#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

fn schema(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("the tests pass objects"),
    }
}

#[test]
fn imports_types_order_required_and_descriptions() {
    let imported = parameters_from_schema(&schema(json!({
        "type": "object",
        "properties": {
            "repo_path": { "type": "string", "description": "The repository." },
            "count": { "type": ["integer", "null"], "default": 3 },
            "files": { "type": "array", "items": { "type": "string" } },
            "mode": { "enum": ["a", "b"] },
            "opts": { "type": "object", "properties": { "deep": { "type": "boolean" } }, "required": ["deep"] }
        },
        "required": ["repo_path"]
    })))
    .unwrap();
    let names: Vec<&str> = imported.keys().map(String::as_str).collect();
    assert_eq!(names, ["repo_path", "count", "files", "mode", "opts"]);
    let repo = &imported["repo_path"];
    assert_eq!(repo.kind, ParamType::String);
    assert!(repo.required);
    assert_eq!(repo.description.as_deref(), Some("The repository."));
    assert_eq!(imported["count"].kind, ParamType::Integer);
    assert!(!imported["count"].required);
    assert_eq!(imported["count"].default, Some(json!(3)));
    assert_eq!(
        imported["files"].items.as_ref().map(|i| i.kind),
        Some(ParamType::String)
    );
    assert_eq!(imported["mode"].kind, ParamType::String);
    assert!(imported["opts"].properties["deep"].required);
}

#[test]
fn refuses_what_jp_cannot_check_naming_the_parameter() {
    let cases = [
        (
            json!({ "properties": { "x": { "anyOf": [{ "type": "string" }] } } }),
            "/x: `anyOf` is not supported; jp checks arguments against one type per parameter",
        ),
        (
            json!({ "properties": { "x": { "type": "array" } } }),
            "/x: an array without `items`; jp needs the type of its elements",
        ),
        (
            json!({ "properties": { "o": { "type": "object", "properties": { "y": {} } } } }),
            "/o/y: no `type`; jp needs one to check the argument",
        ),
        (
            json!({ "properties": { "x": { "type": ["string", "number"] } } }),
            "/x: a parameter of several types (string, number) is not supported",
        ),
        (
            json!({ "type": "array" }),
            "the input schema is of type \"array\", not an object",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(
            parameters_from_schema(&schema(input)).unwrap_err(),
            expected
        );
    }
}

#[test]
fn the_config_adds_a_path_type_and_a_summary() {
    let server = parameters_from_schema(&schema(json!({
        "properties": { "repo_path": { "type": "string", "description": "From the server." } },
        "required": ["repo_path"]
    })))
    .unwrap();
    let mut added = ToolParameters::new();
    let mut path = ToolParameterConfig::new(ParamType::Path);
    path.summary = Some("Where the repository is.".into());
    added.insert("repo_path".into(), path);
    let merged = merge_parameters(server.clone(), &added).unwrap();
    let repo = &merged["repo_path"];
    assert_eq!(repo.kind, ParamType::Path);
    assert!(repo.required);
    assert_eq!(repo.summary.as_deref(), Some("Where the repository is."));
    assert_eq!(repo.description.as_deref(), Some("From the server."));

    let mut unknown = ToolParameters::new();
    unknown.insert("branch".into(), ToolParameterConfig::new(ParamType::String));
    assert_eq!(
        merge_parameters(server, &unknown).unwrap_err(),
        "names the parameter `branch`, which the server's schema for this tool does not have (it has repo_path)"
    );
}
