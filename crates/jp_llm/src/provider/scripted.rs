//! The offline `scripted` provider: streams responses written in a file.
//!
//! It exists for demos, docs and tests, and for tool authors who want to try
//! a tool and its policies without an API key. The model id
//! `scripted/NAME` picks the script: `demo` is built into jp; anything else
//! is a path to a TOML file, relative to the workspace root.
//!
//! The model id applies without the workspace being trusted, so a script
//! (and every recording it names) must be a regular file inside the
//! workspace: a relative path without `..`, reached through no symbolic
//! link, of at most [`MAX_SCRIPT_BYTES`] (a recording
//! [`MAX_RECORDING_BYTES`]). Anything else is refused before it is read.
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
//! (`format` is `anthropic`, `openai` (Chat Completions),
//! `openai_responses`, `ollama` or `gemini`; `body = "..."` inlines
//! the bytes instead of `file`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use jp_conversation::{EventPart, ToolCallPart};
use serde::Deserialize;

use super::{ChatRequest, EventStream, FinishReason, Message, Provider, StreamEvent, WireDecoder};
use crate::call_ids::CallIds;
use crate::error::{ProviderError, ScriptError};

/// The script `scripted/demo` plays: the session the README shows.
pub const DEMO_SCRIPT: &str = include_str!("scripted/demo.toml");

/// The most jp reads of a script.
pub const MAX_SCRIPT_BYTES: u64 = 4 << 20;

/// The most jp reads of a recording a script replays.
pub const MAX_RECORDING_BYTES: u64 = 64 << 20;

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
#[serde(try_from = "serde_json::Value")]
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

impl TryFrom<serde_json::Value> for ScriptedArguments {
    type Error = String;

    fn try_from(value: serde_json::Value) -> Result<Self, String> {
        match value {
            serde_json::Value::String(text) => Ok(Self::Raw(text)),
            serde_json::Value::Object(map) => Ok(Self::Value(map)),
            other => Err(format!(
                "`arguments` must be a table (sent as its JSON) or a string (sent as written), not {}",
                match other {
                    serde_json::Value::Null => "nothing",
                    serde_json::Value::Bool(_) => "a boolean",
                    serde_json::Value::Number(_) => "a number",
                    _ => "an array",
                }
            )),
        }
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
    /// The body's file, relative to the script's directory (inside the
    /// workspace: see the module's documentation).
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
    /// OpenAI Responses SSE (`format = "openai_responses"`).
    OpenaiResponses,
    /// Gemini `streamGenerateContent` SSE.
    Gemini,
}

impl Script {
    /// Parses a script; `origin` names it in errors.
    ///
    /// # Errors
    ///
    /// A [`ScriptError`] naming the script and what is wrong.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ScriptError> {
        let origin = || origin.to_owned();
        let script: Self = toml::from_str(text).map_err(|e| ScriptError::Toml {
            origin: origin(),
            message: e.message().to_owned(),
        })?;
        if script.chunk_size == 0 {
            return Err(ScriptError::ChunkSize { origin: origin() });
        }
        for (response, scripted) in script.responses.iter().enumerate() {
            for (part, scripted_part) in scripted.parts.iter().enumerate() {
                let kinds = [
                    scripted_part.text.is_some(),
                    scripted_part.reasoning.is_some(),
                    scripted_part.tool.is_some(),
                ];
                if kinds.iter().filter(|k| **k).count() != 1 {
                    return Err(ScriptError::PartKind {
                        origin: origin(),
                        response,
                        part,
                    });
                }
                if scripted_part.tool.is_none()
                    && (scripted_part.id.is_some() || scripted_part.arguments.is_some())
                {
                    return Err(ScriptError::PartWithoutTool {
                        origin: origin(),
                        response,
                        part,
                    });
                }
            }
            if let Some(replay) = &scripted.replay {
                if !scripted.parts.is_empty() {
                    return Err(ScriptError::ReplayAndParts {
                        origin: origin(),
                        response,
                    });
                }
                if replay.body.is_some() == replay.file.is_some() {
                    return Err(ScriptError::ReplaySource {
                        origin: origin(),
                        response,
                    });
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
    files: Files,
}

/// Where a script's recordings are: `dir` (relative) below `root`.
#[derive(Debug, Clone)]
struct Files {
    root: PathBuf,
    dir: PathBuf,
}

impl Files {
    /// Reads the recording `file` (relative to the script's directory).
    fn read(&self, file: &Path) -> Result<Vec<u8>, ProviderError> {
        let rel = self.dir.join(file);
        jp_fs::read(&self.root, &rel, MAX_RECORDING_BYTES).map_err(|e| {
            ProviderError::Config(format!(
                "scripted: cannot read the recording {}: {}",
                self.root.join(&rel).display(),
                jp_fs::io_reason(&e)
            ))
        })
    }
}

impl Scripted {
    /// The script `name` (from `scripted/NAME`): `demo`, or a regular file
    /// inside `workspace_root`, named relative to it, reached through no
    /// link.
    ///
    /// # Errors
    ///
    /// When the file is outside the workspace, is not a regular file, is
    /// larger than [`MAX_SCRIPT_BYTES`], cannot be read or is not a script.
    pub fn open(name: &str, workspace_root: &Path) -> Result<Self, ProviderError> {
        if name == "demo" {
            return Ok(Self::from_script(
                Script::parse(DEMO_SCRIPT, "demo")?,
                name,
                workspace_root,
            ));
        }
        let rel = Path::new(name);
        let path = workspace_root.join(rel);
        let text = jp_fs::read_to_string(workspace_root, rel, MAX_SCRIPT_BYTES).map_err(|e| {
            ProviderError::Config(format!(
                "scripted: cannot read the script {}: {} (the built-in script is `scripted/demo`)",
                path.display(),
                jp_fs::io_reason(&e)
            ))
        })?;
        let script = Script::parse(&text, &path.display().to_string())?;
        let mut provider = Self::from_script(script, name, workspace_root);
        provider.files.dir = rel.parent().unwrap_or(Path::new("")).to_path_buf();
        Ok(provider)
    }

    /// A provider playing `script`; replay files resolve against `root`,
    /// and must be inside it.
    #[must_use]
    pub fn from_script(script: Script, name: &str, root: &Path) -> Self {
        Self {
            script,
            name: name.to_owned(),
            files: Files {
                root: root.to_path_buf(),
                dir: PathBuf::new(),
            },
        }
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn stream(&self, request: ChatRequest) -> EventStream {
        // Responses so far in the conversation: made-up call ids carry it,
        // so they stay new to the conversation when a script plays again.
        let turn = request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        // The script plays from its start after each message of the user,
        // so `jp query` can play it again in the same conversation.
        let played = request
            .messages
            .iter()
            .rev()
            .take_while(|m| !matches!(m, Message::User(_)))
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        let script = self.script.clone();
        let name = self.name.clone();
        let files = self.files.clone();
        Box::pin(async_stream::try_stream! {
            let Some(response) = script.responses.get(played) else {
                Err(ProviderError::Config(format!(
                    "scripted: script `{name}` has {} and this is request #{} since your last message",
                    match script.responses.len() {
                        1 => "1 response".to_owned(),
                        n => format!("{n} responses"),
                    },
                    played + 1
                )))?;
                return;
            };
            let delay = Duration::from_millis(script.delay_ms);
            let (events, error) = plan(response, &request, turn, script.chunk_size, &files)?;
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
    request: &ChatRequest,
    turn: usize,
    chunk_size: usize,
    files: &Files,
) -> Result<(Vec<StreamEvent>, Option<ProviderError>), ProviderError> {
    if let Some(replay) = &response.replay {
        return replay_events(replay, request, chunk_size, files);
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
    request: &ChatRequest,
    chunk_size: usize,
    files: &Files,
) -> Result<(Vec<StreamEvent>, Option<ProviderError>), ProviderError> {
    let body = match (&replay.body, &replay.file) {
        (Some(body), _) => body.clone().into_bytes(),
        (None, Some(file)) => files.read(file)?,
        (None, None) => Vec::new(),
    };
    let mut decoder: Box<dyn WireDecoder> = match replay.format {
        ReplayFormat::Anthropic => Box::new(super::anthropic::Decoder::new()),
        ReplayFormat::Openai => Box::new(super::openai::Decoder::new()),
        ReplayFormat::Ollama => Box::new(super::ollama::Decoder::new()),
        ReplayFormat::OpenaiResponses => Box::new(super::openai_responses::Decoder::new()),
        // Gemini's calls come without ids: make ones new to the
        // conversation, as over HTTP.
        ReplayFormat::Gemini => {
            Box::new(super::google::Decoder::new().with_call_ids(CallIds::of(request)))
        }
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
#[path = "scripted_tests.rs"]
mod tests;
