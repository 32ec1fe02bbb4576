#![allow(clippy::unwrap_used)]

use super::{compaction, live, rewound, sent, turn_starts};
use crate::conversation::{ConversationEvent, EventKind};
use crate::recovery::{Compaction, FileChange, FileState, Rewind, RewindReason};

fn at(kind: EventKind) -> ConversationEvent {
    ConversationEvent { at_ms: 1, kind }
}

fn user(text: &str) -> EventKind {
    EventKind::ChatRequest {
        content: text.into(),
    }
}

fn answer(text: &str) -> EventKind {
    EventKind::AssistantMessage {
        content: text.into(),
    }
}

fn rewind(turns: &[usize], complete: bool) -> EventKind {
    EventKind::Rewind(Rewind {
        turns: turns.to_vec(),
        reason: RewindReason::User,
        restored: Vec::new(),
        removed: Vec::new(),
        left: Vec::new(),
        complete,
    })
}

fn compact(upto: usize, summary: &str) -> EventKind {
    EventKind::Compaction(Compaction {
        upto,
        summary: summary.into(),
        model: "scripted/s".into(),
        edited: false,
    })
}

/// Three turns: starts at 0, 3, 6.
fn three_turns() -> Vec<ConversationEvent> {
    let mut events = Vec::new();
    for n in 1..=3 {
        events.push(at(EventKind::TurnStart));
        events.push(at(user(&format!("q{n}"))));
        events.push(at(answer(&format!("a{n}"))));
    }
    events
}

/// The texts of what is sent.
fn texts(events: &[ConversationEvent]) -> Vec<String> {
    sent(events, None)
        .events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::ChatRequest { content } | EventKind::AssistantMessage { content } => {
                Some(content.clone())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn turns_are_placed_by_their_start() {
    assert_eq!(turn_starts(&three_turns()), [0, 3, 6]);
}

#[test]
fn a_rewound_turn_is_not_live_and_not_sent() {
    let mut events = three_turns();
    events.push(at(rewind(&[6], true)));
    assert_eq!(rewound(&events, None).into_iter().collect::<Vec<_>>(), [6]);
    assert_eq!(
        live(&events, None),
        [
            true, true, true, true, true, true, false, false, false, false
        ]
    );
    assert_eq!(texts(&events), ["q1", "a1", "q2", "a2"]);

    // A later turn is live again.
    events.push(at(EventKind::TurnStart));
    events.push(at(user("q4")));
    assert_eq!(texts(&events), ["q1", "a1", "q2", "a2", "q4"]);
}

#[test]
fn an_incomplete_rewind_or_one_naming_no_turn_takes_nothing_back() {
    let mut events = three_turns();
    events.push(at(rewind(&[6], false)));
    events.push(at(rewind(&[4, 99], true)));
    assert!(rewound(&events, None).is_empty());
    assert_eq!(texts(&events), ["q1", "a1", "q2", "a2", "q3", "a3"]);
}

#[test]
fn a_compaction_sends_its_summary_for_the_turns_before_it() {
    let mut events = three_turns();
    events.push(at(compact(6, "s12")));
    let sent = sent(&events, None);
    assert_eq!(sent.compaction.unwrap().summary, "s12");
    assert_eq!(texts(&events), ["q3", "a3"]);

    // A later one is cumulative: it replaces the first.
    events.push(at(EventKind::TurnStart));
    events.push(at(user("q4")));
    events.push(at(compact(10, "s123")));
    assert_eq!(compaction(&events, None).unwrap().1.summary, "s123");
    assert_eq!(texts(&events), ["q4"]);
}

#[test]
fn a_rewind_into_summarised_turns_voids_the_summary_but_not_an_earlier_one() {
    let mut events = three_turns();
    events.push(at(compact(3, "s1"))); // 9
    events.push(at(compact(6, "s12"))); // 10
    // Turn 2 (at 3) is taken back: "s12" summarised it, "s1" did not.
    events.push(at(rewind(&[3, 6], true)));
    assert_eq!(
        compaction(&events, None).unwrap(),
        (9, &compaction_of("s1", 3))
    );
    assert!(texts(&events).is_empty());

    // A rewind before a compaction does not void it.
    let mut events = three_turns();
    events.push(at(rewind(&[3], true))); // 9
    events.push(at(compact(6, "s1"))); // 10
    assert_eq!(compaction(&events, None).unwrap().0, 10);
    assert_eq!(texts(&events), ["q3", "a3"]);
}

fn compaction_of(summary: &str, upto: usize) -> Compaction {
    Compaction {
        upto,
        summary: summary.into(),
        model: "scripted/s".into(),
        edited: false,
    }
}

#[test]
fn a_compaction_whose_upto_is_no_earlier_turn_is_ignored() {
    let mut events = three_turns();
    events.push(at(compact(4, "not a turn")));
    events.push(at(compact(50, "after it")));
    assert_eq!(compaction(&events, None), None);
    assert_eq!(texts(&events).len(), 6);
}

#[test]
fn the_recovery_events_read_back_as_written() {
    let kinds = [
        EventKind::FileChange(FileChange {
            call_id: "c1".into(),
            path: "src/a.rs".into(),
            before: FileState::File {
                sha256: "ab".repeat(32),
                bytes: 3,
                mode: 0o644,
            },
            after: FileState::Absent,
            made_dirs: vec!["src".into()],
        }),
        EventKind::FileChange(FileChange {
            call_id: "c2".into(),
            path: "big".into(),
            before: FileState::Unkept {
                bytes: 9,
                mode: 0o600,
                reason: "larger than 8 bytes".into(),
            },
            after: FileState::Link {
                target: "../x".into(),
            },
            made_dirs: Vec::new(),
        }),
        rewind(&[0], true),
        rewind(&[3], false),
        compact(3, "s"),
    ];
    let lines: Vec<String> = kinds
        .iter()
        .map(|kind| serde_json::to_string(&at(kind.clone())).unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            r#"{"at_ms":1,"type":"file_change","call_id":"c1","path":"src/a.rs","before":{"kind":"file","sha256":"abababababababababababababababababababababababababababababababab","bytes":3,"mode":420},"after":{"kind":"absent"},"made_dirs":["src"]}"#,
            r#"{"at_ms":1,"type":"file_change","call_id":"c2","path":"big","before":{"kind":"unkept","bytes":9,"mode":384,"reason":"larger than 8 bytes"},"after":{"kind":"link","target":"../x"}}"#,
            r#"{"at_ms":1,"type":"rewind","turns":[0],"reason":"user"}"#,
            r#"{"at_ms":1,"type":"rewind","turns":[3],"reason":"user","complete":false}"#,
            r#"{"at_ms":1,"type":"compaction","upto":3,"summary":"s","model":"scripted/s"}"#,
        ]
    );
    for (line, kind) in lines.iter().zip(kinds) {
        let read: ConversationEvent = serde_json::from_str(line).unwrap();
        assert_eq!(read.kind, kind);
    }
}

#[test]
fn a_rewind_takes_back_only_turns_before_it() {
    let mut events = three_turns();
    // At 9, naming 10: no turn starts there yet.
    events.push(at(rewind(&[10], true)));
    events.push(at(EventKind::TurnStart));
    events.push(at(user("q4")));
    assert!(rewound(&events, None).is_empty());
    assert_eq!(texts(&events), ["q1", "a1", "q2", "a2", "q3", "a3", "q4"]);
}

#[test]
fn only_honoured_recovery_events_count() {
    let mut events = three_turns();
    events.push(at(rewind(&[6], true))); // 9: not the user's
    events.push(at(compact(3, "s1"))); // 10: the user's
    events.push(at(compact(6, "s12"))); // 11: not the user's
    let mut ours = vec![true; events.len()];
    ours[9] = false;
    ours[11] = false;
    assert!(rewound(&events, Some(&ours)).is_empty());
    assert_eq!(live(&events, Some(&ours)), vec![true; 12]);
    assert_eq!(compaction(&events, Some(&ours)).unwrap().0, 10);
    // Sent from turn 2 (at 3) on, the rewind and the compactions included.
    assert_eq!(sent(&events, Some(&ours)).events.len(), events.len() - 3);
}
