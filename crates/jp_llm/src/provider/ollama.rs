//! Ollama's native chat API (`POST /api/chat`), streamed as
//! newline-delimited JSON.
//!
//! [`Ollama`] posts to `{base_url}/api/chat`; [`request_body`] builds the
//! JSON it sends and its decoder reads the lines that come back.
//!
//! Indexes: the assistant text is index 0, reasoning (`thinking`) is index
//! 1, and the tool calls get 2, 3, ... in the order they arrive.

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
use crate::framing::ndjson::NdjsonSplitter;

/// The provider's name, in model ids and messages.
const NAME: &str = "ollama";

/// The index of the assistant text.
const TEXT_INDEX: usize = 0;
/// The index of the reasoning.
const REASONING_INDEX: usize = 1;
/// The index of the first tool call.
const FIRST_TOOL_INDEX: usize = 2;

/// Ollama's native chat API.
pub type Ollama = HttpProvider<OllamaChatApi>;

impl Ollama {
    /// A provider that posts to `{base_url}/api/chat` (`base_url` is
    /// `http://localhost:11434` for a local Ollama; a trailing `/` is
    /// ignored), with `Authorization: Bearer {api_key}` when a key is given
    /// (Ollama's cloud, or a proxy that wants one).
    pub fn new(base_url: impl Into<String>, api_key: Option<String>) -> Self {
        Self::with_api(
            base_url.into(),
            OllamaChatApi {
                api_key: api_key.map(Secret::new),
            },
        )
    }
}

/// What `/api/chat` asks of a request: the key, if any, as a bearer
/// token; the body of [`request_body`], read back by its decoder.
#[derive(Debug, Clone)]
pub struct OllamaChatApi {
    api_key: Option<Secret>,
}

impl Api for OllamaChatApi {
    const TYPE_NAME: &'static str = "Ollama";
    const PATH: &'static str = "/api/chat";

    fn name(&self) -> &str {
        NAME
    }

    fn api_key(&self) -> &dyn std::fmt::Debug {
        &self.api_key
    }

    fn headers(&self) -> Vec<Header> {
        bearer(self.api_key.as_ref())
    }

    fn body<'a>(&self, request: &'a ChatRequest) -> impl Serialize + use<'a> {
        request_body(request)
    }

    fn decoders(&self, request: &ChatRequest) -> impl Fn() -> Box<dyn WireDecoder> + Send + use<> {
        let ids = CallIds::of(request);
        move || Box::new(Decoder::new().with_call_ids(ids.clone()))
    }
}

/// The JSON body of a streaming `/api/chat` request.
///
/// The system prompt is a `system` message; an assistant response is one
/// `assistant` message with its calls as `tool_calls` (arguments as a JSON
/// object, ids kept); each tool result is a `tool` message carrying the
/// call's `tool_call_id` and, when the call is found in the history, the
/// `tool_name` Ollama's templates use. An assistant response with neither
/// text nor tool calls is left out. Sampling settings and the token limit
/// (`num_predict`) go in `options`.
///
/// The model's earlier reasoning is not sent back: Ollama's chat templates
/// drop the thinking of earlier turns anyway.
#[must_use]
pub fn request_body(request: &ChatRequest) -> Body<'_> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(OutMessage::System { content: system });
    }
    for (position, message) in request.messages.iter().enumerate() {
        match message {
            Message::User(text) => messages.push(OutMessage::User { content: text }),
            Message::Assistant {
                reasoning: _,
                text,
                tool_calls,
            } => {
                if text.is_empty() && tool_calls.is_empty() {
                    continue;
                }
                messages.push(OutMessage::Assistant {
                    content: text,
                    tool_calls: tool_calls
                        .iter()
                        .map(|call| OutCall {
                            id: &call.id,
                            function: OutFunction {
                                name: &call.name,
                                arguments: &call.arguments,
                            },
                        })
                        .collect(),
                });
            }
            Message::ToolResults(results) => {
                messages.extend(results.iter().map(|result| OutMessage::Tool {
                    content: &result.content,
                    tool_name: tool_name(&request.messages[..position], &result.id),
                    tool_call_id: &result.id,
                }));
            }
        }
    }
    Body {
        model: &request.model,
        messages,
        tools: function_tools(&request.tools),
        options: Options {
            num_predict: request.max_tokens,
            temperature: request.temperature,
            top_p: request.top_p,
        },
        stream: true,
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
    options: Options,
    stream: bool,
}

#[derive(Debug, Serialize)]
struct Options {
    num_predict: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
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
        content: &'a str,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<OutCall<'a>>,
    },
    Tool {
        content: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_name: Option<&'a str>,
        tool_call_id: &'a str,
    },
}

#[derive(Debug, Serialize)]
struct OutCall<'a> {
    id: &'a str,
    function: OutFunction<'a>,
}

#[derive(Debug, Serialize)]
struct OutFunction<'a> {
    name: &'a str,
    arguments: &'a Value,
}

/// The name of the tool call `id` in the latest assistant message of
/// `history` that made it.
fn tool_name<'a>(history: &'a [Message], id: &str) -> Option<&'a str> {
    history.iter().rev().find_map(|message| match message {
        Message::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .find(|call| call.id == id)
            .map(|call| call.name.as_str()),
        _ => None,
    })
}

/// Decodes an `/api/chat` NDJSON stream.
///
/// `message.content` streams as [`EventPart::Message`] at index 0 and
/// `message.thinking` as [`EventPart::Reasoning`] at index 1. Each of
/// `message.tool_calls` arrives whole, so it gets the next index from 2 on
/// and is sent at once as [`ToolCallPart::Start`] (its `id`, or one from
/// [`CallIds`] if Ollama sends none), one
/// [`ToolCallPart::ArgumentChunk`] with the arguments as JSON text, and its
/// flush.
///
/// The line with `done: true` ends the stream: it flushes the text and the
/// reasoning, reports [`Usage`] (`prompt_eval_count`, `eval_count`) and
/// [`StreamEvent::Finished`] (`stop` → `EndTurn`, `length` → `MaxTokens`,
/// anything else → `Other`; Ollama says `stop` on tool calls too, and the
/// calls are what count). An `{"error": ...}` line is
/// [`ProviderError::Api`]. A final line without its newline is read; a
/// body that ends before `done: true` is [`ProviderError::Disconnected`].
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
    done: bool,
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    message: Option<WireMessage>,
    #[serde(default)]
    done: bool,
    #[serde(default)]
    done_reason: Option<String>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    /// Kept as the text that arrived: the parser reads it once, rather
    /// than a `Value` of it being built, printed and parsed again (a whole
    /// copy of a call's arguments, many times its size; issue 14).
    #[serde(default)]
    arguments: Option<Box<serde_json::value::RawValue>>,
}

impl Decoder {
    /// A decoder for one response.
    #[must_use]
    pub(crate) fn new() -> Self {
        Self::default()
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
    type Framing = NdjsonSplitter;

    fn provider(&self) -> &str {
        NAME
    }

    fn frame(
        &mut self,
        (number, line): (usize, &str),
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        self.handle(parse(line, number)?, out)
    }

    fn end(
        &mut self,
        rest: Option<(usize, &str)>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if let Some((number, rest)) = rest {
            if self.done {
                return Ok(());
            }
            // A last line without its newline counts if it is whole;
            // a cut one is the connection dropping mid-line.
            let Ok(line) = parse(rest, number) else {
                return Err(disconnected("the response ended in the middle of a line"));
            };
            self.handle(line, out)?;
        }
        if self.done {
            Ok(())
        } else {
            Err(disconnected(
                "the response ended before its `done: true` line",
            ))
        }
    }
}

impl Events {
    fn handle(&mut self, line: Line, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        if let Some(error) = line.error.filter(|error| !error.is_null()) {
            let message = match error {
                Value::String(message) => message,
                other => other
                    .get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| other.to_string(), str::to_owned),
            };
            return Err(ProviderError::Api {
                provider: NAME.to_owned(),
                kind: "error".to_owned(),
                message,
            });
        }
        if let Some(message) = line.message {
            if let Some(thinking) = message.thinking.filter(|text| !text.is_empty()) {
                self.reasoning_open = true;
                out.push(StreamEvent::Part {
                    index: REASONING_INDEX,
                    part: EventPart::Reasoning(thinking),
                });
            }
            if let Some(content) = message.content.filter(|text| !text.is_empty()) {
                self.text_open = true;
                out.push(StreamEvent::Part {
                    index: TEXT_INDEX,
                    part: EventPart::Message(content),
                });
            }
            for call in message.tool_calls.unwrap_or_default() {
                self.tool_call(call, out);
            }
        }
        if line.done {
            if std::mem::take(&mut self.text_open) {
                out.push(StreamEvent::Flush { index: TEXT_INDEX });
            }
            if std::mem::take(&mut self.reasoning_open) {
                out.push(StreamEvent::Flush {
                    index: REASONING_INDEX,
                });
            }
            if line.prompt_eval_count.is_some() || line.eval_count.is_some() {
                out.push(StreamEvent::Usage(Usage {
                    input_tokens: line.prompt_eval_count,
                    output_tokens: line.eval_count,
                    cache_read_tokens: None,
                    cache_write_tokens: None,
                }));
            }
            if let Some(reason) = line.done_reason {
                out.push(StreamEvent::Finished(match reason.as_str() {
                    "stop" => FinishReason::EndTurn,
                    "length" => FinishReason::MaxTokens,
                    _ => FinishReason::Other(reason),
                }));
            }
            self.done = true;
        }
        Ok(())
    }

    fn tool_call(&mut self, call: WireToolCall, out: &mut Vec<StreamEvent>) {
        let index = FIRST_TOOL_INDEX + self.tool_calls;
        let id = match call.id.filter(|id| !id.is_empty()) {
            Some(id) => {
                self.ids.note(&id);
                id
            }
            None => self.ids.fresh(),
        };
        self.tool_calls += 1;
        out.push(StreamEvent::Part {
            index,
            part: EventPart::ToolCall(ToolCallPart::Start {
                id,
                name: call.function.name,
            }),
        });
        // Arguments come as an object, or from some servers as a string
        // holding the JSON text.
        let arguments = call.function.arguments.and_then(|raw| {
            let text = raw.get();
            if text == "null" {
                None
            } else if text.starts_with('"') {
                serde_json::from_str::<String>(text).ok()
            } else {
                Some(text.to_owned())
            }
        });
        if let Some(arguments) = arguments.filter(|text| !text.is_empty()) {
            out.push(StreamEvent::Part {
                index,
                part: EventPart::ToolCall(ToolCallPart::ArgumentChunk(arguments)),
            });
        }
        out.push(StreamEvent::Flush { index });
    }
}

/// Parses one line; the error names the line and shows its start.
fn parse(line: &str, number: usize) -> Result<Line, ProviderError> {
    serde_json::from_str(line)
        .map_err(|error| decode_error(format!("line {number}: {error}: {}", excerpt(line))))
}

fn decode_error(message: String) -> ProviderError {
    ProviderError::Decode {
        provider: NAME.to_owned(),
        message,
    }
}

fn disconnected(message: &str) -> ProviderError {
    ProviderError::Disconnected {
        provider: NAME.to_owned(),
        message: message.to_owned(),
    }
}

#[cfg(test)]
#[path = "ollama_tests.rs"]
mod tests;
