//! The tool definitions of the Chat Completions shape, which OpenAI-compatible
//! servers and Ollama share: `{"type": "function", "function": {...}}`.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::{ToolDefinition, dialect};

/// One tool definition as written in a request body, borrowing the
/// [`ToolDefinition`].
#[derive(Debug, Serialize)]
pub(crate) struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Debug, Serialize)]
struct Function<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    parameters: Cow<'a, Value>,
}

/// `tools` as function tools, in order, each schema in OpenAI's dialect.
pub(crate) fn function_tools(tools: &[ToolDefinition]) -> Vec<FunctionTool<'_>> {
    tools
        .iter()
        .map(|tool| FunctionTool {
            kind: "function",
            function: Function {
                name: &tool.name,
                description: tool.description.as_deref(),
                parameters: dialect::openai(&tool.parameters),
            },
        })
        .collect()
}
