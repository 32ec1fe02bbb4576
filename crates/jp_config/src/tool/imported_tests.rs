#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

fn schema(value: Value) -> Value {
    value
}

#[test]
fn imports_types_order_and_required_and_nothing_else() {
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
    // The schema, not the view, is what the model is told.
    assert_eq!(repo.description, None);
    assert_eq!(imported["count"].kind, ParamType::Integer);
    assert!(!imported["count"].required);
    assert_eq!(imported["count"].default, None);
    assert_eq!(
        imported["files"].items.as_ref().map(|i| i.kind),
        Some(ParamType::String)
    );
    assert_eq!(imported["mode"].kind, ParamType::String);
    assert!(imported["opts"].properties["deep"].required);
}

#[test]
fn what_has_no_one_type_is_any() {
    let view = parameters_from_schema(&json!({
        "properties": {
            "union": { "anyOf": [{ "type": "string" }, { "type": "number" }] },
            "list": { "type": "array" },
            "free": {},
            "several": { "type": ["string", "number"] },
            "numbers": { "type": ["integer", "number"] },
            "either": { "oneOf": [{ "type": "integer" }, { "type": "null" }] },
            "both": { "allOf": [
                { "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"] },
                { "properties": { "b": { "type": "boolean" } } }
            ] }
        }
    }))
    .unwrap();
    let kinds: Vec<(&str, ParamType)> = view.iter().map(|(n, p)| (n.as_str(), p.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("union", ParamType::Any),
            ("list", ParamType::Array),
            ("free", ParamType::Any),
            ("several", ParamType::Any),
            ("numbers", ParamType::Number),
            ("either", ParamType::Integer),
            ("both", ParamType::Object),
        ]
    );
    assert!(view["list"].items.is_none());
    let both = &view["both"].properties;
    assert!(both["a"].required);
    assert_eq!(both["b"].kind, ParamType::Boolean);
    assert_eq!(
        parameters_from_schema(&json!({ "type": "array" })).unwrap_err(),
        "the input schema is of type \"array\", not an object"
    );
}

#[test]
fn a_union_of_objects_offers_every_member_required_only_where_all_require_it() {
    let view = parameters_from_schema(&json!({
        "anyOf": [
            { "type": "object", "properties": { "a": { "type": "string" }, "b": { "type": "string" } }, "required": ["a", "b"] },
            { "type": "object", "properties": { "a": { "type": "string" }, "c": { "type": "integer" } }, "required": ["a"] }
        ]
    }))
    .unwrap();
    let members: Vec<(&str, ParamType, bool)> = view
        .iter()
        .map(|(n, p)| (n.as_str(), p.kind, p.required))
        .collect();
    assert_eq!(
        members,
        [
            ("a", ParamType::String, true),
            ("b", ParamType::String, false),
            ("c", ParamType::Integer, false),
        ]
    );
}

#[test]
fn a_ref_fan_out_is_bounded() {
    // Each definition refers to the next twice: 2^30 paths if followed.
    let mut defs = serde_json::Map::new();
    for i in 0..30 {
        defs.insert(
            format!("D{i}"),
            json!({ "type": "object", "properties": {
                "l": { "$ref": format!("#/$defs/D{}", i + 1) },
                "r": { "$ref": format!("#/$defs/D{}", i + 1) }
            } }),
        );
    }
    defs.insert("D30".into(), json!({ "type": "string" }));
    let started = std::time::Instant::now();
    let view = parameters_from_schema(&json!({
        "$defs": defs,
        "properties": { "x": { "$ref": "#/$defs/D0" } }
    }))
    .unwrap();
    assert_eq!(view["x"].kind, ParamType::Object);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
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

    // A type other than the schema's (or `path` over a string) is refused.
    let mut other = ToolParameters::new();
    other.insert(
        "repo_path".into(),
        ToolParameterConfig::new(ParamType::Integer),
    );
    assert_eq!(
        merge_parameters(server.clone(), &other).unwrap_err(),
        "gives /repo_path the type `integer`, but the tool's schema says `string`; the config may \
         make a string a `path`, or repeat the schema's type"
    );

    let mut unknown = ToolParameters::new();
    unknown.insert("branch".into(), ToolParameterConfig::new(ParamType::String));
    assert_eq!(
        merge_parameters(server, &unknown).unwrap_err(),
        "names the parameter `branch`, which the tool's schema does not have (it has repo_path)"
    );
}

#[test]
fn a_draft_07_ref_stands_alone_as_its_validator_reads_it() {
    // Draft-07 ignores `type` beside a `$ref`: the view must not make
    // `n` an integer (and refuse 1.5) when the validator takes any number.
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": { "Num": { "type": "number" } },
        "properties": { "n": { "$ref": "#/definitions/Num", "type": "integer" } }
    });
    assert_eq!(
        parameters_from_schema(&schema).unwrap()["n"].kind,
        ParamType::Number
    );
    let mut later = schema.clone();
    later["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    assert_eq!(
        parameters_from_schema(&later).unwrap()["n"].kind,
        ParamType::Integer
    );
}
