//! A tool's JSON Schema as each provider's dialect, converted in one place.
//!
//! A tool's parameters are the schema its MCP server (or its config) gives:
//! draft-07 or 2020-12, with unions, references and every keyword. jp checks
//! each call against that original itself, so what a provider is sent only
//! has to guide the model, and be accepted: it may be looser than the
//! original, but never rejects an argument the original accepts, and loses
//! as little as it can.
//!
//! - [`anthropic`] and [`openai`] (Chat Completions, Responses and Ollama)
//!   take JSON Schema nearly as it is. The schema is brought to 2020-12
//!   ([`draft`]: `definitions` to `$defs`, array `items` to `prefixItems`,
//!   `dependencies` split; exact), and its root made one `type: object`
//!   ([`merge::object_root`]), since both refuse a root `anyOf`, `oneOf`,
//!   `allOf`, `not` or `enum`: a root union keeps every branch's properties
//!   but only what all of them require, and a root `not`, `enum`, `const`
//!   or `if` is dropped. Nested keywords pass untouched. A `$ref` that no
//!   longer points anywhere (into a root branch that is gone, or remote) is
//!   dropped, since a provider would refuse the whole request for it.
//! - [`gemini`] reads an OpenAPI subset without references: `$ref`s are
//!   inlined ([`inline`]; a recursive one is cut after two levels into a
//!   node of its type alone), `allOf`s merged into one node, the root made
//!   an object as above, and the result translated by `google::schema`,
//!   which drops what Gemini cannot say (`not`, `if`, `additionalProperties`,
//!   exclusive bounds, non-string enums, which it puts in the description).
//!
//! A schema that needs no change comes back borrowed, so what jp builds
//! itself is sent byte for byte as before.
//!
//! Loosening is only safe where a schema's meaning grows with its parts:
//! under a `not`, a `oneOf` or an `if`, a looser part can refuse more. Gemini
//! drops `not` and `if` and reads `oneOf` as `anyOf`, so none remain; for
//! Anthropic and OpenAI, nested keywords are untouched but for the rare
//! dangling `$ref` and the depth bound below.
//!
//! The input may come from a hostile server: every walk here is bounded by
//! [`MAX_DEPTH`] nested schemas (a deeper subschema is
//! replaced by `{}`, which accepts anything) and the inlining by a node
//! budget.

mod draft;
mod inline;
mod merge;

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value};

use jp_config::tool::schema::walk::{MAX_DEPTH, resolve, subschemas};

/// The schema Anthropic's `input_schema` takes for `schema`: JSON Schema
/// 2020-12 whose root is one object (see the module's documentation).
#[must_use]
pub(crate) fn anthropic(schema: &Value) -> Cow<'_, Value> {
    let converted = merge::object_root(draft::to_2020_12(schema), false);
    let converted = drop_dangling_refs(converted);
    unchanged_or(schema, converted)
}

/// The schema OpenAI's function tools (Chat Completions, Responses, and
/// Ollama's copy of Chat Completions) take for `schema`, not strict: as for
/// [`anthropic`], and the root always has `properties`.
#[must_use]
pub(crate) fn openai(schema: &Value) -> Cow<'_, Value> {
    let mut converted = merge::object_root(draft::to_2020_12(schema), false);
    if let Value::Object(root) = &mut converted {
        root.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    let converted = drop_dangling_refs(converted);
    unchanged_or(schema, converted)
}

/// The `parameters` of a Gemini function declaration for `schema`, `None`
/// for a tool without properties (see `google::schema`).
#[must_use]
pub(crate) fn gemini(schema: &Value) -> Option<Map<String, Value>> {
    let converted = draft::to_2020_12(schema);
    let inlined = inline::inline(&converted);
    let rooted = merge::object_root(inlined, true);
    super::google::schema::parameters(&rooted)
}

/// `original` when `converted` says the same, so that an unchanged schema
/// is sent exactly as it came.
fn unchanged_or(original: &Value, converted: Value) -> Cow<'_, Value> {
    if *original == converted {
        Cow::Borrowed(original)
    } else {
        Cow::Owned(converted)
    }
}

/// `schema` without the `$ref`s that point nowhere in it: a remote URL, a
/// relative one, or a local pointer into a part the conversion removed
/// (a root `anyOf` branch). The node keeps its other keywords, so it only
/// gets looser, and the provider does not refuse the request over it.
fn drop_dangling_refs(mut schema: Value) -> Value {
    let mut search = Dangling {
        root: &schema,
        resolves: HashMap::new(),
        found: Vec::new(),
    };
    search.walk(&schema, &mut Vec::new(), 0);
    let found = search.found;
    for path in found {
        if let Some(Value::Object(node)) = pointer_mut(&mut schema, &path) {
            node.shift_remove("$ref");
        }
    }
    schema
}

/// The search for dangling `$ref`s: the document they resolve in, whether
/// each reference met so far does (finding an `$anchor` or `$id` walks the
/// whole document), and the paths of the nodes whose `$ref` does not.
struct Dangling<'a> {
    root: &'a Value,
    resolves: HashMap<&'a str, bool>,
    found: Vec<Vec<String>>,
}

impl<'a> Dangling<'a> {
    /// Searches `node`, at `path` from the root.
    fn walk(&mut self, node: &'a Value, path: &mut Vec<String>, depth: usize) {
        let Some(map) = node.as_object() else {
            return;
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let root = self.root;
            let resolves = *self
                .resolves
                .entry(reference)
                .or_insert_with(|| resolve(root, reference).is_some());
            if !resolves {
                self.found.push(path.clone());
            }
        }
        if depth >= MAX_DEPTH {
            return;
        }
        for (segments, child) in subschemas(map) {
            let len = path.len();
            path.extend(segments);
            self.walk(child, path, depth + 1);
            path.truncate(len);
        }
    }
}

/// The value at the (decoded) `path` in `value`.
fn pointer_mut<'a>(value: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    let mut at = value;
    for segment in path {
        at = match at {
            Value::Object(map) => map.get_mut(segment)?,
            Value::Array(list) => list.get_mut(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

#[cfg(test)]
#[path = "dialect_tests.rs"]
mod tests;
