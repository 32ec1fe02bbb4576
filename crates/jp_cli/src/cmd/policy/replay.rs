//! `jp policy replay`: every tool call recorded in a conversation decided
//! again, without running anything, under the config as it is ("now") and
//! with the `--cfg` changes on top ("with the change"); the calls whose
//! decision would change are listed, and the exit code says whether any
//! would become less strict, so a policy change can be gated in CI.
//!
//! A call is decided as a query's [`Judge`] decides it once its arguments
//! are complete (the policy, then what holds a call back: no kernel
//! sandbox, no workspace), with no one to answer and no session approval,
//! and then, as right before it would run, by the stateful policies
//! (`conversation.policies`) told the conversation up to that point.

use std::path::Path;
use std::process::ExitCode;

use jp_config::AppConfig;
use jp_config::load::Loaded;
use jp_config::tool::effective::effective_policy;
use jp_conversation::{
    Conversation, ConversationEvent, EventKind, ResponseStatus, ToolCallRequest,
};
use jp_policy::{Mode, PolicyField};
use serde_json::{Map, Value};

use crate::cmd::format::Format;
use crate::ctx::{Ctx, print_load_error};
use crate::exit;
use crate::ledger::Ledger;
use crate::query::decision::{Decided, Verdict};
use crate::query::tools::judge::Judge;
use crate::stateful::StatefulPolicies;

/// What a call comes to, in strictness order ([`Kind::rank`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// It runs without asking.
    Unattended,
    /// The user is asked first.
    Ask,
    /// The arguments open in an editor first.
    Edit,
    /// The policy skips it.
    Skip,
    /// A stateful policy denies it.
    Declined,
    /// It cannot run: no such tool, or arguments that do not fit it.
    Refused,
    /// Its arguments were cut short (jp stopped the stream) before they
    /// decided it: what the rest would have decided cannot be told.
    Undecided,
}

impl Kind {
    /// How strict: `unattended` < `ask` < `edit` (as the policy modes are
    /// ordered, architecture decision 5) < not run (`skip`, `declined`,
    /// `refused` alike: the call does not run); `None` for `undecided`.
    #[must_use]
    pub const fn rank(self) -> Option<u8> {
        match self {
            Self::Unattended => Some(0),
            Self::Ask => Some(1),
            Self::Edit => Some(2),
            Self::Skip | Self::Declined | Self::Refused => Some(3),
            Self::Undecided => None,
        }
    }

    /// The word the output uses.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Unattended => "unattended",
            Self::Ask => "ask",
            Self::Edit => "edit",
            Self::Skip => "skip",
            Self::Declined => "declined",
            Self::Refused => "refused",
            Self::Undecided => "undecided",
        }
    }

    const fn of(mode: Mode) -> Self {
        match mode {
            Mode::Unattended => Self::Unattended,
            Mode::Ask => Self::Ask,
            Mode::Edit => Self::Edit,
            Mode::Skip => Self::Skip,
        }
    }
}

/// What a call comes to under one config, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub kind: Kind,
    pub reason: String,
}

/// How a call's decision changes with the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The same decision.
    Unchanged,
    /// Stricter: runs less freely.
    Stricter,
    /// Less strict: runs more freely.
    LessStrict,
    /// Another decision that is as strict (`skip` and `declined`: it
    /// still does not run).
    AsStrict,
    /// One side is `undecided`, the other not: it may be either.
    CannotTell,
}

impl Change {
    /// The change from `now` to `with`.
    #[must_use]
    pub fn of(now: Kind, with: Kind) -> Self {
        use std::cmp::Ordering;
        if now == with {
            return Self::Unchanged;
        }
        let (Some(now), Some(with)) = (now.rank(), with.rank()) else {
            return Self::CannotTell;
        };
        match with.cmp(&now) {
            Ordering::Greater => Self::Stricter,
            Ordering::Less => Self::LessStrict,
            Ordering::Equal => Self::AsStrict,
        }
    }

    const fn as_str(self) -> &'static str {
        match self {
            Self::Unchanged => "unchanged",
            Self::Stricter => "stricter",
            Self::LessStrict => "less_strict",
            Self::AsStrict => "as_strict",
            Self::CannotTell => "cannot_tell",
        }
    }
}

/// One recorded call decided again under both configs.
#[derive(Debug, Clone, PartialEq)]
pub struct Replayed {
    /// The turn it was made in, as `jp conversation show` numbers them.
    pub turn: usize,
    pub id: String,
    pub tool: String,
    /// The arguments decided on: those it ran with, when the user edited
    /// them, else those the model sent.
    pub arguments: Map<String, Value>,
    pub now: Outcome,
    pub with: Outcome,
}

impl Replayed {
    #[must_use]
    pub fn change(&self) -> Change {
        Change::of(self.now.kind, self.with.kind)
    }

    /// The line for a call whose decision changes.
    #[must_use]
    pub fn line(&self) -> String {
        let args = self
            .arguments
            .iter()
            .map(|(key, value)| format!("{key}: {value}"))
            .collect::<Vec<_>>()
            .join(", ");
        jp_term::printer::sanitize(&format!(
            "turn {} · call {} {}({}) : {} → {} ({})",
            self.turn,
            self.id,
            self.tool,
            jp_term::printer::cut(&args, 80),
            self.now.kind.as_str(),
            self.with.kind.as_str(),
            self.with.reason
        ))
        .into_owned()
    }
}

/// How many calls changed which way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub calls: usize,
    pub stricter: usize,
    pub less_strict: usize,
    pub as_strict: usize,
    pub cannot_tell: usize,
    pub unchanged: usize,
}

impl Summary {
    #[must_use]
    pub fn of(calls: &[Replayed]) -> Self {
        let mut out = Self {
            calls: calls.len(),
            ..Self::default()
        };
        for call in calls {
            match call.change() {
                Change::Unchanged => out.unchanged += 1,
                Change::Stricter => out.stricter += 1,
                Change::LessStrict => out.less_strict += 1,
                Change::AsStrict => out.as_strict += 1,
                Change::CannotTell => out.cannot_tell += 1,
            }
        }
        out
    }

    /// `12 calls re-decided: 2 stricter, 1 less strict, 9 unchanged`.
    #[must_use]
    pub fn line(&self) -> String {
        let as_strict = if self.as_strict == 0 {
            String::new()
        } else {
            format!(", {} as strict for another reason", self.as_strict)
        };
        let cannot_tell = if self.cannot_tell == 0 {
            String::new()
        } else {
            format!(
                ", {} cannot be told (arguments cut short)",
                self.cannot_tell
            )
        };
        format!(
            "{} {} re-decided: {} stricter, {} less strict{as_strict}{cannot_tell}, {} unchanged",
            self.calls,
            if self.calls == 1 { "call" } else { "calls" },
            self.stricter,
            self.less_strict,
            self.unchanged
        )
    }

    /// 1 when a call would become less strict, or may (it cannot be told:
    /// fail closed), else 0.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        u8::from(self.less_strict + self.cannot_tell > 0)
    }
}

/// A recorded call to decide again: where it is, the turn it is in, and
/// the request with the arguments it ran with.
struct Recorded {
    turn: usize,
    call: ToolCallRequest,
    /// How many of the events before it count as its history: those
    /// before its response (before it when it has none), as the stateful
    /// policies knew them right before it would run.
    before: usize,
    /// Whether jp stopped the stream before its arguments were complete
    /// (it was decided on those that had arrived).
    cut: bool,
}

/// The calls recorded in `events`, in order, but those `live` (one flag
/// per event) leaves out: a turn taken back is no part of the conversation
/// any more.
fn recorded_calls(events: &[ConversationEvent], live: &[bool]) -> Vec<Recorded> {
    let mut out = Vec::new();
    let mut turn = 0;
    for (index, event) in events.iter().enumerate() {
        match &event.kind {
            EventKind::TurnStart => turn += 1,
            EventKind::ToolCallRequest(call) if live.get(index).copied().unwrap_or(true) => {
                let response = events[index + 1..]
                    .iter()
                    .enumerate()
                    .find_map(|(at, e)| match &e.kind {
                        EventKind::ToolCallResponse(r) if r.id == call.id => Some((at, r)),
                        _ => None,
                    });
                let edited = response
                    .and_then(|(_, r)| r.ran.as_ref())
                    .and_then(|ran| ran.arguments.clone());
                let call = match edited {
                    Some(arguments) => {
                        ToolCallRequest::new(call.id.clone(), call.name.clone(), arguments)
                    }
                    None => call.clone(),
                };
                let cut = call.error().is_some()
                    && events.iter().any(|e| {
                        matches!(&e.kind, EventKind::StreamStopped { call_id, .. } if *call_id == call.id)
                    });
                out.push(Recorded {
                    turn: turn.max(1),
                    call,
                    before: response.map_or(index, |(at, _)| index + 1 + at),
                    cut,
                });
            }
            _ => {}
        }
    }
    out
}

/// What a verdict that does not run a call of `name` comes to.
fn not_run(name: &str, response: &jp_conversation::ToolCallResponse, note: &str) -> Outcome {
    Outcome {
        kind: if response.status == ResponseStatus::Skipped {
            Kind::Skip
        } else {
            Kind::Refused
        },
        reason: note
            .strip_prefix(&format!("{name}: "))
            .unwrap_or(note)
            .to_owned(),
    }
}

/// Decides `call` under `config` (whose judge is `judge`), the stateful
/// policies told `history`: as a query decides it once its arguments are
/// complete, with no one to answer and no session approval.
fn decide(
    config: &AppConfig,
    judge: &Judge<'_>,
    call: &ToolCallRequest,
    history: &[ConversationEvent],
) -> Result<Outcome, crate::error::Error> {
    let name = call.name.as_str();
    let outcome = match judge.decide_after(call, true, None) {
        Decided::Ask(ask) => Outcome {
            kind: Kind::of(ask.mode()),
            reason: ask.why().to_owned(),
        },
        Decided::Now(Verdict::Run { mode, reason, .. }) => Outcome {
            kind: Kind::of(mode),
            reason,
        },
        Decided::Now(Verdict::NotRun { response, note }) => not_run(name, &response, &note),
    };
    let arguments = call.arguments().ok().cloned().unwrap_or_default();
    stateful(config, judge, name, (&arguments, false), history, outcome)
}

/// Decides `call`, whose arguments were cut short when jp stopped the
/// stream, on the top-level arguments that had arrived, as the streaming
/// decision does ([`Judge::early`]); `undecided` when they do not decide
/// it under `config`.
fn decide_cut(
    config: &AppConfig,
    judge: &Judge<'_>,
    call: &ToolCallRequest,
    history: &[ConversationEvent],
) -> Result<Outcome, crate::error::Error> {
    let name = call.name.as_str();
    if let Some(Verdict::NotRun { response, note }) = judge.not_offered(&call.id, name) {
        return Ok(not_run(name, &response, &note));
    }
    let arrived = call.received_arguments();
    let policy = effective_policy(config, name, PolicyField::Run).and_then(|(_, c)| c.policy);
    let Some(decision) = policy.and_then(|p| streamed(p, arrived, judge.workspace())) else {
        return Ok(Outcome {
            kind: Kind::Undecided,
            reason: "its arguments were cut short (jp stopped the stream) before they decided it"
                .to_owned(),
        });
    };
    let known = |key: &str| arrived.get(key).cloned();
    let outcome = match judge.early(&call.id, name, decision, true, &known) {
        Ok(decision) => Outcome {
            kind: Kind::of(decision.mode),
            reason: decision.reason,
        },
        Err(verdict) => match *verdict {
            Verdict::NotRun { response, note } => not_run(name, &response, &note),
            Verdict::Run { mode, reason, .. } => Outcome {
                kind: Kind::of(mode),
                reason,
            },
        },
    };
    stateful(config, judge, name, (arrived, true), history, outcome)
}

/// What `policy` decides while a call streams once the top-level
/// `arguments` (in their order) are complete, if it decides.
fn streamed(
    policy: jp_policy::Policy,
    arguments: &Map<String, Value>,
    workspace: &jp_policy::Workspace,
) -> Option<jp_policy::Decision> {
    let mut state = jp_policy::StreamingPolicyState::new(std::sync::Arc::new(policy));
    if let Some(decision) = state.decision() {
        return Some(decision.clone());
    }
    arguments
        .iter()
        .find_map(|(key, value)| state.parameter_done(key, value, workspace).cloned())
}

/// `outcome`, unless the stateful policies of `config`, told `history`,
/// deny the call of `name` with `arguments` (`partial`: only those that
/// arrived of a call cut short) as it would start: a call that runs or is
/// put to the user is declined then.
fn stateful(
    config: &AppConfig,
    judge: &Judge<'_>,
    name: &str,
    (arguments, partial): (&Map<String, Value>, bool),
    history: &[ConversationEvent],
    outcome: Outcome,
) -> Result<Outcome, crate::error::Error> {
    if matches!(outcome.kind, Kind::Skip | Kind::Refused | Kind::Undecided)
        || config.conversation.policies.is_empty()
    {
        return Ok(outcome);
    }
    let stateful = StatefulPolicies::replayed(
        config,
        judge.workspace().clone(),
        judge.stateful().resolved().clone(),
        history,
    )?;
    Ok(match stateful.check(name, arguments, partial) {
        Some(denial) => Outcome {
            kind: Kind::Declined,
            reason: format!("denied by {}: {}", denial.policy, denial.reason),
        },
        None => outcome,
    })
}

/// Every call of `conversation` decided again under `now` and `with`.
fn replay(
    conversation: &Conversation,
    ledger: &Ledger,
    root: &Path,
    now: &AppConfig,
    with: &AppConfig,
) -> Result<Vec<Replayed>, crate::error::Error> {
    let events = &conversation.events;
    // Only what this user's jp recorded here, outside turns taken back,
    // is history (as for a query: `Ledger::our_events`).
    let ours = ledger.ours(conversation);
    let live = jp_conversation::view::live(events, Some(&ours));
    let counted: Vec<usize> = (0..events.len())
        .filter(|&i| ours.get(i).copied().unwrap_or(false) && live[i])
        .collect();
    let history: Vec<ConversationEvent> = counted.iter().map(|&i| events[i].clone()).collect();
    let judge_now = Judge::new(now, root);
    let judge_with = Judge::new(with, root);
    recorded_calls(events, &live)
        .into_iter()
        .map(|recorded| {
            let known = &history[..counted.partition_point(|&i| i < recorded.before)];
            let call = &recorded.call;
            let decide = if recorded.cut { decide_cut } else { decide };
            Ok(Replayed {
                turn: recorded.turn,
                id: call.id.clone(),
                tool: call.name.clone(),
                arguments: call.received_arguments().clone(),
                now: decide(now, &judge_now, call, known)?,
                with: decide(with, &judge_with, call, known)?,
            })
        })
        .collect()
}

/// `jp policy replay [ID]`. Exit 1 says only that a call would become
/// less strict: whatever keeps the replay from being made (an unreadable
/// conversation too) is said and exits 2.
pub fn run(ctx: &Ctx, id: Option<String>, format: Format) -> ExitCode {
    replay_in(ctx, id, format).unwrap_or_else(|error| {
        jp_term::errln!("error: {error}");
        exit::USAGE.into()
    })
}

fn replay_in(
    ctx: &Ctx,
    id: Option<String>,
    format: Format,
) -> Result<ExitCode, crate::error::Error> {
    if ctx.assignments.is_empty() {
        jp_term::errln!(
            "error: give the change to replay under with --cfg (`--cfg @new.toml` or `--cfg KEY=VALUE`)"
        );
        return Ok(exit::USAGE.into());
    }
    let place = match crate::place::Place::of(ctx) {
        Ok(place) => crate::place::settle(place),
        Err(why) => {
            jp_term::errln!("error: {why}");
            return Ok(exit::USAGE.into());
        }
    };
    let root = place.root().to_path_buf();
    let store = place.store()?;
    let ledger = Ledger::new(&root);
    let id = match id.map(|id| crate::conversation::resolve(&store, &id, true)) {
        Some(Ok(id)) => Some(id),
        Some(Err(code)) => return Ok(code),
        None => crate::conversation::active_id(&store, &ledger),
    };
    let conversation = match id
        .ok_or(jp_conversation::StoreError::NoActive)
        .and_then(|id| store.load(&id))
    {
        Ok(conversation) => conversation,
        Err(
            error @ (jp_conversation::StoreError::NotFound(_)
            | jp_conversation::StoreError::BadId(_)
            | jp_conversation::StoreError::NoActive),
        ) => {
            jp_term::errln!("error: {error}");
            return Ok(exit::USAGE.into());
        }
        Err(error) => return Err(error.into()),
    };
    crate::conversation::warn_torn(&conversation);
    let Some((mut now, mut with)) = configs(ctx, &conversation, &ledger, &root) else {
        return Ok(exit::USAGE.into());
    };
    for loaded in [&mut now, &mut with] {
        if !with_mcp_schemas(ctx, loaded, &conversation)? {
            return Ok(exit::USAGE.into());
        }
    }
    let calls = replay(&conversation, &ledger, &root, &now.config, &with.config)?;
    let summary = Summary::of(&calls);
    match format {
        Format::Text => {
            for call in calls.iter().filter(|c| c.change() != Change::Unchanged) {
                jp_term::outln!("{}", call.line());
            }
            jp_term::outln!("{}", summary.line());
        }
        Format::Json => print_json(&conversation.id, &calls, &summary)?,
    }
    Ok(summary.exit_code().into())
}

/// The config as a query continuing `conversation` would load it without
/// the `--cfg` layers ("now"), and with them: each the files, the
/// environment and the conversation's recorded config changes (authorized
/// against it); `None` when either does not load (said on stderr).
fn configs(
    ctx: &Ctx,
    conversation: &Conversation,
    ledger: &Ledger,
    root: &Path,
) -> Option<(Loaded, Loaded)> {
    let without = Ctx {
        assignments: Vec::new(),
        ..ctx.clone()
    };
    let log = crate::recorded::log_name(root, &conversation.id, &ctx.cwd);
    let load = |ctx: &Ctx, base: Result<Loaded, _>| {
        let loaded = base.and_then(|base: Loaded| {
            let authorized =
                crate::conversation::conversation_deltas(conversation, &base.config, ledger);
            crate::recorded::warn(&log, &authorized.refused);
            ctx.load_with(authorized.layers)
        });
        loaded.map_err(|error| print_load_error(&error)).ok()
    };
    // The flags' config first: its warnings (those of the files too) are
    // said once.
    let with = load(ctx, ctx.load())?;
    let now = load(&without, jp_config::load::load(&without.load_options()))?;
    Some((now, with))
}

/// When a call of `conversation` is of an MCP tool in `loaded`'s config,
/// starts the MCP servers the config names to put their tools' schemas in
/// it, and stops them, as `jp policy check` does (no tool is called);
/// `false` when the config does not fit the servers' tools (said).
fn with_mcp_schemas(
    ctx: &Ctx,
    loaded: &mut Loaded,
    conversation: &Conversation,
) -> Result<bool, crate::error::Error> {
    let mcp = conversation
        .events
        .iter()
        .find_map(|event| match &event.kind {
            EventKind::ToolCallRequest(call) if super::is_mcp(loaded, &call.name) => {
                Some(call.name.clone())
            }
            _ => None,
        });
    match mcp {
        Some(tool) => Ok(super::with_mcp_schemas(ctx, loaded, &tool)?.is_ok()),
        None => Ok(true),
    }
}

/// The replay as one JSON document (docs/policies.md describes it).
fn print_json(id: &str, calls: &[Replayed], summary: &Summary) -> Result<(), serde_json::Error> {
    let outcome =
        |o: &Outcome| serde_json::json!({ "decision": o.kind.as_str(), "reason": o.reason });
    let calls: Vec<Value> = calls
        .iter()
        .map(|c| {
            serde_json::json!({
                "turn": c.turn,
                "id": c.id,
                "tool": c.tool,
                "arguments": c.arguments,
                "now": outcome(&c.now),
                "with_change": outcome(&c.with),
                "change": c.change().as_str(),
            })
        })
        .collect();
    let out = serde_json::json!({
        "conversation": id,
        "calls": calls,
        "summary": {
            "calls": summary.calls,
            "stricter": summary.stricter,
            "less_strict": summary.less_strict,
            "as_strict": summary.as_strict,
            "cannot_tell": summary.cannot_tell,
            "unchanged": summary.unchanged,
        },
    });
    jp_term::printer::stdout_json(&serde_json::to_string_pretty(&out)?);
    Ok(())
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
