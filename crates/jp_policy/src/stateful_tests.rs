//! The policies and the registry, with a file system made of a set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;

use super::testing::{FakeEnv, Harness, args, pats, rbw};
use super::*;

#[test]
fn sequential_needs_every_dependency_to_have_succeeded() {
    let mut h = Harness::new(
        vec![Box::new(Sequential::new(
            "sequential",
            ToolPattern::parse("deploy").unwrap(),
            pats(&["run_tests", "build"]),
        ))],
        &[],
    );
    assert_eq!(
        h.check("deploy", json!({})),
        Err("sequential: `deploy` can run only after `run_tests`, `build` succeeded in this conversation; run `run_tests`, `build` first, then call `deploy` again.".into())
    );
    h.succeed("run_tests", json!({}));
    assert_eq!(
        h.check("deploy", json!({})),
        Err("sequential: `deploy` can run only after `build` succeeded in this conversation; run `build` first, then call `deploy` again.".into())
    );
    h.succeed("build", json!({}));
    assert_eq!(h.check("deploy", json!({})), Ok(()));
    // Other tools are not held back.
    assert_eq!(h.check("build", json!({})), Ok(()));
}

#[test]
fn a_glob_dependency_is_satisfied_by_any_tool_it_matches() {
    let mut h = Harness::new(
        vec![Box::new(Sequential::new(
            "sequential",
            ToolPattern::parse("deploy").unwrap(),
            pats(&["test_*"]),
        ))],
        &[],
    );
    assert!(h.check("deploy", json!({})).is_err());
    h.succeed("test_unit", json!({}));
    assert_eq!(h.check("deploy", json!({})), Ok(()));
}

/// `write_tools = ["fs_*"]` from config: the registry holds back every
/// tool the glob matches, and none it does not.
#[test]
fn read_before_write_allows_new_files_and_needs_a_read_for_existing_ones() {
    let mut h = Harness::new(vec![rbw()], &["notes.txt"]);
    assert_eq!(
        h.check("fs_create_file", json!({ "path": "new.txt" })),
        Ok(())
    );
    assert_eq!(
        h.check("fs_modify_file", json!({ "path": "notes.txt" })),
        Err("read_before_write: `notes.txt` already exists and has not been read in this conversation; read it with `fs_read_file` first, then call `fs_modify_file` again.".into())
    );
    // Reading another file does not help.
    h.succeed("fs_read_file", json!({ "path": "other.txt" }));
    assert!(
        h.check("fs_modify_file", json!({ "path": "notes.txt" }))
            .is_err()
    );
    // Any spelling of the path is the same key.
    h.succeed("fs_read_file", json!({ "path": "./docs/../notes.txt" }));
    for spelling in ["notes.txt", "./notes.txt", "src/../notes.txt", "notes.txt/"] {
        assert_eq!(
            h.check("fs_modify_file", json!({ "path": spelling })),
            Ok(()),
            "{spelling}"
        );
    }
}

#[test]
fn only_a_read_counts_not_a_write() {
    // Creating a new file is allowed; once it exists, changing it needs a
    // read like any other file: a write does not show the whole file.
    let mut h = Harness::new(vec![rbw()], &[]);
    assert_eq!(
        h.check("fs_create_file", json!({ "path": "a.txt" })),
        Ok(())
    );
    h.succeed("fs_create_file", json!({ "path": "a.txt" }));
    h.env.files.insert("a.txt".into());
    assert!(
        h.check("fs_modify_file", json!({ "path": "a.txt" }))
            .is_err()
    );
    h.succeed("fs_read_file", json!({ "path": "a.txt" }));
    assert_eq!(
        h.check("fs_modify_file", json!({ "path": "a.txt" })),
        Ok(())
    );
}

#[test]
fn a_write_without_its_key_is_denied_unless_the_arguments_still_stream() {
    let h = Harness::new(vec![rbw()], &["a.txt"]);
    assert_eq!(
        h.check("fs_modify_file", json!({ "patterns": [] })),
        Err("read_before_write: `fs_modify_file` was called without `/path`, which jp needs to check the call against what ran before; call it again with `/path`.".into())
    );
    let arguments = args(json!({}));
    let partial = PolicyContext {
        env: &h.env,
        config: &h.config,
        partial: true,
    };
    assert_eq!(
        h.registry.check_all(
            &Call {
                tool: "fs_modify_file",
                arguments: &arguments
            },
            &partial
        ),
        PolicyDecision::Allow
    );
}

#[test]
fn a_key_that_cannot_be_made_is_denied() {
    let h = Harness::new(vec![rbw()], &[]);
    assert_eq!(
        h.check("fs_modify_file", json!({ "path": "a\u{0}b" })),
        Err("read_before_write: `fs_modify_file` cannot be checked: `/path` contains NUL, which no path can hold.".into())
    );
}

#[test]
fn keyed_needs_a_prerequisite_with_the_same_key() {
    let mut h = Harness::new(
        vec![Box::new(Keyed::new(
            "keyed",
            pats(&["merge_pr"]),
            pats(&["approve_pr", "review_pr"]),
            "/pr",
        ))],
        &[],
    );
    assert_eq!(
        h.check("merge_pr", json!({ "pr": 7 })),
        Err("keyed: `merge_pr` with /pr = `7` can run only after `approve_pr` or `review_pr` succeeded with the same /pr; run it first, then call `merge_pr` again.".into())
    );
    h.succeed("review_pr", json!({ "pr": 8 }));
    assert!(h.check("merge_pr", json!({ "pr": 7 })).is_err());
    h.succeed("review_pr", json!({ "pr": 7 }));
    assert_eq!(h.check("merge_pr", json!({ "pr": 7 })), Ok(()));
    // A dependent's own success is no prerequisite in a plain keyed policy.
    h.succeed("merge_pr", json!({ "pr": 9 }));
    assert!(h.check("merge_pr", json!({ "pr": 9 })).is_err());
}

#[test]
fn the_first_denial_in_registration_order_wins() {
    let h = Harness::new(
        vec![
            Box::new(Sequential::new(
                "first",
                ToolPattern::parse("fs_modify_file").unwrap(),
                pats(&["lint"]),
            )),
            rbw(),
        ],
        &["a.txt"],
    );
    let denied = h
        .check("fs_modify_file", json!({ "path": "a.txt" }))
        .unwrap_err();
    assert!(denied.starts_with("first: "), "{denied}");
    assert_eq!(
        h.registry.policies_for("fs_modify_file"),
        ["first", "read_before_write"]
    );
    assert_eq!(
        h.registry.policies_for("fs_read_file"),
        ["read_before_write"]
    );
    assert!(h.registry.policies_for("other").is_empty());
}

#[test]
fn names_are_unique_and_unregister_removes() {
    let mut registry = PolicyRegistry::new();
    registry.register(rbw()).unwrap();
    assert_eq!(
        registry.register(rbw()),
        Err(RegistryError::Duplicate("read_before_write".into()))
    );
    assert!(registry.unregister("read_before_write"));
    assert!(!registry.unregister("read_before_write"));
    assert!(registry.is_empty());
}

#[test]
fn snapshot_and_restore_round_trip_and_refuse_what_does_not_fit() {
    let mut h = Harness::new(vec![rbw()], &["a.txt"]);
    let empty = h.registry.snapshot();
    h.succeed("fs_read_file", json!({ "path": "a.txt" }));
    let read = h.registry.snapshot();
    assert_eq!(
        h.check("fs_modify_file", json!({ "path": "a.txt" })),
        Ok(())
    );
    h.registry.restore(&empty).unwrap();
    assert!(
        h.check("fs_modify_file", json!({ "path": "a.txt" }))
            .is_err()
    );
    h.registry.restore(&read).unwrap();
    assert_eq!(
        h.check("fs_modify_file", json!({ "path": "a.txt" })),
        Ok(())
    );

    let alien = Snapshot(vec![("nope".into(), json!({}))]);
    assert_eq!(
        h.registry.restore(&alien),
        Err(RegistryError::Snapshot("no policy named `nope`".into()))
    );
    let broken = Snapshot(vec![(
        "read_before_write".into(),
        json!({ "satisfied": [1] }),
    )]);
    assert_eq!(
        h.registry.restore(&broken),
        Err(RegistryError::Snapshot(
            "`read_before_write`: `satisfied` holds 1, not a string".into()
        ))
    );
    // Nothing changed.
    assert_eq!(h.registry.snapshot(), read);
}

#[test]
fn a_replay_learns_the_keys_recorded_when_the_call_ran() {
    use jp_conversation::{
        ConversationEvent, EventKind, RanWith, ResponseStatus, ToolCallRequest, ToolCallResponse,
    };
    // `link.txt` pointed at `target.txt` when it was read; the file system
    // may say otherwise now, but the recorded key is what was read.
    let read = |id: &str, path: &str, keys: &[(&str, &str)]| {
        let mut response = ToolCallResponse::new(id, ResponseStatus::Success, "text");
        if !keys.is_empty() {
            response.ran = Some(RanWith {
                arguments: None,
                keys: keys
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            });
        }
        [
            ConversationEvent::now(EventKind::ToolCallRequest(ToolCallRequest::new(
                id,
                "fs_read_file",
                args(json!({ "path": path })),
            ))),
            ConversationEvent::now(EventKind::ToolCallResponse(response)),
        ]
    };
    let events: Vec<ConversationEvent> = [
        read("1", "link.txt", &[("/path", "target.txt")]),
        // Recorded by an older jp, without keys: resolved now.
        read("2", "./old.txt", &[]),
    ]
    .concat();
    let mut h = Harness::new(vec![rbw()], &["link.txt", "target.txt", "old.txt"]);
    let ctx = PolicyContext {
        env: &h.env,
        config: &h.config,
        partial: false,
    };
    let mut registry = std::mem::take(&mut h.registry);
    replay(&mut registry, &events, &ctx);
    h.registry = registry;
    assert_eq!(
        h.check("fs_modify_file", json!({ "path": "target.txt" })),
        Ok(())
    );
    assert!(
        h.check("fs_modify_file", json!({ "path": "link.txt" }))
            .is_err()
    );
    assert_eq!(
        h.check("fs_modify_file", json!({ "path": "old.txt" })),
        Ok(())
    );
}

#[test]
fn a_recording_env_notes_the_keys_a_call_taught() {
    let env = FakeEnv::with(&[]);
    let recording = Recording::new(&env);
    let mut registry = PolicyRegistry::new();
    registry.register(rbw()).unwrap();
    let config = json!({});
    let ctx = PolicyContext {
        env: &recording,
        config: &config,
        partial: false,
    };
    let arguments = args(json!({ "path": "./a/../b.txt" }));
    registry.notify_result(
        &Call {
            tool: "fs_read_file",
            arguments: &arguments,
        },
        "b",
        &ctx,
    );
    assert_eq!(
        recording.into_keys().into_iter().collect::<Vec<_>>(),
        [("/path".to_owned(), "b.txt".to_owned())]
    );
}
