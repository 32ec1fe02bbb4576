//! A schema without references or `allOf`, for Gemini, whose `Schema` has
//! neither.
//!
//! Each local `$ref` (a JSON pointer such as `#/$defs/Name` or
//! `#/definitions/Name`, a `$anchor`, or a subschema's `$id`) is replaced by
//! what it points to, merged with the keywords beside it, as 2020-12 reads
//! them; each `allOf` is merged into its node ([`super::merge`]). A `$ref`
//! that points nowhere is dropped (the node only gets looser).
//!
//! The inlined schema must stay small, whatever a server sends: references
//! nest at most [`MAX_REFS`] deep, one definition is expanded at most
//! [`MAX_RECURSION`] times on one path (a tree node describes its children
//! and grandchildren), and at most [`BUDGET`] values are written. Past any
//! of these the reference is cut: it becomes a node of the definition's
//! `type` alone, with a description that says so. That is the loosest node
//! that keeps a type (Gemini has no "any value" type, and has been seen to
//! refuse nodes without one): it accepts every value the definition did.
//! A definition without a `type` is cut to an untyped node, as a `{}` in the
//! original is passed on today.
//!
//! A tuple (`prefixItems`) becomes `items` that may be any of its schemas,
//! and of its `items` for the rest; without them the elements past the tuple
//! are described as one of the tuple's (narrower: Gemini needs typed items).
//!
//! Boolean schemas have no Gemini form either: `true` becomes `{}`, and a
//! property whose schema is `false` (it must be absent) is left out. Only
//! `additionalProperties: false` stays, for the root's union to read.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::merge::merge_all;
use jp_config::tool::schema::walk::{Holds, MAX_DEPTH, holds, resolve, weight};

/// How many references may nest on one path.
const MAX_REFS: usize = 16;

/// How many times one definition may be expanded on one path.
const MAX_RECURSION: usize = 2;

/// How many JSON values the inlined schema may hold (schema nodes, and
/// the `enum`s and `default`s they carry): a few megabytes at most, and
/// far more than any published tool's schema needs.
const BUDGET: usize = 100_000;

/// The keywords that only serve references, gone once they are inlined.
const REFERENCE_KEYWORDS: &[&str] = &[
    "$ref",
    "$defs",
    "definitions",
    "$id",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$schema",
    "$comment",
];

/// `schema` with its references inlined and its `allOf`s merged.
pub(super) fn inline(schema: &Value) -> Value {
    let mut inliner = Inliner {
        root: schema,
        stack: Vec::new(),
        budget: BUDGET,
        resolved: HashMap::new(),
    };
    Value::Object(inliner.node(schema, 0))
}

/// The walk's state: the document references resolve in, the references
/// being expanded on the current path, the values left to write, and what
/// each reference met so far points to (finding an `$anchor` or `$id` is a
/// walk of the whole document).
struct Inliner<'a> {
    root: &'a Value,
    stack: Vec<String>,
    budget: usize,
    resolved: HashMap<String, Option<&'a Value>>,
}

impl<'a> Inliner<'a> {
    /// `node` inlined; `depth` is how many schemas deep it is.
    fn node(&mut self, node: &Value, depth: usize) -> Map<String, Value> {
        let Value::Object(map) = node else {
            return Map::new();
        };
        if depth >= MAX_DEPTH || self.budget == 0 {
            return cut(node);
        }
        self.budget -= 1;
        let mut out = Map::new();
        for (key, value) in map {
            if REFERENCE_KEYWORDS.contains(&key.as_str()) {
                continue;
            }
            let inlined = match holds(key, value) {
                // Kept for the root's union, which reads which shapes allow
                // no other property; `google::schema` drops it after.
                Some(Holds::One)
                    if key == "additionalProperties" && value == &Value::Bool(false) =>
                {
                    value.clone()
                }
                Some(Holds::One) => Value::Object(self.node(value, depth + 1)),
                Some(Holds::List) => value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|item| Value::Object(self.node(item, depth + 1)))
                    .collect::<Vec<_>>()
                    .into(),
                Some(Holds::Map) => self.map(key, value, depth),
                None => {
                    self.budget = self.budget.saturating_sub(weight(value, self.budget));
                    value.clone()
                }
            };
            out.insert(key.clone(), inlined);
        }
        if let Some(Value::Array(prefix)) = out.shift_remove("prefixItems") {
            let rest = out
                .shift_remove("items")
                .filter(|_| map.get("items") != Some(&Value::Bool(false)));
            out.insert("items".into(), tuple_items(prefix, rest));
        }
        let mut parts = Vec::new();
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            parts.push(self.reference(reference, depth));
        }
        if let Some(Value::Array(branches)) = out.shift_remove("allOf") {
            parts.extend(branches.into_iter().filter_map(|b| match b {
                Value::Object(branch) => Some(branch),
                _ => None,
            }));
        }
        if parts.is_empty() {
            return out;
        }
        parts.insert(0, out);
        merge_all(parts, true, depth)
    }

    /// A keyword's map of schemas, inlined; a `false` property is left out.
    fn map(&mut self, key: &str, value: &Value, depth: usize) -> Value {
        let Some(entries) = value.as_object() else {
            return value.clone();
        };
        let mut out = Map::new();
        for (name, schema) in entries {
            match schema {
                Value::Bool(false) if key == "properties" => {}
                Value::Object(_) | Value::Bool(_) => {
                    out.insert(name.clone(), Value::Object(self.node(schema, depth + 1)));
                }
                other => {
                    out.insert(name.clone(), other.clone());
                }
            }
        }
        Value::Object(out)
    }

    /// What `reference` points to, inlined, or cut (see the module's
    /// documentation); nothing when it points nowhere.
    fn reference(&mut self, reference: &str, depth: usize) -> Map<String, Value> {
        let root = self.root;
        let target = *self
            .resolved
            .entry(reference.to_owned())
            .or_insert_with(|| resolve(root, reference));
        let Some(target) = target else {
            return Map::new();
        };
        let expansions = self.stack.iter().filter(|r| *r == reference).count();
        if self.stack.len() >= MAX_REFS || expansions >= MAX_RECURSION || self.budget == 0 {
            return cut(target);
        }
        self.stack.push(reference.to_owned());
        let inlined = self.node(target, depth + 1);
        self.stack.pop();
        inlined
    }
}

/// The `items` of a tuple (`prefixItems`, then `items` for the rest): any
/// of their schemas. Without `items` the elements past the tuple are
/// described as one of its own, which Gemini needs typed.
fn tuple_items(prefix: Vec<Value>, rest: Option<Value>) -> Value {
    let mut variants: Vec<Value> = Vec::new();
    for schema in prefix.into_iter().chain(rest) {
        if !variants.contains(&schema) {
            variants.push(schema);
        }
    }
    match variants.len() {
        0 => Value::Object(Map::new()),
        1 => variants.pop().unwrap_or_default(),
        _ => serde_json::json!({"anyOf": variants}),
    }
}

/// A node that accepts whatever `target` accepts and says no more than its
/// type.
fn cut(target: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(kind) = target.get("type").filter(|t| t.is_string() || t.is_array()) {
        out.insert("type".into(), kind.clone());
    }
    out.insert(
        "description".into(),
        "Not described further: its schema nests too deeply.".into(),
    );
    out
}
