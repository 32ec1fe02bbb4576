//! The message written in the editor: `jp query` with no message on a
//! terminal, or with `-e`, opens `$VISUAL`/`$EDITOR` on a temporary file
//! holding the message so far, a marker line, and below it the last
//! exchange of the conversation, commented out, for reference. jp sends
//! what is above the marker, trimmed; an empty message sends nothing.

use std::path::PathBuf;

use jp_conversation::{ConversationEvent, EventKind};

use jp_term::printer::{cut, sanitize};
use jp_term::prompt::external::run_editor;

/// The line below which nothing is sent.
pub const MARKER: &str = "# -------- >8 -------- write above this line -------- >8 --------";

/// The most lines of one message of the last exchange shown below the
/// marker.
const MESSAGE_LINES: usize = 40;

/// How composing the message ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Composed {
    /// The message to send.
    Message(String),
    /// The user left the message empty: nothing is sent.
    Empty,
    /// The editor did not run or failed (why); what the user wrote, if
    /// anything, is kept in the file named.
    Failed {
        /// Why.
        why: String,
        /// The file that keeps the message, when there is one.
        kept: Option<PathBuf>,
    },
}

/// Opens the editor on [`template`] of `prefill` and `events`, and
/// returns what the user wrote.
#[must_use]
pub fn compose(prefill: &str, events: &[ConversationEvent]) -> Composed {
    let fail = |why: String| Composed::Failed { why, kept: None };
    let dir = match tempfile::Builder::new().prefix("jp-message-").tempdir() {
        Ok(dir) => dir,
        Err(e) => return fail(format!("cannot make a file for the message: {e}")),
    };
    let path = dir.path().join("message.md");
    if let Err(e) = std::fs::write(&path, template(prefill, events)) {
        return fail(format!("cannot write {}: {e}", path.display()));
    }
    let ran = run_editor(&path);
    let text = std::fs::read_to_string(&path);
    match (ran, text) {
        (Ok(()), Ok(text)) => written(&text).map_or(Composed::Empty, Composed::Message),
        (Ok(()), Err(e)) => fail(format!("cannot read the message back: {e}")),
        (Err(why), text) => {
            // The editor failed: what was written is kept.
            let wrote = text.ok().and_then(|text| written(&text)).is_some();
            let kept = wrote.then(|| dir.keep().join("message.md"));
            Composed::Failed { why, kept }
        }
    }
}

/// While it lives, Ctrl+C (SIGINT, which the terminal sends to every
/// process on it, the editor too) is caught and dropped by jp, as git
/// does while an editor runs: the editor decides what it means (most
/// take it as a key; one that exits on it has failed, and jp says so,
/// keeping what was written) instead of jp dying under an editor still
/// open. The handler stays installed afterwards, and the turn's own
/// handling of Ctrl+C takes over (`signals.rs`).
pub struct EditorSignals {
    /// Held, never read: its handler is what keeps jp alive.
    _interrupt: Option<tokio::signal::unix::Signal>,
}

impl EditorSignals {
    /// Catches SIGINT; to be called within a tokio runtime's context.
    #[must_use]
    pub fn hold() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        Self {
            _interrupt: signal(SignalKind::interrupt()).ok(),
        }
    }
}

/// The file the editor opens: `prefill`, an empty line, the [`MARKER`],
/// how it works, and the last exchange of `events` (from the last turn's
/// start), each line commented out.
#[must_use]
pub fn template(prefill: &str, events: &[ConversationEvent]) -> String {
    let mut text = format!("{prefill}\n\n{MARKER}\n");
    text.push_str(
        "# Write your message above the line. jp sends it, trimmed, and leaves out\n\
         # everything from the line down; an empty message sends nothing.\n",
    );
    let exchange = last_exchange(events);
    if exchange.is_empty() {
        text.push_str("#\n# This starts the conversation.\n");
    } else {
        text.push_str("#\n# The last exchange of this conversation:\n#\n");
        for line in exchange {
            if line.is_empty() {
                text.push_str("#\n");
            } else {
                text.push_str(&format!("# {line}\n"));
            }
        }
    }
    text
}

/// What the user wrote: the text above the marker line (all of it when
/// the line is gone), trimmed; `None` when that is empty.
#[must_use]
pub fn written(text: &str) -> Option<String> {
    let above = text
        .split_inclusive('\n')
        .take_while(|line| line.trim_end() != MARKER)
        .collect::<String>();
    let message = above.trim();
    (!message.is_empty()).then(|| message.to_owned())
}

/// The last turn of `events` as lines to read: the user's messages, the
/// assistant's text, a line for each tool call and result; escaped, each
/// message cut to [`MESSAGE_LINES`] lines.
fn last_exchange(events: &[ConversationEvent]) -> Vec<String> {
    let start = events
        .iter()
        .rposition(|event| matches!(event.kind, EventKind::TurnStart))
        .map_or(events.len(), |at| at + 1);
    let mut lines = Vec::new();
    for event in &events[start..] {
        match &event.kind {
            EventKind::ChatRequest { content } => message(&mut lines, "you", content),
            EventKind::AssistantMessage { content } => message(&mut lines, "assistant", content),
            EventKind::ToolCallRequest(call) => {
                let arguments = serde_json::Value::Object(call.received_arguments().clone());
                lines.push(format!(
                    "tool call {}({})",
                    sanitize(&call.name),
                    sanitize(&cut(&arguments.to_string(), 100))
                ));
            }
            EventKind::ToolCallResponse(response) => {
                let first = response.content.lines().next().unwrap_or_default();
                lines.push(format!(
                    "tool result [{}]: {}",
                    response.status.as_str(),
                    sanitize(&cut(first, 100))
                ));
            }
            _ => {}
        }
    }
    lines
}

/// `content` by `who` as lines: `you: ` before the first, at most
/// [`MESSAGE_LINES`] of them and a count of the rest.
fn message(lines: &mut Vec<String>, who: &str, content: &str) {
    let all: Vec<&str> = content.trim_end().lines().collect();
    for (index, line) in all.iter().take(MESSAGE_LINES).enumerate() {
        let line = sanitize(line);
        if index == 0 {
            lines.push(format!("{who}: {line}"));
        } else {
            lines.push(line.into_owned());
        }
    }
    if all.len() > MESSAGE_LINES {
        lines.push(format!("… {} more lines", all.len() - MESSAGE_LINES));
    }
}

#[cfg(test)]
#[path = "compose_tests.rs"]
mod tests;
