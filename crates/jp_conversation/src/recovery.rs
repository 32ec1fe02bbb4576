//! What recovery records: the files a call changed
//! ([`FileChange`]), turns taken back ([`Rewind`]) and turns summarised
//! ([`Compaction`]). None of them is sent to the model as it is; together
//! they decide what is (see [`crate::view`]).

use serde::{Deserialize, Serialize};

/// One file a tool call changed (issue 38): where, and what it was before
/// and after, so `jp conversation rewind` can put it back and can tell
/// whether something else changed it since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The call that changed it.
    pub call_id: String,
    /// The file, relative to the workspace root, with `/` between
    /// components.
    pub path: String,
    /// What was there before the call.
    pub before: FileState,
    /// What was there after it.
    pub after: FileState,
    /// Directories the call created to hold the file, outermost first
    /// (relative to the workspace root): a rewind removes them when they
    /// are empty again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub made_dirs: Vec<String>,
}

/// What was at a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FileState {
    /// Nothing.
    Absent,
    /// A regular file whose content is kept, by its SHA-256 (hex), in the
    /// conversation's blobs.
    File {
        /// The SHA-256 of the content, in lowercase hex.
        sha256: String,
        /// Its size.
        bytes: u64,
        /// Its permission bits (`0o644` is 420).
        mode: u32,
    },
    /// A regular file whose content was not kept: larger than
    /// `conversation.undo.max_file_bytes`, or unreadable. A rewind cannot
    /// put it back.
    Unkept {
        /// Its size.
        bytes: u64,
        /// Its permission bits.
        mode: u32,
        /// Why it was not kept.
        reason: String,
    },
    /// A symbolic link, and the path it holds.
    Link {
        /// Where it points, as written in it.
        target: String,
    },
    /// A directory (a command made or removed it).
    Dir {
        /// Its permission bits.
        mode: u32,
    },
}

/// A call that may have changed files jp did not keep (issue 38): a
/// command without a sandbox that confines its writes to the workspace,
/// or one whose workspace was too large to keep. A rewind says so; it
/// cannot put those changes back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangesNotKept {
    /// The call.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// Why jp did not keep what it changed.
    pub reason: String,
}

/// Turns taken back: what is sent to the model from then on leaves them
/// out, and so do the history's authority (config changes, approvals) and
/// `jp conversation rewind`'s next target. The log keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rewind {
    /// Each turn's place in the log: the index of its `turn_start` event.
    pub turns: Vec<usize>,
    /// Why.
    pub reason: RewindReason,
    /// The files put back as they were (restored or recreated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restored: Vec<String>,
    /// The files (and emptied directories) removed because the turns made
    /// them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// The files left as they are (`--force`): changed since by something
    /// else, or not kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<String>,
    /// False when putting the files back failed part-way: the turns are
    /// then still live (sent, and the next rewind's target), and the files
    /// listed were put back.
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub complete: bool,
}

fn yes() -> bool {
    true
}

/// Why turns were taken back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindReason {
    /// `jp conversation rewind`.
    User,
    /// The turn's first request was larger than the model's context
    /// window and was never sent: its message stays in the log, and is
    /// not sent again with the next query.
    TooLarge,
}

/// A summary of the conversation before `upto`, made by a model (and
/// perhaps edited by the user): from then on it is sent in place of every
/// turn before `upto`, the previous summary included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compaction {
    /// The place in the log of the first turn sent whole: the index of its
    /// `turn_start` event.
    pub upto: usize,
    /// The summary.
    pub summary: String,
    /// The model that wrote it, as `provider/name`.
    pub model: String,
    /// Whether the user edited it before it was used.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub edited: bool,
}
