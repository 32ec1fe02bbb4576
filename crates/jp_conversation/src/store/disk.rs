//! Where the store's files are, and durable writes: whole files replaced
//! atomically, and directory entries synced.
//!
//! Every file is opened through [`jp_fs`] from the workspace root: no
//! link below it is followed (a repository can commit links under `.jp/`),
//! nothing but a regular file is opened, and reads are bounded.

use std::path::{Path, PathBuf};

use super::error::{StoreError, io_error};

/// A file or directory of the store: the workspace root it is opened from
/// and its path below it.
#[derive(Debug, Clone)]
pub(super) struct Kept {
    base: PathBuf,
    rel: PathBuf,
}

impl Kept {
    pub fn new(base: &Path, rel: PathBuf) -> Self {
        Self {
            base: base.to_path_buf(),
            rel,
        }
    }

    /// The workspace root.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The path below the workspace root.
    pub fn rel(&self) -> &Path {
        &self.rel
    }

    /// The whole path, for messages.
    pub fn path(&self) -> PathBuf {
        self.base.join(&self.rel)
    }

    /// `name` in this directory.
    pub fn join(&self, name: &str) -> Self {
        Self {
            base: self.base.clone(),
            rel: self.rel.join(name),
        }
    }
}

/// Syncs directory `dir`, so that an entry created, renamed or removed in
/// it survives a crash (best effort: not every platform can).
pub(super) fn sync_dir(dir: &Kept) {
    jp_fs::sync_dir(dir.base(), dir.rel());
}

/// Replaces `file` with `bytes`: temporary file (created new, so a link
/// planted at its name is never written through), sync, rename, sync the
/// directory.
pub(super) fn write_atomic(file: &Kept, bytes: &[u8]) -> Result<(), StoreError> {
    jp_fs::write_atomic(file.base(), file.rel(), bytes)
        .map_err(io_error("cannot write", &file.path()))
}
