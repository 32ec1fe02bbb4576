#![allow(clippy::unwrap_used)]

use super::*;

fn file(sha: &str, mode: u32) -> FileState {
    FileState::File {
        sha256: sha.into(),
        bytes: 1,
        mode,
    }
}

fn change(before: FileState, after: FileState) -> FileChange {
    FileChange {
        call_id: "c".into(),
        path: "a".into(),
        before,
        after,
        made_dirs: Vec::new(),
    }
}

#[test]
fn turns_are_said_as_a_range_when_they_follow_each_other() {
    assert_eq!(turn_list(&[]), "no turn");
    assert_eq!(turn_list(&[3]), "turn 3");
    assert_eq!(turn_list(&[5, 3, 4]), "turns 3–5");
    assert_eq!(turn_list(&[2, 5]), "turns 2, 5");
    assert_eq!(numbers(&[7, 4, 99], &[0, 4, 7]), [3, 2]);
}

#[test]
fn a_change_is_said_in_a_word() {
    let link = FileState::Link { target: "x".into() };
    let cases = [
        (change(FileState::Absent, file("a", 0o644)), "created"),
        (change(FileState::Absent, link.clone()), "created link"),
        (change(file("a", 0o644), FileState::Absent), "deleted"),
        (change(link, FileState::Absent), "deleted link"),
        (change(file("a", 0o644), file("b", 0o644)), "modified"),
        (change(file("a", 0o644), file("a", 0o755)), "mode 644 → 755"),
        (
            change(file("a", 0o644), file("b", 0o600)),
            "modified (mode 644 → 600)",
        ),
    ];
    for (change, word) in cases {
        assert_eq!(change_word(&change), word);
    }
}

#[test]
fn a_rewind_is_listed_with_what_it_did() {
    let mut rewind = Rewind {
        turns: vec![4, 7],
        reason: RewindReason::User,
        restored: vec!["a".into(), "b".into()],
        removed: vec!["c".into()],
        left: Vec::new(),
        complete: true,
    };
    let starts = [0, 4, 7];
    assert_eq!(
        rewind_line(&rewind, &starts),
        "rewound turns 2–3: restored 2 files, removed 1"
    );
    rewind.complete = false;
    rewind.left = vec!["d".into()];
    assert_eq!(
        rewind_line(&rewind, &starts),
        "rewind of turns 2–3 stopped part-way: restored 2 files, removed 1, left 1 as it is (--force); the turns are still live"
    );
    rewind.reason = RewindReason::TooLarge;
    rewind.turns = vec![7];
    assert_eq!(
        rewind_line(&rewind, &starts),
        "turn 3 not sent: larger than the model's context window (its message is kept here)"
    );
}
