#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt as _;

use super::*;

fn mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The changes, as `call: path before → after` lines, and the contents
/// kept.
fn said(captured: &[Captured]) -> Vec<String> {
    let state = |state: &FileState| match state {
        FileState::Absent => "absent".to_owned(),
        FileState::File { bytes, mode, .. } => format!("file {bytes} B {mode:o}"),
        FileState::Unkept { bytes, reason, .. } => format!("unkept {bytes} B ({reason})"),
        FileState::Link { target } => format!("link {target}"),
        FileState::Dir { mode } => format!("dir {mode:o}"),
    };
    captured
        .iter()
        .map(|c| {
            format!(
                "{}: {} {} → {}{}{}",
                c.change.call_id,
                c.change.path,
                state(&c.change.before),
                state(&c.change.after),
                if c.change.made_dirs.is_empty() {
                    String::new()
                } else {
                    format!(" made {}", c.change.made_dirs.join(","))
                },
                match (&c.before, &c.change.before) {
                    (Some(content), FileState::File { sha256, bytes, .. }) => format!(
                        " kept {:?}",
                        String::from_utf8_lossy(&content.read(sha256, *bytes).unwrap())
                    ),
                    _ => String::new(),
                }
            )
        })
        .collect()
}

#[test]
fn what_a_call_changed_is_captured_with_what_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("old.txt"), "old").unwrap();
    mode(&root.join("old.txt"), 0o640);
    std::fs::write(root.join("gone.txt"), "gone").unwrap();
    mode(&root.join("gone.txt"), 0o644);
    std::fs::write(root.join("same.txt"), "same").unwrap();
    std::fs::write(root.join("big.bin"), "0123456789").unwrap();
    std::os::unix::fs::symlink("old.txt", root.join("link")).unwrap();
    std::fs::write(root.join("run.sh"), "#!").unwrap();
    mode(&root.join("run.sh"), 0o644);

    let mut capture = Capture::new(root, 8);
    for path in [
        "old.txt",
        "gone.txt",
        "same.txt",
        "big.bin",
        "link",
        "run.sh",
        "a/b/new.txt",
    ] {
        capture.watch(Path::new(path));
    }
    // Watched again later (a rerun): what it was first stays.
    std::fs::write(root.join("old.txt"), "older").unwrap();
    capture.watch(Path::new("old.txt"));

    std::fs::remove_file(root.join("gone.txt")).unwrap();
    std::fs::write(root.join("big.bin"), "01234567890").unwrap();
    std::fs::remove_file(root.join("link")).unwrap();
    mode(&root.join("run.sh"), 0o755);
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::write(root.join("a/b/new.txt"), "new").unwrap();
    mode(&root.join("a/b/new.txt"), 0o644);

    assert_eq!(
        said(&capture.finish("c1")),
        [
            "c1: old.txt file 3 B 640 → file 5 B 640 kept \"old\"",
            "c1: gone.txt file 4 B 644 → absent kept \"gone\"",
            "c1: big.bin unkept 10 B (larger than 8 bytes (`conversation.undo.max_file_bytes`)) → unkept 11 B (larger than 8 bytes (`conversation.undo.max_file_bytes`))",
            "c1: link link old.txt → absent",
            "c1: run.sh file 2 B 644 → file 2 B 755 kept \"#!\"",
            "c1: a/b/new.txt absent → file 3 B 644 made a,a/b",
        ]
    );
}

#[test]
fn a_link_on_the_way_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    let (state, content) = look(dir.path(), Path::new("out/secret"), 99);
    assert!(content.is_none());
    assert!(
        matches!(&state, FileState::Unkept { reason, .. } if reason.contains("link")),
        "{state:?}"
    );
}
