//! How a turn ends: the tokens line, what is said of how it ended, the
//! exit code (docs/query.md, "Exit codes"), and the event stream's `end`.

use jp_term::printer::{Printer, Style};

use super::fit;
use super::session::Session;
use super::trail;
use super::turn::TurnEnd;
use crate::exit;

/// Ends the turn that ended as `end`: the tokens line, how it ended (said,
/// and written as the event stream's last event); the exit code.
pub(super) fn finish(session: &Session, end: TurnEnd) -> u8 {
    let printer = &session.printer;
    printer.stop_spinner();
    printer.finish_content();
    let turn = crate::usage::last_turn(&session.conversation.events);
    if let Some(mut line) = crate::usage::turn_line(turn) {
        // How much of the window the next request takes.
        if let (_, Some(window)) = session.window() {
            let next = jp_llm::request::estimate_tokens(&session.request());
            line.push_str(&format!(" · {}", crate::usage::context(next, window)));
        }
        printer.chrome_line(Style::Dim, &line);
    }
    let taken_back = fit::taken_back(&session.conversation.events);
    let mut ended = ending(printer, end, &session.conversation.id, taken_back);
    let declined = trail::declined_by_policy(turn);
    if matches!(ended.reason, "completed" | "max_tokens") && declined > 0 {
        // Completed, but a policy declined a call (each said as it was):
        // a script can tell.
        ended.code = exit::DECLINED;
    }
    if let Some(stream) = &session.events {
        stream.end(ended.reason, ended.code, ended.message.as_deref());
    }
    ended.code
}

/// [`finish`] for a turn that ended, or, for one jp itself failed (said
/// by the caller, exit 1), the event stream's `end` and the error.
pub(super) fn finish_or_fail(
    session: &Session,
    end: Result<TurnEnd, crate::error::Error>,
) -> Result<u8, crate::error::Error> {
    end.map(|end| finish(session, end)).inspect_err(|error| {
        if let Some(stream) = &session.events {
            stream.end("error", exit::INVALID_CONFIG, Some(&error.to_string()));
        }
    })
}

/// How a turn ended, for its exit code and the event stream's `end`.
struct Ended {
    /// The exit code.
    code: u8,
    /// How it ended, as docs/events.md names it.
    reason: &'static str,
    /// What failed, for a turn that failed.
    message: Option<String>,
}

impl Ended {
    fn new(code: u8, reason: &'static str) -> Self {
        Self {
            code,
            reason,
            message: None,
        }
    }
}

/// A turn that failed (`message`, then what became of it, `after`): exit
/// `code`, for `reason`.
fn failed(
    printer: &Printer,
    message: String,
    after: &str,
    code: u8,
    reason: &'static str,
) -> Ended {
    printer.chrome_line(Style::Bad, &format!("error: {message}"));
    printer.chrome_line(Style::Dim, after);
    Ended {
        message: Some(message),
        ..Ended::new(code, reason)
    }
}

/// What becomes of a failed turn's conversation `conversation`.
fn kept(conversation: &str) -> String {
    format!(
        "the conversation keeps what arrived; `jp query` continues it (conversation {conversation})"
    )
}

/// Says how the turn ended, after what it printed. `taken_back`: the
/// turn's first request was refused as too large, and the turn taken back.
fn ending(printer: &Printer, end: TurnEnd, conversation: &str, taken_back: bool) -> Ended {
    printer.stop_spinner();
    printer.finish_content();
    match end {
        TurnEnd::Completed => Ended::new(0, "completed"),
        TurnEnd::MaxTokens => {
            printer.chrome_line(
                Style::Warn,
                "note: the response was cut off at assistant.model.parameters.max_tokens",
            );
            Ended::new(0, "max_tokens")
        }
        TurnEnd::Interrupted => {
            printer.chrome_line(
                Style::Warn,
                "interrupted; the conversation keeps what arrived",
            );
            Ended::new(exit::INTERRUPTED, "interrupted")
        }
        TurnEnd::Stopped => {
            printer.chrome_line(
                Style::Warn,
                "stopped; the conversation keeps what arrived, and `jp query` continues it",
            );
            Ended::new(0, "stopped")
        }
        TurnEnd::Failed(message) if taken_back => failed(
            printer,
            message,
            &format!(
                "your message was not sent, and is not sent again; the conversation keeps it (`jp conversation show`, conversation {conversation})"
            ),
            exit::PROVIDER,
            "provider_error",
        ),
        TurnEnd::Failed(message) => failed(
            printer,
            message,
            &kept(conversation),
            exit::PROVIDER,
            "provider_error",
        ),
        TurnEnd::ConfigFailed(message) => failed(
            printer,
            message,
            &kept(conversation),
            exit::INVALID_CONFIG,
            "config_error",
        ),
        TurnEnd::CycleLimit(n) => {
            printer.chrome_line(
                Style::Bad,
                &format!(
                    "stopped: the model kept calling tools past {n} {} (--max-turns, conversation.max_turns); the calls' results are kept, and `jp query -c` goes on (conversation {conversation})",
                    if n == 1 { "response" } else { "responses" }
                ),
            );
            Ended::new(exit::BUDGET, "max_turns")
        }
        TurnEnd::CostLimit(over) => {
            printer.chrome_line(
                Style::Bad,
                &format!(
                    "stopped: the query spent {} (--max-cost, conversation.max_cost); the conversation keeps what arrived, and `jp query -c` goes on (conversation {conversation})",
                    over.describe()
                ),
            );
            Ended::new(exit::BUDGET, "max_cost")
        }
    }
}
