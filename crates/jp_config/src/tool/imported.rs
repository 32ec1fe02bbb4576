//! Parameters imported from a JSON Schema: an MCP server's `inputSchema`
//! for one of its tools, turned into [`ToolParameters`], and what the
//! config adds to them (`parameters.repo_path.type = "path"`).
//!
//! jp checks every call against a tool's parameters before it runs, and
//! its policies match arguments by type, so a schema is imported only as
//! far as jp can check it: `type` (one type, or one type and `null`),
//! `description`, `enum`, `default`, `items`, `properties` and `required`.
//! A parameter jp cannot describe (`anyOf`, an array without `items`, no
//! type at all) makes the import fail with a message naming it, rather
//! than be checked less strictly than the server expects.

use jp_policy::parameter::{ParamItems, ParamType, ToolParameterConfig, ToolParameters};
use serde_json::{Map, Value};

/// The parameters `schema` (an object schema) describes, in its order.
///
/// # Errors
///
/// What jp cannot describe, with the JSON pointer of the parameter.
pub fn parameters_from_schema(schema: &Map<String, Value>) -> Result<ToolParameters, String> {
    if let Some(kind) = schema.get("type")
        && kind != "object"
    {
        return Err(format!("the input schema is of type {kind}, not an object"));
    }
    properties(schema, "")
}

fn properties(schema: &Map<String, Value>, at: &str) -> Result<ToolParameters, String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties") else {
        return Ok(ToolParameters::new());
    };
    let Some(props) = props.as_object() else {
        return Err(format!("{at}: `properties` is not an object"));
    };
    let mut parameters = ToolParameters::new();
    for (name, node) in props {
        let pointer = format!("{at}/{name}");
        let mut parameter = parameter(node, &pointer)?;
        parameter.required = required.contains(&name.as_str());
        parameters.insert(name.clone(), parameter);
    }
    Ok(parameters)
}

fn parameter(node: &Value, at: &str) -> Result<ToolParameterConfig, String> {
    let Some(node) = node.as_object() else {
        return Err(format!("{at}: the schema is not an object"));
    };
    for combinator in ["anyOf", "oneOf", "allOf", "$ref", "not"] {
        if node.contains_key(combinator) {
            return Err(format!(
                "{at}: `{combinator}` is not supported; jp checks arguments against one type per parameter"
            ));
        }
    }
    let kind = kind_of(node, at)?;
    let mut parameter = ToolParameterConfig::new(kind);
    parameter.description = node
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned);
    parameter.enumeration = node.get("enum").and_then(Value::as_array).cloned();
    parameter.default = node.get("default").cloned();
    match kind {
        ParamType::Array => {
            let Some(items) = node.get("items") else {
                return Err(format!(
                    "{at}: an array without `items`; jp needs the type of its elements"
                ));
            };
            parameter.items = Some(ParamItems::new(self::parameter(
                items,
                &format!("{at}/items"),
            )?));
        }
        ParamType::Object => parameter.properties = properties(node, at)?,
        _ => {}
    }
    Ok(parameter)
}

/// The one type of a schema node: its `type` (a `null` beside one other
/// type is dropped: leaving the parameter out says the same), else what
/// `properties`, `items` or an `enum` of strings imply.
fn kind_of(node: &Map<String, Value>, at: &str) -> Result<ParamType, String> {
    let named = match node.get("type") {
        Some(Value::String(kind)) => Some(kind.as_str()),
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|kind| *kind != "null")
                .collect();
            match kinds.as_slice() {
                [one] => Some(*one),
                _ => {
                    return Err(format!(
                        "{at}: a parameter of several types ({}) is not supported",
                        kinds.join(", ")
                    ));
                }
            }
        }
        Some(other) => return Err(format!("{at}: `type` is {other}, not a type name")),
        None => None,
    };
    let kind = match named {
        Some("string") => ParamType::String,
        Some("number") => ParamType::Number,
        Some("integer") => ParamType::Integer,
        Some("boolean") => ParamType::Boolean,
        Some("array") => ParamType::Array,
        Some("object") => ParamType::Object,
        Some(other) => return Err(format!("{at}: unknown type `{other}`")),
        None if node.contains_key("properties") => ParamType::Object,
        None if node.contains_key("items") => ParamType::Array,
        None if node
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| !values.is_empty() && values.iter().all(Value::is_string)) =>
        {
            ParamType::String
        }
        None => {
            return Err(format!(
                "{at}: no `type`; jp needs one to check the argument"
            ));
        }
    };
    Ok(kind)
}

/// The server's parameters with what the config adds: for each parameter
/// the config names, its `type` (a `path` over a `string`, so policies
/// match it as a path), and its summary, description, enum, default,
/// items and properties where the config sets them. A parameter is
/// required if either says so.
///
/// # Errors
///
/// A parameter the config names and the server's schema lacks, with the
/// names the schema has.
pub fn merge_parameters(
    server: ToolParameters,
    config: &ToolParameters,
) -> Result<ToolParameters, String> {
    let mut merged = server;
    for (name, added) in config {
        let known = if merged.is_empty() {
            "it has none".to_owned()
        } else {
            format!(
                "it has {}",
                jp_policy::listing::cut_list(merged.keys().cloned())
            )
        };
        let Some(parameter) = merged.get_mut(name) else {
            return Err(format!(
                "names the parameter `{name}`, which the server's schema for this tool does not have ({known})"
            ));
        };
        parameter.kind = added.kind;
        parameter.required |= added.required;
        if added.summary.is_some() {
            parameter.summary.clone_from(&added.summary);
        }
        if added.description.is_some() {
            parameter.description.clone_from(&added.description);
        }
        if added.enumeration.is_some() {
            parameter.enumeration.clone_from(&added.enumeration);
        }
        if added.default.is_some() {
            parameter.default.clone_from(&added.default);
        }
        if added.items.is_some() {
            parameter.items.clone_from(&added.items);
        }
        if !added.properties.is_empty() {
            parameter.properties.clone_from(&added.properties);
        }
    }
    Ok(merged)
}

#[cfg(test)]
#[path = "imported_tests.rs"]
mod tests;
