//! What resolving a path reads of the file system ([`Links`]): one entry at
//! a time, a link's target without following it. Behind a trait so that
//! what decides a call (the policies, and jp's per-call machine around
//! them) is tested without a disk: [`Disk`] is the real file system,
//! [`Memory`] one held in memory.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io;
use std::path::{Path, PathBuf};

/// One entry of the file system, as path resolution sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A symbolic link, and what it points to (not followed).
    Link(PathBuf),
    /// Anything else that exists: a file, a directory, a device.
    Other,
}

/// The file system path resolution reads: each entry without following a
/// final link (`lstat`), and a link's target (`readlink`).
pub trait Links: Debug + Send + Sync {
    /// The entry at `path` (absolute, with no `.` or `..`).
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::NotFound`] when nothing is there; any other error
    /// when the entry cannot be inspected (path resolution then fails
    /// closed).
    fn entry(&self, path: &Path) -> io::Result<Entry>;
}

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disk;

impl Links for Disk {
    fn entry(&self, path: &Path) -> io::Result<Entry> {
        let meta = std::fs::symlink_metadata(path)?;
        if meta.file_type().is_symlink() {
            std::fs::read_link(path).map(Entry::Link)
        } else {
            Ok(Entry::Other)
        }
    }
}

/// A file system held in memory: the entries added, and every directory
/// above them; nothing else exists.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    entries: BTreeMap<PathBuf, Entry>,
    /// Entries that cannot be inspected (as without permission).
    hidden: Vec<PathBuf>,
}

impl Memory {
    /// An empty file system (only `/`).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `path` (absolute) as a file or directory, and the directories
    /// above it.
    #[must_use]
    pub fn with_entry(mut self, path: impl AsRef<Path>) -> Self {
        self.add(path.as_ref(), Entry::Other);
        self
    }

    /// Adds `path` (absolute) as a link to `target`, and the directories
    /// above it.
    #[must_use]
    pub fn with_link(mut self, path: impl AsRef<Path>, target: impl AsRef<Path>) -> Self {
        self.add(path.as_ref(), Entry::Link(target.as_ref().to_path_buf()));
        self
    }

    /// Makes `path` a directory whose entries cannot be inspected (as one
    /// without search permission): it is there, what is below it is not
    /// readable.
    #[must_use]
    pub fn with_hidden(mut self, path: impl AsRef<Path>) -> Self {
        self.hidden.push(path.as_ref().to_path_buf());
        self
    }

    fn add(&mut self, path: &Path, entry: Entry) {
        for parent in path.ancestors().skip(1) {
            self.entries
                .entry(parent.to_path_buf())
                .or_insert(Entry::Other);
        }
        self.entries.insert(path.to_path_buf(), entry);
    }
}

impl Links for Memory {
    fn entry(&self, path: &Path) -> io::Result<Entry> {
        if self
            .hidden
            .iter()
            .any(|hidden| path.starts_with(hidden) && path != hidden)
        {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        if path.parent().is_none() {
            return Ok(Entry::Other);
        }
        self.entries
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
}

#[cfg(test)]
#[path = "links_tests.rs"]
mod tests;
