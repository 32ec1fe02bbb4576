//! An MCP `tools/call` result as jp's [`Outcome`]: text content is the
//! result, other content a one-line placeholder naming its type and size,
//! `structuredContent` compact JSON when there is no content, and
//! `isError` an error result.

use jp_tool::Outcome;
use serde_json::Value;

use crate::tool::local::{ToolLimits, limit_key};

/// The outcome of a call whose result is `result` (the `CallToolResult`
/// as JSON), for a tool allowed `limits.max_output_bytes` of result text.
#[must_use]
pub fn outcome(server: &str, tool: &str, result: &Value, limits: &ToolLimits) -> Outcome {
    let max_bytes = limits.max_output_bytes;
    let mut parts: Vec<String> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| blocks.iter().map(block).collect())
        .unwrap_or_default();
    if parts.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        parts.push(structured.to_string());
    }
    let text = parts.join("\n");
    if text.len() > max_bytes {
        return Outcome::error(format!(
            "MCP server `{server}` answered the call to `{tool}` with a result of {} bytes, more than the {max_bytes} this tool may return{}",
            text.len(),
            limit_key(limits.max_output_key.as_deref())
        ));
    }
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let message = if text.is_empty() {
            format!("MCP server `{server}`'s tool `{tool}` failed without saying why")
        } else {
            text
        };
        return Outcome::error(message);
    }
    Outcome::success(text)
}

/// One content block as text: its text, or a placeholder line.
fn block(block: &Value) -> String {
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let mime = block.get("mimeType").and_then(Value::as_str);
    let size = |data: Option<&Value>| {
        // Base64: 4 characters carry 3 bytes.
        data.and_then(Value::as_str)
            .map_or(0, |d| d.trim_end_matches('=').len() * 3 / 4)
    };
    match kind {
        "text" => block
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        "image" | "audio" => format!(
            "[{kind}: {}, {} bytes]",
            mime.unwrap_or("unknown type"),
            size(block.get("data"))
        ),
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
            let mime = resource
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or("unknown type");
            let bytes = match resource.get("text").and_then(Value::as_str) {
                Some(text) => text.len(),
                None => size(resource.get("blob")),
            };
            format!("[resource: {uri}, {mime}, {bytes} bytes]")
        }
        "resource_link" => {
            let uri = block.get("uri").and_then(Value::as_str).unwrap_or("?");
            format!("[resource link: {uri}]")
        }
        other => format!("[{other} content]"),
    }
}

#[cfg(test)]
#[path = "result_tests.rs"]
mod tests;
