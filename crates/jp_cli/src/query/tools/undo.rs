//! Before-images (issue 38): what a call of jp's file tools found at the
//! path it changes, kept so that `jp conversation rewind` can put it back.
//!
//! A [`Capture`] watches each path a call will change right before the
//! call (first) runs, and looks again once the call has ended; a path
//! whose state differs is a [`Captured`] change: the
//! [`FileChange`](jp_conversation::FileChange) the conversation records
//! with the call's response, and the content it had before (to keep as a
//! blob). A file larger than `conversation.undo.max_file_bytes` is listed
//! as changed but not copied ([`FileState::Unkept`]).
//!
//! Everything is read through [`jp_fs`] from the workspace root: no link
//! on the way is followed, and a link at the path is recorded as a link.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jp_conversation::{FileChange, FileState};
use sha2::{Digest as _, Sha256};

/// One change a call made, with the content to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// What the conversation records.
    pub change: FileChange,
    /// The file's content before the call, when `change.before` is a
    /// [`FileState::File`]: kept as a blob before the change is recorded.
    pub before: Option<Content>,
}

/// What one call changed, for the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changes {
    /// Each file it changed, with what it was (none: it changed nothing,
    /// or nothing jp keeps); the content before is kept already.
    Kept(Vec<FileChange>),
    /// It may have changed files jp did not keep, and why.
    NotKept(String),
}

/// Keeps the content before of each of `captured` among `blobs` (`None`:
/// nowhere to keep it), and gives the changes to record: one whose content
/// could not be kept is recorded as [`FileState::Unkept`], saying why.
#[must_use]
pub fn keep(captured: Vec<Captured>, blobs: Option<&crate::blobs::Blobs>) -> Vec<FileChange> {
    captured
        .into_iter()
        .map(|captured| {
            let mut change = captured.change;
            let FileState::File {
                sha256,
                bytes,
                mode,
            } = &change.before
            else {
                return change;
            };
            let kept = match (&captured.before, blobs) {
                (Some(content), Some(blobs)) => content
                    .read(sha256, *bytes)
                    .and_then(|content| blobs.put(&content))
                    .map(drop),
                (None, _) => Err("its content was not read".to_owned()),
                (_, None) => Err("jp has no data directory to keep it in (set HOME)".to_owned()),
            };
            if let Err(reason) = kept {
                change.before = FileState::Unkept {
                    bytes: *bytes,
                    mode: *mode,
                    reason,
                };
            }
            change
        })
        .collect()
}

impl Default for Changes {
    fn default() -> Self {
        Self::Kept(Vec::new())
    }
}

/// Where the content of a file before a call is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Read already.
    Bytes(Arc<[u8]>),
    /// In the undo cache ([`super::snapshot`]), by its SHA-256: read (and
    /// checked against it) when it is kept.
    Blob(PathBuf),
}

impl Content {
    /// The content, at most `limit` bytes, checked against `sha256`.
    ///
    /// # Errors
    ///
    /// When it cannot be read, or is not what `sha256` says.
    pub fn read(&self, sha256: &str, limit: u64) -> Result<Arc<[u8]>, String> {
        let bytes: Arc<[u8]> = match self {
            Self::Bytes(bytes) => Arc::clone(bytes),
            Self::Blob(path) => {
                let file = std::fs::File::open(path).map_err(|e| {
                    format!(
                        "the undo cache's copy cannot be read: {}",
                        jp_fs::io_reason(&e)
                    )
                })?;
                jp_fs::read_file(file, path, limit)
                    .map_err(|e| {
                        format!(
                            "the undo cache's copy cannot be read: {}",
                            jp_fs::io_reason(&e)
                        )
                    })?
                    .into()
            }
        };
        if sha256_hex(&bytes) == sha256 {
            Ok(bytes)
        } else {
            Err("the undo cache's copy is not what it was kept as".into())
        }
    }
}

/// The paths one call changes, as they were before it ran.
#[derive(Debug)]
pub struct Capture {
    root: PathBuf,
    limit: u64,
    watched: Vec<Watched>,
}

#[derive(Debug)]
struct Watched {
    rel: PathBuf,
    before: FileState,
    content: Option<Arc<[u8]>>,
    /// The directories on the way that were missing, outermost first.
    missing: Vec<PathBuf>,
}

impl Capture {
    /// A capture in the workspace at `root`, copying files of at most
    /// `limit` bytes.
    #[must_use]
    pub fn new(root: &Path, limit: u64) -> Self {
        Self {
            root: root.to_path_buf(),
            limit,
            watched: Vec::new(),
        }
    }

    /// Looks at `rel` (relative to the root) before a run that changes
    /// it; a path already watched keeps what it was first seen as.
    pub fn watch(&mut self, rel: &Path) {
        if self.watched.iter().any(|watched| watched.rel == rel) {
            return;
        }
        let (before, content) = look(&self.root, rel, self.limit);
        let missing = rel
            .ancestors()
            .skip(1)
            .filter(|dir| !dir.as_os_str().is_empty())
            .filter(|dir| matches!(jp_fs::entry(&self.root, dir), Ok(None)))
            .map(Path::to_path_buf)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        self.watched.push(Watched {
            rel: rel.to_path_buf(),
            before,
            content,
            missing,
        });
    }

    /// What changed at the watched paths since they were watched, for
    /// call `call_id`.
    #[must_use]
    pub fn finish(&self, call_id: &str) -> Vec<Captured> {
        self.watched
            .iter()
            .filter_map(|watched| {
                let (after, _) = look(&self.root, &watched.rel, self.limit);
                if after == watched.before {
                    return None;
                }
                let made_dirs = watched
                    .missing
                    .iter()
                    .filter(|dir| {
                        matches!(
                            jp_fs::entry(&self.root, dir),
                            Ok(Some(jp_fs::Entry {
                                kind: jp_fs::FileKind::Directory,
                                ..
                            }))
                        )
                    })
                    .map(|dir| slashed(dir))
                    .collect();
                let before = match &watched.before {
                    FileState::File { .. } => watched.content.clone().map(Content::Bytes),
                    _ => None,
                };
                Some(Captured {
                    change: FileChange {
                        call_id: call_id.to_owned(),
                        path: slashed(&watched.rel),
                        before: watched.before.clone(),
                        after,
                        made_dirs,
                    },
                    before,
                })
            })
            .collect()
    }
}

/// `rel` with `/` between its components, as the conversation records
/// paths.
#[must_use]
pub fn slashed(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The SHA-256 of `bytes`, in lowercase hex.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::seal::hex(&Sha256::digest(bytes))
}

/// What is at `rel` now, and (for a regular file of at most `limit`
/// bytes) its content.
#[must_use]
pub fn look(root: &Path, rel: &Path, limit: u64) -> (FileState, Option<Arc<[u8]>>) {
    let unkept = |size: u64, mode: u32, reason: String| FileState::Unkept {
        bytes: size,
        mode,
        reason,
    };
    let entry = match jp_fs::entry(root, rel) {
        Ok(None) => return (FileState::Absent, None),
        Ok(Some(entry)) => entry,
        Err(e) => return (unkept(0, 0, jp_fs::io_reason(&e)), None),
    };
    match entry.kind {
        jp_fs::FileKind::Link => match jp_fs::read_link(root, rel) {
            Ok(target) => (
                FileState::Link {
                    target: target.to_string_lossy().into_owned(),
                },
                None,
            ),
            Err(e) => (unkept(0, 0, jp_fs::io_reason(&e)), None),
        },
        jp_fs::FileKind::Regular if entry.size > limit => (
            unkept(
                entry.size,
                entry.mode,
                format!("larger than {limit} bytes (`conversation.undo.max_file_bytes`)"),
            ),
            None,
        ),
        jp_fs::FileKind::Regular => match jp_fs::read(root, rel, limit) {
            Ok(bytes) => (
                FileState::File {
                    sha256: sha256_hex(&bytes),
                    bytes: bytes.len() as u64,
                    mode: entry.mode,
                },
                Some(bytes.into()),
            ),
            Err(e) => (unkept(entry.size, entry.mode, jp_fs::io_reason(&e)), None),
        },
        jp_fs::FileKind::Directory => (FileState::Dir { mode: entry.mode }, None),
        kind => (
            unkept(
                entry.size,
                entry.mode,
                format!("it is {}", kind.described()),
            ),
            None,
        ),
    }
}

#[cfg(test)]
#[path = "undo_tests.rs"]
mod tests;
