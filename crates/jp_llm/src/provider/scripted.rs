//! The offline `scripted` provider: streams responses written in a file.
//!
//! It exists for demos, docs and tests, and for tool authors who want to try
//! a tool and its policies without an API key. The model id
//! `scripted/NAME` picks the script: `demo` is built into jp; anything else
//! is a path to a TOML file, relative to the workspace root.
//!
//! ```toml
//! chunk_size = 12   # bytes per streamed chunk (cut at character boundaries)
//! delay_ms = 20     # pause between chunks
//!
//! [[responses]]
//! parts = [
//!   { text = "I'll create the file." },
//!   { tool = "fs_create_file", arguments = { path = "src/lib.rs", content = "" } },
//! ]
//!
//! [[responses]]
//! parts = [{ text = "Done." }]
//! ```
//!
//! The N-th request of a conversation (counting the assistant responses it
//! already holds) gets `responses[N]`. A part is `text`, `reasoning`, or a
//! `tool` call whose `arguments` are a table or, to stream exact bytes
//! (a duplicate key, cut-off JSON), a string. A response can instead replay
//! a recorded provider body through that provider's real decoder:
//! `replay = { format = "anthropic", file = "recordings/turn1.sse" }`
//! (`format` is `anthropic`, `openai` or `ollama`; `body = "..."` inlines
//! the bytes instead of `file`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use jp_conversation::{EventPart, ToolCallPart};
use serde::Deserialize;

use super::{ChatRequest, EventStream, FinishReason, Message, Provider, StreamEvent, WireDecoder};
use crate::error::ProviderError;

/// The script `scripted/demo` plays: the session the README shows.
pub const DEMO_SCRIPT: &str = include_str!("scripted/demo.toml");

/// A parsed script.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Bytes per streamed chunk.
    #[serde(default = "default_chunk_size")]
    pub chunk_size: usize,
    /// Milliseconds between chunks.
    #[serde(default)]
    pub delay_ms: u64,
    /// The responses, in order.
    #[serde(default)]
    pub responses: Vec<ScriptedResponse>,
}

fn default_chunk_size() -> usize {
    16
}

/// One scripted model response.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedResponse {
    /// What the model streams, in order.
    #[serde(default)]
    pub parts: Vec<ScriptedPart>,
    /// Why the model stops; by default `tool_use` when the response calls a
    /// tool, else `end_turn`.
    pub finish: Option<ScriptedFinish>,
    /// A recorded provider body to decode instead of `parts`.
    pub replay: Option<Replay>,
}

/// One part of a scripted response: exactly one of `text`, `reasoning` or
/// `tool` (with `id` and `arguments` only beside `tool`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedPart {
    /// Assistant text.
    pub text: Option<String>,
    /// Reasoning.
    pub reasoning: Option<String>,
    /// A tool call's tool name.
    pub tool: Option<String>,
    /// The call id; by default `call_R_P` (response and part numbers).
    pub id: Option<String>,
    /// The call's arguments: a table, or a string streamed byte for byte.
    pub arguments: Option<ScriptedArguments>,
}

/// Scripted tool-call arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ScriptedArguments {
    /// Exact JSON text (may be invalid on purpose).
    Raw(String),
    /// A value, serialized as JSON.
    Value(serde_json::Map<String, serde_json::Value>),
}

impl Default for ScriptedArguments {
    fn default() -> Self {
        Self::Value(serde_json::Map::new())
    }
}

impl ScriptedArguments {
    fn text(&self) -> String {
        match self {
            Self::Raw(text) => text.clone(),
            Self::Value(map) => serde_json::Value::Object(map.clone()).to_string(),
        }
    }
}

/// Why a scripted response stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptedFinish {
    /// The answer is complete.
    EndTurn,
    /// Tool calls should run.
    ToolUse,
    /// Cut off by the token limit: the last part is left unflushed, so a
    /// tool call in it arrives truncated.
    MaxTokens,
}

/// A recorded provider body.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    /// Whose wire format the body is in.
    pub format: ReplayFormat,
    /// The body, inline.
    pub body: Option<String>,
    /// The body's file, relative to the script's directory.
    pub file: Option<PathBuf>,
}

/// The wire formats a recording can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayFormat {
    /// Anthropic Messages SSE.
    Anthropic,
    /// OpenAI-compatible Chat Completions SSE.
    Openai,
    /// Ollama `/api/chat` NDJSON.
    Ollama,
}

impl Script {
    /// Parses a script; `origin` names it in errors.
    ///
    /// # Errors
    ///
    /// A message naming the script and what is wrong.
    pub fn parse(text: &str, origin: &str) -> Result<Self, String> {
        let script: Self =
            toml::from_str(text).map_err(|e| format!("script {origin}: {}", e.message()))?;
        if script.chunk_size == 0 {
            return Err(format!("script {origin}: chunk_size must be at least 1"));
        }
        for (i, response) in script.responses.iter().enumerate() {
            for (j, part) in response.parts.iter().enumerate() {
                let kinds = [
                    part.text.is_some(),
                    part.reasoning.is_some(),
                    part.tool.is_some(),
                ];
                if kinds.iter().filter(|k| **k).count() != 1 {
                    return Err(format!(
                        "script {origin}: responses[{i}].parts[{j}] needs exactly one of `text`, `reasoning` and `tool`"
                    ));
                }
                if part.tool.is_none() && (part.id.is_some() || part.arguments.is_some()) {
                    return Err(format!(
                        "script {origin}: responses[{i}].parts[{j}] has `id` or `arguments` but no `tool`"
                    ));
                }
            }
            if let Some(replay) = &response.replay {
                if !response.parts.is_empty() {
                    return Err(format!(
                        "script {origin}: responses[{i}] has both `replay` and `parts`"
                    ));
                }
                if replay.body.is_some() == replay.file.is_some() {
                    return Err(format!(
                        "script {origin}: responses[{i}].replay needs exactly one of `body` and `file`"
                    ));
                }
            }
        }
        Ok(script)
    }
}

/// The scripted provider.
#[derive(Debug, Clone)]
pub struct Scripted {
    script: Script,
    name: String,
    dir: PathBuf,
}

impl Scripted {
    /// The script `name` (from `scripted/NAME`): `demo`, or a file relative
    /// to `workspace_root`.
    ///
    /// # Errors
    ///
    /// When the file cannot be read or is not a script.
    pub fn open(name: &str, workspace_root: &Path) -> Result<Self, ProviderError> {
        if name == "demo" {
            return Ok(Self::from_script(
                Script::parse(DEMO_SCRIPT, "demo").map_err(ProviderError::Config)?,
                name,
                workspace_root,
            ));
        }
        let path = workspace_root.join(name);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            ProviderError::Config(format!(
                "scripted: cannot read the script {}: {e} (the built-in script is `scripted/demo`)",
                path.display()
            ))
        })?;
        let script =
            Script::parse(&text, &path.display().to_string()).map_err(ProviderError::Config)?;
        let dir = path.parent().unwrap_or(workspace_root).to_path_buf();
        Ok(Self::from_script(script, name, &dir))
    }

    /// A provider playing `script`; replay files resolve against `dir`.
    #[must_use]
    pub fn from_script(script: Script, name: &str, dir: &Path) -> Self {
        Self {
            script,
            name: name.to_owned(),
            dir: dir.to_path_buf(),
        }
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn stream(&self, request: ChatRequest) -> EventStream {
        let turn = request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        let script = self.script.clone();
        let name = self.name.clone();
        let dir = self.dir.clone();
        Box::pin(async_stream::try_stream! {
            let Some(response) = script.responses.get(turn) else {
                Err(ProviderError::Config(format!(
                    "scripted: script `{name}` has {} responses and this is request #{} of the conversation; start a new one with `jp query --new`",
                    script.responses.len(),
                    turn + 1
                )))?;
                return;
            };
            let delay = Duration::from_millis(script.delay_ms);
            let (events, error) = plan(response, turn, script.chunk_size, &dir)?;
            for event in events {
                if delay > Duration::ZERO && matches!(event, StreamEvent::Part { .. }) {
                    tokio::time::sleep(delay).await;
                }
                yield event;
            }
            if let Some(error) = error {
                Err(error)?;
            }
        })
    }
}

/// Every event of one response, in order, and the error a replayed body
/// ends in (after the events before it, as over HTTP).
fn plan(
    response: &ScriptedResponse,
    turn: usize,
    chunk_size: usize,
    dir: &Path,
) -> Result<(Vec<StreamEvent>, Option<ProviderError>), ProviderError> {
    if let Some(replay) = &response.replay {
        return replay_events(replay, chunk_size, dir);
    }
    let mut events = Vec::new();
    let mut calls = false;
    let cut_off = response.finish == Some(ScriptedFinish::MaxTokens);
    for (index, part) in response.parts.iter().enumerate() {
        let mut push = |part: EventPart| events.push(StreamEvent::Part { index, part });
        if let Some(text) = &part.text {
            for chunk in chunks(text, chunk_size) {
                push(EventPart::Message(chunk.to_owned()));
            }
        } else if let Some(reasoning) = &part.reasoning {
            for chunk in chunks(reasoning, chunk_size) {
                push(EventPart::Reasoning(chunk.to_owned()));
            }
        } else if let Some(tool) = &part.tool {
            calls = true;
            push(EventPart::ToolCall(ToolCallPart::Start {
                id: part
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("call_{turn}_{index}")),
                name: tool.clone(),
            }));
            let arguments = part.arguments.clone().unwrap_or_default().text();
            for chunk in chunks(&arguments, chunk_size) {
                push(EventPart::ToolCall(ToolCallPart::ArgumentChunk(
                    chunk.to_owned(),
                )));
            }
        }
        let last = index + 1 == response.parts.len();
        if !(cut_off && last) {
            events.push(StreamEvent::Flush { index });
        }
    }
    let finish = match response.finish {
        Some(ScriptedFinish::EndTurn) => FinishReason::EndTurn,
        Some(ScriptedFinish::ToolUse) => FinishReason::ToolUse,
        Some(ScriptedFinish::MaxTokens) => FinishReason::MaxTokens,
        None if calls => FinishReason::ToolUse,
        None => FinishReason::EndTurn,
    };
    events.push(StreamEvent::Finished(finish));
    Ok((events, None))
}

/// The events of a recorded body through the provider's real decoder, and
/// the error that stops it, if one does: the events before it stand, as
/// they do when the body comes over HTTP.
fn replay_events(
    replay: &Replay,
    chunk_size: usize,
    dir: &Path,
) -> Result<(Vec<StreamEvent>, Option<ProviderError>), ProviderError> {
    let body = match (&replay.body, &replay.file) {
        (Some(body), _) => body.clone().into_bytes(),
        (None, Some(file)) => {
            let path = dir.join(file);
            std::fs::read(&path).map_err(|e| {
                ProviderError::Config(format!(
                    "scripted: cannot read the recording {}: {e}",
                    path.display()
                ))
            })?
        }
        (None, None) => Vec::new(),
    };
    let mut decoder: Box<dyn WireDecoder> = match replay.format {
        ReplayFormat::Anthropic => Box::new(super::anthropic::Decoder::new()),
        ReplayFormat::Openai => Box::new(super::openai::Decoder::new()),
        ReplayFormat::Ollama => Box::new(super::ollama::Decoder::new()),
    };
    let mut events = Vec::new();
    for piece in body.chunks(chunk_size) {
        match decoder.feed(piece) {
            Ok(more) => events.extend(more),
            Err(error) => return Ok((events, Some(error))),
        }
    }
    match decoder.finish() {
        Ok(more) => events.extend(more),
        Err(error) => return Ok((events, Some(error))),
    }
    Ok((events, None))
}

/// `text` cut into pieces of about `size` bytes, at character boundaries.
fn chunks(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = size.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (head, tail) = rest.split_at(end);
        rest = tail;
        Some(head)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use futures_util::StreamExt as _;
    use jp_conversation::{EventBuilder, FlushedEvent};

    use super::*;

    fn request(assistant_messages: usize) -> ChatRequest {
        let mut messages = vec![Message::User("hi".into())];
        for _ in 0..assistant_messages {
            messages.push(Message::Assistant {
                reasoning: None,
                text: String::new(),
                tool_calls: Vec::new(),
            });
        }
        ChatRequest {
            model: "demo".into(),
            system: None,
            messages,
            tools: Vec::new(),
            max_tokens: 100,
            temperature: None,
            top_p: None,
        }
    }

    fn collect(provider: &Scripted, turn: usize) -> Vec<Result<StreamEvent, ProviderError>> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(provider.stream(request(turn)).collect())
    }

    #[test]
    fn chunks_respect_characters() {
        assert_eq!(chunks("héllo", 2).collect::<Vec<_>>(), ["hé", "ll", "o"]);
        assert_eq!(chunks("", 2).count(), 0);
    }

    #[test]
    fn the_demo_parses_and_ends_every_response() {
        let script = Script::parse(DEMO_SCRIPT, "demo").unwrap();
        assert_eq!(script.responses.len(), 3);
        let provider = Scripted::open("demo", Path::new("/nonexistent")).unwrap();
        for turn in 0..3 {
            let events = collect(&provider, turn);
            assert!(matches!(events.last(), Some(Ok(StreamEvent::Finished(_)))));
        }
        let beyond = collect(&provider, 3);
        assert_eq!(
            beyond,
            vec![Err(ProviderError::Config(
                "scripted: script `demo` has 3 responses and this is request #4 of the conversation; start a new one with `jp query --new`".into()
            ))]
        );
    }

    #[test]
    fn a_replay_keeps_the_events_before_its_error() {
        // Text, then a delta whose JSON holds a lone surrogate: the text
        // arrives, then the error, as it would over HTTP.
        let script = Script::parse(
            r#"
            [[responses]]
            replay = { format = "anthropic", body = """
event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x\\ud800y"}}

""" }
            "#,
            "inline",
        )
        .unwrap();
        let provider = Scripted::from_script(script, "inline", Path::new("."));
        let events = collect(&provider, 0);
        assert_eq!(
            events[0],
            Ok(StreamEvent::Part {
                index: 0,
                part: EventPart::Message("a".into())
            })
        );
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(
            matches!(events[1], Err(ProviderError::Decode { .. })),
            "{events:?}"
        );
    }

    #[test]
    fn tool_calls_stream_in_chunks_and_rebuild() {
        let script = Script::parse(
            r#"
            chunk_size = 3
            [[responses]]
            parts = [
              { text = "Héllo" },
              { tool = "fs_create_file", arguments = { path = "src/a.rs", content = "x" } },
              { tool = "t", id = "mine", arguments = '{"a": 1, "a": 2}' },
            ]
            "#,
            "inline",
        )
        .unwrap();
        let provider = Scripted::from_script(script, "inline", Path::new("."));
        let events: Vec<StreamEvent> = collect(&provider, 0)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            events[..3],
            [
                StreamEvent::Part {
                    index: 0,
                    part: EventPart::Message("Hé".into())
                },
                StreamEvent::Part {
                    index: 0,
                    part: EventPart::Message("llo".into())
                },
                StreamEvent::Flush { index: 0 },
            ]
        );
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finished(FinishReason::ToolUse))
        );
        let mut builder = EventBuilder::new();
        let mut flushed = Vec::new();
        for event in events {
            match event {
                StreamEvent::Part { index, part } => {
                    builder.handle_part(index, part).unwrap();
                }
                StreamEvent::Flush { index } => flushed.extend(builder.handle_flush(index)),
                _ => {}
            }
        }
        let FlushedEvent::ToolCallRequest(create) = &flushed[1] else {
            panic!("not a call: {flushed:?}")
        };
        assert_eq!(create.id, "call_0_1");
        assert_eq!(
            serde_json::Value::Object(create.arguments().unwrap().clone()),
            serde_json::json!({"path": "src/a.rs", "content": "x"})
        );
        let FlushedEvent::ToolCallRequest(dup) = &flushed[2] else {
            panic!("not a call")
        };
        assert_eq!(dup.id, "mine");
        assert_eq!(
            dup.arguments().unwrap_err().to_string(),
            "duplicate key `a` at /a: arguments with a repeated key are refused because its meaning is ambiguous"
        );
    }

    #[test]
    fn max_tokens_leaves_the_last_call_unflushed() {
        let script = Script::parse(
            r#"
            [[responses]]
            finish = "max_tokens"
            parts = [{ tool = "t", arguments = '{"path": "a' }]
            "#,
            "inline",
        )
        .unwrap();
        let provider = Scripted::from_script(script, "inline", Path::new("."));
        let events: Vec<StreamEvent> = collect(&provider, 0)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, StreamEvent::Flush { .. }))
        );
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finished(FinishReason::MaxTokens))
        );
    }

    #[test]
    fn script_errors_name_the_script() {
        assert_eq!(
            Script::parse("[[responses]]\nparts = [{ txt = \"x\" }]", "s.toml").unwrap_err(),
            "script s.toml: unknown field `txt`, expected one of `text`, `reasoning`, `tool`, `id`, `arguments`"
        );
        assert_eq!(
            Script::parse(
                "[[responses]]\nparts = [{ text = \"x\", tool = \"t\" }]",
                "s.toml"
            )
            .unwrap_err(),
            "script s.toml: responses[0].parts[0] needs exactly one of `text`, `reasoning` and `tool`"
        );
        assert_eq!(
            Script::parse("chunk_size = 0", "s.toml").unwrap_err(),
            "script s.toml: chunk_size must be at least 1"
        );
        assert_eq!(
            Scripted::open("missing.toml", Path::new("/nonexistent"))
                .unwrap_err()
                .to_string(),
            "scripted: cannot read the script /nonexistent/missing.toml: No such file or directory (os error 2) (the built-in script is `scripted/demo`)"
        );
    }
}
