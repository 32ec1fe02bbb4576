//! Path resolution on a file system held in memory: the same answers as on
//! a disk, with no disk.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use super::*;
use crate::path::{Unresolvable, Workspace, resolve_path};

fn workspace(memory: Memory) -> Workspace {
    Workspace::with_links(Path::new("/w"), Arc::new(memory))
}

#[test]
fn a_link_inside_the_workspace_that_leads_out_is_resolved_outside() {
    let ws = workspace(
        Memory::new()
            .with_entry("/w/src/main.rs")
            .with_link("/w/src/keys", "/home/u/.ssh"),
    );
    let value = resolve_path("src/keys/id_ed25519", &ws).unwrap();
    assert_eq!(value.lexical.text(), "src/keys/id_ed25519");
    assert_eq!(value.resolved.unwrap().text(), "/home/u/.ssh/id_ed25519");
    let plain = resolve_path("src/main.rs", &ws).unwrap();
    assert!(plain.is_inside());
}

#[test]
fn a_relative_link_and_a_dot_dot_after_it_read_as_the_kernel_reads_them() {
    // src/b -> c/d: the kernel takes src/b/../a as src/c/a; a tool that
    // removes `..` first opens src/a.
    let ws = workspace(
        Memory::new()
            .with_entry("/w/src/c/d")
            .with_link("/w/src/b", "c/d"),
    );
    let value = resolve_path("src/b/../a", &ws).unwrap();
    assert_eq!(value.resolved.unwrap().text(), "src/c/a");
    assert_eq!(value.resolved_lexical.unwrap().text(), "src/a");
}

#[test]
fn a_loop_and_an_entry_that_cannot_be_inspected_fail_closed() {
    let ws = workspace(
        Memory::new()
            .with_link("/w/a", "b")
            .with_link("/w/b", "a")
            .with_entry("/w/private/x")
            .with_hidden("/w/private"),
    );
    assert!(matches!(
        resolve_path("a/x", &ws).unwrap().resolved,
        Err(Unresolvable::Loop { .. })
    ));
    assert!(matches!(
        resolve_path("private/x", &ws).unwrap().resolved,
        Err(Unresolvable::Inaccessible { .. })
    ));
}

#[test]
fn a_workspace_root_reached_through_a_link_is_resolved() {
    let memory = Memory::new()
        .with_entry("/real/project/README")
        .with_link("/w", "/real/project");
    let ws = workspace(memory);
    assert_eq!(ws.root(), Path::new("/w"));
    assert_eq!(ws.resolved_root(), Path::new("/real/project"));
    assert!(resolve_path("README", &ws).unwrap().is_inside());
}

/// The same tree on the disk and in memory: each value resolves alike, so
/// the memory tests say what the disk does.
#[cfg(unix)]
#[test]
fn memory_resolves_as_the_disk_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let disk = |rel: &str| root.join(rel);
    std::fs::create_dir_all(disk("w/src/c/d")).unwrap();
    std::fs::create_dir_all(disk("outside")).unwrap();
    std::fs::write(disk("w/src/main.rs"), "").unwrap();
    std::os::unix::fs::symlink("c/d", disk("w/src/b")).unwrap();
    std::os::unix::fs::symlink(disk("outside"), disk("w/src/out")).unwrap();
    std::os::unix::fs::symlink("b2", disk("w/a2")).unwrap();
    std::os::unix::fs::symlink("a2", disk("w/b2")).unwrap();
    let on_disk = Workspace::new(&disk("w"));
    let memory = Memory::new()
        .with_entry(disk("w/src/c/d"))
        .with_entry(disk("outside"))
        .with_entry(disk("w/src/main.rs"))
        .with_link(disk("w/src/b"), "c/d")
        .with_link(disk("w/src/out"), disk("outside"))
        .with_link(disk("w/a2"), "b2")
        .with_link(disk("w/b2"), "a2");
    let in_memory = Workspace::with_links(&disk("w"), Arc::new(memory));
    for value in [
        "src/main.rs",
        "src/b/../a",
        "src/out/x",
        "src/out/../y",
        "a2/x",
        "missing/dir/file",
        "../w/src/b",
    ] {
        let a = resolve_path(value, &on_disk).unwrap();
        let b = resolve_path(value, &in_memory).unwrap();
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{value}");
    }
}
