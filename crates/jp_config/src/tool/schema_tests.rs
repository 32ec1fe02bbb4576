#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;
use crate::tool::{ParamType, ToolSource};

/// `mcp-server-git`'s `git_log` as its server (pydantic) writes it: every
/// `Optional` an `anyOf` with `null`.
fn git_log() -> Value {
    json!({
        "properties": {
            "repo_path": { "title": "Repo Path", "type": "string" },
            "max_count": { "default": 10, "title": "Max Count", "type": "integer" },
            "start_timestamp": {
                "anyOf": [{ "type": "string" }, { "type": "null" }],
                "default": null,
                "description": "Start timestamp for filtering commits.",
                "title": "Start Timestamp"
            }
        },
        "required": ["repo_path"],
        "title": "GitLog",
        "type": "object"
    })
}

fn tool() -> ToolConfig {
    ToolConfig {
        source: ToolSource::Mcp("git".into()),
        ..ToolConfig::default()
    }
}

fn adopted(schema: &Value, config: ToolParameters) -> ToolConfig {
    let mut tool = tool();
    tool.parameters = config;
    adopt(&mut tool, schema).unwrap();
    tool
}

fn issues(tool: &ToolConfig, args: Value) -> Vec<String> {
    match tool.check_arguments(&args) {
        Ok(()) => Vec::new(),
        Err(issues) => issues.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn an_optional_parameter_takes_null_and_its_type() {
    let tool = adopted(&git_log(), ToolParameters::new());
    let kinds: Vec<(&str, ParamType, bool)> = tool
        .parameters
        .iter()
        .map(|(name, p)| (name.as_str(), p.kind, p.required))
        .collect();
    assert_eq!(
        kinds,
        [
            ("repo_path", ParamType::String, true),
            ("max_count", ParamType::Integer, false),
            ("start_timestamp", ParamType::String, false),
        ]
    );
    assert!(issues(&tool, json!({ "repo_path": ".", "start_timestamp": null })).is_empty());
    assert!(
        issues(
            &tool,
            json!({ "repo_path": ".", "start_timestamp": "2024-01-01" })
        )
        .is_empty()
    );
    assert_eq!(
        issues(
            &tool,
            json!({ "repo_path": ".", "start_timestamp": 5, "max_count": 1.0, "x": 1 })
        ),
        [
            "/start_timestamp: 5 is not valid under any of the schemas listed in the 'anyOf' \
             keyword (1: 5 is not of type \"string\"; 2: 5 is not of type \"null\")",
            "/x: unknown parameter (expected one of \"repo_path\", \"max_count\", \"start_timestamp\")",
            "/max_count: expected an integer, found 1.0 (an integer is written as digits alone, \
             without a fraction, an exponent or a minus zero, from -9223372036854775808 to \
             18446744073709551615)",
        ]
    );
    assert_eq!(
        issues(&tool, json!({})),
        ["/repo_path: missing required parameter"]
    );
}

#[test]
fn the_model_is_sent_the_schema_closed_to_other_members() {
    let tool = adopted(&git_log(), ToolParameters::new());
    let mut expected = git_log();
    expected["additionalProperties"] = json!(false);
    assert_eq!(tool.arguments_schema().into_owned(), expected);
}

#[test]
fn a_path_annotation_applies_to_the_string_branch() {
    let mut config = ToolParameters::new();
    let mut path = ToolParameterConfig::new(ParamType::Path);
    path.summary = Some("Where to start.".into());
    config.insert("start_timestamp".into(), path);
    let tool = adopted(&git_log(), config);
    assert_eq!(tool.parameters["start_timestamp"].kind, ParamType::Path);
    assert_eq!(
        tool.arguments_schema()["properties"]["start_timestamp"]["description"],
        "Where to start."
    );
    assert!(issues(&tool, json!({ "repo_path": ".", "start_timestamp": null })).is_empty());
    assert_eq!(
        issues(
            &tool,
            json!({ "repo_path": ".", "start_timestamp": "a\u{0}b" })
        ),
        ["/start_timestamp: expected a path, found a string containing NUL"]
    );
}

#[test]
fn the_config_names_only_parameters_the_schema_has() {
    let mut config = ToolParameters::new();
    config.insert("branch".into(), ToolParameterConfig::new(ParamType::String));
    let mut tool = tool();
    tool.parameters = config;
    assert_eq!(
        adopt(&mut tool, &git_log()).unwrap_err(),
        AdoptError::Config(
            "names the parameter `branch`, which the tool's schema does not \
             have (it has repo_path, max_count, start_timestamp)"
                .into()
        )
    );
}

#[test]
fn several_types_make_an_any_parameter() {
    // The sequential-thinking server's one tool has such a parameter.
    let schema = json!({
        "type": "object",
        "properties": {
            "thought": { "type": "string" },
            "isRevision": { "type": ["boolean", "string"] }
        },
        "required": ["thought"]
    });
    let tool = adopted(&schema, ToolParameters::new());
    assert_eq!(tool.parameters["isRevision"].kind, ParamType::Any);
    assert!(issues(&tool, json!({ "thought": "t", "isRevision": true })).is_empty());
    assert!(issues(&tool, json!({ "thought": "t", "isRevision": "yes" })).is_empty());
    assert_eq!(
        issues(&tool, json!({ "thought": "t", "isRevision": 1 })),
        ["/isRevision: 1 is not of types \"boolean\", \"string\""]
    );
}

#[test]
fn refs_are_followed_for_the_view_and_the_check() {
    // A pydantic nested model: the element type lives in `$defs`.
    let schema = json!({
        "$defs": {
            "Edit": {
                "properties": {
                    "path": { "type": "string" },
                    "count": { "type": "integer", "minimum": 1 }
                },
                "required": ["path"],
                "type": "object"
            }
        },
        "properties": {
            "edits": { "items": { "$ref": "#/$defs/Edit" }, "type": "array" },
            "main": { "$ref": "#/$defs/Edit" }
        },
        "required": ["edits"],
        "type": "object"
    });
    let mut config = ToolParameters::new();
    let mut main = ToolParameterConfig::new(ParamType::Object);
    main.properties
        .insert("path".into(), ToolParameterConfig::new(ParamType::Path));
    config.insert("main".into(), main);
    let tool = adopted(&schema, config);
    let edits = &tool.parameters["edits"];
    assert_eq!(edits.kind, ParamType::Array);
    let item = edits.items.as_deref().unwrap();
    assert_eq!(item.kind, ParamType::Object);
    assert!(item.properties["path"].required);
    assert_eq!(item.properties["count"].kind, ParamType::Integer);
    assert_eq!(
        tool.parameters["main"].properties["path"].kind,
        ParamType::Path
    );
    assert!(issues(&tool, json!({ "edits": [{ "path": "a", "count": 2 }] })).is_empty());
    assert_eq!(
        issues(
            &tool,
            json!({ "edits": [{ "count": 0 }], "main": { "path": "a\u{0}" } })
        ),
        [
            "/edits/0/path: missing required parameter",
            "/edits/0/count: 0 is less than the minimum of 1",
            "/main/path: expected a path, found a string containing NUL",
        ]
    );
}

#[test]
fn a_recursive_ref_is_usable_and_the_view_stops() {
    let schema = json!({
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": { "type": "string" },
                    "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } }
                }
            }
        },
        "type": "object",
        "properties": { "root": { "$ref": "#/$defs/Node" } }
    });
    let tool = adopted(&schema, ToolParameters::new());
    let mut node = &tool.parameters["root"];
    let mut levels = 0;
    while let Some(child) = node
        .properties
        .get("children")
        .and_then(|c| c.items.as_deref())
    {
        node = child;
        levels += 1;
    }
    assert_eq!(levels, crate::tool::imported::MAX_REF_DEPTH);
    let deep = json!({ "root": { "children": [{ "children": [{ "name": 3 }] }] } });
    assert_eq!(
        issues(&tool, deep),
        ["/root/children/0/children/0/name: 3 is not of type \"string\""]
    );
}

#[test]
fn a_schema_jp_cannot_use_is_said_why() {
    let remote = json!({
        "type": "object",
        "properties": { "x": { "$ref": "https://example.com/x.json" } }
    });
    assert_eq!(
        adopt(&mut tool(), &remote).unwrap_err().to_string(),
        "its schema refers to another document (https://example.com/x.json), which jp does not fetch"
    );
    let bad_pattern = json!({
        "type": "object",
        "properties": { "x": { "type": "string", "pattern": "(" } }
    });
    let error = adopt(&mut tool(), &bad_pattern).unwrap_err().to_string();
    assert!(error.starts_with("its schema cannot be used: "), "{error}");

    let big = json!({
        "type": "object",
        "properties": { "x": { "type": "string", "description": "d".repeat(MAX_SCHEMA_BYTES) } }
    });
    assert_eq!(
        adopt(&mut tool(), &big).unwrap_err().to_string(),
        format!(
            "its schema is {} bytes, more than the 262144 jp takes",
            big.to_string().len()
        )
    );

    let mut deep = json!({ "type": "string" });
    for _ in 0..70 {
        deep = json!({ "type": "array", "items": deep });
    }
    let deep = json!({ "type": "object", "properties": { "x": deep } });
    assert_eq!(
        adopt(&mut tool(), &deep).unwrap_err().to_string(),
        "its schema nests deeper than 64 levels"
    );

    let not_object = json!({ "type": "array" });
    assert_eq!(
        adopt(&mut tool(), &not_object).unwrap_err().to_string(),
        "the input schema is of type \"array\", not an object"
    );
}

#[test]
fn arguments_nested_too_deep_are_refused_before_the_validator() {
    let tool = adopted(&json!({ "type": "object" }), ToolParameters::new());
    let mut args = json!(1);
    for _ in 0..200 {
        args = json!([args]);
    }
    assert_eq!(
        issues(&tool, json!({ "a": args })),
        ["arguments: nested deeper than 128 levels"]
    );
}

#[test]
fn a_long_value_is_shown_cut_in_a_refusal() {
    let schema = json!({ "type": "object", "properties": { "n": { "type": "integer" } } });
    let tool = adopted(&schema, ToolParameters::new());
    let long = "x".repeat(10_000);
    let said = issues(&tool, json!({ "n": long }));
    assert_eq!(said.len(), 1);
    assert!(said[0].len() < 200, "{}", said[0]);
}

#[test]
fn a_value_outside_an_enum_is_said_with_the_values_allowed() {
    let schema = json!({
        "$defs": { "Align": { "type": "string", "enum": ["left", "center", "right"] } },
        "type": "object",
        "properties": { "align": { "$ref": "#/$defs/Align" } }
    });
    let tool = adopted(&schema, ToolParameters::new());
    assert_eq!(
        issues(&tool, json!({ "align": "middle" })),
        ["/align: expected one of \"left\", \"center\", \"right\", found \"middle\""]
    );
}

#[test]
fn a_value_complete_while_the_call_streams_is_checked_where_it_stands() {
    let tool = adopted(&git_log(), ToolParameters::new());
    let at = |value: Value, name: &str| -> Vec<String> {
        let param = &tool.parameters[name];
        tool.check_value_at(param, &value, vec![name.to_owned()])
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(at(json!(null), "start_timestamp"), Vec::<String>::new());
    assert_eq!(
        at(json!(3), "start_timestamp"),
        [
            "/start_timestamp: 3 is not valid under any of the schemas listed in the 'anyOf' \
          keyword (1: 3 is not of type \"string\"; 2: 3 is not of type \"null\")"
        ]
    );
    assert_eq!(
        at(json!(0), "max_count"),
        Vec::<String>::new(),
        "git_log's max_count has no minimum"
    );
    assert_eq!(
        at(json!(true), "max_count"),
        ["/max_count: true is not of type \"integer\""]
    );

    // Inside a root union, the branch is known only once all is there.
    let pick = json!({ "anyOf": [
        { "type": "object", "properties": { "id": { "type": "integer" } }, "required": ["id"] },
        { "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] }
    ] });
    let tool = adopted(&pick, ToolParameters::new());
    let param = &tool.parameters["id"];
    assert!(
        tool.check_value_at(param, &json!(true), vec!["id".into()])
            .is_empty()
    );

    // A conditional schema: what `count` must be depends on `unit`.
    let conditional = json!({
        "type": "object",
        "properties": { "unit": { "type": "string" }, "count": { "type": "integer" } },
        "if": { "properties": { "unit": { "const": "dozen" } } },
        "then": { "properties": { "count": { "maximum": 12 } } }
    });
    let tool = adopted(&conditional, ToolParameters::new());
    let param = &tool.parameters["count"];
    assert!(
        tool.check_value_at(param, &json!(50), vec!["count".into()])
            .is_empty()
    );
    assert_eq!(
        tool.check_value_at(param, &json!(1.5), vec!["count".into()])
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [
            "/count: expected an integer, found 1.5 (an integer is written as digits alone, \
          without a fraction, an exponent or a minus zero, from -9223372036854775808 to \
          18446744073709551615)"
        ]
    );
}

#[test]
fn plain_objects_are_closed_and_combinations_left_as_written() {
    let schema = json!({
        "type": "object",
        "properties": {
            "opts": { "type": "object", "properties": { "dir": { "type": "string" } } },
            "list": { "type": "array", "items": { "type": "object", "properties": { "a": { "type": "string" } } } },
            "mixed": { "allOf": [{ "properties": { "a": { "type": "string" } } }, { "properties": { "b": { "type": "string" } } }] }
        }
    });
    let tool = adopted(&schema, ToolParameters::new());
    let sent = tool.arguments_schema().into_owned();
    assert_eq!(sent["additionalProperties"], false);
    assert_eq!(sent["properties"]["opts"]["additionalProperties"], false);
    assert_eq!(
        sent["properties"]["list"]["items"]["additionalProperties"],
        false
    );
    assert_eq!(
        sent["properties"]["mixed"].get("additionalProperties"),
        None
    );
    assert_eq!(
        issues(&tool, json!({ "opts": { "dir": "a", "file": "b" } })),
        ["/opts/file: unknown parameter (expected one of \"dir\")"]
    );
    assert!(issues(&tool, json!({ "mixed": { "a": "1", "b": "2" } })).is_empty());

    // A member `then` adds is no unknown member, nor is one of `opts`
    // that it might add.
    let conditional = json!({
        "type": "object",
        "properties": { "opts": { "type": "object", "properties": { "dir": { "type": "string" } } } },
        "if": { "required": ["opts"] },
        "then": { "properties": { "extra": { "type": "string" } } }
    });
    let tool = adopted(&conditional, ToolParameters::new());
    assert_eq!(tool.arguments_schema().get("additionalProperties"), None);
    assert!(issues(&tool, json!({ "opts": { "dir": "a" }, "extra": "x" })).is_empty());
}

#[test]
fn an_enum_the_config_adds_narrows_and_never_widens() {
    let schema = json!({
        "type": "object",
        "properties": { "mode": { "type": "string", "enum": ["fast", "slow"] } }
    });
    let mut config = ToolParameters::new();
    let mut mode = ToolParameterConfig::new(ParamType::String);
    mode.enumeration = Some(vec![json!("fast"), json!("reckless")]);
    config.insert("mode".into(), mode);
    let tool = adopted(&schema, config);
    assert!(issues(&tool, json!({ "mode": "fast" })).is_empty());
    assert_eq!(
        issues(&tool, json!({ "mode": "slow" })),
        ["/mode: expected one of \"fast\", \"reckless\", found \"slow\""]
    );
    assert_eq!(
        issues(&tool, json!({ "mode": "reckless" })),
        ["/mode: expected one of \"fast\", \"slow\", found \"reckless\""]
    );
}

#[test]
fn an_enum_jp_cannot_place_is_an_error_not_a_silent_loss() {
    // `style`'s members are behind a `$ref`: a summary or a `path` type
    // still applies, an `enum` jp would not enforce is refused.
    let schema = json!({
        "$defs": { "Style": { "type": "object", "properties": { "align": { "type": "string" } } } },
        "type": "object",
        "properties": { "style": { "$ref": "#/$defs/Style" } }
    });
    let mut align = ToolParameterConfig::new(ParamType::String);
    align.summary = Some("Where text goes.".into());
    let mut style = ToolParameterConfig::new(ParamType::Object);
    style.properties.insert("align".into(), align.clone());
    let mut config = ToolParameters::new();
    config.insert("style".into(), style.clone());
    adopted(&schema, config);

    align.enumeration = Some(vec![json!("left")]);
    style.properties.insert("align".into(), align);
    let mut config = ToolParameters::new();
    config.insert("style".into(), style);
    let mut tool = tool();
    tool.parameters = config;
    assert_eq!(
        adopt(&mut tool, &schema).unwrap_err().to_string(),
        "gives /style/align an `enum`, but the tool's schema describes it through a `$ref` or a \
         combination, where jp cannot add one; leave the `enum` out (the schema's own \
         constraints still apply)"
    );
}

#[test]
fn the_validators_kept_are_bounded() {
    for n in 0..=MAX_VALIDATORS {
        let schema = json!({ "type": "object", "description": n.to_string() });
        validator(&schema).unwrap();
    }
    let kept = VALIDATORS.lock().unwrap().len();
    assert!(kept <= MAX_VALIDATORS, "{kept} validators kept");
}
