//! LLM providers, their wire decoders, and local tool execution.
//!
//! - [`Provider`] streams a response as typed [`StreamEvent`]s; the
//!   providers are [`anthropic`] (Messages API, SSE), [`openai`]
//!   (OpenAI-compatible Chat Completions, SSE), [`ollama`] (native
//!   `/api/chat`, NDJSON) and [`scripted`] (an offline script).
//! - [`connect`] builds the provider a model id names, from the config.
//! - [`request`] turns a conversation and the configured tools into a
//!   [`ChatRequest`].
//! - [`tool`] runs local tools as processes speaking `jp_tool`'s protocol.

pub mod anthropic;
pub mod call_ids;
mod connect;
pub mod error;
mod function_tool;
mod http;
mod ndjson;
pub mod ollama;
pub mod openai;
pub mod provider;
pub mod request;
pub mod scripted;
mod sse;
pub mod tool;

pub use connect::connect;
pub use error::ProviderError;
pub use http::RetryPolicy;
pub use provider::{
    ChatRequest, EventStream, FinishReason, Message, Provider, StreamEvent, ToolCall,
    ToolDefinition, ToolResult, Usage, WireDecoder,
};
