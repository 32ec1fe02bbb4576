//! The ledger's files (the seals themselves need the user's key, and are
//! tested through the binary, with a config directory of the test's own).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn ledger() -> (tempfile::TempDir, Ledger) {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger {
        root: "/work/project".into(),
        dir: Some(dir.path().join("workspaces/abc")),
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
