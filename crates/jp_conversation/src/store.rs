//! Conversations on disk, under `.jp/conversations/` (or, for a
//! directory that is no workspace, in the user's data directory:
//! [`Store::under`]).
//!
//! Each conversation is a directory named by its id holding `events.jsonl`,
//! an append-only log: a header line (the format, its version, the id, when
//! the conversation began), then one JSON event per line, oldest first (see
//! [`log`] for the format). Recording events appends their lines and syncs
//! the file once ([`ConversationLock::append`], one commit point), so what a
//! write costs is the size of the new events, never the size of the
//! conversation (architecture decision 13). Nothing already written is
//! rewritten.
//!
//! A kill or a crash can cut only the line being appended. Reading drops
//! that last line and reports it ([`Conversation::torn_tail`]); the next
//! writer cuts it off the file before it appends, so the log stays whole
//! lines. A bad line anywhere else is [`StoreError::Corrupt`], naming the
//! file and the line: jp never drops an event it cannot read silently.
//!
//! Two `jp` processes must not write one conversation: a writer holds an
//! exclusive lock on the directory's `lock` file ([`ConversationLock`]) for
//! as long as it may write. The operating system drops the lock when the
//! process dies, so a crash never leaves a conversation locked. Readers do
//! not lock: they read whole lines, and at most ignore a last line that is
//! still being written.
//!
//! Conversations written before the log (format version 1, one
//! `conversation.json` that every write replaced) are read as they are, and
//! converted to a log once by the first writer that opens them ([`v1`]).
//!
//! The active conversation's id is kept in `.jp/conversations/active`.
//!
//! A repository can commit any of these files, or links in their place:
//! every one is opened from the workspace root through [`jp_fs`], which
//! follows no link below it and opens only regular files, and every read
//! is bounded ([`MAX_STORED_BYTES`]).

mod disk;
mod error;
mod log;
mod v1;

use std::fs::{self, File};
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::conversation::{ConversationEvent, EventKind, now_ms};

use disk::{Kept, sync_dir, write_atomic};
pub use error::StoreError;
use error::io_error;
pub use log::{LOG_FORMAT, LOG_VERSION, TornTail};

const LOCK_NAME: &str = "lock";
const ACTIVE_NAME: &str = "active";

/// The most jp reads of a stored file (a log, a version 1 conversation):
/// a file larger than this is refused, not read.
pub const MAX_STORED_BYTES: u64 = 1 << 30;

/// The most jp reads of the active marker (an id) or of a lock file (who
/// holds it).
const MAX_MARKER_BYTES: u64 = 4096;

/// How many characters of the first message a derived title keeps.
const TITLE_CHARS: usize = 60;

/// A conversation: its metadata and events, as read (or as a writer has
/// appended them since).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conversation {
    /// The id (also the directory name).
    pub id: String,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// A stored title. Only conversations from before the log have one
    /// (format version 1 stored it); see [`Conversation::title`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The events, oldest first.
    pub events: Vec<ConversationEvent>,
    /// The unfinished last line left out of `events`, if there was one:
    /// callers show it to the user as a warning.
    #[serde(skip)]
    pub torn_tail: Option<TornTail>,
}

impl Conversation {
    /// The first user message as the user wrote it (without attachments),
    /// for titles.
    #[must_use]
    pub fn first_message(&self) -> Option<&str> {
        self.events.iter().find_map(|e| match &e.kind {
            EventKind::ChatRequest { content } => Some(crate::attachment::written(content)),
            _ => None,
        })
    }

    /// The title: the stored one, or else the first line of the first
    /// message, cut to 60 characters. It is derived rather than stored so
    /// that the log holds only events and nothing needs rewriting when the
    /// first message arrives.
    #[must_use]
    pub fn title(&self) -> Option<String> {
        if let Some(title) = &self.title {
            return Some(title.clone());
        }
        let line = self.first_message()?.lines().next().unwrap_or("");
        if line.chars().count() <= TITLE_CHARS {
            return Some(line.to_owned());
        }
        let mut title: String = line.chars().take(TITLE_CHARS - 1).collect();
        title.push('…');
        Some(title)
    }

    /// When the last event happened (creation if none did).
    #[must_use]
    pub fn last_activity_ms(&self) -> u64 {
        self.events.last().map_or(self.created_ms, |e| e.at_ms)
    }
}

/// The conversations of one workspace.
#[derive(Debug, Clone)]
pub struct Store {
    /// `.jp/conversations` below the workspace root, which every file is
    /// opened from.
    kept: Kept,
    root: PathBuf,
}

impl Store {
    /// The store under `workspace_root/.jp/conversations`.
    #[must_use]
    pub fn new(workspace_root: &Path) -> Self {
        let kept = Kept::new(workspace_root, Path::new(".jp").join("conversations"));
        Self {
            root: kept.path(),
            kept,
        }
    }

    /// The store at `base/rel`, every file opened from `base` (which must
    /// exist) following no link below it: for the conversations of a
    /// directory that is no workspace, which jp keeps in the user's data
    /// directory rather than in the directory itself.
    #[must_use]
    pub fn under(base: &Path, rel: &Path) -> Self {
        let kept = Kept::new(base, rel.to_path_buf());
        Self {
            root: kept.path(),
            kept,
        }
    }

    /// The directory holding the conversations.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir(&self, id: &str) -> Result<Kept, StoreError> {
        let valid = !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if valid {
            Ok(self.kept.join(id))
        } else {
            Err(StoreError::BadId(id.to_owned()))
        }
    }

    /// Whether `dir` holds a conversation (a log, or a version 1 file).
    /// Something that is not a regular file at either name, or a link on
    /// the way, counts: reading it then says what is wrong, rather than
    /// the conversation seeming not to exist.
    fn holds_conversation(dir: &Kept) -> bool {
        [log::LOG_NAME, v1::V1_NAME].into_iter().any(|name| {
            let file = dir.join(name);
            match jp_fs::kind(file.base(), file.rel()) {
                Ok(kind) => kind.is_some(),
                Err(e) => matches!(jp_fs::Refusal::of(&e), Some(jp_fs::Refusal::Link(_))),
            }
        })
    }

    /// Creates a new, empty conversation and locks it for writing.
    ///
    /// # Errors
    ///
    /// When the directory cannot be created or locked.
    pub fn create(&self) -> Result<(Conversation, ConversationLock), StoreError> {
        jp_fs::create_dir_all(self.kept.base(), self.kept.rel())
            .map_err(io_error("cannot create", &self.root))?;
        let created_ms = now_ms();
        // Ids are creation times in milliseconds; two conversations created
        // in one millisecond take the next free number.
        let mut n = created_ms;
        loop {
            let id = n.to_string();
            let dir = self.kept.join(&id);
            match jp_fs::create_dir(dir.base(), dir.rel()) {
                Ok(()) => {
                    sync_dir(&self.kept);
                    let lock = self.lock(&id)?;
                    // The header is written whole (temporary file and
                    // rename), so a log never lacks one.
                    let log = dir.join(log::LOG_NAME);
                    let header = log::encode_header(&log::Header::new(&id, created_ms, None))
                        .map_err(|e| StoreError::Io {
                            action: "cannot serialize",
                            path: log.path(),
                            source: io::Error::other(e),
                        })?;
                    write_atomic(&log, &header)?;
                    let appender = log::Appender::open(&log, header.len() as u64, 0)?;
                    let conversation = Conversation {
                        id,
                        created_ms,
                        title: None,
                        events: Vec::new(),
                        torn_tail: None,
                    };
                    return Ok((conversation, lock.with_appender(appender)));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => return Err(io_error("cannot create", &dir.path())(e)),
            }
        }
    }

    /// Locks conversation `id` for writing and reads it: converts a version
    /// 1 conversation to a log first, and cuts a torn last line off the
    /// log (the conversation's [`torn_tail`](Conversation::torn_tail) then
    /// says what was removed).
    ///
    /// # Errors
    ///
    /// [`StoreError::Locked`] when another process holds it;
    /// [`StoreError::NotFound`] when there is no such conversation; an
    /// error when it cannot be read, converted or repaired.
    pub fn open(&self, id: &str) -> Result<(Conversation, ConversationLock), StoreError> {
        let lock = self.lock(id)?;
        let dir = self.dir(id)?;
        v1::migrate(&dir, id)?;
        let log = dir.join(log::LOG_NAME);
        let path = log.path();
        let read = match log::read(&log) {
            Ok(read) => read,
            Err(log::ReadError::Open(e)) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::NotFound(id.to_owned()));
            }
            Err(log::ReadError::Open(e)) => return Err(io_error("cannot read", &path)(e)),
            Err(log::ReadError::Store(e)) => return Err(e),
        };
        let appender = log::Appender::open(&log, read.valid_len, read.events.len())?;
        let mut conversation = conversation_of(&path, id, read)?;
        if let Some(tail) = &mut conversation.torn_tail {
            tail.removed = true;
        }
        Ok((conversation, lock.with_appender(appender)))
    }

    /// Takes the write lock of conversation `id`: its `lock` file, opened
    /// (or created) without following a link on the way or at the file.
    fn lock(&self, id: &str) -> Result<Locked, StoreError> {
        let dir = self.dir(id)?;
        // Anything but nothing goes on to the open, which says what is
        // wrong with a link or a file in the way.
        if let Ok(None) = jp_fs::kind(dir.base(), dir.rel()) {
            return Err(StoreError::NotFound(id.to_owned()));
        }
        let lock = dir.join(LOCK_NAME);
        let path = lock.path();
        let mut file = jp_fs::open(lock.base(), lock.rel(), jp_fs::Access::WriteOrCreate)
            .map_err(io_error("cannot open", &path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                let mut text = Vec::new();
                let holder = (&file)
                    .take(MAX_MARKER_BYTES)
                    .read_to_end(&mut text)
                    .ok()
                    .map(|_| String::from_utf8_lossy(&text).trim().to_owned())
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
        Ok(Locked {
            file,
            id: id.to_owned(),
        })
    }

    /// Reads conversation `id`, without locking it: a log, or a version 1
    /// conversation not converted yet. A torn last line is left out and
    /// reported in [`torn_tail`](Conversation::torn_tail), not removed.
    ///
    /// # Errors
    ///
    /// When it does not exist or cannot be read.
    pub fn load(&self, id: &str) -> Result<Conversation, StoreError> {
        let dir = self.dir(id)?;
        // The log first: when both files exist, a migration stopped after
        // writing the whole log.
        let log = dir.join(log::LOG_NAME);
        let path = log.path();
        match log::read(&log) {
            Ok(read) => conversation_of(&path, id, read),
            Err(log::ReadError::Open(e)) if e.kind() == io::ErrorKind::NotFound => {
                let file = v1::read(&dir.join(v1::V1_NAME), id)?
                    .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
                Ok(Conversation {
                    id: file.id,
                    created_ms: file.created_ms,
                    title: file.title,
                    events: file.events,
                    torn_tail: None,
                })
            }
            Err(log::ReadError::Open(e)) => Err(io_error("cannot read", &path)(e)),
            Err(log::ReadError::Store(e)) => Err(e),
        }
    }

    /// The ids of every conversation, oldest first.
    ///
    /// # Errors
    ///
    /// When the directory cannot be listed.
    pub fn ids(&self) -> Result<Vec<String>, StoreError> {
        // The directory itself must not be a link: what is listed is what
        // is read next.
        match jp_fs::kind(self.kept.base(), self.kept.rel()) {
            Ok(None) => return Ok(Vec::new()),
            Ok(Some(jp_fs::FileKind::Directory)) => {}
            Ok(Some(jp_fs::FileKind::Link)) => {
                return Err(io_error("cannot list", &self.root)(
                    jp_fs::Refusal::Link(self.root.clone()).into(),
                ));
            }
            Ok(Some(kind)) => {
                return Err(io_error("cannot list", &self.root)(
                    jp_fs::Refusal::NotDirectory {
                        path: self.root.clone(),
                        kind,
                    }
                    .into(),
                ));
            }
            Err(e) => return Err(io_error("cannot list", &self.root)(e)),
        }
        let entries = match fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("cannot list", &self.root)(e)),
        };
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_error("cannot list", &self.root))?;
            // The marker is no conversation, even when it is a link (which
            // `holds_conversation` counts, to report it).
            if let Some(id) = entry.file_name().to_str()
                && id != ACTIVE_NAME
                && let Ok(dir) = self.dir(id)
                && Self::holds_conversation(&dir)
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
        let id = self.read_marker()?;
        let id = id.trim();
        let dir = self.dir(id).ok()?;
        Self::holds_conversation(&dir).then(|| id.to_owned())
    }

    /// The id the active-conversation marker names, whether or not that
    /// conversation is there ([`active`](Self::active) checks that it is).
    #[must_use]
    pub fn active_marker(&self) -> Option<String> {
        let id = self.read_marker()?;
        Some(id.trim().to_owned()).filter(|id| !id.is_empty())
    }

    /// What the active-conversation marker holds: `None` when it is not
    /// there, or is not a regular file in the store (a link is not
    /// followed), or holds more than an id.
    fn read_marker(&self) -> Option<String> {
        let marker = self.kept.join(ACTIVE_NAME);
        jp_fs::read_to_string(marker.base(), marker.rel(), MAX_MARKER_BYTES).ok()
    }

    /// Makes `id` the active conversation.
    ///
    /// # Errors
    ///
    /// When it does not exist or the marker cannot be written.
    pub fn set_active(&self, id: &str) -> Result<(), StoreError> {
        if !Self::holds_conversation(&self.dir(id)?) {
            return Err(StoreError::NotFound(id.to_owned()));
        }
        write_atomic(&self.kept.join(ACTIVE_NAME), format!("{id}\n").as_bytes())
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
        // directory, then delete. The lock was taken through no link, and
        // the rename follows none: what is deleted is in the store.
        let trash = self.kept.join(&format!(".removing-{id}"));
        let trash_path = trash.path();
        // A removal that crashed half-way left this behind; finish it (a
        // link there is removed itself).
        match jp_fs::kind(trash.base(), trash.rel()) {
            Ok(Some(jp_fs::FileKind::Directory)) => {
                fs::remove_dir_all(&trash_path).map_err(io_error("cannot remove", &trash_path))?
            }
            Ok(Some(_)) => jp_fs::remove_file(trash.base(), trash.rel())
                .map_err(io_error("cannot remove", &trash_path))?,
            Ok(None) => {}
            Err(e) => return Err(io_error("cannot remove", &trash_path)(e)),
        }
        jp_fs::rename(dir.base(), dir.rel(), trash.rel())
            .map_err(io_error("cannot remove", &dir.path()))?;
        drop(lock);
        // remove_dir_all follows no link inside what it removes.
        fs::remove_dir_all(&trash_path).map_err(io_error("cannot remove", &trash_path))?;
        if self.active().is_none() {
            let marker = self.kept.join(ACTIVE_NAME);
            let _ = jp_fs::remove_file(marker.base(), marker.rel());
        }
        Ok(())
    }
}

/// The conversation a log holds, checked against the id it is stored as.
fn conversation_of(path: &Path, id: &str, read: log::ReadLog) -> Result<Conversation, StoreError> {
    if read.header.id != id {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            message: format!(
                "it says its id is `{}`, but it is stored as `{id}`",
                read.header.id
            ),
        });
    }
    Ok(Conversation {
        id: read.header.id,
        created_ms: read.header.created_ms,
        title: read.header.title,
        events: read.events,
        torn_tail: read.torn,
    })
}

/// A held lock file, before it has a log to append to.
#[derive(Debug)]
struct Locked {
    file: File,
    id: String,
}

impl Locked {
    fn with_appender(self, appender: log::Appender) -> ConversationLock {
        ConversationLock {
            _file: self.file,
            id: self.id,
            appender,
        }
    }
}

/// The right to write one conversation, held until dropped: the only way
/// to add events to its log.
#[derive(Debug)]
pub struct ConversationLock {
    _file: File,
    id: String,
    appender: log::Appender,
}

impl ConversationLock {
    /// The locked conversation's id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Records `events` (in order) at the end of `conversation`: appends
    /// their lines to the log and syncs it once, then adds them to
    /// `conversation.events`. This is one commit point; what it writes is
    /// the new events, whatever the length of the conversation.
    ///
    /// # Errors
    ///
    /// [`StoreError::Diverged`] when `conversation` is not what this lock
    /// stored (another id, or events added or removed without `append`);
    /// an I/O error when the write fails. Either way `conversation` is
    /// unchanged, and the log holds what it held before (a part-written
    /// line is cut off before the next append).
    pub fn append(
        &mut self,
        conversation: &mut Conversation,
        events: impl IntoIterator<Item = ConversationEvent>,
    ) -> Result<(), StoreError> {
        if conversation.id != self.id {
            return Err(StoreError::Diverged {
                id: self.id.clone(),
                message: format!("it was given conversation `{}`", conversation.id),
            });
        }
        if conversation.events.len() != self.appender.events() {
            return Err(StoreError::Diverged {
                id: self.id.clone(),
                message: format!(
                    "the conversation in memory has {} events and its log {}; events were added or removed without being appended",
                    conversation.events.len(),
                    self.appender.events()
                ),
            });
        }
        let events: Vec<ConversationEvent> = events.into_iter().collect();
        if events.is_empty() {
            return Ok(());
        }
        let mut lines = Vec::new();
        for event in &events {
            log::encode_event(&mut lines, event).map_err(|e| StoreError::Io {
                action: "cannot serialize an event for",
                path: self.appender.path().to_path_buf(),
                source: io::Error::other(e),
            })?;
        }
        self.appender.append(&lines, events.len())?;
        conversation.events.extend(events);
        Ok(())
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
