//! `jp conversation`: list, show, switch and remove conversations.

use std::collections::HashSet;
use std::path::Path;
use std::process::ExitCode;

use clap_complete::ArgValueCandidates;

use jp_conversation::conversation::format_utc;
use jp_conversation::{Conversation, EventKind, Store, StoreError};

use super::format::Format;
use crate::conversation::{stopped_note, warn_torn};
use crate::exit;
use crate::printer::{cut, sanitize};
use crate::{errln, outln};

/// Prints a display line: stored text comes from models and tools, so its
/// control characters are made visible.
macro_rules! showln {
    ($($arg:tt)*) => {
        outln!("{}", sanitize(&format!($($arg)*)))
    };
}

/// `jp conversation`.
#[derive(Debug, clap::Subcommand)]
pub enum ConversationCmd {
    /// List the workspace's conversations, oldest first; `*` marks the
    /// active one.
    Ls,
    /// Print a conversation (the active one by default).
    Show {
        /// The conversation: its id, a unique start of it, or `last` (the
        /// one with the latest activity).
        #[arg(add = ArgValueCandidates::new(super::complete::conversations))]
        id: Option<String>,
        /// Output format (`json` prints the stored events).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Make a conversation the active one, which `jp query` continues.
    Use {
        /// The conversation: its id, a unique start of it, or `last` (the
        /// one with the latest activity).
        #[arg(add = ArgValueCandidates::new(super::complete::conversations))]
        id: String,
    },
    /// Forget every "allow for this session" answer (`a` at a call's
    /// prompt) given in a conversation (the active one by default): its
    /// later calls are asked about again, as the policy says.
    ForgetApprovals {
        /// The conversation: its id, a unique start of it, or `last` (the
        /// one with the latest activity).
        id: Option<String>,
    },
    /// Delete a conversation.
    Rm {
        /// The conversation: its id or a unique start of it.
        #[arg(add = ArgValueCandidates::new(super::complete::conversations))]
        id: String,
    },
}

impl ConversationCmd {
    /// Runs the command in the workspace around `cwd`.
    pub fn run(self, cwd: &Path) -> Result<ExitCode, crate::error::Error> {
        let Some(root) = jp_config::load::find_workspace_root(cwd) else {
            return Ok(crate::ctx::no_workspace(cwd));
        };
        let store = Store::new(&root);
        let result = match self {
            Self::Ls => ls(&store),
            Self::Show { id, format } => {
                match id.map(|id| resolve(&store, &id, true)).transpose() {
                    Ok(id) => show(&store, id, format),
                    Err(code) => return Ok(code),
                }
            }
            Self::Use { id } => match resolve(&store, &id, true) {
                Ok(id) => store.set_active(&id).map(|()| {
                    outln!("active conversation: {id}");
                }),
                Err(code) => return Ok(code),
            },
            Self::ForgetApprovals { id } => {
                match id.map(|id| resolve(&store, &id, true)).transpose() {
                    Ok(id) => forget_approvals(&store, id),
                    Err(code) => return Ok(code),
                }
            }
            Self::Rm { id } => match resolve(&store, &id, false) {
                Ok(id) => store.remove(&id).map(|()| {
                    outln!("removed conversation {id}");
                }),
                Err(code) => return Ok(code),
            },
        };
        match result {
            Ok(()) => Ok(ExitCode::SUCCESS),
            Err(error @ (StoreError::NotFound(_) | StoreError::BadId(_))) => {
                errln!("error: {error}");
                Ok(exit::USAGE.into())
            }
            Err(error) => Err(error.into()),
        }
    }
}

/// The id `arg` names: an id, the one id it starts, or (with `last`
/// allowed) `last`, the conversation with the latest activity. `Err` is
/// the exit code of a name that fits none or several, already reported.
fn resolve(store: &Store, arg: &str, last: bool) -> Result<String, ExitCode> {
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
fn age(now_ms: u64, ms: u64) -> String {
    let seconds = now_ms.saturating_sub(ms) / 1000;
    match seconds {
        0..60 => "just now".to_owned(),
        60..3_600 => format!("{} min ago", seconds / 60),
        3_600..86_400 => format!("{} h ago", seconds / 3_600),
        86_400..172_800 => "1 day ago".to_owned(),
        _ => format!("{} days ago", seconds / 86_400),
    }
}

fn ls(store: &Store) -> Result<(), StoreError> {
    let active = store.active();
    let ids = store.ids()?;
    if ids.is_empty() {
        outln!("no conversations yet; `jp query MESSAGE` starts one");
        return Ok(());
    }
    for id in ids {
        let marker = if active.as_deref() == Some(id.as_str()) {
            "*"
        } else {
            " "
        };
        match store.load(&id) {
            Ok(c) => {
                warn_torn(&c);
                // A turn is one `jp query` (a reply after "stop and reply"
                // is a message of the same turn), as `show` draws them.
                let turns = c
                    .events
                    .iter()
                    .filter(|e| matches!(e.kind, EventKind::TurnStart))
                    .count();
                let title = c.title().unwrap_or_else(|| "(untitled)".into());
                showln!(
                    "{marker} {id}  {:<12}  {turns} {}  {}",
                    age(
                        jp_conversation::conversation::now_ms(),
                        c.last_activity_ms()
                    ),
                    if turns == 1 { "turn " } else { "turns" },
                    cut(title.lines().next().unwrap_or_default(), 60)
                );
            }
            Err(error) => showln!("{marker} {id}  unreadable: {error}"),
        }
    }
    Ok(())
}

/// Records, in conversation `id` (the active one by default), that its
/// session approvals no longer apply; says how many there were.
fn forget_approvals(store: &Store, id: Option<String>) -> Result<(), StoreError> {
    let id = match id.or_else(|| store.active()) {
        Some(id) => id,
        None => return Err(StoreError::NoActive),
    };
    let (mut conversation, mut lock) = store.open(&id)?;
    let mut count = 0usize;
    for event in &conversation.events {
        match event.kind {
            EventKind::SessionApproval(_) => count += 1,
            EventKind::ApprovalsForgotten => count = 0,
            _ => {}
        }
    }
    if count == 0 {
        showln!("conversation {id} has no session approvals to forget");
        return Ok(());
    }
    lock.append(
        &mut conversation,
        [jp_conversation::ConversationEvent::now(
            EventKind::ApprovalsForgotten,
        )],
    )?;
    showln!(
        "forgot {count} session {} in conversation {id}: its later calls are asked about as the policy says",
        if count == 1 { "approval" } else { "approvals" }
    );
    Ok(())
}

fn show(store: &Store, id: Option<String>, format: Format) -> Result<(), StoreError> {
    let id = match id.or_else(|| store.active()) {
        Some(id) => id,
        None => return Err(StoreError::NoActive),
    };
    let conversation = store.load(&id)?;
    warn_torn(&conversation);
    match format {
        Format::Json => {
            let usage = jp_conversation::UsageTotals::of(&conversation.events);
            let mut json = serde_json::to_value(Conversation {
                // The stored title, or the one the first message gives.
                title: conversation.title(),
                ..conversation
            })
            .unwrap_or_default();
            // The totals, beside the events they come from.
            if let Some(object) = json.as_object_mut() {
                object.insert(
                    "usage".into(),
                    serde_json::to_value(usage).unwrap_or_default(),
                );
            }
            crate::printer::stdout_json(&serde_json::to_string_pretty(&json).unwrap_or_default());
        }
        Format::Text => print_text(&conversation),
    }
    Ok(())
}

fn print_text(c: &Conversation) {
    showln!(
        "conversation {} · {}",
        c.id,
        c.title().as_deref().unwrap_or("(untitled)")
    );
    // Calls jp stopped reading (RFD D26): their arguments are cut short
    // because jp closed the stream, not because the model truncated them,
    // so they show what had completed and the note that follows them.
    let stopped: HashSet<&str> = c
        .events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::StreamStopped { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    for event in &c.events {
        match &event.kind {
            EventKind::TurnStart => showln!("\n── turn · {} ──", format_utc(event.at_ms)),
            EventKind::ChatRequest { content } => showln!("you: {content}"),
            EventKind::AssistantMessage { content } => showln!("assistant: {}", content.trim_end()),
            EventKind::AssistantReasoning { content } => {
                showln!("reasoning: {}", cut(content.trim_end(), 200));
            }
            EventKind::ToolCallRequest(call) => {
                let args = serde_json::Value::Object(call.received_arguments().clone());
                let invalid = call
                    .error()
                    .filter(|_| !stopped.contains(call.id.as_str()))
                    .map(|e| format!(" [unusable: {e}]"))
                    .unwrap_or_default();
                showln!(
                    "tool call {} {}({}){invalid}",
                    call.id,
                    call.name,
                    cut(&args.to_string(), 200)
                );
            }
            EventKind::StreamStopped {
                tool, bytes, whole, ..
            } => {
                showln!("  {}", stopped_note(tool, *bytes, *whole));
            }
            // Summed below.
            EventKind::Usage(_) => {}
            EventKind::SessionApproval(approval) if !crate::seal::verifies(&c.id, approval) => {
                showln!(
                    "not an approval: a session approval of {} calls that your key did not seal (written into the log by someone else, or by another user); it approves nothing",
                    approval.tool
                );
            }
            EventKind::SessionApproval(approval) => showln!(
                "allowed for this session: {} calls that policy.run{} ({}) asks about (at {}; `jp conversation forget-approvals` undoes it)",
                approval.tool,
                approval
                    .rule
                    .map_or_else(|| " (no rule)".to_owned(), |rule| format!("[{rule}]")),
                approval.rule_text,
                approval.call_id
            ),
            EventKind::ApprovalsForgotten => {
                showln!("session approvals forgotten: later calls are asked about again");
            }
            EventKind::ToolCallResponse(response) => showln!(
                "tool result {} [{}]: {}",
                response.id,
                response.status.as_str(),
                cut(response.content.lines().next().unwrap_or(""), 200)
            ),
            EventKind::ConfigDelta(delta) => {
                let by = if !delta.flags.is_empty() {
                    format!(" by the query's flags ({})", delta.flags.join(" "))
                } else if delta.tools.is_empty() {
                    String::new()
                } else {
                    format!(" by {}", delta.tools.join(", "))
                };
                showln!("config changed{by}:");
                let set = serde_json::Value::Object(delta.delta.clone());
                for (path, value) in jp_config::delta::leaves(&set) {
                    showln!("  {path} = {}", cut(&value.to_string(), 200));
                }
                for path in &delta.unsets {
                    showln!("  {path} (unset)");
                }
            }
            EventKind::PolicyDenied(denial) => {
                let details = if denial.metadata.is_empty() {
                    String::new()
                } else {
                    format!(" {}", serde_json::Value::Object(denial.metadata.clone()))
                };
                showln!(
                    "policy {} denied {} {}: {}{}",
                    denial.policy,
                    denial.id,
                    denial.tool,
                    cut(&denial.reason, 200),
                    cut(&details, 200)
                );
            }
        }
    }
    if let Some(total) = crate::usage::total_line(&c.events) {
        showln!("\n{total}");
    }
}
