//! Durable writes: whole files replaced atomically, and directory entries
//! synced.

use std::fs::{self, File};
use std::io::Write as _;
use std::path::Path;

use super::error::{StoreError, io_error};

/// Syncs directory `dir`, so that an entry created, renamed or removed in
/// it survives a crash (best effort: not every platform can).
pub(super) fn sync_dir(dir: &Path) {
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
}

/// Replaces `path` with `bytes`: temp file, sync, rename, sync the
/// directory.
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        // Make the rename itself durable.
        sync_dir(dir);
        Ok(())
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io_error("cannot write", path)(e)
    })
}
