//! Format version 1: one `conversation.json` per conversation, holding its
//! metadata and every event, replaced whole on every write. jp reads it
//! still (a reader without the lock reads it as it is) and converts it to
//! the log once, under the lock ([`migrate`]).

use std::fs;
use std::io;

use serde::Deserialize;

use super::MAX_STORED_BYTES;
use super::disk::{Kept, sync_dir, write_atomic};
use super::error::{StoreError, io_error};
use super::log::{self, Header};
use crate::conversation::ConversationEvent;

/// The file name of a version 1 conversation.
pub(super) const V1_NAME: &str = "conversation.json";

/// A version 1 file.
#[derive(Deserialize)]
pub(super) struct V1File {
    version: u32,
    pub id: String,
    pub created_ms: u64,
    #[serde(default)]
    pub title: Option<String>,
    pub events: Vec<ConversationEvent>,
}

/// Reads the version 1 conversation `file`, stored as `id`: a regular
/// file reached through no link, of at most [`MAX_STORED_BYTES`].
pub(super) fn read(file: &Kept, id: &str) -> Result<Option<V1File>, StoreError> {
    let path = &file.path();
    let text = match jp_fs::read(file.base(), file.rel(), MAX_STORED_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error("cannot read", path)(e)),
    };
    // The file holds the events two levels down.
    let limit = log::MAX_LINE_DEPTH + 2;
    if log::nesting(&text, limit) > limit {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            message: format!("it nests deeper than {limit} levels, more than jp writes"),
        });
    }
    let file: V1File = log::from_checked_slice(&text).map_err(|e| StoreError::Corrupt {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if file.id != id {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            message: format!(
                "it says its id is `{}`, but it is stored as `{id}`",
                file.id
            ),
        });
    }
    if file.version != 1 {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            message: format!(
                "format version {} is not version 1, the only one a `{V1_NAME}` holds",
                file.version
            ),
        });
    }
    Ok(Some(file))
}

/// Converts the version 1 conversation in `dir` (stored as `id`) to a log,
/// for the holder of its lock. Returns whether there was one.
///
/// The log is written whole to a temporary file, synced and renamed into
/// place, and only then is `conversation.json` removed: a crash before the
/// rename leaves version 1 (and a temporary file the next migration
/// removes), a crash after it leaves both files, and the log, being
/// complete, is what both readers and the next writer use.
pub(super) fn migrate(dir: &Kept, id: &str) -> Result<bool, StoreError> {
    let old = dir.join(V1_NAME);
    let new = dir.join(log::LOG_NAME);
    remove_stale_temporaries(dir)?;
    if jp_fs::is_file(new.base(), new.rel()) {
        // A migration that stopped after its rename: finish it.
        if jp_fs::is_file(old.base(), old.rel()) {
            remove(&old)?;
            sync_dir(dir);
        }
        return Ok(false);
    }
    let Some(conversation) = read(&old, id)? else {
        return Ok(false);
    };
    let header = Header::new(id, conversation.created_ms, conversation.title);
    let serialize = |e: serde_json::Error| StoreError::Io {
        action: "cannot serialize",
        path: new.path(),
        source: io::Error::other(e),
    };
    let mut bytes = log::encode_header(&header).map_err(serialize)?;
    for event in &conversation.events {
        log::encode_event(&mut bytes, event).map_err(serialize)?;
    }
    write_atomic(&new, &bytes)?;
    remove(&old)?;
    sync_dir(dir);
    Ok(true)
}

/// Removes the entry `file` (a link itself, never what it names).
fn remove(file: &Kept) -> Result<(), StoreError> {
    jp_fs::remove_file(file.base(), file.rel()).map_err(io_error("cannot remove", &file.path()))
}

/// Temporary files a write that crashed left in `dir` (only the lock
/// holder writes, so none of them is in use).
/// The directory was reached through no link when its lock was taken.
fn remove_stale_temporaries(dir: &Kept) -> Result<(), StoreError> {
    let path = &dir.path();
    let entries = fs::read_dir(path).map_err(io_error("cannot list", path))?;
    for entry in entries {
        let entry = entry.map_err(io_error("cannot list", path))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with(&format!(".{}.", log::LOG_NAME)) && name.ends_with(".tmp") {
            remove(&dir.join(name))?;
        }
    }
    Ok(())
}
