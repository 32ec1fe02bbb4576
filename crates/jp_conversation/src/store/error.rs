//! What goes wrong with stored conversations: the error every part of the
//! store returns, below the modules that return it.

use std::io;
use std::path::{Path, PathBuf};

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
    /// No id was given and no conversation is active.
    #[error("no active conversation (`jp conversation use ID` picks one; `jp query` starts one)")]
    NoActive,
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
    /// A writer was asked to append to a conversation that is not the one
    /// it stored: another id, or events added or removed in memory
    /// without it. A bug in jp, refused rather than written.
    #[error("cannot append to conversation `{id}`: {message}")]
    Diverged {
        /// The locked conversation.
        id: String,
        /// How the conversation in memory differs from the log.
        message: String,
    },
}

pub(super) fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> StoreError {
    let path = path.to_path_buf();
    move |source| StoreError::Io {
        action,
        path,
        source,
    }
}
