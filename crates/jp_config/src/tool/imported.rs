//! jp's view of a tool's parameters, derived from its JSON Schema (an
//! MCP server's `inputSchema`, a local tool's `parameters_schema`), and
//! what the config lays over it (`parameters.repo_path.type = "path"`).
//!
//! The schema itself decides which calls are valid ([`super::schema`]),
//! and is what the model is sent; the view is what jp's policies read:
//! each parameter's type (one JSON type, `path` where the config says so,
//! `any` where the schema allows several), its members and elements, and
//! whether it is required. Nothing else is copied from the schema (no
//! description, `enum` or `default`): a hostile schema whose `$ref`s fan
//! out could otherwise make the view many times its size. `$ref`s to the same document are followed (to a depth),
//! `allOf` narrows, `anyOf`/`oneOf` widen; a `null` beside a type
//! (`["string", "null"]`, pydantic's `anyOf [T, {type: null}]`) leaves
//! the type. What cannot be told becomes `any`, never an error: the view
//! only has to be as strict as the policies written against it, and a
//! value of another type than a rule's never satisfies `unattended`.

use jp_policy::parameter::{ParamItems, ParamType, ToolParameterConfig, ToolParameters};
use serde_json::{Map, Value};

/// How many `$ref`s deep the view follows; beyond, a parameter is `any`.
pub const MAX_REF_DEPTH: usize = 16;

/// How many schema nodes the view visits at most (refs can fan out).
const NODE_BUDGET: usize = 20_000;

/// The parameters `schema` (an object schema) describes, in its order.
///
/// # Errors
///
/// A schema whose arguments cannot be an object.
pub fn parameters_from_schema(schema: &Value) -> Result<ToolParameters, String> {
    if let Some(kind) = schema.get("type")
        && kind != "object"
        && !kind
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|k| k == "object"))
    {
        return Err(format!("the input schema is of type {kind}, not an object"));
    }
    let lone_refs = super::schema::walk::is_legacy_draft(schema);
    let mut view = View {
        root: schema,
        budget: NODE_BUDGET,
        lone_refs,
    };
    let root = view.node(schema, 0);
    match root.kind {
        ParamType::Object | ParamType::Any => Ok(root.properties),
        other => Err(format!(
            "the input schema is of type {other}, not an object"
        )),
    }
}

struct View<'a> {
    root: &'a Value,
    budget: usize,
    /// Whether a `$ref` stands alone, its siblings ignored: so drafts
    /// before 2019-09 say, and their validator reads them so.
    lone_refs: bool,
}

impl<'a> View<'a> {
    /// The parameter `node` describes, `depth` `$ref`s down.
    fn node(&mut self, node: &'a Value, depth: usize) -> ToolParameterConfig {
        let mut param = ToolParameterConfig::new(ParamType::Any);
        let Some(map) = node.as_object() else {
            return param;
        };
        if self.budget == 0 || depth > MAX_REF_DEPTH {
            return param;
        }
        self.budget -= 1;
        if self.lone_refs
            && let Some(reference) = map.get("$ref").and_then(Value::as_str)
        {
            return match self.resolve(reference) {
                Some(target) => self.node(target, depth + 1),
                None => param,
            };
        }
        if let Some(kind) = own_kind(map) {
            param.kind = kind;
        }
        if matches!(param.kind, ParamType::Object | ParamType::Any) {
            param.properties = self.properties(map, depth);
        }
        if matches!(param.kind, ParamType::Array)
            && let Some(items) = map.get("items").filter(|i| i.is_object())
        {
            param.items = Some(ParamItems::new(self.node(items, depth)));
        }
        let narrowing = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
            .into_iter()
            .chain(branches(map, "allOf"));
        for part in narrowing.collect::<Vec<_>>() {
            let other = self.node(part, depth + 1);
            meet(&mut param, other);
        }
        let alternatives: Vec<&'a Value> = branches(map, "anyOf")
            .chain(branches(map, "oneOf"))
            .filter(|b| !is_null_only(b))
            .collect();
        if !alternatives.is_empty() {
            let joined = alternatives
                .into_iter()
                .map(|b| self.node(b, depth + 1))
                .reduce(join)
                .unwrap_or_else(|| ToolParameterConfig::new(ParamType::Any));
            meet(&mut param, joined);
        }
        param
    }

    /// The members `map` lists, each `required` if it says so.
    fn properties(&mut self, map: &'a Map<String, Value>, depth: usize) -> ToolParameters {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut properties = ToolParameters::new();
        if let Some(Value::Object(members)) = map.get("properties") {
            for (name, node) in members {
                let mut param = self.node(node, depth);
                param.required = required.contains(&name.as_str());
                properties.insert(name.clone(), param);
            }
        }
        properties
    }

    /// The node a `$ref` in the same document points at (`#`,
    /// `#/$defs/Name`, `#anchor`); `None` for another document or a
    /// missing target.
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        super::schema::walk::resolve(self.root, reference)
    }
}

fn branches<'a>(map: &'a Map<String, Value>, key: &str) -> impl Iterator<Item = &'a Value> {
    map.get(key).and_then(Value::as_array).into_iter().flatten()
}

/// Whether a branch of a union allows only `null` (`{type: null}`).
fn is_null_only(node: &Value) -> bool {
    node.get("type").is_some_and(|t| t == "null")
        || node.get("const").is_some_and(Value::is_null)
        || node
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.iter().all(Value::is_null))
}

/// The type `map` names or implies; `None` when it says none.
fn own_kind(map: &Map<String, Value>) -> Option<ParamType> {
    match map.get("type") {
        Some(Value::String(kind)) => Some(named(kind)),
        Some(Value::Array(kinds)) => {
            let kinds: Vec<ParamType> = kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|kind| *kind != "null")
                .map(named)
                .collect();
            kinds.into_iter().reduce(wider)
        }
        _ if map.contains_key("properties") => Some(ParamType::Object),
        _ if map.contains_key("items") => Some(ParamType::Array),
        _ => {
            let values = match (map.get("enum"), map.get("const")) {
                (Some(Value::Array(values)), _) => values.iter().collect(),
                (None, Some(value)) => vec![value],
                _ => Vec::new(),
            };
            (!values.is_empty() && values.iter().all(|v| v.is_string()))
                .then_some(ParamType::String)
        }
    }
}

fn named(kind: &str) -> ParamType {
    match kind {
        "string" => ParamType::String,
        "number" => ParamType::Number,
        "integer" => ParamType::Integer,
        "boolean" => ParamType::Boolean,
        "array" => ParamType::Array,
        "object" => ParamType::Object,
        _ => ParamType::Any,
    }
}

/// The type of a value that is of type `a` or of type `b`.
fn wider(a: ParamType, b: ParamType) -> ParamType {
    match (a, b) {
        _ if a == b => a,
        (ParamType::Integer, ParamType::Number) | (ParamType::Number, ParamType::Integer) => {
            ParamType::Number
        }
        _ => ParamType::Any,
    }
}

/// Narrows `param` by `other`, a schema it must also satisfy (a `$ref`
/// beside it, a branch of its `allOf`, the union of its `anyOf`).
fn meet(param: &mut ToolParameterConfig, other: ToolParameterConfig) {
    param.kind = match (param.kind, other.kind) {
        (ParamType::Any, kind) | (kind, ParamType::Any) => kind,
        (ParamType::Number, ParamType::Integer) => ParamType::Integer,
        (kind, _) => kind,
    };
    match (param.items.take(), other.items) {
        (Some(mut mine), Some(theirs)) => {
            meet(&mut mine.0, *theirs.0);
            param.items = Some(mine);
        }
        (mine, theirs) => param.items = mine.or(theirs),
    }
    for (name, theirs) in other.properties {
        match param.properties.get_mut(&name) {
            Some(mine) => {
                let required = mine.required || theirs.required;
                meet(mine, theirs);
                mine.required = required;
            }
            None => {
                param.properties.insert(name, theirs);
            }
        }
    }
    if !matches!(param.kind, ParamType::Object | ParamType::Any) {
        param.properties.clear();
    }
    if param.kind != ParamType::Array {
        param.items = None;
    }
}

/// What a value that satisfies `a` or `b` is known to be: their wider
/// type; an object's members from both (required where both require
/// them); an array's elements as either's.
fn join(a: ToolParameterConfig, b: ToolParameterConfig) -> ToolParameterConfig {
    let mut joined = ToolParameterConfig::new(wider(a.kind, b.kind));
    if joined.kind == ParamType::Array
        && let (Some(x), Some(y)) = (a.items, b.items)
    {
        joined.items = Some(ParamItems::new(join(*x.0, *y.0)));
    }
    if matches!(joined.kind, ParamType::Object | ParamType::Any) {
        let mut theirs = b.properties;
        for (name, mut mine) in a.properties {
            match theirs.shift_remove(&name) {
                Some(other) => {
                    let required = mine.required && other.required;
                    mine = join(mine, other);
                    mine.required = required;
                }
                None => mine.required = false,
            }
            joined.properties.insert(name, mine);
        }
        for (name, mut other) in theirs {
            other.required = false;
            joined.properties.insert(name, other);
        }
    }
    joined
}

/// The type the config gives a parameter of the schema's type `schema`:
/// the same, or `path` over a `string` (or a value of several types, its
/// string branch). Any other would make jp's view disagree with the
/// schema, and refuse calls the schema accepts.
fn laid_over(schema: ParamType, config: ParamType, at: &str) -> Result<ParamType, String> {
    let fits = config == schema
        || (config == ParamType::Path && matches!(schema, ParamType::String | ParamType::Any));
    if fits {
        Ok(config)
    } else {
        Err(format!(
            "gives {at} the type `{config}`, but the tool's schema says `{schema}`; the config may \
             make a string a `path`, or repeat the schema's type"
        ))
    }
}

/// The schema's parameters with what the config adds, by name, members
/// and elements included: its `type` (a `path` over a `string`, so
/// policies match it as a path; over a parameter that may also be `null`
/// or another type, the path is its string branch, and a value of
/// another type never satisfies an `unattended` rule), and its summary,
/// description, enum and default where the config sets them. A
/// parameter is required if either says so.
///
/// # Errors
///
/// A parameter the config names and the schema lacks, with the names the
/// schema has.
pub fn merge_parameters(
    server: ToolParameters,
    config: &ToolParameters,
) -> Result<ToolParameters, String> {
    let mut merged = server;
    merge_into(&mut merged, config, "")?;
    Ok(merged)
}

fn merge_into(
    merged: &mut ToolParameters,
    config: &ToolParameters,
    at: &str,
) -> Result<(), String> {
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
            let whose = if at.is_empty() {
                "the tool's schema".to_owned()
            } else {
                format!("its schema at {at}")
            };
            return Err(format!(
                "names the parameter `{name}`, which {whose} does not have ({known})"
            ));
        };
        let here = format!(
            "{at}/{}",
            jp_policy::pointer::encode(&[name]).trim_start_matches('/')
        );
        merge_one(parameter, added, &here)?;
    }
    Ok(())
}

fn merge_one(
    parameter: &mut ToolParameterConfig,
    added: &ToolParameterConfig,
    at: &str,
) -> Result<(), String> {
    parameter.kind = laid_over(parameter.kind, added.kind, at)?;
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
    if let Some(items) = added.items.as_deref() {
        match parameter.items.as_mut() {
            Some(mine) => merge_one(&mut mine.0, items, &format!("{at}/items"))?,
            None => parameter.items = Some(ParamItems::new(items.clone())),
        }
    }
    merge_into(&mut parameter.properties, &added.properties, at)
}

#[cfg(test)]
#[path = "imported_tests.rs"]
mod tests;
