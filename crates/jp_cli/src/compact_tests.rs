#![allow(clippy::unwrap_used)]

use jp_conversation::{Compaction, ConversationEvent, EventKind, Rewind, RewindReason};
use jp_llm::Message;

use super::*;

fn at(kind: EventKind) -> ConversationEvent {
    ConversationEvent { at_ms: 1, kind }
}

/// `n` turns: starts at 0, 3, 6, ...
fn turns(n: usize) -> Vec<ConversationEvent> {
    let mut events = Vec::new();
    for turn in 1..=n {
        events.push(at(EventKind::TurnStart));
        events.push(at(EventKind::ChatRequest {
            content: format!("q{turn}"),
        }));
        events.push(at(EventKind::AssistantMessage {
            content: format!("a{turn}"),
        }));
    }
    events
}

fn compaction(upto: usize) -> EventKind {
    EventKind::Compaction(Compaction {
        upto,
        summary: "S".into(),
        model: "scripted/s".into(),
        edited: false,
    })
}

fn base() -> ChatRequest {
    ChatRequest {
        model: "m".into(),
        system: Some("system".into()),
        messages: Vec::new(),
        tools: Vec::new(),
        max_tokens: 1,
        temperature: Some(0.5),
        top_p: None,
    }
}

#[test]
fn the_turns_before_the_kept_ones_are_the_candidate() {
    let events = turns(4);
    let sent = sent_turns(&events, None);
    assert_eq!(sent, [0, 3, 6, 9]);
    assert_eq!(
        candidate(&events, &sent, 2),
        Some(Candidate { upto: 6, turns: 2 })
    );
    assert_eq!(
        candidate(&events, &sent, 3),
        Some(Candidate { upto: 3, turns: 1 })
    );
    assert_eq!(candidate(&events, &sent, 4), None, "all kept");
    assert_eq!(candidate(&events, &sent, 9), None);
}

#[test]
fn a_compaction_in_force_counts_only_the_turns_after_it() {
    let mut events = turns(4);
    events.push(at(compaction(6)));
    // Turns 3 and 4 are sent whole: with two kept, nothing is new.
    let sent = sent_turns(&events, None);
    assert_eq!(sent, [6, 9]);
    assert_eq!(candidate(&events, &sent, 2), None);
    // One kept: the summary and turn 3 are summarised again.
    assert_eq!(
        candidate(&events, &sent, 1),
        Some(Candidate { upto: 9, turns: 3 })
    );
}

#[test]
fn rewound_turns_are_not_counted() {
    let mut events = turns(3);
    events.push(at(EventKind::Rewind(Rewind {
        turns: vec![6],
        reason: RewindReason::TooLarge,
        restored: Vec::new(),
        removed: Vec::new(),
        left: Vec::new(),
        complete: true,
    })));
    let sent = sent_turns(&events, None);
    assert_eq!(sent, [0, 3]);
    assert_eq!(
        candidate(&events, &sent, 1),
        Some(Candidate { upto: 3, turns: 1 })
    );
}

#[test]
fn the_summary_request_asks_for_the_summary_after_the_turns_it_replaces() {
    let mut events = turns(3);
    events.push(at(compaction(3)));
    let request = summary_request(base(), &events, None, 6, None, 99);
    assert_eq!(
        request.messages,
        [
            Message::User(jp_llm::request::with_summary("S", "q2")),
            Message::Assistant {
                reasoning: None,
                text: "a2".into(),
                tool_calls: Vec::new(),
            },
            Message::User(INSTRUCTION.into()),
        ]
    );
    assert_eq!(request.max_tokens, 99);
    assert_eq!(request.temperature, None);
    assert_eq!(request.system.as_deref(), Some("system"));
}

#[test]
fn the_done_line_says_what_was_summarised_into_what() {
    let compaction = Compaction {
        upto: 6,
        summary: "x".repeat(4_200),
        model: "anthropic/claude-haiku-4-5".into(),
        edited: false,
    };
    assert_eq!(
        done_line(Candidate { upto: 6, turns: 7 }, 151_200, &compaction),
        "compacted turns 1–7 (about 151,200 tokens) into a 1,050-token summary by anthropic/claude-haiku-4-5"
    );
    let edited = Compaction {
        edited: true,
        ..compaction
    };
    assert_eq!(
        done_line(Candidate { upto: 3, turns: 1 }, 10, &edited),
        "compacted turn 1 (about 10 tokens) into a 1,050-token summary by anthropic/claude-haiku-4-5, edited"
    );
}
