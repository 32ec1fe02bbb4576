//! OpenAI-compatible Chat Completions, streamed as server-sent events:
//! OpenAI itself, OpenRouter, llama.cpp's server, and anything else that
//! speaks `POST /chat/completions` with `stream: true`.
//!
//! [`OpenAiCompatible`] posts to `{base_url}/chat/completions`;
//! [`request_body`] builds the JSON it sends and [`Decoder`] reads the
//! chunks that come back.
//!
//! Indexes: the assistant text is index 0, reasoning is index 1, and the
//! tool call the provider numbers `k` (its `tool_calls[].index`) is index
//! `k + 2`.

use std::collections::BTreeMap;

use jp_conversation::{EventPart, ToolCallPart};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::ProviderError;
pub use crate::http::RetryPolicy;
use crate::http::{Header, Post, post_stream, trim_base_url};
use crate::provider::{
    ChatRequest, EventStream, FinishReason, Message, Provider, StreamEvent, Usage, WireDecoder,
};
use crate::sse::{Latch, SseDecoder, SseEvent, excerpt};

/// The index of the assistant text.
const TEXT_INDEX: usize = 0;
/// The index of the reasoning.
const REASONING_INDEX: usize = 1;
/// The index of the provider's tool call 0.
const FIRST_TOOL_INDEX: usize = 2;

/// An OpenAI-compatible Chat Completions API.
#[derive(Clone)]
pub struct OpenAiCompatible {
    name: String,
    base_url: String,
    api_key: Option<String>,
    retry: RetryPolicy,
}

impl std::fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("retry", &self.retry)
            .finish()
    }
}

impl OpenAiCompatible {
    /// A provider called `name` (`openai`, `openrouter`, `llamacpp`) that
    /// posts to `{base_url}/chat/completions`, where `base_url` already
    /// holds the API's version (`https://api.openai.com/v1`,
    /// `https://openrouter.ai/api/v1`; a trailing `/` is ignored), with
    /// `Authorization: Bearer {api_key}` when a key is given.
    pub fn new(
        name: impl Into<String>,
        base_url: impl Into<String>,
        api_key: Option<String>,
    ) -> Self {
        Self {
            name: name.into(),
            base_url: trim_base_url(base_url.into()),
            api_key,
            retry: RetryPolicy::default(),
        }
    }

    /// The same provider, retrying rate-limit and overload answers as
    /// `retry` says.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }
}

impl Provider for OpenAiCompatible {
    fn name(&self) -> &str {
        &self.name
    }

    fn stream(&self, request: ChatRequest) -> EventStream {
        let headers = self
            .api_key
            .iter()
            .filter(|key| !key.is_empty())
            .map(|key| Header::secret("authorization", format!("Bearer {key}")))
            .collect();
        let post = Post {
            provider: self.name.clone(),
            url: format!("{}/chat/completions", self.base_url),
            headers,
            body: request_body(&request),
            retry: self.retry,
        };
        post_stream(post, Box::new(Decoder::for_provider(self.name.clone())))
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
/// Usage is asked for with `stream_options.include_usage`; the limit is
/// sent as `max_tokens`, which every compatible server reads.
#[must_use]
pub fn request_body(request: &ChatRequest) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        push_message(&mut messages, message);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|tool| {
                let mut function = Map::new();
                function.insert("name".into(), json!(tool.name));
                if let Some(description) = &tool.description {
                    function.insert("description".into(), json!(description));
                }
                function.insert("parameters".into(), tool.parameters.clone());
                json!({"type": "function", "function": function})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("max_tokens".into(), json!(request.max_tokens));
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = request.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    Value::Object(body)
}

fn push_message(messages: &mut Vec<Value>, message: &Message) {
    match message {
        Message::User(text) => messages.push(json!({"role": "user", "content": text})),
        Message::Assistant {
            reasoning: _,
            text,
            tool_calls,
        } => {
            if text.is_empty() && tool_calls.is_empty() {
                return;
            }
            let mut entry = Map::new();
            entry.insert("role".into(), json!("assistant"));
            if !text.is_empty() {
                entry.insert("content".into(), json!(text));
            }
            if !tool_calls.is_empty() {
                let calls = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": Value::Object(call.arguments.clone()).to_string(),
                            },
                        })
                    })
                    .collect();
                entry.insert("tool_calls".into(), Value::Array(calls));
            }
            messages.push(Value::Object(entry));
        }
        Message::ToolResults(results) => {
            for result in results {
                messages.push(json!({
                    "role": "tool",
                    "tool_call_id": result.id,
                    "content": result.content,
                }));
            }
        }
    }
}

/// Decodes a Chat Completions event stream.
///
/// Only choice 0 is read. `delta.content` streams as [`EventPart::Message`]
/// at index 0, `delta.reasoning_content` (or `delta.reasoning`) as
/// [`EventPart::Reasoning`] at index 1. A tool call numbered `k` gets index
/// `k + 2`: [`ToolCallPart::Start`] once its name is known (with its `id`,
/// or `call_{k}` if the server sends none), then its `arguments` text as
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
#[derive(Debug)]
pub struct Decoder {
    provider: String,
    sse: SseDecoder,
    latch: Latch,
    text_open: bool,
    reasoning_open: bool,
    /// The tool calls by the provider's index.
    calls: BTreeMap<usize, Call>,
    /// The provider index of the latest tool-call delta, for servers that
    /// leave `index` out.
    last_call: Option<usize>,
    finished: bool,
    done: bool,
}

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

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A decoder for one response, naming the provider `openai` in errors.
    #[must_use]
    pub fn new() -> Self {
        Self::for_provider("openai")
    }

    /// A decoder for one response, naming the provider `provider` in
    /// errors.
    #[must_use]
    pub fn for_provider(provider: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            sse: SseDecoder::new(),
            latch: Latch::default(),
            text_open: false,
            reasoning_open: false,
            calls: BTreeMap::new(),
            last_call: None,
            finished: false,
            done: false,
        }
    }

    fn decode(&mut self, bytes: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.sse.push(bytes);
        while let Some(event) = self.sse.next_event() {
            let event = event.map_err(|error| self.decode_error(error.to_string()))?;
            self.handle(&event, out)?;
        }
        Ok(())
    }

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
        match arguments {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => entry.pending.push_str(&text),
            Some(other) => entry.pending.push_str(&other.to_string()),
        }
        if !entry.started
            && let Some(name) = &entry.name
        {
            entry.started = true;
            let id = entry.id.clone().unwrap_or_else(|| format!("call_{key}"));
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

impl WireDecoder for Decoder {
    fn feed(&mut self, bytes: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
        let mut latch = std::mem::take(&mut self.latch);
        let result = latch.run(|out| self.decode(bytes, out));
        self.latch = latch;
        result
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        let complete = self.done || self.finished;
        let provider = self.provider.clone();
        self.latch.run(|_| {
            if complete {
                Ok(())
            } else {
                Err(ProviderError::Disconnected {
                    provider,
                    message: "the response ended before a finish reason or `data: [DONE]`"
                        .to_owned(),
                })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use jp_conversation::{FlushedEvent, ToolCallRequest};
    use serde_json::json;

    use super::*;
    use crate::provider::{ToolCall, ToolDefinition, ToolResult};
    use crate::sse::test_support::{build, decode, fixture_bodies, fixture_requests, parts};

    const OPENROUTER: &str = "openrouter_test_anthropic_opus_5_parallel_tool_round_trip.yml";
    const LLAMACPP: &str = "llamacpp_test_tool_call_stream.yml";

    fn part(index: usize, part: EventPart) -> StreamEvent {
        StreamEvent::Part { index, part }
    }

    fn text(index: usize, text: &str) -> StreamEvent {
        part(index, EventPart::Message(text.into()))
    }

    fn start(index: usize, id: &str, name: &str) -> StreamEvent {
        part(
            index,
            EventPart::ToolCall(ToolCallPart::Start {
                id: id.into(),
                name: name.into(),
            }),
        )
    }

    fn chunk(index: usize, text: &str) -> StreamEvent {
        part(
            index,
            EventPart::ToolCall(ToolCallPart::ArgumentChunk(text.into())),
        )
    }

    fn flush(index: usize) -> StreamEvent {
        StreamEvent::Flush { index }
    }

    fn usage(input: u64, output: u64, cached: Option<u64>) -> StreamEvent {
        StreamEvent::Usage(Usage {
            input_tokens: Some(input),
            output_tokens: Some(output),
            cache_read_tokens: cached,
        })
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    fn call(id: &str, name: &str, arguments: Value) -> FlushedEvent {
        FlushedEvent::ToolCallRequest(ToolCallRequest::new(id, name, object(arguments)))
    }

    fn decode_ok(body: &[u8]) -> Vec<StreamEvent> {
        let (events, error) = decode(|| Decoder::for_provider("test"), body);
        assert_eq!(error, None);
        events
    }

    /// A body of `data:` events.
    fn sse(chunks: &[&str]) -> Vec<u8> {
        chunks
            .iter()
            .map(|data| format!("data: {data}\n\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn recorded_openrouter_parallel_tool_calls() {
        let events = decode_ok(&fixture_bodies(OPENROUTER)[0]);
        let list = "toolu_01TVUg5BitZKezwKEnwpHQby";
        let search = "toolu_01HWdXMAbtonx7U5f8wrXi6e";
        // Two finish chunks arrive; the indexes are flushed once.
        assert_eq!(
            events,
            vec![
                text(0, "I"),
                text(0, "'ll call both tools in parallel now."),
                start(2, list, "list_items"),
                chunk(2, "{}"),
                start(3, search, "search_items"),
                chunk(3, "{}"),
                flush(0),
                flush(2),
                flush(3),
                StreamEvent::Finished(FinishReason::ToolUse),
                usage(425, 63, Some(0)),
            ]
        );
        assert_eq!(
            build(&events),
            vec![
                FlushedEvent::Message("I'll call both tools in parallel now.".into()),
                call(list, "list_items", json!({})),
                call(search, "search_items", json!({})),
            ]
        );
    }

    #[test]
    fn recorded_openrouter_answer() {
        let texts = [
            "Both tools have",
            " been called in parallel and completed successfully:\n\n- **list_items** — completed\n- **search_items** — completed\n\nNeither call returned any item data in its output, just a",
            " completion status. If you'd like, let me know what specific items or search criteria you're after (or any parameters these tools accept), and I can re-run",
            " them with the appropriate arguments.",
        ];
        let mut expected = parts(0, &texts, EventPart::Message);
        expected.extend([
            flush(0),
            StreamEvent::Finished(FinishReason::EndTurn),
            usage(164, 110, Some(0)),
        ]);
        let events = decode_ok(&fixture_bodies(OPENROUTER)[1]);
        assert_eq!(events, expected);
        assert_eq!(build(&events), vec![FlushedEvent::Message(texts.concat())]);
    }

    #[test]
    fn recorded_llamacpp_tool_call_in_pieces() {
        let id = "XQaGnE82XyTYGBNOz5nJ4UCK5rTKyxJ3";
        let arguments = [
            "{",
            "\"foo\":\"",
            "test",
            "\"",
            ",\"bar\":\"",
            "[\\\"",
            "foo",
            "\\\",",
            " \\\"",
            "bar",
            "\\\"]",
            "\"",
            "}",
        ];
        let mut expected = vec![start(2, id, "run_me")];
        expected.extend(arguments.iter().map(|piece| chunk(2, piece)));
        expected.extend([flush(2), StreamEvent::Finished(FinishReason::ToolUse)]);
        let events = decode_ok(&fixture_bodies(LLAMACPP)[0]);
        assert_eq!(events, expected);
        assert_eq!(
            build(&events),
            vec![call(
                id,
                "run_me",
                json!({"foo": "test", "bar": "[\"foo\", \"bar\"]"})
            )]
        );
        // The next recorded request sends the same call back.
        let sent = &fixture_requests(LLAMACPP)[1]["messages"][1]["tool_calls"][0];
        assert_eq!(sent["id"], id);
        assert_eq!(sent["function"]["arguments"], arguments.concat());
    }

    #[test]
    fn recorded_llamacpp_answer() {
        let texts = [
            "Great",
            "!",
            " The",
            " tool",
            " ran",
            " successfully",
            " with",
            " the",
            " arguments",
            " `",
            "foo",
            ":",
            " \"",
            "test",
            "\"`",
            " and",
            " `",
            "bar",
            ":",
            " [\"",
            "foo",
            "\",",
            " \"",
            "bar",
            "\"]",
            "`.",
            " The",
            " output",
            " was",
            ":",
            " `",
            "working",
            "!",
            "`.",
            "\n\nLet",
            " me",
            " know",
            " if",
            " you",
            "'d",
            " like",
            " to",
            " try",
            " it",
            " with",
            " different",
            " arguments",
            " or",
            " if",
            " you",
            " need",
            " help",
            " with",
            " anything",
            " else",
            "!",
        ];
        let mut expected = parts(0, &texts, EventPart::Message);
        expected.extend([flush(0), StreamEvent::Finished(FinishReason::EndTurn)]);
        let events = decode_ok(&fixture_bodies(LLAMACPP)[1]);
        assert_eq!(events, expected);
        assert_eq!(build(&events), vec![FlushedEvent::Message(texts.concat())]);
    }

    #[test]
    fn the_request_sends_the_recorded_llamacpp_history() {
        let request = ChatRequest {
            model: "qwen3.5:9b".into(),
            system: None,
            messages: vec![
                Message::User("Please run the tool, providing whatever arguments you want.".into()),
                Message::Assistant {
                    reasoning: None,
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "XQaGnE82XyTYGBNOz5nJ4UCK5rTKyxJ3".into(),
                        name: "run_me".into(),
                        arguments: object(json!({"foo": "test", "bar": "[\"foo\", \"bar\"]"})),
                    }],
                },
                Message::ToolResults(vec![ToolResult {
                    id: "XQaGnE82XyTYGBNOz5nJ4UCK5rTKyxJ3".into(),
                    content: "working!".into(),
                    is_error: false,
                }]),
            ],
            tools: vec![],
            max_tokens: 4096,
            temperature: None,
            top_p: None,
        };
        let recorded = fixture_requests(LLAMACPP)[1]["messages"].clone();
        assert_eq!(
            request_body(&request),
            json!({
                "model": "qwen3.5:9b",
                "messages": recorded,
                "max_tokens": 4096,
                "stream": true,
                "stream_options": {"include_usage": true},
            })
        );
    }

    #[test]
    fn request_body_with_everything() {
        let request = ChatRequest {
            model: "gpt-5".into(),
            system: Some("Be brief.".into()),
            messages: vec![
                Message::User("Make a file.".into()),
                Message::Assistant {
                    reasoning: Some("thinking that is not sent".into()),
                    text: "Creating it.".into(),
                    tool_calls: vec![ToolCall {
                        id: "call_1".into(),
                        name: "fs_create_file".into(),
                        arguments: object(json!({"path": "a.rs", "content": "x"})),
                    }],
                },
                Message::ToolResults(vec![ToolResult {
                    id: "call_1".into(),
                    content: "created a.rs".into(),
                    is_error: false,
                }]),
                Message::Assistant {
                    reasoning: None,
                    text: "Done.".into(),
                    tool_calls: vec![],
                },
                Message::User("Thanks".into()),
            ],
            tools: vec![ToolDefinition {
                name: "fs_create_file".into(),
                description: Some("Create a file.".into()),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            }],
            max_tokens: 1024,
            temperature: Some(0.25),
            top_p: Some(1.0),
        };
        assert_eq!(
            request_body(&request).to_string(),
            json!({
                "model": "gpt-5",
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Make a file."},
                    {"role": "assistant", "content": "Creating it.", "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {
                            "name": "fs_create_file",
                            "arguments": "{\"path\":\"a.rs\",\"content\":\"x\"}",
                        }},
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "created a.rs"},
                    {"role": "assistant", "content": "Done."},
                    {"role": "user", "content": "Thanks"},
                ],
                "tools": [{"type": "function", "function": {
                    "name": "fs_create_file",
                    "description": "Create a file.",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                }}],
                "max_tokens": 1024,
                "temperature": 0.25,
                "top_p": 1.0,
                "stream": true,
                "stream_options": {"include_usage": true},
            })
            .to_string()
        );
    }

    #[test]
    fn reasoning_whole_arguments_and_stop_on_a_tool_call() {
        let body = sse(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Let me"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":" look."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Looking."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"fs_read_file","arguments":"{\"path\":\"a.rs\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":4}}}"#,
            "[DONE]",
            r#"{"choices":[{"index":0,"delta":{"content":"after DONE is ignored"}}]}"#,
        ]);
        let events = decode_ok(&body);
        assert_eq!(
            events,
            vec![
                part(1, EventPart::Reasoning("Let me".into())),
                part(1, EventPart::Reasoning(" look.".into())),
                text(0, "Looking."),
                start(2, "c1", "fs_read_file"),
                chunk(2, "{\"path\":\"a.rs\"}"),
                flush(0),
                flush(1),
                flush(2),
                StreamEvent::Finished(FinishReason::EndTurn),
                usage(7, 9, Some(4)),
            ]
        );
        assert_eq!(
            build(&events),
            vec![
                FlushedEvent::Message("Looking.".into()),
                FlushedEvent::Reasoning("Let me look.".into()),
                call("c1", "fs_read_file", json!({"path": "a.rs"})),
            ]
        );
    }

    #[test]
    fn repeated_finish_chunks_flush_once_and_late_deltas_are_dropped() {
        let body = sse(&[
            r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"late"},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            decode_ok(&body),
            vec![
                text(0, "Hi"),
                flush(0),
                StreamEvent::Finished(FinishReason::EndTurn)
            ]
        );
    }

    #[test]
    fn tool_call_cut_by_length_is_refused() {
        let body = sse(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"fs_create_file","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a.rs\",\"content\":\"fn"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
            "[DONE]",
        ]);
        let events = decode_ok(&body);
        assert_eq!(
            events,
            vec![
                start(2, "c1", "fs_create_file"),
                chunk(2, "{\"path\":\"a.rs\",\"content\":\"fn"),
                flush(2),
                StreamEvent::Finished(FinishReason::MaxTokens),
            ]
        );
        let flushed = build(&events);
        let [FlushedEvent::ToolCallRequest(call)] = flushed.as_slice() else {
            panic!("not one tool call: {flushed:?}");
        };
        assert_eq!(
            call.arguments().unwrap_err().to_string(),
            "arguments are truncated: input ended inside a string at /content"
        );
    }

    #[test]
    fn calls_without_index_or_id_and_arguments_before_the_name() {
        let body = sse(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"one","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"arguments":"{\"x\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"two","arguments":":1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":5,"function":{"name":"three","arguments":{"y":2}}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]);
        let events = decode_ok(&body);
        assert_eq!(
            events,
            vec![
                start(2, "a", "one"),
                chunk(2, "{}"),
                start(3, "b", "two"),
                chunk(3, "{\"x\":1}"),
                start(7, "call_5", "three"),
                chunk(7, "{\"y\":2}"),
                flush(2),
                flush(3),
                flush(7),
                StreamEvent::Finished(FinishReason::ToolUse),
            ]
        );
    }

    #[test]
    fn error_chunk_after_text() {
        let body = sse(&[
            r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#,
            r#"{"error":{"code":502,"message":"Provider returned error"},"choices":[{"index":0,"delta":{},"finish_reason":"error"}]}"#,
        ]);
        assert_eq!(
            decode(|| Decoder::for_provider("openrouter"), &body),
            (
                vec![text(0, "Hi")],
                Some(ProviderError::Api {
                    provider: "openrouter".into(),
                    kind: "502".into(),
                    message: "Provider returned error".into(),
                })
            )
        );
    }

    #[test]
    fn a_body_without_finish_or_done_is_a_disconnection() {
        let body = &fixture_bodies(LLAMACPP)[0];
        let text = std::str::from_utf8(body).unwrap();
        let cut = text
            .find("data: {\"choices\":[{\"finish_reason\":\"tool_calls\"")
            .unwrap();
        let (events, error) = decode(|| Decoder::for_provider("llamacpp"), &body[..cut]);
        assert_eq!(events.len(), 14);
        assert_eq!(
            error.unwrap().to_string(),
            "llamacpp: the connection dropped mid-response: \
             the response ended before a finish reason or `data: [DONE]`"
        );
        // Finished but no [DONE]: complete.
        let cut = text.find("data: [DONE]").unwrap();
        let (events, error) = decode(|| Decoder::for_provider("llamacpp"), &body[..cut]);
        assert_eq!(error, None);
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finished(FinishReason::ToolUse))
        );
    }

    #[test]
    fn invalid_json_names_the_event_and_shows_it() {
        let body = b": OPENROUTER PROCESSING\n\ndata: {\"choices\":[]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hi}]}\n\n";
        let (events, error) = decode(|| Decoder::for_provider("openrouter"), body);
        assert_eq!(events, vec![]);
        assert_eq!(
            error.unwrap().to_string(),
            "openrouter: unreadable response: event at line 5: \
             EOF while parsing a string at line 1 column 38: {\"choices\":[{\"delta\":{\"content\":\"Hi}]}"
        );
        let body = b"data: {\"choices\":[{\"delta\":{\"content\":7}}]}\n\n";
        assert_eq!(
            decode(Decoder::new, body).1.unwrap().to_string(),
            "openai: unreadable response: event at line 1: \
             invalid type: integer `7`, expected a string at line 1 column 33: \
             {\"choices\":[{\"delta\":{\"content\":7}}]}"
        );
    }

    #[test]
    fn provider_basics() {
        let provider = OpenAiCompatible::new(
            "openrouter",
            "https://openrouter.ai/api/v1/",
            Some("k".into()),
        );
        assert_eq!(provider.name(), "openrouter");
        assert_eq!(
            format!("{provider:?}"),
            "OpenAiCompatible { name: \"openrouter\", base_url: \"https://openrouter.ai/api/v1\", \
             api_key: Some(\"<redacted>\"), retry: RetryPolicy { max_attempts: 5, base_delay: 1s, \
             max_delay: 30s } }"
        );
    }
}
