//! Compaction (issue 38): a model summarises the older turns of a
//! conversation, and the summary is sent in their place from then on. The
//! summary is a `compaction` event in the log; the turns stay in it byte
//! for byte. `jp conversation compact` makes one on request, and `jp
//! query` before a request that nears the model's window
//! (`conversation.compaction`, see `query::fit`).

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;

use futures_util::StreamExt as _;
use jp_config::AppConfig;
use jp_conversation::view::{self, Sent};
use jp_conversation::{Compaction, ConversationEvent, EventKind, EventPart, Store, StoreError};
use jp_llm::{ChatRequest, Message, Provider, StreamEvent};
use jp_term::{errln, outln};

use crate::ctx::{Ctx, print_load_error};
use crate::exit;
use crate::ledger::Ledger;
use crate::usage::grouped;

/// The last message of a summary request: what the model is asked for.
pub const INSTRUCTION: &str = "jp is compacting this conversation: write a summary of everything above, to be sent in its place from now on. Keep what the rest of the work needs: the user's goals and requests, the decisions made and why, file paths and exact identifiers (functions, types, commands, error messages), what was changed, and the tasks and questions still open. Answer with the summary alone, as plain notes, and call no tool.";

/// What a compaction would summarise: the turns before `upto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// The place in the log of the first turn kept whole (its
    /// `turn_start`).
    pub upto: usize,
    /// How many turns come before it, as `jp conversation show` numbers
    /// them: turns 1 to `turns` are summarised (with the summary in force,
    /// which covers the first of them).
    pub turns: usize,
}

/// The live turns sent whole now, by their place in the log: those from
/// the compaction in force on (all without one).
#[must_use]
pub fn sent_turns(events: &[ConversationEvent], by: view::Honoured<'_>) -> Vec<usize> {
    let from = view::compaction(events, by).map_or(0, |(_, compaction)| compaction.upto);
    let live = view::live(events, by);
    view::turn_starts(events)
        .into_iter()
        .filter(|&start| start >= from && live[start])
        .collect()
}

/// The compaction that keeps the last `keep` of `turns` (places of turns
/// sent whole, as [`sent_turns`] gives them) whole, if there is an older
/// one to summarise.
#[must_use]
pub fn candidate(events: &[ConversationEvent], turns: &[usize], keep: usize) -> Option<Candidate> {
    let first_kept = turns.len().checked_sub(keep.max(1))?;
    if first_kept == 0 {
        return None;
    }
    let upto = turns[first_kept];
    Some(Candidate {
        upto,
        turns: view::turn_starts(events).partition_point(|&start| start < upto),
    })
}

/// Of what is sent of `events`, the events `keep` keeps (by their place in
/// the log), and the summary in force when `summary`.
#[must_use]
pub fn part<'a>(
    events: &'a [ConversationEvent],
    by: view::Honoured<'_>,
    keep: impl Fn(usize) -> bool,
    summary: bool,
) -> Sent<'a> {
    let compaction = view::compaction(events, by).map(|(_, compaction)| compaction);
    let from = compaction.map_or(0, |compaction| compaction.upto);
    let live = view::live(events, by);
    Sent {
        compaction: compaction.filter(|_| summary),
        events: events
            .iter()
            .enumerate()
            .filter(|&(index, _)| index >= from && live[index] && keep(index))
            .map(|(_, event)| event)
            .collect(),
    }
}

/// The request that asks for the summary of what is sent of `events`
/// before `upto`: `base` (model, system prompt and tools) with those
/// turns, as the conversation's requests send them, and [`INSTRUCTION`]
/// after them.
#[must_use]
pub fn summary_request(
    base: ChatRequest,
    events: &[ConversationEvent],
    by: view::Honoured<'_>,
    upto: usize,
    elision: Option<jp_llm::request::Elision>,
    max_tokens: u32,
) -> ChatRequest {
    let mut messages =
        jp_llm::request::messages_of(part(events, by, |index| index < upto, true), elision);
    messages.push(Message::User(INSTRUCTION.to_owned()));
    ChatRequest {
        messages,
        max_tokens,
        temperature: None,
        top_p: None,
        ..base
    }
}

/// About how many tokens the turns a compaction up to `upto` replaces are
/// (their messages, and the summary they replace).
#[must_use]
pub fn summarised_tokens(events: &[ConversationEvent], by: view::Honoured<'_>, upto: usize) -> u64 {
    jp_llm::request::estimate_tokens(&ChatRequest {
        model: String::new(),
        system: None,
        messages: jp_llm::request::messages_of(part(events, by, |index| index < upto, true), None),
        tools: Vec::new(),
        max_tokens: 0,
        temperature: None,
        top_p: None,
    })
}

/// A summary as the model wrote it, and what the response used.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// The text of the answer (its tool calls and reasoning left out).
    pub text: String,
    /// The usage the provider reported, if any.
    pub usage: Option<jp_llm::Usage>,
}

/// Streams `request` from `provider` and keeps the answer's text; stops
/// when `cancel` is cancelled. The error says why there is no summary.
pub async fn write(
    provider: &dyn Provider,
    request: ChatRequest,
    cancel: Option<&tokio_util::sync::CancellationToken>,
) -> Result<Written, String> {
    let mut stream = provider.stream(request);
    let mut written = Written {
        text: String::new(),
        usage: None,
    };
    loop {
        let item = match cancel {
            Some(cancel) => tokio::select! {
                biased;
                () = cancel.cancelled() => return Err("interrupted".to_owned()),
                item = stream.next() => item,
            },
            None => stream.next().await,
        };
        match item {
            None => break,
            Some(Err(error)) => return Err(error.to_string()),
            Some(Ok(StreamEvent::Part {
                part: EventPart::Message(text),
                ..
            })) => written.text.push_str(&text),
            Some(Ok(StreamEvent::Usage(usage))) => written.usage = Some(usage),
            Some(Ok(_)) => {}
        }
    }
    if written.text.trim().is_empty() {
        return Err("the model answered with no summary".to_owned());
    }
    Ok(written)
}

/// The events that record a compaction: what its response used (when the
/// provider said), then the summary.
#[must_use]
pub fn events(
    config: &AppConfig,
    by: &Model,
    written: &Written,
    compaction: Compaction,
) -> Vec<ConversationEvent> {
    let mut events = Vec::new();
    if let Some(usage) = &written.usage {
        events.push(ConversationEvent::now(crate::query::session::usage_kind(
            config,
            &by.provider,
            &by.name,
            usage,
        )));
    }
    events.push(ConversationEvent::now(EventKind::Compaction(compaction)));
    events
}

/// What `jp conversation compact` (and `jp query`, compacting) says once
/// the summary is recorded.
#[must_use]
pub fn done_line(candidate: Candidate, summarised: u64, compaction: &Compaction) -> String {
    let tokens = u64::try_from(compaction.summary.chars().count().div_ceil(4)).unwrap_or(u64::MAX);
    format!(
        "compacted {} (about {} tokens) into a {}-token summary by {}{}",
        crate::rewind::turn_range(1..=candidate.turns),
        grouped(summarised),
        grouped(tokens),
        compaction.model,
        if compaction.edited { ", edited" } else { "" }
    )
}

/// A model: its provider's name in config, and its name there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    /// The provider's name in config (`anthropic`).
    pub provider: String,
    /// Its name at the provider.
    pub name: String,
}

impl Model {
    /// `provider/name`.
    #[must_use]
    pub fn id(&self) -> String {
        format!("{}/{}", self.provider, self.name)
    }

    /// Its context window, when known.
    #[must_use]
    pub fn window(&self, config: &AppConfig) -> Option<u64> {
        config
            .providers
            .llm
            .model_info(&self.provider, &self.name)
            .context_window
    }
}

/// The model that writes a summary, connected.
pub struct Summariser {
    pub provider: Box<dyn Provider>,
    pub model: Model,
}

/// Which model writes the summary: `flag` (`--model`) if given, else
/// `conversation.compaction.model`, else the conversation's own; `None`
/// for the conversation's own. The key it came from, for errors.
#[must_use]
pub fn chosen<'a>(config: &'a AppConfig, flag: Option<&'a str>) -> Option<(&'static str, &'a str)> {
    match flag.filter(|id| !id.is_empty()) {
        Some(id) => Some(("--model", id)),
        None => {
            let id = config.conversation.compaction.model.as_str();
            (!id.is_empty()).then_some(("conversation.compaction.model", id))
        }
    }
}

/// Connects the model `id` (from `key`) of `config`. The error is said in
/// the key's terms.
pub fn summariser(
    config: &AppConfig,
    (key, id): (&str, &str),
    env: &HashMap<String, String>,
    root: &Path,
) -> Result<Summariser, String> {
    if let Err(error) = jp_config::validate::resolve_model_id(config, id) {
        return Err(format!("{key}: {error}"));
    }
    let resolved =
        crate::query::session::resolve_id(config, id, env, root).map_err(|e| e.to_string())?;
    Ok(Summariser {
        provider: resolved.provider,
        model: Model {
            provider: resolved.provider_name,
            name: resolved.model,
        },
    })
}

/// `jp conversation compact`.
#[derive(Debug, clap::Args)]
pub struct Compact {
    /// The conversation: its id, a unique start of it, or `last` (the
    /// one with the latest activity); the active one by default.
    pub id: Option<String>,
    /// Keep the last N turns whole (`conversation.compaction.keep_turns`
    /// by default).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    keep: Option<u32>,
    /// The model that writes the summary, as `PROVIDER/NAME` or an alias
    /// (`conversation.compaction.model` by default, else the
    /// conversation's model).
    #[arg(long, value_name = "PROVIDER/NAME")]
    model: Option<String>,
    /// Edit the summary in `$VISUAL` or `$EDITOR` before it is recorded;
    /// an empty summary records none.
    #[arg(short, long)]
    edit: bool,
}

/// A conversation opened (and locked) to compact, with the config its
/// next query would have.
struct Opened {
    id: String,
    config: AppConfig,
    conversation: jp_conversation::Conversation,
    lock: jp_conversation::ConversationLock,
}

/// Opens conversation `id` (the active one by default) of `store`, and
/// loads its config (the files, its config changes, the flags). `Err` is
/// the exit code of what failed, already said.
fn open(
    ctx: &Ctx,
    root: &Path,
    store: &Store,
    ledger: &Ledger,
    id: Option<String>,
) -> Result<Result<Opened, ExitCode>, crate::error::Error> {
    let Some(id) = id.or_else(|| crate::conversation::active_id(store, ledger)) else {
        errln!("error: {}", StoreError::NoActive);
        return Ok(Err(exit::USAGE.into()));
    };
    let base = match ctx.load() {
        Ok(loaded) => loaded,
        Err(error) => {
            print_load_error(&error);
            return Ok(Err(exit::INVALID_CONFIG.into()));
        }
    };
    let (conversation, lock) = match store.open(&id) {
        Ok(open) => open,
        Err(error @ (StoreError::NotFound(_) | StoreError::BadId(_))) => {
            errln!("error: {error}");
            return Ok(Err(exit::USAGE.into()));
        }
        Err(error) => return Err(error.into()),
    };
    crate::conversation::warn_torn(&conversation);
    // The conversation's config changes apply, as for its next query.
    let authorized = crate::conversation::conversation_deltas(&conversation, &base.config, ledger);
    crate::recorded::warn(
        &crate::recorded::log_name(root, &conversation.id, &ctx.cwd),
        &authorized.refused,
    );
    match ctx.load_with(authorized.layers) {
        Ok(loaded) => Ok(Ok(Opened {
            id,
            config: loaded.config,
            conversation,
            lock,
        })),
        Err(error) => {
            print_load_error(&error);
            Ok(Err(exit::INVALID_CONFIG.into()))
        }
    }
}

impl Compact {
    /// Compacts conversation `id` (the active one by default) of the
    /// place at `root` (a workspace, or a plain directory:
    /// [`crate::place::store_at`]).
    pub fn run(
        self,
        ctx: &Ctx,
        root: &Path,
        id: Option<String>,
    ) -> Result<ExitCode, crate::error::Error> {
        let store = crate::place::store_at(root);
        let ledger = Ledger::new(root);
        let Opened {
            id,
            config,
            mut conversation,
            mut lock,
        } = match open(ctx, root, &store, &ledger, id)? {
            Ok(opened) => opened,
            Err(code) => return Ok(code),
        };
        let keep = self
            .keep
            .unwrap_or(config.conversation.compaction.keep_turns) as usize;
        let ours = ledger.ours(&conversation);
        let turns = sent_turns(&conversation.events, Some(&ours));
        let Some(candidate) = candidate(&conversation.events, &turns, keep) else {
            let kept = if keep == 1 {
                "the last turn is kept whole".to_owned()
            } else {
                format!("the last {keep} turns are kept whole")
            };
            outln!(
                "nothing to compact in conversation {id}: {} sent whole, and {kept} (`--keep`)",
                match turns.len() {
                    1 => "1 turn is".to_owned(),
                    n => format!("{n} turns are"),
                }
            );
            return Ok(ExitCode::SUCCESS);
        };
        let (model, written) =
            match self.summarise(ctx, root, &config, &conversation.events, &ours, candidate)? {
                Ok(summary) => summary,
                Err(code) => return Ok(code),
            };
        let mut compaction = Compaction {
            upto: candidate.upto,
            summary: written.text.trim().to_owned(),
            model: model.id(),
            edited: false,
        };
        if self.edit {
            let failed = match edit(&compaction.summary, candidate.turns) {
                Edited::Summary(summary) => {
                    compaction.edited = summary != compaction.summary;
                    compaction.summary = summary;
                    None
                }
                Edited::Empty => Some((
                    "cancelled: the summary is empty, so no compaction was recorded".to_owned(),
                    ExitCode::from(exit::USAGE),
                )),
                Edited::Failed(why) => Some((
                    format!("error: {why}; no compaction was recorded"),
                    ExitCode::FAILURE,
                )),
            };
            if let Some((said, code)) = failed {
                keep_usage(
                    &ledger,
                    &mut lock,
                    &mut conversation,
                    &config,
                    &model,
                    &written,
                )?;
                errln!("{said}");
                return Ok(code);
            }
        }
        let summarised = summarised_tokens(&conversation.events, Some(&ours), candidate.upto);
        let line = done_line(candidate, summarised, &compaction);
        let recorded = events(&config, &model, &written, compaction);
        ledger.append(&mut lock, &mut conversation, recorded)?;
        outln!("{line}");
        Ok(ExitCode::SUCCESS)
    }

    /// Has the chosen model summarise what is sent of `events` before
    /// `candidate`. `Err` is the exit code of what failed, already said.
    fn summarise(
        &self,
        ctx: &Ctx,
        root: &Path,
        config: &AppConfig,
        events: &[ConversationEvent],
        ours: &[bool],
        candidate: Candidate,
    ) -> Result<Result<(Model, Written), ExitCode>, crate::error::Error> {
        let env: HashMap<String, String> = ctx.env.iter().cloned().collect();
        let by = chosen(config, self.model.as_deref())
            .unwrap_or(("assistant.model.id", config.assistant.model.id.as_str()));
        let summariser = match summariser(config, by, &env, root) {
            Ok(summariser) => summariser,
            Err(why) => {
                errln!("error: {why}");
                return Ok(Err(ExitCode::FAILURE));
            }
        };
        let system = crate::query::system::system_prompt(
            &config.assistant,
            &crate::query::system::Facts::here(root, &config.assistant),
        )?;
        system.warn();
        let system = system.text;
        let max_tokens = config.conversation.compaction.max_tokens;
        let request = summary_request(
            ChatRequest {
                model: summariser.model.name.clone(),
                system,
                messages: Vec::new(),
                tools: jp_llm::request::tool_definitions(config),
                max_tokens,
                temperature: None,
                top_p: None,
            },
            events,
            Some(ours),
            candidate.upto,
            crate::query::session::elision(config),
            max_tokens,
        );
        if let Some(refusal) = too_large_to_summarise(&request, &summariser.model, config) {
            errln!("error: {refusal}; nothing was recorded");
            return Ok(Err(ExitCode::FAILURE));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        match runtime.block_on(write(summariser.provider.as_ref(), request, None)) {
            Ok(written) => Ok(Ok((summariser.model, written))),
            Err(why) => {
                errln!(
                    "error: {} wrote no summary: {why}; nothing was recorded",
                    summariser.model.id()
                );
                Ok(Err(ExitCode::FAILURE))
            }
        }
    }
}

/// Records what a summary's response used when no compaction is recorded:
/// it was paid for all the same.
fn keep_usage(
    ledger: &Ledger,
    lock: &mut jp_conversation::ConversationLock,
    conversation: &mut jp_conversation::Conversation,
    config: &AppConfig,
    by: &Model,
    written: &Written,
) -> Result<(), StoreError> {
    let Some(usage) = &written.usage else {
        return Ok(());
    };
    let kind = crate::query::session::usage_kind(config, &by.provider, &by.name, usage);
    ledger.append(lock, conversation, [ConversationEvent::now(kind)])
}

/// Why `request` is not sent to the summariser: larger than its window by
/// jp's estimate.
#[must_use]
pub fn too_large_to_summarise(
    request: &ChatRequest,
    by: &Model,
    config: &AppConfig,
) -> Option<String> {
    let window = by.window(config)?;
    let estimate = jp_llm::request::estimate_tokens(request);
    (estimate > window).then(|| {
        format!(
            "the turns to summarise are about {} tokens by jp's estimate, more than {} reads ({} tokens); keep more turns whole (`conversation.compaction.keep_turns`, or `--keep` of `jp conversation compact`) or have a model with a larger window summarise (`conversation.compaction.model`, or `--model` of `jp conversation compact`)",
            grouped(estimate),
            by.id(),
            grouped(window)
        )
    })
}

/// How editing a summary ended.
enum Edited {
    Summary(String),
    Empty,
    Failed(String),
}

/// Opens the editor on `summary` (of turns 1 to `turns`).
fn edit(summary: &str, turns: usize) -> Edited {
    use crate::query::compose::{MARKER, written};
    let dir = match tempfile::Builder::new().prefix("jp-summary-").tempdir() {
        Ok(dir) => dir,
        Err(e) => return Edited::Failed(format!("cannot make a file for the summary: {e}")),
    };
    let path = dir.path().join("summary.md");
    let text = format!(
        "{summary}\n\n{MARKER}\n# Edit the summary above the line. jp sends it in place of {} from now\n# on; an empty summary records none.\n",
        crate::rewind::turn_range(1..=turns)
    );
    if let Err(e) = std::fs::write(&path, text) {
        return Edited::Failed(format!("cannot write {}: {e}", path.display()));
    }
    if let Err(why) = jp_term::prompt::external::run_editor(&path) {
        return Edited::Failed(why);
    }
    match std::fs::read_to_string(&path) {
        Ok(text) => written(&text).map_or(Edited::Empty, Edited::Summary),
        Err(e) => Edited::Failed(format!("cannot read the summary back: {e}")),
    }
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
