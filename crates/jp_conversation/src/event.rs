//! Streaming response events (the shape RFD 012 describes) and what they
//! become once complete.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::arguments::{AggregateError, ArgParseError, DisplayKey, DuplicateKey};

/// One streamed piece of an assistant response, as a provider decoder
/// produces it. Parts that share an index belong to one response item (a
/// message, a reasoning block or a tool call); a flush of that index ends
/// the item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventPart {
    /// A chunk of assistant text.
    Message(String),
    /// A chunk of the model's reasoning.
    Reasoning(String),
    /// A piece of a tool call.
    ToolCall(ToolCallPart),
}

/// The pieces a tool call streams as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCallPart {
    /// The call begins: its id and the tool's name are known.
    Start {
        /// The provider's id for the call.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A chunk of the arguments' JSON text, split anywhere. Providers that
    /// send the arguments whole send one chunk.
    ArgumentChunk(String),
}

/// A complete response item, returned when its index is flushed.
#[derive(Debug, Clone, PartialEq)]
pub enum FlushedEvent {
    /// The assistant's text.
    Message(String),
    /// The model's reasoning.
    Reasoning(String),
    /// A tool call with its complete arguments (or why they are unusable).
    ToolCallRequest(ToolCallRequest),
}

/// A tool call the model asked for.
///
/// The arguments are reachable only through [`arguments`](Self::arguments),
/// which refuses when they are unusable, so no caller can run a call with
/// truncated, invalid or ambiguous arguments by forgetting a check.
///
/// The arguments are shared, not copied, when a request is cloned: a turn
/// hands one call to the conversation, the policy decision and the tool
/// run, and arguments can be megabytes (issue 14).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRequest {
    /// The provider's id for the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Always a [`Value::Object`]: kept as a value so that checks and
    /// policies, which read a `Value`, need no copy of it.
    arguments: Arc<Value>,
    error: Option<ArgumentsError>,
}

impl ToolCallRequest {
    /// A call with valid arguments.
    #[must_use]
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Map<String, Value>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: Arc::new(Value::Object(arguments)),
            error: None,
        }
    }

    /// A call whose arguments must not be used; `received` is what arrived
    /// (for display only).
    #[must_use]
    pub fn invalid(
        id: impl Into<String>,
        name: impl Into<String>,
        received: Map<String, Value>,
        error: ArgumentsError,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: Arc::new(Value::Object(received)),
            error: Some(error),
        }
    }

    /// The arguments, if they may be used.
    ///
    /// # Errors
    ///
    /// Why the call's arguments are unusable.
    pub fn arguments(&self) -> Result<&Map<String, Value>, &ArgumentsError> {
        match &self.error {
            Some(error) => Err(error),
            None => Ok(self.map()),
        }
    }

    /// [`arguments`](Self::arguments) as the object value they are, for
    /// reading them with JSON pointers without copying them.
    ///
    /// # Errors
    ///
    /// Why the call's arguments are unusable.
    pub fn arguments_value(&self) -> Result<&Value, &ArgumentsError> {
        match &self.error {
            Some(error) => Err(error),
            None => Ok(&self.arguments),
        }
    }

    fn map(&self) -> &Map<String, Value> {
        static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
        // Every constructor stores an object.
        self.arguments.as_object().unwrap_or(&EMPTY)
    }

    /// Why the arguments are unusable, if they are.
    #[must_use]
    pub fn error(&self) -> Option<&ArgumentsError> {
        self.error.as_ref()
    }

    /// What arrived, valid or not: for showing the user what the model sent,
    /// never for running the tool. For a truncated call these are the
    /// top-level arguments that were complete; with a duplicate key, the
    /// last value of the key.
    #[must_use]
    pub fn received_arguments(&self) -> &Map<String, Value> {
        self.map()
    }

    /// The same call under `id`, its arguments unusable for `error`: they
    /// are shared with this call, not copied.
    #[must_use]
    pub fn refused_as(&self, id: impl Into<String>, error: ArgumentsError) -> Self {
        Self {
            id: id.into(),
            name: self.name.clone(),
            arguments: Arc::clone(&self.arguments),
            error: Some(error),
        }
    }

    /// The same call with what arrived taken as its arguments, error or
    /// not: for showing them, never for running it. Shared, not copied.
    #[must_use]
    pub fn as_received(&self) -> Self {
        Self {
            error: None,
            ..self.clone()
        }
    }

    /// [`received_arguments`](Self::received_arguments) as the shared
    /// object value they are: for handing them on (to a provider request)
    /// without copying them.
    #[must_use]
    pub fn shared_received_arguments(&self) -> Arc<Value> {
        Arc::clone(&self.arguments)
    }
}

/// How a [`ToolCallRequest`] is stored: the arguments received, and the
/// error's message when they are unusable (read back as
/// [`ArgumentsError::Recorded`], so a stored invalid call stays invalid).
#[derive(serde::Deserialize)]
struct StoredToolCallRequest {
    id: String,
    name: String,
    arguments: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl serde::Serialize for ToolCallRequest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let fields = if self.error.is_some() { 4 } else { 3 };
        let mut out = serializer.serialize_struct("ToolCallRequest", fields)?;
        out.serialize_field("id", &self.id)?;
        out.serialize_field("name", &self.name)?;
        out.serialize_field("arguments", &*self.arguments)?;
        if let Some(error) = &self.error {
            out.serialize_field("error", &error.to_string())?;
        }
        out.end()
    }
}

impl<'de> serde::Deserialize<'de> for ToolCallRequest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let stored = StoredToolCallRequest::deserialize(deserializer)?;
        Ok(Self {
            id: stored.id,
            name: stored.name,
            arguments: Arc::new(Value::Object(stored.arguments)),
            error: stored.error.map(ArgumentsError::Recorded),
        })
    }
}

/// Why a tool call's arguments cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArgumentsError {
    /// The JSON text was invalid, truncated or over a limit.
    #[error(transparent)]
    Parse(#[from] ArgParseError),

    /// The JSON was valid but not an object.
    #[error("tool arguments must be a JSON object, got {0}")]
    NotAnObject(&'static str),

    /// A key occurred twice in one object (architecture decision 1).
    #[error(
        "duplicate key `{}` at {}: arguments with a repeated key are refused because its meaning is ambiguous",
        DisplayKey(&.0.key),
        .0.pointer
    )]
    DuplicateKey(DuplicateKey),

    /// The fragment stream did not fit together; a bug in jp, reported rather
    /// than hidden.
    #[error("internal error while assembling arguments: {0}")]
    Assembly(AggregateError),

    /// The call reused the id of another call in the conversation. jp gives
    /// it a fresh id (so every result still names exactly one call) and
    /// refuses it, because whose result is whose would be ambiguous.
    #[error(
        "the call reused the id `{0}` of another call; it is refused because its result could be taken for the other call's"
    )]
    DuplicateId(String),

    /// An error read back from a stored conversation, where only its
    /// message is kept.
    #[error("{0}")]
    Recorded(String),
}

/// The JSON type name of `value`, for messages.
pub(crate) fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
#[path = "event_tests.rs"]
mod tests;
