#![allow(clippy::unwrap_used)]

use jp_conversation::{DecidedBy, RuleSource, ToolCallResponse};

use super::*;

fn at(kind: EventKind) -> ConversationEvent {
    ConversationEvent::now(kind)
}

fn decision(id: &str, at_byte: Option<usize>, by: DecidedBy) -> CallDecision {
    CallDecision {
        call_id: id.into(),
        tool: "run_command".into(),
        mode: Some("ask".into()),
        rule: None,
        at_byte,
        bytes: 120,
        by,
        how: None,
    }
}

#[test]
fn each_decision_is_joined_with_its_turn_and_response() {
    let events = vec![
        at(EventKind::TurnStart),
        at(EventKind::CallDecision(decision(
            "c1",
            None,
            DecidedBy::User,
        ))),
        at(EventKind::ToolCallResponse(ToolCallResponse::new(
            "c1",
            ResponseStatus::Success,
            "ok",
        ))),
        at(EventKind::TurnStart),
        // Recorded without its response (a log cut short).
        at(EventKind::CallDecision(CallDecision {
            mode: None,
            how: Some("not offered".into()),
            ..decision("c2", Some(0), DecidedBy::Jp)
        })),
    ];
    let rows = Row::all(&events);
    let lines: Vec<String> = rows.iter().flat_map(Row::lines).collect();
    assert_eq!(
        lines,
        [
            "call c1 run_command · turn 1 · success",
            "  rule     ask: no rule matched, the implicit ask",
            "  decided  once its 120 B of arguments were complete",
            "  by       user",
            "call c2 run_command · turn 2 · no response",
            "  rule     none: jp refused the call before any policy",
            "  decided  before any of its 120 B of arguments",
            "  by       jp (not offered)",
        ]
    );
}

#[test]
fn a_built_in_rule_has_no_key_or_file() {
    let row = Row {
        turn: 1,
        decision: CallDecision {
            rule: Some(RuleSource {
                index: 0,
                key: None,
                file: None,
                line: None,
            }),
            ..decision("c1", Some(0), DecidedBy::User)
        },
        outcome: Some(ResponseStatus::Declined),
        cut: Some((0, false)),
    };
    assert_eq!(
        row.lines(),
        [
            "call c1 run_command · turn 1 · declined",
            "  rule     ask: built-in policy.run[0]",
            "  decided  before any of its 120 B of arguments",
            "  by       user",
            "  stream   stopped the stream before run_command's arguments",
        ]
    );
    // Cut where it was decided.
    let row = Row {
        decision: CallDecision {
            bytes: 0,
            ..row.decision
        },
        ..row
    };
    assert_eq!(
        row.lines()[2],
        "  decided  before any of its arguments, where jp stopped reading"
    );
}
