//! A draft-07 (or older) schema said in JSON Schema 2020-12.
//!
//! Anthropic reads 2020-12, and servers still send draft-07 (zod's
//! converter, pydantic v1). What changed meaning is rewritten, without
//! loss: a `$schema` of another draft is dropped; `definitions` becomes
//! `$defs` (when the node has no `$defs` of its own) and every local `$ref`
//! into it follows; array-form `items` becomes `prefixItems` and
//! `additionalItems` becomes `items`; `dependencies` splits into
//! `dependentRequired` and `dependentSchemas`; a draft-04 boolean
//! `exclusiveMinimum`/`exclusiveMaximum` takes the bound's value. A 2020-12
//! schema comes out as it went in.

use serde_json::{Map, Value};

use jp_config::tool::schema::walk::{MAX_DEPTH, is_legacy_draft, subschemas_mut, unescape};

/// `schema` in 2020-12 (see the module's documentation).
pub(super) fn to_2020_12(schema: &Value) -> Value {
    let mut out = schema.clone();
    let mut renamed = Vec::new();
    let legacy = is_legacy_draft(schema);
    let mut walk = Walk {
        legacy,
        renamed: &mut renamed,
    };
    walk.convert(&mut out, &mut Vec::new(), 0);
    if !renamed.is_empty() {
        follow_renames(&mut out, &renamed, 0);
    }
    out
}

/// The keywords a draft-07 validator reads beside a `$ref`, which ignores
/// every other (2020-12 applies them all, so they are dropped).
const BESIDE_REF: &[&str] = &[
    "$ref",
    "definitions",
    "$defs",
    "title",
    "description",
    "default",
    "examples",
    "$comment",
];

/// The conversion's state: whether the schema declares draft-07 or older,
/// and the paths of the nodes whose `definitions` became `$defs`.
struct Walk<'a> {
    legacy: bool,
    renamed: &'a mut Vec<Vec<String>>,
}

impl Walk<'_> {
    /// Converts `node` (at `path` from the root) and its subschemas.
    fn convert(&mut self, node: &mut Value, path: &mut Vec<String>, depth: usize) {
        let Value::Object(map) = node else {
            return;
        };
        if depth >= MAX_DEPTH {
            map.clear();
            return;
        }
        if self.legacy && map.contains_key("$ref") {
            map.retain(|key, _| BESIDE_REF.contains(&key.as_str()));
        }
        convert_keywords(map, path, self.renamed);
        for (segments, child) in subschemas_mut(map) {
            let len = path.len();
            path.extend(segments);
            self.convert(child, path, depth + 1);
            path.truncate(len);
        }
    }
}

/// Converts the keywords of one node (at `path`), noting in `renamed` its
/// path when its `definitions` became `$defs`.
fn convert_keywords(map: &mut Map<String, Value>, path: &[String], renamed: &mut Vec<Vec<String>>) {
    if map
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|uri| !uri.contains("2020-12"))
    {
        map.shift_remove("$schema");
    }
    if map.contains_key("definitions") && !map.contains_key("$defs") {
        rename(map, "definitions", "$defs");
        renamed.push(path.to_vec());
    }
    if map.get("items").is_some_and(Value::is_array) {
        rename(map, "items", "prefixItems");
        rename(map, "additionalItems", "items");
    } else {
        map.shift_remove("additionalItems");
    }
    if map.get("dependencies").is_some_and(Value::is_object)
        && !map.contains_key("dependentRequired")
        && !map.contains_key("dependentSchemas")
    {
        split_dependencies(map);
    }
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(Value::Bool(on)) = map.get(exclusive) {
            match map.get(bound).cloned() {
                Some(limit) if *on => {
                    map.insert(exclusive.to_owned(), limit);
                    map.shift_remove(bound);
                }
                _ => {
                    map.shift_remove(exclusive);
                }
            }
        }
    }
}

/// Renames the key `from` of `map` to `to` where it stands, keeping the
/// order of the others (a reordered schema would not be byte-identical).
fn rename(map: &mut Map<String, Value>, from: &str, to: &str) {
    if !map.contains_key(from) {
        return;
    }
    let old = std::mem::take(map);
    for (key, value) in old {
        if key == from {
            map.insert(to.to_owned(), value);
        } else {
            map.insert(key, value);
        }
    }
}

/// Draft-07's `dependencies` as 2020-12's two keywords, where it stood: a
/// list of names to `dependentRequired`, a schema to `dependentSchemas`.
fn split_dependencies(map: &mut Map<String, Value>) {
    let old = std::mem::take(map);
    for (key, value) in old {
        if key != "dependencies" {
            map.insert(key, value);
            continue;
        }
        let Value::Object(dependencies) = value else {
            continue;
        };
        let mut required = Map::new();
        let mut schemas = Map::new();
        for (name, dependency) in dependencies {
            if dependency.is_array() {
                required.insert(name, dependency);
            } else {
                schemas.insert(name, dependency);
            }
        }
        if !required.is_empty() {
            map.insert("dependentRequired".into(), required.into());
        }
        if !schemas.is_empty() {
            map.insert("dependentSchemas".into(), schemas.into());
        }
    }
}

/// Points every local `$ref` under `node` that went through a renamed
/// `definitions` at the `$defs` it became.
fn follow_renames(node: &mut Value, renamed: &[Vec<String>], depth: usize) {
    let Value::Object(map) = node else {
        return;
    };
    if let Some(Value::String(reference)) = map.get_mut("$ref")
        && let Some(rewritten) = renamed_ref(reference, renamed)
    {
        *reference = rewritten;
    }
    if depth >= MAX_DEPTH {
        return;
    }
    for (_, child) in subschemas_mut(map) {
        follow_renames(child, renamed, depth + 1);
    }
}

/// `reference` with each `definitions` segment that names a renamed
/// container replaced by `$defs`; `None` when none does.
fn renamed_ref(reference: &str, renamed: &[Vec<String>]) -> Option<String> {
    let pointer = reference.strip_prefix("#/")?;
    let mut raw: Vec<String> = pointer.split('/').map(str::to_owned).collect();
    let mut decoded: Vec<String> = Vec::with_capacity(raw.len());
    let mut changed = false;
    for raw_segment in &mut raw {
        let segment = unescape(raw_segment)?;
        if segment == "definitions" && renamed.contains(&decoded) {
            "$defs".clone_into(raw_segment);
            decoded.push("$defs".to_owned());
            changed = true;
        } else {
            decoded.push(segment);
        }
    }
    changed.then(|| format!("#/{}", raw.join("/")))
}
