//! What the engine and the commands share about a conversation: opening
//! the active one, the config changes it records (each authorized again),
//! how it says what jp did to it, and how a conversation is named (an id,
//! a start of one, `last`) and listed (its age, whether it is the user's).

use std::process::ExitCode;

use jp_config::AppConfig;
use jp_conversation::{Conversation, ConversationLock, Store};
use jp_term::errln;

use crate::error::Error;
use crate::exit;
use crate::ledger::Ledger;

/// The id of the active conversation, if this user made it the active one
/// in this workspace: a `.jp/conversations/active` that came with the
/// repository (or another user wrote) names none.
#[must_use]
pub fn active_id(store: &Store, ledger: &Ledger) -> Option<String> {
    let id = store.active()?;
    (ledger.chosen().as_deref() == Some(id.as_str())).then_some(id)
}

/// The active conversation (locked), if there is one that this user made
/// active here. A conversation someone else made active (one committed
/// with the repository) is never continued silently: jp says so, and the
/// query starts a new one.
pub fn open_active(
    store: &Store,
    ledger: &Ledger,
) -> Result<Option<(Conversation, ConversationLock)>, Error> {
    if let Some(id) = store.active()
        && active_id(store, ledger).is_none()
    {
        jp_term::errln!(
            "warning: {} names conversation `{id}`, which you did not make active in this workspace (it came with the repository, or someone else set it); this query starts a new one (`jp conversation use {id}` continues it)",
            store.root().join("active").display()
        );
        return Ok(None);
    }
    let Some(id) = store.active() else {
        // `jp conversation rm` clears the marker; one left naming nothing
        // means the conversation went missing some other way.
        if let Some(gone) = store.active_marker() {
            jp_term::errln!(
                "warning: the active conversation `{gone}` is not in {} any more; this query starts a new one",
                store.root().display()
            );
        }
        return Ok(None);
    };
    let (conversation, lock) = store.open(&id).map_err(|e| match e {
        e @ jp_conversation::StoreError::Locked { .. } => Error::Store(e),
        e => Error::ActiveUnreadable(e),
    })?;
    warn_torn(&conversation);
    Ok(Some((conversation, lock)))
}

/// A conversation's config changes, each authorized again against `base`
/// (the config without them; see [`crate::recorded`]): the layers that
/// apply, oldest first, and the changes refused. Every reader of a
/// conversation's config goes through here.
#[must_use]
pub fn conversation_deltas(
    conversation: &Conversation,
    base: &AppConfig,
    ledger: &crate::ledger::Ledger,
) -> crate::recorded::Authorized {
    // A change made in a turn the user took back is taken back with it.
    let live = jp_conversation::view::live(&conversation.events, Some(&ledger.ours(conversation)));
    crate::recorded::authorized(conversation, base, &live)
}

/// Says on stderr that the conversation's unfinished last line was left
/// out. Every command that reads a conversation says it.
pub fn warn_torn(c: &Conversation) {
    if let Some(tail) = &c.torn_tail {
        jp_term::errln!("warning: {tail}");
    }
}

/// What stopping the stream early saved, for the user: `stopped the
/// stream after 2.1 KB of fs_create_file's arguments`, or, for a call that
/// had arrived whole (`whole`), `stopped the stream after fs_create_file's
/// call (2.1 KB, whole)`. The chrome says it when it happens; `jp
/// conversation show` says it again from the recorded
/// [`EventKind::StreamStopped`].
pub fn stopped_note(tool: &str, bytes: usize, whole: bool) -> String {
    if whole {
        format!(
            "stopped the stream after {tool}'s call ({}, whole)",
            human_bytes(bytes)
        )
    } else if bytes == 0 {
        format!("stopped the stream before {tool}'s arguments")
    } else {
        format!(
            "stopped the stream after {} of {tool}'s arguments",
            human_bytes(bytes)
        )
    }
}

/// `2.1 KB`, `512 B`: a size for people.
pub fn human_bytes(bytes: usize) -> String {
    #[allow(clippy::cast_precision_loss)]
    let kb = bytes as f64 / 1024.0;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if kb < 1024.0 {
        format!("{kb:.1} KB")
    } else {
        format!("{:.1} MB", kb / 1024.0)
    }
}

/// The id `arg` names: an id, the one id it starts, or (with `last`
/// allowed) `last`, the conversation with the latest activity. `Err` is
/// the exit code of a name that fits none or several, already reported.
pub fn resolve(store: &Store, arg: &str, last: bool) -> Result<String, ExitCode> {
    let ids = store.ids().unwrap_or_default();
    if last && arg == "last" {
        let latest = ids
            .iter()
            .filter_map(|id| Some((store.load(id).ok()?.last_activity_ms(), id)))
            .max()
            .map(|(_, id)| id.clone());
        return latest.ok_or_else(|| {
            errln!("error: there is no conversation yet; `jp query MESSAGE` starts one");
            ExitCode::from(exit::USAGE)
        });
    }
    if ids.iter().any(|id| id == arg) || arg.is_empty() {
        return Ok(arg.to_owned());
    }
    let matching: Vec<&String> = ids.iter().filter(|id| id.starts_with(arg)).collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        // The store says what is wrong with an id that names nothing.
        [] => Ok(arg.to_owned()),
        several => {
            let list = several
                .iter()
                .map(|id| id.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            errln!("error: `{arg}` starts more than one conversation id ({list}); give more of it");
            Err(exit::USAGE.into())
        }
    }
}

/// `5 min ago`, `3 h ago`, `2 days ago`: how long since `ms`, for a list.
pub fn age(now_ms: u64, ms: u64) -> String {
    let seconds = now_ms.saturating_sub(ms) / 1000;
    match seconds {
        0..60 => "just now".to_owned(),
        60..3_600 => format!("{} min ago", seconds / 60),
        3_600..86_400 => format!("{} h ago", seconds / 3_600),
        86_400..172_800 => "1 day ago".to_owned(),
        _ => format!("{} days ago", seconds / 86_400),
    }
}

/// What to say of a conversation that has events this user's jp did not
/// record in this workspace (it came with the repository, was copied from
/// another workspace, or was edited by hand): they give no authority.
pub fn from_elsewhere(ledger: &Ledger, conversation: &Conversation) -> Option<String> {
    let ours = ledger.ours(conversation);
    let theirs = ours.iter().filter(|ours| !**ours).count();
    if theirs == 0 {
        None
    } else if theirs == ours.len() {
        Some(
            "this conversation is from elsewhere: your jp did not record it in this workspace, so nothing in it counts as your history (no session approval, and no call a stateful policy looks for)"
                .to_owned(),
        )
    } else {
        Some(format!(
            "{theirs} of this conversation's {} events were not recorded by your jp in this workspace (added or changed by hand, or from elsewhere); they count as no part of your history (no session approval, and no call a stateful policy looks for)",
            ours.len()
        ))
    }
}
