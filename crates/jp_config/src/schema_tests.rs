#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn schema_documents_policy_rules_and_requires_nothing() {
    let schema: serde_json::Value = serde_json::from_str(&config_json_schema().unwrap()).unwrap();
    assert_eq!(schema["title"], "AppConfig");
    assert!(schema.get("required").is_none());
    let rule = &schema["definitions"]["PolicyRule"];
    assert_eq!(rule["additionalProperties"], false);
    let keys = rule["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(
        keys,
        [
            "arg",
            "const",
            "enum",
            "exclusive_maximum",
            "exclusive_minimum",
            "maximum",
            "minimum",
            "mode",
            "pattern",
            "prefix"
        ]
    );
}
