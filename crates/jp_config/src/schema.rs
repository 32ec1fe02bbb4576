//! The JSON Schema of config files (`jp config schema`), so editors can
//! complete and check `.jp/config.toml` (with taplo or Even Better TOML:
//! `#:schema ./schema.json` at the top of the file).

use schematic::schema::{
    JsonSchemaOptions, JsonSchemaRenderer, SchemaGenerator, SchemaRenderer as _,
};

use crate::app::AppConfig;

/// The JSON Schema (draft 07) of a config file, as pretty-printed JSON.
///
/// Nothing is required: every layer sets only what it changes.
///
/// # Errors
///
/// When schematic cannot render the schema (a bug in the config types).
pub fn config_json_schema() -> Result<String, String> {
    let mut generator = SchemaGenerator::default();
    generator.add::<AppConfig>();
    let mut renderer = JsonSchemaRenderer::new(JsonSchemaOptions {
        mark_struct_fields_required: false,
        allow_newlines_in_description: true,
        ..JsonSchemaOptions::default()
    });
    renderer
        .render(generator.schemas)
        .map_err(|e| format!("rendering the config schema: {e}"))
}

/// The JSON Schema of a config file as a value, built once.
///
/// # Errors
///
/// As [`config_json_schema`].
pub fn config_schema() -> Result<&'static serde_json::Value, String> {
    static SCHEMA: std::sync::OnceLock<Result<serde_json::Value, String>> =
        std::sync::OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let text = config_json_schema()?;
            serde_json::from_str(&text).map_err(|e| format!("the config schema is not JSON: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn schema_documents_policy_rules_and_requires_nothing() {
        let schema: serde_json::Value =
            serde_json::from_str(&config_json_schema().unwrap()).unwrap();
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
}
