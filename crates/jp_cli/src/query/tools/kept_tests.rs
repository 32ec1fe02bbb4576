#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use super::{Kept, Restored};

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

fn read(root: &Path, file: &str) -> String {
    std::fs::read_to_string(root.join(file)).unwrap()
}

fn put_back(files: &[&str]) -> Restored {
    Restored {
        put_back: files.iter().map(|f| (*f).to_owned()).collect(),
        failed: Vec::new(),
    }
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
    std::fs::write(root.join(".git/commondir"), "../elsewhere\n").unwrap();
    std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
    // Not guarded: the tool's to change.
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/other\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "changed\n").unwrap();
    std::fs::write(root.join(".jp/conversations/x.json"), "{}").unwrap();

    assert_eq!(
        kept.restore(),
        put_back(&[
            ".git/config",
            ".jp/config.toml",
            ".jp/tools.toml",
            ".git/commondir",
            ".git/hooks/pre-commit",
            ".jp/new.toml"
        ])
    );
    assert_eq!(read(root, ".jp/config.toml"), "[assistant]\n");
    assert_eq!(read(root, ".jp/tools.toml"), "# tools\n");
    assert_eq!(read(root, ".git/config"), "[core]\n");
    assert!(!root.join(".git/commondir").exists());
    assert!(!root.join(".git/hooks/pre-commit").exists());
    assert!(!root.join(".jp/new.toml").exists());
    assert_eq!(read(root, ".git/HEAD"), "ref: refs/heads/other\n");
    assert_eq!(read(root, "src/lib.rs"), "changed\n");
    // Once put back, there is nothing more to undo.
    assert_eq!(kept.restore(), Restored::default());
}

#[test]
fn a_link_put_in_a_guarded_files_place_is_replaced_not_written_through() {
    let ws = workspace();
    let root = ws.path();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("target"), "theirs\n").unwrap();
    let kept = Kept::take(root);
    std::fs::remove_file(root.join(".git/config")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("target"), root.join(".git/config")).unwrap();
    assert_eq!(kept.restore(), put_back(&[".git/config"]));
    assert!(
        !std::fs::symlink_metadata(root.join(".git/config"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(read(root, ".git/config"), "[core]\n");
    assert_eq!(read(outside.path(), "target"), "theirs\n");
}

/// The review's escape: `.git/hooks` swapped for a link to a directory
/// outside (`~/.ssh`) with a file the tool could not have jp remove. jp
/// writes nothing there, and says what it could not put back.
#[test]
fn a_place_swapped_for_a_link_is_never_written_through_and_is_a_failure() {
    let ws = workspace();
    let root = ws.path();
    let ssh = tempfile::tempdir().unwrap();
    let kept = Kept::take(root);
    std::fs::rename(root.join(".git/hooks"), root.join(".git/h")).unwrap();
    std::os::unix::fs::symlink(ssh.path(), root.join(".git/hooks")).unwrap();
    let restored = kept.restore();
    assert_eq!(restored.put_back, Vec::<String>::new());
    assert_eq!(
        restored.failed[0],
        ".git/hooks is no longer a directory of the workspace's"
    );
    // The hook it kept is not written through the link either.
    assert_eq!(restored.failed.len(), 2, "{restored:?}");
    assert!(
        restored.failed[1].starts_with(".git/hooks/pre-push.sample: ")
            && restored.failed[1].ends_with(
                "is a symbolic link, and jp follows no link among the files it keeps in a workspace"
            ),
        "{restored:?}"
    );
    let written: Vec<_> = std::fs::read_dir(ssh.path()).unwrap().collect();
    assert!(written.is_empty(), "{written:?}");
}

#[test]
fn a_git_directory_replaced_by_a_file_is_a_failure() {
    let ws = workspace();
    let root = ws.path();
    let kept = Kept::take(root);
    std::fs::rename(root.join(".git"), root.join(".git2")).unwrap();
    std::fs::write(root.join(".git"), "gitdir: .git2\n").unwrap();
    let restored = kept.restore();
    assert_eq!(
        restored.failed[..2],
        [
            ".git is no longer a directory of the workspace's".to_owned(),
            ".git/hooks is no longer a directory of the workspace's".to_owned()
        ]
    );
    assert!(restored.failed.len() > 2, "{restored:?}");
}

#[test]
fn a_workspace_without_the_places_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let kept = Kept::take(dir.path());
    std::fs::create_dir(dir.path().join("src")).unwrap();
    assert_eq!(kept.restore(), Restored::default());
}

/// What git and jp read besides the top files: a submodule's config and
/// hooks, a worktree's `commondir`, `config.worktree`, and the files the
/// config extends under `.jp/`; a hook in a new submodule directory goes
/// too. Git's objects and jp's conversations are not looked at.
#[test]
fn submodules_worktrees_and_extended_config_are_kept_too() {
    let ws = workspace();
    let root = ws.path();
    for sub in [
        ".git/modules/sub/hooks",
        ".git/worktrees/wt",
        ".jp/tools",
        ".git/objects/ab",
    ] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    for (file, text) in [
        (".git/modules/sub/config", "[core]\n"),
        (".git/worktrees/wt/commondir", "../..\n"),
        (".jp/tools/rc.toml", "# rc\n"),
        (".git/objects/ab/cdef", "blob"),
    ] {
        std::fs::write(root.join(file), text).unwrap();
    }
    let kept = Kept::take(root);
    for (file, text) in [
        (".git/modules/sub/config", "[core]\nfsmonitor = evil\n"),
        (".git/modules/sub/hooks/post-checkout", "evil\n"),
        (".git/worktrees/wt/commondir", "../../evil\n"),
        (".git/config.worktree", "[core]\nfsmonitor = evil\n"),
        (
            ".jp/tools/rc.toml",
            "[assistant]\ninstructions = [\"evil\"]\n",
        ),
        (".git/objects/ab/cdef", "changed"),
        (".jp/conversations/x.toml", "jp's own"),
    ] {
        std::fs::write(root.join(file), text).unwrap();
    }
    std::fs::create_dir_all(root.join(".git/modules/new/hooks")).unwrap();
    std::fs::write(root.join(".git/modules/new/hooks/pre-commit"), "evil\n").unwrap();
    assert_eq!(
        kept.restore(),
        put_back(&[
            ".git/modules/sub/config",
            ".git/worktrees/wt/commondir",
            ".jp/tools/rc.toml",
            ".git/config.worktree",
            ".git/modules/new/hooks/pre-commit",
            ".git/modules/sub/hooks/post-checkout",
        ])
    );
    assert_eq!(read(root, ".git/modules/sub/config"), "[core]\n");
    assert_eq!(read(root, ".jp/tools/rc.toml"), "# rc\n");
    assert_eq!(read(root, ".git/objects/ab/cdef"), "changed");
    assert_eq!(read(root, ".jp/conversations/x.toml"), "jp's own");
}
