//! The registry built from `conversation.policies` entries, and a `when`
//! condition from config.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use jp_config::stateful::WhenConfig;
use jp_policy::stateful::Conditional;
use jp_policy::stateful::testing::{FakeEnv, Harness, rbw};
use serde_json::json;

use super::*;

#[test]
fn a_glob_in_write_tools_governs_every_tool_it_matches() {
    let entry: jp_config::stateful::StatefulPolicyConfig = serde_json::from_value(json!({
        "kind": "read_before_write",
        "read_tools": ["cat"],
        "write_tools": ["fs_*"],
    }))
    .unwrap();
    let mut h = Harness {
        registry: from_entries(&[entry]).unwrap(),
        env: FakeEnv::with(&["notes.txt"]),
        config: json!({}),
    };
    let writers = ["fs_modify_file", "fs_create_file", "fs_delete_file"];
    for tool in writers.into_iter().chain(["cat"]) {
        assert_eq!(
            h.registry.policies_for(tool),
            ["read_before_write"],
            "{tool}"
        );
    }
    assert!(h.registry.policies_for("git_commit").is_empty());
    for tool in writers {
        assert_eq!(
            h.check(tool, json!({ "path": "notes.txt" })),
            Err(format!(
                "read_before_write: `notes.txt` already exists and has not been read in this conversation; read it with `cat` first, then call `{tool}` again."
            )),
        );
        assert_eq!(
            h.check(tool, json!({ "path": "new.txt" })),
            Ok(()),
            "{tool}"
        );
    }
    assert_eq!(
        h.check("git_commit", json!({ "path": "notes.txt" })),
        Ok(())
    );
    // A tool the glob matches is a writer, and a write teaches nothing.
    h.succeed("fs_modify_file", json!({ "path": "notes.txt" }));
    assert!(
        h.check("fs_delete_file", json!({ "path": "notes.txt" }))
            .is_err()
    );
    h.succeed("cat", json!({ "path": "./notes.txt" }));
    for tool in writers {
        assert_eq!(
            h.check(tool, json!({ "path": "notes.txt" })),
            Ok(()),
            "{tool}"
        );
    }
}

#[test]
fn a_conditional_policy_denies_only_while_its_condition_holds_and_always_learns() {
    let when = |equals: &str| WhenConfig {
        path: "mode".into(),
        equals: json!(equals),
    };
    let mut h = Harness::new(
        vec![Box::new(Conditional::new(rbw(), when("strict")))],
        &["a.txt"],
    );
    assert!(
        h.check("fs_modify_file", json!({ "path": "a.txt" }))
            .is_err()
    );
    h.config = json!({ "mode": "relaxed" });
    assert_eq!(
        h.check("fs_modify_file", json!({ "path": "a.txt" })),
        Ok(())
    );
    // Learned while inactive, so switching it on does not forget the read.
    h.succeed("fs_read_file", json!({ "path": "a.txt" }));
    h.config = json!({ "mode": "strict" });
    assert_eq!(
        h.check("fs_modify_file", json!({ "path": "a.txt" })),
        Ok(())
    );
}
