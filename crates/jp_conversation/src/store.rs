//! Conversations on disk, under `.jp/conversations/`.
//!
//! Each conversation is a directory named by its id holding
//! `conversation.json` (its metadata and every event). Every write replaces
//! that file atomically: the new content goes to a temporary file in the same
//! directory, is synced, and is renamed over the old one, so a crash or a
//! kill leaves either the old or the new conversation, never a torn one.
//!
//! Two `jp` processes must not write one conversation: a writer holds an
//! exclusive lock on the directory's `lock` file ([`ConversationLock`]) for
//! as long as it may write. The operating system drops the lock when the
//! process dies, so a crash never leaves a conversation locked. Readers do
//! not lock: the rename makes every read see a whole file.
//!
//! The active conversation's id is kept in `.jp/conversations/active`.

use std::fs::{self, File};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::conversation::{ConversationEvent, EventKind, now_ms};

/// The format version written into `conversation.json`.
pub const FORMAT_VERSION: u32 = 1;

const FILE_NAME: &str = "conversation.json";
const LOCK_NAME: &str = "lock";
const ACTIVE_NAME: &str = "active";

/// A conversation: its metadata and events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// The format version.
    pub version: u32,
    /// The id (also the directory name).
    pub id: String,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// A title: the start of the first message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The events, oldest first.
    pub events: Vec<ConversationEvent>,
}

impl Conversation {
    /// The first user message, for titles.
    #[must_use]
    pub fn first_message(&self) -> Option<&str> {
        self.events.iter().find_map(|e| match &e.kind {
            EventKind::ChatRequest { content } => Some(content.as_str()),
            _ => None,
        })
    }

    /// When the last event happened (creation if none did).
    #[must_use]
    pub fn last_activity_ms(&self) -> u64 {
        self.events.last().map_or(self.created_ms, |e| e.at_ms)
    }
}

/// What went wrong with stored conversations.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file operation failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What jp was doing (`cannot read`).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A stored conversation is not readable as one.
    #[error("{} is not a readable conversation: {message}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong and where.
        message: String,
    },
    /// No conversation has this id.
    #[error("no conversation `{0}` (see `jp conversation ls`)")]
    NotFound(String),
    /// Another process holds the conversation's lock.
    #[error(
        "conversation `{id}` is in use by another jp process{}; wait for it to finish",
        holder.as_deref().map(|h| format!(" ({h})")).unwrap_or_default()
    )]
    Locked {
        /// The conversation.
        id: String,
        /// What the lock file says about its holder.
        holder: Option<String>,
    },
    /// An id that cannot name a conversation directory.
    #[error("`{0}` is not a conversation id")]
    BadId(String),
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> StoreError {
    let path = path.to_path_buf();
    move |source| StoreError::Io {
        action,
        path,
        source,
    }
}

/// The conversations of one workspace.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// The store under `workspace_root/.jp/conversations`.
    #[must_use]
    pub fn new(workspace_root: &Path) -> Self {
        Self {
            root: workspace_root.join(".jp").join("conversations"),
        }
    }

    /// The directory holding the conversations.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir(&self, id: &str) -> Result<PathBuf, StoreError> {
        let valid = !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if valid {
            Ok(self.root.join(id))
        } else {
            Err(StoreError::BadId(id.to_owned()))
        }
    }

    /// Creates a new, empty conversation and locks it for writing.
    ///
    /// # Errors
    ///
    /// When the directory cannot be created or locked.
    pub fn create(&self) -> Result<(Conversation, ConversationLock), StoreError> {
        fs::create_dir_all(&self.root).map_err(io_error("cannot create", &self.root))?;
        let created_ms = now_ms();
        // Ids are creation times in milliseconds; two conversations created
        // in one millisecond take the next free number.
        let mut n = created_ms;
        loop {
            let id = n.to_string();
            let dir = self.root.join(&id);
            match fs::create_dir(&dir) {
                Ok(()) => {
                    let lock = self.lock(&id)?;
                    let conversation = Conversation {
                        version: FORMAT_VERSION,
                        id,
                        created_ms,
                        title: None,
                        events: Vec::new(),
                    };
                    lock.save(&conversation)?;
                    return Ok((conversation, lock));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => return Err(io_error("cannot create", &dir)(e)),
            }
        }
    }

    /// Takes the write lock of conversation `id`.
    ///
    /// # Errors
    ///
    /// [`StoreError::Locked`] when another process holds it;
    /// [`StoreError::NotFound`] when there is no such conversation.
    pub fn lock(&self, id: &str) -> Result<ConversationLock, StoreError> {
        let dir = self.dir(id)?;
        if !dir.is_dir() {
            return Err(StoreError::NotFound(id.to_owned()));
        }
        let path = dir.join(LOCK_NAME);
        let mut file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_error("cannot open", &path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                let holder = fs::read_to_string(&path)
                    .ok()
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty());
                return Err(StoreError::Locked {
                    id: id.to_owned(),
                    holder,
                });
            }
            Err(fs::TryLockError::Error(e)) => return Err(io_error("cannot lock", &path)(e)),
        }
        // Say who holds it, for the message another process shows.
        let _ = file.set_len(0);
        let _ = write!(file, "pid {}", std::process::id());
        Ok(ConversationLock {
            _file: file,
            id: id.to_owned(),
            file_path: dir.join(FILE_NAME),
        })
    }

    /// Reads conversation `id`.
    ///
    /// # Errors
    ///
    /// When it does not exist or cannot be read.
    pub fn load(&self, id: &str) -> Result<Conversation, StoreError> {
        let path = self.dir(id)?.join(FILE_NAME);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::NotFound(id.to_owned()));
            }
            Err(e) => return Err(io_error("cannot read", &path)(e)),
        };
        let conversation: Conversation =
            serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                path: path.clone(),
                message: e.to_string(),
            })?;
        if conversation.id != id {
            return Err(StoreError::Corrupt {
                path,
                message: format!(
                    "it says its id is `{}`, but it is stored as `{id}`",
                    conversation.id
                ),
            });
        }
        if conversation.version != FORMAT_VERSION {
            return Err(StoreError::Corrupt {
                path,
                message: format!(
                    "format version {} is not the supported version {FORMAT_VERSION}",
                    conversation.version
                ),
            });
        }
        Ok(conversation)
    }

    /// The ids of every conversation, oldest first.
    ///
    /// # Errors
    ///
    /// When the directory cannot be listed.
    pub fn ids(&self) -> Result<Vec<String>, StoreError> {
        let entries = match fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("cannot list", &self.root)(e)),
        };
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_error("cannot list", &self.root))?;
            if entry.path().join(FILE_NAME).is_file()
                && let Some(id) = entry.file_name().to_str()
                && self.dir(id).is_ok()
            {
                ids.push(id.to_owned());
            }
        }
        // Numeric ids of equal length sort by time; others after, by name.
        ids.sort_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
        Ok(ids)
    }

    /// The active conversation's id, if one is set and still exists.
    #[must_use]
    pub fn active(&self) -> Option<String> {
        let id = fs::read_to_string(self.root.join(ACTIVE_NAME)).ok()?;
        let id = id.trim();
        let dir = self.dir(id).ok()?;
        dir.join(FILE_NAME).is_file().then(|| id.to_owned())
    }

    /// Makes `id` the active conversation.
    ///
    /// # Errors
    ///
    /// When it does not exist or the marker cannot be written.
    pub fn set_active(&self, id: &str) -> Result<(), StoreError> {
        if !self.dir(id)?.join(FILE_NAME).is_file() {
            return Err(StoreError::NotFound(id.to_owned()));
        }
        write_atomic(&self.root.join(ACTIVE_NAME), format!("{id}\n").as_bytes())
    }

    /// Deletes conversation `id` (taking its lock first, so a running
    /// `jp query` is never pulled from under it).
    ///
    /// # Errors
    ///
    /// When it does not exist, is in use, or cannot be removed.
    pub fn remove(&self, id: &str) -> Result<(), StoreError> {
        let lock = self.lock(id)?;
        let dir = self.dir(id)?;
        // Move it out of sight first, so a reader never sees half a
        // directory, then delete.
        let trash = self.root.join(format!(".removing-{id}"));
        // A removal that crashed half-way left this behind; finish it.
        if trash.exists() {
            fs::remove_dir_all(&trash).map_err(io_error("cannot remove", &trash))?;
        }
        fs::rename(&dir, &trash).map_err(io_error("cannot remove", &dir))?;
        drop(lock);
        fs::remove_dir_all(&trash).map_err(io_error("cannot remove", &trash))?;
        if self.active().is_none() {
            let _ = fs::remove_file(self.root.join(ACTIVE_NAME));
        }
        Ok(())
    }
}

/// The right to write one conversation, held until dropped.
#[derive(Debug)]
pub struct ConversationLock {
    _file: File,
    id: String,
    file_path: PathBuf,
}

impl ConversationLock {
    /// The locked conversation's id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Writes `conversation` atomically.
    ///
    /// # Errors
    ///
    /// When it cannot be written; the previous version is then intact.
    pub fn save(&self, conversation: &Conversation) -> Result<(), StoreError> {
        let mut bytes = Vec::with_capacity(4096);
        write_conversation(&mut bytes, conversation).map_err(|e| StoreError::Io {
            action: "cannot serialize",
            path: self.file_path.clone(),
            source: io::Error::other(e),
        })?;
        write_atomic(&self.file_path, &bytes)
    }
}

/// One event per line, so the file reads well and diffs well.
fn write_conversation(out: &mut Vec<u8>, c: &Conversation) -> serde_json::Result<()> {
    out.extend_from_slice(b"{\n");
    out.extend_from_slice(format!("  \"version\": {},\n  \"id\": ", c.version).as_bytes());
    serde_json::to_writer(&mut *out, &c.id)?;
    out.extend_from_slice(format!(",\n  \"created_ms\": {},\n", c.created_ms).as_bytes());
    if let Some(title) = &c.title {
        out.extend_from_slice(b"  \"title\": ");
        serde_json::to_writer(&mut *out, title)?;
        out.extend_from_slice(b",\n");
    }
    out.extend_from_slice(b"  \"events\": [");
    for (i, event) in c.events.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b"\n    " } else { b",\n    " });
        serde_json::to_writer(&mut *out, event)?;
    }
    out.extend_from_slice(if c.events.is_empty() {
        b"]\n}\n"
    } else {
        b"\n  ]\n}\n"
    });
    Ok(())
}

/// Replaces `path` with `bytes`: temp file, sync, rename, sync the
/// directory.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
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
        if let Ok(dir) = File::open(dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io_error("cannot write", path)(e)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn event(content: &str) -> ConversationEvent {
        ConversationEvent {
            at_ms: 7,
            kind: EventKind::ChatRequest {
                content: content.into(),
            },
        }
    }

    #[test]
    fn create_save_load_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let (mut c, lock) = store.create().unwrap();
        c.events.push(event("hi \"there\"\nline two"));
        c.title = Some("hi".into());
        lock.save(&c).unwrap();
        assert_eq!(store.load(&c.id).unwrap(), c);
        assert_eq!(store.ids().unwrap(), vec![c.id.clone()]);
        let text = fs::read_to_string(store.root().join(&c.id).join(FILE_NAME)).unwrap();
        assert_eq!(
            text,
            format!(
                "{{\n  \"version\": 1,\n  \"id\": \"{}\",\n  \"created_ms\": {},\n  \"title\": \"hi\",\n  \"events\": [\n    {{\"at_ms\":7,\"type\":\"chat_request\",\"content\":\"hi \\\"there\\\"\\nline two\"}}\n  ]\n}}\n",
                c.id, c.created_ms
            )
        );
    }

    #[test]
    fn a_second_writer_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let (c, lock) = store.create().unwrap();
        let err = store.lock(&c.id).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "conversation `{}` is in use by another jp process (pid {}); wait for it to finish",
                c.id,
                std::process::id()
            )
        );
        assert_eq!(
            store.remove(&c.id).unwrap_err().to_string(),
            err.to_string()
        );
        drop(lock);
        store.lock(&c.id).unwrap();
    }

    #[test]
    fn ids_are_unique_and_ordered() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let a = store.create().unwrap().0.id;
        let b = store.create().unwrap().0.id;
        let c = store.create().unwrap().0.id;
        assert_eq!(store.ids().unwrap(), vec![a, b, c]);
    }

    #[test]
    fn active_and_remove() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        assert_eq!(store.active(), None);
        let (c, lock) = store.create().unwrap();
        drop(lock);
        store.set_active(&c.id).unwrap();
        assert_eq!(store.active(), Some(c.id.clone()));
        store.remove(&c.id).unwrap();
        assert_eq!(store.active(), None);
        assert!(matches!(store.load(&c.id), Err(StoreError::NotFound(_))));
        assert_eq!(store.ids().unwrap(), Vec::<String>::new());
        assert_eq!(
            store.set_active("../x").unwrap_err().to_string(),
            "`../x` is not a conversation id"
        );
    }

    #[test]
    fn a_failed_save_keeps_the_previous_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let (mut c, lock) = store.create().unwrap();
        c.events.push(event("one"));
        lock.save(&c).unwrap();
        // A directory where the temp file would go makes the write fail.
        let tmp = store
            .root()
            .join(&c.id)
            .join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
        fs::create_dir(&tmp).unwrap();
        c.events.push(event("two"));
        assert!(lock.save(&c).is_err());
        assert_eq!(store.load(&c.id).unwrap().events.len(), 1);
    }

    #[test]
    fn a_file_must_carry_its_own_id() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let (mut c, lock) = store.create().unwrap();
        let real = c.id.clone();
        c.id = "elsewhere".into();
        lock.save(&c).unwrap();
        let path = store.root().join(&real).join(FILE_NAME);
        assert_eq!(
            store.load(&real).unwrap_err().to_string(),
            format!(
                "{} is not a readable conversation: it says its id is `elsewhere`, but it is stored as `{real}`",
                path.display()
            )
        );
    }

    #[test]
    fn a_half_finished_removal_does_not_block_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let (c, lock) = store.create().unwrap();
        drop(lock);
        fs::create_dir_all(store.root().join(format!(".removing-{}", c.id)).join("x")).unwrap();
        store.remove(&c.id).unwrap();
        assert!(!store.root().join(format!(".removing-{}", c.id)).exists());
        assert_eq!(store.ids().unwrap(), Vec::<String>::new());
    }

    #[test]
    fn corrupt_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let (c, _lock) = store.create().unwrap();
        let path = store.root().join(&c.id).join(FILE_NAME);
        fs::write(&path, "{\"version\": 1, \"id\": ").unwrap();
        assert_eq!(
            store.load(&c.id).unwrap_err().to_string(),
            format!(
                "{} is not a readable conversation: EOF while parsing a value at line 1 column 21",
                path.display()
            )
        );
    }
}
