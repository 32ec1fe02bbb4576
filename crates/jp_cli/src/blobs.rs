//! The files a conversation's calls changed, as they were (issue 38):
//! kept by the SHA-256 of their content for `jp conversation rewind`, in
//! the user's data directory (`$XDG_DATA_HOME/jp/workspaces/DIGEST/
//! conversations/ID/blobs/`, or under `~/.local/share`), never in the
//! workspace: a sandboxed command can write anywhere in the workspace, and
//! must not be able to take away what would undo it.
//!
//! A blob is written whole (a temporary file, synced, renamed) before the
//! event naming it is recorded, and checked against its name when read: a
//! blob changed or cut short is an error, never content.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The blobs of one conversation.
#[derive(Debug, Clone)]
pub struct Blobs {
    dir: PathBuf,
}

impl Blobs {
    /// The blobs of conversation `id` of the workspace at `root`; `None`
    /// without a data directory (no `HOME`), or for an id that is not a
    /// plain name.
    #[must_use]
    pub fn of(root: &Path, id: &str) -> Option<Self> {
        let plain = !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !plain {
            return None;
        }
        Some(Self {
            dir: conversations_dir(root)?.join(id).join("blobs"),
        })
    }

    /// Keeps `bytes`, once; its name (the SHA-256 in lowercase hex).
    ///
    /// # Errors
    ///
    /// A sentence saying what could not be written.
    pub fn put(&self, bytes: &[u8]) -> Result<String, String> {
        let sha256 = crate::query::tools::undo::sha256_hex(bytes);
        let path = self.dir.join(&sha256);
        // Kept already, whole (a torn or changed one is written again).
        if std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64)
            && self.get(&sha256, bytes.len() as u64).is_ok()
        {
            return Ok(sha256);
        }
        let cannot = |e: std::io::Error| {
            format!(
                "cannot keep a copy in {}: {}",
                self.dir.display(),
                jp_fs::io_reason(&e)
            )
        };
        std::fs::create_dir_all(&self.dir).map_err(cannot)?;
        let tmp = self
            .dir
            .join(format!(".{sha256}.{}.tmp", std::process::id()));
        let written = (|| {
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(bytes)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map_err(cannot)?;
        Ok(sha256)
    }

    /// Blob `sha256`, at most `limit` bytes, checked against its name.
    ///
    /// # Errors
    ///
    /// A sentence saying why it cannot be used: missing, unreadable, or not
    /// what its name says.
    pub fn get(&self, sha256: &str, limit: u64) -> Result<Vec<u8>, String> {
        let named = sha256.len() == 64
            && sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !named {
            return Err(format!("{sha256:?} is not the SHA-256 of a kept copy"));
        }
        let path = self.dir.join(sha256);
        let file = std::fs::File::open(&path).map_err(|e| {
            format!(
                "its copy {} cannot be read: {}",
                path.display(),
                jp_fs::io_reason(&e)
            )
        })?;
        let bytes = jp_fs::read_file(file, &path, limit).map_err(|e| {
            format!(
                "its copy {} cannot be read: {}",
                path.display(),
                jp_fs::io_reason(&e)
            )
        })?;
        if crate::query::tools::undo::sha256_hex(&bytes) == sha256 {
            Ok(bytes)
        } else {
            Err(format!(
                "its copy {} was changed since it was kept",
                path.display()
            ))
        }
    }
}

/// Where the blobs of the workspace at `root` are kept, by conversation.
fn conversations_dir(root: &Path) -> Option<PathBuf> {
    crate::ctx::user_workspace_dir("XDG_DATA_HOME", ".local/share", root)
        .map(|dir| dir.join("conversations"))
}

/// Removes what conversation `id` of the workspace at `root` kept (when
/// the conversation is removed).
pub fn forget(root: &Path, id: &str) {
    if let Some(blobs) = Blobs::of(root, id)
        && let Some(dir) = blobs.dir.parent()
    {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
#[path = "blobs_tests.rs"]
mod tests;
