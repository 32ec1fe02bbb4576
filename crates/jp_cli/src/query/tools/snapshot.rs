//! What a command changed in the workspace (issue 38): for a local tool
//! whose sandbox confines its writes to the workspace (and its own
//! TMPDIR, removed after it), jp looks at the whole workspace before the
//! call and after it, and keeps each file the call changed as it was.
//!
//! Reading every file before every command would be slow, so jp keeps a
//! cache of the workspace's content outside it (in the user's cache
//! directory, where a sandboxed command cannot write): an index of each
//! file's `lstat` (size, mode, times, inode) and its content by SHA-256.
//! Before a call, only files whose `lstat` changed since the last look are
//! read again; after it, only files whose `lstat` changed are read, and
//! each one that differs is a [`Captured`] change whose content before is
//! the cached blob.
//!
//! What is left out: `.git` (git's own state), `.jp/conversations`, and
//! what the workspace's `.gitignore` files ignore (build output such as
//! `target/` or `node_modules/`); a command's changes there are not kept.
//! A workspace with more files, or more bytes to keep, than the budget is
//! not looked at: the call's changes are then not kept, and the
//! conversation says so.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jp_conversation::{FileChange, FileState};
use serde::{Deserialize, Serialize};

use super::undo::{Captured, Content, look};

/// How much of a workspace jp looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The most files (and directories) it walks.
    pub max_files: usize,
    /// The most bytes of content it keeps.
    pub max_bytes: u64,
    /// Files larger than this are listed as changed, not kept.
    pub max_file_bytes: u64,
}

/// What `lstat` says of an entry: when it is the same, its content is
/// taken to be the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stat {
    dir: bool,
    link: bool,
    size: u64,
    mode: u32,
    mtime_ns: i128,
    ctime_ns: i128,
    ino: u64,
}

impl Stat {
    fn of(meta: &std::fs::Metadata) -> Self {
        let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
        Self {
            dir: meta.is_dir(),
            link: meta.file_type().is_symlink(),
            size: meta.len(),
            mode: meta.mode() & 0o7777,
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
        }
    }
}

/// One entry of the cache's index: its `lstat` then, and what it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Indexed {
    stat: Stat,
    state: FileState,
}

/// The cache's index: each path (relative, with `/`) as last seen.
type Index = BTreeMap<String, Indexed>;

/// The workspace as it was before a call: kept in the cache, and locked
/// so that no other jp changes the cache until [`Self::finish`].
#[derive(Debug)]
pub struct Snapshot {
    root: PathBuf,
    cache: PathBuf,
    budget: Budget,
    before: Index,
    _lock: File,
}

/// The bytes of the index file at most (one line per path, a few hundred
/// bytes each).
const MAX_INDEX_BYTES: u64 = 256 << 20;

impl Snapshot {
    /// Looks at the workspace at `root` before a call, keeping what
    /// changed since the last look in the cache at `cache`.
    ///
    /// # Errors
    ///
    /// Why the call's changes cannot be kept: the workspace is over the
    /// budget, or the cache cannot be used.
    pub fn take(root: &Path, cache: &Path, budget: Budget) -> Result<Self, String> {
        let cannot = |what: &str, e: std::io::Error| {
            format!(
                "jp cannot use its undo cache {}: {what}: {e}",
                cache.display()
            )
        };
        std::fs::create_dir_all(cache.join("blobs")).map_err(|e| cannot("create", e))?;
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(cache.join("lock"))
            .map_err(|e| cannot("open its lock", e))?;
        lock.lock().map_err(|e| cannot("lock", e))?;
        let old = read_index(&cache.join("index"));
        let stats = walk(root, cache, budget.max_files)?;
        let mut kept_bytes = 0u64;
        let mut before = Index::new();
        for (path, stat) in stats {
            let state = match old.get(&path) {
                Some(indexed) if indexed.stat == stat => indexed.state.clone(),
                _ => {
                    let (state, content) = look(root, Path::new(&path), budget.max_file_bytes);
                    if let (FileState::File { sha256, .. }, Some(content)) = (&state, content) {
                        keep_blob(cache, sha256, &content).map_err(|e| cannot("write", e))?;
                    }
                    state
                }
            };
            if let FileState::File { bytes, .. } = &state {
                kept_bytes = kept_bytes.saturating_add(*bytes);
                if kept_bytes > budget.max_bytes {
                    return Err(format!(
                        "the workspace holds more than {} to keep (`conversation.undo.max_bytes`)",
                        crate::conversation::human_bytes(
                            usize::try_from(budget.max_bytes).unwrap_or(usize::MAX)
                        )
                    ));
                }
            }
            before.insert(path, Indexed { stat, state });
        }
        write_index(&cache.join("index"), &before).map_err(|e| cannot("write its index", e))?;
        collect_garbage(cache, &before);
        Ok(Self {
            root: root.to_path_buf(),
            cache: cache.to_path_buf(),
            budget,
            before,
            _lock: lock,
        })
    }

    /// What changed since [`Self::take`], for call `call_id`: each path
    /// whose state differs, with its content before (a cached blob).
    #[must_use]
    pub fn finish(self, call_id: &str) -> Vec<Captured> {
        let after = match walk(&self.root, &self.cache, usize::MAX) {
            Ok(after) => after,
            Err(e) => {
                tracing::warn!("cannot look at the workspace after a call: {e}");
                BTreeMap::new()
            }
        };
        let paths: BTreeSet<&String> = self.before.keys().chain(after.keys()).collect();
        let mut out = Vec::new();
        for path in paths {
            let before = self.before.get(path);
            let now = after.get(path);
            if let (Some(before), Some(now)) = (before, now)
                && before.stat == *now
            {
                continue;
            }
            let before_state = before.map_or(FileState::Absent, |b| b.state.clone());
            let after_state = match now {
                None => FileState::Absent,
                Some(_) => look(&self.root, Path::new(path), self.budget.max_file_bytes).0,
            };
            if after_state == before_state {
                continue;
            }
            let content = match &before_state {
                FileState::File { sha256, .. } => {
                    Some(Content::Blob(self.cache.join("blobs").join(sha256)))
                }
                _ => None,
            };
            out.push(Captured {
                change: FileChange {
                    call_id: call_id.to_owned(),
                    path: path.clone(),
                    before: before_state,
                    after: after_state,
                    made_dirs: Vec::new(),
                },
                before: content,
            });
        }
        out
    }
}

/// Each entry of the workspace at `root` jp looks at, by relative path
/// (with `/`), with its `lstat`: not `.git`, `.jp/conversations`, the
/// cache, or what `.gitignore` files ignore. More than `max` entries is
/// an error.
fn walk(root: &Path, cache: &Path, max: usize) -> Result<BTreeMap<String, Stat>, String> {
    let skip_root = root.to_path_buf();
    let cache = cache.to_path_buf();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .git_global(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            let path = entry.path();
            let rel = path.strip_prefix(&skip_root).unwrap_or(path);
            entry.file_name() != ".git"
                && rel != Path::new(".jp/conversations")
                && !path.starts_with(&cache)
        })
        .build();
    let mut out = BTreeMap::new();
    for entry in walker {
        let Ok(entry) = entry else { continue };
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if out.len() >= max {
            return Err(format!(
                "the workspace has more than {max} files (`conversation.undo.max_files`)"
            ));
        }
        out.insert(super::undo::slashed(rel), Stat::of(&meta));
    }
    Ok(out)
}

/// Keeps `content` in the cache as blob `sha256`, unless it is there.
fn keep_blob(cache: &Path, sha256: &str, content: &Arc<[u8]>) -> std::io::Result<()> {
    let path = cache.join("blobs").join(sha256);
    if path.is_file() {
        return Ok(());
    }
    let tmp = cache
        .join("blobs")
        .join(format!(".{sha256}.{}", std::process::id()));
    std::fs::write(&tmp, content)?;
    std::fs::rename(&tmp, &path)
}

/// The index at `path`; empty when there is none or it does not read.
fn read_index(path: &Path) -> Index {
    let Ok(file) = File::open(path) else {
        return Index::new();
    };
    let mut text = String::new();
    let read =
        std::io::Read::read_to_string(&mut std::io::Read::take(file, MAX_INDEX_BYTES), &mut text);
    read.ok()
        .and_then(|_| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn write_index(path: &Path, index: &Index) -> std::io::Result<()> {
    let text = serde_json::to_vec(index).map_err(std::io::Error::other)?;
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Removes the cached blobs `index` does not name: what the workspace no
/// longer holds (a call's changes were copied into its conversation by
/// then).
fn collect_garbage(cache: &Path, index: &Index) {
    let live: BTreeSet<&str> = index
        .values()
        .filter_map(|indexed| match &indexed.state {
            FileState::File { sha256, .. } => Some(sha256.as_str()),
            _ => None,
        })
        .collect();
    let Ok(entries) = std::fs::read_dir(cache.join("blobs")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !live.contains(name.to_string_lossy().as_ref()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The user's cache directory for the workspace whose ledger digest is
/// `digest`: `$XDG_CACHE_HOME/jp/workspaces/DIGEST/undo` (or under
/// `~/.cache`); `None` without either.
#[must_use]
pub fn cache_dir(env: &[(String, String)], digest: &str) -> Option<PathBuf> {
    let var = |name: &str| {
        env.iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| PathBuf::from(v))
    };
    let base = var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|home| home.join(".cache")))?;
    Some(base.join("jp").join("workspaces").join(digest).join("undo"))
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
