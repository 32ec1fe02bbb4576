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
    let is_type_error = message.starts_with("invalid type:")
        || message.starts_with("invalid value:")
        || message.starts_with("wanted ");
    if !is_type_error {
        return message.to_owned();
    }
    let (serde_found, serde_expected) = split_serde(message);
    let Some(expected) = expected_at(segments).or_else(|| serde_expected.and_then(plain_type))
    else {
        return message.to_owned();
    };
    let found_value = found.cloned().or_else(|| found_value(message));
    let found = found
        .map(describe_value)
        .or_else(|| serde_found.map(plain_found));
    let Some(found) = found else {
        return format!("expected {expected}");
    };
    let mut text = format!("expected {expected}, found {found}");
    if let (Some(last), Some(Value::String(mode))) = (segments.last(), found_value)
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
        let names = jp_policy::listing::cut_list(values.iter().map(|v| match v {
            Value::String(s) => format!("`{s}`"),
            other => other.to_string(),
        }));
        return Some(format!("one of {names}"));
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

/// The string a serde "invalid type" message says was found, as a value,
/// for the hint about a policy written as one string.
fn found_value(message: &str) -> Option<Value> {
    let (found, _) = split_serde(message);
    let text = found?.strip_prefix("string ")?;
    serde_json::from_str(text).ok().map(Value::String)
}

/// Serde's `invalid type: FOUND, expected EXPECTED` (or `invalid value:`)
/// in its two parts.
fn split_serde(message: &str) -> (Option<&str>, Option<&str>) {
    let Some(rest) = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
    else {
        return (None, None);
    };
    match rest.rsplit_once(", expected ") {
        Some((found, expected)) => (Some(found), Some(expected)),
        None => (Some(rest), None),
    }
}

/// A Rust type serde names (`u32`, `a map`, `struct PartialX`) as a
/// person would say it; `None` for what is already plain.
fn plain_type(rust: &str) -> Option<String> {
    macro_rules! whole {
        ($($t:ident),*) => {
            match rust {
                $(stringify!($t) => {
                    return Some(format!("a whole number from {} to {}", $t::MIN, $t::MAX));
                })*
                _ => {}
            }
        };
    }
    whole!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);
    let plain = match rust {
        "f32" | "f64" => "a number",
        "bool" | "a boolean" => "true or false",
        "char" => "a single character",
        "a string" | "string" => "a string",
        "a map" | "map" => "a table",
        "a sequence" | "sequence" => "an array",
        _ if rust.starts_with("struct ") => "a table",
        _ => return None,
    };
    Some(plain.to_owned())
}

/// What serde says it found (`integer `-1``, `string "x"`), as the rest
/// of jp's messages say it.
fn plain_found(found: &str) -> String {
    let quoted = |prefix: &str| {
        found
            .strip_prefix(prefix)
            .map(|v| v.trim_matches('`').to_owned())
    };
    if let Some(n) = quoted("integer ").or_else(|| quoted("floating point ")) {
        return format!("the number {n}");
    }
    if let Some(b) = quoted("boolean ") {
        return format!("the boolean {b}");
    }
    if let Some(s) = found.strip_prefix("string ") {
        return format!("the string {s}");
    }
    match found {
        "sequence" => "an array".to_owned(),
        "map" => "a table".to_owned(),
        other => other.to_owned(),
    }
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
