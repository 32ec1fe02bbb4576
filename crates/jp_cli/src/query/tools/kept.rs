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

/// Where the kept files are, relative to the workspace root: a directory
/// and which of the files directly in it are kept.
const PLACES: &[(&str, Kind)] = &[
    (".jp", Kind::Extension("toml")),
    (".git", Kind::Named(&["config", "commondir"])),
    (".git/hooks", Kind::All),
];

/// Which files of a place are kept.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Those with this extension.
    Extension(&'static str),
    /// Those with one of these names.
    Named(&'static [&'static str]),
    /// Every one but directories.
    All,
}

/// The guarded files of a workspace, as they were when taken.
#[derive(Debug)]
pub struct Kept {
    root: PathBuf,
    /// The places that were directories of the workspace's (no link on
    /// the way), relative to the root.
    places: Vec<&'static str>,
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
        let places: Vec<&'static str> = PLACES
            .iter()
            .map(|(place, _)| *place)
            .filter(|place| is_dir(root, place))
            .collect();
        let seen = guarded(root, &places);
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
            places,
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
        for place in &self.places {
            if !is_dir(root, place) {
                restored.failed.push(format!(
                    "{place} is no longer a directory of the workspace's"
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
        let places: Vec<&'static str> = self
            .places
            .iter()
            .copied()
            .filter(|place| is_dir(root, place))
            .collect();
        for rel in guarded(root, &places) {
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

/// Whether `root/place` is a directory reached through no link.
fn is_dir(root: &Path, place: &str) -> bool {
    matches!(
        jp_fs::kind(root, Path::new(place)),
        Ok(Some(FileKind::Directory))
    )
}

/// The guarded files (relative) of `places`, directories of the workspace
/// at `root`, sorted.
fn guarded(root: &Path, places: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for (place, kind) in PLACES.iter().filter(|(p, _)| places.contains(p)) {
        let Ok(entries) = std::fs::read_dir(root.join(place)) else {
            continue;
        };
        files.extend(
            entries
                .flatten()
                .filter(|entry| match kind {
                    Kind::Extension(ext) => entry.path().extension().is_some_and(|e| e == *ext),
                    Kind::Named(names) => names.iter().any(|n| entry.file_name() == *n),
                    // A directory in `hooks` is no hook.
                    Kind::All => !entry.file_type().is_ok_and(|t| t.is_dir()),
                })
                .map(|entry| Path::new(place).join(entry.file_name())),
        );
    }
    files.sort();
    files
}

#[cfg(test)]
#[path = "kept_tests.rs"]
mod tests;
