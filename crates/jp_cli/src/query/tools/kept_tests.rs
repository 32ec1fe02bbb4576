#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::Kept;

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in [".jp/conversations", ".git/hooks", ".git/refs", "src"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    for (file, text) in [
        (".jp/config.toml", "[assistant]\n"),
        (".jp/tools.toml", "# tools\n"),
        (".git/config", "[core]\n"),
        (".git/hooks/pre-push.sample", "#!/bin/sh\n"),
        (".git/HEAD", "ref: refs/heads/main\n"),
        ("src/lib.rs", "fn main() {}\n"),
    ] {
        std::fs::write(dir.path().join(file), text).unwrap();
    }
    dir
}

#[test]
fn what_a_run_did_to_a_guarded_file_is_undone_and_said() {
    let ws = workspace();
    let root = ws.path();
    let kept = Kept::take(root);
    std::fs::write(root.join(".jp/config.toml"), "[conversation.tools.x]\n").unwrap();
    std::fs::remove_file(root.join(".jp/tools.toml")).unwrap();
    std::fs::write(root.join(".jp/new.toml"), "x").unwrap();
    std::fs::write(root.join(".git/config"), "[core]\nfsmonitor = evil\n").unwrap();
    std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
    // Not guarded: the tool's to change.
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/other\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "changed\n").unwrap();
    std::fs::write(root.join(".jp/conversations/x.json"), "{}").unwrap();

    assert_eq!(
        kept.restore(),
        [
            ".git/config",
            ".jp/config.toml",
            ".jp/tools.toml",
            ".git/hooks/pre-commit",
            ".jp/new.toml"
        ]
    );
    let read = |f: &str| std::fs::read_to_string(root.join(f)).unwrap();
    assert_eq!(read(".jp/config.toml"), "[assistant]\n");
    assert_eq!(read(".jp/tools.toml"), "# tools\n");
    assert_eq!(read(".git/config"), "[core]\n");
    assert!(!root.join(".git/hooks/pre-commit").exists());
    assert!(!root.join(".jp/new.toml").exists());
    assert_eq!(read(".git/HEAD"), "ref: refs/heads/other\n");
    assert_eq!(read("src/lib.rs"), "changed\n");
    // Once put back, there is nothing more to undo.
    assert_eq!(kept.restore(), Vec::<String>::new());
}

#[test]
fn a_link_put_in_a_guarded_files_place_goes_and_the_file_comes_back() {
    let ws = workspace();
    let root = ws.path();
    let kept = Kept::take(root);
    std::fs::remove_file(root.join(".git/config")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join(".git/config")).unwrap();
    assert_eq!(kept.restore(), [".git/config"]);
    assert!(
        !std::fs::symlink_metadata(root.join(".git/config"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).unwrap(),
        "[core]\n"
    );
}

#[test]
fn a_workspace_without_the_places_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let kept = Kept::take(dir.path());
    std::fs::create_dir(dir.path().join("src")).unwrap();
    assert_eq!(kept.restore(), Vec::<String>::new());
}
