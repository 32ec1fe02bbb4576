//! A tool's JSON Schema as the OpenAPI subset Gemini's `parameters` reads.
//!
//! Gemini refuses a declaration whose schema has a key its `Schema` does
//! not know (`Unknown name "additionalProperties" ... Cannot find field`),
//! an object with no properties (`should be non-empty for OBJECT type`)
//! and an array without `items`. So each node keeps only the keys Gemini
//! reads, and the rest are translated where they carry meaning:
//!
//! - `type: [T, "null"]` becomes `type: T, nullable: true`; several types
//!   become an `anyOf` of one schema per type (`items` going to the array's,
//!   `properties` and `required` to the object's);
//! - `enum` stays when its values are strings (Gemini's enum is a list of
//!   strings); other values, and a `const`, are said in the description
//!   instead (a string `const` is a one-value `enum`);
//! - `oneOf` becomes `anyOf`, the first of `examples` becomes `example`;
//!   an `anyOf` of one schema and `{"type": "null"}` becomes that schema,
//!   `nullable`, and an `anyOf` of string `enum`s one `enum`;
//! - an object's `required` keeps only names it has, and `propertyOrdering`
//!   says the order of its properties (jp's order, which Gemini would
//!   otherwise not keep);
//! - `additionalProperties`, `$schema`, `$ref`, `allOf`, `not`, `const` and
//!   every key Gemini does not know are left out.
//!
//! References, `allOf` and a root union are resolved before this
//! (`provider::dialect::gemini`).
//!
//! A tool whose arguments have no properties is declared without
//! `parameters`; an array without `items` gets string items.

use serde_json::{Map, Value, json};

/// The keys of Gemini's `Schema` object (API v1beta).
pub(in crate::provider) const KNOWN: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// The `parameters` of a declaration for a tool whose arguments are
/// `schema`; `None` when they have no properties.
pub(in crate::provider) fn parameters(schema: &Value) -> Option<Map<String, Value>> {
    let has_properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty());
    if !has_properties {
        return None;
    }
    match translate(schema) {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// One schema node, translated (see the module's documentation).
fn translate(node: &Value) -> Value {
    let Some(source) = node.as_object() else {
        return node.clone();
    };
    let mut out = Map::new();
    let mut notes: Vec<String> = Vec::new();
    for (key, value) in source {
        match key.as_str() {
            "properties" => {
                if let Some(properties) = value.as_object().filter(|p| !p.is_empty()) {
                    let translated: Map<String, Value> = properties
                        .iter()
                        .map(|(name, schema)| (name.clone(), translate(schema)))
                        .collect();
                    if translated.len() > 1 {
                        let order: Vec<Value> =
                            translated.keys().map(|k| Value::from(k.as_str())).collect();
                        out.insert("propertyOrdering".into(), order.into());
                    }
                    out.insert("properties".into(), translated.into());
                }
            }
            "items" => {
                out.insert("items".into(), translate(value));
            }
            "anyOf" | "oneOf" => {
                if let Some(variants) = value.as_array() {
                    out.insert(
                        "anyOf".into(),
                        variants.iter().map(translate).collect::<Vec<_>>().into(),
                    );
                }
            }
            "enum" => match value.as_array() {
                Some(values) if values.iter().all(Value::is_string) => {
                    out.insert("enum".into(), value.clone());
                }
                Some(values) => notes.push(format!("One of: {}.", list(values))),
                None => {}
            },
            "const" => match value {
                Value::String(_) => {
                    out.insert("enum".into(), json!([value]));
                }
                other => notes.push(format!("Always {other}.")),
            },
            "examples" => {
                if let Some(first) = value.as_array().and_then(|v| v.first()) {
                    out.entry("example").or_insert_with(|| first.clone());
                }
            }
            "propertyOrdering" => {}
            key if KNOWN.contains(&key) => {
                out.insert(key.to_owned(), value.clone());
            }
            _ => {}
        }
    }
    if let Some(required) = out.get("required").and_then(Value::as_array) {
        let properties = out.get("properties").and_then(Value::as_object);
        let kept: Vec<Value> = required
            .iter()
            .filter(|name| {
                name.as_str()
                    .is_some_and(|name| properties.is_some_and(|p| p.contains_key(name)))
            })
            .cloned()
            .collect();
        if kept.is_empty() {
            out.remove("required");
        } else {
            out.insert("required".into(), kept.into());
        }
    }
    if !notes.is_empty() {
        let description = match out.get("description").and_then(Value::as_str) {
            Some(text) if !text.is_empty() => format!("{text} {}", notes.join(" ")),
            _ => notes.join(" "),
        };
        out.insert("description".into(), description.into());
    }
    types(&mut out);
    nullable_union(&mut out);
    enum_union(&mut out);
    Value::Object(out)
}

/// An `anyOf` whose every variant is only a string `enum` (a union of
/// `const`s, as a root union's discriminator becomes) as one `enum` of
/// strings: the same values, in the form Gemini reads best.
fn enum_union(node: &mut Map<String, Value>) {
    let Some(Value::Array(variants)) = node.get("anyOf") else {
        return;
    };
    if node.contains_key("enum") || node.get("type").is_some_and(|t| t != "string") {
        return;
    }
    let mut values: Vec<Value> = Vec::new();
    for variant in variants {
        let Some(map) = variant.as_object() else {
            return;
        };
        let plain = map
            .iter()
            .all(|(key, value)| key == "enum" || (key == "type" && value == "string"));
        let Some(list) = map.get("enum").and_then(Value::as_array).filter(|_| plain) else {
            return;
        };
        for value in list {
            if !values.contains(value) {
                values.push(value.clone());
            }
        }
    }
    node.shift_remove("anyOf");
    node.entry("type").or_insert_with(|| "string".into());
    node.insert("enum".into(), values.into());
}

/// An `anyOf` of one schema and `{"type": "null"}` (pydantic's `Optional`)
/// as that schema, `nullable`: the same values, in the form Gemini reads
/// best. The node's own keywords win over the branch's.
fn nullable_union(node: &mut Map<String, Value>) {
    let is_null = |v: &Value| {
        v.as_object()
            .is_some_and(|m| m.len() == 1 && m.get("type").is_some_and(|t| t == "null"))
    };
    let Some(Value::Array(variants)) = node.get("anyOf") else {
        return;
    };
    let [first, second] = variants.as_slice() else {
        return;
    };
    let other = match (is_null(first), is_null(second)) {
        (true, false) => second,
        (false, true) => first,
        _ => return,
    };
    let Some(other) = other.as_object().cloned() else {
        return;
    };
    node.shift_remove("anyOf");
    for (key, value) in other {
        node.entry(key).or_insert(value);
    }
    node.insert("nullable".into(), true.into());
}

/// Makes `type` one type: a list with `null` becomes `nullable`; several
/// types an `anyOf`. An array without `items` gets string items.
fn types(node: &mut Map<String, Value>) {
    if let Some(Value::Array(list)) = node.get("type") {
        let nullable = list.iter().any(|t| t == "null");
        let kinds: Vec<Value> = list.iter().filter(|t| *t != "null").cloned().collect();
        if nullable {
            node.insert("nullable".into(), true.into());
        }
        match kinds.as_slice() {
            [] => {
                node.remove("type");
            }
            [one] => {
                node.insert("type".into(), one.clone());
            }
            several => {
                node.remove("type");
                let mut variants = Vec::with_capacity(several.len());
                let items = node.remove("items");
                let properties = node.remove("properties");
                let ordering = node.remove("propertyOrdering");
                let required = node.remove("required");
                for kind in several {
                    let mut variant = Map::new();
                    variant.insert("type".into(), kind.clone());
                    if kind == "array" {
                        variant.insert(
                            "items".into(),
                            items.clone().unwrap_or_else(|| json!({"type": "string"})),
                        );
                    }
                    if kind == "object" {
                        for (key, value) in [
                            ("properties", &properties),
                            ("propertyOrdering", &ordering),
                            ("required", &required),
                        ] {
                            if let Some(value) = value {
                                variant.insert(key.into(), value.clone());
                            }
                        }
                    }
                    variants.push(Value::Object(variant));
                }
                node.insert("anyOf".into(), variants.into());
            }
        }
    }
    if node.get("type").is_some_and(|t| t == "array") && !node.contains_key("items") {
        node.insert("items".into(), json!({"type": "string"}));
    }
}

/// `values` as the text of a description: `1, 2, "x"`.
fn list(values: &[Value]) -> String {
    values
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
