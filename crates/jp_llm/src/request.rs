//! Building a [`ChatRequest`](crate::ChatRequest): the conversation's events become provider
//! messages, and the configured tools become tool definitions.

use jp_config::AppConfig;
use jp_config::tool::offered;
use jp_conversation::{ConversationEvent, EventKind, view};

use crate::provider::{Message, ToolCall, ToolDefinition, ToolResult};

/// The content given to the model for a call whose answer is not in the
/// conversation: jp stopped (a crash, a kill) between the call and its
/// result.
pub const MISSING_RESULT: &str =
    "The tool call was interrupted before it finished; whether it ran is unknown.";

/// The provider messages for `events`.
///
/// Consecutive assistant events form one assistant message; tool responses
/// form the tool-results message that follows it, in the order of the
/// calls. A call without a response gets [`MISSING_RESULT`], because
/// providers refuse a history with an unanswered call.
#[must_use]
pub fn messages(events: &[ConversationEvent]) -> Vec<Message> {
    messages_eliding(events, None)
}

/// Which tool results are sent as a one-line stub instead of whole
/// (`conversation.elide_tool_results`): those of turns before the last
/// `keep_turns`, larger than `min_bytes`. The conversation keeps them
/// whole; only the request is smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elision {
    /// Results of the last this many turns (the current one included) are
    /// always sent whole.
    pub keep_turns: usize,
    /// Results of at most this many bytes are always sent whole.
    pub min_bytes: usize,
}

/// The stub a result elided by [`Elision`] is sent as: the call it
/// answered and the size left out.
#[must_use]
pub fn elided_result(tool: &str, id: &str, bytes: usize) -> String {
    format!(
        "[jp left out this result of {tool} (call {id}) from an earlier turn: {bytes} bytes, \
         kept in the conversation but not sent again; call the tool again if you need it]"
    )
}

/// How a compaction's summary is sent: at the start of the first message
/// after the turns it replaces (a message of its own would put two user
/// messages in a row), marked as jp's so the model does not take it for
/// the user's words.
#[must_use]
pub fn with_summary(summary: &str, message: &str) -> String {
    // The summary is a model's text: it cannot close the summary early
    // and speak as the user after it.
    let summary = summary
        .trim_end()
        .replace(SUMMARY_START, "(jp's summary)")
        .replace(SUMMARY_END, "(end of summary)");
    format!("{SUMMARY_START}\n{summary}\n{SUMMARY_END}\n\n{message}")
}

/// The line that opens a summary ([`with_summary`]).
const SUMMARY_START: &str =
    "[jp's summary of the earlier part of this conversation, sent in place of it:]";

/// The line that closes a summary ([`with_summary`]).
const SUMMARY_END: &str = "[end of summary]";

/// [`messages`], with the results `elision` names sent as stubs.
///
/// What is sent is the conversation's [`view::sent`], every recovery
/// event counted: turns taken back are left out, and a compaction's
/// summary replaces the turns before it.
#[must_use]
pub fn messages_eliding(events: &[ConversationEvent], elision: Option<Elision>) -> Vec<Message> {
    messages_of(view::sent(events, None), elision)
}

/// The provider messages for what `sent` holds (a part of a conversation's
/// [`view::sent`], such as the turns a compaction summarises), with the
/// results `elision` names sent as stubs.
#[must_use]
pub fn messages_of(sent: view::Sent<'_>, elision: Option<Elision>) -> Vec<Message> {
    let events = sent.events;
    let mut summary = sent
        .compaction
        .map(|compaction| compaction.summary.as_str());
    // Results of turns before this index (of `events`) are old enough.
    let old_before = elision.map_or(0, |elision| {
        let starts: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, event)| matches!(event.kind, EventKind::TurnStart))
            .map(|(i, _)| i)
            .collect();
        starts
            .len()
            .checked_sub(elision.keep_turns)
            .and_then(|first_kept| starts.get(first_kept).copied())
            .unwrap_or(0)
    });
    let min_bytes = elision.map_or(usize::MAX, |elision| elision.min_bytes);
    let mut tools: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    let mut builder = Builder::default();
    for (index, event) in events.iter().enumerate() {
        match &event.kind {
            // Denials and early stops are told to the model through the
            // call's response; usage is jp's own bookkeeping, and so is
            // recovery (its effect is what `view::sent` leaves out).
            EventKind::TurnStart
            | EventKind::Attachments { .. }
            | EventKind::PolicyDenied(_)
            | EventKind::StreamStopped { .. }
            | EventKind::Usage(_)
            | EventKind::SessionApproval(_)
            | EventKind::ApprovalsForgotten
            | EventKind::ConfigDelta(_)
            | EventKind::FileChange(_)
            | EventKind::ChangesNotKept(_)
            | EventKind::Rewind(_)
            | EventKind::Compaction(_)
            | EventKind::CallDecision(_) => {}
            EventKind::ChatRequest { content } => {
                builder.close_assistant();
                let content = match summary.take() {
                    Some(summary) => with_summary(summary, content),
                    None => content.clone(),
                };
                builder.out.push(Message::User(content));
            }
            EventKind::AssistantMessage { content } => {
                builder.assistant().1.push_str(content);
            }
            EventKind::AssistantReasoning { content } => {
                builder
                    .assistant()
                    .0
                    .get_or_insert_with(String::new)
                    .push_str(content);
            }
            EventKind::ToolCallRequest(call) => {
                tools.insert(&call.id, &call.name);
                builder.assistant().2.push(ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.shared_received_arguments(),
                });
            }
            EventKind::ToolCallResponse(response) => {
                let content = if index < old_before && response.content.len() > min_bytes {
                    let tool = tools.get(response.id.as_str()).copied().unwrap_or("a tool");
                    elided_result(tool, &response.id, response.content.len())
                } else {
                    response.content.clone()
                };
                builder.results.push(ToolResult {
                    id: response.id.clone(),
                    content,
                    is_error: response.is_error(),
                });
            }
        }
    }
    builder.close_assistant();
    // A summary with no message after it yet is sent alone.
    if let Some(summary) = summary {
        builder
            .out
            .insert(0, Message::User(with_summary(summary, "")));
    }
    builder.out
}

type Pending = (Option<String>, String, Vec<ToolCall>);

#[derive(Default)]
struct Builder {
    out: Vec<Message>,
    current: Option<Pending>,
    results: Vec<ToolResult>,
}

impl Builder {
    /// The assistant message being built; results gathered so far end the
    /// previous one first.
    fn assistant(&mut self) -> &mut Pending {
        if !self.results.is_empty() {
            self.close_assistant();
        }
        self.current
            .get_or_insert_with(|| (None, String::new(), Vec::new()))
    }

    fn close_assistant(&mut self) {
        let Some((reasoning, text, calls)) = self.current.take() else {
            // Results without a call: nothing to attach them to.
            self.results.clear();
            return;
        };
        let mut results = Vec::with_capacity(calls.len());
        for call in &calls {
            let found = self.results.iter().position(|r| r.id == call.id);
            results.push(match found {
                Some(i) => self.results.swap_remove(i),
                None => ToolResult {
                    id: call.id.clone(),
                    content: MISSING_RESULT.to_owned(),
                    is_error: true,
                },
            });
        }
        self.results.clear();
        let has_calls = !calls.is_empty();
        self.out.push(Message::Assistant {
            reasoning,
            text,
            tool_calls: calls,
        });
        if has_calls {
            self.out.push(Message::ToolResults(results));
        }
    }
}

/// About how many tokens `request` reads: its characters (the system
/// prompt, the tools' names, descriptions and schemas, and every message's
/// text, reasoning, call names, arguments and results) divided by four,
/// rounded up. Four characters a token is the usual rule for English and
/// code; real tokenizers differ by model, so this is an estimate, for
/// telling a conversation that cannot fit from one that may.
#[must_use]
pub fn estimate_tokens(request: &crate::ChatRequest) -> u64 {
    let chars = |text: &str| text.chars().count();
    let mut total = request.system.as_deref().map_or(0, chars);
    for tool in &request.tools {
        total += chars(&tool.name)
            + tool.description.as_deref().map_or(0, chars)
            + chars(&tool.parameters.to_string());
    }
    for message in &request.messages {
        total += match message {
            Message::User(text) => chars(text),
            Message::Assistant {
                reasoning,
                text,
                tool_calls,
            } => {
                reasoning.as_deref().map_or(0, chars)
                    + chars(text)
                    + tool_calls
                        .iter()
                        .map(|call| chars(&call.name) + chars(&call.arguments.to_string()))
                        .sum::<usize>()
            }
            Message::ToolResults(results) => {
                results.iter().map(|result| chars(&result.content)).sum()
            }
        };
    }
    u64::try_from(total.div_ceil(4)).unwrap_or(u64::MAX)
}

/// The tools offered to the model: every enabled, defined tool except the
/// `'*'` defaults, in config order, with its parameters as JSON Schema.
#[must_use]
pub fn tool_definitions(config: &AppConfig) -> Vec<ToolDefinition> {
    offered(&config.conversation.tools)
        .map(|(name, tool)| ToolDefinition {
            name: name.clone(),
            description: match (&tool.summary, &tool.description) {
                (Some(s), Some(d)) => Some(format!("{s}\n\n{d}")),
                (Some(one), None) | (None, Some(one)) => Some(one.clone()),
                (None, None) => None,
            },
            parameters: tool.arguments_schema().into_owned(),
        })
        .collect()
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
