//! `jp query`: one turn of a conversation.
//!
//! This module is the thin async shell around two pure parts: the
//! [`turn::TurnCoordinator`] says what to do next, the
//! [`tools::ToolCoordinator`] decides and runs tool calls. The shell does
//! the I/O: it streams from the provider, prints, prompts, runs tools and
//! saves the conversation after every recorded event.

pub mod early;
pub mod render;
pub mod tickets;
pub mod tools;
pub mod turn;

use std::collections::HashMap;
use std::process::ExitCode;

use futures_util::StreamExt as _;
use futures_util::future::LocalBoxFuture;
use futures_util::stream::FuturesUnordered;
use jp_config::AppConfig;
use jp_config::tool::argument_limit;
use jp_config::validate::resolve_model_id;
use jp_conversation::{
    Conversation, ConversationEvent, ConversationLock, EventKind, ProgressRef, ResponseStatus,
    Store, ToolCallRequest, ToolCallResponse,
};
use jp_llm::{ChatRequest, Provider};
use tokio_util::sync::CancellationToken;

use crate::cmd::ctx::{Ctx, no_workspace, print_load_error};
use crate::cmd::exit;
use crate::printer::{Channel, Printer, Style};
use crate::prompt::{Choice, NoPrompter, PromptError, Prompter, Prompts, TerminalPrompter};
use early::{Answer, Early};
use render::{CallFormat, RenderOptions, ToolRenderer};
use tickets::CallTickets;
use tools::{
    Decided, EarlyStep, LocalExecutor, ToolCoordinator, ToolExecutor, Verdict,
    received_arguments_line,
};

/// What an open prompt settles about call number `.0` of the response.
enum Settled {
    /// Its verdict.
    Verdict(usize, Verdict),
    /// The answer to a prompt opened while its arguments streamed.
    Early(usize, Answer),
    /// A prompt opened while its arguments streamed was closed unanswered:
    /// the call was refused meanwhile (its arguments grew too large).
    Withdrawn,
}

/// Prompts still open for calls of the current response.
type Pending<'t> = FuturesUnordered<LocalBoxFuture<'t, Settled>>;

/// A prompt's request to page call number `.0`'s arguments so far (`v`):
/// the turn holds them, not the prompt, so it answers on `.1`.
type ViewRequest = (usize, tokio::sync::oneshot::Sender<Option<String>>);

/// A streaming call as it is after a piece of its arguments, for
/// [`Session::on_progress`]: what the turn knows of it, read without the turn
/// (which is busy parsing while the piece is handed out).
struct CallState<'a> {
    /// A completed top-level argument's value.
    argument: &'a dyn Fn(&str) -> Option<&'a serde_json::Value>,
    /// Bytes of argument text received.
    bytes: usize,
    /// The other calls still streaming and their bytes.
    others: (usize, usize),
}

/// The calls of one response, by their number in it, as they are decided.
struct Calls<'t> {
    /// Each started call's id and tool.
    started: HashMap<usize, (String, String)>,
    /// Each call's place in the prompt queue, taken when it started, so
    /// prompts show in call order however the calls are decided.
    tickets: CallTickets<'t>,
    /// What was decided while a call streamed.
    early: HashMap<usize, Early>,
    /// Calls whose arguments completed while their early prompt is open.
    complete: HashMap<usize, ToolCallRequest>,
    /// The verdicts, for `RunTools`.
    verdicts: HashMap<usize, Verdict>,
    /// Closes the early prompt of a call, when one is open.
    withdraw: HashMap<usize, CancellationToken>,
    /// Whether a prompt was withdrawn: it leaves the terminal on its own
    /// thread, so what the turn prints next waits for it.
    withdrawn: bool,
    /// Calls a stateful policy denied before they were put to the user,
    /// recorded (as `policy_denied`) with their response.
    denials: HashMap<usize, crate::stateful::Denial>,
    /// Where open prompts ask to see a call's arguments so far, and where
    /// the turn reads those requests.
    view_requests: tokio::sync::mpsc::UnboundedSender<ViewRequest>,
    views: tokio::sync::mpsc::UnboundedReceiver<ViewRequest>,
}

impl Calls<'_> {
    /// Call number `call` is refused while it streams (`verdict`), whatever
    /// was pending for it: an open question about it is withdrawn, and its
    /// `Decide` takes this answer.
    fn refuse(&mut self, call: usize, verdict: Verdict) {
        if let Some(withdrawn) = self.withdraw.remove(&call) {
            withdrawn.cancel();
        }
        self.tickets.release(call);
        self.early
            .insert(call, Early::Answered(Answer::NotRun(verdict)));
    }

    /// Whether no call before number `call` of the response will run, so
    /// nothing can change what the stateful policies say about it before
    /// it would run: every one of them has already been answered without
    /// running.
    fn nothing_runs_before(&self, call: usize) -> bool {
        self.started.keys().filter(|n| **n < call).all(|n| {
            matches!(self.verdicts.get(n), Some(Verdict::NotRun { .. }))
                || matches!(self.early.get(n), Some(Early::Answered(Answer::NotRun(_))))
        })
    }
}

impl<'t> Calls<'t> {
    fn new(prompts: &'t Prompts) -> Self {
        let (view_requests, views) = tokio::sync::mpsc::unbounded_channel();
        Self {
            view_requests,
            views,
            started: HashMap::new(),
            tickets: CallTickets::new(prompts),
            early: HashMap::new(),
            complete: HashMap::new(),
            verdicts: HashMap::new(),
            withdraw: HashMap::new(),
            withdrawn: false,
            denials: HashMap::new(),
        }
    }
}
use turn::{Action, Input, TurnCoordinator, TurnEnd};

/// The most requests one turn may send before jp stops it: a guard against
/// a model that calls tools forever.
pub const MAX_CYCLES: usize = 50;

/// Exit code of a turn the user interrupted (as for SIGINT).
const INTERRUPTED: u8 = 130;

/// `jp query`.
#[derive(Debug, clap::Args)]
pub struct Query {
    /// Start a new conversation instead of continuing the active one.
    #[arg(long)]
    new: bool,

    /// The model, as `PROVIDER/NAME` or an alias (overrides
    /// `assistant.model.id`).
    #[arg(long, value_name = "PROVIDER/NAME")]
    model: Option<String>,

    /// Never prompt: calls and results whose policy asks are declined
    /// (this is also what happens without a terminal).
    #[arg(long)]
    non_interactive: bool,

    /// The message for the assistant.
    #[arg(required = true, num_args = 1.., value_name = "MESSAGE")]
    message: Vec<String>,
}

impl Query {
    /// Runs the turn.
    pub fn run(self, mut ctx: Ctx) -> Result<ExitCode, Box<dyn std::error::Error>> {
        if let Some(model) = &self.model {
            ctx.flags.push(jp_config::load::FlagAssignment {
                flag: format!("--model {model}"),
                assignment: format!("assistant.model.id={model}"),
            });
        }
        let message = self.message.join(" ");
        if message.trim().is_empty() {
            crate::errln!("error: the message is empty; say what you want the assistant to do");
            return Ok(exit::USAGE.into());
        }
        // The config with the flags on top, as every command has it: the
        // flags are checked here, and the grants come from it.
        let (flagged, flag_layers) = match crate::recorded::load_with_flags(&ctx) {
            Ok(loaded) => loaded,
            Err(error) => {
                print_load_error(&error);
                return Ok(exit::INVALID_CONFIG.into());
            }
        };
        let Some(root) = flagged.workspace_root.clone() else {
            return Ok(no_workspace(&ctx.cwd));
        };
        let store = Store::new(&root);
        // The active conversation's config changes apply on top of the
        // files, each authorized again (a log is no authority); a new
        // conversation has none.
        let existing = if self.new { None } else { open_active(&store)? };
        let mut deltas = match &existing {
            Some((conversation, _)) => {
                let authorized = conversation_deltas(conversation, &flagged.config);
                crate::recorded::warn(
                    &crate::recorded::log_name(&root, &conversation.id, &ctx.cwd),
                    &authorized.refused,
                );
                authorized.layers
            }
            None => Vec::new(),
        };
        // The flags are the user's config change, recorded when the turn
        // begins (RFD 078): a tool's change later in the turn applies over
        // them, and the next query keeps them. What they may not record
        // (sensitive keys) stays on top, for this query only.
        let schema = jp_config::schema::config_schema()?;
        let mut flags = crate::recorded::sort_flags(&flag_layers, &flagged.config, schema);
        ctx.assignments.clear();
        ctx.flags = std::mem::take(&mut flags.query_only);
        if let Some(record) = flags.record.take() {
            // Only what the flags change is recorded.
            flags.record = match ctx.load_with(deltas.clone()) {
                Ok(current) => crate::recorded::news(record, &current),
                Err(_) => Some(record),
            };
        }
        if let Some(record) = &flags.record {
            // Through the same check as every recorded change.
            crate::recorded::authorize(record, &flagged.config, schema)
                .map_err(|reason| format!("the flags of this query: {reason}"))?;
            let id = existing.as_ref().map_or("(new)", |(c, _)| c.id.as_str());
            deltas.push(crate::recorded::layer(record, id));
        }
        let config = match ctx.load_with(deltas) {
            Ok(loaded) => loaded.config,
            Err(error) => {
                print_load_error(&error);
                return Ok(exit::INVALID_CONFIG.into());
            }
        };
        let env: HashMap<String, String> = ctx.env.iter().cloned().collect();
        let Resolved {
            provider,
            provider_name,
            model,
        } = resolve(&config, &env, &root)?;
        let (conversation, lock) = match existing {
            Some(open) => open,
            None => {
                let (conversation, lock) = store.create()?;
                store.set_active(&conversation.id)?;
                (conversation, lock)
            }
        };
        let printer = Printer::stdio(config.style.color);
        let prompter: Box<dyn Prompter> = if self.non_interactive {
            Box::new(NoPrompter)
        } else {
            TerminalPrompter::open(&printer).map_or_else(
                || Box::new(NoPrompter) as Box<dyn Prompter>,
                |t| Box::new(t) as Box<dyn Prompter>,
            )
        };

        // Calls render live, argument by argument, on a terminal; a log
        // (a pipe, a file) gets one line per call.
        let renderer = printer.is_terminal(Channel::Chrome).then(|| {
            let style = &config.style.tool_call;
            ToolRenderer::new(RenderOptions {
                format: match style.format {
                    jp_config::style::ToolCallFormat::FunctionCall => CallFormat::FunctionCall,
                    jp_config::style::ToolCallFormat::Json => CallFormat::Json,
                },
                show_arguments: style.show_arguments,
                max_lines: style.argument_lines as usize,
                call_lines: style.call_lines as usize,
                width: crossterm::terminal::size().map_or(80, |(columns, _)| usize::from(columns)),
            })
        });
        let live = renderer.is_some();
        let config = std::sync::Arc::new(config);
        let mut session = Session {
            config: std::sync::Arc::clone(&config),
            provider,
            model: model.clone(),
            header: format!("── jp ({provider_name}/{model}) ──"),
            printer: printer.clone(),
            renderer,
            conversation,
            lock,
        };
        tracing::info!(conversation = %session.conversation.id, "turn starts");
        // One commit: a killed jp leaves all or none.
        let mut start = vec![
            ConversationEvent::now(EventKind::TurnStart),
            ConversationEvent::now(EventKind::ChatRequest { content: message }),
        ];
        if let Some(record) = flags.record {
            start.push(ConversationEvent::now(EventKind::ConfigDelta(record)));
        }
        session.lock.append(&mut session.conversation, start)?;

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let self_exe = std::env::current_exe().ok();
        let end = runtime.block_on(async {
            // With a terminal, Ctrl+C opens a menu; without, it interrupts.
            let mut interrupts = interrupt_on_signals(prompter.available());
            let prompts = Prompts::new(prompter, interrupts.cancel.clone());
            let mut resume = None;
            loop {
                let config = std::sync::Arc::clone(&session.config);
                let tools = ToolCoordinator::new(&config, &root, self_exe.clone(), printer.clone())
                    .arguments_shown_live(live)
                    .with_history(&session.conversation.events)?;
                match session
                    .run_turn(
                        &tools,
                        &LocalExecutor,
                        &prompts,
                        &mut interrupts,
                        resume.take(),
                    )
                    .await?
                {
                    Step::End(end) => break Ok::<_, Box<dyn std::error::Error>>(end),
                    Step::Reload(state) => {
                        // Tools changed the config: the next request of
                        // this turn uses it (RFD 078 phase 3).
                        if let Err(message) = session.reload(&ctx, &env, &root) {
                            break Ok(TurnEnd::Failed(message));
                        }
                        resume = Some(*state);
                    }
                }
            }
        })?;
        printer.stop_spinner();
        printer.finish_content();
        Ok(match end {
            TurnEnd::Completed => ExitCode::SUCCESS,
            TurnEnd::MaxTokens => {
                printer.chrome_line(
                    Style::Warn,
                    "note: the response was cut off at assistant.model.parameters.max_tokens",
                );
                ExitCode::SUCCESS
            }
            TurnEnd::Interrupted => {
                printer.chrome_line(
                    Style::Warn,
                    "interrupted; the conversation keeps what arrived",
                );
                ExitCode::from(INTERRUPTED)
            }
            TurnEnd::Stopped => {
                printer.chrome_line(
                    Style::Warn,
                    "stopped; the conversation keeps what arrived, and `jp query` continues it",
                );
                ExitCode::SUCCESS
            }
            TurnEnd::Failed(message) => {
                printer.chrome_line(Style::Bad, &format!("error: {message}"));
                printer.chrome_line(
                    Style::Dim,
                    &format!(
                        "the conversation keeps what arrived; `jp query` continues it (conversation {})",
                        session.conversation.id
                    ),
                );
                ExitCode::FAILURE
            }
            TurnEnd::CycleLimit(n) => {
                printer.chrome_line(
                    Style::Bad,
                    &format!("error: stopped after {n} responses in one turn; the model kept calling tools"),
                );
                ExitCode::FAILURE
            }
        })
    }
}

/// The active conversation (locked), if there is one.
fn open_active(
    store: &Store,
) -> Result<Option<(Conversation, ConversationLock)>, Box<dyn std::error::Error>> {
    let Some(id) = store.active() else {
        // `jp conversation rm` clears the marker; one left naming nothing
        // means the conversation went missing some other way.
        if let Some(gone) = store.active_marker() {
            crate::errln!(
                "warning: the active conversation `{gone}` is not in {} any more; this query starts a new one",
                store.root().display()
            );
        }
        return Ok(None);
    };
    let (conversation, lock) = store.open(&id).map_err(|e| match e {
        e @ jp_conversation::StoreError::Locked { .. } => e.to_string(),
        e => format!(
            "{e}\n(`jp query --new` starts a new conversation; the old one is left as it is)"
        ),
    })?;
    crate::cmd::conversation::warn_torn(&conversation);
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
) -> crate::recorded::Authorized {
    crate::recorded::authorized(conversation, base)
}

/// The provider and model a config resolves to.
struct Resolved {
    provider: Box<dyn Provider>,
    provider_name: String,
    model: String,
}

fn resolve(
    config: &AppConfig,
    env: &HashMap<String, String>,
    root: &std::path::Path,
) -> Result<Resolved, Box<dyn std::error::Error>> {
    let (provider_name, model) = resolve_model_id(config, &config.assistant.model.id)
        .map_err(|e| format!("assistant.model.id: {e}"))?;
    let (provider_name, model) = (provider_name.to_owned(), model.to_owned());
    let provider = jp_llm::connect(
        config,
        &provider_name,
        &model,
        &|var| env.get(var).cloned(),
        root,
    )?;
    Ok(Resolved {
        provider,
        provider_name,
        model,
    })
}

/// How running one response's calls ended.
struct RanTools {
    /// The user interrupted the turn.
    interrupted: bool,
    /// The user stopped the tools to reply.
    stopped: bool,
    /// Config changes were committed: the config must be resolved again.
    committed: bool,
}

/// What `run_turn` hands back: the turn's end, or its state when tools
/// changed the config and the turn goes on after it is resolved again.
enum Step {
    End(TurnEnd),
    Reload(Box<(TurnCoordinator, std::collections::VecDeque<Action>)>),
}

/// How the user interrupts a turn.
struct Interrupts {
    /// Cancelled to interrupt the turn: it stops the stream (closing the
    /// connection) or the running tool and its process group, and the turn
    /// ends keeping what it has.
    cancel: CancellationToken,
    /// A Ctrl+C that asks for the menu (continue, stop and reply, abort).
    menu: tokio::sync::mpsc::UnboundedReceiver<()>,
}

/// Watches the signals. SIGTERM, and SIGHUP when the terminal closes,
/// interrupt the turn; so does Ctrl+C without a terminal. With one
/// (`menus`), Ctrl+C asks for the menu instead. A signal after the turn was
/// interrupted exits at once.
fn interrupt_on_signals(menus: bool) -> Interrupts {
    let token = CancellationToken::new();
    let cancel = token.clone();
    let (ask_menu, menu) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut signals = Signals::new();
        loop {
            let signal = signals.next().await;
            if cancel.is_cancelled() {
                crate::prompt::restore_terminal();
                crate::errln!("interrupted twice; exiting");
                std::process::exit(i32::from(INTERRUPTED));
            }
            if !(menus && signal == Signal::CtrlC && ask_menu.send(()).is_ok()) {
                cancel.cancel();
            }
        }
    });
    Interrupts {
        cancel: token,
        menu,
    }
}

/// Which signal arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signal {
    CtrlC,
    Other,
}

/// The signals that interrupt a turn.
struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Self {
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// Waits for the next interrupting signal.
    async fn next(&mut self) -> Signal {
        #[cfg(unix)]
        {
            async fn recv(signal: &mut Option<tokio::signal::unix::Signal>) {
                match signal {
                    Some(signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                _ = tokio::signal::ctrl_c() => Signal::CtrlC,
                () = recv(&mut self.term) => Signal::Other,
                () = recv(&mut self.hup) => Signal::Other,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            Signal::CtrlC
        }
    }
}

/// The Ctrl+C menu while a response streams.
const STREAM_MENU_QUESTION: &str = "Ctrl+C while the response streams:";
const STREAM_MENU: [Choice; 3] = [
    Choice {
        key: 'c',
        help: "continue: keep receiving the response",
    },
    Choice {
        key: 's',
        help: "stop it here, keep what arrived, and write a reply",
    },
    Choice {
        key: 'a',
        help: "abort: stop here, keep what arrived, and exit (so does Ctrl+C)",
    },
];

/// The Ctrl+C menu while a tool runs.
const TOOL_MENU: [Choice; 4] = [
    Choice {
        key: 'c',
        help: "continue: let the tool run",
    },
    Choice {
        key: 's',
        help: "stop the tool (recorded as interrupted) and write a reply",
    },
    Choice {
        key: 'r',
        help: "restart the tool with the same arguments",
    },
    Choice {
        key: 'a',
        help: "abort: stop the tool and exit (so does Ctrl+C)",
    },
];

/// Ctrl+C with a terminal: opens the menu `open` makes, or aborts the turn
/// when a menu is open already.
fn ctrl_c<'m, F>(
    menu: &mut Option<LocalBoxFuture<'m, Result<char, PromptError>>>,
    cancel: &CancellationToken,
    open: impl FnOnce() -> F,
) where
    F: std::future::Future<Output = Result<char, PromptError>> + 'm,
{
    if menu.is_some() {
        cancel.cancel();
    } else {
        *menu = Some(Box::pin(open()));
    }
}

/// What stopping the stream early saved, for the user: `stopped the
/// stream after 2.1 KB of fs_create_file's arguments`. The chrome says it
/// when it happens; `jp conversation show` says it again from the
/// recorded [`EventKind::StreamStopped`].
pub fn stopped_note(tool: &str, bytes: usize) -> String {
    if bytes == 0 {
        format!("stopped the stream before {tool}'s arguments")
    } else {
        format!(
            "stopped the stream after {} of {tool}'s arguments",
            human_bytes(bytes)
        )
    }
}

/// `2.1 KB`, `512 B`: a size for people.
fn human_bytes(bytes: usize) -> String {
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

/// Why a stateful policy denied `call`, as the conversation records it
/// (telemetry for `jp conversation show`; never sent to the model).
fn denial_event(call: &ToolCallRequest, denial: crate::stateful::Denial) -> EventKind {
    EventKind::PolicyDenied(jp_conversation::PolicyDenial {
        id: call.id.clone(),
        policy: denial.policy,
        tool: call.name.clone(),
        reason: denial.reason,
        metadata: denial.metadata,
    })
}

/// What the model reads of a call whose config change was dropped because
/// the turn was interrupted before the cycle's changes were committed.
const INTERRUPTED_CHANGE: &str = "The tool finished, but the user interrupted jp before its config change was applied; the change was not applied and the result was not kept.";

/// `response` as the conversation records it: a call that failed because
/// the user interrupted the turn was stopped, not failed on its own.
fn as_recorded(response: ToolCallResponse, cancel: &CancellationToken) -> ToolCallResponse {
    if cancel.is_cancelled() && response.status == ResponseStatus::Error {
        ToolCallResponse {
            status: ResponseStatus::Interrupted,
            ..response
        }
    } else {
        response
    }
}

/// The answer of the menu in `menu`, which must be open.
async fn answer(
    menu: &mut Option<LocalBoxFuture<'_, Result<char, PromptError>>>,
) -> Result<char, PromptError> {
    match menu {
        Some(menu) => menu.await,
        None => std::future::pending().await,
    }
}

/// One turn's I/O.
struct Session {
    /// The config as of this cycle's start.
    config: std::sync::Arc<AppConfig>,
    provider: Box<dyn Provider>,
    model: String,
    /// The role header that starts each response: `── jp (PROVIDER/MODEL) ──`.
    header: String,
    printer: Printer,
    /// Renders calls live on a terminal.
    renderer: Option<ToolRenderer>,
    conversation: Conversation,
    lock: ConversationLock,
}

impl Session {
    /// Resolves the config again, with the conversation's config changes,
    /// for the rest of the turn. The message names what does not resolve;
    /// the change stays in the conversation.
    fn reload(
        &mut self,
        ctx: &Ctx,
        env: &HashMap<String, String>,
        root: &std::path::Path,
    ) -> Result<(), String> {
        let failed = |what: String| {
            format!(
                "the config a tool changed does not resolve: {what}; the change stays in the conversation (see `jp conversation show`), and a later one (a tool, or --cfg) can correct it"
            )
        };
        // The grants come from the config without the conversation's
        // changes; every change is authorized again, the new one too.
        let base = jp_config::load::load(&ctx.load_options())
            .map_err(|error| failed(error.to_string()))?;
        let authorized = conversation_deltas(&self.conversation, &base.config);
        crate::recorded::warn(
            &crate::recorded::log_name(root, &self.conversation.id, &ctx.cwd),
            &authorized.refused,
        );
        let loaded = ctx
            .load_with(authorized.layers)
            .map_err(|error| failed(error.to_string()))?;
        // The flags were recorded when the turn began, below this change,
        // except a value of a sensitive key, which stays on top for this
        // query only; say so rather than let the change look applied.
        let committed = self
            .conversation
            .events
            .iter()
            .rev()
            .find_map(|e| match &e.kind {
                EventKind::ConfigDelta(delta) => {
                    Some(delta.claims.keys().cloned().collect::<Vec<_>>())
                }
                _ => None,
            });
        for touched in committed.unwrap_or_default() {
            let Ok(unset) = jp_config::delta::UnsetPath::parse(&touched) else {
                continue;
            };
            if let Some(layer) = loaded.source_of(&unset.path)
                && layer.label.starts_with("--")
            {
                self.printer.chrome_line(
                    Style::Warn,
                    &format!(
                        "note: {} sets {} for this query only (a sensitive key's flag is not recorded in the conversation), so the change to it applies from the next query",
                        layer.label, unset.path
                    ),
                );
            }
        }
        let resolved = resolve(&loaded.config, env, root).map_err(|e| failed(e.to_string()))?;
        self.header = format!("── jp ({}/{}) ──", resolved.provider_name, resolved.model);
        self.model = resolved.model;
        self.provider = resolved.provider;
        self.config = std::sync::Arc::new(loaded.config);
        Ok(())
    }

    /// Appends `kind` to the conversation's log (one commit point).
    fn record(&mut self, kind: EventKind) -> Result<(), jp_conversation::StoreError> {
        self.lock
            .append(&mut self.conversation, [ConversationEvent::now(kind)])
    }

    fn request(&self) -> ChatRequest {
        let assistant = &self.config.assistant;
        let mut system = assistant.system_prompt.clone().unwrap_or_default();
        for instruction in &assistant.instructions {
            if !system.is_empty() {
                system.push_str("\n\n");
            }
            system.push_str(instruction);
        }
        ChatRequest {
            model: self.model.clone(),
            system: (!system.is_empty()).then_some(system),
            messages: jp_llm::request::messages(&self.conversation.events),
            tools: jp_llm::request::tool_definitions(&self.config),
            max_tokens: assistant.model.parameters.max_tokens,
            temperature: assistant.model.parameters.temperature,
            top_p: assistant.model.parameters.top_p,
        }
    }

    async fn run_turn<'t, E: ToolExecutor>(
        &mut self,
        tools: &'t ToolCoordinator<'_>,
        executor: &E,
        prompts: &'t Prompts,
        interrupts: &mut Interrupts,
        resume: Option<(TurnCoordinator, std::collections::VecDeque<Action>)>,
    ) -> Result<Step, Box<dyn std::error::Error>> {
        let (mut turn, mut queue) = match resume {
            Some(state) => state,
            None => {
                let seen_ids = self
                    .conversation
                    .events
                    .iter()
                    .filter_map(|e| match &e.kind {
                        EventKind::ToolCallRequest(call) => Some(call.id.clone()),
                        _ => None,
                    })
                    .collect();
                let mut turn = TurnCoordinator::new(MAX_CYCLES, seen_ids);
                let queue: std::collections::VecDeque<Action> = turn.start().into();
                (turn, queue)
            }
        };
        // Verdicts by the call's number in the response (never by id, which
        // a provider could repeat).
        let mut calls = Calls::new(prompts);
        let mut pending: Pending<'t> = FuturesUnordered::new();
        while let Some(action) = queue.pop_front() {
            match action {
                Action::Request { cycle } => {
                    tracing::debug!(cycle, "requesting a response");
                    // One header per response, not per query: after a
                    // tool's result or the user's reply, it says that the
                    // model speaks again, in a terminal and in a log alike.
                    self.printer.chrome_line(Style::Header, &self.header);
                    self.printer.spin(&format!("waiting for {}", self.model));
                    calls = Calls::new(prompts);
                    let inputs = self.stream_response(
                        &mut turn,
                        &mut calls,
                        &mut pending,
                        tools,
                        prompts,
                        interrupts,
                    );
                    queue.extend(inputs.await?);
                }
                Action::RunTools(list) => {
                    // The stream is over; the prompts still open decide.
                    loop {
                        tokio::select! {
                            settled = pending.next() => {
                                let Some(settled) = settled else { break };
                                let mut abandon = Vec::new();
                                self.on_settled(
                                    settled,
                                    &mut calls,
                                    &mut pending,
                                    tools,
                                    prompts,
                                    &mut abandon,
                                );
                            }
                            Some((call, reply)) = calls.views.recv() => {
                                let _ = reply.send(self.view(&turn, &calls, call));
                            }
                        }
                    }
                    if calls.withdrawn {
                        // A withdrawn question leaves the terminal before
                        // anything else is printed below it.
                        prompts.closed().await;
                    }
                    let ran = self
                        .run_tools(list, &mut calls, tools, executor, prompts, interrupts)
                        .await?;
                    if ran.interrupted {
                        return Ok(Step::End(TurnEnd::Interrupted));
                    }
                    let input = if ran.stopped {
                        Input::Stopped
                    } else {
                        Input::ToolsDone
                    };
                    queue.extend(turn.handle(input));
                    if ran.committed {
                        return Ok(Step::Reload(Box::new((turn, queue))));
                    }
                }
                Action::AskReply => {
                    let Some(reply) = self.ask_reply(prompts).await else {
                        return Ok(Step::End(TurnEnd::Interrupted));
                    };
                    queue.extend(turn.handle(Input::Reply(reply)));
                }
                Action::Finish(end) => return Ok(Step::End(end)),
                other => {
                    let mut abandon = Vec::new();
                    self.perform(
                        other,
                        &mut calls,
                        &mut pending,
                        tools,
                        prompts,
                        &turn,
                        &mut abandon,
                    )?;
                }
            }
        }
        Ok(Step::End(TurnEnd::Completed))
    }

    /// Runs the calls of one response, in order, once every one of them
    /// is decided: each checked at its start, its result shown and kept,
    /// what the cycle records held from the first call that changed the
    /// config on, and the changes committed with it at the end (or not,
    /// [`Session::settle_changes`]).
    async fn run_tools<E: ToolExecutor>(
        &mut self,
        list: Vec<(usize, ToolCallRequest)>,
        calls: &mut Calls<'_>,
        tools: &ToolCoordinator<'_>,
        executor: &E,
        prompts: &Prompts,
        interrupts: &mut Interrupts,
    ) -> Result<RanTools, Box<dyn std::error::Error>> {
        let cancel = interrupts.cancel.clone();
        let mut stopped = false;
        // Config changes the tools' grants allowed, committed
        // together when every call of this response is done.
        let mut changes = jp_config::delta::Buffer::default();
        // What the calls record from the first call that
        // changed the config on, each response with whether its
        // change is in `changes`: recorded together with the
        // change when it is committed, or told the change was
        // not applied when the cycle is interrupted (the model
        // must never read "switched to ..." for a switch that
        // did not happen).
        let mut held: Vec<(EventKind, bool)> = Vec::new();
        // Where the paths of the calls the user approved lead
        // now, before any call runs: as they were approved.
        let mut seen: HashMap<usize, Vec<(String, String)>> = list
            .iter()
            .filter_map(|(number, _)| match calls.verdicts.get(number) {
                Some(Verdict::Run {
                    tool,
                    arguments,
                    approved: true,
                    ..
                }) => Some((*number, tools.path_targets(tool, arguments.as_value()))),
                _ => None,
            })
            .collect();
        for (number, call) in list {
            let mut changed_config = false;
            let not_run = |content: &str| ToolCallResponse {
                id: call.id.clone(),
                status: ResponseStatus::Interrupted,
                content: content.into(),
                ran: None,
            };
            let response = match calls.verdicts.remove(&number) {
                // Interrupted: the calls not yet run never run.
                Some(Verdict::Run { .. }) if cancel.is_cancelled() => {
                    not_run("The call was not run: the user interrupted the turn.")
                }
                Some(Verdict::Run { .. }) if stopped => {
                    not_run("The call was not run: the user stopped the tools to reply.")
                }
                Some(Verdict::Run {
                    arguments,
                    tool,
                    edited,
                    mode,
                    ..
                }) if tool == call.name => {
                    // The stateful policies decide last, with
                    // what the calls before this one did.
                    if let Some(denial) = tools.stateful_check(&call.name, &arguments) {
                        let Verdict::NotRun { response, note } =
                            tools::denied(&call.id, &call.name, &denial)
                        else {
                            unreachable!("denied() is a NotRun verdict")
                        };
                        self.printer.chrome_line(Style::Warn, &format!("  {note}"));
                        self.keep(&mut held, denial_event(&call, denial), false)?;
                        response
                    } else {
                        let mut approval = tools::Approval {
                            arguments,
                            edited,
                            mode,
                            runs: 0,
                            seen: seen.remove(&number),
                        };
                        let (ran, stop) = self
                            .run_call(&call, &mut approval, executor, tools, prompts, interrupts)
                            .await;
                        stopped |= stop;
                        if let Some(denial) = ran.denial.clone() {
                            // Denied at its start, after an edit.
                            self.keep(&mut held, denial_event(&call, denial), false)?;
                        }
                        if let Some(delta) = ran.delta.clone() {
                            changes.add(number, &call.name, delta);
                            changed_config = true;
                        }
                        // Shown as it is recorded.
                        let ran = tools::Ran {
                            response: as_recorded(ran.response, &cancel),
                            ..ran
                        };
                        self.show_result(&call, &ran.response, ran.note.as_deref());
                        if !ran.stderr.is_empty() {
                            tracing::info!(tool = %call.name, stderr = %ran.stderr.trim_end(), "tool stderr");
                        }
                        let tools::Approval {
                            arguments, edited, ..
                        } = approval;
                        let keys = tools.stateful_learn(&call.name, &arguments, &ran.response);
                        // What really ran, for a replay.
                        let ran_with = jp_conversation::RanWith {
                            arguments: edited.then(|| arguments.into_map()),
                            keys,
                        };
                        ToolCallResponse {
                            ran: (ran_with != jp_conversation::RanWith::default())
                                .then_some(ran_with),
                            ..ran.response
                        }
                    }
                }
                Some(Verdict::NotRun { response, .. }) => {
                    if let Some(denial) = calls.denials.remove(&number) {
                        self.keep(&mut held, denial_event(&call, denial), false)?;
                    }
                    response
                }
                // A verdict for another tool, or none: fail closed.
                Some(Verdict::Run { .. }) | None => ToolCallResponse {
                    id: call.id.clone(),
                    status: ResponseStatus::Refused,
                    content: "The call was not run: jp made no decision for it.".into(),
                    ran: None,
                },
            };
            let response = as_recorded(response, &cancel);
            self.keep(
                &mut held,
                EventKind::ToolCallResponse(response),
                changed_config,
            )?;
        }
        let interrupted = cancel.is_cancelled();
        // An interrupted cycle commits no config change, and the calls
        // that proposed one say so.
        let committed = self.settle_changes(held, &changes, interrupted)?;
        Ok(RanTools {
            interrupted,
            stopped,
            committed,
        })
    }

    /// Records what the cycle `held` for its config `changes` (each event
    /// with whether it is the result of a call that changed the config),
    /// and commits the changes with it, unless the turn was `interrupted`
    /// or the config would not load with all of them: then none applies,
    /// and each changing call's result says its change was not applied
    /// instead of what the tool said of it. Whether the changes were
    /// committed (the config must be resolved again).
    fn settle_changes(
        &mut self,
        held: Vec<(EventKind, bool)>,
        changes: &jp_config::delta::Buffer,
        interrupted: bool,
    ) -> Result<bool, jp_conversation::StoreError> {
        let folded = changes.fold();
        let dropped = if interrupted {
            Some((ResponseStatus::Interrupted, INTERRUPTED_CHANGE.to_owned()))
        } else {
            // Each change was checked alone against the config as the
            // cycle began; together they must load as well.
            folded.as_ref().and_then(|f| self.unloadable(f)).map(|detail| {
                self.printer.chrome_line(
                    Style::Bad,
                    &format!(
                        "⚠ the config changes of this response were not applied: together they leave a config that does not load: {detail}"
                    ),
                );
                (
                    ResponseStatus::Error,
                    format!(
                        "The tool finished, but its config change was not applied: together with the other config changes of this response it leaves a config that does not load ({detail}). The result was not kept."
                    ),
                )
            })
        };
        let events = held
            .into_iter()
            .map(|(event, changed)| match (event, &dropped) {
                (EventKind::ToolCallResponse(response), Some((status, content))) if changed => {
                    if interrupted {
                        self.printer.chrome_line(
                            Style::Warn,
                            &format!(
                                "  the config change of call {} was not applied: the turn was interrupted",
                                response.id
                            ),
                        );
                    }
                    EventKind::ToolCallResponse(ToolCallResponse {
                        status: *status,
                        content: content.clone(),
                        ..response
                    })
                }
                (event, _) => event,
            })
            .collect();
        match folded {
            Some(folded) if dropped.is_none() => {
                self.commit(events, folded)?;
                Ok(true)
            }
            _ => {
                self.commit_events(events)?;
                Ok(false)
            }
        }
    }

    /// Why the config would not load with all of one cycle's changes
    /// (`folded`), each of which loads on its own; `None` when it loads.
    fn unloadable(&self, folded: &jp_config::delta::Folded) -> Option<String> {
        let unsets = folded
            .unsets
            .iter()
            .map(|text| jp_config::delta::UnsetPath::parse(text))
            .collect::<Result<Vec<_>, _>>();
        let unsets = match unsets {
            Ok(unsets) => unsets,
            Err(error) => return Some(error),
        };
        let together = jp_config::delta::Proposal {
            sets: jp_config::delta::leaves(&serde_json::Value::Object(folded.delta.clone())),
            unsets,
        };
        together.check_loads(&self.config).err().map(|refusal| {
            // Said of one change; here it is all of them.
            refusal
                .detail
                .strip_prefix("with this change the config would not load: ")
                .map_or_else(|| refusal.detail.clone(), str::to_owned)
        })
    }

    /// Records `kind` now, or holds it (in `held`) when the cycle holds
    /// what its calls record until its config change is committed: from
    /// the first response whose call `changed` the config on.
    fn keep(
        &mut self,
        held: &mut Vec<(EventKind, bool)>,
        kind: EventKind,
        changed: bool,
    ) -> Result<(), jp_conversation::StoreError> {
        if held.is_empty() && !changed {
            self.record(kind)
        } else {
            held.push((kind, changed));
            Ok(())
        }
    }

    /// Records `events` held for a config change in one commit.
    fn commit_events(&mut self, events: Vec<EventKind>) -> Result<(), jp_conversation::StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let events = events.into_iter().map(ConversationEvent::now);
        self.lock.append(&mut self.conversation, events)
    }

    /// Records what was held for one cycle's config changes (`events`)
    /// and the changes, as one event with every path it touches explicitly
    /// unclaimed, in one commit (a killed jp leaves all or none), and says
    /// so.
    fn commit(
        &mut self,
        events: Vec<EventKind>,
        folded: jp_config::delta::Folded,
    ) -> Result<(), jp_conversation::StoreError> {
        self.printer.chrome_line(
            Style::Dim,
            &format!(
                "config changed by {}: {}",
                folded.tools.join(", "),
                folded.touched.join(", ")
            ),
        );
        let claims = folded
            .touched
            .iter()
            .map(|path| (path.clone(), Vec::new()))
            .collect();
        let change = EventKind::ConfigDelta(jp_conversation::ConfigDelta {
            delta: folded.delta,
            unsets: folded.unsets,
            claims,
            tools: folded.tools,
            flags: Vec::new(),
        });
        let events = events
            .into_iter()
            .chain([change])
            .map(ConversationEvent::now)
            .collect::<Vec<_>>();
        self.lock.append(&mut self.conversation, events)
    }

    /// The user's reply after they stopped the turn: `Some(None)` for no
    /// reply, `None` when they interrupted instead.
    async fn ask_reply(&self, prompts: &Prompts) -> Option<Option<String>> {
        let question = jp_tool::Question {
            id: "reply".into(),
            text: "Your reply (Enter alone ends the turn):".into(),
            answer: jp_tool::AnswerKind::Text,
            default: None,
        };
        let answer = match prompts.turn().await {
            Ok(prompt) => prompt.ask(&question).await,
            Err(error) => Err(error),
        };
        match answer {
            Ok(serde_json::Value::String(reply)) if !reply.trim().is_empty() => Some(Some(reply)),
            Err(PromptError::Interrupted) => None,
            Ok(_) | Err(_) => Some(None),
        }
    }

    /// Runs one approved call. Ctrl+C meanwhile opens the tool menu:
    /// continue, stop it and reply (the second value is then true), or
    /// restart it.
    async fn run_call<E: ToolExecutor>(
        &self,
        call: &ToolCallRequest,
        approval: &mut tools::Approval,
        executor: &E,
        tools: &ToolCoordinator<'_>,
        prompts: &Prompts,
        interrupts: &mut Interrupts,
    ) -> (tools::Ran, bool) {
        let question = format!("Ctrl+C while {} runs:", call.name);
        loop {
            if !self.hidden(&call.name) {
                self.printer.spin(&format!("running {}", call.name));
            }
            let stop = interrupts.cancel.child_token();
            let mut run = std::pin::pin!(tools.run(call, approval, executor, prompts, &stop));
            let mut menu: Option<LocalBoxFuture<'_, Result<char, PromptError>>> = None;
            let choice = loop {
                tokio::select! {
                    ran = &mut run => return (ran, false),
                    Some(()) = interrupts.menu.recv() => {
                        ctrl_c(&mut menu, &interrupts.cancel, || prompts.urgent(&question, &TOOL_MENU));
                    }
                    choice = answer(&mut menu), if menu.is_some() => {
                        menu = None;
                        match choice {
                            Ok('c') => {}
                            Ok(key @ ('s' | 'r')) => break key,
                            // `a`, or Ctrl+C at the menu.
                            Ok(_) | Err(_) => interrupts.cancel.cancel(),
                        }
                    }
                }
            };
            stop.cancel();
            let ran = run.await;
            if choice == 's' {
                let response = ToolCallResponse {
                    status: ResponseStatus::Interrupted,
                    content: "The user stopped the tool while it ran.".into(),
                    ..ran.response
                };
                let ran = tools::Ran { response, ..ran };
                return (ran, true);
            }
            self.printer
                .chrome_line(Style::Warn, &format!("  {}: restarting", call.name));
        }
    }

    /// Streams one response into the turn; returns the actions left for
    /// after the stream (running tools, the next request, the end). Prompts
    /// for its calls wait for the user meanwhile; the stream is read and
    /// shown all along, also while the Ctrl+C menu is open.
    async fn stream_response<'t>(
        &mut self,
        turn: &mut TurnCoordinator,
        calls: &mut Calls<'t>,
        pending: &mut Pending<'t>,
        tools: &'t ToolCoordinator<'_>,
        prompts: &'t Prompts,
        interrupts: &mut Interrupts,
    ) -> Result<Vec<Action>, Box<dyn std::error::Error>> {
        let cancel = interrupts.cancel.clone();
        let mut stream = self.provider.stream(self.request());
        let mut after = Vec::new();
        let mut menu: Option<LocalBoxFuture<'t, Result<char, PromptError>>> = None;
        // Calls declined while they stream, to end in the turn.
        let mut abandon: Vec<usize> = Vec::new();
        loop {
            let input = tokio::select! {
                // An interrupt wins over events already waiting.
                biased;
                () = cancel.cancelled() => Input::Interrupted,
                Some(()) = interrupts.menu.recv() => {
                    ctrl_c(&mut menu, &cancel, || prompts.urgent(STREAM_MENU_QUESTION, &STREAM_MENU));
                    continue;
                }
                choice = answer(&mut menu), if menu.is_some() => {
                    drop(menu.take());
                    match choice {
                        Ok('c') => continue,
                        Ok('s') => Input::Stopped,
                        // `a`, or Ctrl+C at the menu.
                        Ok(_) | Err(_) => {
                            cancel.cancel();
                            continue;
                        }
                    }
                }
                Some((call, reply)) = calls.views.recv() => {
                    let _ = reply.send(self.view(turn, calls, call));
                    continue;
                }
                Some(settled) = pending.next(), if !pending.is_empty() => {
                    self.on_settled(settled, calls, pending, tools, prompts, &mut abandon);
                    match abandon.pop() {
                        Some(call) => Input::Abandon { call },
                        None => continue,
                    }
                }
                item = stream.next() => match item {
                    Some(Ok(event)) => Input::Event(event),
                    Some(Err(error)) => Input::StreamFailed(error),
                    None => Input::StreamEnded,
                },
            };
            let mut inputs = vec![input];
            let mut ends = false;
            while let Some(input) = inputs.pop() {
                // On an interrupt, a stop or a cancel, leaving this loop
                // drops the stream, which closes the connection: that stops
                // generation and billing.
                ends |= !matches!(input, Input::Event(_) | Input::Abandon { .. });
                let actions = turn.handle_with(input, &mut |call, progress, view| {
                    let known = |key: &str| view.argument(key);
                    let state = CallState {
                        argument: &known,
                        bytes: view.argument_bytes(),
                        others: view.others_streaming(),
                    };
                    self.on_progress(
                        call,
                        progress,
                        &state,
                        calls,
                        pending,
                        tools,
                        prompts,
                        &mut abandon,
                    );
                });
                for action in actions {
                    if let Action::ToolCallStarted { call, name, .. } = &action {
                        let limit = argument_limit(&self.config.conversation.tools, name);
                        turn.limit_arguments(
                            *call,
                            usize::try_from(limit.bytes).unwrap_or(usize::MAX),
                        );
                    }
                    match action {
                        Action::RunTools(_)
                        | Action::Request { .. }
                        | Action::AskReply
                        | Action::Finish(_) => {
                            after.push(action);
                        }
                        Action::CancelStream { call, tool, bytes } => {
                            ends = true;
                            self.stopped_stream(calls, call, &tool, bytes);
                        }
                        other => {
                            self.perform(
                                other,
                                calls,
                                pending,
                                tools,
                                prompts,
                                turn,
                                &mut abandon,
                            )?;
                        }
                    }
                }
                inputs.extend(abandon.drain(..).map(|call| Input::Abandon { call }));
            }
            if ends {
                // Every call of the response is decided or answered now; a
                // place still reserved would hold up the prompts to come
                // (a tool's question, the reply).
                calls.tickets.release_all();
                if after
                    .iter()
                    .any(|a| matches!(a, Action::Finish(_) | Action::AskReply))
                {
                    // The response failed, or was interrupted or stopped:
                    // its calls are answered already; their prompts close,
                    // and what the turn prints next (why it ended) waits
                    // until they have, so it is not drawn above a prompt
                    // that then stays on screen, unanswered, below it.
                    pending.clear();
                    drop(menu.take());
                    prompts.closed().await;
                }
                // The next response, or the chrome after this one, starts on
                // a line of its own.
                self.printer.finish_content();
                return Ok(after);
            }
        }
    }

    /// The stream was closed early because call number `call`, declined,
    /// was the last one streaming: say so, to the user and the model.
    fn stopped_stream(&self, calls: &mut Calls<'_>, call: usize, tool: &str, bytes: usize) {
        let told = if bytes == 0 {
            " jp stopped your response before this call's arguments.".to_owned()
        } else {
            format!(
                " jp stopped your response after {} of this call's arguments.",
                human_bytes(bytes)
            )
        };
        self.printer
            .chrome_line(Style::Dim, &format!("  {}", stopped_note(tool, bytes)));
        if let Some(Verdict::NotRun { response, .. }) = calls.verdicts.get_mut(&call) {
            response.content.push_str(&told);
        }
    }

    /// Carries out an action that needs no waiting. Calls declined while
    /// they stream are added to `abandon`.
    #[allow(clippy::too_many_arguments)]
    fn perform<'t>(
        &mut self,
        action: Action,
        calls: &mut Calls<'t>,
        pending: &mut Pending<'t>,
        tools: &'t ToolCoordinator<'_>,
        prompts: &'t Prompts,
        turn: &TurnCoordinator,
        abandon: &mut Vec<usize>,
    ) -> Result<(), Box<dyn std::error::Error>> {
        match action {
            Action::Text(text) => self.printer.write(Channel::Content, &text),
            Action::Reasoning(text) => {
                if self.config.style.show_reasoning {
                    self.printer.chrome_text(Style::Dim, &text);
                }
            }
            Action::Notice(text) => self.printer.chrome_line(Style::Warn, &text),
            Action::ToolCallStarted { call, id, name } => {
                tracing::debug!(%id, %name, "tool call started");
                if !self.hidden(&name)
                    && let Some(renderer) = &mut self.renderer
                {
                    let lines = renderer.start(&id, &name);
                    self.print_lines(lines);
                }
                let not_offered = tools.not_offered(&id, &name);
                calls.started.insert(call, (id, name.clone()));
                calls.tickets.reserve(call);
                if let Some(verdict) = not_offered {
                    // It can never run: refused now, and the stream
                    // closed as for a decline when nothing else streams.
                    calls.refuse(call, verdict);
                    abandon.push(call);
                    return Ok(());
                }
                match tools.watch(&name) {
                    None => {}
                    Some(Ok(decision)) => {
                        let (others, others_bytes) = turn.others_streaming(call);
                        tracing::debug!(
                            call,
                            tool = %name,
                            mode = %decision.mode,
                            bytes = 0,
                            others,
                            others_bytes,
                            "decided while streaming"
                        );
                        let known = |key: &str| turn.argument(call, key).cloned();
                        self.act_early(
                            call, decision, calls, pending, tools, prompts, &known, abandon,
                        );
                    }
                    Some(Err(watch)) => {
                        calls.early.insert(call, Early::Watching(watch));
                    }
                }
            }
            Action::ArgumentProgress { call, progress } => {
                let known = |key: &str| turn.argument(call, key);
                let state = CallState {
                    argument: &known,
                    bytes: turn.argument_bytes(call),
                    others: turn.others_streaming(call),
                };
                self.on_progress(
                    call,
                    progress.view(),
                    &state,
                    calls,
                    pending,
                    tools,
                    prompts,
                    abandon,
                );
            }
            Action::ArgumentsTooLarge {
                call,
                tool,
                limit,
                bytes,
            } => {
                tracing::debug!(call, %tool, limit, bytes, "arguments over the limit");
                let id = calls
                    .started
                    .get(&call)
                    .map(|(id, _)| id.clone())
                    .unwrap_or_default();
                let key = argument_limit(&self.config.conversation.tools, &tool).key;
                let verdict = tools::too_large(&id, &tool, limit, &key);
                // The call is ended next, and its `Decide` takes this
                // answer.
                calls.refuse(call, verdict);
            }
            Action::Record(kind) => self.record(kind)?,
            Action::Decide { call, request } => {
                if let Some(Early::Answered(Answer::NotRun(_))) = calls.early.get(&call) {
                    // jp ended it while it streamed: what arrived is shown
                    // without calling it truncated (the model did not
                    // stop; jp stopped reading).
                    self.show_call(&request.as_received());
                } else {
                    self.show_call(&request);
                }
                let early = match calls.early.remove(&call) {
                    Some(Early::Asking) => {
                        // The answer decides, when it comes.
                        calls.complete.insert(call, request);
                        return Ok(());
                    }
                    Some(Early::Answered(answer)) => Some(answer),
                    Some(Early::Decided(decision) | Early::Held(decision)) => {
                        Some(Answer::Policy(decision))
                    }
                    Some(Early::Watching(_)) | None => None,
                };
                let decided = tools.decide_after(&request, prompts, early);
                self.decided(call, decided, calls, pending, tools);
            }
            Action::Request { .. }
            | Action::RunTools(_)
            | Action::AskReply
            | Action::Finish(_)
            | Action::CancelStream { .. } => {}
        }
        Ok(())
    }

    /// A piece of call number `call`'s arguments arrived: show it, feed the
    /// streaming policy, and act on a decision it made. `state` is the call
    /// as it is after this piece. Nothing of the piece is kept past this
    /// call (issue 14).
    #[allow(clippy::too_many_arguments)]
    fn on_progress<'t>(
        &mut self,
        call: usize,
        progress: ProgressRef<'_>,
        state: &CallState<'_>,
        calls: &mut Calls<'t>,
        pending: &mut Pending<'t>,
        tools: &'t ToolCoordinator<'_>,
        prompts: &'t Prompts,
        abandon: &mut Vec<usize>,
    ) {
        tracing::trace!(?progress, "argument progress");
        if !self.hidden(progress.tool_name)
            && let Some(renderer) = &mut self.renderer
        {
            let lines = renderer.progress_ref(progress);
            self.print_lines(lines);
        }
        // A value that can never run (a path with NUL, an integer written
        // `1e2`) is refused before any policy looks at it.
        if !matches!(
            calls.early.get(&call),
            Some(Early::Answered(Answer::NotRun(_)))
        ) && let Some((id, _)) = calls.started.get(&call)
            && let Some(verdict) = tools.refused_while_streaming(
                id,
                progress.tool_name,
                progress.fragment.path(),
                progress.fragment.leaf(),
            )
        {
            calls.refuse(call, verdict);
            abandon.push(call);
            return;
        }
        let known = |key: &str| (state.argument)(key).cloned();
        if let Some(Early::Watching(watch)) = calls.early.get_mut(&call)
            && let Some(decision) = watch
                .feed_fragment(progress.fragment, state.argument, tools.workspace())
                .cloned()
        {
            // With the other calls still streaming then, so a log
            // shows what a decision came before.
            let (others, others_bytes) = state.others;
            tracing::debug!(
                call,
                tool = %progress.tool_name,
                mode = %decision.mode,
                bytes = state.bytes,
                others,
                others_bytes,
                "decided while streaming"
            );
            self.act_early(
                call, decision, calls, pending, tools, prompts, &known, abandon,
            );
        }
        // A question held for a stateful policy's argument: asked
        // (or denied) once it is in.
        // Only at the end of one it waits for: the builder may be
        // further on than this fragment, the renderer is not.
        if let Some(Early::Held(_)) = calls.early.get(&call)
            && let Some(key) = progress.fragment.completes_argument()
            && tools.stateful_waits_on(progress.tool_name, key)
            && !tools.stateful_waits(progress.tool_name, &known)
            && let Some(Early::Held(decision)) = calls.early.remove(&call)
        {
            self.act_early(
                call, decision, calls, pending, tools, prompts, &known, abandon,
            );
        }
    }

    /// Acts on a decision made while call number `call` streams.
    #[allow(clippy::too_many_arguments)]
    fn act_early<'t>(
        &self,
        call: usize,
        decision: jp_config::policy::Decision,
        calls: &mut Calls<'t>,
        pending: &mut Pending<'t>,
        tools: &'t ToolCoordinator<'_>,
        prompts: &'t Prompts,
        known: &dyn Fn(&str) -> Option<serde_json::Value>,
        abandon: &mut Vec<usize>,
    ) {
        let Some((id, name)) = calls.started.get(&call).cloned() else {
            return;
        };
        match tools.early(&id, &name, decision, prompts, known) {
            EarlyStep::Keep(decision) => {
                if decision.mode == jp_config::policy::Mode::Unattended {
                    // It runs unasked: the check at Flush can refuse it,
                    // never make it ask (the streaming decision equals the
                    // batch one), so the calls after it need not wait for
                    // its prompt. (Only the check at its start, after the
                    // calls before it ran, can still make it ask, and that
                    // question takes a new place in line.)
                    calls.tickets.release(call);
                }
                calls.early.insert(call, Early::Decided(decision));
            }
            EarlyStep::NotRun(verdict) => {
                calls.tickets.release(call);
                calls
                    .early
                    .insert(call, Early::Answered(Answer::NotRun(verdict)));
                abandon.push(call);
            }
            EarlyStep::Ask(decision) => {
                // The question waits for what the stateful policies check.
                if tools.stateful_waits(&name, known) {
                    calls.early.insert(call, Early::Held(decision));
                    return;
                }
                // Not asked about when a stateful policy will deny it
                // whatever the user says: it ends now, like a decline.
                if calls.nothing_runs_before(call)
                    && let Some(denial) = tools.stateful_check_partial(&name, known)
                {
                    let verdict = tools::denied(&id, &name, &denial);
                    calls.tickets.release(call);
                    calls.denials.insert(call, denial);
                    calls
                        .early
                        .insert(call, Early::Answered(Answer::NotRun(verdict)));
                    abandon.push(call);
                    return;
                }
                let shown = self
                    .renderer
                    .as_ref()
                    .and_then(|r| r.prompt_summary(&id))
                    .unwrap_or_else(|| format!("{name}(<streaming>)"));
                calls.early.insert(call, Early::Asking);
                // The place in line taken when the call started.
                let ticket = calls.tickets.take(call);
                let views = calls.view_requests.clone();
                let withdrawn = CancellationToken::new();
                calls.withdraw.insert(call, withdrawn.clone());
                pending.push(Box::pin(async move {
                    // `v`: the turn sends the arguments so far.
                    let view = || {
                        let views = views.clone();
                        async move {
                            let (reply, answer) = tokio::sync::oneshot::channel();
                            views.send((call, reply)).ok()?;
                            answer.await.ok().flatten()
                        }
                    };
                    tokio::select! {
                        answer = tools.confirm_early(&id, &name, &shown, decision, ticket, view) => {
                            Settled::Early(call, answer)
                        }
                        () = withdrawn.cancelled() => Settled::Withdrawn,
                    }
                }));
            }
        }
    }

    /// What `v` at call number `call`'s early prompt pages: its arguments
    /// as far as they have arrived, or all of them once complete.
    fn view(&self, turn: &TurnCoordinator, calls: &Calls<'_>, call: usize) -> Option<String> {
        let (_, name) = calls.started.get(&call)?;
        let so_far = match calls.complete.get(&call) {
            Some(request) => jp_conversation::ArgumentsSoFar {
                arguments: request.received_arguments().clone(),
                streaming: None,
                complete: true,
            },
            None => turn.arguments_so_far(call)?,
        };
        Some(tools::arguments_page(name, &so_far))
    }

    /// A prompt settled something about call number `call`.
    fn on_settled<'t>(
        &self,
        settled: Settled,
        calls: &mut Calls<'t>,
        pending: &mut Pending<'t>,
        tools: &'t ToolCoordinator<'_>,
        prompts: &'t Prompts,
        abandon: &mut Vec<usize>,
    ) {
        match settled {
            Settled::Verdict(call, verdict) => self.settle(calls, call, verdict),
            // Its verdict is kept already.
            Settled::Withdrawn => calls.withdrawn = true,
            Settled::Early(call, answer) => {
                if let Some(request) = calls.complete.remove(&call) {
                    let decided = tools.decide_after(&request, prompts, Some(answer));
                    self.decided(call, decided, calls, pending, tools);
                    return;
                }
                // Still streaming: a decline ends it now.
                if matches!(answer, Answer::NotRun(_)) {
                    abandon.push(call);
                }
                calls.early.insert(call, Early::Answered(answer));
            }
        }
    }

    /// What `decide` decided for call number `call`: keep the verdict, or
    /// put the question to the user.
    fn decided<'t>(
        &self,
        call: usize,
        decided: Decided,
        calls: &mut Calls<'t>,
        pending: &mut Pending<'t>,
        tools: &'t ToolCoordinator<'_>,
    ) {
        match decided {
            Decided::Now(verdict) => self.settle(calls, call, verdict),
            Decided::Ask(ask)
                if calls.nothing_runs_before(call)
                    && let Some((verdict, denial)) = tools.deny_instead_of_asking(&ask) =>
            {
                // A stateful policy will deny it: not put to the user.
                calls.denials.insert(call, denial);
                self.settle(calls, call, verdict);
            }
            Decided::Ask(ask) => {
                // The place in line taken when the call started.
                let ticket = calls.tickets.take(call);
                pending.push(Box::pin(async move {
                    Settled::Verdict(call, tools.confirm(ask, ticket).await)
                }));
            }
        }
    }

    /// A call's verdict is known: shows it and keeps it for `RunTools`.
    fn settle(&self, calls: &mut Calls<'_>, call: usize, verdict: Verdict) {
        calls.tickets.release(call);
        self.show_verdict(&verdict);
        calls.verdicts.insert(call, verdict);
    }

    fn hidden(&self, tool: &str) -> bool {
        self.config
            .conversation
            .tools
            .get(tool)
            .and_then(|t| t.style.hidden)
            .unwrap_or(false)
    }

    fn print_lines(&self, lines: Vec<render::Line>) {
        if lines.is_empty() {
            return;
        }
        self.printer.finish_content();
        for line in lines {
            self.printer.chrome_line(line.style, &line.text);
        }
    }

    /// The call, before it is decided (so a prompt follows it): on a
    /// terminal the rest of what streamed, in a log one line.
    fn show_call(&mut self, call: &ToolCallRequest) {
        self.printer.finish_content();
        if let Some(renderer) = &mut self.renderer {
            let lines = renderer.finish(call);
            if !self.hidden(&call.name) {
                self.print_lines(lines);
            }
            return;
        }
        if self.hidden(&call.name) {
            return;
        }
        let args = received_arguments_line(call, 100);
        self.printer.chrome_line(
            Style::Header,
            &format!("Calling tool {}({args})", call.name),
        );
    }

    fn show_verdict(&self, verdict: &Verdict) {
        match verdict {
            Verdict::Run {
                tool,
                mode,
                reason,
                approved,
                ..
            } => {
                if !self.hidden(tool) {
                    let how = if *approved {
                        format!("approved ({mode}: {reason})")
                    } else {
                        format!("{mode} ({reason})")
                    };
                    self.printer.chrome_line(Style::Dim, &format!("  {how}"));
                }
            }
            Verdict::NotRun { note, .. } => {
                self.printer.chrome_line(Style::Warn, &format!("  {note}"));
            }
        }
    }

    /// The call's result, as [`render::result_lines`] lays it out; on a
    /// terminal wrapped to its width like the call's arguments, in a log
    /// one line per result line.
    fn show_result(&self, call: &ToolCallRequest, response: &ToolCallResponse, note: Option<&str>) {
        let max = self
            .config
            .conversation
            .tools
            .get(&call.name)
            .and_then(|t| t.style.result_lines)
            .unwrap_or(self.config.style.tool_call.result_lines) as usize;
        let mut lines =
            render::result_lines(&call.name, response, note, max, self.hidden(&call.name));
        if let Some(renderer) = &self.renderer {
            lines = render::wrap(lines, renderer.width());
        }
        for line in lines {
            self.printer.chrome_line(line.style, &line.text);
        }
    }
}
