//! Tests of the translation of tool schemas to Gemini's OpenAPI subset.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

fn translated(schema: &Value) -> Value {
    Value::Object(parameters(schema).unwrap())
}

#[test]
fn a_tool_without_properties_has_no_parameters() {
    assert_eq!(
        parameters(&json!({"type": "object", "properties": {}})),
        None
    );
    assert_eq!(parameters(&json!({"type": "object"})), None);
}

/// The schema of upstream JP's recording (`run_me`): a list of types with
/// a mixed `enum`, and the keys Gemini's `parameters` does not know.
#[test]
fn the_recorded_run_me_schema() {
    let schema = json!({
        "type": "object",
        "properties": {
            "foo": {"type": "string", "default": "foo"},
            "bar": {
                "type": ["string", "array"],
                "enum": ["foo", ["foo", "bar"]],
                "items": {"type": "string"}
            }
        },
        "additionalProperties": false,
        "required": ["bar"]
    });
    assert_eq!(
        translated(&schema).to_string(),
        json!({
            "type": "object",
            "propertyOrdering": ["foo", "bar"],
            "properties": {
                "foo": {"type": "string", "default": "foo"},
                "bar": {
                    "description": "One of: \"foo\", [\"foo\",\"bar\"].",
                    "anyOf": [
                        {"type": "string"},
                        {"type": "array", "items": {"type": "string"}}
                    ]
                }
            },
            "required": ["bar"]
        })
        .to_string()
    );
}

#[test]
fn unknown_keys_are_dropped_at_every_depth() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "n": {"type": "integer", "exclusiveMinimum": 0, "minimum": 1, "examples": [3, 4]},
            "list": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"k": {"type": "string", "const": "x"}},
                    "additionalProperties": false
                }
            },
            "mode": {"oneOf": [{"const": 1}, {"type": "string", "format": "date-time"}]},
            "maybe": {"type": ["string", "null"], "title": "Maybe", "propertyNames": {"pattern": "x"}}
        },
        "additionalProperties": false
    });
    assert_eq!(
        translated(&schema).to_string(),
        json!({
            "type": "object",
            "propertyOrdering": ["n", "list", "mode", "maybe"],
            "properties": {
                "n": {"type": "integer", "minimum": 1, "example": 3},
                "list": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"k": {"type": "string", "enum": ["x"]}}
                    }
                },
                "mode": {"anyOf": [
                    {"description": "Always 1."},
                    {"type": "string", "format": "date-time"}
                ]},
                "maybe": {"type": "string", "title": "Maybe", "nullable": true}
            }
        })
        .to_string()
    );
}

/// pydantic's `Optional[T]` (`anyOf` of `T` and `null`, either order) is
/// `T`, `nullable`; the node's own keywords stay and win. A union of more
/// stays a union.
#[test]
fn an_optional_is_nullable() {
    let schema = json!({
        "type": "object",
        "properties": {
            "when": {"anyOf": [{"type": "string", "description": "Inner."}, {"type": "null"}], "default": null, "description": "Outer."},
            "count": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 0}]},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
        }
    });
    assert_eq!(
        translated(&schema).to_string(),
        json!({
            "type": "object",
            "propertyOrdering": ["when", "count", "either"],
            "properties": {
                "when": {"default": null, "description": "Outer.", "type": "string", "nullable": true},
                "count": {"type": "integer", "minimum": 0, "nullable": true},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
            }
        })
        .to_string()
    );
}
