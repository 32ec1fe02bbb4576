//! Writing files whole or not at all: the content goes to a temporary file
//! in the same directory, which then takes the target's place in one step,
//! so a crash or a full disk never leaves a half-written file behind. The
//! file tools use it, and so does `jp config set`.

use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, Write as _};
use std::path::Path;

use tempfile::NamedTempFile;

/// Creates `path` with `content`, failing with
/// [`io::ErrorKind::AlreadyExists`] if something is there (even if it
/// appears while the content is written). The parent directory must exist.
///
/// # Errors
///
/// When something is at `path`, or the file cannot be written.
pub fn create_new(path: &Path, content: &[u8]) -> io::Result<()> {
    let temp = write_temp(path, content)?;
    // Never replaces an existing file, unlike a rename: `renameat2` with
    // `RENAME_NOREPLACE`, or a hard link, where the system has them.
    match temp.persist_noclobber(path) {
        Ok(_) => {
            sync_parent(path);
            Ok(())
        }
        Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => Err(e.error),
        // A file system without either: check, then rename.
        Err(e) => {
            if std::fs::symlink_metadata(path).is_ok() {
                return Err(io::Error::from(io::ErrorKind::AlreadyExists));
            }
            persist(e.file, path)
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
    let temp = write_temp(path, content)?;
    temp.as_file().set_permissions(permissions)?;
    persist(temp, path)
}

/// Writes `content` to a new temporary file beside `target`
/// (`.NAME.jp-XXXXXX.tmp`, created exclusively, removed when dropped unless
/// persisted) and syncs it to disk. It is created with the permissions any
/// new file gets (`0o666` less the umask), not `tempfile`'s private
/// `0o600`, since it becomes the user's file.
///
/// It is opened for writing only: in a sandbox whose workspace lies on the
/// way to a denied path (docs/sandbox.md), a file the tool makes in a new
/// directory can be written but not read, and `tempfile`'s read-write open
/// failed there after creating the file, leaving it behind.
fn write_temp(target: &Path, content: &[u8]) -> io::Result<NamedTempFile> {
    let dir = target.parent().unwrap_or_else(|| Path::new("."));
    let name = target
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy());
    let prefix = format!(".{name}.jp-");
    let mut temp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .make_in(dir, |path| {
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o666);
            options.open(path)
        })?;
    temp.write_all(content)?;
    temp.as_file().sync_all()?;
    Ok(temp)
}

/// Moves the temporary file onto `target` (the temporary file is removed if
/// that fails).
fn persist(temp: NamedTempFile, target: &Path) -> io::Result<()> {
    temp.persist(target).map_err(|e| e.error)?;
    sync_parent(target);
    Ok(())
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
