//! Google's Gemini API (`streamGenerateContent`), streamed as server-sent
//! events.
//!
//! [`Google`] posts to
//! `{base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse`;
//! [`request_body`] builds the JSON it sends and its decoder reads the
//! events that come back (each one a whole `GenerateContentResponse`, the
//! lines ending in CRLF).
//!
//! Indexes: the assistant text is index 0, reasoning (`thought` parts) is
//! index 1, and the function calls get 2, 3, ... in the order they arrive.

use jp_conversation::{EventPart, ToolCallPart};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use super::http::RetryPolicy;
use super::http::{Api, Header, HttpProvider, Secret};
use super::{ChatRequest, FinishReason, Message, StreamEvent, ToolDefinition, Usage, WireDecoder};
use crate::call_ids::CallIds;
use crate::decode::{FramedDecoder, Frames};
use crate::error::ProviderError;
use crate::framing::sse::{SseDecoder, SseError, SseEvent};
use crate::framing::{Framing, excerpt};

pub(super) mod schema;

/// The provider's name, in model ids and messages.
const NAME: &str = "google";

/// The index of the assistant text.
const TEXT_INDEX: usize = 0;
/// The index of the reasoning.
const REASONING_INDEX: usize = 1;
/// The index of the first function call.
const FIRST_TOOL_INDEX: usize = 2;

/// The thought signature Google documents for a function call whose own
/// signature was not kept: Gemini 3 refuses a history whose calls carry
/// none, and jp does not store the opaque signatures it streams.
const NO_SIGNATURE: &str = "skip_thought_signature_validator";

/// Google's Gemini API.
pub type Google = HttpProvider<GeminiApi>;

impl Google {
    /// A provider that posts to
    /// `{base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse`
    /// (`base_url` is `https://generativelanguage.googleapis.com` for Google
    /// itself; a trailing `/` is ignored) with `api_key` in the
    /// `x-goog-api-key` header.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>) -> Self {
        Self::with_api(
            base_url.into(),
            GeminiApi {
                api_key: Secret::new(api_key),
            },
        )
    }
}

/// What the Gemini API asks of a request: the model in the path, the API
/// key in `x-goog-api-key`; the body of [`request_body`], read back by its
/// decoder.
#[derive(Debug, Clone)]
pub struct GeminiApi {
    api_key: Secret,
}

impl Api for GeminiApi {
    const TYPE_NAME: &'static str = "Google";
    /// The models' collection; [`path`](Api::path) adds the model and the
    /// method.
    const PATH: &'static str = "/v1beta/models";

    fn path(&self, request: &ChatRequest) -> String {
        format!(
            "{}/{}:streamGenerateContent?alt=sse",
            Self::PATH,
            request.model
        )
    }

    fn name(&self) -> &str {
        NAME
    }

    fn api_key(&self) -> &dyn std::fmt::Debug {
        &self.api_key
    }

    fn headers(&self) -> Vec<Header> {
        vec![Header::secret("x-goog-api-key", self.api_key.expose())]
    }

    fn body<'a>(&self, request: &'a ChatRequest) -> impl Serialize + use<'a> {
        request_body(request)
    }

    fn decoders(&self, request: &ChatRequest) -> impl Fn() -> Box<dyn WireDecoder> + Send + use<> {
        let ids = CallIds::of(request);
        move || Box::new(Decoder::new().with_call_ids(ids.clone()))
    }
}

/// The JSON body of a `streamGenerateContent` request.
///
/// The conversation is `contents`: user text as a `user` turn; an
/// assistant response as a `model` turn of a `text` part (when it has text)
/// and one `functionCall` part per call (`id`, `name`, `args`); tool results
/// as `functionResponse` parts of a `user` turn, each naming its call's
/// function, with `{"output": ...}` or, for a call that failed or was not
/// run, `{"error": ...}`. Turns of the same role in a row are merged into
/// one (Gemini wants them to alternate); an assistant response with
/// neither text nor calls is left out.
///
/// The system prompt is `systemInstruction`; the tools are one
/// `functionDeclarations` tool, each schema translated to the OpenAPI
/// subset Gemini reads (see [`schema`]); the token limit and sampling go
/// in `generationConfig`.
///
/// The model's earlier reasoning and its thought signatures are not kept
/// by jp, so none are sent back. Gemini 3 refuses a function call in the
/// history without a signature, so the first call of each model turn
/// carries the placeholder Google documents for a history whose signatures
/// were not kept; it is sent whatever the model (an alias such as
/// `gemini-flash-latest` may be a Gemini 3), and Gemini 2.5 accepts it
/// (upstream JP's recording `google_test_tool_call_reasoning.yml` shows
/// `gemini-2.5-flash-lite` answering such a request).
#[must_use]
pub fn request_body(request: &ChatRequest) -> Body<'_> {
    let mut contents: Vec<Content<'_>> = Vec::with_capacity(request.messages.len());
    for (position, message) in request.messages.iter().enumerate() {
        let (role, parts) =
            match message {
                Message::User(text) => ("user", vec![Part::Text { text }]),
                Message::Assistant {
                    reasoning: _,
                    text,
                    tool_calls,
                } => {
                    let mut parts = Vec::with_capacity(tool_calls.len() + 1);
                    if !text.is_empty() {
                        parts.push(Part::Text { text });
                    }
                    parts.extend(tool_calls.iter().enumerate().map(|(n, call)| {
                        Part::FunctionCall {
                            function_call: OutCall {
                                id: &call.id,
                                name: &call.name,
                                args: &call.arguments,
                            },
                            thought_signature: (n == 0).then_some(NO_SIGNATURE),
                        }
                    }));
                    ("model", parts)
                }
                Message::ToolResults(results) => (
                    "user",
                    results
                        .iter()
                        .map(|result| Part::FunctionResponse {
                            function_response: OutResponse {
                                id: &result.id,
                                name: call_name(&request.messages[..position], &result.id)
                                    .unwrap_or_default(),
                                response: if result.is_error {
                                    ResponseValue::Error {
                                        error: &result.content,
                                    }
                                } else {
                                    ResponseValue::Output {
                                        output: &result.content,
                                    }
                                },
                            },
                        })
                        .collect(),
                ),
            };
        if parts.is_empty() {
            continue;
        }
        match contents.last_mut() {
            Some(last) if last.role == role => last.parts.extend(parts),
            _ => contents.push(Content { role, parts }),
        }
    }
    Body {
        contents,
        system_instruction: request
            .system
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(|text| SystemInstruction {
                parts: [Part::Text { text }],
            }),
        tools: if request.tools.is_empty() {
            Vec::new()
        } else {
            vec![Tool {
                function_declarations: request.tools.iter().map(declaration).collect(),
            }]
        },
        generation_config: GenerationConfig {
            max_output_tokens: request.max_tokens,
            temperature: request.temperature,
            top_p: request.top_p,
        },
    }
}

/// The body [`request_body`] builds. It borrows the request, so a call's
/// arguments are written straight from the conversation into the bytes
/// sent, never copied (issue 14).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Body<'a> {
    contents: Vec<Content<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<SystemInstruction<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    generation_config: GenerationConfig,
}

#[derive(Debug, Serialize)]
struct Content<'a> {
    role: &'static str,
    parts: Vec<Part<'a>>,
}

#[derive(Debug, Serialize)]
struct SystemInstruction<'a> {
    parts: [Part<'a>; 1],
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Part<'a> {
    Text {
        text: &'a str,
    },
    #[serde(rename_all = "camelCase")]
    FunctionCall {
        function_call: OutCall<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'static str>,
    },
    #[serde(rename_all = "camelCase")]
    FunctionResponse {
        function_response: OutResponse<'a>,
    },
}

#[derive(Debug, Serialize)]
struct OutCall<'a> {
    id: &'a str,
    name: &'a str,
    args: &'a Value,
}

#[derive(Debug, Serialize)]
struct OutResponse<'a> {
    id: &'a str,
    name: &'a str,
    response: ResponseValue<'a>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum ResponseValue<'a> {
    Output { output: &'a str },
    Error { error: &'a str },
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Tool<'a> {
    function_declarations: Vec<Declaration<'a>>,
}

#[derive(Debug, Serialize)]
struct Declaration<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<Map<String, Value>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig {
    max_output_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
}

/// A tool as a function declaration: its schema translated, and left out
/// for a tool without parameters (Gemini refuses an object schema with no
/// properties).
fn declaration(tool: &ToolDefinition) -> Declaration<'_> {
    Declaration {
        name: &tool.name,
        description: tool.description.as_deref(),
        parameters: super::dialect::gemini(&tool.parameters),
    }
}

/// The name of the call `id` in the latest assistant message of `history`
/// that made it.
fn call_name<'a>(history: &'a [Message], id: &str) -> Option<&'a str> {
    history.iter().rev().find_map(|message| match message {
        Message::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .find(|call| call.id == id)
            .map(|call| call.name.as_str()),
        _ => None,
    })
}

/// Decodes a `streamGenerateContent?alt=sse` stream.
///
/// Each event is a whole response chunk; jp reads its first candidate.
/// Its `text` parts stream as [`EventPart::Message`] at index 0, and those
/// marked `thought: true` as [`EventPart::Reasoning`] at index 1. Each
/// `functionCall` part arrives whole, so it gets the next index from 2 on
/// and is sent at once as [`ToolCallPart::Start`] (its `id`, or, as
/// Gemini sends none, one from [`CallIds`]), one
/// [`ToolCallPart::ArgumentChunk`] with `args` as the JSON text that
/// arrived, and its flush. Thought signatures and parts jp does not read
/// are skipped. The events of a chunk with a call are one group
/// ([`StreamEvent::GroupStart`] to [`StreamEvent::GroupEnd`]): they
/// arrived together, so the turn reads them all before it stops the
/// stream for a call declined among them.
///
/// Each chunk's `usageMetadata` holds the counts so far: reported as
/// [`Usage`] (`promptTokenCount`; output is `candidatesTokenCount` plus
/// `thoughtsTokenCount`, which Google bills as output;
/// `cachedContentTokenCount`) at the end of a chunk whose counts changed,
/// so that a response jp stops early still counts what it used. The chunk
/// with a `finishReason` ends the response: it flushes the text and the
/// reasoning, reports the usage (unless reported already) and
/// [`StreamEvent::Finished`]
/// (`STOP` → `EndTurn`, `MAX_TOKENS` → `MaxTokens`, anything else →
/// `Other`; Gemini says `STOP` on function calls too, and the calls are
/// what count). A prompt Google blocks (`promptFeedback.blockReason`, no
/// candidate) finishes as `Other("blocked: ...")`. An `{"error": ...}`
/// event is [`ProviderError::Api`], its `status` the kind. The stream has
/// no end marker: a body that ends before a finish reason is
/// [`ProviderError::Disconnected`].
///
/// An error found after some events of the same bytes is returned by the
/// next call (`feed` of any bytes, even none, or `finish`), so no event
/// before it is lost.
pub(crate) type Decoder = FramedDecoder<Events>;

/// What [`Decoder`] knows of a response so far.
#[derive(Debug, Default)]
pub(crate) struct Events {
    text_open: bool,
    reasoning_open: bool,
    tool_calls: usize,
    ids: CallIds,
    usage: Option<Usage>,
    /// The counts last reported before the end.
    reported: Option<Usage>,
    finished: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk {
    #[serde(default)]
    candidates: Vec<Candidate>,
    #[serde(default)]
    usage_metadata: Option<WireUsage>,
    #[serde(default)]
    prompt_feedback: Option<PromptFeedback>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    #[serde(default)]
    content: Option<WireContent>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireContent {
    #[serde(default)]
    parts: Vec<WirePart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePart {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: bool,
    #[serde(default)]
    function_call: Option<WireCall>,
}

#[derive(Deserialize)]
struct WireCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    /// Kept as the text that arrived: the parser reads it once, rather
    /// than a `Value` of it being built, printed and parsed again (issue
    /// 14).
    #[serde(default)]
    args: Option<Box<serde_json::value::RawValue>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    #[serde(default)]
    prompt_token_count: Option<u64>,
    #[serde(default)]
    candidates_token_count: Option<u64>,
    #[serde(default)]
    thoughts_token_count: Option<u64>,
    #[serde(default)]
    cached_content_token_count: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    #[serde(default)]
    block_reason: Option<String>,
}

impl Decoder {
    /// A decoder for one response.
    #[must_use]
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The same decoder, making up the ids of calls from `ids` (new to the
    /// conversation).
    #[must_use]
    pub(crate) fn with_call_ids(mut self, ids: CallIds) -> Self {
        self.frames_mut().ids = ids;
        self
    }
}

/// Gemini's server-sent events: those of [`SseDecoder`], except that an
/// event the body ends in without its blank line is dispatched (the stream
/// has no end marker of its own, and a recording may lose the last blank
/// line); whether it is whole is for its JSON to say.
#[derive(Debug, Default)]
pub(crate) struct GeminiSse(SseDecoder);

impl Framing for GeminiSse {
    type Frame<'a> = SseEvent;
    type Error = SseError;

    fn push(&mut self, bytes: &[u8]) {
        self.0.push(bytes);
    }

    fn next_frame(&mut self) -> Option<Result<SseEvent, SseError>> {
        self.0.next_event()
    }

    fn finish(&mut self) -> Result<Option<SseEvent>, SseError> {
        // The blank line the body did not end with (after a line of its
        // own, or ending the one it was cut in).
        self.0.push(b"\n\n");
        self.0.next_event().transpose()
    }
}

impl Frames for Events {
    type Framing = GeminiSse;

    fn provider(&self) -> &str {
        NAME
    }

    fn frame(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let chunk: Chunk = serde_json::from_str(&event.data).map_err(|error| {
            decode_error(format!(
                "{}: {error}: {}",
                event.describe(),
                excerpt(&event.data)
            ))
        })?;
        self.handle(chunk, out)
    }

    fn end(
        &mut self,
        rest: Option<SseEvent>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if let Some(event) = rest.filter(|_| !self.finished) {
            let Ok(chunk) = serde_json::from_str::<Chunk>(&event.data) else {
                return Err(ProviderError::Disconnected {
                    provider: NAME.to_owned(),
                    message: "the response ended in the middle of an event".to_owned(),
                });
            };
            self.handle(chunk, out)?;
        }
        if self.finished {
            Ok(())
        } else {
            Err(ProviderError::Disconnected {
                provider: NAME.to_owned(),
                message: "the response ended before a chunk with its `finishReason`".to_owned(),
            })
        }
    }
}

impl Events {
    fn handle(&mut self, chunk: Chunk, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if let Some(error) = chunk.error.filter(|error| !error.is_null()) {
            return Err(api_error(&error));
        }
        if let Some(usage) = chunk.usage_metadata {
            let output = match (usage.candidates_token_count, usage.thoughts_token_count) {
                (None, None) => None,
                (candidates, thoughts) => Some(
                    candidates
                        .unwrap_or(0)
                        .saturating_add(thoughts.unwrap_or(0)),
                ),
            };
            self.usage = Some(Usage {
                input_tokens: usage.prompt_token_count,
                output_tokens: output,
                cache_read_tokens: usage.cached_content_token_count,
                cache_write_tokens: None,
            });
            // A report after the end (a last chunk of usage alone) stands.
            if self.finished {
                out.extend(self.usage.map(StreamEvent::Usage));
            }
        }
        if self.finished {
            return Ok(());
        }
        let block = chunk
            .prompt_feedback
            .and_then(|feedback| feedback.block_reason);
        let Some(candidate) = chunk.candidates.into_iter().next() else {
            if let Some(reason) = block {
                self.finish(format!("blocked: {reason}"), out);
            }
            return Ok(());
        };
        let parts = candidate.content.map(|c| c.parts).unwrap_or_default();
        // A call arrives whole, in one event, often with the response's
        // end: its events are one group, so a decision about the call
        // waits for the rest of the event.
        let grouped = parts.iter().any(|part| part.function_call.is_some());
        if grouped {
            out.push(StreamEvent::GroupStart);
        }
        for part in parts {
            if let Some(call) = part.function_call {
                self.function_call(call, out);
            } else if let Some(text) = part.text.filter(|text| !text.is_empty()) {
                let (index, part) = if part.thought {
                    self.reasoning_open = true;
                    (REASONING_INDEX, EventPart::Reasoning(text))
                } else {
                    self.text_open = true;
                    (TEXT_INDEX, EventPart::Message(text))
                };
                out.push(StreamEvent::Part { index, part });
            }
        }
        if let Some(reason) = candidate.finish_reason {
            self.finish(reason, out);
        } else if self.usage != self.reported {
            // The counts so far, so that a response jp stops early still
            // counts what it used.
            self.reported.clone_from(&self.usage);
            out.extend(self.usage.map(StreamEvent::Usage));
        }
        if grouped {
            out.push(StreamEvent::GroupEnd);
        }
        Ok(())
    }

    /// The response is complete: flushes, usage, why it ended.
    fn finish(&mut self, reason: String, out: &mut Vec<StreamEvent>) {
        if std::mem::take(&mut self.text_open) {
            out.push(StreamEvent::Flush { index: TEXT_INDEX });
        }
        if std::mem::take(&mut self.reasoning_open) {
            out.push(StreamEvent::Flush {
                index: REASONING_INDEX,
            });
        }
        if self.usage != self.reported {
            out.extend(self.usage.map(StreamEvent::Usage));
        }
        out.push(StreamEvent::Finished(match reason.as_str() {
            "STOP" => FinishReason::EndTurn,
            "MAX_TOKENS" => FinishReason::MaxTokens,
            _ => FinishReason::Other(reason),
        }));
        self.finished = true;
    }

    fn function_call(&mut self, call: WireCall, out: &mut Vec<StreamEvent>) {
        let index = FIRST_TOOL_INDEX + self.tool_calls;
        self.tool_calls += 1;
        let id = match call.id.filter(|id| !id.is_empty()) {
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
                name: call.name,
            }),
        });
        if let Some(args) = call.args.filter(|raw| raw.get() != "null") {
            out.push(StreamEvent::Part {
                index,
                part: EventPart::ToolCall(ToolCallPart::ArgumentChunk(args.get().to_owned())),
            });
        }
        out.push(StreamEvent::Flush { index });
    }
}

/// An `{"error": {"code", "message", "status"}}` event.
fn api_error(error: &Value) -> ProviderError {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    let (kind, message) = match error {
        Value::String(message) => (None, Some(message.clone())),
        other => (
            text(other.get("status")).or_else(|| other.get("code").map(Value::to_string)),
            text(other.get("message")),
        ),
    };
    ProviderError::Api {
        provider: NAME.to_owned(),
        kind: kind.unwrap_or_else(|| "error".to_owned()),
        message: message.unwrap_or_else(|| error.to_string()),
    }
}

fn decode_error(message: String) -> ProviderError {
    ProviderError::Decode {
        provider: NAME.to_owned(),
        message,
    }
}

#[cfg(test)]
#[path = "google_tests.rs"]
mod tests;
