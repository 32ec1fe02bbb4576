//! The ledger's files (the seals themselves need the user's key, and are
//! tested through the binary, with a config directory of the test's own).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn ledger() -> (tempfile::TempDir, Ledger) {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger {
        root: "/work/project".into(),
        dir: Some(dir.path().join("workspaces/abc")),
        key: Some([7; 32]),
    };
    (dir, ledger)
}

#[test]
fn only_a_plain_conversation_id_names_a_file() {
    let (_dir, ledger) = ledger();
    assert!(ledger.file("1795350600000", "seals").is_some());
    for id in ["", "../x", "a/b", ".", "..", "x y", &"1".repeat(65)] {
        assert_eq!(ledger.file(id, "seals"), None, "{id:?}");
    }
}

#[test]
fn the_active_choice_and_the_approval_generation_are_kept_and_replaced() {
    let (_dir, ledger) = ledger();
    assert_eq!(ledger.chosen(), None);
    ledger.choose("17");
    assert_eq!(ledger.chosen().as_deref(), Some("17"));
    ledger.choose("18");
    assert_eq!(ledger.chosen().as_deref(), Some("18"));

    assert_eq!(ledger.epoch("17"), None);
    let first = ledger.new_epoch("17").unwrap();
    assert_eq!(first.len(), 32);
    assert_eq!(ledger.epoch("17").as_deref(), Some(first.as_str()));
    let second = ledger.new_epoch("17").unwrap();
    assert_ne!(first, second);
    assert_eq!(ledger.epoch("17").as_deref(), Some(second.as_str()));
    // Another conversation has its own.
    assert_eq!(ledger.epoch("18"), None);
    ledger.forget_conversation("17");
    assert_eq!(ledger.epoch("17"), None);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = ledger.dir.as_ref().unwrap();
        let mode = std::fs::metadata(dir.join("active"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let mode = std::fs::metadata(dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}

#[test]
fn without_a_config_directory_nothing_is_kept_or_chosen() {
    let ledger = Ledger {
        root: "/work/project".into(),
        dir: None,
        key: Some([7; 32]),
    };
    ledger.choose("17");
    assert_eq!(ledger.chosen(), None);
    assert!(ledger.new_epoch("17").is_err());
    assert!(ledger.seals("17", 3).is_empty());
}

#[test]
fn a_seals_file_is_read_within_bounds() {
    let (_dir, ledger) = ledger();
    let path = ledger.file("17", "seals").unwrap();
    append_private(&path, b"0 aa\n1 bb\n1 cc\n9 dd\nx ee\n").unwrap();
    let seals = ledger.seals("17", 2);
    assert_eq!(seals.get(&0).unwrap(), &["aa"]);
    assert_eq!(seals.get(&1).unwrap(), &["bb", "cc"]);
    // Past the log's events, or unreadable: nothing.
    assert_eq!(seals.len(), 2);
    // A huge file is read only as far as the log's events can reach.
    append_private(&path, "7 ff\n".repeat(100_000).as_bytes()).unwrap();
    assert!(ledger.seals("17", 2).len() <= 2);
}

use jp_conversation::{EventKind, ResponseStatus, ToolCallRequest, ToolCallResponse};
use proptest::prelude::*;

/// A conversation of `n` events (a read of `notes.txt` and its result,
/// then messages), sealed by `ledger` as its jp appended them.
fn sealed(ledger: &Ledger, n: usize) -> Conversation {
    let mut events = Vec::new();
    for i in 0..n {
        let kind = match i % 3 {
            0 => EventKind::ToolCallRequest(ToolCallRequest::new(
                format!("toolu_{i}"),
                "fs_read_file",
                serde_json::json!({"path": "notes.txt", "n": 1.5})
                    .as_object()
                    .unwrap()
                    .clone(),
            )),
            1 => EventKind::ToolCallResponse(ToolCallResponse::new(
                format!("toolu_{}", i - 1),
                ResponseStatus::Success,
                "draft",
            )),
            _ => EventKind::ChatRequest {
                content: format!("message {i}"),
            },
        };
        events.push(ConversationEvent {
            at_ms: 1_000 + i as u64,
            kind,
        });
    }
    // Sealed as appended: in two commits.
    let half = n / 2;
    ledger.seal_events("17", 0, &events[..half]);
    ledger.seal_events("17", half, &events[half..]);
    Conversation {
        id: "17".into(),
        created_ms: 1_000,
        title: None,
        events,
        torn_tail: None,
    }
}

/// An edit of a log someone could make.
#[derive(Debug, Clone)]
enum Edit {
    /// Change the text of event `at`.
    Change(usize),
    /// Swap events `at` and `at + 1`.
    Swap(usize),
    /// Insert a copy of event `from` before event `at`.
    Copy { from: usize, at: usize },
    /// Delete event `at`.
    Delete(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0..12usize).prop_map(Edit::Change),
        (0..11usize).prop_map(Edit::Swap),
        (0..12usize, 0..12usize).prop_map(|(from, at)| Edit::Copy { from, at }),
        (0..12usize).prop_map(Edit::Delete),
    ]
}

#[test]
fn what_this_users_jp_sealed_here_is_its_own_and_nothing_else_is() {
    let (_dir, ledger) = ledger();
    let conversation = sealed(&ledger, 12);
    assert!(ledger.ours(&conversation).iter().all(|ours| *ours));
    // Read back from its JSON, as the store does: still the same.
    let text = serde_json::to_string(&conversation.events).unwrap();
    let read = Conversation {
        events: serde_json::from_str(&text).unwrap(),
        ..conversation.clone()
    };
    assert!(ledger.ours(&read).iter().all(|ours| *ours));
    // Another conversation, workspace or key: nothing.
    let other_id = Conversation {
        id: "18".into(),
        ..conversation.clone()
    };
    assert!(!ledger.ours(&other_id).contains(&true));
    let elsewhere = Ledger {
        root: "/work/clone".into(),
        ..ledger.clone()
    };
    assert!(!elsewhere.ours(&conversation).contains(&true));
    let another_user = Ledger {
        key: Some([8; 32]),
        ..ledger.clone()
    };
    assert!(!another_user.ours(&conversation).contains(&true));
    let no_key = Ledger {
        key: None,
        ..ledger.clone()
    };
    assert!(!no_key.ours(&conversation).contains(&true));
}

proptest! {
    /// Whatever is changed, moved, copied or deleted in the log, an event
    /// counts only where and as this user's jp recorded it: every event
    /// that is ours after the edits is the very event sealed at that place.
    #[test]
    fn an_edited_log_counts_only_the_events_recorded_where_they_are(
        edits in proptest::collection::vec(edit(), 1..4),
    ) {
        let (_dir, ledger) = ledger();
        let original = sealed(&ledger, 12);
        let mut events = original.events.clone();
        for edit in &edits {
            let n = events.len();
            match *edit {
                Edit::Change(at) if at < n => events[at].at_ms += 1,
                Edit::Swap(at) if at + 1 < n => events.swap(at, at + 1),
                Edit::Copy { from, at } if from < n && at <= n => {
                    let copy = events[from].clone();
                    events.insert(at, copy);
                }
                Edit::Delete(at) if at < n => {
                    events.remove(at);
                }
                _ => {}
            }
        }
        let edited = Conversation { events, ..original.clone() };
        for (index, ours) in ledger.ours(&edited).into_iter().enumerate() {
            if ours {
                prop_assert_eq!(&edited.events[index], &original.events[index]);
            }
        }
    }
}

#[test]
fn an_approval_is_in_force_only_as_sealed_here_and_until_forgotten() {
    let (_dir, ledger) = ledger();
    let given = SessionApproval {
        call_id: "toolu_1".into(),
        tool: "run_command".into(),
        rule: Some(0),
        rule_text: "catch-all".into(),
        scope: Some(jp_conversation::ApprovalScope::Command {
            program: "cargo".into(),
            first: Some("test".into()),
            cwd: None,
        }),
        epoch: None,
        seal: None,
    };
    let sealed = ledger.seal_approval("17", given.clone());
    assert_eq!(ledger.approval_state("17", &sealed), ApprovalState::InForce);
    // Unsealed, or anything about it changed: not the user's.
    assert_eq!(
        ledger.approval_state("17", &given),
        ApprovalState::NotTheUsers
    );
    let widened = SessionApproval {
        scope: Some(jp_conversation::ApprovalScope::Command {
            program: "sh".into(),
            first: Some("-c".into()),
            cwd: None,
        }),
        ..sealed.clone()
    };
    assert_eq!(
        ledger.approval_state("17", &widened),
        ApprovalState::NotTheUsers
    );
    let other_rule = SessionApproval {
        rule: Some(1),
        ..sealed.clone()
    };
    assert_eq!(
        ledger.approval_state("17", &other_rule),
        ApprovalState::NotTheUsers
    );
    // Another conversation, workspace or user.
    assert_eq!(
        ledger.approval_state("18", &sealed),
        ApprovalState::NotTheUsers
    );
    let elsewhere = Ledger {
        root: "/work/clone".into(),
        ..ledger.clone()
    };
    assert_eq!(
        elsewhere.approval_state("17", &sealed),
        ApprovalState::NotTheUsers
    );
    let another_user = Ledger {
        key: Some([8; 32]),
        ..ledger.clone()
    };
    assert_eq!(
        another_user.approval_state("17", &sealed),
        ApprovalState::NotTheUsers
    );
    // Forgotten: a new generation; an old one written back does not help.
    ledger.new_epoch("17").unwrap();
    assert_eq!(
        ledger.approval_state("17", &sealed),
        ApprovalState::Forgotten
    );
    let later = ledger.seal_approval("17", given);
    assert_eq!(ledger.approval_state("17", &later), ApprovalState::InForce);
    assert_ne!(later.epoch, sealed.epoch);
    // Without its generation file (deleted): nothing is in force.
    ledger.forget_conversation("17");
    assert_ne!(ledger.approval_state("17", &later), ApprovalState::InForce);
}
