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
//! what the workspace's `.gitignore` files ignore, as they were before the
//! call (build output such as `target/`): a command that edits or removes
//! a `.gitignore` changes nothing about what is looked at after it, so a
//! file that was ignored is never taken for one it made. A workspace with
//! more files, or more bytes to keep, than the budget is not looked at:
//! the call's changes are then not kept, and the conversation says so.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use jp_conversation::{FileChange, FileState};
use serde::{Deserialize, Serialize};

use super::undo::{Captured, Content, look};

/// How much of a workspace jp looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The most files (and directories) it walks, and the most a call
    /// may change.
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

/// The cache's index.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Index {
    /// `max_file_bytes` when it was written: an index written with
    /// another limit is not used.
    max_file_bytes: u64,
    /// When it was written: an entry changed in the same tick as its look
    /// may show the same `lstat` with other content, so an entry whose
    /// times are this recent is read again.
    written_ns: i128,
    /// Each path (relative, with `/`) as last seen.
    entries: BTreeMap<String, Indexed>,
}

/// The `.gitignore` rules of the workspace, by the directory holding
/// them.
#[derive(Debug, Clone, Default)]
struct Rules(HashMap<PathBuf, Gitignore>);

impl Rules {
    /// Whether `path` (under `dir`, a directory of the workspace at `root`)
    /// is ignored: the rules nearest to it decide, as git reads them.
    fn ignores(&self, root: &Path, dir: &Path, path: &Path, is_dir: bool) -> bool {
        for holder in dir.ancestors() {
            if let Some(rules) = self.0.get(holder) {
                match rules.matched(path, is_dir) {
                    ignore::Match::Ignore(_) => return true,
                    ignore::Match::Whitelist(_) => return false,
                    ignore::Match::None => {}
                }
            }
            if holder == root {
                break;
            }
        }
        false
    }

    /// Reads `dir`'s `.gitignore`, when it has one that is a regular file.
    fn learn(&mut self, dir: &Path) {
        let file = dir.join(".gitignore");
        if std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()) {
            let mut builder = GitignoreBuilder::new(dir);
            if builder.add(&file).is_none()
                && let Ok(rules) = builder.build()
            {
                self.0.insert(dir.to_path_buf(), rules);
            }
        }
    }
}

/// The workspace as it was before a call: kept in the cache, which stays
/// locked (no other jp changes it) until this is dropped.
#[derive(Debug)]
pub struct Snapshot {
    root: PathBuf,
    cache: PathBuf,
    budget: Budget,
    before: BTreeMap<String, Indexed>,
    rules: Rules,
    _lock: File,
}

/// The bytes of the index file at most.
const MAX_INDEX_BYTES: u64 = 256 << 20;

/// How recent (in nanoseconds before the index was written) a change is
/// that the index does not trust.
const RACY_NS: i128 = 2_000_000_000;

impl Snapshot {
    /// Looks at the workspace at `root` before a call, keeping what
    /// changed since the last look in the cache at `cache`.
    ///
    /// # Errors
    ///
    /// Why the call's changes cannot be kept: the workspace is over the
    /// budget, another jp is using the cache, or the cache cannot be used.
    pub fn take(root: &Path, cache: &Path, budget: Budget) -> Result<Self, String> {
        let cannot = |what: &str, e: &std::io::Error| {
            format!(
                "jp cannot use its undo cache {}: {what}: {}",
                cache.display(),
                jp_fs::io_reason(e)
            )
        };
        std::fs::create_dir_all(cache.join("blobs")).map_err(|e| cannot("create", &e))?;
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(cache.join("lock"))
            .map_err(|e| cannot("open its lock", &e))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(
                    "another jp is keeping a command's changes in this workspace right now".into(),
                );
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(cannot("lock", &e)),
        }
        let old = read_index(&cache.join("index"), budget.max_file_bytes);
        let mut rules = Rules::default();
        let stats = walk(root, cache, budget.max_files, &mut rules, &|_| true)?;
        let mut kept_bytes = 0u64;
        let mut index = Index {
            max_file_bytes: budget.max_file_bytes,
            written_ns: now_ns(),
            entries: BTreeMap::new(),
        };
        let mut over = None;
        for (path, stat) in stats {
            let known = old.entries.get(&path).filter(|indexed| {
                indexed.stat == stat
                    && stat.mtime_ns.max(stat.ctime_ns) < old.written_ns - RACY_NS
                    && blob_is_there(cache, &indexed.state)
            });
            let state = match known {
                Some(indexed) => indexed.state.clone(),
                None => {
                    let (state, content) = look(root, Path::new(&path), budget.max_file_bytes);
                    if let (FileState::File { sha256, .. }, Some(content)) = (&state, content) {
                        keep_blob(cache, sha256, &content).map_err(|e| cannot("write", &e))?;
                    }
                    state
                }
            };
            if let FileState::File { bytes, .. } = &state {
                kept_bytes = kept_bytes.saturating_add(*bytes);
            }
            index.entries.insert(path, Indexed { stat, state });
            if kept_bytes > budget.max_bytes {
                over = Some(format!(
                    "the workspace holds more than {} to keep (`conversation.undo.max_bytes`)",
                    crate::conversation::human_bytes(
                        usize::try_from(budget.max_bytes).unwrap_or(usize::MAX)
                    )
                ));
                break;
            }
        }
        // Kept even when over the budget, so the next call does not read
        // again what this one read.
        write_index(&cache.join("index"), &index).map_err(|e| cannot("write its index", &e))?;
        if let Some(over) = over {
            return Err(over);
        }
        collect_garbage(cache, &index.entries);
        Ok(Self {
            root: root.to_path_buf(),
            cache: cache.to_path_buf(),
            budget,
            before: index.entries,
            rules,
            _lock: lock,
        })
    }

    /// What changed since [`Self::take`], for call `call_id`: each path
    /// whose state differs, with its content before (a cached blob).
    ///
    /// # Errors
    ///
    /// Why the changes are not kept: more paths changed than the budget's
    /// `max_files`, or the workspace could not be looked at.
    pub fn changes(&self, call_id: &str) -> Result<Vec<Captured>, String> {
        // The rules as they were before, and those of directories the call
        // made (what it made and ignores itself is not its change to keep).
        let mut rules = self.rules.clone();
        let before = &self.before;
        let after = walk(&self.root, &self.cache, usize::MAX, &mut rules, &|rel| {
            !rel.is_empty() && !before.contains_key(rel)
        })?;
        let paths: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
        let mut out = Vec::new();
        for path in paths {
            let was = before.get(path);
            let now = after.get(path);
            if let (Some(was), Some(now)) = (was, now)
                && was.stat == *now
            {
                continue;
            }
            let before_state = was.map_or(FileState::Absent, |b| b.state.clone());
            // A path the walk no longer reaches is looked at itself.
            let after_state = look(&self.root, Path::new(path), self.budget.max_file_bytes).0;
            if after_state == before_state {
                continue;
            }
            if out.len() >= self.budget.max_files {
                return Err(format!(
                    "it changed more than {} files (`conversation.undo.max_files`)",
                    self.budget.max_files
                ));
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
        Ok(out)
    }
}

fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
}

/// Whether the cache holds the content `state` names (an age-based
/// cleaner may have removed it).
fn blob_is_there(cache: &Path, state: &FileState) -> bool {
    match state {
        FileState::File { sha256, bytes, .. } => {
            std::fs::metadata(cache.join("blobs").join(sha256))
                .is_ok_and(|meta| meta.len() == *bytes)
        }
        _ => true,
    }
}

/// Each entry of the workspace at `root` jp looks at, by relative path
/// (with `/`), with its `lstat`: not `.git`, `.jp/conversations`, the
/// cache, or what `rules` ignore. `learn` says of a directory (relative)
/// whether its `.gitignore` is read into `rules`. More than `max` entries,
/// or a name that is not UTF-8 (jp could not record it), is an error.
fn walk(
    root: &Path,
    cache: &Path,
    max: usize,
    rules: &mut Rules,
    learn: &dyn Fn(&str) -> bool,
) -> Result<BTreeMap<String, Stat>, String> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let rel_dir = dir.strip_prefix(root).unwrap_or(&dir);
        if learn(&super::undo::slashed(rel_dir)) {
            rules.learn(&dir);
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            if entry.file_name() == ".git"
                || rel == Path::new(".jp/conversations")
                || path.starts_with(cache)
            {
                continue;
            }
            let Some(name) = rel.to_str() else {
                return Err(format!(
                    "the workspace holds a name that is not UTF-8 ({}), which jp cannot record",
                    rel.display()
                ));
            };
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if rules.ignores(root, &dir, &path, meta.is_dir()) {
                continue;
            }
            if out.len() >= max {
                return Err(format!(
                    "the workspace has more than {max} files (`conversation.undo.max_files`)"
                ));
            }
            if meta.is_dir() {
                dirs.push(path.clone());
            }
            out.insert(
                name.replace(std::path::MAIN_SEPARATOR, "/"),
                Stat::of(&meta),
            );
        }
    }
    Ok(out)
}

/// Keeps `content` in the cache as blob `sha256`, unless it is there
/// whole.
fn keep_blob(cache: &Path, sha256: &str, content: &Arc<[u8]>) -> std::io::Result<()> {
    let path = cache.join("blobs").join(sha256);
    if std::fs::metadata(&path).is_ok_and(|meta| meta.len() == content.len() as u64) {
        return Ok(());
    }
    let tmp = cache
        .join("blobs")
        .join(format!(".{sha256}.{}", std::process::id()));
    std::fs::write(&tmp, content)?;
    std::fs::rename(&tmp, &path)
}

/// The index at `path`, if it was written with `max_file_bytes`; empty
/// when there is none or it does not read.
fn read_index(path: &Path, max_file_bytes: u64) -> Index {
    let Ok(file) = File::open(path) else {
        return Index::default();
    };
    let mut text = String::new();
    let read =
        std::io::Read::read_to_string(&mut std::io::Read::take(file, MAX_INDEX_BYTES), &mut text);
    read.ok()
        .and_then(|_| serde_json::from_str::<Index>(&text).ok())
        .filter(|index| index.max_file_bytes == max_file_bytes)
        .unwrap_or_default()
}

fn write_index(path: &Path, index: &Index) -> std::io::Result<()> {
    let text = serde_json::to_vec(index).map_err(std::io::Error::other)?;
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Removes the cached blobs `entries` do not name: what the workspace no
/// longer holds (a call's changes were copied into its conversation by
/// then, under the same lock).
fn collect_garbage(cache: &Path, entries: &BTreeMap<String, Indexed>) {
    let live: BTreeSet<&str> = entries
        .values()
        .filter_map(|indexed| match &indexed.state {
            FileState::File { sha256, .. } => Some(sha256.as_str()),
            _ => None,
        })
        .collect();
    let Ok(blobs) = std::fs::read_dir(cache.join("blobs")) else {
        return;
    };
    for blob in blobs.flatten() {
        let name = blob.file_name();
        if !live.contains(name.to_string_lossy().as_ref()) {
            let _ = std::fs::remove_file(blob.path());
        }
    }
}

/// The undo cache of the workspace at `root`, in the user's cache
/// directory: `$XDG_CACHE_HOME/jp/workspaces/DIGEST/undo` (or under
/// `~/.cache`); `None` without either.
#[must_use]
pub fn cache_dir(root: &Path) -> Option<PathBuf> {
    crate::ctx::user_workspace_dir("XDG_CACHE_HOME", ".cache", root).map(|dir| dir.join("undo"))
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
