//! Writing files whole or not at all: the content goes to a temporary file
//! in the same directory, which then takes the target's place in one step,
//! so a crash or a full disk never leaves a half-written file behind. The
//! file tools use it, and so does `jp config set`.

use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Creates `path` with `content`, failing with
/// [`io::ErrorKind::AlreadyExists`] if something is there (even if it
/// appears while the content is written). The parent directory must exist.
///
/// # Errors
///
/// When something is at `path`, or the file cannot be written.
pub fn create_new(path: &Path, content: &[u8]) -> io::Result<()> {
    let temp = TempFile::write(path, content)?;
    // A hard link never replaces an existing file, unlike a rename.
    match std::fs::hard_link(&temp.path, path) {
        Ok(()) => {
            drop(temp);
            sync_parent(path);
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(e),
        // A file system without hard links: check, then rename.
        Err(_) => {
            if std::fs::symlink_metadata(path).is_ok() {
                return Err(io::Error::from(io::ErrorKind::AlreadyExists));
            }
            temp.persist(path)
        }
    }
}

/// Replaces the file at `path` with `content`, giving the new file
/// `permissions` (those of the file it replaces).
///
/// # Errors
///
/// When the file cannot be written or renamed into place.
pub fn replace(path: &Path, content: &[u8], permissions: Permissions) -> io::Result<()> {
    let temp = TempFile::write(path, content)?;
    std::fs::set_permissions(&temp.path, permissions)?;
    temp.persist(path)
}

/// A temporary file next to its target, removed unless persisted.
struct TempFile {
    path: PathBuf,
    persisted: bool,
}

impl TempFile {
    /// Writes `content` to a new temporary file beside `target` and syncs
    /// it to disk.
    fn write(target: &Path, content: &[u8]) -> io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let dir = target.parent().unwrap_or_else(|| Path::new("."));
        let name = target
            .file_name()
            .map_or_else(|| "file".into(), |n| n.to_string_lossy());
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!(".{name}.jp-{}-{n}.tmp", std::process::id()));
            let mut file = match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            };
            let temp = Self {
                path,
                persisted: false,
            };
            file.write_all(content)?;
            file.sync_all()?;
            return Ok(temp);
        }
    }

    /// Moves the temporary file onto `target`.
    fn persist(mut self, target: &Path) -> io::Result<()> {
        std::fs::rename(&self.path, target)?;
        self.persisted = true;
        sync_parent(target);
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Makes a new directory entry durable, where the platform allows it.
fn sync_parent(path: &Path) {
    if cfg!(unix)
        && let Some(dir) = path.parent()
        && let Ok(dir) = File::open(dir)
    {
        let _ = dir.sync_all();
    }
}

#[cfg(test)]
#[path = "atomic_tests.rs"]
mod tests;
