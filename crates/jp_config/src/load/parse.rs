//! Parsing one layer (a TOML or JSON file, or a JSON value) into a partial
//! config, with a diagnostic naming the line and key of a problem.

use super::explain;
use super::locate::line_of_offset;
use super::memo::Memo;
use crate::app::PartialAppConfig;
use crate::diagnostic::Diagnostic;
use crate::path::ConfigPath;

/// Parses a TOML config file into its partial config and its raw value.
///
/// # Errors
///
/// A diagnostic with the line and key of the first problem (no source set).
pub fn parse_toml_file(text: &str) -> Result<(PartialAppConfig, serde_json::Value), Diagnostic> {
    static PARSED: Memo<Result<(PartialAppConfig, serde_json::Value), Diagnostic>> =
        Memo::new(16, 256 * 1024);
    PARSED.get_or(text, || parse_toml_text(text))
}

/// [`parse_toml_file`], parsed anew.
fn parse_toml_text(text: &str) -> Result<(PartialAppConfig, serde_json::Value), Diagnostic> {
    let deserializer =
        toml::de::Deserializer::parse(text).map_err(|e| toml_diagnostic(text, &e, None))?;
    let raw: serde_json::Value =
        toml::from_str(text).map_err(|e| toml_diagnostic(text, &e, None))?;
    // `sandbox = "none"` is said as a table to the deserializer (the rare
    // layer that has one is read from its value, without line numbers).
    if sandbox_none(&raw).is_some() {
        return Ok((deserialize_value(&raw)?, raw));
    }
    let partial: PartialAppConfig =
        serde_path_to_error::deserialize(deserializer).map_err(|e| {
            let mut diagnostic = toml_diagnostic(text, e.inner(), path_to_key(e.path()));
            diagnostic.message = explain_mismatch(e.path(), &diagnostic.message, &raw);
            diagnostic
        })?;
    Ok((partial, raw))
}

pub(super) fn parse_json_file(
    text: &str,
) -> Result<(PartialAppConfig, serde_json::Value), Diagnostic> {
    let raw: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        let mut d = Diagnostic::error(None, e.to_string());
        d.line = Some(e.line());
        d
    })?;
    let partial = deserialize_value(&raw)?;
    Ok((partial, raw))
}

/// Deserializes a partial config from a JSON value, naming the key of the
/// first problem.
///
/// # Errors
///
/// A diagnostic naming the key and the problem.
pub fn deserialize_value(raw: &serde_json::Value) -> Result<PartialAppConfig, Diagnostic> {
    let normalized = sandbox_none(raw);
    let raw = normalized.as_ref().unwrap_or(raw);
    serde_path_to_error::deserialize(raw).map_err(|e| {
        let message = explain_mismatch(e.path(), &e.inner().to_string(), raw);
        Diagnostic::error(path_to_key(e.path()), message)
    })
}

fn toml_diagnostic(text: &str, error: &toml::de::Error, key: Option<String>) -> Diagnostic {
    let message = error.message().trim_end();
    let message = match error.span() {
        Some(span) if message == "duplicate key" => explain::duplicate_key(text, span),
        _ => message.to_owned(),
    };
    let mut diagnostic = Diagnostic::error(key, message);
    diagnostic.line = error.span().map(|span| line_of_offset(text, span.start));
    diagnostic
}

/// [`explain::type_mismatch`] for the key at `path` of the layer `raw`.
fn explain_mismatch(
    path: &serde_path_to_error::Path,
    message: &str,
    raw: &serde_json::Value,
) -> String {
    use serde_path_to_error::Segment;
    let mut segments = Vec::new();
    let mut found = Some(raw);
    for segment in path {
        match segment {
            Segment::Map { key } | Segment::Enum { variant: key } => {
                found = found.and_then(|v| v.get(key));
                segments.push(key.clone());
            }
            Segment::Seq { index } => {
                found = found.and_then(|v| v.get(index));
                segments.push(index.to_string());
            }
            Segment::Unknown => found = None,
        }
    }
    explain::type_mismatch(&segments, message, found)
}

fn path_to_key(path: &serde_path_to_error::Path) -> Option<String> {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&ConfigPath::from_segments([key.as_str()]).to_string());
            }
            Segment::Unknown => {}
        }
    }
    (!out.is_empty()).then_some(out)
}

/// `raw` with each `sandbox = "none"` of a tool or MCP server written as
/// the table it stands for (`{ none = true }`, see
/// [`crate::sandbox::SandboxConfig::none`]); `None` when it has none.
fn sandbox_none(raw: &serde_json::Value) -> Option<serde_json::Value> {
    let holders = [("conversation", "tools"), ("providers", "mcp")];
    let is_none =
        |entry: &serde_json::Value| entry.get("sandbox").and_then(|s| s.as_str()) == Some("none");
    let any = holders.iter().any(|(a, b)| {
        raw.get(a)
            .and_then(|v| v.get(b))
            .and_then(serde_json::Value::as_object)
            .is_some_and(|entries| entries.values().any(is_none))
    });
    if !any {
        return None;
    }
    let mut raw = raw.clone();
    for (a, b) in holders {
        let Some(entries) = raw
            .get_mut(a)
            .and_then(|v| v.get_mut(b))
            .and_then(serde_json::Value::as_object_mut)
        else {
            continue;
        };
        for entry in entries.values_mut() {
            if is_none(entry) {
                entry["sandbox"] = serde_json::json!({ "none": true });
            }
        }
    }
    Some(raw)
}
