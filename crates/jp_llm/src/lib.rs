//! LLM providers, their wire decoders, and tool execution.
//!
//! Nothing lives here yet: providers arrive with `jp query`.
