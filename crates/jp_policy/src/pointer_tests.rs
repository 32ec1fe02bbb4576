#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;
use crate::support_tests::params;

#[test]
fn tokens_are_decoded_and_encoded_per_rfc_6901() {
    assert_eq!(parse("/a~1b/c~0d/").unwrap(), ["a/b", "c~d", ""]);
    assert_eq!(parse("").unwrap(), Vec::<String>::new());
    assert_eq!(encode(&["a/b", "c~d"]), "/a~1b/c~0d");
    assert_eq!(encode::<&str>(&[]), "");
}

#[test]
fn the_schema_walk_makes_array_positions_explicit() {
    let target = resolve_schema(
        "/patterns/paths",
        &parse("/patterns/paths").unwrap(),
        &params(),
    )
    .unwrap();
    assert_eq!(
        target.steps,
        [
            Step::Member("patterns".into()),
            Step::Each,
            Step::Member("paths".into()),
            Step::Each,
        ]
    );
    assert_eq!(target.param_type, ParamType::Path);
    assert!(matches!(
        resolve_schema("/nope", &parse("/nope").unwrap(), &params()),
        Err(SchemaError::NotFound(_))
    ));
    assert!(matches!(
        resolve_schema("/opts", &parse("/opts").unwrap(), &params()),
        Err(SchemaError::Invalid(_))
    ));
}

#[test]
fn a_numeric_member_name_is_not_an_array_position() {
    let params: ToolParameters = toml::from_str(
        r#"rows = { type = "array", items = { type = "object", properties = { "0" = { type = "string" } } } }"#,
    )
    .unwrap();
    let target = resolve_schema("/rows/0", &parse("/rows/0").unwrap(), &params).unwrap();
    assert_eq!(
        target.steps,
        [
            Step::Member("rows".into()),
            Step::Each,
            Step::Member("0".into())
        ]
    );
}

#[test]
fn the_walk_reports_concrete_locations_in_document_order() {
    let steps = [
        Step::Member("patterns".into()),
        Step::Each,
        Step::Member("paths".into()),
        Step::Each,
    ];
    let args = json!({ "patterns": [
        { "paths": ["a", "b"] },
        { "old": "no paths" },
        { "paths": "oops" },
        7,
        { "paths": ["c"] },
    ] });
    let found = walk(&steps, &args);
    let summary: Vec<String> = found
        .iter()
        .map(|f| match f {
            Found::Value { at, value } => format!("{at}={value}"),
            Found::Malformed {
                at,
                expected,
                found,
            } => format!("{at}!{expected}:{found}"),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "/patterns/0/paths/0=\"a\"",
            "/patterns/0/paths/1=\"b\"",
            "/patterns/2/paths!an array:\"oops\"",
            "/patterns/3!an object:7",
            "/patterns/4/paths/0=\"c\"",
        ]
    );
    assert_eq!(walk(&steps, &json!({})), Vec::new());
}
