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
//! - git's repository config and hooks (`.git/config`, `.git/hooks/*`).
//!   The user's own `git`, run outside any sandbox, runs what they name
//!   (`core.fsmonitor`, `core.hooksPath`, a `pre-commit` hook).
//!
//! Landlock only grants, so it cannot carve these out of the workspace;
//! jp instead keeps their bytes before the run and puts back what the run
//! changed, made or removed ([`Kept`]), and the call's outcome says so.

use std::path::{Path, PathBuf};

/// The most bytes one kept file may have: these files are small; a larger
/// one is left alone rather than held in memory.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Where the kept files are, relative to the workspace root: a directory
/// and which of the files directly in it are kept.
const PLACES: &[(&str, Kind)] = &[
    (".jp", Kind::Extension("toml")),
    (".git", Kind::Named("config")),
    (".git/hooks", Kind::All),
];

/// Which files of a place are kept.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Those with this extension.
    Extension(&'static str),
    /// The one with this name.
    Named(&'static str),
    /// Every one.
    All,
}

/// The guarded files of a workspace, as they were when taken.
#[derive(Debug)]
pub struct Kept {
    root: PathBuf,
    /// Every guarded file there was, kept or not.
    seen: Vec<PathBuf>,
    /// Those kept, with their bytes.
    files: Vec<(PathBuf, Vec<u8>)>,
}

impl Kept {
    /// The guarded files of the workspace at `root` as they are now.
    pub fn take(root: &Path) -> Self {
        let seen = guarded(root);
        let files = seen
            .iter()
            .filter(|path| {
                std::fs::symlink_metadata(path)
                    .is_ok_and(|meta| meta.is_file() && meta.len() <= MAX_FILE_BYTES)
            })
            .filter_map(|path| std::fs::read(path).ok().map(|bytes| (path.clone(), bytes)))
            .collect();
        Self {
            root: root.to_owned(),
            seen,
            files,
        }
    }

    /// Puts back every file that differs from when it was taken, removes
    /// a guarded file made since, and says which (workspace-relative, such
    /// as `.jp/config.toml`); empty when nothing changed.
    pub fn restore(&self) -> Vec<String> {
        let mut restored = Vec::new();
        let name = |path: &Path| {
            path.strip_prefix(&self.root)
                .unwrap_or(path)
                .display()
                .to_string()
        };
        for (path, bytes) in &self.files {
            let same = std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file())
                && std::fs::read(path).is_ok_and(|now| now == *bytes);
            if !same {
                // A link or directory put in its place goes first.
                let _ = std::fs::remove_dir_all(path).or_else(|_| std::fs::remove_file(path));
                match std::fs::write(path, bytes) {
                    Ok(()) => restored.push(name(path)),
                    Err(error) => tracing::warn!(
                        path = %path.display(), %error,
                        "cannot put back a file a tool changed"
                    ),
                }
            }
        }
        for path in guarded(&self.root) {
            if !self.seen.contains(&path)
                && (std::fs::remove_file(&path).is_ok() || std::fs::remove_dir_all(&path).is_ok())
            {
                restored.push(name(&path));
            }
        }
        restored
    }
}

/// The guarded files of the workspace at `root` ([`PLACES`]), sorted; a
/// place that is a link is not followed (it is no place of the
/// workspace's).
fn guarded(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for (place, kind) in PLACES {
        let dir = root.join(place);
        if !std::fs::symlink_metadata(&dir).is_ok_and(|meta| meta.is_dir()) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        files.extend(
            entries
                .flatten()
                .filter(|entry| match kind {
                    Kind::Extension(ext) => entry.path().extension().is_some_and(|e| e == *ext),
                    Kind::Named(name) => entry.file_name() == *name,
                    // A directory in `hooks` is no hook: only files, links
                    // and what else could run.
                    Kind::All => !entry.file_type().is_ok_and(|t| t.is_dir()),
                })
                .map(|entry| entry.path()),
        );
    }
    files.sort();
    files
}

#[cfg(test)]
#[path = "kept_tests.rs"]
mod tests;
