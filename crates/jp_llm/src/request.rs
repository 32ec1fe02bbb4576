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
            // call's response.
            EventKind::TurnStart
            | EventKind::PolicyDenied(_)
            | EventKind::StreamStopped { .. }
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
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use jp_conversation::{ResponseStatus, ToolCallRequest, ToolCallResponse};
    use serde_json::{Map, json};

    use super::*;

    fn ev(kind: EventKind) -> ConversationEvent {
        ConversationEvent { at_ms: 0, kind }
    }

    fn call(id: &str) -> EventKind {
        let mut args = Map::new();
        args.insert("path".into(), json!("a"));
        EventKind::ToolCallRequest(ToolCallRequest::new(id, "t", args))
    }

    fn response(id: &str, status: ResponseStatus) -> EventKind {
        EventKind::ToolCallResponse(ToolCallResponse {
            id: id.into(),
            status,
            content: format!("r{id}"),
            ran: None,
        })
    }

    #[test]
    fn events_become_messages_with_results_in_call_order() {
        let events = [
            ev(EventKind::TurnStart),
            ev(EventKind::ChatRequest {
                content: "hi".into(),
            }),
            ev(EventKind::AssistantReasoning {
                content: "think".into(),
            }),
            ev(EventKind::AssistantMessage {
                content: "ok".into(),
            }),
            ev(call("1")),
            ev(call("2")),
            ev(response("2", ResponseStatus::Declined)),
            ev(response("1", ResponseStatus::Success)),
            ev(EventKind::AssistantMessage {
                content: "done".into(),
            }),
        ];
        let args = Arc::new(json!({"path": "a"}));
        assert_eq!(
            messages(&events),
            vec![
                Message::User("hi".into()),
                Message::Assistant {
                    reasoning: Some("think".into()),
                    text: "ok".into(),
                    tool_calls: vec![
                        ToolCall {
                            id: "1".into(),
                            name: "t".into(),
                            arguments: args.clone()
                        },
                        ToolCall {
                            id: "2".into(),
                            name: "t".into(),
                            arguments: args
                        },
                    ],
                },
                Message::ToolResults(vec![
                    ToolResult {
                        id: "1".into(),
                        content: "r1".into(),
                        is_error: false
                    },
                    ToolResult {
                        id: "2".into(),
                        content: "r2".into(),
                        is_error: true
                    },
                ]),
                Message::Assistant {
                    reasoning: None,
                    text: "done".into(),
                    tool_calls: vec![]
                },
            ]
        );
    }

    #[test]
    fn a_call_s_arguments_are_shared_with_the_conversation_not_copied() {
        let events = [ev(call("1")), ev(response("1", ResponseStatus::Success))];
        let EventKind::ToolCallRequest(request) = &events[0].kind else {
            unreachable!()
        };
        let Message::Assistant { tool_calls, .. } = &messages(&events)[0] else {
            panic!("not an assistant message")
        };
        assert!(Arc::ptr_eq(
            &tool_calls[0].arguments,
            &request.shared_received_arguments()
        ));
    }

    #[test]
    fn an_unanswered_call_gets_a_result() {
        let events = [
            ev(EventKind::ChatRequest {
                content: "hi".into(),
            }),
            ev(call("1")),
            ev(EventKind::TurnStart),
            ev(EventKind::ChatRequest {
                content: "again".into(),
            }),
        ];
        let out = messages(&events);
        assert_eq!(out.len(), 4);
        assert_eq!(
            out[2],
            Message::ToolResults(vec![ToolResult {
                id: "1".into(),
                content: MISSING_RESULT.into(),
                is_error: true
            }])
        );
        assert_eq!(out[3], Message::User("again".into()));
    }
}
