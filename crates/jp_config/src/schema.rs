//! The JSON Schema of config files (`jp config schema`), so editors can
//! complete and check `.jp/config.toml` (with taplo or Even Better TOML:
//! `#:schema ./schema.json` at the top of the file).

use schematic::schema::{
    JsonSchemaOptions, JsonSchemaRenderer, SchemaGenerator, SchemaRenderer as _,
};

use crate::app::AppConfig;

/// Why the config schema is not there: a bug in the config types.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigSchemaError {
    /// schematic could not render it.
    #[error("rendering the config schema: {0}")]
    Render(String),
    /// What schematic rendered does not parse as JSON.
    #[error("the config schema is not JSON: {0}")]
    NotJson(String),
}

/// The JSON Schema (draft 07) of a config file, as pretty-printed JSON.
///
/// Nothing is required: every layer sets only what it changes.
///
/// # Errors
///
/// When schematic cannot render the schema (a bug in the config types).
pub fn config_json_schema() -> Result<String, ConfigSchemaError> {
    let mut generator = SchemaGenerator::default();
    generator.add::<AppConfig>();
    let mut renderer = JsonSchemaRenderer::new(JsonSchemaOptions {
        mark_struct_fields_required: false,
        allow_newlines_in_description: true,
        ..JsonSchemaOptions::default()
    });
    renderer
        .render(generator.schemas)
        .map_err(|e| ConfigSchemaError::Render(e.to_string()))
}

/// The JSON Schema of a config file as a value, built once.
///
/// # Errors
///
/// As [`config_json_schema`].
pub fn config_schema() -> Result<&'static serde_json::Value, ConfigSchemaError> {
    static SCHEMA: std::sync::OnceLock<Result<serde_json::Value, ConfigSchemaError>> =
        std::sync::OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let text = config_json_schema()?;
            serde_json::from_str(&text).map_err(|e| ConfigSchemaError::NotJson(e.to_string()))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The JSON types (`null`, `boolean`, `number`, `string`, `array`,
/// `object`) a config value at `path` may have, as the schema says:
/// `integer` counts as `number`, and an enum's values give theirs. `None`
/// when the schema does not reach `path` or says nothing about the type.
pub(crate) fn value_types(
    path: &crate::ConfigPath,
    schema: &serde_json::Value,
) -> Option<std::collections::BTreeSet<&'static str>> {
    let node = node_at(path, schema)?;
    let mut types = std::collections::BTreeSet::new();
    collect_types(node, schema, &mut types, 0);
    (!types.is_empty()).then_some(types)
}

/// Every value the config value at `path` may have, when the schema
/// lists them (an enum); `None` when it may have others.
pub(crate) fn enum_values(
    path: &crate::ConfigPath,
    schema: &serde_json::Value,
) -> Option<Vec<serde_json::Value>> {
    fn collect(
        node: &serde_json::Value,
        schema: &serde_json::Value,
        out: &mut Vec<serde_json::Value>,
        depth: usize,
    ) -> bool {
        if depth > 16 {
            return false;
        }
        let listed = node
            .get("enum")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .chain(node.get("const"))
            .cloned()
            .collect::<Vec<_>>();
        let branches = branches(node, schema);
        if listed.is_empty() && branches.is_empty() {
            // A leaf without a list: only `null` is closed.
            let is_null = node.get("type").and_then(serde_json::Value::as_str) == Some("null");
            if is_null {
                out.push(serde_json::Value::Null);
            }
            return is_null;
        }
        out.extend(listed);
        branches
            .into_iter()
            .all(|branch| collect(branch, schema, out, depth + 1))
    }
    let node = node_at(path, schema)?;
    let mut values = Vec::new();
    (collect(node, schema, &mut values, 0) && !values.is_empty()).then_some(values)
}

/// The schema of the config value at `path`.
fn node_at<'a>(
    path: &crate::ConfigPath,
    schema: &'a serde_json::Value,
) -> Option<&'a serde_json::Value> {
    let mut node = schema;
    for segment in path.segments() {
        node = child(node, segment, schema)?;
    }
    Some(node)
}

/// The schema of `node`'s key or element `segment`, through `$ref`,
/// `allOf`, `anyOf` and `oneOf`.
fn child<'a>(
    node: &'a serde_json::Value,
    segment: &str,
    schema: &'a serde_json::Value,
) -> Option<&'a serde_json::Value> {
    let mut pending = vec![(node, 0)];
    while let Some((node, depth)) = pending.pop() {
        if depth > 16 {
            continue;
        }
        if let Some(next) = node.get("properties").and_then(|props| props.get(segment)) {
            return Some(next);
        }
        if let Some(next) = node.get("additionalProperties").filter(|v| v.is_object()) {
            return Some(next);
        }
        if segment.parse::<usize>().is_ok()
            && let Some(next) = node.get("items").filter(|v| v.is_object())
        {
            return Some(next);
        }
        pending.extend(branches(node, schema).into_iter().map(|b| (b, depth + 1)));
    }
    None
}

/// The schemas `node` stands for: its `$ref` target, and its `allOf`,
/// `anyOf` and `oneOf` branches.
fn branches<'a>(
    node: &'a serde_json::Value,
    schema: &'a serde_json::Value,
) -> Vec<&'a serde_json::Value> {
    let mut out = Vec::new();
    if let Some(target) = node
        .get("$ref")
        .and_then(serde_json::Value::as_str)
        .and_then(|r| r.strip_prefix("#/definitions/"))
        .and_then(|name| schema.get("definitions")?.get(name))
    {
        out.push(target);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(list) = node.get(key).and_then(serde_json::Value::as_array) {
            out.extend(list);
        }
    }
    out
}

fn collect_types(
    node: &serde_json::Value,
    schema: &serde_json::Value,
    out: &mut std::collections::BTreeSet<&'static str>,
    depth: usize,
) {
    if depth > 16 {
        return;
    }
    let mut add = |name: &str| {
        if let Some(kind) = [
            ("null", "null"),
            ("boolean", "boolean"),
            ("integer", "number"),
            ("number", "number"),
            ("string", "string"),
            ("array", "array"),
            ("object", "object"),
        ]
        .iter()
        .find_map(|(from, to)| (*from == name).then_some(*to))
        {
            out.insert(kind);
        }
    };
    match node.get("type") {
        Some(serde_json::Value::String(name)) => add(name),
        Some(serde_json::Value::Array(names)) => names
            .iter()
            .filter_map(serde_json::Value::as_str)
            .for_each(&mut add),
        _ => {}
    }
    let values = node
        .get("enum")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .chain(node.get("const"));
    for value in values {
        out.insert(json_type(value));
    }
    for branch in branches(node, schema) {
        collect_types(branch, schema, out, depth + 1);
    }
}

/// A JSON value's type, by the names JSON Schema uses.
pub(crate) fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
