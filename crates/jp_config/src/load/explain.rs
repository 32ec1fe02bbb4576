//! Messages for config files that do not parse, in the user's terms.
//!
//! serde and toml describe a mismatch in the types of the code that reads
//! the config (`expected struct PartialPolicyConfig`, `wanted string or
//! table`). The user wrote a key and a value; the message should say which
//! values that key takes. The config's own JSON Schema (the one `jp config
//! schema` prints) knows: every table's keys and every enum's values.

use serde_json::Value;

use crate::schema::config_schema;

/// Rewrites a deserialization `message` about the key at `segments`, where
/// `found` is the value the layer holds there, when the message is a type
/// mismatch the schema can explain. Other messages are returned as they
/// are.
pub(crate) fn type_mismatch(segments: &[String], message: &str, found: Option<&Value>) -> String {
    let is_type_error = message.starts_with("invalid type:") || message.starts_with("wanted ");
    if !is_type_error {
        return message.to_owned();
    }
    let Some(expected) = expected_at(segments) else {
        return message.to_owned();
    };
    let Some(found) = found else {
        return format!("expected {expected}");
    };
    let mut text = format!("expected {expected}, found {}", describe_value(found));
    if let (Some(last), Value::String(mode)) = (segments.last(), found)
        && last == "policy"
    {
        text.push_str(&format!(
            "; a tool's policy has two parts: write `policy.run = \"{mode}\"` for running the \
             tool, `policy.result = \"{mode}\"` for its result"
        ));
    }
    text
}

/// A message for TOML's `duplicate key` error at `span` of `text`: which
/// key or table is written twice, and where first.
pub(crate) fn duplicate_key(text: &str, span: std::ops::Range<usize>) -> String {
    let key = text.get(span.clone()).unwrap_or_default();
    let line_start = text[..span.start.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or_default().trim();
    if line.starts_with('[') {
        let header = line.split('#').next().unwrap_or(line).trim();
        let first = text[..line_start]
            .lines()
            .position(|l| l.split('#').next().unwrap_or(l).trim() == header);
        return match first {
            Some(index) => format!(
                "the table {header} is written twice (first at line {}); merge the two into one",
                index + 1
            ),
            None => format!(
                "the table {header} is written twice (`{key}` is already defined above); merge \
                 the two into one"
            ),
        };
    }
    format!("`{key}` is set twice in the same table; keep one")
}

/// What the schema allows at `segments`, as a phrase: `one of `auto`,
/// `always`, `never``, `a table with `run`, `result``.
fn expected_at(segments: &[String]) -> Option<String> {
    let schema = config_schema().ok()?;
    let mut node = schema;
    for segment in segments {
        let here = resolve(schema, node);
        node = here
            .get("properties")
            .and_then(|p| p.get(segment))
            .or_else(|| here.get("additionalProperties").filter(|a| a.is_object()))?;
    }
    let node = resolve(schema, node);
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        let names = values
            .iter()
            .map(|v| match v {
                Value::String(s) => format!("`{s}`"),
                other => other.to_string(),
            })
            .collect::<Vec<_>>();
        return Some(format!("one of {}", names.join(", ")));
    }
    let keys = node.get("properties").and_then(Value::as_object)?;
    let keys = keys.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>();
    Some(format!("a table with the keys {}", keys.join(", ")))
}

/// Follows `$ref`, single-entry `allOf` and `anyOf` with `null` to the node
/// that says what a key holds.
fn resolve<'a>(schema: &'a Value, mut node: &'a Value) -> &'a Value {
    for _ in 0..16 {
        if let Some(target) = node.get("$ref").and_then(Value::as_str) {
            match target.strip_prefix('#').and_then(|p| schema.pointer(p)) {
                Some(next) => node = next,
                None => return node,
            }
            continue;
        }
        let alternatives = node
            .get("allOf")
            .or_else(|| node.get("anyOf"))
            .and_then(Value::as_array);
        if let Some(alternatives) = alternatives {
            let mut real = alternatives
                .iter()
                .filter(|a| a.get("type").and_then(Value::as_str) != Some("null"));
            if let (Some(only), None) = (real.next(), real.next()) {
                node = only;
                continue;
            }
        }
        return node;
    }
    node
}

fn describe_value(value: &Value) -> String {
    match value {
        Value::Null => "nothing".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {}", Value::String(s.clone())),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "a table".to_owned(),
    }
}

#[cfg(test)]
#[path = "explain_tests.rs"]
mod tests;
