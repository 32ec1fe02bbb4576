//! Anthropic's Messages API, streamed as server-sent events.
//!
//! [`Anthropic`] posts to `{base_url}/v1/messages`; [`request_body`] builds
//! the JSON it sends and its decoder reads the events that come back.
//!
//! Indexes: a streamed part's index is the content block's own `index`
//! (text, thinking and each `tool_use` block are separate blocks), so the
//! numbering is Anthropic's.

use std::borrow::Cow;
use std::collections::BTreeMap;

use jp_conversation::{EventPart, ToolCallPart};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::dialect;
pub use super::http::RetryPolicy;
use super::http::{Api, Header, HttpProvider, Secret};
use super::{ChatRequest, FinishReason, Message, StreamEvent, Usage, WireDecoder};
use crate::decode::{FramedDecoder, Frames};
use crate::error::ProviderError;
use crate::framing::excerpt;
use crate::framing::sse::{SseDecoder, SseEvent};

/// The provider's name, in model ids and messages.
const NAME: &str = "anthropic";

/// The API version jp speaks.
const API_VERSION: &str = "2023-06-01";

/// The Anthropic Messages API.
pub type Anthropic = HttpProvider<MessagesApi>;

impl Anthropic {
    /// A provider that posts to `{base_url}/v1/messages` (`base_url` is
    /// `https://api.anthropic.com` for Anthropic itself; a trailing `/` is
    /// ignored) with `api_key` in the `x-api-key` header. Its requests mark
    /// cache breakpoints ([`Caching::Breakpoints`]), as the config's
    /// default `providers.llm.anthropic.cache = true` asks.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>) -> Self {
        Self::with_caching(base_url, api_key, Caching::Breakpoints)
    }

    /// As [`new`](Self::new), marking cache breakpoints or not as
    /// `caching` says.
    pub fn with_caching(
        base_url: impl Into<String>,
        api_key: impl Into<String>,
        caching: Caching,
    ) -> Self {
        Self::with_api(
            base_url.into(),
            MessagesApi {
                api_key: Secret::new(api_key),
                caching,
            },
        )
    }
}

/// Whether requests ask Anthropic to cache their prefix (see
/// [`request_body`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caching {
    /// No `cache_control` anywhere: the body jp sent before caching.
    Off,
    /// `cache_control` breakpoints on the tools and system prompt and on
    /// the conversation history.
    Breakpoints,
}

impl From<bool> for Caching {
    /// `true` (the config's `cache = true`) is [`Caching::Breakpoints`].
    fn from(cache: bool) -> Self {
        if cache { Self::Breakpoints } else { Self::Off }
    }
}

/// What the Messages API asks of a request: the API key in `x-api-key`
/// and the API version jp speaks; the body of [`request_body`], read back
/// by its decoder.
#[derive(Debug, Clone)]
pub struct MessagesApi {
    api_key: Secret,
    caching: Caching,
}

impl Api for MessagesApi {
    const TYPE_NAME: &'static str = "Anthropic";
    const PATH: &'static str = "/v1/messages";

    fn name(&self) -> &str {
        NAME
    }

    fn api_key(&self) -> &dyn std::fmt::Debug {
        &self.api_key
    }

    fn headers(&self) -> Vec<Header> {
        vec![
            Header::secret("x-api-key", self.api_key.expose()),
            Header::plain("anthropic-version", API_VERSION),
        ]
    }

    fn body<'a>(&self, request: &'a ChatRequest) -> impl Serialize + use<'a> {
        request_body(request, self.caching)
    }

    fn decoders(&self, _request: &ChatRequest) -> impl Fn() -> Box<dyn WireDecoder> + Send + use<> {
        || Box::new(Decoder::new())
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
///
/// With [`Caching::Breakpoints`], `cache_control: {"type": "ephemeral"}`
/// marks where the cached prefix ends (Anthropic caches `tools`, `system`
/// and `messages`, in that order, up to a marked block, and allows four
/// marks). At most three are set:
///
/// - the stable prefix: the system prompt, then sent as one `text` block
///   (a plain string cannot carry the mark), or the last tool when there
///   is no system prompt;
/// - the last block of the history, so that the next step of a tool loop
///   reads all of this request from the cache and pays in full only for
///   what it adds;
/// - the last block before the last assistant response, which is where
///   the previous request ended: it reads what that request wrote even
///   when the response added more blocks than Anthropic looks back over
///   from a mark (about 20, as with many parallel tool calls).
///
/// An empty `text` block is never marked (Anthropic refuses the mark
/// there). With [`Caching::Off`] the body has no mark and the system
/// prompt is a plain string.
#[must_use]
pub fn request_body(request: &ChatRequest, caching: Caching) -> Body<'_> {
    let system = request.system.as_deref().filter(|s| !s.is_empty());
    let mut messages: Vec<OutMessage<'_>> = request.messages.iter().filter_map(message).collect();
    let mut tools: Vec<Tool<'_>> = request
        .tools
        .iter()
        .map(|tool| Tool {
            name: &tool.name,
            description: tool.description.as_deref(),
            input_schema: dialect::anthropic(&tool.parameters),
            cache_control: None,
        })
        .collect();
    let system = match caching {
        Caching::Off => system.map(System::Text),
        Caching::Breakpoints => {
            if system.is_none()
                && let Some(last) = tools.last_mut()
            {
                last.cache_control = Some(CacheControl::EPHEMERAL);
            }
            mark_history(&mut messages);
            system.map(|text| {
                System::Blocks([SystemBlock {
                    kind: "text",
                    text,
                    cache_control: CacheControl::EPHEMERAL,
                }])
            })
        }
    };
    Body {
        model: &request.model,
        max_tokens: request.max_tokens,
        system,
        messages,
        tools,
        temperature: request.temperature,
        top_p: request.top_p,
        stream: true,
    }
}

/// Marks the history's breakpoints (see [`request_body`]): the last
/// block, and the last block of the message before the last assistant
/// response.
fn mark_history(messages: &mut [OutMessage<'_>]) {
    let previous_end = messages
        .iter()
        .rposition(|message| message.role == "assistant")
        .and_then(|assistant| assistant.checked_sub(1));
    let last = messages.len().checked_sub(1);
    for index in [previous_end, last].into_iter().flatten() {
        if let Some(block) = messages[index].content.last_mut()
            && block.cacheable()
        {
            block.cache_control = Some(CacheControl::EPHEMERAL);
        }
    }
}

/// The body [`request_body`] builds. It borrows the request, so a call's
/// arguments are written straight from the conversation into the bytes
/// sent, never copied (issue 14).
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<System<'a>>,
    messages: Vec<OutMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    stream: bool,
}

/// The system prompt: a string, or one marked `text` block when caching.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum System<'a> {
    Text(&'a str),
    Blocks([SystemBlock<'a>; 1]),
}

#[derive(Debug, Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: CacheControl,
}

/// A cache breakpoint: `{"type": "ephemeral"}` (the default five-minute
/// lifetime).
#[derive(Debug, Clone, Copy, Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

impl CacheControl {
    const EPHEMERAL: Self = Self { kind: "ephemeral" };
}

#[derive(Debug, Serialize)]
struct OutMessage<'a> {
    role: &'static str,
    content: Vec<Content<'a>>,
}

/// A content block and, when it ends a cached prefix, its breakpoint.
#[derive(Debug, Serialize)]
struct Content<'a> {
    #[serde(flatten)]
    block: OutBlock<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

impl<'a> From<OutBlock<'a>> for Content<'a> {
    fn from(block: OutBlock<'a>) -> Self {
        Self {
            block,
            cache_control: None,
        }
    }
}

impl Content<'_> {
    /// Whether the block may carry a breakpoint (not an empty `text`).
    fn cacheable(&self) -> bool {
        !matches!(self.block, OutBlock::Text { text } if text.is_empty())
    }
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutBlock<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        is_error: bool,
    },
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    input_schema: Cow<'a, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

/// One message as Anthropic wants it; `None` for an empty assistant turn.
fn message(message: &Message) -> Option<OutMessage<'_>> {
    Some(match message {
        Message::User(text) => OutMessage {
            role: "user",
            content: vec![OutBlock::Text { text }.into()],
        },
        Message::Assistant {
            reasoning: _,
            text,
            tool_calls,
        } => {
            let mut content = Vec::with_capacity(tool_calls.len() + 1);
            if !text.is_empty() {
                content.push(OutBlock::Text { text }.into());
            }
            content.extend(tool_calls.iter().map(|call| {
                OutBlock::ToolUse {
                    id: &call.id,
                    name: &call.name,
                    input: &call.arguments,
                }
                .into()
            }));
            if content.is_empty() {
                return None;
            }
            OutMessage {
                role: "assistant",
                content,
            }
        }
        Message::ToolResults(results) => OutMessage {
            role: "user",
            content: results
                .iter()
                .map(|result| {
                    OutBlock::ToolResult {
                        tool_use_id: &result.id,
                        content: &result.content,
                        is_error: result.is_error,
                    }
                    .into()
                })
                .collect(),
        },
    })
}

/// Decodes a Messages API event stream.
///
/// - `message_start` and `message_delta` report [`Usage`] (the counts so
///   far, merged; Anthropic's `input_tokens` are the uncached ones, so
///   `cache_read_input_tokens` and `cache_creation_input_tokens` are added
///   to them to make [`Usage::input_tokens`]); `message_delta`'s
///   `stop_reason` becomes
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
pub(crate) type Decoder = FramedDecoder<Events>;

/// What [`Decoder`] knows of a response so far.
#[derive(Debug, Default)]
pub(crate) struct Events {
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
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
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
    pub(crate) fn new() -> Self {
        Self::default()
    }
}

impl Frames for Events {
    type Framing = SseDecoder;

    fn provider(&self) -> &str {
        NAME
    }

    fn frame(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.handle(&event, out)
    }

    fn end(
        &mut self,
        _rest: Option<SseEvent>,
        _out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if self.stopped {
            Ok(())
        } else {
            Err(ProviderError::Disconnected {
                provider: NAME.to_owned(),
                message: "the response ended before its `message_stop` event".to_owned(),
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
        self.usage.cache_write_tokens = usage
            .cache_creation_input_tokens
            .or(self.usage.cache_write_tokens);
        // Anthropic counts cached input apart from `input_tokens`; jp's
        // `input_tokens` are all of them, as other providers report.
        // The sum saturates; a count that large is unknown in the end
        // ([`Usage::plausible`]).
        let cached = self
            .usage
            .cache_read_tokens
            .unwrap_or(0)
            .saturating_add(self.usage.cache_write_tokens.unwrap_or(0));
        out.push(StreamEvent::Usage(Usage {
            input_tokens: self
                .usage
                .input_tokens
                .map(|uncached| uncached.saturating_add(cached)),
            ..self.usage
        }));
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

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
