//! OpenAI-compatible Chat Completions, streamed as server-sent events:
//! OpenAI itself, OpenRouter, llama.cpp's server, and anything else that
//! speaks `POST /chat/completions` with `stream: true`.
//!
//! [`OpenAiCompatible`] posts to `{base_url}/chat/completions`;
//! [`request_body`] builds the JSON it sends and its decoder reads the
//! chunks that come back. The servers differ in one field of the request:
//! see [`token_limit_field`].
//!
//! Indexes: the assistant text is index 0, reasoning is index 1, and the
//! tool call the provider numbers `k` (its `tool_calls[].index`) is index
//! `k + 2`.

use std::collections::BTreeMap;

use jp_conversation::{EventPart, ToolCallPart};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::function_tool::{FunctionTool, function_tools};
pub use super::http::RetryPolicy;
use super::http::{Api, Header, HttpProvider, Secret, bearer};
use super::{ChatRequest, FinishReason, Message, StreamEvent, Usage, WireDecoder};
use crate::call_ids::CallIds;
use crate::decode::{FramedDecoder, Frames};
use crate::error::ProviderError;
use crate::framing::excerpt;
use crate::framing::sse::{SseDecoder, SseEvent};

/// The name of OpenAI's own API among the compatible providers.
const OPENAI: &str = "openai";

/// The index of the assistant text.
const TEXT_INDEX: usize = 0;
/// The index of the reasoning.
const REASONING_INDEX: usize = 1;
/// The index of the provider's tool call 0.
const FIRST_TOOL_INDEX: usize = 2;

/// An OpenAI-compatible Chat Completions API.
pub type OpenAiCompatible = HttpProvider<ChatCompletionsApi>;

impl OpenAiCompatible {
    /// A provider called `name` (`openai`, `openrouter`, `llamacpp`) that
    /// posts to `{base_url}/chat/completions`, where `base_url` already
    /// holds the API's version (`https://api.openai.com/v1`,
    /// `https://openrouter.ai/api/v1`; a trailing `/` is ignored), with
    /// `Authorization: Bearer {api_key}` when a key is given. The name also
    /// picks the token-limit field (see [`token_limit_field`]).
    pub fn new(
        name: impl Into<String>,
        base_url: impl Into<String>,
        api_key: Option<String>,
    ) -> Self {
        Self::with_api(
            base_url.into(),
            ChatCompletionsApi {
                name: name.into(),
                api_key: api_key.map(Secret::new),
            },
        )
    }
}

/// What a Chat Completions API asks of a request: the key, if any, as a
/// bearer token; the body of [`request_body`] for the provider's name, read
/// back by its decoder.
#[derive(Debug, Clone)]
pub struct ChatCompletionsApi {
    name: String,
    api_key: Option<Secret>,
}

impl Api for ChatCompletionsApi {
    const TYPE_NAME: &'static str = "OpenAiCompatible";
    const PATH: &'static str = "/chat/completions";

    fn name(&self) -> &str {
        &self.name
    }

    fn configured_name(&self) -> Option<&str> {
        Some(&self.name)
    }

    fn api_key(&self) -> &dyn std::fmt::Debug {
        &self.api_key
    }

    fn headers(&self) -> Vec<Header> {
        bearer(self.api_key.as_ref())
    }

    fn body<'a>(&self, request: &'a ChatRequest) -> impl Serialize + use<'a> {
        request_body(&self.name, request)
    }

    fn decoders(&self, request: &ChatRequest) -> impl Fn() -> Box<dyn WireDecoder> + Send + use<> {
        let name = self.name.clone();
        let ids = CallIds::of(request);
        move || Box::new(Decoder::for_provider(name.clone()).with_call_ids(ids.clone()))
    }
}

/// The JSON body of a streaming Chat Completions request.
///
/// The system prompt is a `system` message; an assistant response is one
/// `assistant` message with its text as `content` (left out when empty)
/// and its calls as `tool_calls`, whose `arguments` are JSON text; each
/// tool result is a `tool` message. An assistant response with neither
/// text nor tool calls is left out. A failed tool result is sent like any
/// other (the API has no error flag; its text says what went wrong).
///
/// The model's earlier reasoning is not sent back: Chat Completions has no
/// standard place for it, and the servers that accept one drop it from
/// earlier turns anyway.
///
/// Usage is asked for with `stream_options.include_usage`; the token limit
/// goes in the field [`token_limit_field`] names for `provider` (the
/// provider's name, as given to [`OpenAiCompatible::new`]).
#[must_use]
pub fn request_body<'a>(provider: &str, request: &'a ChatRequest) -> Body<'a> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(OutMessage::System { content: system });
    }
    for message in &request.messages {
        push_message(&mut messages, message);
    }
    Body {
        model: &request.model,
        messages,
        tools: function_tools(&request.tools),
        token_limit: TokenLimit {
            field: token_limit_field(provider),
            value: request.max_tokens,
        },
        temperature: request.temperature,
        top_p: request.top_p,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
    }
}

/// The body [`request_body`] builds. It borrows the request, so a call's
/// arguments are written straight from the conversation into the bytes
/// sent, never copied (issue 14).
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    model: &'a str,
    messages: Vec<OutMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<FunctionTool<'a>>,
    #[serde(flatten)]
    token_limit: TokenLimit,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    stream: bool,
    stream_options: StreamOptions,
}

/// The token limit, under the name [`token_limit_field`] gives.
#[derive(Debug)]
struct TokenLimit {
    field: &'static str,
    value: u32,
}

impl Serialize for TokenLimit {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(self.field, &self.value)?;
        map.end()
    }
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum OutMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<OutCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Debug, Serialize)]
struct OutCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: OutFunction<'a>,
}

#[derive(Debug, Serialize)]
struct OutFunction<'a> {
    name: &'a str,
    arguments: JsonText<'a>,
}

/// A value written as a JSON string holding its JSON text, as Chat
/// Completions wants a call's arguments; the text is escaped as it is
/// produced, without a copy of it in memory.
#[derive(Debug)]
struct JsonText<'a>(&'a Value);

impl Serialize for JsonText<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self.0)
    }
}

/// The request field that carries the token limit for `provider`.
///
/// OpenAI's own API (the provider named `openai`) wants
/// `max_completion_tokens`: it deprecated `max_tokens` and refuses it for
/// its reasoning models. Every other compatible server (OpenRouter,
/// llama.cpp, vLLM) reads `max_tokens`, and not all of them read the newer
/// name.
#[must_use]
pub fn token_limit_field(provider: &str) -> &'static str {
    if provider == OPENAI {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

fn push_message<'a>(messages: &mut Vec<OutMessage<'a>>, message: &'a Message) {
    match message {
        Message::User(text) => messages.push(OutMessage::User { content: text }),
        Message::Assistant {
            reasoning: _,
            text,
            tool_calls,
        } => {
            if text.is_empty() && tool_calls.is_empty() {
                return;
            }
            messages.push(OutMessage::Assistant {
                content: Some(text.as_str()).filter(|text| !text.is_empty()),
                tool_calls: tool_calls
                    .iter()
                    .map(|call| OutCall {
                        id: &call.id,
                        kind: "function",
                        function: OutFunction {
                            name: &call.name,
                            arguments: JsonText(&call.arguments),
                        },
                    })
                    .collect(),
            });
        }
        Message::ToolResults(results) => {
            messages.extend(results.iter().map(|result| OutMessage::Tool {
                tool_call_id: &result.id,
                content: &result.content,
            }));
        }
    }
}

/// Decodes a Chat Completions event stream.
///
/// Only choice 0 is read. `delta.content` streams as [`EventPart::Message`]
/// at index 0, `delta.reasoning_content` (or `delta.reasoning`) as
/// [`EventPart::Reasoning`] at index 1. A tool call numbered `k` gets index
/// `k + 2`: [`ToolCallPart::Start`] once its name is known (with its `id`,
/// or one from [`CallIds`] if the server sends none), then its `arguments` text as
/// [`ToolCallPart::ArgumentChunk`]s, whether they come whole (llama.cpp) or
/// in pieces; empty pieces are skipped.
///
/// The first `finish_reason` flushes every index that got a part, in index
/// order, then reports [`StreamEvent::Finished`] (`stop` → `EndTurn`,
/// `tool_calls` → `ToolUse`, `length` → `MaxTokens`, anything else →
/// `Other`). Repeated finish chunks (OpenRouter sends two) change nothing,
/// and text or tool-call deltas after the finish are dropped with a
/// warning: their indexes were already flushed. `usage` reports
/// [`Usage`]. A `{"error": ...}` chunk is [`ProviderError::Api`].
///
/// The stream is complete at `data: [DONE]`, or once a `finish_reason`
/// arrived (some servers end the body without `[DONE]`); ending before
/// either is [`ProviderError::Disconnected`].
///
/// An error found after some events of the same bytes is returned by the
/// next call (`feed` of any bytes, even none, or `finish`), so no event
/// before it is lost.
pub(crate) type Decoder = FramedDecoder<Events>;

/// What [`Decoder`] knows of a response so far.
#[derive(Debug)]
pub(crate) struct Events {
    provider: String,
    text_open: bool,
    reasoning_open: bool,
    /// The tool calls by the provider's index.
    calls: BTreeMap<usize, Call>,
    /// The provider index of the latest tool-call delta, for servers that
    /// leave `index` out.
    last_call: Option<usize>,
    /// Argument text held for calls whose name has not arrived, in bytes.
    held: usize,
    ids: CallIds,
    finished: bool,
    done: bool,
}

/// The most argument text held, over all calls, for calls whose tool's
/// name has not arrived yet: what the argument parser takes of one call
/// ([`ParserLimits::DEFAULT_MAX_SIZE`]).
const MAX_HELD_ARGUMENTS: usize = jp_conversation::ParserLimits::DEFAULT_MAX_SIZE;

/// A tool call being streamed.
#[derive(Debug, Default)]
struct Call {
    id: Option<String>,
    name: Option<String>,
    started: bool,
    /// Argument text that arrived before the name.
    pending: String,
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    /// JSON text, as the API defines it; some servers send an object.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<WireUsageDetails>,
}

#[derive(Deserialize)]
struct WireUsageDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl Decoder {
    /// A decoder for one response, naming the provider `openai` in errors.
    #[must_use]
    pub(crate) fn new() -> Self {
        Self::for_provider(OPENAI)
    }

    /// A decoder for one response, naming the provider `provider` in
    /// errors.
    #[must_use]
    pub(crate) fn for_provider(provider: impl Into<String>) -> Self {
        Self::with_frames(Events {
            provider: provider.into(),
            text_open: false,
            reasoning_open: false,
            calls: BTreeMap::new(),
            last_call: None,
            held: 0,
            ids: CallIds::default(),
            finished: false,
            done: false,
        })
    }

    /// The same decoder, making up the ids of calls that come without one
    /// from `ids` (new to the conversation).
    #[must_use]
    pub(crate) fn with_call_ids(mut self, ids: CallIds) -> Self {
        self.frames_mut().ids = ids;
        self
    }
}

impl Frames for Events {
    type Framing = SseDecoder;

    fn provider(&self) -> &str {
        &self.provider
    }

    fn frame(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.handle(&event, out)
    }

    fn end(
        &mut self,
        _rest: Option<SseEvent>,
        _out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if self.done || self.finished {
            Ok(())
        } else {
            Err(ProviderError::Disconnected {
                provider: self.provider.clone(),
                message: "the response ended before a finish reason or `data: [DONE]`".to_owned(),
            })
        }
    }
}

impl Events {
    fn handle(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        if event.data.trim() == "[DONE]" {
            if !self.finished {
                self.flush_all(event, out)?;
            }
            self.done = true;
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(&event.data).map_err(|error| {
            self.decode_error(format!(
                "{}: {error}: {}",
                event.describe(),
                excerpt(&event.data)
            ))
        })?;
        if let Some(error) = chunk.error.filter(|error| !error.is_null()) {
            return Err(self.api_error(&error));
        }
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.is_some_and(|index| index != 0) {
                continue;
            }
            if let Some(delta) = choice.delta {
                self.delta(event, delta, out)?;
            }
            if let Some(reason) = choice.finish_reason
                && !self.finished
            {
                self.flush_all(event, out)?;
                self.finished = true;
                out.push(StreamEvent::Finished(finish_reason(reason)));
            }
        }
        if let Some(usage) = chunk.usage {
            out.push(StreamEvent::Usage(Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
                cache_read_tokens: usage
                    .prompt_tokens_details
                    .and_then(|details| details.cached_tokens),
                cache_write_tokens: None,
            }));
        }
        Ok(())
    }

    fn delta(
        &mut self,
        event: &SseEvent,
        delta: Delta,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let content = delta.content.filter(|text| !text.is_empty());
        let reasoning = delta
            .reasoning_content
            .filter(|text| !text.is_empty())
            .or(delta.reasoning.filter(|text| !text.is_empty()));
        let calls = delta.tool_calls.unwrap_or_default();
        if self.finished {
            if content.is_some() || reasoning.is_some() || !calls.is_empty() {
                tracing::warn!(
                    provider = %self.provider,
                    event = %event.describe(),
                    "dropping a delta that arrived after the finish reason"
                );
            }
            return Ok(());
        }
        if let Some(text) = reasoning {
            self.reasoning_open = true;
            out.push(StreamEvent::Part {
                index: REASONING_INDEX,
                part: EventPart::Reasoning(text),
            });
        }
        if let Some(text) = content {
            self.text_open = true;
            out.push(StreamEvent::Part {
                index: TEXT_INDEX,
                part: EventPart::Message(text),
            });
        }
        for call in calls {
            self.tool_call(event, call, out)?;
        }
        Ok(())
    }

    fn tool_call(
        &mut self,
        event: &SseEvent,
        call: WireToolCall,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let id = call.id.filter(|id| !id.is_empty());
        let key = match call.index {
            Some(key) => key,
            // No index: a new id is a new call, anything else continues the
            // latest one.
            None => match (&id, self.last_call) {
                (Some(id), _) if !self.calls.values().any(|c| c.id.as_ref() == Some(id)) => {
                    self.calls.keys().next_back().map_or(0, |last| last + 1)
                }
                (_, Some(last)) => last,
                (_, None) => 0,
            },
        };
        let Some(index) = key.checked_add(FIRST_TOOL_INDEX) else {
            return Err(self.decode_error(format!(
                "{}: tool call index {key} is out of range",
                event.describe()
            )));
        };
        self.last_call = Some(key);
        let (name, arguments) = match call.function {
            Some(function) => (function.name, function.arguments),
            None => (None, None),
        };
        let entry = self.calls.entry(key).or_default();
        if entry.id.is_none() {
            entry.id = id;
        }
        if entry.name.is_none() {
            entry.name = name.filter(|name| !name.is_empty());
        }
        let before = entry.pending.len();
        match arguments {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => entry.pending.push_str(&text),
            Some(other) => entry.pending.push_str(&other.to_string()),
        }
        // Text held for calls whose tool is not named yet is bounded like
        // the parser bounds a call: no tool's limit applies before its name.
        if !entry.started {
            self.held += entry.pending.len() - before;
            if entry.name.is_some() {
                self.held -= entry.pending.len();
            } else if self.held > MAX_HELD_ARGUMENTS {
                return Err(self.decode_error(format!(
                    "{}: tool calls sent more than {} MiB of arguments before their tool's name",
                    event.describe(),
                    MAX_HELD_ARGUMENTS / (1024 * 1024)
                )));
            }
        }
        if !entry.started
            && let Some(name) = &entry.name
        {
            entry.started = true;
            let id = match entry.id.clone() {
                Some(id) => {
                    self.ids.note(&id);
                    id
                }
                None => self.ids.fresh(),
            };
            out.push(StreamEvent::Part {
                index,
                part: EventPart::ToolCall(ToolCallPart::Start {
                    id,
                    name: name.clone(),
                }),
            });
        }
        if entry.started && !entry.pending.is_empty() {
            out.push(StreamEvent::Part {
                index,
                part: EventPart::ToolCall(ToolCallPart::ArgumentChunk(std::mem::take(
                    &mut entry.pending,
                ))),
            });
        }
        Ok(())
    }

    /// Flushes every index that got a part, in index order.
    fn flush_all(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if std::mem::take(&mut self.text_open) {
            out.push(StreamEvent::Flush { index: TEXT_INDEX });
        }
        if std::mem::take(&mut self.reasoning_open) {
            out.push(StreamEvent::Flush {
                index: REASONING_INDEX,
            });
        }
        for (key, call) in std::mem::take(&mut self.calls) {
            if call.started {
                out.push(StreamEvent::Flush {
                    index: key + FIRST_TOOL_INDEX,
                });
            } else {
                return Err(self.decode_error(format!(
                    "{}: tool call {key} ended without a tool name",
                    event.describe()
                )));
            }
        }
        Ok(())
    }

    fn api_error(&self, error: &Value) -> ProviderError {
        let text = |value: Option<&Value>| match value {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Number(number)) => Some(number.to_string()),
            _ => None,
        };
        let (kind, message) = match error {
            Value::String(message) => (None, Some(message.clone())),
            _ => (
                text(error.get("type")).or_else(|| text(error.get("code"))),
                text(error.get("message")),
            ),
        };
        ProviderError::Api {
            provider: self.provider.clone(),
            kind: kind.unwrap_or_else(|| "error".to_owned()),
            message: message.unwrap_or_else(|| error.to_string()),
        }
    }

    fn decode_error(&self, message: String) -> ProviderError {
        ProviderError::Decode {
            provider: self.provider.clone(),
            message,
        }
    }
}

fn finish_reason(reason: String) -> FinishReason {
    match reason.as_str() {
        "stop" => FinishReason::EndTurn,
        "tool_calls" | "function_call" => FinishReason::ToolUse,
        "length" => FinishReason::MaxTokens,
        _ => FinishReason::Other(reason),
    }
}

#[cfg(test)]
#[path = "openai_tests.rs"]
mod tests;
