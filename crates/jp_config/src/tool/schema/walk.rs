//! How a JSON Schema is walked: which keywords hold subschemas, where a
//! local `$ref` points, and which draft reads `$ref` alone. Shared by
//! jp's view of a tool's parameters ([`super::super::imported`]), its
//! checks of a schema ([`super`]) and the provider dialects (jp_llm).

use serde_json::{Map, Value};

/// How many schemas deep a walk goes; deeper subschemas become
/// `{}` (any value), which no published server comes near.
pub const MAX_DEPTH: usize = 48;

/// Where a keyword keeps subschemas, as written in 2020-12 or draft-07.
pub enum Holds {
    /// One schema (`not`, `additionalProperties`, `items` as a schema).
    One,
    /// A list of schemas (`anyOf`, `prefixItems`, draft-07 `items`).
    List,
    /// A map of names to schemas (`properties`, `$defs`).
    Map,
}

/// What `key`'s value holds, when it holds schemas at all (an `enum`,
/// `const`, `default` or `examples` never does, whatever it looks like).
pub fn holds(key: &str, value: &Value) -> Option<Holds> {
    match key {
        "items" if value.is_array() => Some(Holds::List),
        "items"
        | "additionalItems"
        | "additionalProperties"
        | "not"
        | "if"
        | "then"
        | "else"
        | "contains"
        | "propertyNames"
        | "unevaluatedItems"
        | "unevaluatedProperties"
        | "contentSchema" => Some(Holds::One),
        "allOf" | "anyOf" | "oneOf" | "prefixItems" => Some(Holds::List),
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
        | "dependencies" => Some(Holds::Map),
        _ => None,
    }
}

/// Whether `value` can be a schema (draft-07 `dependencies` also holds
/// lists of names, which are not).
fn is_schema(value: &Value) -> bool {
    value.is_object() || value.is_boolean()
}

/// The direct subschemas of `node`, each with the pointer segments that
/// lead to it from `node` (`["properties", "name"]`).
pub fn subschemas_mut(node: &mut Map<String, Value>) -> Vec<(Vec<String>, &mut Value)> {
    let mut found = Vec::new();
    for (key, value) in node.iter_mut() {
        match holds(key, value) {
            Some(Holds::One) => found.push((vec![key.clone()], value)),
            Some(Holds::List) => {
                if let Some(list) = value.as_array_mut() {
                    for (index, item) in list.iter_mut().enumerate() {
                        found.push((vec![key.clone(), index.to_string()], item));
                    }
                }
            }
            Some(Holds::Map) => {
                if let Some(map) = value.as_object_mut() {
                    for (name, item) in map.iter_mut() {
                        if is_schema(item) {
                            found.push((vec![key.clone(), name.clone()], item));
                        }
                    }
                }
            }
            None => {}
        }
    }
    found
}

/// The direct subschemas of `node`, as [`subschemas_mut`] finds them.
pub fn subschemas(node: &Map<String, Value>) -> Vec<(Vec<String>, &Value)> {
    let mut found = Vec::new();
    for (key, value) in node {
        match holds(key, value) {
            Some(Holds::One) => found.push((vec![key.clone()], value)),
            Some(Holds::List) => {
                for (index, item) in value.as_array().into_iter().flatten().enumerate() {
                    found.push((vec![key.clone(), index.to_string()], item));
                }
            }
            Some(Holds::Map) => {
                for (name, item) in value.as_object().into_iter().flatten() {
                    if is_schema(item) {
                        found.push((vec![key.clone(), name.clone()], item));
                    }
                }
            }
            None => {}
        }
    }
    found
}

/// The value `reference` (a `$ref`) points to inside `root`: a JSON
/// pointer (`#`, `#/$defs/Name`) or a plain-name `$anchor` (`#name`), from
/// the root or from the subschema whose `$id` is the part before the `#`
/// (compared as written: relative `$id`s are not resolved). `None` when it
/// points nowhere in `root` (a remote URL).
pub fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
    let document = if base.is_empty() {
        root
    } else {
        find(root, 0, &|map| {
            map.get("$id").and_then(Value::as_str) == Some(base)
        })?
    };
    if fragment.is_empty() {
        return Some(document);
    }
    if let Some(pointer) = fragment.strip_prefix('/') {
        let mut at = document;
        for raw in pointer.split('/') {
            let segment = unescape(raw)?;
            at = match at {
                Value::Object(map) => map.get(&segment)?,
                Value::Array(list) => list.get(segment.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        return Some(at);
    }
    let name = percent_decode(fragment)?;
    find(document, 0, &|map| {
        map.get("$anchor").and_then(Value::as_str) == Some(name.as_str())
    })
}

/// The first schema at or under `node` (depth first, within
/// [`MAX_DEPTH`]) that `wanted` picks.
pub fn find<'a>(
    node: &'a Value,
    depth: usize,
    wanted: &dyn Fn(&Map<String, Value>) -> bool,
) -> Option<&'a Value> {
    let map = node.as_object()?;
    if wanted(map) {
        return Some(node);
    }
    if depth >= MAX_DEPTH {
        return None;
    }
    subschemas(map)
        .into_iter()
        .find_map(|(_, child)| find(child, depth + 1, wanted))
}

/// One JSON pointer segment of a URI fragment, decoded: percent escapes,
/// then `~1` and `~0`.
pub fn unescape(raw: &str) -> Option<String> {
    Some(percent_decode(raw)?.replace("~1", "/").replace("~0", "~"))
}

/// `text` with its `%XX` escapes decoded; `None` when one is malformed or
/// the bytes are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// How many JSON values `value` holds, itself included, counted up to
/// `cap` (without recursion, so any depth is safe): what copying it costs.
pub fn weight(value: &Value, cap: usize) -> usize {
    let mut count = 0;
    let mut pending = vec![value];
    while let Some(next) = pending.pop() {
        count += 1;
        if count >= cap {
            return cap;
        }
        match next {
            Value::Array(list) => pending.extend(list),
            Value::Object(map) => pending.extend(map.values()),
            _ => {}
        }
    }
    count
}

/// Whether `schema` declares a draft before 2019-09 (04, 06 or 07), in
/// which a `$ref` stands alone: its siblings are ignored.
#[must_use]
pub fn is_legacy_draft(schema: &Value) -> bool {
    schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|uri| {
            ["draft-04", "draft-06", "draft-07"]
                .iter()
                .any(|d| uri.contains(d))
        })
}
