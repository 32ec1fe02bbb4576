//! LLM providers, their wire decoders, and local tool execution.
//!
//! - [`Provider`] streams a response as typed [`StreamEvent`]s; the
//!   providers are [`anthropic`] (Messages API, SSE),
//!   [`openai_responses`] (OpenAI's Responses API, SSE), [`openai`]
//!   (OpenAI-compatible Chat Completions, SSE), [`ollama`] (native
//!   `/api/chat`, NDJSON), [`google`] (Gemini's `streamGenerateContent`,
//!   SSE) and [`scripted`] (an offline script), all under
//!   [`provider`]. The HTTP ones are one
//!   [`HttpProvider`](provider::http::HttpProvider) over each API's wire
//!   format; their decoders cut the body into frames with one line framing
//!   (server-sent events and NDJSON over it) and share one decode loop.
//! - [`connect`] builds the provider a model id names, from the config.
//! - [`request`] turns a conversation and the configured tools into a
//!   [`ChatRequest`].
//! - [`tool`] runs local tools as processes speaking `jp_tool`'s protocol.

pub mod call_ids;
mod connect;
mod decode;
pub mod error;
mod framing;
pub mod provider;
pub mod request;
pub mod tool;

pub use connect::connect;
pub use error::ProviderError;
pub use provider::http::{HttpProvider, RetryPolicy};
pub use provider::{
    ChatRequest, EventStream, FinishReason, Message, Provider, StreamEvent, ToolCall,
    ToolDefinition, ToolResult, Usage, WireDecoder,
};
pub use provider::{anthropic, google, ollama, openai, openai_responses, scripted};
