//! What this user's jp recorded in one workspace, kept in the user's
//! config directory beside the sealing key ([`crate::seal`]), never in the
//! workspace: `$XDG_CONFIG_HOME/jp/workspaces/DIGEST/`, one directory for
//! each workspace, named by a digest of its canonical root.
//!
//! A workspace's `.jp/conversations/` can come with a repository and be
//! edited by anyone, so nothing in it gives a past event authority by
//! itself being there:
//!
//! - `ID.seals`: a seal for each event this user's jp appended to
//!   conversation `ID` (its place in the log, and an HMAC of the event,
//!   its place, the conversation and the workspace's canonical root).
//!   Stateful policies and session approvals count only events whose seal
//!   verifies ([`Ledger::ours`]): a line added, moved or copied from
//!   another workspace counts for nothing.
//! - `ID.epoch`: the approval generation of conversation `ID`, a random id
//!   that every session approval is sealed with and that
//!   `jp conversation forget-approvals` replaces: an approval of an
//!   earlier generation approves nothing, whatever the log says.
//! - `active`: the conversation this user last made active here (`jp
//!   query` starting one, `jp conversation use`): a `.jp/conversations/active`
//!   naming another one (committed with the repository, or set by someone
//!   else) is not continued silently.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use jp_conversation::{
    Conversation, ConversationEvent, ConversationLock, SessionApproval, StoreError,
};
use sha2::{Digest as _, Sha256};

use crate::seal;

/// The most bytes one line of a seals file takes (an index, a space, 64
/// hex digits, a newline), with room to spare.
const SEAL_LINE_BYTES: u64 = 96;

/// What this user's jp recorded in the workspace at one root.
#[derive(Debug, Clone)]
pub struct Ledger {
    /// The workspace's canonical root, as text: what every seal is bound
    /// to.
    root: String,
    /// Where its records are; `None` without a user config directory
    /// (then nothing is the user's, and nothing is kept).
    dir: Option<PathBuf>,
    /// The user's sealing key; `None` without one (then nothing is sealed
    /// and nothing verifies).
    key: Option<[u8; 32]>,
}

/// Whether a recorded session approval approves anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalState {
    /// Sealed by this user, in this workspace and conversation, of the
    /// current generation: it approves what its scope covers.
    InForce,
    /// Sealed by this user, but `forget-approvals` ended its generation.
    Forgotten,
    /// Not sealed by this user's key for this workspace and conversation.
    NotTheUsers,
}

/// The name of the workspace at `root` among the user's records: a
/// digest of its canonical path (32 hex digits).
#[must_use]
pub fn digest(root: &Path) -> String {
    let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let digest = seal::hex(&Sha256::digest(canonical.to_string_lossy().as_bytes()));
    digest[..32].to_owned()
}

impl Ledger {
    /// The ledger of the workspace at `root`.
    #[must_use]
    pub fn new(root: &Path) -> Self {
        let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let dir = seal::user_dir().map(|dir| dir.join("workspaces").join(digest(root)));
        Self {
            root: canonical.to_string_lossy().into_owned(),
            dir,
            key: seal::user_key(),
        }
    }

    /// The file `name` of conversation `id`'s records; `None` for an id
    /// that is not a plain name (the store refuses those anyway).
    fn file(&self, id: &str, extension: &str) -> Option<PathBuf> {
        let plain = !id.is_empty()
            && id.len() <= 64
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        plain.then(|| {
            self.dir
                .as_ref()
                .map(|dir| dir.join(format!("{id}.{extension}")))
        })?
    }

    /// What the seal of event `index` of conversation `id` covers.
    fn event_message(&self, id: &str, index: usize, event: &ConversationEvent) -> Option<Vec<u8>> {
        serde_json::to_vec(&serde_json::json!([
            "jp event v1",
            self.root,
            id,
            index,
            event
        ]))
        .ok()
    }

    /// Appends `events` to `conversation` through `lock` (one commit), and
    /// then seals each as recorded by this user's jp. A seal that cannot
    /// be kept is warned about in the log: the event then gives no
    /// authority (it is as if someone else wrote it).
    ///
    /// # Errors
    ///
    /// When the store cannot append them (see [`ConversationLock::append`]).
    pub fn append(
        &self,
        lock: &mut ConversationLock,
        conversation: &mut Conversation,
        events: impl IntoIterator<Item = ConversationEvent>,
    ) -> Result<(), StoreError> {
        let first = conversation.events.len();
        lock.append(conversation, events)?;
        self.seal_events(&conversation.id, first, &conversation.events[first..]);
        Ok(())
    }

    fn seal_events(&self, id: &str, first: usize, events: &[ConversationEvent]) {
        let Some(path) = self.file(id, "seals") else {
            return;
        };
        let mut lines = String::new();
        for (offset, event) in events.iter().enumerate() {
            let index = first + offset;
            let Some(seal) = self
                .event_message(id, index, event)
                .zip(self.key.as_ref())
                .map(|(message, key)| seal::seal(key, &message))
            else {
                return;
            };
            lines.push_str(&format!("{index} {seal}\n"));
        }
        if let Err(e) = append_private(&path, lines.as_bytes()) {
            tracing::warn!(
                "cannot keep the seals of conversation {id} at {}: {e}",
                path.display()
            );
        }
    }

    /// For each of `conversation`'s events, whether this user's jp
    /// recorded it in this workspace, at that place in the log.
    #[must_use]
    pub fn ours(&self, conversation: &Conversation) -> Vec<bool> {
        let id = conversation.id.as_str();
        let events = &conversation.events;
        let seals = self.seals(id, events.len());
        events
            .iter()
            .enumerate()
            .map(|(index, event)| {
                seals.get(&index).is_some_and(|candidates| {
                    self.event_message(id, index, event).is_some_and(|message| {
                        self.key.as_ref().is_some_and(|key| {
                            candidates.iter().any(|s| seal::verify(key, &message, s))
                        })
                    })
                })
            })
            .collect()
    }

    /// The events of `conversation` this user's jp recorded here, in
    /// order, outside the turns this user took back
    /// ([`view::live`](jp_conversation::view::live)): the history that may
    /// give authority.
    #[must_use]
    pub fn our_events(&self, conversation: &Conversation) -> Vec<ConversationEvent> {
        let ours = self.ours(conversation);
        let live = jp_conversation::view::live(&conversation.events, Some(&ours));
        conversation
            .events
            .iter()
            .zip(ours)
            .zip(live)
            .filter(|((_, ours), live)| *ours && *live)
            .map(|((event, _), _)| event.clone())
            .collect()
    }

    /// The seals kept for conversation `id`, by place; at most as many
    /// lines are read as a log of `events` events can have had sealed.
    fn seals(&self, id: &str, events: usize) -> HashMap<usize, Vec<String>> {
        let mut out: HashMap<usize, Vec<String>> = HashMap::new();
        let Some(path) = self.file(id, "seals") else {
            return out;
        };
        let Ok(file) = std::fs::File::open(&path) else {
            return out;
        };
        // Room for each event sealed twice (a log cut back and written
        // again); beyond that, what is left unread seals nothing.
        let limit = (events as u64 + 1).saturating_mul(2 * SEAL_LINE_BYTES);
        let mut text = String::new();
        if file.take(limit).read_to_string(&mut text).is_err() {
            return out;
        }
        for line in text.lines() {
            if let Some((index, seal)) = line.split_once(' ')
                && let Ok(index) = index.parse::<usize>()
                && index < events
            {
                out.entry(index).or_default().push(seal.to_owned());
            }
        }
        out
    }

    /// Forgets conversation `id`'s seals and approval generation (`jp
    /// conversation rm`): a later conversation with the same id starts
    /// with none.
    pub fn forget_conversation(&self, id: &str) {
        for extension in ["seals", "epoch"] {
            if let Some(path) = self.file(id, extension) {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    /// The conversation this user last made active in this workspace.
    #[must_use]
    pub fn chosen(&self) -> Option<String> {
        let path = self.dir.as_ref()?.join("active");
        read_small(&path).map(|text| text.trim().to_owned())
    }

    /// Notes that this user made conversation `id` the active one here.
    pub fn choose(&self, id: &str) {
        let Some(dir) = &self.dir else {
            return;
        };
        if let Err(e) = write_private(&dir.join("active"), id.as_bytes()) {
            tracing::warn!(
                "cannot note the active conversation in {}: {e}",
                dir.display()
            );
        }
    }

    /// Conversation `id`'s approval generation now, if it has one.
    fn epoch(&self, id: &str) -> Option<String> {
        read_small(&self.file(id, "epoch")?).map(|text| text.trim().to_owned())
    }

    /// Starts a new approval generation for conversation `id`: every
    /// approval given before approves nothing.
    ///
    /// # Errors
    ///
    /// When the user's config directory cannot be written (or there is
    /// none): the approvals may still be in force.
    pub fn new_epoch(&self, id: &str) -> std::io::Result<String> {
        let path = self.file(id, "epoch").ok_or_else(|| {
            std::io::Error::other("there is no user config directory to keep it in")
        })?;
        let epoch = seal::random_hex(16)?;
        write_private(&path, epoch.as_bytes())?;
        Ok(epoch)
    }

    /// What the seal of `approval` in conversation `id` covers: every
    /// field, the conversation and the workspace.
    fn approval_message(&self, id: &str, approval: &SessionApproval) -> Vec<u8> {
        serde_json::json!([
            "jp session approval v2",
            self.root,
            id,
            approval.epoch,
            approval.call_id,
            approval.tool,
            approval.rule,
            approval.rule_text,
            approval.scope,
        ])
        .to_string()
        .into_bytes()
    }

    /// `approval`, of the current generation and sealed for conversation
    /// `id` in this workspace. Without a key or a generation it stays
    /// unsealed (and approves nothing).
    #[must_use]
    pub fn seal_approval(&self, id: &str, mut approval: SessionApproval) -> SessionApproval {
        approval.epoch = self.epoch(id).or_else(|| {
            self.new_epoch(id)
                .map_err(|e| tracing::warn!("no approval generation for {id}: {e}"))
                .ok()
        });
        approval.seal = approval
            .epoch
            .is_some()
            .then(|| {
                self.key
                    .as_ref()
                    .map(|key| seal::seal(key, &self.approval_message(id, &approval)))
            })
            .flatten();
        approval
    }

    /// Whether `approval`, recorded in conversation `id`, is in force.
    #[must_use]
    pub fn approval_state(&self, id: &str, approval: &SessionApproval) -> ApprovalState {
        let sealed = approval
            .seal
            .as_deref()
            .zip(self.key.as_ref())
            .is_some_and(|(s, key)| seal::verify(key, &self.approval_message(id, approval), s));
        if !sealed || approval.epoch.is_none() {
            ApprovalState::NotTheUsers
        } else if approval.epoch != self.epoch(id) {
            ApprovalState::Forgotten
        } else {
            ApprovalState::InForce
        }
    }
}

/// The text of a small file of the user's (at most 4 KiB), if it reads.
fn read_small(path: &Path) -> Option<String> {
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// Creates `path`'s directory (mode 0700) if it is missing.
fn make_dir(path: &Path) -> std::io::Result<()> {
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn private_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Appends `bytes` to `path` (made mode 0600 if new), and syncs it.
fn append_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    make_dir(path)?;
    let mut file = private_options().create(true).append(true).open(path)?;
    file.write_all(bytes)?;
    file.sync_data()
}

/// Replaces `path` with `bytes` at once (a temporary file renamed over
/// it), mode 0600.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    make_dir(path)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = private_options()
        .create(true)
        .write(true)
        .truncate(true)
        .open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_data()?;
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
#[path = "ledger_tests.rs"]
mod tests;
