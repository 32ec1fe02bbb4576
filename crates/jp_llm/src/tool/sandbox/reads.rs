//! Which files a process jp starts may read: every file but those beneath
//! its sandbox's `deny_read` paths.
//!
//! Landlock only grants (a rule can say "beneath here, reading is
//! allowed", never "but not there"), so "everything but" is said as the
//! grants that leave out exactly the denied paths: for every directory on
//! the way from `/` to a denied path, each of its entries that is neither
//! denied nor itself on such a way ([`readable`]). For `~/.ssh` that is
//! every entry of `/` but the one holding the home, every entry of that
//! but the home, and every entry of the home but `.ssh`.
//!
//! What follows from it (docs/sandbox.md says it too):
//! - Only reading a file's content is bounded: the names in a denied
//!   directory can be listed, its files cannot be opened, mapped or run
//!   through an interpreter.
//! - A symbolic link is never granted itself: what it points to is read
//!   where it really is, which is granted or denied as that place is. A
//!   denied path that is a link denies what it points to.
//! - A file made after the process started, in a directory on the way to a
//!   denied path (the home itself, say), is not readable by it. The
//!   workspace is never on such a way unless a denied path lies inside it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The paths beneath which reading is granted so that nothing beneath
/// `deny` is readable and everything else (present when this runs) is.
///
/// A denied path that does not exist denies nothing (it cannot be read,
/// and the process cannot make it: it writes only in its bounds); one that
/// holds the workspace `root` is left out (the process works there), as is
/// one beneath another denied path (that one denies it already).
pub(super) fn readable(deny: &[PathBuf], root: &Path) -> Vec<PathBuf> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_owned());
    let mut denied: Vec<PathBuf> = deny
        .iter()
        .filter_map(|path| std::fs::canonicalize(path).ok())
        .filter(|path| {
            let holds_root = root.starts_with(path);
            if holds_root {
                tracing::warn!(
                    path = %path.display(),
                    "a sandbox's deny_read path holds the workspace; it is not denied"
                );
            }
            !holds_root
        })
        .collect();
    denied.sort();
    denied.dedup();
    let outer: Vec<PathBuf> = denied
        .iter()
        .filter(|path| {
            !denied
                .iter()
                .any(|other| other != *path && path.starts_with(other))
        })
        .cloned()
        .collect();
    if outer.is_empty() {
        return vec![PathBuf::from("/")];
    }
    let ways: BTreeSet<&Path> = outer
        .iter()
        .flat_map(|path| path.ancestors().skip(1))
        .collect();
    let mut grants = Vec::new();
    for dir in &ways {
        // A directory jp cannot list grants nothing beneath it: what is
        // there stays unreadable (closed, not open).
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let is_link = entry.file_type().map_or(true, |kind| kind.is_symlink());
            if is_link || ways.contains(path.as_path()) || outer.contains(&path) {
                continue;
            }
            grants.push(path);
        }
    }
    grants
}

#[cfg(test)]
#[path = "reads_tests.rs"]
mod tests;
