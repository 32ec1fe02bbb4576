//! The files in the workspace that run code or set config behind a tool's
//! sandbox, kept as they were around each tool run.
//!
//! The kernel sandbox lets a tool write anywhere in the workspace, and the
//! workspace holds two kinds of file that reach past the sandbox:
//!
//! - jp's own config (`.jp/config.toml` and the files beside it that it
//!   extends). A tool that rewrote it would change jp's config behind the
//!   grant system (RFD 078: a tool changes config only through its
//!   `access.config` grants, which never reach a sandbox);
//! - git's repository config and hooks (`.git/config`, `.git/commondir`,
//!   `.git/hooks/*`). The user's own `git`, run outside any sandbox, runs
//!   what they name (`core.fsmonitor`, `core.hooksPath`, a hook).
//!
//! Landlock only grants, so it cannot carve these out of the workspace;
//! jp instead keeps their bytes before the run and puts back what the run
//! changed, made or removed ([`Kept`]), and the call's outcome says so.
//!
//! Putting back runs outside the sandbox, in jp, so it follows no link
//! (every path goes through [`jp_fs`], which refuses a link on the way and
//! replaces one at the file rather than writing through it): a tool that
//! swapped `.git/hooks` for a link to `~/.ssh` must not have jp write
//! there. What cannot be put back (`.git` replaced, a place made a link, a
//! file jp cannot write) is a failure the caller makes loud
//! ([`Restored::failed`]).

use std::path::{Path, PathBuf};

use jp_fs::FileKind;

/// The most bytes one kept file may have: these files are small; a larger
/// one is left alone rather than held in memory.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Where the kept files are, relative to the workspace root: each is
/// walked (links are not followed), but for the directories [`SKIPPED`]
/// names, to [`MAX_DEPTH`], and a file is kept when [`is_kept`] says so.
const PLACES: [&str; 2] = [".jp", ".git"];

/// Directories in the places that hold nothing kept: git's objects, refs
/// and logs (large), and jp's conversations (jp writes them itself).
const SKIPPED: [&str; 5] = ["objects", "refs", "logs", "lfs", "conversations"];

/// How deep a place is walked: `.git/modules/a/modules/b/hooks/x` is 5.
const MAX_DEPTH: usize = 8;

/// Whether the file `rel` (relative to the workspace root) is kept: in
/// `.jp`, every `.toml` (the config and what it extends); in `.git`,
/// every `config`, `config.worktree` and `commondir` (the repository's,
/// a submodule's under `modules/`, a worktree's under `worktrees/`) and
/// every file in a `hooks` directory.
fn is_kept(rel: &Path) -> bool {
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if rel.starts_with(".jp") {
        return rel.extension().is_some_and(|e| e == "toml");
    }
    ["config", "config.worktree", "commondir"].contains(&name)
        || rel
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|parent| parent == "hooks")
}

/// The guarded files of a workspace, as they were when taken.
#[derive(Debug)]
pub struct Kept {
    root: PathBuf,
    /// The directories walked (relative): each must still be one after
    /// the run, reached through no link.
    dirs: Vec<PathBuf>,
    /// Every guarded file there was, kept or not (relative).
    seen: Vec<PathBuf>,
    /// Those kept, with their bytes (relative).
    files: Vec<(PathBuf, Vec<u8>)>,
}

/// What [`Kept::restore`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// The files put back or removed (workspace-relative, such as
    /// `.jp/config.toml`).
    pub put_back: Vec<String>,
    /// What could not be put back, and why: the workspace's git or jp
    /// config may now run or say what a tool chose.
    pub failed: Vec<String>,
}

impl Kept {
    /// The guarded files of the workspace at `root` as they are now.
    pub fn take(root: &Path) -> Self {
        let (dirs, seen) = walk(root);
        let files = seen
            .iter()
            .filter_map(|rel| {
                jp_fs::read(root, rel, MAX_FILE_BYTES)
                    .ok()
                    .map(|bytes| (rel.clone(), bytes))
            })
            .collect();
        Self {
            root: root.to_owned(),
            dirs,
            seen,
            files,
        }
    }

    /// Puts back every file that differs from when it was taken and
    /// removes a guarded file made since, through no link; says which, and
    /// what it could not.
    pub fn restore(&self) -> Restored {
        let mut restored = Restored::default();
        let root = &self.root;
        let name = |rel: &Path| rel.display().to_string();
        for dir in &self.dirs {
            if !is_dir(root, dir) {
                restored.failed.push(format!(
                    "{} is no longer a directory of the workspace's",
                    name(dir)
                ));
            }
        }
        for (rel, bytes) in &self.files {
            match jp_fs::read(root, rel, MAX_FILE_BYTES) {
                Ok(now) if now == *bytes => continue,
                _ => {}
            }
            match jp_fs::write_atomic(root, rel, bytes) {
                Ok(()) => restored.put_back.push(name(rel)),
                Err(e) => restored
                    .failed
                    .push(format!("{}: {}", name(rel), jp_fs::io_reason(&e))),
            }
        }
        for rel in walk(root).1 {
            if self.seen.contains(&rel) {
                continue;
            }
            match jp_fs::remove_file(root, &rel) {
                Ok(()) => restored.put_back.push(name(&rel)),
                Err(e) => restored
                    .failed
                    .push(format!("{}: {}", name(&rel), jp_fs::io_reason(&e))),
            }
        }
        restored
    }
}

/// Whether `root/rel` is a directory reached through no link.
fn is_dir(root: &Path, rel: &Path) -> bool {
    matches!(jp_fs::kind(root, rel), Ok(Some(FileKind::Directory)))
}

/// The directories of [`PLACES`] in the workspace at `root` and the kept
/// files in them (relative, sorted), found without following a link.
fn walk(root: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut dirs: Vec<PathBuf> = PLACES
        .iter()
        .map(PathBuf::from)
        .filter(|place| is_dir(root, place))
        .collect();
    let mut files = Vec::new();
    let mut next = 0;
    while let Some(dir) = dirs.get(next).cloned() {
        next += 1;
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let rel = dir.join(entry.file_name());
            // The entry's own type: a link is never a directory here.
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                let skipped = SKIPPED.iter().any(|s| entry.file_name() == *s);
                if !skipped && rel.components().count() <= MAX_DEPTH {
                    dirs.push(rel);
                }
            } else if is_kept(&rel) {
                files.push(rel);
            }
        }
    }
    dirs.sort();
    files.sort();
    (dirs, files)
}

#[cfg(test)]
#[path = "kept_tests.rs"]
mod tests;
