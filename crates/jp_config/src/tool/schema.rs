//! A tool's parameters as a JSON Schema, kept whole (issue 37).
//!
//! An MCP server's `inputSchema`, or a local tool's `parameters_schema`,
//! is what the model is sent and what every call is checked against, by
//! a JSON Schema validator (drafts 4 to 2020-12; the draft its `$schema`
//! names, else 2020-12 as MCP says): `anyOf`, `oneOf`, `allOf`, `not`,
//! `$ref`/`$defs`, type lists, `const`, `enum`, `format`, bounds,
//! `additionalProperties`, `pattern`.
//!
//! jp's own view of the parameters ([`super::imported`]) is derived from
//! it for policies (the `path` type, a parameter's order); what the
//! config adds (`parameters.repo_path.type = "path"`, a summary, an
//! `enum`) is laid over the view and written into the schema: a summary
//! as what the model is told, an `enum` narrowing beside the schema's own
//! constraints, never in place of them ([`adopt`]).
//!
//! A schema jp cannot use (larger than [`MAX_SCHEMA_BYTES`], nested
//! deeper than [`MAX_SCHEMA_DEPTH`], a `$ref` to another document, or not
//! a schema at all) is [`Unusable`]: the tool is not offered, and the
//! rest of its server is.

pub mod walk;

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use jp_policy::matcher::show;
use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::{Map, Value};

use super::arguments::{ArgumentIssue, check_form_at, check_forms, issue, unknown_member};
use super::imported::{merge_parameters, parameters_from_schema};
use super::{ParamType, ToolConfig, ToolParameterConfig, ToolParameters};

/// The largest schema jp takes for one tool, as compact JSON text.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;

/// The deepest a schema may nest (objects and arrays in its JSON text).
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// The deepest a call's arguments may nest when they are checked: the
/// limit the incremental parser holds streamed arguments to.
pub const MAX_ARGUMENT_DEPTH: usize = 128;

/// The last array position a value streamed into is checked at on its
/// own ([`check_value_at`], which puts it there after `null`s): beyond it,
/// only its form is checked until the arguments are whole.
const MAX_PADDED_INDEX: usize = 64;

/// The most validation failures said for one call.
const MAX_ISSUES: usize = 10;

/// Why a tool's schema cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    /// Larger than [`MAX_SCHEMA_BYTES`].
    #[error("its schema is {bytes} bytes, more than the {MAX_SCHEMA_BYTES} jp takes")]
    TooLarge {
        /// The schema's size as compact JSON.
        bytes: usize,
    },
    /// Nested deeper than [`MAX_SCHEMA_DEPTH`].
    #[error("its schema nests deeper than {MAX_SCHEMA_DEPTH} levels")]
    TooDeep,
    /// A `$ref` to another document, which jp does not fetch.
    #[error("its schema refers to another document ({0}), which jp does not fetch")]
    Remote(String),
    /// Not an object schema, or refused by the validator (a bad
    /// `pattern`, an unknown `$schema`).
    #[error("{0}")]
    Invalid(String),
}

/// The validators built so far, by schema text: a tool's schema is
/// compiled once per process, not once per call. Emptied past
/// [`MAX_VALIDATORS`] (a process sees a few hundred tools at most; a
/// server that changed its schemas on every start could grow it).
type Compiled = Result<Arc<Validator>, Unusable>;
static VALIDATORS: LazyLock<Mutex<HashMap<String, Compiled>>> = LazyLock::new(Mutex::default);

/// The most validators [`VALIDATORS`] keeps.
const MAX_VALIDATORS: usize = 4096;

/// The validator for `schema`, built once.
///
/// # Errors
///
/// Why the schema cannot be used.
pub fn validator(schema: &Value) -> Compiled {
    let text = schema.to_string();
    if text.len() > MAX_SCHEMA_BYTES {
        return Err(Unusable::TooLarge { bytes: text.len() });
    }
    if let Some(found) = VALIDATORS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&text)
    {
        return found.clone();
    }
    let built = build(schema);
    let mut kept = VALIDATORS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if kept.len() >= MAX_VALIDATORS {
        kept.clear();
    }
    kept.insert(text, built.clone());
    built
}

fn build(schema: &Value) -> Compiled {
    if depth(schema) > MAX_SCHEMA_DEPTH {
        return Err(Unusable::TooDeep);
    }
    jsonschema::options()
        // A `$ref` to another document is never fetched: what a call is
        // checked against is what the server sent, nothing a URL serves.
        .offline()
        .should_validate_formats(true)
        // A `pattern` is a regular expression from the server: bounded.
        .with_pattern_options(
            jsonschema::PatternOptions::fancy_regex()
                .backtrack_limit(100_000)
                .size_limit(1 << 20),
        )
        .build(schema)
        .map(Arc::new)
        .map_err(|error| match remote_ref(schema) {
            Some(uri) => Unusable::Remote(uri.to_owned()),
            None => Unusable::Invalid(format!("its schema cannot be used: {error}")),
        })
}

/// The first `$ref` in `schema` that is not to a place in the same
/// document (`#...`).
fn remote_ref(schema: &Value) -> Option<&str> {
    let remote = |map: &Map<String, Value>| {
        map.get("$ref")
            .and_then(Value::as_str)
            .is_some_and(|reference| !reference.starts_with('#'))
    };
    walk::find(schema, 0, &remote)?.get("$ref")?.as_str()
}

/// How deep `value` nests, counted without recursion.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1)];
    while let Some((value, level)) = stack.pop() {
        deepest = deepest.max(level);
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, level + 1))),
            Value::Object(members) => stack.extend(members.values().map(|v| (v, level + 1))),
            _ => {}
        }
    }
    deepest
}

/// Makes `schema` the tool's: checks that jp can use it, derives the
/// parameters jp's policies read from it, lays the config's parameters
/// (`tool.parameters`, its annotations) over both, and keeps the result
/// in `tool.parameters_schema`, the schema the model is sent and every
/// call is checked against.
///
/// # Errors
///
/// Why the schema cannot be used ([`AdoptError::Unusable`]: the tool is
/// not offered), or a parameter the config names that the schema lacks
/// ([`AdoptError::Config`]: a mistake in the config).
pub fn adopt(tool: &mut ToolConfig, schema: &Value) -> Result<(), AdoptError> {
    // One validator, of the schema as it will be used: building it is
    // most of the cost of a tool's import. What cannot be used is said
    // before what the config gets wrong: such a tool is left out anyway.
    let bytes = schema.to_string().len();
    if bytes > MAX_SCHEMA_BYTES {
        return Err(AdoptError::Unusable(Unusable::TooLarge { bytes }));
    }
    if depth(schema) > MAX_SCHEMA_DEPTH {
        return Err(AdoptError::Unusable(Unusable::TooDeep));
    }
    let view =
        parameters_from_schema(schema).map_err(|e| AdoptError::Unusable(Unusable::Invalid(e)))?;
    let mut effective = schema.clone();
    let unplaced = annotate(&mut effective, &tool.parameters, "");
    close(&mut effective);
    validator(&effective).map_err(AdoptError::Unusable)?;
    let merged = merge_parameters(view, &tool.parameters).map_err(AdoptError::Config)?;
    if let Some(at) = unplaced.first() {
        return Err(AdoptError::Config(format!(
            "gives {at} an `enum`, but the tool's schema describes it through a `$ref` or a \
             combination, where jp cannot add one; leave the `enum` out (the schema's own \
             constraints still apply)"
        )));
    }
    tool.parameters = merged;
    tool.parameters_schema = Some(effective);
    Ok(())
}

/// Adopts the schema of every local tool that gives one
/// (`parameters_schema`), as the config is built: from then on its
/// `parameters` are the schema's, with what the config adds. A tool
/// whose schema fails is left as written; validation says why
/// ([`crate::validate`]).
pub fn adopt_local(tools: &mut indexmap::IndexMap<String, ToolConfig>) {
    for tool in tools.values_mut() {
        if tool.source != super::ToolSource::Local {
            continue;
        }
        if let Some(schema) = tool.parameters_schema.clone() {
            let mut adopted = tool.clone();
            if adopt(&mut adopted, &schema).is_ok() {
                *tool = adopted;
            }
        }
    }
}

/// Whether jp can use `schema` for a tool's arguments: the parameters
/// jp's policies read from it if so.
///
/// # Errors
///
/// Why it cannot.
pub fn usable(schema: &Value) -> Result<ToolParameters, Unusable> {
    validator(schema)?;
    parameters_from_schema(schema).map_err(Unusable::Invalid)
}

/// Why [`adopt`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdoptError {
    /// The schema cannot be used.
    #[error(transparent)]
    Unusable(Unusable),
    /// The config names a parameter the schema lacks.
    #[error("{0}")]
    Config(String),
}

/// Writes what the config says of each parameter into the schema node
/// that describes it: the summary and description (as `description`),
/// `enum` (narrowing, in an `allOf` beside the schema's), `default`, and
/// `required`; into members and elements the same way. A node that is a
/// `$ref` is wrapped in an `allOf` too, since a draft-07 validator
/// ignores a `$ref`'s siblings.
///
/// Returns the JSON pointers of the `enum`s it could not place: a member
/// the schema describes only through a `$ref` or a combination. The
/// summary and type of such a member still apply (they are jp's and the
/// model's), but a constraint jp would not enforce is an error.
fn annotate(node: &mut Value, config: &ToolParameters, at: &str) -> Vec<String> {
    let mut unplaced = Vec::new();
    let Some(object) = node.as_object_mut() else {
        return unplaced;
    };
    for (name, added) in config {
        let here = format!("{at}{}", jp_policy::pointer::encode(&[name]));
        if added.required {
            let required = object
                .entry("required")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Some(list) = required.as_array_mut()
                && !list.iter().any(|n| n == name)
            {
                list.push(name.as_str().into());
            }
        }
        match object
            .get_mut("properties")
            .and_then(|p| p.get_mut(name.as_str()))
        {
            Some(target) => unplaced.extend(annotate_one(target, added, &here)),
            None => unplaced.extend(enums(added, &here)),
        }
    }
    unplaced
}

fn annotate_one(target: &mut Value, added: &ToolParameterConfig, at: &str) -> Vec<String> {
    // Members and elements first, where the schema has them.
    let mut unplaced = annotate(target, &added.properties, at);
    if let Some(items) = added.items.as_deref() {
        let at = format!("{at}/items");
        match target.get_mut("items") {
            Some(node) if node.is_object() => unplaced.extend(annotate_one(node, items, &at)),
            _ => unplaced.extend(enums(items, &at)),
        }
    }
    let mut keys = Map::new();
    let text = match (&added.summary, &added.description) {
        (Some(s), Some(d)) => Some(format!("{s}\n\n{d}")),
        (Some(one), None) | (None, Some(one)) => Some(one.clone()),
        (None, None) => None,
    };
    if let Some(text) = text {
        keys.insert("description".into(), text.into());
    }
    if let Some(values) = &added.enumeration {
        keys.insert("enum".into(), values.clone().into());
    }
    if let Some(default) = &added.default {
        keys.insert("default".into(), default.clone());
    }
    if keys.is_empty() {
        return unplaced;
    }
    if target.get("$ref").is_some() || keys.contains_key("enum") {
        let inner = std::mem::take(target);
        *target = serde_json::json!({ "allOf": [inner] });
    }
    if let Some(object) = target.as_object_mut() {
        object.extend(keys);
    }
    unplaced
}

/// The pointers of the `enum`s in `added` and beneath it.
fn enums(added: &ToolParameterConfig, at: &str) -> Vec<String> {
    let mut found = Vec::new();
    if added.enumeration.is_some() {
        found.push(at.to_owned());
    }
    for (name, member) in &added.properties {
        let here = format!("{at}{}", jp_policy::pointer::encode(&[name]));
        found.extend(enums(member, &here));
    }
    if let Some(items) = added.items.as_deref() {
        found.extend(enums(items, &format!("{at}/items")));
    }
    found
}

/// An object schema that lists its members and says nothing of others
/// gets `additionalProperties: false`, as jp's own tools have: a call
/// cannot pass a policy on `path` by naming the file `file` instead. The
/// root and the plain objects beneath it (members' and elements' schemas)
/// are closed. A node that says what other members may be
/// (`additionalProperties`, `patternProperties`, `unevaluatedProperties`)
/// or whose members may come from elsewhere (a `$ref`, `allOf`, `anyOf`,
/// `oneOf`, `if`, `dependentSchemas`, `dependencies`) is left as it is,
/// and so is what is beneath it: closing a part of a combination would
/// refuse what another part allows.
fn close(schema: &mut Value) {
    const OPEN: &[&str] = &[
        "additionalProperties",
        "patternProperties",
        "unevaluatedProperties",
        "$ref",
        "allOf",
        "anyOf",
        "oneOf",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "dependencies",
    ];
    let mut stack = vec![(schema, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        let Some(object) = node.as_object_mut() else {
            continue;
        };
        if OPEN.iter().any(|k| object.contains_key(*k)) || depth > MAX_SCHEMA_DEPTH {
            continue;
        }
        if object.contains_key("properties") {
            object.insert("additionalProperties".into(), false.into());
        }
        for (key, child) in object.iter_mut() {
            match (key.as_str(), child) {
                ("properties", Value::Object(members)) => {
                    stack.extend(members.values_mut().map(|m| (m, depth + 1)));
                }
                ("items", items @ Value::Object(_)) => stack.push((items, depth + 1)),
                _ => {}
            }
        }
    }
}

/// Checks `args` against the tool's whole schema, then against what jp
/// asks beyond it ([`check_forms`]: a path holds no NUL, an integer is an
/// integer literal).
///
/// # Errors
///
/// Each failure with the JSON pointer of the value, in words a model can
/// act on; at most [`MAX_ISSUES`] of the validator's.
pub fn check(
    schema: &Value,
    view: &ToolParameters,
    args: &Value,
) -> Result<(), Vec<ArgumentIssue>> {
    if depth(args) > MAX_ARGUMENT_DEPTH {
        return Err(vec![ArgumentIssue {
            pointer: String::new(),
            message: format!("nested deeper than {MAX_ARGUMENT_DEPTH} levels"),
        }]);
    }
    let validator = validator(schema).map_err(|e| {
        vec![ArgumentIssue {
            pointer: String::new(),
            message: e.to_string(),
        }]
    })?;
    let mut issues: Vec<ArgumentIssue> = validator
        .iter_errors(args)
        .flat_map(|error| said(&error, view))
        .take(MAX_ISSUES)
        .collect();
    add_new_places(&mut issues, check_forms(view, args));
    if issues.is_empty() {
        Ok(())
    } else {
        Err(issues)
    }
}

/// Checks one value that is complete while the rest of the arguments
/// still stream (`at` is where it stands): the failures the schema's
/// validator finds at exactly that place, in arguments holding that value
/// alone, then its form under `param` ([`check_form_at`]). A constraint
/// there cannot depend on what has not arrived unless the schema makes it
/// conditional (`if`, `dependentSchemas`, `dependencies`), so for such a
/// schema only the form is checked; failures of a union (`anyOf`,
/// `oneOf`) are said where the union is, not here, and wait for the whole
/// arguments too.
#[must_use]
pub fn check_value_at(
    schema: &Value,
    param: &ToolParameterConfig,
    value: &Value,
    at: Vec<String>,
) -> Vec<ArgumentIssue> {
    let pointer = jp_policy::pointer::encode(&at);
    let mut issues = Vec::new();
    if !conditional(schema)
        && let Ok(validator) = validator(schema)
    {
        let alone = at.iter().rev().fold(value.clone(), |inner, token| {
            match token.parse::<usize>() {
                // Elements before it are `null`: their failures are at
                // other places, and dropped.
                Ok(index) if index < MAX_PADDED_INDEX => {
                    let mut elements = vec![Value::Null; index];
                    elements.push(inner);
                    Value::Array(elements)
                }
                _ => {
                    let mut members = Map::new();
                    members.insert(token.clone(), inner);
                    Value::Object(members)
                }
            }
        });
        issues.extend(
            validator
                .iter_errors(&alone)
                .filter(|error| error.instance_path().as_str() == pointer)
                .take(MAX_ISSUES)
                .flat_map(|error| said(&error, &ToolParameters::new())),
        );
    }
    add_new_places(&mut issues, check_form_at(param, value, at));
    issues
}

/// Adds jp's form issues where the validator said nothing already: one
/// reason a value is refused is enough.
fn add_new_places(issues: &mut Vec<ArgumentIssue>, forms: Vec<ArgumentIssue>) {
    for issue in forms {
        if !issues.iter().any(|i| i.pointer == issue.pointer) {
            issues.push(issue);
        }
    }
}

/// Whether `schema` makes a value's constraints depend on other values.
fn conditional(schema: &Value) -> bool {
    let depends = |map: &Map<String, Value>| {
        ["if", "dependentSchemas", "dependencies"]
            .iter()
            .any(|k| map.contains_key(*k))
    };
    walk::find(schema, 0, &depends).is_some()
}

/// One failure of the validator as jp says it: an unknown or missing
/// member at its own pointer, in the words jp uses for every tool (with
/// the names expected there), and anything else in the validator's words.
fn said(error: &ValidationError<'_>, view: &ToolParameters) -> Vec<ArgumentIssue> {
    let mut at: Vec<String> = decode(error.instance_path().as_str());
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let message = unknown_member(members_at(view, &at).unwrap_or(&ToolParameters::new()));
            unexpected
                .iter()
                .map(|name| {
                    at.push(name.clone());
                    let said = issue(&at, message.clone());
                    at.pop();
                    said
                })
                .collect()
        }
        // As jp says it for every tool: the values the model may use.
        ValidationErrorKind::Enum { options } if options.is_array() => {
            let allowed = options.as_array().map(Vec::as_slice).unwrap_or_default();
            let list = jp_policy::listing::cut_list(allowed.iter().map(show));
            vec![ArgumentIssue {
                pointer: error.instance_path().to_string(),
                message: format!("expected one of {list}, found {}", show(error.instance())),
            }]
        }
        ValidationErrorKind::Required { property } if property.is_string() => {
            at.push(property.as_str().unwrap_or_default().to_owned());
            vec![issue(&at, "missing required parameter".to_owned())]
        }
        _ => vec![ArgumentIssue {
            pointer: error.instance_path().to_string(),
            message: words(error, 0),
        }],
    }
}

/// A JSON pointer's tokens, decoded.
fn decode(pointer: &str) -> Vec<String> {
    pointer
        .split('/')
        .skip(1)
        .map(|token| token.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// The members the view knows for the object at `at` in the arguments.
fn members_at<'v>(view: &'v ToolParameters, at: &[String]) -> Option<&'v ToolParameters> {
    let mut members = view;
    let mut param: Option<&ToolParameterConfig> = None;
    for token in at {
        param = match param {
            Some(p) if p.kind == ParamType::Array => p.items.as_deref(),
            _ => Some(members.get(token)?),
        };
        if let Some(p) = param
            && p.kind == ParamType::Object
        {
            members = &p.properties;
        }
    }
    Some(members)
}

/// The validator's reason, with the value shown short (a long string is
/// cut), and for `anyOf`/`oneOf` why each alternative failed (two levels
/// down at most).
fn words(error: &ValidationError<'_>, level: usize) -> String {
    let shown = show(error.instance());
    let mut text = error.masked_with(shown.as_str()).to_string();
    if level >= 2 {
        return text;
    }
    let branches = match error.kind() {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            Some(context)
        }
        _ => None,
    };
    if let Some(branches) = branches {
        let reasons: Vec<String> = branches
            .iter()
            .enumerate()
            .filter_map(|(i, errors)| {
                let first = errors.first()?;
                Some(format!("{}: {}", i + 1, words(first, level + 1)))
            })
            .take(MAX_ISSUES)
            .collect();
        if !reasons.is_empty() {
            text = format!("{text} ({})", reasons.join("; "));
        }
    }
    text
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
