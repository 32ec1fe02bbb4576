//! `jp conversation`: list, show, switch and remove conversations.

use std::collections::HashSet;
use std::process::ExitCode;

use clap_complete::ArgValueCandidates;

use jp_conversation::conversation::format_utc;
use jp_conversation::{Conversation, EventKind, Store, StoreError};

use super::format::Format;
use crate::conversation::{age, from_elsewhere, resolve, stopped_note, warn_torn};
use crate::exit;
use crate::ledger::{ApprovalState, Ledger};
use jp_term::printer::{cut, sanitize};
use jp_term::{errln, outln};

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
    /// List the conversations here (the workspace's, or outside one the
    /// current directory's), oldest first; `*` marks the active one.
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
    /// The tokens and cost of a conversation so far (the active one by
    /// default): in all, by model, and what rewound turns cost.
    Cost {
        /// The conversation: its id, a unique start of it, or `last` (the
        /// one with the latest activity).
        #[arg(add = ArgValueCandidates::new(super::complete::conversations))]
        id: Option<String>,
    },
    /// How each tool call of a conversation (the active one by default)
    /// was decided: the rule (key, file, line) and mode, how much of its
    /// arguments had arrived then, who settled it and how, what became of
    /// it, and whether jp stopped the stream at it.
    Decisions {
        /// The conversation: its id, a unique start of it, or `last` (the
        /// one with the latest activity).
        #[arg(add = ArgValueCandidates::new(super::complete::conversations))]
        id: Option<String>,
        /// Output format (`json`: one array of the calls).
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
    /// Take back the last turn (or the last N, or every turn from
    /// `--to TURN` on): put back the files their calls changed, and leave
    /// the turns out of what the model is sent from now on. The log keeps
    /// them (`jp conversation show` marks them rewound).
    Rewind {
        /// How many of the newest turns to take back.
        #[arg(conflicts_with = "to")]
        count: Option<usize>,
        /// Take back turn TURN (as `jp conversation show` numbers them)
        /// and every turn after it.
        #[arg(long, value_name = "TURN")]
        to: Option<usize>,
        /// Leave files that cannot be put back (changed since by something
        /// other than jp, or not kept) as they are, and rewind the rest.
        #[arg(long)]
        force: bool,
        /// Do not ask (needed without a terminal).
        #[arg(long, short)]
        yes: bool,
        /// The conversation (the active one by default): its id, a unique
        /// start of it, or `last`.
        #[arg(long, add = ArgValueCandidates::new(super::complete::conversations))]
        conversation: Option<String>,
    },
    /// Summarise a conversation's older turns (the active one's by
    /// default): the summary is sent in their place from then on, and the
    /// conversation keeps them.
    Compact(crate::compact::Compact),
    /// Delete a conversation.
    Rm {
        /// The conversation: its id or a unique start of it.
        #[arg(add = ArgValueCandidates::new(super::complete::conversations))]
        id: String,
    },
}

impl ConversationCmd {
    /// Runs the command in the workspace around `cwd`, or on the
    /// conversations of `cwd` when it is in none ([`crate::place`]).
    pub fn run(self, ctx: &crate::ctx::Ctx) -> Result<ExitCode, crate::error::Error> {
        let place = match crate::place::Place::of(ctx) {
            Ok(place) => crate::place::settle(place),
            Err(why) => {
                errln!("error: {why}");
                return Ok(exit::USAGE.into());
            }
        };
        let root = place.root().to_path_buf();
        let store = place.store()?;
        let ledger = Ledger::new(&root);
        let result = match self {
            Self::Ls => ls(&store, &ledger),
            Self::Show { id, format } => {
                match id.map(|id| resolve(&store, &id, true)).transpose() {
                    Ok(id) => show(&store, &ledger, id, format),
                    Err(code) => return Ok(code),
                }
            }
            Self::Cost { id } => match id.map(|id| resolve(&store, &id, true)).transpose() {
                Ok(id) => cost(&store, &ledger, id),
                Err(code) => return Ok(code),
            },
            Self::Decisions { id, format } => {
                match id.map(|id| resolve(&store, &id, true)).transpose() {
                    Ok(id) => decisions(&store, &ledger, id, format),
                    Err(code) => return Ok(code),
                }
            }
            Self::Use { id } => match resolve(&store, &id, true) {
                Ok(id) => use_conversation(&store, &ledger, &id),
                Err(code) => return Ok(code),
            },
            Self::ForgetApprovals { id } => {
                match id.map(|id| resolve(&store, &id, true)).transpose() {
                    Ok(id) => forget_approvals(&store, &ledger, id),
                    Err(code) => return Ok(code),
                }
            }
            Self::Rewind {
                count,
                to,
                force,
                yes,
                conversation,
            } => {
                let id = match conversation
                    .map(|id| resolve(&store, &id, true))
                    .transpose()
                {
                    Ok(Some(id)) => Some(id),
                    Ok(None) => crate::conversation::active_id(&store, &ledger),
                    Err(code) => return Ok(code),
                };
                let asked = crate::rewind::Asked {
                    count,
                    to,
                    force,
                    yes,
                };
                match id.map(|id| crate::rewind::run(&store, &ledger, &root, &id, asked)) {
                    Some(Ok(code)) => return Ok(code),
                    Some(Err(error)) => Err(error),
                    None => Err(StoreError::NoActive),
                }
            }
            Self::Compact(compact) => {
                return match compact
                    .id
                    .as_deref()
                    .map(|id| resolve(&store, id, true))
                    .transpose()
                {
                    Ok(id) => compact.run(ctx, &root, id),
                    Err(code) => Ok(code),
                };
            }
            Self::Rm { id } => match resolve(&store, &id, false) {
                Ok(id) => store.remove(&id).map(|()| {
                    ledger.forget_conversation(&id);
                    crate::blobs::forget(&root, &id);
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

/// `jp conversation use ID`: the user chooses conversation `id`, theirs
/// or one from elsewhere (said), as the one `jp query` continues.
fn use_conversation(store: &Store, ledger: &Ledger, id: &str) -> Result<(), StoreError> {
    store.set_active(id)?;
    ledger.choose(id);
    outln!("active conversation: {id}");
    // One that does not read says so when it is used.
    if let Ok(conversation) = store.load(id)
        && let Some(note) = from_elsewhere(ledger, &conversation)
    {
        showln!("note: {note}");
    }
    Ok(())
}

fn ls(store: &Store, ledger: &Ledger) -> Result<(), StoreError> {
    let active = crate::conversation::active_id(store, ledger);
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
                // Not one event of it is the user's: say so.
                let elsewhere = if c.events.is_empty() || ledger.ours(&c).contains(&true) {
                    ""
                } else {
                    "(from elsewhere) "
                };
                showln!(
                    "{marker} {id}  {:<12}  {turns} {}  {elsewhere}{}",
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
fn forget_approvals(store: &Store, ledger: &Ledger, id: Option<String>) -> Result<(), StoreError> {
    let id = match id.or_else(|| crate::conversation::active_id(store, ledger)) {
        Some(id) => id,
        None => return Err(StoreError::NoActive),
    };
    let (mut conversation, mut lock) = store.open(&id)?;
    let count = conversation
        .events
        .iter()
        .filter(|event| {
            matches!(&event.kind, EventKind::SessionApproval(approval)
                if ledger.approval_state(&id, approval) == ApprovalState::InForce)
        })
        .count();
    if count == 0 {
        showln!("conversation {id} has no session approvals to forget");
        return Ok(());
    }
    // The revocation that holds: a new approval generation, kept in the
    // user's config directory; the line in the log only says so.
    ledger.new_epoch(&id).map_err(|source| StoreError::Io {
        action: "cannot start a new approval generation (kept in your config directory) for",
        path: store.root().join(&id),
        source,
    })?;
    ledger.append(
        &mut lock,
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

/// Conversation `id` (the active one by default), read (a torn last line
/// said).
fn load(store: &Store, ledger: &Ledger, id: Option<String>) -> Result<Conversation, StoreError> {
    let id = id
        .or_else(|| crate::conversation::active_id(store, ledger))
        .ok_or(StoreError::NoActive)?;
    let conversation = store.load(&id)?;
    warn_torn(&conversation);
    Ok(conversation)
}

/// `jp conversation cost`: what conversation `id` (the active one by
/// default) has used and cost so far.
fn cost(store: &Store, ledger: &Ledger, id: Option<String>) -> Result<(), StoreError> {
    let conversation = load(store, ledger, id)?;
    let id = conversation.id.clone();
    showln!(
        "conversation {id} · {}",
        cut(
            conversation
                .title()
                .as_deref()
                .unwrap_or("(untitled)")
                .lines()
                .next()
                .unwrap_or_default(),
            60
        )
    );
    let ours = ledger.ours(&conversation);
    for line in crate::usage::cost_lines(&conversation.events, Some(&ours)) {
        showln!("{line}");
    }
    Ok(())
}

/// `jp conversation decisions`: how each call of conversation `id` (the
/// active one by default) was decided.
fn decisions(
    store: &Store,
    ledger: &Ledger,
    id: Option<String>,
    format: Format,
) -> Result<(), StoreError> {
    let conversation = load(store, ledger, id)?;
    let id = conversation.id.clone();
    let rows = super::decisions::Row::all(&conversation.events);
    if format == Format::Json {
        let rows: Vec<_> = rows.iter().map(super::decisions::Row::json).collect();
        outln!("{}", serde_json::Value::Array(rows));
        return Ok(());
    }
    if rows.is_empty() {
        showln!(
            "conversation {id}: no decisions recorded (it made no tool calls, or they were made before jp recorded how it decided them)"
        );
    }
    for line in rows.iter().flat_map(super::decisions::Row::lines) {
        showln!("{line}");
    }
    Ok(())
}

fn show(
    store: &Store,
    ledger: &Ledger,
    id: Option<String>,
    format: Format,
) -> Result<(), StoreError> {
    let conversation = load(store, ledger, id)?;
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
            jp_term::printer::stdout_json(&serde_json::to_string_pretty(&json).unwrap_or_default());
        }
        Format::Text => print_text(ledger, &conversation),
    }
    Ok(())
}

fn print_text(ledger: &Ledger, c: &Conversation) {
    showln!(
        "conversation {} · {}",
        c.id,
        c.title().as_deref().unwrap_or("(untitled)")
    );
    if let Some(note) = from_elsewhere(ledger, c) {
        showln!("note: {note}");
    }
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
    let recovery = Recovery::of(ledger, c);
    for (index, event) in c.events.iter().enumerate() {
        match &event.kind {
            EventKind::TurnStart
            | EventKind::FileChange(_)
            | EventKind::ChangesNotKept(_)
            | EventKind::Rewind(_)
            | EventKind::Compaction(_) => recovery.show(index, event),
            EventKind::Attachments { items } => {
                for item in items {
                    showln!(
                        "attached: {} ({} bytes, sha256 {})",
                        item.source,
                        item.bytes,
                        item.sha256
                    );
                }
            }
            // The attachments' text is in the message; the lines above
            // name each.
            EventKind::ChatRequest { content } => {
                showln!("you: {}", jp_conversation::attachment::written(content));
            }
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
            // Listed by `jp conversation decisions`.
            EventKind::CallDecision(_) => {}
            EventKind::SessionApproval(approval) => {
                showln!("{}", approval_line(ledger, &c.id, approval));
            }
            EventKind::ApprovalsForgotten => {
                showln!("session approvals forgotten: later calls are asked about again");
            }
            EventKind::ToolCallResponse(response) => showln!(
                "tool result {} [{}]: {}",
                response.id,
                response.status.as_str(),
                cut(response.content.lines().next().unwrap_or(""), 200)
            ),
            EventKind::ConfigDelta(delta) => show_delta(delta),
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

/// How `show` lists a config change.
fn show_delta(delta: &jp_conversation::ConfigDelta) {
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

/// What `show` needs to number turns and say what recovery did to them
/// (issue 38): only the user's own rewinds and compactions count.
struct Recovery {
    turns: Vec<usize>,
    ours: Vec<bool>,
    rewound: std::collections::BTreeSet<usize>,
    /// The turns before this place are sent as a summary.
    summarised: usize,
}

impl Recovery {
    fn of(ledger: &Ledger, c: &Conversation) -> Self {
        let ours = ledger.ours(c);
        Self {
            turns: jp_conversation::view::turn_starts(&c.events),
            rewound: jp_conversation::view::rewound(&c.events, Some(&ours)),
            summarised: jp_conversation::view::compaction(&c.events, Some(&ours))
                .map_or(0, |(_, s)| s.upto),
            ours,
        }
    }

    /// What a recovery line adds when someone else recorded it.
    fn ignored(&self, index: usize) -> &'static str {
        if self.ours.get(index).copied().unwrap_or(false) {
            ""
        } else {
            " (not recorded by you here: ignored)"
        }
    }

    /// Shows a turn's start or a recovery event, at `index` in the log.
    fn show(&self, index: usize, event: &jp_conversation::ConversationEvent) {
        match &event.kind {
            EventKind::TurnStart => {
                let number = self.turns.partition_point(|&start| start < index) + 1;
                let state = if self.rewound.contains(&index) {
                    " · rewound"
                } else if index < self.summarised {
                    " · summarised"
                } else {
                    ""
                };
                showln!("\n── turn {number} · {}{state} ──", format_utc(event.at_ms));
            }
            EventKind::FileChange(change) => {
                showln!("  {} {}", crate::rewind::change_word(change), change.path);
            }
            EventKind::ChangesNotKept(not_kept) => showln!(
                "  {} may have changed files jp did not keep: {}",
                not_kept.tool,
                not_kept.reason
            ),
            EventKind::Rewind(rewind) => showln!(
                "{}{}",
                crate::rewind::rewind_line(rewind, &self.turns),
                self.ignored(index)
            ),
            EventKind::Compaction(compaction) => {
                let upto = self.turns.partition_point(|&start| start < compaction.upto);
                let edited = if compaction.edited { ", edited" } else { "" };
                showln!(
                    "── summary of {} by {}{edited}: sent from here on in their place{} ──",
                    crate::rewind::turn_range(1..=upto),
                    compaction.model,
                    self.ignored(index)
                );
                for line in compaction.summary.lines() {
                    showln!("  {line}");
                }
            }
            _ => {}
        }
    }
}

/// What an approval's scope covers, for `show`: `fs_create_file calls on
/// paths at or below "notes"`, `run_command calls of "cargo test ..."`.
fn approval_scope(scope: &jp_conversation::ApprovalScope, tool: &str) -> String {
    let described = crate::query::tools::scope::describe(scope, tool);
    match scope {
        jp_conversation::ApprovalScope::Command { .. } => format!("{tool} calls of {described}"),
        jp_conversation::ApprovalScope::Paths { .. } => described,
        jp_conversation::ApprovalScope::Call { .. } => format!("{tool}: {described}"),
    }
}

/// How `show` lists a session approval of conversation `id`: in force,
/// forgotten, or not the user's.
fn approval_line(ledger: &Ledger, id: &str, approval: &jp_conversation::SessionApproval) -> String {
    match ledger.approval_state(id, approval) {
        ApprovalState::NotTheUsers => format!(
            "not an approval: a session approval of {} calls that your key did not seal for this workspace (written into the log by someone else, by another user, or in another workspace); it approves nothing",
            approval.tool
        ),
        state => format!(
            "{}: {} that policy.run{} ({}) asks about (at {}; {})",
            if state == ApprovalState::InForce {
                "allowed for this session"
            } else {
                "was allowed for this session"
            },
            approval.scope.as_ref().map_or_else(
                || format!("no {} calls (recorded without a scope)", approval.tool),
                |scope| approval_scope(scope, &approval.tool)
            ),
            approval
                .rule
                .map_or_else(|| " (no rule)".to_owned(), |rule| format!("[{rule}]")),
            approval.rule_text,
            approval.call_id,
            if state == ApprovalState::InForce {
                "`jp conversation forget-approvals` undoes it"
            } else {
                "forgotten by `jp conversation forget-approvals`: it approves nothing"
            }
        ),
    }
}
