//! Building a [`ChatRequest`](crate::ChatRequest): the conversation's events become provider
//! messages, and the configured tools become tool definitions.

use jp_config::AppConfig;
use jp_config::tool::{offered, parameters_json_schema};
use jp_conversation::{ConversationEvent, EventKind};

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
    let mut builder = Builder::default();
    for event in events {
        match &event.kind {
            // Denials and early stops are told to the model through the
            // call's response; usage is jp's own bookkeeping.
            EventKind::TurnStart
            | EventKind::PolicyDenied(_)
            | EventKind::StreamStopped { .. }
            | EventKind::Usage(_)
            | EventKind::ConfigDelta(_) => {}
            EventKind::ChatRequest { content } => {
                builder.close_assistant();
                builder.out.push(Message::User(content.clone()));
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
                builder.assistant().2.push(ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.shared_received_arguments(),
                });
            }
            EventKind::ToolCallResponse(response) => {
                builder.results.push(ToolResult {
                    id: response.id.clone(),
                    content: response.content.clone(),
                    is_error: response.is_error(),
                });
            }
        }
    }
    builder.close_assistant();
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
            parameters: parameters_json_schema(&tool.parameters),
        })
        .collect()
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
