//! Tool parameters: the JSON-Schema-like description of a tool's arguments.
//!
//! A tool's `parameters` table is an ordered map from argument name to a
//! [`ToolParameterConfig`]. The order is the order the model sees, which is
//! also the order arguments usually stream in (RFD D26 relies on it).

use indexmap::IndexMap;
use schematic::Schematic;
use serde::{Deserialize, Serialize};

/// An ordered map of parameter name to its description.
pub type ToolParameters = IndexMap<String, ToolParameterConfig>;

/// The type of a tool parameter.
///
/// These are the JSON Schema types plus `path` (RFD D25): a string that names
/// a file system path. The model sees `path` as `"string"`; policies treat it
/// as a path (normalized, matched per component). `any` is a value whose
/// schema allows several types (an MCP server's `anyOf` of a string and a
/// number, say): policies compare it whole, by `const` and `enum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Schematic)]
#[serde(rename_all = "snake_case")]
pub enum ParamType {
    /// Any JSON string.
    String,
    /// A file system path, relative to the workspace root or absolute.
    Path,
    /// Any JSON number.
    Number,
    /// A JSON number without a fractional part.
    Integer,
    /// `true` or `false`.
    Boolean,
    /// A JSON array; `items` describes its elements.
    Array,
    /// A JSON object; `properties` describes its members.
    Object,
    /// Any JSON value but `null`: a parameter whose schema allows several
    /// types. The model sees no `type` for it.
    Any,
}

impl ParamType {
    /// The name used in config files and messages (`"path"`, `"integer"`, ...).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Path => "path",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Array => "array",
            Self::Object => "object",
            Self::Any => "any",
        }
    }

    /// The JSON Schema type the model sees: `path` becomes `"string"`, and
    /// `any` has none.
    #[must_use]
    pub const fn json_schema_type(self) -> Option<&'static str> {
        match self {
            Self::Path => Some("string"),
            Self::Any => None,
            other => Some(other.as_str()),
        }
    }
}

impl std::fmt::Display for ParamType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One parameter of a tool (or one element or member of a parameter).
///
/// ```toml
/// [conversation.tools.fs_modify_file.parameters.path]
/// type = "path"
/// summary = "The file to modify, relative to the workspace root."
/// required = true
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Schematic)]
#[serde(deny_unknown_fields)]
pub struct ToolParameterConfig {
    /// The parameter's type: `string`, `path`, `number`, `integer`,
    /// `boolean`, `array`, `object` or `any`. `path` is shown to the model
    /// as `string` and makes policies match it as a file system path; `any`
    /// takes every value but `null`.
    #[serde(rename = "type")]
    pub kind: ParamType,

    /// A one-line description shown to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,

    /// A longer description shown to the model after the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,

    /// Whether the model must always provide this parameter.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,

    /// The value used when the model leaves the parameter out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Value>,

    /// The only values the parameter may take.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub enumeration: Option<Vec<serde_json::Value>>,

    /// For `type = "array"`: the type of every element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<ParamItems>,

    /// For `type = "object"`: the object's members, in order.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub properties: ToolParameters,
}

impl ToolParameterConfig {
    /// A parameter of the given type with nothing else set.
    #[must_use]
    pub fn new(kind: ParamType) -> Self {
        Self {
            kind,
            summary: None,
            description: None,
            required: false,
            default: None,
            enumeration: None,
            items: None,
            properties: IndexMap::new(),
        }
    }

    /// This parameter as a JSON Schema node, the form the model sees.
    #[must_use]
    pub fn to_json_schema(&self) -> serde_json::Value {
        let mut node = serde_json::Map::new();
        if let Some(kind) = self.kind.json_schema_type() {
            node.insert("type".into(), kind.into());
        }
        let description = match (&self.summary, &self.description) {
            (Some(s), Some(d)) => Some(format!("{s}\n\n{d}")),
            (Some(s), None) => Some(s.clone()),
            (None, Some(d)) => Some(d.clone()),
            (None, None) => None,
        };
        if let Some(description) = description {
            node.insert("description".into(), description.into());
        }
        if let Some(values) = &self.enumeration {
            node.insert("enum".into(), values.clone().into());
        }
        if let Some(default) = &self.default {
            node.insert("default".into(), default.clone());
        }
        if let Some(items) = &self.items {
            node.insert("items".into(), items.to_json_schema());
        }
        if self.kind == ParamType::Object {
            object_schema_into(&self.properties, &mut node);
        }
        serde_json::Value::Object(node)
    }
}

/// The JSON Schema of a whole tool's arguments: an object whose properties
/// are `parameters`, in order.
#[must_use]
pub fn parameters_json_schema(parameters: &ToolParameters) -> serde_json::Value {
    let mut node = serde_json::Map::new();
    node.insert("type".into(), "object".into());
    object_schema_into(parameters, &mut node);
    serde_json::Value::Object(node)
}

fn object_schema_into(
    properties: &ToolParameters,
    node: &mut serde_json::Map<String, serde_json::Value>,
) {
    let props = properties
        .iter()
        .map(|(name, p)| (name.clone(), p.to_json_schema()))
        .collect::<serde_json::Map<_, _>>();
    let required = properties
        .iter()
        .filter(|(_, p)| p.required)
        .map(|(name, _)| serde_json::Value::from(name.as_str()))
        .collect::<Vec<_>>();
    node.insert("properties".into(), props.into());
    if !required.is_empty() {
        node.insert("required".into(), required.into());
    }
    node.insert("additionalProperties".into(), false.into());
}

/// The element type of an array parameter: a boxed
/// [`ToolParameterConfig`] that derefs to it.
///
/// It exists because schematic's `Box<T>` schema skips the recursion guard
/// that named types get, so a plain `Box<Self>` field overflows the stack
/// when the config schema is generated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ParamItems(pub Box<ToolParameterConfig>);

impl ParamItems {
    /// Wraps an element description.
    #[must_use]
    pub fn new(items: ToolParameterConfig) -> Self {
        Self(Box::new(items))
    }
}

impl std::ops::Deref for ParamItems {
    type Target = ToolParameterConfig;

    fn deref(&self) -> &ToolParameterConfig {
        &self.0
    }
}

impl Schematic for ParamItems {
    fn build_schema(schema: schematic::SchemaBuilder) -> schematic::Schema {
        schema.infer::<ToolParameterConfig>()
    }
}

#[cfg(test)]
#[path = "parameter_tests.rs"]
mod tests;
