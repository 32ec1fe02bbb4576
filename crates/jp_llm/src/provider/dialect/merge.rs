//! Schemas merged into one node: the branches of an `allOf`, and the root's
//! combinators into the one `type: object` every provider wants there.
//!
//! An `allOf` merge keeps the properties of every branch (a name in several
//! gets the `allOf` of its schemas, or, for Gemini, their merge), the union
//! of `required`, the intersection of `type`s and `enum`s, and the tighter
//! of two bounds; that is exact. Where two other values clash, the first is
//! kept: keeping only some of an `allOf`'s constraints can only accept more.
//!
//! A union (`anyOf`, and `oneOf`, whose "only one" cannot be said on one
//! node) keeps every branch's properties too, but a property may then only
//! say what every branch allows for it: the `anyOf` of the branches'
//! schemas, where a branch that does not name it contributes what it allows
//! for an unnamed property (its `additionalProperties`; anything when it has
//! none). A property some branch leaves free keeps only its title and
//! description. `required` is the intersection, and other keywords stay
//! only when every branch has them alike.

use serde_json::{Map, Value, json};

use jp_config::tool::schema::walk::{MAX_DEPTH, resolve, weight};

/// Keywords a provider refuses on the root (or that only make sense with
/// another type), dropped once the root is flattened.
const ROOT_DROPPED: &[&str] = &[
    "anyOf", "oneOf", "allOf", "$ref", "not", "enum", "const", "if", "then", "else",
];

/// How many nested combinators and root `$ref`s are flattened; below that
/// only the node's own keywords are kept.
const MAX_FLATTEN: usize = 8;

/// How many JSON values the flattening may copy: branches that refer to
/// the root again (`$ref: "#"`) would otherwise multiply at each level.
/// Past it a branch counts as any object.
const FLATTEN_BUDGET: usize = 50_000;

/// `schema` with its root one `type: object` node: a root `$ref` and the
/// root's `allOf` merged in, its `anyOf` and `oneOf` as a union, and a
/// root `not`, `enum`, `const` and `if` dropped. With `deep` (Gemini, which
/// has no `allOf`), properties named in several `allOf` branches are merged
/// rather than put in an `allOf`.
pub(super) fn object_root(schema: Value, deep: bool) -> Value {
    if let Value::Object(map) = &schema
        && map.get("type").is_some_and(|t| t == "object")
        && !ROOT_DROPPED.iter().any(|key| map.contains_key(*key))
    {
        return schema;
    }
    let mut budget = FLATTEN_BUDGET;
    let flat = Flattener {
        root: &schema,
        deep,
        budget: &mut budget,
    }
    .flatten(&schema, 0)
    .unwrap_or_default();
    let mut out = Map::new();
    out.insert("type".into(), "object".into());
    for (key, value) in flat {
        if key != "type" {
            out.insert(key, value);
        }
    }
    Value::Object(out)
}

/// The flattening's state: the document `$ref`s resolve in, whether to
/// merge properties deeply (Gemini), and the values left to copy.
struct Flattener<'a, 'b> {
    root: &'a Value,
    deep: bool,
    budget: &'b mut usize,
}

impl Flattener<'_, '_> {
    /// `node` as one object schema without combinators; `None` when it
    /// accepts no object at all (a `false` schema, a type without
    /// `object`), which a union can leave out.
    fn flatten(&mut self, node: &Value, depth: usize) -> Option<Map<String, Value>> {
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(true) => return Some(Map::new()),
            _ => return None,
        };
        if !admits_object(map) {
            return None;
        }
        if *self.budget == 0 {
            return Some(Map::new());
        }
        *self.budget -= 1;
        let own: Map<String, Value> = map
            .iter()
            .filter(|(key, _)| !ROOT_DROPPED.contains(&key.as_str()))
            .map(|(key, value)| {
                *self.budget = self.budget.saturating_sub(1 + weight(value, *self.budget));
                (key.clone(), value.clone())
            })
            .collect();
        if depth >= MAX_FLATTEN {
            return Some(own);
        }
        let mut parts = vec![own];
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| resolve(self.root, reference))
            && let Some(part) = self.flatten(target, depth + 1)
        {
            parts.push(part);
        }
        for branch in map
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(part) = self.flatten(branch, depth + 1) {
                parts.push(part);
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = map.get(key).and_then(Value::as_array) {
                let flats: Vec<_> = branches
                    .iter()
                    .filter_map(|branch| self.flatten(branch, depth + 1))
                    .collect();
                if !flats.is_empty() {
                    parts.push(union(flats));
                }
            }
        }
        Some(merge_all(parts, self.deep, depth))
    }
}

/// Whether a node's `type` lets an object through.
fn admits_object(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        _ => true,
    }
}

/// The `allOf` of `parts` as one node (see the module's documentation).
pub(super) fn merge_all(
    parts: Vec<Map<String, Value>>,
    deep: bool,
    depth: usize,
) -> Map<String, Value> {
    let mut parts = parts.into_iter();
    let mut out = parts.next().unwrap_or_default();
    for part in parts {
        for (key, value) in part {
            merge_key(&mut out, key, value, deep, depth);
        }
    }
    out
}

/// Adds `key: value` of another `allOf` branch to `out`.
fn merge_key(out: &mut Map<String, Value>, key: String, value: Value, deep: bool, depth: usize) {
    let Some(existing) = out.get_mut(&key) else {
        out.insert(key, value);
        return;
    };
    if *existing == value {
        return;
    }
    match key.as_str() {
        "properties" | "$defs" | "patternProperties" => {
            if let (Value::Object(mine), Value::Object(theirs)) = (existing, value) {
                for (name, schema) in theirs {
                    match mine.get_mut(&name) {
                        None => {
                            mine.insert(name, schema);
                        }
                        Some(_) if key == "$defs" => {}
                        Some(old) => {
                            let taken = std::mem::take(old);
                            *old = both(taken, schema, deep, depth);
                        }
                    }
                }
            }
        }
        "required" => {
            if let (Value::Array(mine), Value::Array(theirs)) = (existing, value) {
                for name in theirs {
                    if !mine.contains(&name) {
                        mine.push(name);
                    }
                }
            }
        }
        "type" => match common_types(existing, &value) {
            Some(kinds) => *existing = kinds,
            None => {
                out.shift_remove("type");
            }
        },
        "enum" => {
            if let (Value::Array(mine), Value::Array(theirs)) = (&mut *existing, &value) {
                mine.retain(|item| theirs.contains(item));
                if mine.is_empty() {
                    out.shift_remove("enum");
                }
            }
        }
        "items"
        | "additionalProperties"
        | "propertyNames"
        | "unevaluatedProperties"
        | "unevaluatedItems" => {
            let old = std::mem::take(existing);
            *existing = both(old, value, deep, depth);
        }
        "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties"
        | "minContains" => tighter(existing, &value, true),
        "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties"
        | "maxContains" => tighter(existing, &value, false),
        _ => {}
    }
}

/// The `allOf` of two schemas: one node for Gemini (`deep`), an `allOf`
/// otherwise; `true` adds nothing and `false` wins.
fn both(first: Value, second: Value, deep: bool, depth: usize) -> Value {
    match (first, second) {
        (Value::Bool(true), other) | (other, Value::Bool(true)) => other,
        (Value::Bool(false), _) | (_, Value::Bool(false)) => Value::Bool(false),
        (Value::Object(a), Value::Object(b)) if deep && depth < MAX_DEPTH => {
            Value::Object(merge_all(vec![a, b], deep, depth + 1))
        }
        (Value::Object(a), _) if deep => Value::Object(a),
        (a, b) => json!({"allOf": [a, b]}),
    }
}

/// The types both `a` and `b` allow (an `integer` is a `number`), as one
/// type or a list; `None` when they share none, which drops the keyword
/// rather than refuse everything.
fn common_types(a: &Value, b: &Value) -> Option<Value> {
    let list = |kinds: &Value| -> Vec<String> {
        match kinds {
            Value::String(kind) => vec![kind.clone()],
            Value::Array(kinds) => kinds
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        }
    };
    let (a, b) = (list(a), list(b));
    let allows = |kinds: &[String], kind: &str| {
        kinds.iter().any(|k| k == kind)
            || (kind == "integer" && kinds.iter().any(|k| k == "number"))
    };
    let mut common: Vec<String> = a.iter().filter(|k| allows(&b, k)).cloned().collect();
    for kind in &b {
        if allows(&a, kind) && !common.contains(kind) {
            common.push(kind.clone());
        }
    }
    if common.iter().any(|k| k == "integer") && common.iter().any(|k| k == "number") {
        common.retain(|k| k != "integer");
    }
    match common.len() {
        0 => None,
        1 => common.pop().map(Value::from),
        _ => Some(common.into()),
    }
}

/// Keeps in `existing` the tighter of two numeric bounds (the larger
/// minimum, the smaller maximum), which is what both together mean.
fn tighter(existing: &mut Value, other: &Value, minimum: bool) {
    if let (Some(mine), Some(theirs)) = (existing.as_f64(), other.as_f64())
        && ((minimum && theirs > mine) || (!minimum && theirs < mine))
    {
        *existing = other.clone();
    }
}

/// Keywords the union sets itself, or drops since they depend on which
/// branch matched.
const UNION_OWN: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "unevaluatedProperties",
    "type",
];

/// The `anyOf` of object schemas `flats` as one (see the module's
/// documentation).
fn union(mut flats: Vec<Map<String, Value>>) -> Map<String, Value> {
    if flats.len() == 1 {
        return flats.pop().unwrap_or_default();
    }
    let mut out = Map::new();
    for (key, value) in &flats[0] {
        if !UNION_OWN.contains(&key.as_str())
            && flats[1..].iter().all(|f| f.get(key) == Some(value))
        {
            out.insert(key.clone(), value.clone());
        }
    }
    let mut names: Vec<&String> = Vec::new();
    for flat in &flats {
        for name in flat
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(Map::keys)
        {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    let properties: Map<String, Value> = names
        .into_iter()
        .map(|name| {
            let allowed: Vec<Option<Value>> = flats.iter().map(|f| allowed_for(f, name)).collect();
            (name.clone(), any_of(allowed))
        })
        .collect();
    if !properties.is_empty() {
        out.insert("properties".into(), properties.into());
    }
    let required: Vec<Value> = flats[0]
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|name| {
            flats[1..].iter().all(|f| {
                f.get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.contains(name))
            })
        })
        .cloned()
        .collect();
    if !required.is_empty() {
        out.insert("required".into(), required.into());
    }
    let additional: Vec<Option<Value>> = flats.iter().map(unnamed).collect();
    if additional.iter().all(Option::is_some) {
        out.insert("additionalProperties".into(), any_of(additional));
    }
    out
}

/// What `flat` allows for its property `name`; `None` for anything.
fn allowed_for(flat: &Map<String, Value>, name: &str) -> Option<Value> {
    match flat.get("properties").and_then(|p| p.get(name)) {
        Some(schema) if is_free(schema) => None,
        Some(schema) => Some(schema.clone()),
        None => unnamed(flat),
    }
}

/// Whether `schema` allows any value: `true`, or only annotations.
fn is_free(schema: &Value) -> bool {
    match schema {
        Value::Bool(allowed) => *allowed,
        Value::Object(map) => map.keys().all(|key| {
            ["title", "description", "default", "examples", "$comment"].contains(&key.as_str())
        }),
        _ => false,
    }
}

/// What `flat` allows for a property it does not name; `None` for
/// anything (no `additionalProperties`, or a pattern that might match).
fn unnamed(flat: &Map<String, Value>) -> Option<Value> {
    if flat.contains_key("patternProperties") || flat.contains_key("unevaluatedProperties") {
        return None;
    }
    match flat.get("additionalProperties") {
        Some(schema) if !is_free(schema) => Some(schema.clone()),
        _ => None,
    }
}

/// The union of what the branches allow: `false` adds nothing, one free
/// branch frees it (keeping the others' title and description for the
/// model), equal schemas count once.
fn any_of(allowed: Vec<Option<Value>>) -> Value {
    if allowed.iter().any(Option::is_none) {
        let mut notes = Map::new();
        for schema in allowed.iter().flatten() {
            for key in ["title", "description"] {
                if let Some(text) = schema.get(key).filter(|t| t.is_string()) {
                    notes.entry(key).or_insert_with(|| text.clone());
                }
            }
        }
        return Value::Object(notes);
    }
    let mut distinct: Vec<Value> = Vec::new();
    for schema in allowed.into_iter().flatten() {
        if schema != Value::Bool(false) && !distinct.contains(&schema) {
            distinct.push(schema);
        }
    }
    match distinct.len() {
        0 => Value::Bool(false),
        1 => distinct.pop().unwrap_or(Value::Bool(false)),
        _ => json!({"anyOf": distinct}),
    }
}
