//! Anthropic's Messages API, streamed as server-sent events.
//!
//! [`Anthropic`] posts to `{base_url}/v1/messages`; [`request_body`] builds
//! the JSON it sends and [`Decoder`] reads the events that come back.
//!
//! Indexes: a streamed part's index is the content block's own `index`
//! (text, thinking and each `tool_use` block are separate blocks), so the
//! numbering is Anthropic's.

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

/// The provider's name, in model ids and messages.
const NAME: &str = "anthropic";

/// The API version jp speaks.
const API_VERSION: &str = "2023-06-01";

/// The Anthropic Messages API.
#[derive(Clone)]
pub struct Anthropic {
    base_url: String,
    api_key: String,
    retry: RetryPolicy,
}

impl std::fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anthropic")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("retry", &self.retry)
            .finish()
    }
}

impl Anthropic {
    /// A provider that posts to `{base_url}/v1/messages` (`base_url` is
    /// `https://api.anthropic.com` for Anthropic itself; a trailing `/` is
    /// ignored) with `api_key` in the `x-api-key` header.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>) -> Self {
        Self {
            base_url: trim_base_url(base_url.into()),
            api_key: api_key.into(),
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

impl Provider for Anthropic {
    fn name(&self) -> &str {
        NAME
    }

    fn stream(&self, request: ChatRequest) -> EventStream {
        let post = Post {
            provider: NAME.to_owned(),
            url: format!("{}/v1/messages", self.base_url),
            headers: vec![
                Header::secret("x-api-key", self.api_key.clone()),
                Header::plain("anthropic-version", API_VERSION),
            ],
            body: request_body(&request),
            retry: self.retry,
        };
        post_stream(post, Box::new(Decoder::new()))
    }
}

/// The JSON body of a streaming Messages request.
///
/// Messages become content blocks: user text as a `text` block, an
/// assistant response as a `text` block (when it has text) followed by its
/// `tool_use` blocks, and tool results as `tool_result` blocks of one user
/// message. An assistant response with neither text nor tool calls is left
/// out (Anthropic refuses empty content).
///
/// The model's earlier reasoning is not sent back: Anthropic accepts a
/// `thinking` block only with the signature it streamed, which jp does not
/// keep, and it needs earlier thinking only when extended thinking is on,
/// which these requests never turn on.
#[must_use]
pub fn request_body(request: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(request.max_tokens));
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert("system".into(), json!(system));
    }
    let messages: Vec<Value> = request.messages.iter().filter_map(message).collect();
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|tool| {
                let mut entry = Map::new();
                entry.insert("name".into(), json!(tool.name));
                if let Some(description) = &tool.description {
                    entry.insert("description".into(), json!(description));
                }
                entry.insert("input_schema".into(), tool.parameters.clone());
                Value::Object(entry)
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = request.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

/// One message as Anthropic wants it; `None` for an empty assistant turn.
fn message(message: &Message) -> Option<Value> {
    Some(match message {
        Message::User(text) => json!({
            "role": "user",
            "content": [{"type": "text", "text": text}],
        }),
        Message::Assistant {
            reasoning: _,
            text,
            tool_calls,
        } => {
            let mut content = Vec::new();
            if !text.is_empty() {
                content.push(json!({"type": "text", "text": text}));
            }
            for call in tool_calls {
                content.push(json!({
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": call.arguments,
                }));
            }
            if content.is_empty() {
                return None;
            }
            json!({"role": "assistant", "content": content})
        }
        Message::ToolResults(results) => {
            let content: Vec<Value> = results
                .iter()
                .map(|result| {
                    json!({
                        "type": "tool_result",
                        "tool_use_id": result.id,
                        "content": result.content,
                        "is_error": result.is_error,
                    })
                })
                .collect();
            json!({"role": "user", "content": content})
        }
    })
}

/// Decodes a Messages API event stream.
///
/// - `message_start` and `message_delta` report [`Usage`] (the counts so
///   far, merged); `message_delta`'s `stop_reason` becomes
///   [`StreamEvent::Finished`]: `end_turn` → `EndTurn`, `tool_use` →
///   `ToolUse`, `max_tokens` → `MaxTokens`, anything else → `Other`.
/// - A `text` or `thinking` block yields its non-empty text as
///   [`EventPart::Message`] or [`EventPart::Reasoning`]; a `tool_use`
///   block yields [`ToolCallPart::Start`] and then each non-empty
///   `partial_json` as an [`ToolCallPart::ArgumentChunk`]. Signatures,
///   redacted thinking and block types jp does not know are skipped.
/// - `content_block_stop` flushes the block's index if it produced a part.
/// - `message_stop` ends the stream; `ping` and unknown events are
///   skipped; an `error` event is [`ProviderError::Api`].
///
/// An error found after some events of the same bytes is returned by the
/// next call (`feed` of any bytes, even none, or `finish`), so no event
/// before it is lost.
#[derive(Debug, Default)]
pub struct Decoder {
    sse: SseDecoder,
    latch: Latch,
    blocks: BTreeMap<usize, Block>,
    usage: Usage,
    stopped: bool,
}

/// A content block that has started and not stopped.
#[derive(Debug)]
struct Block {
    kind: BlockKind,
    /// Whether the block produced a part (so it must be flushed).
    produced: bool,
    /// A `tool_use` block's `input` at its start, if not empty: sent as the
    /// arguments if no `input_json_delta` arrives.
    initial_input: Option<String>,
    /// Whether an `input_json_delta` with text arrived.
    got_arguments: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Text,
    Thinking,
    ToolUse,
    /// A block jp does not read (`redacted_thinking`, server tools).
    Skipped,
}

impl BlockKind {
    fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Thinking => "thinking",
            Self::ToolUse => "tool_use",
            Self::Skipped => "skipped",
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: WireMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: WireBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: WireDelta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: WireMessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop {},
    Ping {},
    Error {
        error: WireError,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireMessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    message: String,
}

impl Decoder {
    /// A decoder for one response.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn decode(&mut self, bytes: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.sse.push(bytes);
        while let Some(event) = self.sse.next_event() {
            let event = event.map_err(|error| decode_error(error.to_string()))?;
            self.handle(&event, out)?;
        }
        Ok(())
    }

    fn handle(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if self.stopped {
            return Ok(());
        }
        let wire: WireEvent = serde_json::from_str(&event.data).map_err(|error| {
            decode_error(format!(
                "{}: {error}: {}",
                event.describe(),
                excerpt(&event.data)
            ))
        })?;
        match wire {
            WireEvent::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.report_usage(&usage, out);
                }
            }
            WireEvent::ContentBlockStart {
                index,
                content_block,
            } => self.start_block(event, index, content_block, out)?,
            WireEvent::ContentBlockDelta { index, delta } => {
                self.delta(event, index, delta, out)?;
            }
            WireEvent::ContentBlockStop { index } => {
                let Some(block) = self.blocks.remove(&index) else {
                    return Err(decode_error(format!(
                        "{}: content block {index} stopped without having started",
                        event.describe()
                    )));
                };
                finish_block(index, block, out);
            }
            WireEvent::MessageDelta { delta, usage } => {
                if let Some(usage) = usage {
                    self.report_usage(&usage, out);
                }
                if let Some(reason) = delta.stop_reason {
                    out.push(StreamEvent::Finished(finish_reason(reason)));
                }
            }
            WireEvent::MessageStop {} => {
                // Blocks are stopped before the message; flush any that were
                // not, so every index that got a part is flushed.
                for (index, block) in std::mem::take(&mut self.blocks) {
                    finish_block(index, block, out);
                }
                self.stopped = true;
            }
            WireEvent::Ping {} => {}
            WireEvent::Error { error } => {
                return Err(ProviderError::Api {
                    provider: NAME.to_owned(),
                    kind: error.kind,
                    message: error.message,
                });
            }
            WireEvent::Unknown => {
                tracing::debug!(event = %event.describe(), "skipping an unknown Anthropic event");
            }
        }
        Ok(())
    }

    fn start_block(
        &mut self,
        event: &SseEvent,
        index: usize,
        content_block: WireBlock,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if self.blocks.contains_key(&index) {
            return Err(decode_error(format!(
                "{}: content block {index} started twice",
                event.describe()
            )));
        }
        let mut block = Block {
            kind: BlockKind::Skipped,
            produced: false,
            initial_input: None,
            got_arguments: false,
        };
        match content_block {
            WireBlock::Text { text } => {
                block.kind = BlockKind::Text;
                block.produced =
                    push_part(out, index, !text.is_empty(), || EventPart::Message(text));
            }
            WireBlock::Thinking { thinking } => {
                block.kind = BlockKind::Thinking;
                block.produced = push_part(out, index, !thinking.is_empty(), || {
                    EventPart::Reasoning(thinking)
                });
            }
            WireBlock::ToolUse { id, name, input } => {
                block.kind = BlockKind::ToolUse;
                block.initial_input = input
                    .filter(|input| input.as_object().is_none_or(|map| !map.is_empty()))
                    .map(|input| input.to_string());
                block.produced = push_part(out, index, true, || {
                    EventPart::ToolCall(ToolCallPart::Start { id, name })
                });
            }
            WireBlock::Other => {}
        }
        self.blocks.insert(index, block);
        Ok(())
    }

    fn delta(
        &mut self,
        event: &SseEvent,
        index: usize,
        delta: WireDelta,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let Some(block) = self.blocks.get_mut(&index) else {
            return Err(decode_error(format!(
                "{}: a delta for content block {index}, which has not started",
                event.describe()
            )));
        };
        let (expected, part) = match delta {
            WireDelta::TextDelta { text } => (BlockKind::Text, EventPart::Message(text)),
            WireDelta::ThinkingDelta { thinking } => {
                (BlockKind::Thinking, EventPart::Reasoning(thinking))
            }
            WireDelta::InputJsonDelta { partial_json } => (
                BlockKind::ToolUse,
                EventPart::ToolCall(ToolCallPart::ArgumentChunk(partial_json)),
            ),
            // Signatures and deltas jp does not know.
            WireDelta::Other => return Ok(()),
        };
        if block.kind == BlockKind::Skipped {
            return Ok(());
        }
        if block.kind != expected {
            return Err(decode_error(format!(
                "{}: a {} delta for content block {index}, which is a {} block",
                event.describe(),
                expected.name(),
                block.kind.name()
            )));
        }
        let empty = match &part {
            EventPart::Message(text) | EventPart::Reasoning(text) => text.is_empty(),
            EventPart::ToolCall(ToolCallPart::ArgumentChunk(chunk)) => chunk.is_empty(),
            EventPart::ToolCall(ToolCallPart::Start { .. }) => false,
        };
        if !empty {
            block.got_arguments |= expected == BlockKind::ToolUse;
            block.produced = true;
            out.push(StreamEvent::Part { index, part });
        }
        Ok(())
    }

    fn report_usage(&mut self, usage: &WireUsage, out: &mut Vec<StreamEvent>) {
        self.usage.input_tokens = usage.input_tokens.or(self.usage.input_tokens);
        self.usage.output_tokens = usage.output_tokens.or(self.usage.output_tokens);
        self.usage.cache_read_tokens = usage
            .cache_read_input_tokens
            .or(self.usage.cache_read_tokens);
        out.push(StreamEvent::Usage(self.usage));
    }
}

/// Pushes the part `make` builds at `index` if `when`; returns `when`.
fn push_part(
    out: &mut Vec<StreamEvent>,
    index: usize,
    when: bool,
    make: impl FnOnce() -> EventPart,
) -> bool {
    if when {
        out.push(StreamEvent::Part {
            index,
            part: make(),
        });
    }
    when
}

/// Ends a block: its initial input if nothing streamed, then its flush.
fn finish_block(index: usize, block: Block, out: &mut Vec<StreamEvent>) {
    if let (Some(input), false) = (block.initial_input, block.got_arguments) {
        out.push(StreamEvent::Part {
            index,
            part: EventPart::ToolCall(ToolCallPart::ArgumentChunk(input)),
        });
    }
    if block.produced {
        out.push(StreamEvent::Flush { index });
    }
}

fn finish_reason(reason: String) -> FinishReason {
    match reason.as_str() {
        "end_turn" => FinishReason::EndTurn,
        "tool_use" => FinishReason::ToolUse,
        "max_tokens" => FinishReason::MaxTokens,
        _ => FinishReason::Other(reason),
    }
}

fn decode_error(message: String) -> ProviderError {
    ProviderError::Decode {
        provider: NAME.to_owned(),
        message,
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
        let stopped = self.stopped;
        self.latch.run(|_| {
            if stopped {
                Ok(())
            } else {
                Err(ProviderError::Disconnected {
                    provider: NAME.to_owned(),
                    message: "the response ended before its `message_stop` event".to_owned(),
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

    const TOOL_CALL: &str = "anthropic_test_tool_call_stream.yml";
    const MULTI_TURN: &str = "anthropic_test_multi_turn_conversation.yml";

    fn usage(input: u64, output: u64) -> StreamEvent {
        StreamEvent::Usage(Usage {
            input_tokens: Some(input),
            output_tokens: Some(output),
            cache_read_tokens: Some(0),
        })
    }

    fn part(index: usize, part: EventPart) -> StreamEvent {
        StreamEvent::Part { index, part }
    }

    fn start(id: &str, name: &str) -> EventPart {
        EventPart::ToolCall(ToolCallPart::Start {
            id: id.into(),
            name: name.into(),
        })
    }

    fn chunk(text: &str) -> EventPart {
        EventPart::ToolCall(ToolCallPart::ArgumentChunk(text.into()))
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    fn decode_ok(body: &[u8]) -> Vec<StreamEvent> {
        let (events, error) = decode(Decoder::new, body);
        assert_eq!(error, None);
        events
    }

    #[test]
    fn recorded_tool_call() {
        let body = &fixture_bodies(TOOL_CALL)[0];
        let events = decode_ok(body);
        let id = "toolu_0113bSV1GiCA46VddyWm86oR";
        assert_eq!(
            events,
            vec![
                usage(599, 26),
                part(0, start(id, "run_me")),
                part(0, chunk("{\"bar\": ")),
                part(0, chunk("\"foo\"")),
                part(0, chunk(", \"foo")),
                part(0, chunk("\": \"foo\"}")),
                StreamEvent::Flush { index: 0 },
                usage(599, 71),
                StreamEvent::Finished(FinishReason::ToolUse),
            ]
        );
        assert_eq!(
            build(&events),
            vec![FlushedEvent::ToolCallRequest(ToolCallRequest::new(
                id,
                "run_me",
                object(json!({"bar": "foo", "foo": "foo"}))
            ))]
        );
    }

    #[test]
    fn recorded_answer_to_a_tool_result() {
        let body = &fixture_bodies(TOOL_CALL)[1];
        let texts = [
            "Done",
            "! The tool",
            " ran successfully with the arguments",
            " `",
            "bar",
            "=",
            "foo` and `foo=foo`,",
            " and",
            " returned",
            " the",
            " output:",
            " \"",
            "working!\"",
        ];
        let mut expected = vec![usage(102, 1)];
        expected.extend(parts(0, &texts, EventPart::Message));
        expected.extend([
            StreamEvent::Flush { index: 0 },
            usage(102, 31),
            StreamEvent::Finished(FinishReason::EndTurn),
        ]);
        let events = decode_ok(body);
        assert_eq!(events, expected);
        assert_eq!(build(&events), vec![FlushedEvent::Message(texts.concat())]);
    }

    #[test]
    fn recorded_thinking_then_text() {
        let body = &fixture_bodies(MULTI_TURN)[1];
        let thinking = [
            "The user",
            " is asking me to repeat their previous message",
            ". Their",
            " previous",
            " message was \"Test message\".",
            "\n\nThis",
            " is straight",
            "forward - I should just repeat what",
            " they said.",
        ];
        let mut expected = vec![usage(79, 2)];
        expected.extend(parts(0, &thinking, EventPart::Reasoning));
        expected.push(StreamEvent::Flush { index: 0 });
        expected.extend(parts(1, &["Test", " message"], EventPart::Message));
        expected.extend([
            StreamEvent::Flush { index: 1 },
            usage(79, 46),
            StreamEvent::Finished(FinishReason::EndTurn),
        ]);
        let events = decode_ok(body);
        assert_eq!(events, expected);
        assert_eq!(
            build(&events),
            vec![
                FlushedEvent::Reasoning(thinking.concat()),
                FlushedEvent::Message("Test message".into()),
            ]
        );
    }

    /// Each response of the recorded conversation, assembled, is what the
    /// next recorded request sends back as the assistant's turn.
    #[test]
    fn recorded_conversation_matches_the_history_sent_back() {
        let bodies = fixture_bodies(MULTI_TURN);
        let requests = fixture_requests(MULTI_TURN);
        for (turn, body) in bodies.iter().enumerate() {
            let flushed = build(&decode_ok(body));
            let content: Vec<Value> = flushed
                .iter()
                .map(|item| match item {
                    FlushedEvent::Message(text) => json!({"type": "text", "text": text}),
                    FlushedEvent::Reasoning(text) => json!({"type": "thinking", "thinking": text}),
                    FlushedEvent::ToolCallRequest(call) => json!({
                        "type": "tool_use",
                        "id": call.id,
                        "input": call.arguments().unwrap(),
                        "name": call.name,
                    }),
                })
                .collect();
            let expected = match requests.get(turn + 1) {
                Some(next) => {
                    let messages = next["messages"].as_array().unwrap();
                    let mut sent = messages[messages.len() - 2]["content"].clone();
                    for block in sent.as_array_mut().unwrap() {
                        // jp does not keep signatures (see `request_body`).
                        block.as_object_mut().unwrap().remove("signature");
                    }
                    sent
                }
                None => json!([
                    {"type": "thinking", "thinking": "The user is asking me what the result of the previous tool call was. Looking back at my previous response, I called a tool named \"run_me\" with the parameter `bar=\"foo\"`, and the function result was:\n\n\"The secret code is: 42\"\n\nSo I should tell them that the result was \"The secret code is: 42\"."},
                    {"type": "text", "text": "The result of the previous tool call was:\n\n**The secret code is: 42**"},
                ]),
            };
            assert_eq!(Value::Array(content), expected, "turn {turn}");
        }
    }

    #[test]
    fn the_request_sends_the_recorded_history() {
        let request = ChatRequest {
            model: "claude-haiku-4-5".into(),
            system: None,
            messages: vec![
                Message::User("Test message".into()),
                Message::Assistant {
                    reasoning: None,
                    text: "Hello! I'm Claude, an AI assistant made by Anthropic. Your message came through successfully. \n\nHow can I help you today?".into(),
                    tool_calls: vec![],
                },
                Message::User("Repeat my previous message".into()),
                Message::Assistant {
                    reasoning: Some("The user is asking me to repeat their previous message.".into()),
                    text: "Test message".into(),
                    tool_calls: vec![],
                },
                Message::User("Please run the tool, providing whatever arguments you want.".into()),
                Message::Assistant {
                    reasoning: None,
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "toolu_01DA4zUaee3mDboviuzJpwdE".into(),
                        name: "run_me".into(),
                        arguments: object(json!({"bar": "foo"})),
                    }],
                },
                Message::ToolResults(vec![ToolResult {
                    id: "toolu_01DA4zUaee3mDboviuzJpwdE".into(),
                    content: "The secret code is: 42".into(),
                    is_error: false,
                }]),
                Message::Assistant {
                    reasoning: None,
                    text: "I've run the tool with the argument `bar=\"foo\"`. The tool returned \"The secret code is: 42\". \n\nIs there something specific you'd like me to do with this result?".into(),
                    tool_calls: vec![],
                },
                Message::User("What was the result of the previous tool call?".into()),
            ],
            tools: vec![],
            max_tokens: 64000,
            temperature: None,
            top_p: None,
        };
        let mut recorded = fixture_requests(MULTI_TURN)[4]["messages"].clone();
        // The recorded client sent the thinking block back; jp leaves it out
        // (see `request_body`).
        for message in recorded.as_array_mut().unwrap() {
            message["content"]
                .as_array_mut()
                .unwrap()
                .retain(|block| block["type"] != "thinking");
        }
        let body = request_body(&request);
        assert_eq!(body["messages"], recorded);
        assert_eq!(
            body,
            json!({
                "model": "claude-haiku-4-5",
                "max_tokens": 64000,
                "messages": recorded,
                "stream": true,
            })
        );
    }

    #[test]
    fn request_body_with_everything() {
        let request = ChatRequest {
            model: "claude-sonnet-4-5".into(),
            system: Some("Be brief.".into()),
            messages: vec![
                Message::User("Make a file.".into()),
                Message::Assistant {
                    reasoning: None,
                    text: "Creating it.".into(),
                    tool_calls: vec![
                        ToolCall {
                            id: "toolu_1".into(),
                            name: "fs_create_file".into(),
                            arguments: object(json!({"path": "a.rs", "content": ""})),
                        },
                        ToolCall {
                            id: "toolu_2".into(),
                            name: "fs_list_files".into(),
                            arguments: Map::new(),
                        },
                    ],
                },
                Message::ToolResults(vec![
                    ToolResult {
                        id: "toolu_1".into(),
                        content: "created a.rs".into(),
                        is_error: false,
                    },
                    ToolResult {
                        id: "toolu_2".into(),
                        content: "declined by policy".into(),
                        is_error: true,
                    },
                ]),
                Message::Assistant {
                    reasoning: None,
                    text: String::new(),
                    tool_calls: vec![],
                },
            ],
            tools: vec![
                ToolDefinition {
                    name: "fs_create_file".into(),
                    description: Some("Create a file.".into()),
                    parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
                },
                ToolDefinition {
                    name: "fs_list_files".into(),
                    description: None,
                    parameters: json!({"type": "object", "properties": {}}),
                },
            ],
            max_tokens: 1024,
            temperature: Some(0.5),
            top_p: Some(0.9),
        };
        assert_eq!(
            request_body(&request).to_string(),
            json!({
                "model": "claude-sonnet-4-5",
                "max_tokens": 1024,
                "system": "Be brief.",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Make a file."}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Creating it."},
                        {"type": "tool_use", "id": "toolu_1", "name": "fs_create_file",
                         "input": {"path": "a.rs", "content": ""}},
                        {"type": "tool_use", "id": "toolu_2", "name": "fs_list_files", "input": {}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1",
                         "content": "created a.rs", "is_error": false},
                        {"type": "tool_result", "tool_use_id": "toolu_2",
                         "content": "declined by policy", "is_error": true},
                    ]},
                ],
                "tools": [
                    {"name": "fs_create_file", "description": "Create a file.",
                     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
                    {"name": "fs_list_files", "input_schema": {"type": "object", "properties": {}}},
                ],
                "temperature": 0.5,
                "top_p": 0.9,
                "stream": true,
            })
            .to_string()
        );
    }

    /// A body made of `data` lines, each its own event.
    fn sse(events: &[&str]) -> Vec<u8> {
        events
            .iter()
            .map(|data| format!("event: x\ndata: {data}\n\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn error_event_after_text() {
        let body = sse(&[
            r#"{"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi"}}"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"never seen"}}"#,
        ]);
        assert_eq!(
            decode(Decoder::new, &body),
            (
                vec![
                    StreamEvent::Usage(Usage {
                        input_tokens: Some(3),
                        output_tokens: Some(1),
                        cache_read_tokens: None,
                    }),
                    part(0, EventPart::Message("Hi".into())),
                ],
                Some(ProviderError::Api {
                    provider: "anthropic".into(),
                    kind: "overloaded_error".into(),
                    message: "Overloaded".into(),
                })
            )
        );
    }

    #[test]
    fn tool_call_cut_by_max_tokens_is_refused() {
        let body = sse(&[
            r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Writing."}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_9","name":"fs_create_file","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"src/a.rs\", \"content\": \"fn ma"}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":20}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        let events = decode_ok(&body);
        assert_eq!(
            events[events.len() - 2..],
            [
                StreamEvent::Usage(Usage {
                    input_tokens: Some(10),
                    output_tokens: Some(20),
                    cache_read_tokens: None,
                }),
                StreamEvent::Finished(FinishReason::MaxTokens),
            ]
        );
        let flushed = build(&events);
        assert_eq!(flushed[0], FlushedEvent::Message("Writing.".into()));
        let FlushedEvent::ToolCallRequest(call) = &flushed[1] else {
            panic!("not a tool call: {flushed:?}");
        };
        assert_eq!(
            (call.id.as_str(), call.name.as_str()),
            ("toolu_9", "fs_create_file")
        );
        assert_eq!(
            call.arguments().unwrap_err().to_string(),
            "arguments are truncated: input ended inside a string at /content"
        );
        assert_eq!(
            call.received_arguments(),
            &object(json!({"path": "src/a.rs"}))
        );
    }

    #[test]
    fn a_body_without_message_stop_is_a_disconnection() {
        let body = &fixture_bodies(TOOL_CALL)[0];
        let cut = body.len()
            - "event: message_stop\ndata: {\"type\":\"message_stop\"               }\n\n".len();
        let (events, error) = decode(Decoder::new, &body[..cut]);
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finished(FinishReason::ToolUse))
        );
        assert_eq!(
            error.unwrap().to_string(),
            "anthropic: the connection dropped mid-response: \
             the response ended before its `message_stop` event"
        );
    }

    #[test]
    fn invalid_json_names_the_event_and_shows_it() {
        let body = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n\
                     event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\n\n";
        let (events, error) = decode(Decoder::new, body);
        assert_eq!(events, vec![]);
        assert_eq!(
            error.unwrap().to_string(),
            "anthropic: unreadable response: event `content_block_start` (line 4): \
             EOF while parsing a value at line 1 column 40: \
             {\"type\":\"content_block_start\",\"index\":0,"
        );
    }

    #[test]
    fn structural_errors_name_the_block() {
        let delta_first = sse(&[
            r#"{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}"#,
        ]);
        assert_eq!(
            decode(Decoder::new, &delta_first).1.unwrap().to_string(),
            "anthropic: unreadable response: event `x` (line 1): \
             a delta for content block 3, which has not started"
        );
        let wrong_kind = sse(&[
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}"#,
        ]);
        assert_eq!(
            decode(Decoder::new, &wrong_kind).1.unwrap().to_string(),
            "anthropic: unreadable response: event `x` (line 4): \
             a tool_use delta for content block 0, which is a text block"
        );
        let missing_field = sse(&[r#"{"type":"content_block_stop"}"#]);
        assert_eq!(
            decode(Decoder::new, &missing_field).1.unwrap().to_string(),
            "anthropic: unreadable response: event `x` (line 1): \
             missing field `index`: {\"type\":\"content_block_stop\"}"
        );
    }

    #[test]
    fn unknown_events_blocks_and_deltas_are_skipped() {
        let body = sse(&[
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"xyz"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"something_new","x":1}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"brand_new_event"}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"n","input":{"a":1}}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"message_stop"}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"after the end"}}"#,
        ]);
        assert_eq!(
            decode_ok(&body),
            vec![
                part(1, start("t", "n")),
                part(1, chunk("{\"a\":1}")),
                StreamEvent::Flush { index: 1 },
            ]
        );
    }

    #[test]
    fn provider_basics() {
        let provider = Anthropic::new("http://localhost:1234/", "sk-secret");
        assert_eq!(provider.name(), "anthropic");
        assert_eq!(
            format!("{provider:?}"),
            "Anthropic { base_url: \"http://localhost:1234\", api_key: \"<redacted>\", \
             retry: RetryPolicy { max_attempts: 5, base_delay: 1s, max_delay: 30s } }"
        );
    }
}
