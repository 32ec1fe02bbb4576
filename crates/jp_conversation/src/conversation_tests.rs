#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;
use crate::ArgumentsError;

#[test]
fn dates() {
    assert_eq!(format_utc(0), "1970-01-01 00:00");
    assert_eq!(format_utc(951_782_400_000), "2000-02-29 00:00");
    assert_eq!(format_utc(1_795_350_600_000), "2026-11-22 12:30");
}

#[test]
fn wire_shape() {
    let mut args = serde_json::Map::new();
    args.insert("path".into(), json!("a.rs"));
    let event = ConversationEvent {
        at_ms: 5,
        kind: EventKind::ToolCallRequest(ToolCallRequest::new("c1", "fs_read_file", args)),
    };
    let value = serde_json::to_value(&event).unwrap();
    assert_eq!(
        value,
        json!({"at_ms": 5, "type": "tool_call_request", "id": "c1", "name": "fs_read_file", "arguments": {"path": "a.rs"}})
    );
    assert_eq!(
        serde_json::from_value::<ConversationEvent>(value).unwrap(),
        event
    );
}

#[test]
fn an_invalid_call_stays_invalid_when_read_back() {
    let call = ToolCallRequest::invalid(
        "c1",
        "x",
        serde_json::Map::new(),
        ArgumentsError::NotAnObject("an array"),
    );
    let text = serde_json::to_string(&EventKind::ToolCallRequest(call)).unwrap();
    assert_eq!(
        text,
        r#"{"type":"tool_call_request","id":"c1","name":"x","arguments":{},"error":"tool arguments must be a JSON object, got an array"}"#
    );
    let EventKind::ToolCallRequest(back) = serde_json::from_str(&text).unwrap() else {
        panic!("not a tool call request");
    };
    assert_eq!(
        back.arguments().unwrap_err().to_string(),
        "tool arguments must be a JSON object, got an array"
    );
}
