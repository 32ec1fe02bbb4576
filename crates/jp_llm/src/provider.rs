//! The provider-neutral request and the typed events every provider streams.
//!
//! A [`Provider`] turns a [`ChatRequest`] into an [`EventStream`]. The
//! stream connects lazily, retries rate-limit and overload answers before
//! any event is produced (reporting each wait as [`StreamEvent::Notice`]),
//! and then yields the response as it arrives. Dropping the stream at any
//! moment drops the HTTP response, which closes the connection: that is
//! what stops generation and billing. A stream never re-POSTs after it has
//! yielded a part.
//!
//! The providers live below: [`anthropic`], [`openai_responses`] (the
//! `openai` provider), [`openai`] (Chat Completions, for OpenAI-compatible
//! servers), [`ollama`] and [`google`] (Gemini) are one
//! [`HttpProvider`](http::HttpProvider) over their APIs' wire formats (see
//! [`http`]), and [`scripted`] plays a script offline.

use std::pin::Pin;
use std::sync::Arc;

use futures_util::Stream;
use jp_conversation::EventPart;
use serde_json::Value;

use crate::error::ProviderError;

pub mod anthropic;
mod dialect;
mod function_tool;
pub mod google;
pub(crate) mod http;
pub mod ollama;
pub mod openai;
pub mod openai_responses;
pub mod scripted;

/// The events of one streamed response.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>;

/// An LLM provider.
pub trait Provider: Send + Sync {
    /// The provider's name as used in model ids (`anthropic`, `openai`, ...).
    fn name(&self) -> &str;

    /// Starts streaming the response to `request`. Nothing is sent until the
    /// stream is first polled.
    fn stream(&self, request: ChatRequest) -> EventStream;
}

/// Everything a provider needs for one response, independent of any wire
/// format.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The model's name at the provider (`claude-sonnet-4-5`), without the
    /// `provider/` prefix.
    pub model: String,
    /// The system prompt, if any.
    pub system: Option<String>,
    /// The conversation so far, oldest first; ends with a user message or
    /// tool results.
    pub messages: Vec<Message>,
    /// The tools the model may call, in order.
    pub tools: Vec<ToolDefinition>,
    /// The most tokens the response may use.
    pub max_tokens: u32,
    /// Sampling temperature, when set.
    pub temperature: Option<f64>,
    /// Nucleus sampling, when set.
    pub top_p: Option<f64>,
}

/// One message of the conversation as sent to a provider.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// What the user wrote.
    User(String),
    /// One complete assistant response.
    Assistant {
        /// The model's reasoning, if it was kept.
        reasoning: Option<String>,
        /// The response's text (may be empty when it only called tools).
        text: String,
        /// The tool calls it made, in order.
        tool_calls: Vec<ToolCall>,
    },
    /// The results of the previous assistant message's tool calls, in the
    /// order of the calls.
    ToolResults(Vec<ToolResult>),
}

/// A tool call as sent back to the provider in the history.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's id for the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model sent them (for a call that was refused
    /// because its arguments were unusable: what was received), always a
    /// JSON object. Shared with the conversation's
    /// [`ToolCallRequest`](jp_conversation::ToolCallRequest): a request
    /// built for every cycle of a turn copies none of them.
    pub arguments: Arc<Value>,
}

/// The result of one tool call, as sent to the provider.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub id: String,
    /// The result text.
    pub content: String,
    /// Whether the call failed (or was refused, declined or skipped).
    pub is_error: bool,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: Option<String>,
    /// The JSON Schema of the arguments: an object schema with ordered
    /// `properties` and `additionalProperties: false`.
    pub parameters: Value,
}

/// One event of a streamed response.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A piece of the response item at `index`. Items are numbered by the
    /// decoder so that text, reasoning and each tool call get distinct
    /// indexes within one response.
    Part {
        /// The item's index.
        index: usize,
        /// The piece.
        part: EventPart,
    },
    /// The item at `index` is complete. Every index that received a part is
    /// flushed exactly once before the stream ends normally.
    Flush {
        /// The item's index.
        index: usize,
    },
    /// Token counts, as the provider reports them (possibly several times;
    /// the last report wins).
    Usage(Usage),
    /// Why the model stopped. Comes once, near the end. Tool-call parts are
    /// authoritative: a response that flushed tool calls asks for them to
    /// run whatever this says (some providers report `stop` on a tool call).
    Finished(FinishReason),
    /// Something the user should know that is not part of the response,
    /// such as a retry after a rate limit.
    Notice(String),
    /// The events up to the next [`StreamEvent::GroupEnd`] came in one
    /// event of the provider's (Gemini sends a call whole, often with the
    /// response's end): they have all arrived, so reading them costs
    /// nothing, and stopping the stream for a call declined among them
    /// waits for their end (and is not done at all when the response
    /// ended among them).
    GroupStart,
    /// The end of the events a [`StreamEvent::GroupStart`] began.
    GroupEnd,
}

/// Why a model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants tool calls run.
    ToolUse,
    /// The response hit `max_tokens`; whatever was streaming is cut off.
    MaxTokens,
    /// A provider reason jp has no special meaning for.
    Other(String),
}

/// The largest token count jp believes a provider reports for one
/// response: no model reads or writes anywhere near a trillion tokens at
/// once, so a larger count (`u64::MAX` from a broken or hostile server) is
/// treated as unknown rather than summed.
pub const MAX_REPORTED_TOKENS: u64 = 1_000_000_000_000;

/// Token counts for one response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Input (prompt) tokens, all of them: those read from or written to
    /// the prompt cache included.
    pub input_tokens: Option<u64>,
    /// Output (completion) tokens.
    pub output_tokens: Option<u64>,
    /// Of the input tokens, those read from the provider's prompt cache.
    pub cache_read_tokens: Option<u64>,
    /// Of the input tokens, those written to the provider's prompt cache (Anthropic's
    /// `cache_creation_input_tokens`, billed above the base input price).
    pub cache_write_tokens: Option<u64>,
}

impl Usage {
    /// The counts with each one over [`MAX_REPORTED_TOKENS`] made unknown.
    #[must_use]
    pub fn plausible(self) -> Self {
        let count = |n: Option<u64>| n.filter(|n| *n <= MAX_REPORTED_TOKENS);
        Self {
            input_tokens: count(self.input_tokens),
            output_tokens: count(self.output_tokens),
            cache_read_tokens: count(self.cache_read_tokens),
            cache_write_tokens: count(self.cache_write_tokens),
        }
    }
}

/// A provider's wire format, decoded incrementally: bytes in as they arrive
/// (split anywhere, even inside a UTF-8 character), typed events out.
///
/// Decoders are pure (no I/O), so the HTTP providers and the scripted
/// provider's recorded replies share them, and tests feed them recorded
/// bytes directly.
pub trait WireDecoder: Send {
    /// Decodes the next bytes of the body.
    ///
    /// # Errors
    ///
    /// [`ProviderError::Decode`] for bytes that are not the format, or
    /// [`ProviderError::Api`] for an error event.
    fn feed(&mut self, bytes: &[u8]) -> Result<Vec<StreamEvent>, ProviderError>;

    /// The body ended. Flushes what is complete; a body that ended before
    /// the format's end marker is [`ProviderError::Disconnected`] (the
    /// events already returned stay valid).
    ///
    /// # Errors
    ///
    /// As for [`feed`](Self::feed), plus a premature end.
    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError>;
}
