//! The conversation log, `events.jsonl`: how it is written and read back.
//!
//! ```text
//! {"format":"jp-conversation-log","version":2,"id":"1795350600000","created_ms":1795350600000}
//! {"at_ms":1795350600001,"type":"turn_start"}
//! {"at_ms":1795350600002,"type":"chat_request","content":"add hello"}
//! ```
//!
//! Line 1 is the header; every other line is one [`ConversationEvent`],
//! oldest first. JSON never holds a raw newline, so a line is a record and
//! the newline that ends it is what makes it whole. A line that a crash cut
//! short can only be the last one: it has no newline, or (when the file
//! system lost the data but kept the length) it is not JSON at all. Reading
//! drops such a line and says so ([`TornTail`]); anything else that does
//! not read (a bad line with lines after it, an event of a kind this jp does
//! not know, a bad header) is [`StoreError::Corrupt`], never dropped.

use std::fs::File;
use std::io::{self, BufRead as _, BufReader, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::error::Category;

use super::MAX_STORED_BYTES;
use super::disk::Kept;
use super::error::{StoreError, io_error};
use crate::ParserLimits;
use crate::conversation::ConversationEvent;

/// The file name of a conversation's log.
pub(super) const LOG_NAME: &str = "events.jsonl";

/// What the header's `format` says.
pub const LOG_FORMAT: &str = "jp-conversation-log";

/// The format version of the log. Version 1 was the single
/// `conversation.json` that every write replaced.
pub const LOG_VERSION: u32 = 2;

/// How much of a line an error message quotes at most.
const QUOTE_MAX: usize = 400;

/// The deepest a stored line may nest. An event holds a tool call's
/// arguments, which the parser takes up to
/// [`ParserLimits::DEFAULT_MAX_DEPTH`] deep, a few levels down (a
/// response's `ran.arguments` is the deepest); serde_json's own limit
/// (128) is less than that, so a line that jp wrote could not be read back.
/// Lines are read with serde_json's limit lifted, after [`nesting`] has
/// checked this one, which keeps the reader's stack bounded.
pub(super) const MAX_LINE_DEPTH: usize = ParserLimits::DEFAULT_MAX_DEPTH + 8;

/// How deep `text` nests its arrays and objects, counting no further than
/// `limit + 1`. Brackets inside strings do not count.
pub(super) fn nesting(text: &[u8], limit: usize) -> usize {
    let (mut depth, mut deepest) = (0_usize, 0);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in text {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > limit {
                    break;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// `T` from JSON `text` that [`nesting`] has checked: serde_json's
/// recursion limit lifted, the whole text read.
pub(super) fn from_checked_slice<'de, T: Deserialize<'de>>(
    text: &'de [u8],
) -> serde_json::Result<T> {
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    deserializer.disable_recursion_limit();
    let value = T::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// Line 1 of a log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Header {
    pub format: String,
    pub version: u32,
    pub id: String,
    pub created_ms: u64,
    /// A title that is not the start of the first message (only a
    /// conversation migrated from version 1, which stored its title, has
    /// one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

impl Header {
    pub fn new(id: &str, created_ms: u64, title: Option<String>) -> Self {
        Self {
            format: LOG_FORMAT.to_owned(),
            version: LOG_VERSION,
            id: id.to_owned(),
            created_ms,
            title,
        }
    }
}

/// The last line of a log, dropped because it is not a whole event: a
/// crash or a kill cut it short (or, for a reader without the lock, a
/// `jp` is still writing it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// The log.
    pub path: PathBuf,
    /// Its line number (1 is the header).
    pub line: usize,
    /// Where it starts, in bytes.
    pub offset: u64,
    /// How long it is, in bytes.
    pub bytes: u64,
    /// Whether it was removed from the file (the writer does that before
    /// its first append) or only left out of what was read.
    pub removed: bool,
}

impl std::fmt::Display for TornTail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = if self.bytes == 1 { "" } else { "s" };
        if self.removed {
            write!(
                f,
                "{}: dropped its last line (line {}, {} byte{plural} at offset {}): an event that a crash or kill left unfinished; the conversation continues from the event before it",
                self.path.display(),
                self.line,
                self.bytes,
                self.offset
            )
        } else {
            write!(
                f,
                "{}: ignored its last line (line {}, {} byte{plural} at offset {}): it is not a whole event (a crash or kill left it unfinished, or a jp is writing it now)",
                self.path.display(),
                self.line,
                self.bytes,
                self.offset
            )
        }
    }
}

/// A log as read.
#[derive(Debug)]
pub(super) struct ReadLog {
    pub header: Header,
    pub events: Vec<ConversationEvent>,
    /// The length of the whole lines read, in bytes: where the next event
    /// goes.
    pub valid_len: u64,
    pub torn: Option<TornTail>,
}

/// The header line, newline included.
pub(super) fn encode_header(header: &Header) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = serde_json::to_vec(header)?;
    out.push(b'\n');
    Ok(out)
}

/// Appends `event` as one line to `out`.
pub(super) fn encode_event(
    out: &mut Vec<u8>,
    event: &ConversationEvent,
) -> Result<(), serde_json::Error> {
    serde_json::to_writer(&mut *out, event)?;
    out.push(b'\n');
    Ok(())
}

/// Reads the log `log` (an [`io::ErrorKind::NotFound`] error when there
/// is none; a refusal when it, or a directory on the way, is a link, or it
/// is not a regular file). Memory is the events read plus one buffer as
/// long as the longest line, and at most [`MAX_STORED_BYTES`] are read.
pub(super) fn read(log: &Kept) -> Result<ReadLog, ReadError> {
    let path = &log.path();
    let file = jp_fs::open(log.base(), log.rel(), jp_fs::Access::Read).map_err(ReadError::Open)?;
    let len = file
        .metadata()
        .map_err(|e| ReadError::Store(io_error("cannot read", path)(e)))?
        .len();
    if len > MAX_STORED_BYTES {
        return Err(ReadError::Open(
            jp_fs::Refusal::TooLarge {
                path: path.clone(),
                limit: MAX_STORED_BYTES,
            }
            .into(),
        ));
    }
    let corrupt = |message: String| {
        ReadError::Store(StoreError::Corrupt {
            path: path.clone(),
            message,
        })
    };
    // A log that grows while it is read (a writer appending) is read as far
    // as the bound.
    let mut reader = BufReader::with_capacity(64 * 1024, file.take(MAX_STORED_BYTES));
    let mut line = Vec::new();
    let read_line = |reader: &mut BufReader<io::Take<File>>, line: &mut Vec<u8>| {
        line.clear();
        reader
            .read_until(b'\n', line)
            .map_err(|e| ReadError::Store(io_error("cannot read", path)(e)))
    };

    let n = read_line(&mut reader, &mut line)?;
    if n == 0 {
        return Err(corrupt("it is empty (line 1 must be its header)".into()));
    }
    // The header is written whole (temporary file and rename), so a
    // header without its newline is damage, not a crash.
    let Some(header_text) = line.strip_suffix(b"\n") else {
        return Err(corrupt("its header (line 1) is unfinished".into()));
    };
    let header = parse_header(header_text).map_err(corrupt)?;
    let mut offset = n as u64;
    let mut number = 1;

    let mut events = Vec::new();
    // A line that is not JSON is torn only if it is the last one.
    let mut unreadable: Option<(usize, u64, u64, String)> = None;
    let mut torn = None;
    loop {
        let n = read_line(&mut reader, &mut line)?;
        if n == 0 {
            break;
        }
        if let Some((number, _, _, message)) = unreadable.take() {
            return Err(corrupt(format!("line {number} is not JSON: {message}")));
        }
        number += 1;
        // Only the last line can lack its newline.
        let Some(text) = line.strip_suffix(b"\n") else {
            torn = Some((number, offset, n as u64));
            break;
        };
        if nesting(text, MAX_LINE_DEPTH) > MAX_LINE_DEPTH {
            return Err(corrupt(format!(
                "line {number} nests deeper than {MAX_LINE_DEPTH} levels, more than jp writes"
            )));
        }
        match from_checked_slice::<ConversationEvent>(text) {
            Ok(event) => {
                events.push(event);
                offset += n as u64;
            }
            Err(e) if matches!(e.classify(), Category::Syntax | Category::Eof) => {
                unreadable = Some((number, offset, n as u64, describe(&e)));
            }
            Err(e) => {
                return Err(corrupt(format!(
                    "line {number} is not an event this jp knows: {}",
                    describe(&e)
                )));
            }
        }
    }
    if let Some((number, offset, n, _)) = unreadable {
        torn = Some((number, offset, n));
    }
    Ok(ReadLog {
        header,
        events,
        valid_len: offset,
        torn: torn.map(|(line, offset, bytes)| TornTail {
            path: path.clone(),
            line,
            offset,
            bytes,
            removed: false,
        }),
    })
}

/// Why [`read`] failed.
#[derive(Debug)]
pub(super) enum ReadError {
    /// The file could not be opened (it may not exist).
    Open(io::Error),
    /// It could not be read, or is not a log.
    Store(StoreError),
}

fn parse_header(text: &[u8]) -> Result<Header, String> {
    /// The fields that say what the file is, read first so that a log
    /// of another version is named as such.
    #[derive(Deserialize)]
    struct Kind {
        format: Option<String>,
        version: Option<u32>,
    }
    let kind: Kind = serde_json::from_slice(text)
        .map_err(|e| format!("its header (line 1) is not readable: {}", describe(&e)))?;
    if kind.format.as_deref() != Some(LOG_FORMAT) {
        return Err(format!(
            "its header (line 1) does not say `\"format\":\"{LOG_FORMAT}\"`"
        ));
    }
    match kind.version {
        Some(LOG_VERSION) => {}
        Some(version) => {
            return Err(format!(
                "it is format version {version}, and this jp reads version {LOG_VERSION}{}",
                if version > LOG_VERSION {
                    " (a newer jp wrote it)"
                } else {
                    ""
                }
            ));
        }
        None => return Err("its header (line 1) has no format version".into()),
    }
    serde_json::from_slice(text)
        .map_err(|e| format!("its header (line 1) is not readable: {}", describe(&e)))
}

/// A serde_json error without its position (which is within one line),
/// and no longer than [`QUOTE_MAX`] characters (it can quote the input).
fn describe(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let message = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(message, _)| message);
    let position = format!(" (column {})", e.column());
    if message.chars().count() <= QUOTE_MAX {
        format!("{message}{position}")
    } else {
        let short: String = message.chars().take(QUOTE_MAX - 1).collect();
        format!("{short}…{position}")
    }
}

/// Appends to one log, for the lock holder.
#[derive(Debug)]
pub(super) struct Appender {
    pub(super) file: File,
    path: PathBuf,
    /// The length of what is known to be in the file: whole lines.
    len: u64,
    /// How many events those lines hold.
    events: usize,
    /// A write failed part-way; the bytes after `len` are garbage to cut
    /// before the next append.
    dirty: bool,
}

impl Appender {
    /// Opens the log `log`, whose first `len` bytes are whole lines
    /// holding `events` events, and cuts off anything after them (a torn
    /// last line).
    pub fn open(log: &Kept, len: u64, events: usize) -> Result<Self, StoreError> {
        let path = &log.path();
        let file = jp_fs::open(log.base(), log.rel(), jp_fs::Access::Write)
            .map_err(io_error("cannot open", path))?;
        let mut appender = Self {
            file,
            path: path.clone(),
            len,
            events,
            dirty: false,
        };
        let actual = appender
            .file
            .metadata()
            .map_err(io_error("cannot read", path))?
            .len();
        if actual != len {
            appender.truncate()?;
        }
        Ok(appender)
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many events the log holds.
    pub fn events(&self) -> usize {
        self.events
    }

    /// Appends `lines` (whole lines holding `count` events) and syncs them:
    /// one commit point.
    pub fn append(&mut self, lines: &[u8], count: usize) -> Result<(), StoreError> {
        if self.dirty {
            self.truncate()?;
        }
        let result = (|| {
            self.file.seek(SeekFrom::Start(self.len))?;
            self.file.write_all(lines)?;
            self.file.sync_data()
        })();
        match result {
            Ok(()) => {
                self.len += lines.len() as u64;
                self.events += count;
                Ok(())
            }
            Err(e) => {
                // Cut what was written of the lines now, not at the next
                // append: jp usually stops on this error, and a reader
                // keeps every whole line it finds, so a batch (a tool's
                // result and the config change it claims) must not be left
                // half on disk. Cutting needs no free space; if it fails
                // too, the next append or open tries again.
                self.dirty = true;
                let _ = self.truncate();
                Err(io_error("cannot write", &self.path)(e))
            }
        }
    }

    /// Cuts the file back to its whole lines.
    fn truncate(&mut self) -> Result<(), StoreError> {
        self.file
            .set_len(self.len)
            .and_then(|()| self.file.sync_data())
            .map_err(io_error("cannot repair", &self.path))?;
        self.dirty = false;
        Ok(())
    }
}
