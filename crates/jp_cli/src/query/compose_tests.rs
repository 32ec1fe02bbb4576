#![allow(clippy::unwrap_used)]

use jp_conversation::{ResponseStatus, ToolCallRequest, ToolCallResponse};
use serde_json::{Map, Value};

use super::*;

fn event(kind: EventKind) -> ConversationEvent {
    ConversationEvent::now(kind)
}

fn conversation() -> Vec<ConversationEvent> {
    let mut arguments = Map::new();
    arguments.insert("path".into(), Value::from("src/lib.rs"));
    vec![
        event(EventKind::TurnStart),
        event(EventKind::ChatRequest {
            content: "an older question".into(),
        }),
        event(EventKind::AssistantMessage {
            content: "an older answer".into(),
        }),
        event(EventKind::TurnStart),
        event(EventKind::ChatRequest {
            content: "rename main\nto hello".into(),
        }),
        event(EventKind::AssistantReasoning {
            content: "not shown".into(),
        }),
        event(EventKind::AssistantMessage {
            content: "I'll read it \u{1b}[2J first.\n\n".into(),
        }),
        event(EventKind::ToolCallRequest(ToolCallRequest::new(
            "toolu_1",
            "fs_read_file",
            arguments,
        ))),
        event(EventKind::ToolCallResponse(ToolCallResponse {
            id: "toolu_1".into(),
            status: ResponseStatus::Success,
            content: "pub fn main() {}\nmore".into(),
            ran: None,
        })),
        event(EventKind::AssistantMessage {
            content: "Renamed.".into(),
        }),
    ]
}

#[test]
fn the_file_holds_the_message_then_the_last_exchange_commented_out() {
    assert_eq!(
        template("explain this", &conversation()),
        "explain this\n\
         \n\
         # -------- >8 -------- write above this line -------- >8 --------\n\
         # Write your message above the line. jp sends it, trimmed, and leaves out\n\
         # everything from the line down; an empty message sends nothing.\n\
         #\n\
         # The last exchange of this conversation:\n\
         #\n\
         # you: rename main\n\
         # to hello\n\
         # assistant: I'll read it \\u{1b}[2J first.\n\
         # tool call fs_read_file({\"path\":\"src/lib.rs\"})\n\
         # tool result [success]: pub fn main() {}\n\
         # assistant: Renamed.\n"
    );
    assert_eq!(
        template("", &[]),
        "\n\
         \n\
         # -------- >8 -------- write above this line -------- >8 --------\n\
         # Write your message above the line. jp sends it, trimmed, and leaves out\n\
         # everything from the line down; an empty message sends nothing.\n\
         #\n\
         # This starts the conversation.\n"
    );
}

#[test]
fn a_long_message_below_the_marker_is_cut() {
    let long: String = (1..=45).map(|n| format!("line {n}\n")).collect();
    let events = [
        event(EventKind::TurnStart),
        event(EventKind::AssistantMessage { content: long }),
    ];
    let text = template("", &events);
    assert!(
        text.ends_with("# line 39\n# line 40\n# … 5 more lines\n"),
        "{text}"
    );
    assert!(text.contains("# assistant: line 1\n"), "{text}");
}

#[test]
fn what_is_sent_is_above_the_marker_trimmed() {
    let file = template("", &conversation()).replacen("\n", "  Explain   this.\n\nThanks\n", 1);
    assert_eq!(written(&file).as_deref(), Some("Explain   this.\n\nThanks"));
    // Untouched, or only spaces: nothing.
    assert_eq!(written(&template("", &conversation())), None);
    assert_eq!(written(&template(" \n\t", &[])), None);
    // A markdown heading above the marker is part of the message.
    assert_eq!(
        written(&format!("# Title\nbody\n{MARKER}\n# you: old\n")).as_deref(),
        Some("# Title\nbody")
    );
    // Saved with CRLF line ends, the marker still ends the message.
    assert_eq!(
        written(&format!("hi\r\n{MARKER}\r\nold\r\n")).as_deref(),
        Some("hi")
    );
    // The marker deleted: all of it is the message.
    assert_eq!(written("all\nof it\n").as_deref(), Some("all\nof it"));
}
