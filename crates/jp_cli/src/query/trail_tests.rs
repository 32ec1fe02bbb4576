//! [`Trail`] on its own: what each step says of who decided a call.

#![allow(clippy::unwrap_used)]

use jp_conversation::{ToolCallRequest, ToolCallResponse};

use super::*;
use crate::query::arguments::Arguments;

fn decision(mode: Mode, rule: Option<usize>) -> Decision {
    Decision {
        mode,
        rule,
        reason: String::new(),
        trace: Vec::new(),
    }
}

fn not_run(status: ResponseStatus) -> Verdict {
    Verdict::NotRun {
        response: ToolCallResponse::new("c1", status, "no"),
        note: String::new(),
    }
}

fn run(approved: bool, edited: bool) -> Verdict {
    run_with(approved, edited, None)
}

fn run_with(approved: bool, edited: bool, key: Option<char>) -> Verdict {
    let call = ToolCallRequest::new("c1", "save", serde_json::Map::new());
    Verdict::Run {
        tool: "save".into(),
        arguments: Arguments::of(&call),
        edited,
        mode: Mode::Ask,
        reason: String::new(),
        approved,
        key,
    }
}

fn located(index: usize) -> RuleSource {
    RuleSource {
        index,
        key: Some("conversation.tools.save.policy.run".into()),
        file: Some(".jp/config.toml".into()),
        line: Some(10 + index),
    }
}

#[test]
fn the_first_decision_stands_unless_a_later_one_is_stricter() {
    let mut trail = Trail::default();
    trail.decided(&decision(Mode::Unattended, Some(1)), Some(14));
    // The complete arguments say the same: decided at byte 14 still.
    trail.decided(&decision(Mode::Unattended, Some(1)), None);
    assert_eq!(
        (trail.policy, trail.at),
        (Some((Mode::Unattended, Some(1))), Some(14))
    );
    // They say ask (decision 7): that rule decided, once complete.
    trail.decided(&decision(Mode::Ask, None), None);
    assert_eq!((trail.policy, trail.at), (Some((Mode::Ask, None)), None));
}

#[test]
fn who_settled_a_call_no_one_was_asked_about() {
    let cases = [
        (run(false, false), DecidedBy::Policy),
        (run(true, false), DecidedBy::Session),
        (not_run(ResponseStatus::Skipped), DecidedBy::Policy),
        (not_run(ResponseStatus::Declined), DecidedBy::NoTerminal),
        (not_run(ResponseStatus::Denied), DecidedBy::Stateful),
        (not_run(ResponseStatus::Refused), DecidedBy::Jp),
        (not_run(ResponseStatus::Interrupted), DecidedBy::Interrupted),
    ];
    for (verdict, by) in cases {
        let mut trail = Trail::default();
        trail.unasked(&verdict);
        assert_eq!(trail.by, Some(by), "{verdict:?}");
    }
}

#[test]
fn an_answer_is_the_users_and_stays_so() {
    let mut trail = Trail::default();
    trail.answered(&Answer::Run {
        decision: decision(Mode::Ask, Some(0)),
    });
    // The complete call then runs, approved: still the user's answer.
    trail.unasked(&run(true, false));
    assert_eq!(
        (trail.by, trail.how.as_deref()),
        (Some(DecidedBy::User), Some("run"))
    );

    let mut trail = Trail::default();
    trail.confirmed(&run_with(true, true, Some('y')));
    assert_eq!(trail.how.as_deref(), Some("edit"));
    let mut trail = Trail::default();
    trail.confirmed(&run_with(true, false, Some('a')));
    assert_eq!(
        (trail.by, trail.how.as_deref()),
        (Some(DecidedBy::User), Some("allow for this session"))
    );
    // Allowed for the session while it waited: no one answered it.
    let mut trail = Trail::default();
    trail.confirmed(&run(true, false));
    assert_eq!((trail.by, trail.how), (Some(DecidedBy::Session), None));
    let mut trail = Trail::default();
    trail.confirmed(&not_run(ResponseStatus::Declined));
    assert_eq!(
        (trail.by, trail.how.as_deref()),
        (Some(DecidedBy::User), Some("decline"))
    );
    let mut trail = Trail::default();
    trail.answered(&Answer::NotRun(not_run(ResponseStatus::Interrupted)));
    assert_eq!(trail.by, Some(DecidedBy::Interrupted));
}

#[test]
fn an_answer_given_while_it_streamed_gives_way_to_what_refuses_or_skips_it() {
    let early = || {
        let mut trail = Trail::default();
        trail.decided(&decision(Mode::Ask, Some(1)), Some(9));
        trail.answered(&Answer::Run {
            decision: decision(Mode::Ask, Some(1)),
        });
        trail
    };
    // Its arguments then grew past the limit.
    let mut trail = early();
    trail.refused(2048, "arguments over the limit");
    assert_eq!(
        (trail.by, trail.how.as_deref(), trail.at),
        (
            Some(DecidedBy::Jp),
            Some("arguments over the limit"),
            Some(2048)
        )
    );
    // The complete arguments are skipped (decision 7).
    let mut trail = early();
    trail.decided(&decision(Mode::Skip, Some(0)), None);
    trail.unasked(&not_run(ResponseStatus::Skipped));
    assert_eq!(
        (trail.policy, trail.at, trail.by),
        (Some((Mode::Skip, Some(0))), None, Some(DecidedBy::Policy))
    );
    // They run as answered: the user's answer stands.
    let mut trail = early();
    trail.unasked(&run(true, false));
    assert_eq!(
        (trail.by, trail.how.as_deref()),
        (Some(DecidedBy::User), Some("run"))
    );
    // An answer that declined is final.
    let mut trail = Trail::default();
    trail.answered(&Answer::NotRun(not_run(ResponseStatus::Declined)));
    trail.unasked(&not_run(ResponseStatus::Declined));
    assert_eq!(
        (trail.by, trail.how.as_deref()),
        (Some(DecidedBy::User), Some("decline"))
    );
}

#[test]
fn what_jp_refused_once_complete_is_said() {
    let mut trail = Trail::default();
    trail.unasked(&Verdict::NotRun {
        response: ToolCallResponse::new("c1", ResponseStatus::Refused, "no"),
        note: "save: refused: the arguments are not an object".into(),
    });
    assert_eq!(
        (trail.by, trail.how.as_deref()),
        (Some(DecidedBy::Jp), Some("the arguments are not an object"))
    );
}

#[test]
fn a_hook_or_a_stateful_policy_at_the_start_overrules_the_policy() {
    let mut trail = Trail::default();
    trail.decided(&decision(Mode::Unattended, Some(2)), Some(0));
    trail.unasked(&run(false, false));
    trail.overrule(DecidedBy::Hook, None);
    let record = trail.record("c1", "save", &located);
    assert_eq!(
        serde_json::to_value(&record).unwrap(),
        serde_json::json!({
            "call_id": "c1",
            "tool": "save",
            "mode": "unattended",
            "rule": {"index": 2, "key": "conversation.tools.save.policy.run", "file": ".jp/config.toml", "line": 12},
            "at_byte": 0,
            "bytes": 0,
            "by": "hook",
        })
    );
}

#[test]
fn a_refusal_before_any_policy_names_jp_and_the_byte() {
    let mut trail = Trail::default();
    trail.refused(37, "a value that can never run");
    trail.bytes = 37;
    // What the user would have said no longer matters.
    trail.settle(DecidedBy::User, Some("run"));
    let record = trail.record("c1", "save", &located);
    assert_eq!(
        serde_json::to_value(&record).unwrap(),
        serde_json::json!({
            "call_id": "c1",
            "tool": "save",
            "at_byte": 37,
            "bytes": 37,
            "by": "jp",
            "how": "a value that can never run",
        })
    );
}

#[test]
fn a_turn_counts_the_calls_a_policy_declined_with_no_one_to_answer() {
    use jp_conversation::{ConversationEvent, EventKind};
    let with = |id: &str, by, mode: &str, status| {
        let trail = Trail {
            policy: Some((Mode::from_name(mode).unwrap(), None)),
            by: Some(by),
            ..Trail::default()
        };
        [
            ConversationEvent::now(EventKind::CallDecision(trail.record(id, "t", &located))),
            ConversationEvent::now(EventKind::ToolCallResponse(ToolCallResponse::new(
                id, status, "",
            ))),
        ]
    };
    let events: Vec<ConversationEvent> = [
        with("1", DecidedBy::NoTerminal, "ask", ResponseStatus::Declined),
        with(
            "2",
            DecidedBy::Stateful,
            "unattended",
            ResponseStatus::Denied,
        ),
        with("3", DecidedBy::Hook, "unattended", ResponseStatus::Declined),
        with("4", DecidedBy::Policy, "skip", ResponseStatus::Skipped),
        // Skipped by the check at its start, decided unattended before.
        with(
            "5",
            DecidedBy::Policy,
            "unattended",
            ResponseStatus::Skipped,
        ),
        // Not counted: run by policy, declined by a person, refused by jp.
        with(
            "6",
            DecidedBy::Policy,
            "unattended",
            ResponseStatus::Success,
        ),
        with("7", DecidedBy::User, "ask", ResponseStatus::Declined),
        with("8", DecidedBy::Jp, "ask", ResponseStatus::Refused),
        with("9", DecidedBy::Session, "ask", ResponseStatus::Success),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert_eq!(declined_by_policy(&events), 5);
}

fn ran(status: ResponseStatus) -> super::super::decision::Ran {
    super::super::decision::Ran {
        response: ToolCallResponse::new("c1", status, ""),
        delta: None,
        stderr: String::new(),
        note: None,
        shown: false,
        denial: None,
        changes: super::super::tools::undo::Changes::default(),
    }
}

#[test]
fn the_check_at_the_start_says_what_decided_then() {
    use super::super::tools::AtStart;
    let unattended = || {
        let mut trail = Trail::default();
        trail.decided(&decision(Mode::Unattended, Some(0)), Some(5));
        trail.unasked(&run(false, false));
        trail
    };
    // A link made by an earlier call puts it under a skip rule.
    let mut trail = unattended();
    let start = AtStart {
        policy: Some((Mode::Skip, Some(2))),
        key: None,
    };
    trail.at_start(&ran(ResponseStatus::Skipped), false, Some(start));
    assert_eq!(
        (trail.policy, trail.at, trail.by, trail.how.as_deref()),
        (
            Some((Mode::Skip, Some(2))),
            None,
            Some(DecidedBy::Policy),
            Some("at its start")
        )
    );
    // It asks then, and the user runs it.
    let mut trail = unattended();
    let start = AtStart {
        policy: Some((Mode::Ask, Some(1))),
        key: Some('y'),
    };
    trail.at_start(&ran(ResponseStatus::Success), true, Some(start));
    assert_eq!(
        (trail.policy, trail.by, trail.how.as_deref()),
        (
            Some((Mode::Ask, Some(1))),
            Some(DecidedBy::User),
            Some("run, at its start")
        )
    );
    // Nothing changed at its start: the record stands.
    let mut trail = unattended();
    trail.at_start(&ran(ResponseStatus::Success), true, None);
    assert_eq!(trail, unattended());
}
