#![allow(clippy::unwrap_used)]

use super::*;

fn call(arguments: &str) -> ToolCallRequest {
    let mut builder = EventBuilder::new();
    let start = ToolCallPart::Start {
        id: "1".into(),
        name: "t".into(),
    };
    builder.handle_part(0, EventPart::ToolCall(start)).unwrap();
    let chunk = ToolCallPart::ArgumentChunk(arguments.into());
    builder.handle_part(0, EventPart::ToolCall(chunk)).unwrap();
    let Some(FlushedEvent::ToolCallRequest(call)) = builder.handle_flush(0) else {
        panic!("no call")
    };
    call
}

#[test]
fn a_repeated_key_shows_both_values() {
    assert_eq!(
        received_arguments_line(&call(r#"{"path": "a", "path": "/etc/x", "n": 1}"#), 200),
        r#"path: "a" or "/etc/x" (duplicate key), n: 1"#
    );
    assert_eq!(
        received_arguments_line(
            &call(r#"{"path": "p", "patterns": [{"old": "x", "old": "y", "new": ""}]}"#),
            200
        ),
        r#"path: "p", patterns: <duplicate key at /patterns/0/old: "x" or "y">"#
    );
    assert_eq!(
        received_arguments_line(&call(r#"{"a/b": 1, "a/b": 2}"#), 200),
        r#"a/b: 1 or 2 (duplicate key)"#
    );
    assert_eq!(
        received_arguments_line(&call(r#"{"path": "a"}"#), 200),
        r#"path: "a""#
    );
}
