//! A call's arguments: parsed as a streamed call's are, held on their way
//! to the tool, and shown to the user (on one line, or paged in full).

use std::sync::Arc;

use jp_conversation::{
    ArgumentsError, ArgumentsSoFar, EventBuilder, EventPart, FlushedEvent, ToolCallPart,
    ToolCallRequest,
};
use serde_json::{Map, Value};

use super::render::full_arguments;
use jp_term::printer::{cut, sanitize};

/// Parses the arguments the way a streamed tool call is parsed, so what
/// the query loop would reject (invalid or truncated JSON, a duplicate key,
/// not an object) is rejected here too.
pub fn parse_arguments(tool: &str, text: &str) -> Result<serde_json::Value, String> {
    let mut builder = EventBuilder::new();
    let start = EventPart::ToolCall(ToolCallPart::Start {
        id: "policy-check".into(),
        name: tool.to_owned(),
    });
    builder.handle_part(0, start).map_err(|e| e.to_string())?;
    // The fragments are not wanted, only the call: none is collected, so
    // deeply nested arguments cost no more than their value (issue 14).
    builder
        .handle_part_with(
            0,
            EventPart::ToolCall(ToolCallPart::ArgumentChunk(text.to_owned())),
            |_, _| {},
        )
        .map_err(|e| e.to_string())?;
    let Some(FlushedEvent::ToolCallRequest(call)) = builder.handle_flush(0) else {
        return Err("no tool call was assembled".into());
    };
    match call.arguments() {
        Ok(map) => Ok(serde_json::Value::Object(map.clone())),
        Err(e) => Err(e.to_string()),
    }
}

/// A call's arguments on their way to the tool: a JSON object, shared
/// with the conversation's [`ToolCallRequest`] until the user edits them,
/// so a decision, a question and a run copy none of them (issue 14). Reads
/// as the object it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Arguments(pub(super) Arc<Value>);

impl Arguments {
    /// `call`'s arguments, shared; for a call whose arguments are usable.
    pub fn of(call: &ToolCallRequest) -> Self {
        Self(call.shared_received_arguments())
    }

    /// Arguments of their own (edited ones).
    #[must_use]
    pub fn new(arguments: Map<String, Value>) -> Self {
        Self(Arc::new(Value::Object(arguments)))
    }

    /// A copy of the arguments, for a tool's request.
    #[must_use]
    pub fn to_owned_map(&self) -> Map<String, Value> {
        (**self).clone()
    }

    /// The arguments as a map of their own: without a copy when nothing
    /// else shares them.
    #[must_use]
    pub fn into_map(self) -> Map<String, Value> {
        match Arc::unwrap_or_clone(self.0) {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// The arguments as the object value they are.
    #[must_use]
    pub fn as_value(&self) -> &Value {
        &self.0
    }
}

impl std::ops::Deref for Arguments {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
        // Both constructors hold an object.
        self.0.as_object().unwrap_or(&EMPTY)
    }
}

/// Complete `arguments`, as [`arguments_page`] takes them.
pub fn complete(arguments: &Map<String, Value>) -> ArgumentsSoFar {
    ArgumentsSoFar {
        arguments: arguments.clone(),
        streaming: None,
        complete: true,
    }
}

/// The first line of a call's arguments shown in full.
pub fn arguments_header(name: &str, so_far: &ArgumentsSoFar) -> String {
    if so_far.complete {
        format!("{name} would run with:")
    } else {
        format!("{name}, the arguments so far (more are arriving):")
    }
}

/// What `v` at a prompt pages: the call's arguments so far, in full (see
/// [`full_arguments`]), under a line that says whether more may follow.
#[must_use]
pub fn arguments_page(name: &str, so_far: &ArgumentsSoFar) -> String {
    let mut page = sanitize(&arguments_header(name, so_far)).into_owned();
    page.push('\n');
    for line in full_arguments(&so_far.arguments, so_far.streaming.as_deref()) {
        page.push_str(&line.text);
        page.push('\n');
    }
    page
}

/// `path: "src/lib.rs", content: "fn…"`: arguments on one line, each value
/// cut to a few characters, the whole at most `max` characters.
#[must_use]
pub fn short_arguments(arguments: &Map<String, Value>, max: usize) -> String {
    arguments_line(arguments, None, max)
}

/// [`short_arguments`] of what a call received. When a key was repeated
/// (a call that is refused, architecture decision 1), the argument holding
/// it shows both values, so the line never suggests the call said one
/// thing: `path: "src/a.rs" or "/etc/passwd" (duplicate key)`.
#[must_use]
pub fn received_arguments_line(call: &ToolCallRequest, max: usize) -> String {
    let received = call.received_arguments();
    let Some(ArgumentsError::DuplicateKey(duplicate)) = call.error() else {
        return arguments_line(received, None, max);
    };
    let pointer = duplicate.pointer.as_str();
    let (top, rest) = match pointer.strip_prefix('/').map(|p| p.split_once('/')) {
        Some(Some((top, rest))) => (top.replace("~1", "/").replace("~0", "~"), Some(rest)),
        _ => (duplicate.key.clone(), None),
    };
    let later = match rest {
        None => received.get(&top),
        Some(rest) => received
            .get(&top)
            .and_then(|value| value.pointer(&format!("/{rest}"))),
    };
    let later = later.map_or_else(|| "?".to_owned(), |v| cut(&v.to_string(), 40));
    let both = format!("{} or {later}", cut(&duplicate.earlier.to_string(), 40));
    let shown = match rest {
        None => format!("{both} (duplicate key)"),
        Some(_) => format!("<duplicate key at {pointer}: {both}>"),
    };
    arguments_line(received, Some((&top, &shown)), max)
}

/// The arguments on one line, with the value of one key replaced by text.
fn arguments_line(
    arguments: &Map<String, Value>,
    replace: Option<(&str, &str)>,
    max: usize,
) -> String {
    let mut out = String::new();
    for (i, (key, value)) in arguments.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(key);
        out.push_str(": ");
        match replace {
            Some((replaced, text)) if replaced == key => out.push_str(text),
            _ => out.push_str(&cut(&value.to_string(), 40)),
        }
    }
    cut(&out, max)
}

#[cfg(test)]
#[path = "arguments_tests.rs"]
mod tests;
