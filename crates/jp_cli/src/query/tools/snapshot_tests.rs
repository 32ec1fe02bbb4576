#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt as _;

use super::*;

const BUDGET: Budget = Budget {
    max_files: 100,
    max_bytes: 1 << 20,
    max_file_bytes: 64,
};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

/// The changes as `path: before → after` lines, and whether the content
/// before can be read back from the cache.
fn said(captured: &[Captured]) -> Vec<String> {
    let state = |state: &FileState| match state {
        FileState::Absent => "absent".to_owned(),
        FileState::File { bytes, mode, .. } => format!("file {bytes} B {mode:o}"),
        FileState::Unkept { bytes, .. } => format!("unkept {bytes} B"),
        FileState::Link { target } => format!("link {target}"),
        FileState::Dir { .. } => "dir".to_owned(),
    };
    captured
        .iter()
        .map(|c| {
            let kept = match (&c.before, &c.change.before) {
                (Some(content), FileState::File { sha256, bytes, .. }) => format!(
                    " kept {:?}",
                    String::from_utf8_lossy(&content.read(sha256, *bytes).unwrap())
                ),
                _ => String::new(),
            };
            format!(
                "{}: {} → {}{kept}",
                c.change.path,
                state(&c.change.before),
                state(&c.change.after)
            )
        })
        .collect()
}

#[test]
fn what_a_command_changed_is_kept_and_what_it_did_not_change_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/lib.rs", "fn a() {}\n");
    write(root, "build/out.o", "binary");
    write(root, ".gitignore", "/build\n");
    write(root, "keep.txt", "same\n");
    write(root, "run.sh", "#!/bin/sh\n");
    write(root, "gone/one.txt", "one\n");
    write(root, ".git/config", "[core]\n");
    write(root, ".jp/conversations/1/events.jsonl", "{}\n");

    // A first look reads everything; a second reads only what changed.
    drop(Snapshot::take(root, cache.path(), BUDGET).unwrap());
    let snapshot = Snapshot::take(root, cache.path(), BUDGET).unwrap();

    // What a command like `sh -c 'echo x >> src/lib.rs; rm -r gone;
    // mkdir new; chmod +x run.sh; touch keep.txt'` does, and more.
    std::fs::OpenOptions::new()
        .append(true)
        .open(root.join("src/lib.rs"))
        .map(|mut f| std::io::Write::write_all(&mut f, b"fn b() {}\n"))
        .unwrap()
        .unwrap();
    std::fs::remove_dir_all(root.join("gone")).unwrap();
    std::fs::create_dir(root.join("new")).unwrap();
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    write(root, "keep.txt", "same\n");
    write(root, "build/out.o", "other binary");
    write(root, ".git/config", "[core]\nbare = true\n");
    write(root, ".jp/conversations/1/events.jsonl", "{}\n{}\n");

    assert_eq!(
        said(&snapshot.changes("c1").unwrap()),
        [
            "gone: dir → absent",
            "gone/one.txt: file 4 B 644 → absent kept \"one\\n\"",
            "new: absent → dir",
            "run.sh: file 10 B 644 → file 10 B 755 kept \"#!/bin/sh\\n\"",
            "src/lib.rs: file 10 B 644 → file 20 B 644 kept \"fn a() {}\\n\"",
        ]
    );
}

#[test]
fn a_workspace_over_the_budget_is_not_looked_at() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    for n in 0..5 {
        write(dir.path(), &format!("f{n}"), "0123456789");
    }
    let few = Budget {
        max_files: 4,
        ..BUDGET
    };
    assert_eq!(
        Snapshot::take(dir.path(), cache.path(), few).unwrap_err(),
        "the workspace has more than 4 files (`conversation.undo.max_files`)"
    );
    let small = Budget {
        max_bytes: 40,
        ..BUDGET
    };
    assert_eq!(
        Snapshot::take(dir.path(), cache.path(), small).unwrap_err(),
        "the workspace holds more than 40 B to keep (`conversation.undo.max_bytes`)"
    );
}

#[test]
fn a_cached_copy_changed_since_is_refused_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "before\n");
    let snapshot = Snapshot::take(dir.path(), cache.path(), BUDGET).unwrap();
    write(dir.path(), "a.txt", "after\n");
    let captured = snapshot.changes("c1").unwrap();
    let FileState::File { sha256, bytes, .. } = &captured[0].change.before else {
        panic!("{captured:?}")
    };
    std::fs::write(cache.path().join("blobs").join(sha256), "befor!\n").unwrap();
    assert_eq!(
        captured[0].before.as_ref().unwrap().read(sha256, *bytes),
        Err("the undo cache's copy is not what it was kept as".into())
    );
}

#[test]
fn what_a_gitignore_ignored_before_the_call_stays_out_whatever_the_call_does_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "/target\n");
    write(root, "target/out", "old build");
    write(root, "src/lib.rs", "fn a() {}\n");
    let snapshot = Snapshot::take(root, cache.path(), BUDGET).unwrap();
    // The root's rules go; a nested file ignores what was looked at.
    std::fs::remove_file(root.join(".gitignore")).unwrap();
    write(root, "src/lib.rs", "changed\n");
    write(root, "src/.gitignore", "*\n");
    write(root, "target/more", "new build");
    assert_eq!(
        said(&snapshot.changes("c1").unwrap()),
        [
            ".gitignore: file 8 B 644 → absent kept \"/target\\n\"",
            "src/.gitignore: absent → file 2 B 644",
            "src/lib.rs: file 10 B 644 → file 8 B 644 kept \"fn a() {}\\n\"",
        ]
    );
}

#[test]
fn a_second_jp_does_not_wait_for_the_cache_and_a_name_jp_cannot_record_is_said() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "a");
    let first = Snapshot::take(dir.path(), cache.path(), BUDGET).unwrap();
    assert_eq!(
        Snapshot::take(dir.path(), cache.path(), BUDGET).unwrap_err(),
        "another jp is keeping a command's changes in this workspace right now"
    );
    drop(first);
    std::fs::write(
        dir.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt")),
        "x",
    )
    .unwrap();
    assert_eq!(
        Snapshot::take(dir.path(), cache.path(), BUDGET).unwrap_err(),
        "the workspace holds a name that is not UTF-8 (caf\u{fffd}.txt), which jp cannot record"
    );
}

#[test]
fn a_cached_copy_cleaned_away_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "one\n");
    drop(Snapshot::take(dir.path(), cache.path(), BUDGET).unwrap());
    // As if the index had been written long after the file changed (so
    // its entry is trusted, not read again as too recent)...
    let path = cache.path().join("index");
    let mut index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    index["written_ns"] = serde_json::json!(i64::MAX / 2);
    std::fs::write(&path, serde_json::to_vec(&index).unwrap()).unwrap();
    // ... when an age-based cleaner empties the cache's blobs.
    for blob in std::fs::read_dir(cache.path().join("blobs")).unwrap() {
        std::fs::remove_file(blob.unwrap().path()).unwrap();
    }
    let snapshot = Snapshot::take(dir.path(), cache.path(), BUDGET).unwrap();
    write(dir.path(), "a.txt", "two\n");
    assert_eq!(
        said(&snapshot.changes("c1").unwrap()),
        ["a.txt: file 4 B 644 → file 4 B 644 kept \"one\\n\""]
    );
}

#[test]
fn a_call_that_changes_more_than_the_budget_is_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let few = Budget {
        max_files: 3,
        ..BUDGET
    };
    let snapshot = Snapshot::take(dir.path(), cache.path(), few).unwrap();
    for n in 0..4 {
        write(dir.path(), &format!("new{n}"), "x");
    }
    assert_eq!(
        snapshot.changes("c1").unwrap_err(),
        "it changed more than 3 files (`conversation.undo.max_files`)"
    );
}
