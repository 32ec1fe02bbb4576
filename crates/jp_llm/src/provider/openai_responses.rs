//! OpenAI's Responses API, streamed as server-sent events: the `openai`
//! provider.
//!
//! [`OpenAiResponses`] posts to `{base_url}/responses`; [`request_body`]
//! builds the JSON it sends and its decoder reads the events that come
//! back. jp uses the API statelessly: every request carries the whole
//! conversation as `input` items and asks OpenAI not to keep the response
//! (`store: false`); `previous_response_id` is never sent.
//!
//! Indexes: the output item OpenAI numbers `k` (its `output_index`) is
//! index `k`. Each output item (a message, a reasoning summary, one
//! function call) is one item of the response, so the indexes are distinct
//! without renumbering.

use std::borrow::Cow;
use std::collections::BTreeMap;

use jp_conversation::{EventPart, ToolCallPart};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::dialect;
pub use super::http::RetryPolicy;
use super::http::{Api, Header, HttpProvider, Secret, bearer};
use super::{ChatRequest, FinishReason, Message, StreamEvent, ToolDefinition, Usage, WireDecoder};
use crate::call_ids::CallIds;
use crate::decode::{FramedDecoder, Frames};
use crate::error::ProviderError;
use crate::framing::excerpt;
use crate::framing::sse::{SseDecoder, SseEvent};

/// The provider's name.
const OPENAI: &str = "openai";

/// OpenAI's Responses API.
pub type OpenAiResponses = HttpProvider<ResponsesApi>;

impl OpenAiResponses {
    /// The `openai` provider, posting to `{base_url}/responses`, where
    /// `base_url` already holds the API's version
    /// (`https://api.openai.com/v1`; a trailing `/` is ignored), with
    /// `Authorization: Bearer {api_key}`.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>) -> Self {
        Self::with_api(
            base_url.into(),
            ResponsesApi {
                api_key: Secret::new(api_key),
                reasoning_summaries: false,
            },
        )
    }

    /// [`new`](Self::new), asking a reasoning model for summaries of its
    /// reasoning (`reasoning: {"summary": "auto"}`), which jp shows like
    /// other reasoning. The API refuses the field for models that do not
    /// reason, so it is asked for only when `summaries` is set.
    pub fn with_reasoning_summaries(
        base_url: impl Into<String>,
        api_key: impl Into<String>,
        summaries: bool,
    ) -> Self {
        Self::with_api(
            base_url.into(),
            ResponsesApi {
                api_key: Secret::new(api_key),
                reasoning_summaries: summaries,
            },
        )
    }
}

/// What the Responses API asks of a request: the key as a bearer token,
/// the body of [`request_body`], read back by its decoder.
#[derive(Debug, Clone)]
pub struct ResponsesApi {
    api_key: Secret,
    reasoning_summaries: bool,
}

impl Api for ResponsesApi {
    const TYPE_NAME: &'static str = "OpenAiResponses";
    const PATH: &'static str = "/responses";

    fn name(&self) -> &str {
        OPENAI
    }

    fn api_key(&self) -> &dyn std::fmt::Debug {
        &self.api_key
    }

    fn headers(&self) -> Vec<Header> {
        bearer(Some(&self.api_key))
    }

    fn body<'a>(&self, request: &'a ChatRequest) -> impl Serialize + use<'a> {
        let mut body = request_body(request);
        if self.reasoning_summaries {
            body.reasoning = Some(Reasoning { summary: "auto" });
        }
        body
    }

    fn decoders(&self, request: &ChatRequest) -> impl Fn() -> Box<dyn WireDecoder> + Send + use<> {
        let ids = CallIds::of(request);
        move || Box::new(Decoder::new().with_call_ids(ids.clone()))
    }
}

/// The JSON body of a streaming Responses request.
///
/// The system prompt is `instructions`. The conversation is `input`: a
/// user message is `{"role": "user", "content": text}`; an assistant
/// response is its text as `{"role": "assistant", "content": text}` (left
/// out when empty) followed by one `function_call` item per call (its
/// `call_id`, `name` and `arguments` as JSON text); each tool result is a
/// `function_call_output` item with the call's `call_id` and the result's
/// text as `output` (the API has no error flag; a failed result's text says
/// what went wrong).
///
/// The model's earlier reasoning is not sent back: without OpenAI keeping
/// the response, a reasoning item can only be replayed with its encrypted
/// content, which jp does not ask for; the summary jp keeps is for the user.
///
/// Tools are flat function tools (`{"type": "function", "name",
/// "description", "parameters"}`, unlike Chat Completions' nested
/// `function`), with `strict: false`: jp's schemas leave optional
/// parameters out of `required`, which strict mode refuses.
#[must_use]
pub fn request_body(request: &ChatRequest) -> Body<'_> {
    let mut input = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        push_items(&mut input, message);
    }
    Body {
        model: &request.model,
        instructions: request.system.as_deref().filter(|s| !s.is_empty()),
        input,
        tools: request.tools.iter().map(tool).collect(),
        max_output_tokens: request.max_tokens,
        temperature: request.temperature,
        top_p: request.top_p,
        reasoning: None,
        store: false,
        stream: true,
    }
}

/// The body [`request_body`] builds. It borrows the request, so a call's
/// arguments are written straight from the conversation into the bytes
/// sent, never copied (issue 14).
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: Vec<InputItem<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    max_output_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    /// Set for reasoning models: what of their reasoning to stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Reasoning>,
    store: bool,
    stream: bool,
}

/// `reasoning` of a request: `summary: "auto"` streams summaries of the
/// model's reasoning as `response.reasoning_summary_text.delta`.
#[derive(Debug, Serialize)]
struct Reasoning {
    summary: &'static str,
}

/// One item of `input`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum InputItem<'a> {
    Message {
        role: &'static str,
        content: &'a str,
    },
    FunctionCall {
        #[serde(rename = "type")]
        kind: &'static str,
        call_id: &'a str,
        name: &'a str,
        arguments: JsonText<'a>,
    },
    FunctionCallOutput {
        #[serde(rename = "type")]
        kind: &'static str,
        call_id: &'a str,
        output: &'a str,
    },
}

/// A function tool, flat.
#[derive(Debug, Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    parameters: Cow<'a, Value>,
    strict: bool,
}

fn tool(tool: &ToolDefinition) -> Tool<'_> {
    Tool {
        kind: "function",
        name: &tool.name,
        description: tool.description.as_deref(),
        parameters: dialect::openai(&tool.parameters),
        strict: false,
    }
}

/// A value written as a JSON string holding its JSON text, as the API
/// wants a call's arguments; the text is escaped as it is produced,
/// without a copy of it in memory.
#[derive(Debug)]
struct JsonText<'a>(&'a Value);

impl Serialize for JsonText<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self.0)
    }
}

fn push_items<'a>(input: &mut Vec<InputItem<'a>>, message: &'a Message) {
    match message {
        Message::User(text) => input.push(InputItem::Message {
            role: "user",
            content: text,
        }),
        Message::Assistant {
            reasoning: _,
            text,
            tool_calls,
        } => {
            if !text.is_empty() {
                input.push(InputItem::Message {
                    role: "assistant",
                    content: text,
                });
            }
            input.extend(tool_calls.iter().map(|call| InputItem::FunctionCall {
                kind: "function_call",
                call_id: &call.id,
                name: &call.name,
                arguments: JsonText(&call.arguments),
            }));
        }
        Message::ToolResults(results) => {
            input.extend(results.iter().map(|result| InputItem::FunctionCallOutput {
                kind: "function_call_output",
                call_id: &result.id,
                output: &result.content,
            }));
        }
    }
}

/// Decodes a Responses event stream.
///
/// Every output item streams at its `output_index`:
/// `response.output_text.delta` (and `response.refusal.delta`) as
/// [`EventPart::Message`], `response.reasoning_summary_text.delta` as
/// [`EventPart::Reasoning`] (a new summary part of the same item starts
/// after a blank line), and a `function_call` item as
/// [`ToolCallPart::Start`] when `response.output_item.added` announces it
/// (its `call_id`, or one from [`CallIds`] if it has none), then each
/// `response.function_call_arguments.delta` as a
/// [`ToolCallPart::ArgumentChunk`]. `response.output_item.done` of a
/// completed item flushes its index at once (a call is decided while the
/// rest of the response streams); if a call's arguments came only whole in
/// that event, they are sent first.
///
/// `response.completed` flushes what is still open, reports [`Usage`]
/// (`input_tokens`, `output_tokens`, `input_tokens_details.cached_tokens`)
/// and [`StreamEvent::Finished`] (`ToolUse` when a call was made, else
/// `EndTurn`); `response.incomplete` does the same with `MaxTokens` for
/// `max_output_tokens` and `Other` for any other reason (`content_filter`).
/// `response.failed` and `error` are [`ProviderError::Api`]. Events jp has
/// no use for (`response.created`, `response.content_part.added`, the
/// `.done` of deltas) are skipped.
///
/// The stream is complete at `response.completed` or
/// `response.incomplete`; ending before either is
/// [`ProviderError::Disconnected`].
///
/// An error found after some events of the same bytes is returned by the
/// next call (`feed` of any bytes, even none, or `finish`), so no event
/// before it is lost.
pub(crate) type Decoder = FramedDecoder<Events>;

/// What [`Decoder`] knows of a response so far.
#[derive(Debug)]
pub(crate) struct Events {
    /// The output items that got a part and are not flushed, by index.
    open: BTreeMap<usize, Item>,
    /// The function calls announced, by index (kept after their flush).
    calls: BTreeMap<usize, Call>,
    ids: CallIds,
    done: bool,
}

/// An open output item.
#[derive(Debug, Default)]
struct Item {
    /// The reasoning summary part last streamed, to separate parts.
    summary_index: Option<u64>,
}

/// A function call of the response.
#[derive(Debug)]
struct Call {
    /// Whether any argument text was sent.
    sent_arguments: bool,
    /// Whether its index was flushed.
    flushed: bool,
}

/// The fields of the events jp reads; each event has the few it needs.
#[derive(Deserialize)]
struct Wire {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    output_index: Option<usize>,
    #[serde(default)]
    summary_index: Option<u64>,
    #[serde(default)]
    delta: Option<String>,
    #[serde(default)]
    item: Option<WireItem>,
    #[serde(default)]
    response: Option<WireResponse>,
    /// `error`: the fields may be at the top level or under `error`.
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct WireItem {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    input_tokens_details: Option<WireUsageDetails>,
}

#[derive(Deserialize)]
struct WireUsageDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl Decoder {
    /// A decoder for one response.
    #[must_use]
    pub(crate) fn new() -> Self {
        Self::with_frames(Events {
            open: BTreeMap::new(),
            calls: BTreeMap::new(),
            ids: CallIds::default(),
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
        OPENAI
    }

    fn frame(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.handle(&event, out)
    }

    fn end(
        &mut self,
        _rest: Option<SseEvent>,
        _out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if self.done {
            Ok(())
        } else {
            Err(ProviderError::Disconnected {
                provider: OPENAI.to_owned(),
                message: "the response ended before `response.completed` or \
                          `response.incomplete`"
                    .to_owned(),
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
        if self.done || event.data.trim() == "[DONE]" {
            return Ok(());
        }
        let wire: Wire = serde_json::from_str(&event.data).map_err(|error| {
            decode_error(format!(
                "{}: {error}: {}",
                event.describe(),
                excerpt(&event.data)
            ))
        })?;
        match wire.kind.as_str() {
            "response.output_text.delta" | "response.refusal.delta" => {
                let index = output_index(event, &wire)?;
                if let Some(text) = wire.delta.filter(|text| !text.is_empty()) {
                    self.open.entry(index).or_default();
                    out.push(StreamEvent::Part {
                        index,
                        part: EventPart::Message(text),
                    });
                }
            }
            "response.reasoning_summary_text.delta" => {
                let index = output_index(event, &wire)?;
                if let Some(text) = wire.delta.filter(|text| !text.is_empty()) {
                    let item = self.open.entry(index).or_default();
                    let new_part = item
                        .summary_index
                        .is_some_and(|last| Some(last) != wire.summary_index);
                    item.summary_index = wire.summary_index.or(item.summary_index);
                    let text = if new_part {
                        format!("\n\n{text}")
                    } else {
                        text
                    };
                    out.push(StreamEvent::Part {
                        index,
                        part: EventPart::Reasoning(text),
                    });
                }
            }
            "response.output_item.added" => {
                let index = output_index(event, &wire)?;
                if let Some(item) = wire.item.filter(|item| item.kind == "function_call") {
                    self.start_call(event, index, item, out)?;
                }
            }
            "response.function_call_arguments.delta" => {
                let index = output_index(event, &wire)?;
                let Some(call) = self.calls.get_mut(&index).filter(|call| !call.flushed) else {
                    return Err(decode_error(format!(
                        "{}: arguments for output item {index}, which is not an open function call",
                        event.describe()
                    )));
                };
                if let Some(text) = wire.delta.filter(|text| !text.is_empty()) {
                    call.sent_arguments = true;
                    out.push(StreamEvent::Part {
                        index,
                        part: EventPart::ToolCall(ToolCallPart::ArgumentChunk(text)),
                    });
                }
            }
            "response.output_item.done" => {
                let index = output_index(event, &wire)?;
                if let Some(item) = wire.item {
                    self.item_done(index, item, out);
                }
            }
            "response.completed" => {
                let finish = if self.calls.is_empty() {
                    FinishReason::EndTurn
                } else {
                    FinishReason::ToolUse
                };
                self.finish(wire.response, finish, out);
            }
            "response.incomplete" => {
                let reason = wire
                    .response
                    .as_ref()
                    .and_then(|response| response.incomplete_details.as_ref())
                    .and_then(|details| details.reason.clone());
                let finish = match reason.as_deref() {
                    Some("max_output_tokens") => FinishReason::MaxTokens,
                    Some(other) => FinishReason::Other(other.to_owned()),
                    None => FinishReason::Other("incomplete".to_owned()),
                };
                self.finish(wire.response, finish, out);
            }
            "response.failed" => {
                let error = wire.response.and_then(|response| response.error);
                return Err(api_error(error.as_ref(), None, None));
            }
            "error" => {
                return Err(api_error(
                    wire.error.as_ref(),
                    wire.code.as_ref(),
                    wire.message,
                ));
            }
            _ => {}
        }
        Ok(())
    }

    fn start_call(
        &mut self,
        event: &SseEvent,
        index: usize,
        item: WireItem,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let Some(name) = item.name.filter(|name| !name.is_empty()) else {
            return Err(decode_error(format!(
                "{}: function call {index} has no name",
                event.describe()
            )));
        };
        if self.calls.contains_key(&index) {
            return Err(decode_error(format!(
                "{}: output item {index} was announced twice",
                event.describe()
            )));
        }
        let id = match item.call_id.filter(|id| !id.is_empty()) {
            Some(id) => {
                self.ids.note(&id);
                id
            }
            None => self.ids.fresh(),
        };
        self.open.entry(index).or_default();
        out.push(StreamEvent::Part {
            index,
            part: EventPart::ToolCall(ToolCallPart::Start { id, name }),
        });
        let arguments = item.arguments.filter(|text| !text.is_empty());
        self.calls.insert(
            index,
            Call {
                sent_arguments: arguments.is_some(),
                flushed: false,
            },
        );
        if let Some(text) = arguments {
            out.push(StreamEvent::Part {
                index,
                part: EventPart::ToolCall(ToolCallPart::ArgumentChunk(text)),
            });
        }
        Ok(())
    }

    /// A completed output item: its index is flushed now. An item cut off
    /// (`incomplete`) stays open until the response ends.
    fn item_done(&mut self, index: usize, item: WireItem, out: &mut Vec<StreamEvent>) {
        if item.status.as_deref().is_some_and(|s| s != "completed") {
            return;
        }
        if let Some(call) = self.calls.get_mut(&index).filter(|call| !call.flushed) {
            if !call.sent_arguments
                && let Some(text) = item.arguments.filter(|text| !text.is_empty())
            {
                call.sent_arguments = true;
                out.push(StreamEvent::Part {
                    index,
                    part: EventPart::ToolCall(ToolCallPart::ArgumentChunk(text)),
                });
            }
            call.flushed = true;
        }
        if self.open.remove(&index).is_some() {
            out.push(StreamEvent::Flush { index });
        }
    }

    /// The response ended: flushes what is open, in index order, then
    /// reports the usage and why it stopped.
    fn finish(
        &mut self,
        response: Option<WireResponse>,
        finish: FinishReason,
        out: &mut Vec<StreamEvent>,
    ) {
        for index in std::mem::take(&mut self.open).into_keys() {
            out.push(StreamEvent::Flush { index });
        }
        if let Some(usage) = response.and_then(|response| response.usage) {
            out.push(StreamEvent::Usage(Usage {
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                cache_read_tokens: usage
                    .input_tokens_details
                    .and_then(|details| details.cached_tokens),
                cache_write_tokens: None,
            }));
        }
        out.push(StreamEvent::Finished(finish));
        self.done = true;
    }
}

/// The `output_index` of an event that must have one.
fn output_index(event: &SseEvent, wire: &Wire) -> Result<usize, ProviderError> {
    wire.output_index.ok_or_else(|| {
        decode_error(format!(
            "{}: `{}` without an `output_index`",
            event.describe(),
            wire.kind
        ))
    })
}

/// The error of a `response.failed` (`error` is the response's) or an
/// `error` event (the fields at the top level, or under `error`).
fn api_error(
    error: Option<&Value>,
    code: Option<&Value>,
    message: Option<String>,
) -> ProviderError {
    let text = |value: Option<&Value>| match value {
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Number(number)) => Some(number.to_string()),
        _ => None,
    };
    let nested = |key: &str| error.and_then(|error| error.get(key));
    let kind = text(nested("code"))
        .or_else(|| text(nested("type")))
        .or_else(|| text(code));
    let message = text(nested("message")).or(message);
    ProviderError::Api {
        provider: OPENAI.to_owned(),
        kind: kind.unwrap_or_else(|| "error".to_owned()),
        message: message.unwrap_or_else(|| {
            error.map_or_else(|| "the response failed".to_owned(), Value::to_string)
        }),
    }
}

fn decode_error(message: String) -> ProviderError {
    ProviderError::Decode {
        provider: OPENAI.to_owned(),
        message,
    }
}

#[cfg(test)]
#[path = "openai_responses_tests.rs"]
mod tests;
