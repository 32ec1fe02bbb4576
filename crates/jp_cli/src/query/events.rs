//! `jp query --format jsonl`: the turn as it happens, one JSON object per
//! line on stdout, for scripts (docs/events.md). Every event the
//! conversation records is written as it is recorded, in its stored form
//! (`{"at_ms": ..., "type": "tool_call_request", ...}`); around them come
//! the events only a live turn has: the start, the text and reasoning as
//! they stream, each call as it starts and how far its arguments have
//! come (at most every [`PROGRESS_EVERY`] a call), and the end with its
//! reason and exit code.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use jp_conversation::ConversationEvent;
use serde_json::{Value, json};

/// The version of the events' schema; a change that could break a reader
/// (a field removed or changed in meaning) raises it.
pub const VERSION: u32 = 1;

/// The least time between two `tool_call_progress` events of one call.
pub const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Where the events go (see the module).
pub struct EventStream {
    out: Mutex<Out>,
}

struct Out {
    writer: Box<dyn Write + Send>,
    /// A write failed (the reader went away): nothing more is written,
    /// and the turn goes on.
    broken: bool,
    /// The calls streaming, by their number in the response.
    calls: HashMap<usize, Progress>,
}

/// How far a streaming call's arguments were last said to have come.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    id: String,
    said: Option<(Instant, usize)>,
}

impl Progress {
    /// A call with id `id` that has just started.
    #[must_use]
    pub fn new(id: &str) -> Self {
        Self {
            id: id.to_owned(),
            said: None,
        }
    }

    /// Whether `bytes` (at `now`) is worth an event: more than was said,
    /// and [`PROGRESS_EVERY`] after the last one (the first at once).
    #[must_use]
    pub fn due(&self, bytes: usize, now: Instant) -> bool {
        match self.said {
            None => bytes > 0,
            Some((at, said)) => bytes > said && now.duration_since(at) >= PROGRESS_EVERY,
        }
    }
}

impl EventStream {
    /// Events written to `writer`.
    #[must_use]
    pub fn new(writer: Box<dyn Write + Send>) -> Self {
        Self {
            out: Mutex::new(Out {
                writer,
                broken: false,
                calls: HashMap::new(),
            }),
        }
    }

    /// Events written to stdout.
    #[must_use]
    pub fn stdout() -> Self {
        Self::new(Box::new(std::io::stdout()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Out> {
        self.out
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes `value` as one line, at once.
    fn emit(&self, value: &Value) {
        Self::emit_to(&mut self.lock(), value);
    }

    fn emit_to(out: &mut Out, value: &Value) {
        if out.broken {
            return;
        }
        let mut line = value.to_string();
        line.push('\n');
        if out
            .writer
            .write_all(line.as_bytes())
            .and_then(|()| out.writer.flush())
            .is_err()
        {
            out.broken = true;
        }
    }

    /// The turn starts, in conversation `conversation`, with `model`.
    pub fn start(&self, conversation: &str, model: &str) {
        self.emit(&json!({
            "type": "start",
            "version": VERSION,
            "conversation": conversation,
            "model": model,
        }));
    }

    /// `event` was recorded in the conversation.
    pub fn recorded(&self, event: &ConversationEvent) {
        match serde_json::to_value(event) {
            Ok(value) => self.emit(&value),
            Err(error) => tracing::warn!(%error, "an event could not be written as JSON"),
        }
    }

    /// A piece of the assistant's text arrived.
    pub fn text(&self, text: &str) {
        self.emit(&json!({"type": "text_delta", "text": text}));
    }

    /// A piece of the assistant's reasoning arrived.
    pub fn reasoning(&self, text: &str) {
        self.emit(&json!({"type": "reasoning_delta", "text": text}));
    }

    /// Call number `call` of the response (`id`, of tool `name`) started.
    pub fn call_started(&self, call: usize, id: &str, name: &str) {
        let mut out = self.lock();
        out.calls.insert(call, Progress::new(id));
        Self::emit_to(
            &mut out,
            &json!({"type": "tool_call_start", "id": id, "name": name}),
        );
    }

    /// Call number `call` has received `bytes` of its arguments, at `now`:
    /// said when it is due ([`Progress::due`]).
    pub fn progress(&self, call: usize, bytes: usize, now: Instant) {
        let mut out = self.lock();
        let Some(progress) = out.calls.get_mut(&call) else {
            return;
        };
        if !progress.due(bytes, now) {
            return;
        }
        progress.said = Some((now, bytes));
        let value = json!({"type": "tool_call_progress", "id": progress.id, "bytes": bytes});
        Self::emit_to(&mut out, &value);
    }

    /// A call's verdict is known, before it runs (`runs`: it will, if
    /// the checks at its start let it): how it was decided so far. The
    /// recorded `call_decision`, just before its result, is the final word
    /// (a hook or the check at its start can still change it).
    pub fn decided(&self, decision: &jp_conversation::CallDecision, runs: bool) {
        /// The event: the record's fields between its type and `runs`.
        #[derive(serde::Serialize)]
        struct Decided<'a> {
            r#type: &'static str,
            #[serde(flatten)]
            decision: &'a jp_conversation::CallDecision,
            runs: bool,
        }
        let event = Decided {
            r#type: "tool_call_decided",
            decision,
            runs,
        };
        match serde_json::to_value(event) {
            Ok(value) => self.emit(&value),
            Err(error) => tracing::warn!(%error, "an event could not be written as JSON"),
        }
    }

    /// The turn ended: `reason` (docs/events.md lists them), the exit code
    /// jp ends with, and for a failure what failed.
    pub fn end(&self, reason: &str, code: u8, message: Option<&str>) {
        let mut value = json!({"type": "end", "reason": reason, "exit_code": code});
        if let Some(message) = message {
            value["message"] = json!(message);
        }
        self.emit(&value);
    }
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
