#![allow(clippy::unwrap_used)]

use jp_conversation::{
    ConversationEvent, EventKind, RanWith, ResponseStatus, ToolCallRequest, ToolCallResponse,
};
use serde_json::{Map, Value, json};

use super::{Change, Kind, Outcome, Replayed, Summary, recorded_calls};

fn args(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn replayed(now: Kind, with: Kind) -> Replayed {
    Replayed {
        turn: 2,
        id: "toolu_1".into(),
        tool: "fs_create_file".into(),
        arguments: args(json!({"path": "src/x.rs", "content": "x"})),
        now: Outcome {
            kind: now,
            reason: "before".into(),
        },
        with: Outcome {
            kind: with,
            reason: "policy.run is \"ask\"".into(),
        },
    }
}

#[test]
fn strictness_runs_from_unattended_through_ask_and_edit_to_not_run() {
    use Kind::*;
    let order = [Unattended, Ask, Edit, Skip];
    for pair in order.windows(2) {
        assert!(
            pair[0].rank().unwrap() < pair[1].rank().unwrap(),
            "{pair:?}"
        );
    }
    // Every way of not running is as strict as another.
    assert_eq!(Skip.rank(), Declined.rank());
    assert_eq!(Skip.rank(), Refused.rank());
}

#[test]
fn a_change_is_stricter_less_strict_as_strict_or_none() {
    use Kind::*;
    assert_eq!(Change::of(Unattended, Ask), Change::Stricter);
    assert_eq!(Change::of(Ask, Edit), Change::Stricter);
    assert_eq!(Change::of(Edit, Declined), Change::Stricter);
    assert_eq!(Change::of(Declined, Unattended), Change::LessStrict);
    assert_eq!(Change::of(Skip, Edit), Change::LessStrict);
    assert_eq!(Change::of(Skip, Declined), Change::AsStrict);
    assert_eq!(Change::of(Ask, Ask), Change::Unchanged);
    // Arguments cut short that do not decide a call under one config.
    assert_eq!(Change::of(Ask, Undecided), Change::CannotTell);
    assert_eq!(Change::of(Undecided, Skip), Change::CannotTell);
    assert_eq!(Change::of(Undecided, Undecided), Change::Unchanged);
}

#[test]
fn a_changed_call_is_one_line_with_its_turn_call_and_new_reason() {
    assert_eq!(
        replayed(Kind::Unattended, Kind::Ask).line(),
        "turn 2 · call toolu_1 fs_create_file(path: \"src/x.rs\", content: \"x\") : unattended → ask (policy.run is \"ask\")"
    );
}

#[test]
fn the_summary_counts_each_way_and_exits_1_only_when_less_strict() {
    let calls = [
        replayed(Kind::Unattended, Kind::Ask),
        replayed(Kind::Ask, Kind::Ask),
        replayed(Kind::Ask, Kind::Ask),
    ];
    let summary = Summary::of(&calls);
    assert_eq!(
        summary.line(),
        "3 calls re-decided: 1 stricter, 0 less strict, 2 unchanged"
    );
    assert_eq!(summary.exit_code(), 0);
    let calls = [
        replayed(Kind::Declined, Kind::Unattended),
        replayed(Kind::Skip, Kind::Refused),
    ];
    let summary = Summary::of(&calls);
    assert_eq!(
        summary.line(),
        "2 calls re-decided: 0 stricter, 1 less strict, 1 as strict for another reason, 0 unchanged"
    );
    assert_eq!(summary.exit_code(), 1);
    // What cannot be told may be less strict: it fails the gate.
    let summary = Summary::of(&[replayed(Kind::Ask, Kind::Undecided)]);
    assert_eq!(
        summary.line(),
        "1 call re-decided: 0 stricter, 0 less strict, 1 cannot be told (arguments cut short), 0 unchanged"
    );
    assert_eq!(summary.exit_code(), 1);
    assert_eq!(
        Summary::of(&[replayed(Kind::Ask, Kind::Ask)]).line(),
        "1 call re-decided: 0 stricter, 0 less strict, 1 unchanged"
    );
}

#[test]
fn calls_are_found_with_their_turn_the_arguments_they_ran_with_and_their_history() {
    let request = |id: &str, path: &str| {
        ConversationEvent::now(EventKind::ToolCallRequest(ToolCallRequest::new(
            id,
            "fs_create_file",
            args(json!({ "path": path })),
        )))
    };
    let mut edited = ToolCallResponse::new("b", ResponseStatus::Success, "ok");
    edited.ran = Some(RanWith {
        arguments: Some(args(json!({ "path": "src/edited.rs" }))),
        keys: std::collections::BTreeMap::new(),
    });
    let events = [
        ConversationEvent::now(EventKind::TurnStart),
        request("a", "src/a.rs"),
        ConversationEvent::now(EventKind::ToolCallResponse(ToolCallResponse::new(
            "a",
            ResponseStatus::Success,
            "ok",
        ))),
        ConversationEvent::now(EventKind::TurnStart),
        request("b", "src/b.rs"),
        request("c", "src/c.rs"),
        ConversationEvent::now(EventKind::ToolCallResponse(edited)),
    ];
    let calls = recorded_calls(&events, &[true; 7]);
    let found: Vec<_> = calls
        .iter()
        .map(|r| {
            (
                r.turn,
                r.call.id.as_str(),
                Value::Object(r.call.arguments().unwrap().clone()),
                r.before,
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (1, "a", json!({"path": "src/a.rs"}), 2),
            (2, "b", json!({"path": "src/edited.rs"}), 6),
            // No response: what came before the request.
            (2, "c", json!({"path": "src/c.rs"}), 5),
        ]
    ); // A call of a turn taken back is left out.
    let mut live = [true; 7];
    live[1] = false;
    let ids: Vec<_> = recorded_calls(&events, &live)
        .into_iter()
        .map(|r| r.call.id)
        .collect();
    assert_eq!(ids, ["b", "c"]);
}
