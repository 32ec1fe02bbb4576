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
