//! `jp query`: one turn of a conversation.
//!
//! Two pure machines decide; a thin async shell does the I/O (streams from
//! the provider, prints, prompts, runs tools, saves the conversation after
//! every recorded event). One tool call travels through these files in
//! this order:
//!
//! 1. [`session`]: the [`session::Session`] (the conversation and the
//!    terminal) makes a request, and the turn's loop
//!    ([`drive`](mod@drive)) hands it to a [`stream::Response`], which
//!    reads the provider's events into the [`turn::TurnCoordinator`]; that
//!    parses the call's argument chunks as they arrive and returns actions
//!    (`ToolCallStarted`, `ArgumentProgress`, `Decide`, `RunTools`), which
//!    the `Response` carries out.
//! 2. [`calls`]: the [`calls::Calls`] machine takes each of those for the
//!    call (started, a piece of its arguments, complete, answered) and
//!    says what to do: hold its place in the prompt line, ask while it
//!    streams, end it early (the stream stops when nothing else streams),
//!    or settle its verdict. It asks the [`tools::Judge`] what the
//!    policies say ([`tools::judge`]: `policy.run` while streaming and
//!    once complete, the stateful policies, the session approvals).
//!    [`decision`] is the ladder of what is decided about a call, stage by
//!    stage.
//! 3. [`tools::asker`]: the [`tools::Asker`] puts the questions to the user
//!    (run, allow for the session, decline, edit, view), in call order
//!    ([`tickets`]).
//! 4. [`run`]: once the response ends, a [`run::Cycle`] runs its calls in
//!    order through the [`tools::Runner`] ([`tools::runner`]): each
//!    checked again at its start, run by a [`jp_llm::tool::ToolExecutor`],
//!    its config change settled ([`tools::delta`]) and its result
//!    delivered per `policy.result`.
//! 5. [`changes`]: the `Cycle` commits the response's config changes with
//!    what its calls record, in one write, and the turn goes on with the
//!    [`session::Session`]'s config resolved again.
//!
//! [`render`] draws calls and results, and [`diff`] a file change;
//! [`signals`] is Ctrl+C and the other signals; [`arguments`] holds and
//! shows a call's arguments.

pub mod arguments;
pub mod attach;
pub mod budget;
pub mod calls;
pub mod changes;
pub mod compose;
pub mod decision;
pub mod diff;
pub mod drive;
pub mod ending;
pub mod events;
pub mod fit;
pub mod hooks;
pub mod input;
pub mod pieces;
pub mod render;
pub mod repo;
pub mod run;
pub mod session;
pub mod signals;
pub mod stream;
pub mod system;
pub mod tickets;
pub mod tools;
pub mod trail;
pub mod trusting;
pub mod turn;
pub mod window;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use jp_config::AppConfig;
use jp_config::load::Loaded;
use jp_conversation::{ConfigDelta, Conversation, ConversationEvent, ConversationLock, Store};

use crate::ctx::{Ctx, print_load_error};
use crate::exit;
use drive::Step;
use jp_term::printer::{Channel, Printer, Style};
use jp_term::prompt::{NoPrompter, Prompter, Prompts, TerminalPrompter};
use render::{CallFormat, RenderOptions, ToolRenderer};
use session::{Resolved, Session, resolve};
use signals::interrupt_on_signals;
use tools::{Asker, Judge, Runner};
use turn::TurnEnd;

/// `jp query`.
#[derive(Debug, clap::Args)]
pub struct Query {
    /// Start a new conversation instead of continuing the active one.
    #[arg(long)]
    new: bool,

    /// Continue the active conversation (what `jp query` does without
    /// `--new`; the spelling other tools use).
    #[arg(short = 'c', long = "continue", conflicts_with = "new")]
    continue_active: bool,

    /// Continue conversation ID (an id, a unique start of one, or `last`),
    /// made the active one as `jp conversation use` makes it; without ID,
    /// pick it from a list on the terminal. It takes the next word as ID:
    /// `jp query --resume -- MESSAGE` picks and sends MESSAGE.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "", conflicts_with_all = ["new", "continue_active"], add = clap_complete::ArgValueCandidates::new(crate::cmd::complete::conversations))]
    resume: Option<String>,

    /// The model, as `PROVIDER/NAME` or an alias (overrides
    /// `assistant.model.id`).
    #[arg(
        long,
        value_name = "PROVIDER/NAME",
        add = clap_complete::ArgValueCandidates::new(crate::cmd::complete::models)
    )]
    model: Option<String>,

    /// Never prompt: calls and results whose policy asks are declined
    /// (this is also what happens without a terminal).
    #[arg(long)]
    non_interactive: bool,

    /// Print the system prompt this query would send, and exit: jp's
    /// default one (or `assistant.system_prompt`) with the instructions.
    #[arg(long)]
    print_system_prompt: bool,

    /// Write the message in `$VISUAL` or `$EDITOR` (pre-filled with
    /// MESSAGE, if given), as `jp query` without a message does on a
    /// terminal.
    #[arg(short, long, conflicts_with_all = ["non_interactive", "print_system_prompt"])]
    edit: bool,

    /// The most responses this query asks of the model (each time tool
    /// results go back, another begins); past it the query ends with exit
    /// code 4. Overrides `conversation.max_turns` (default 50).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_turns: Option<u32>,

    /// The most this query may spend, in US dollars: a response is cut as
    /// soon as the cost passes it, and the query ends with exit code 4.
    /// Overrides `conversation.max_cost`.
    #[arg(long, value_name = "USD")]
    max_cost: Option<f64>,

    /// Attach a file, a directory's files or a glob's (relative to the
    /// current directory, inside the workspace), or `cmd:COMMAND`'s output
    /// (run as `run_command` runs it, under its policy); repeatable. A word
    /// `@PATH` in the message attaches that file too.
    #[arg(short = 'a', long = "attach", value_name = "PATH|cmd:COMMAND")]
    attach: Vec<String>,

    /// How the turn is written to stdout: `text`, the assistant's answer;
    /// `jsonl`, one JSON object per line as the turn happens (text, calls,
    /// decisions, results, usage, the end; docs/events.md), with what a
    /// person reads on stderr.
    #[arg(long, value_enum, default_value_t = QueryFormat::Text)]
    format: QueryFormat,

    /// The message for the assistant. Without one, on a terminal, jp opens
    /// your editor to write it. Text piped to jp follows it in a fenced
    /// block (`cat src/main.rs | jp query "explain this"`), or is the whole
    /// message when there is none or it is `-`; at most 1 MiB of UTF-8
    /// text.
    #[arg(
        num_args = 0..,
        value_name = "MESSAGE"
    )]
    message: Vec<String>,
}

impl Query {
    /// Runs the turn.
    pub fn run(self, ctx: Ctx) -> Result<ExitCode, crate::error::Error> {
        let source = match self.source() {
            Ok(source) => source,
            Err(code) => return Ok(code),
        };
        if let Some(code) = trusting::before_query(&ctx, !self.non_interactive)? {
            return Ok(code);
        }
        // Dropped when the query returns, after the ending is said: a
        // prompt thread still closing then does not hold it up.
        let runtime = runtime()?;
        Ok(self.turn(ctx, source, &runtime, None)?.code)
    }

    /// A query of an interactive session (`jp chat`): `message` sent to
    /// the active conversation (a new one with `new`), with `model`.
    pub(crate) fn of_session(new: bool, model: Option<String>, message: String) -> Self {
        Self {
            new,
            continue_active: false,
            model,
            non_interactive: false,
            print_system_prompt: false,
            edit: false,
            resume: None,
            attach: Vec::new(),
            max_turns: None,
            max_cost: None,
            format: QueryFormat::Text,
            message: vec![message],
        }
    }

    /// One turn with the message from `source`, on `runtime`: what `jp
    /// query` does, and each message of `jp chat` (with `type_ahead`: what
    /// is typed while the turn prints is read as the next message, going on
    /// from the text given).
    pub(crate) fn turn(
        &self,
        mut ctx: Ctx,
        source: Source,
        runtime: &tokio::runtime::Runtime,
        type_ahead: Option<&str>,
    ) -> Result<Turned, crate::error::Error> {
        let done = |code: ExitCode| Ok(Turned::code(code));
        if let Some(model) = &self.model {
            ctx.flags.push(jp_config::load::FlagAssignment {
                flag: format!("--model {model}"),
                assignment: format!("assistant.model.id={model}"),
            });
        }
        let setup = match configure(&mut ctx, self.new, self.resume.as_deref())? {
            Ok(setup) => setup,
            Err(code) => return done(code),
        };
        let Setup {
            loaded,
            root,
            store,
            existing,
            record,
        } = setup;
        let config = self.with_budgets(loaded.config.clone());
        // A misspelled model is said before anything is recorded or sent.
        if let Some(code) = refuse_unknown_model(&config, self.model.as_deref()) {
            return done(code);
        }
        let system = system::system_prompt(
            &config.assistant,
            &system::Facts::here(&root, &config.assistant),
        )?;
        system.warn();
        let system = system.text;
        if self.print_system_prompt {
            jp_term::outln!("{}", system.as_deref().unwrap_or_default());
            return done(ExitCode::SUCCESS);
        }
        let env: HashMap<String, String> = ctx.env.iter().cloned().collect();
        let Resolved {
            provider,
            provider_name,
            model,
        } = resolve(&config, &env, &root)?;
        // A budget that cannot be kept is said before anything is sent.
        let budget = match budget_of(&config, &provider_name, &model) {
            Ok(budget) => budget,
            Err(code) => return done(code),
        };
        let color = crate::ctx::color(config.style.color);
        let printer = match self.format {
            QueryFormat::Text => Printer::stdio(color),
            // The answer is in the events.
            QueryFormat::Jsonl => Printer::chrome_only(color),
        };
        let events = existing.as_ref().map_or(&[][..], |(c, _)| &c.events[..]);
        let message = match source.message(&printer, runtime, events) {
            Ok(message) => message,
            Err(code) => return done(code),
        };
        let place = attach::Place::new(&root, &ctx.cwd, &config);
        let (message, attached) = match self.attached(&place, &message, runtime) {
            Ok(attached) => attached,
            Err(code) => return done(code),
        };
        let ledger = crate::ledger::Ledger::new(&root);
        let (conversation, lock) = match existing {
            Some(open) => open,
            None => create(&store, &ledger)?,
        };
        if let Some(markdown) = markdown(&printer, &config) {
            printer.set_content_format(Box::new(markdown));
        }
        let prompter = prompter(self.non_interactive, &printer);
        let renderer = renderer(&printer, &config);
        let live = renderer.is_some();
        let mut session = Session {
            budget,
            config: Arc::new(config),
            loaded,
            provider,
            model: model.clone(),
            header: format!("── jp ({provider_name}/{model}) ──"),
            provider_name,
            printer: printer.clone(),
            renderer,
            conversation,
            lock,
            ledger,
            system,
            compacted: false,
            events: (self.format == QueryFormat::Jsonl).then(events::EventStream::stdout),
        };
        session.start_turn(message, attached, record)?;
        let typing = type_ahead.and_then(|text| jp_term::prompt::TypeAhead::start(&printer, text));
        let end = drive(runtime, &mut session, &ctx, &env, &root, prompter, live);
        // Finished on every way out: its line off the screen, the modes
        // back.
        let typed = typing.map(jp_term::prompt::TypeAhead::finish);
        let code = ending::finish_or_fail(&session, end)?;
        Ok(Turned {
            code: ExitCode::from(code),
            typed: typed.unwrap_or_default(),
            conversation: Some(session.conversation.id.clone()),
            model: Some(format!("{}/{}", session.provider_name, session.model)),
        })
    }
}

/// How `jp query` writes the turn to stdout (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum QueryFormat {
    /// The assistant's answer, as text.
    Text,
    /// One JSON object per line as the turn happens (docs/events.md).
    Jsonl,
}

/// How a turn went: its exit code, and what was typed meanwhile (in an
/// interactive session).
pub(crate) struct Turned {
    pub code: ExitCode,
    pub typed: jp_term::prompt::Typed,
    /// The conversation the turn went to; `None` when it did not start.
    pub conversation: Option<String>,
    /// The model it used (`PROVIDER/NAME`).
    pub model: Option<String>,
}

impl Turned {
    /// A turn that did not start.
    fn code(code: ExitCode) -> Self {
        Self {
            code,
            typed: jp_term::prompt::Typed::default(),
            conversation: None,
            model: None,
        }
    }
}

/// Says that `--model MODEL` names no model jp knows, with the closest
/// ones; the exit code then (`None`: no `--model`, or a known one).
pub(crate) fn refuse_unknown_model(config: &AppConfig, model: Option<&str>) -> Option<ExitCode> {
    let model = model?;
    let why = jp_config::validate::unknown_model(config, model)?;
    jp_term::errln!(
        "{}",
        jp_term::printer::sanitize(&format!("error: --model {model}: {why}"))
    );
    Some(exit::USAGE.into())
}

/// The runtime a query's turn runs on.
pub(crate) fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

impl Query {
    /// Where the message comes from: the arguments and a pipe, or the
    /// editor (`-e`, or no message on a terminal). `Err` holds the exit
    /// code of a message that cannot be had, already reported.
    fn source(&self) -> Result<Source, ExitCode> {
        use std::io::IsTerminal as _;
        let terminal = std::io::stdin().is_terminal();
        if self.edit && !terminal {
            jp_term::errln!(
                "error: --edit opens your editor, which needs a terminal, and stdin is not one; give the message as an argument or on stdin"
            );
            return Err(exit::USAGE.into());
        }
        let quiet = self.non_interactive || self.print_system_prompt;
        if self.edit || (self.message.is_empty() && terminal && !quiet) {
            let prefill = input::message(&self.message, None).unwrap_or_default();
            return Ok(Source::Editor(prefill));
        }
        // Text piped in joins the message; a terminal is never read.
        let piped = if !self.print_system_prompt && input::stdin_is_piped() {
            match input::read_piped(std::io::stdin().lock()) {
                Ok(text) => Some(text),
                Err(error) => {
                    jp_term::errln!("error: {error}");
                    return Err(exit::USAGE.into());
                }
            }
        } else {
            None
        };
        match input::message(&self.message, piped.as_deref()) {
            Ok(message) => Ok(Source::Given(message)),
            Err(_) if self.print_system_prompt => Ok(Source::Given(String::new())),
            Err(error) => {
                jp_term::errln!("error: {error}");
                Err(exit::USAGE.into())
            }
        }
    }
}

/// The cost budget `config` sets for `model` of `provider`, if any; `Err`
/// holds the exit code of one that cannot be kept, already reported.
fn budget_of(
    config: &AppConfig,
    provider: &str,
    model: &str,
) -> Result<Option<budget::Budget>, ExitCode> {
    let Some(limit) = config.conversation.max_cost else {
        return Ok(None);
    };
    let price = config.providers.llm.model_info(provider, model).price;
    budget::Budget::new(limit, price, &format!("{provider}/{model}"))
        .map(Some)
        .map_err(|why| {
            jp_term::errln!("error: --max-cost (conversation.max_cost): {why}");
            ExitCode::from(exit::USAGE)
        })
}

impl Query {
    /// `config` with this query's `--max-turns` and `--max-cost`.
    fn with_budgets(&self, mut config: AppConfig) -> AppConfig {
        if let Some(turns) = self.max_turns {
            config.conversation.max_turns = turns;
        }
        if let Some(cost) = self.max_cost {
            config.conversation.max_cost = Some(cost);
        }
        config
    }

    /// The message with what `-a` and `@path` attach to it, and what the
    /// conversation records of each; `Err` holds the exit code of a refused
    /// attachment, already reported.
    fn attached(
        &self,
        place: &attach::Place<'_>,
        message: &str,
        runtime: &tokio::runtime::Runtime,
    ) -> Result<(String, Vec<jp_conversation::Attached>), ExitCode> {
        let can_ask = !self.non_interactive;
        // `@path` counts in what the user wrote, not in what was piped.
        let typed = if input::stdin_is_piped() && !self.edit {
            self.message.join(" ")
        } else {
            message.to_owned()
        };
        let gathered =
            attach::gather(place, &self.attach, &typed, runtime, can_ask).map_err(|why| {
                jp_term::errln!("error: {why}");
                ExitCode::from(exit::USAGE)
            })?;
        for note in &gathered.notes {
            jp_term::errln!("note: {note}");
        }
        if !gathered.attachments.is_empty() {
            let said: Vec<String> = gathered
                .attachments
                .iter()
                .map(|a| format!("{} ({} bytes)", a.source, a.text.len()))
                .collect();
            jp_term::errln!("attached: {}", said.join(", "));
        }
        let records = gathered
            .attachments
            .iter()
            .map(attach::Attachment::record)
            .collect();
        Ok((attach::compose(&gathered.attachments, message), records))
    }
}

/// Where a query's message comes from.
pub(crate) enum Source {
    /// The arguments, with what was piped.
    Given(String),
    /// The editor, opened on this text.
    Editor(String),
}

impl Source {
    /// The message: as given, or as written in the editor (after the
    /// conversation's `events`); `Err` holds the exit code when none was
    /// written.
    fn message(
        self,
        printer: &Printer,
        runtime: &tokio::runtime::Runtime,
        events: &[ConversationEvent],
    ) -> Result<String, ExitCode> {
        match self {
            Self::Given(message) => Ok(message),
            Self::Editor(prefill) => {
                // Ctrl+C is the editor's while it runs.
                let held = {
                    let _context = runtime.enter();
                    compose::EditorSignals::hold()
                };
                let written = from_editor(printer, &prefill, events);
                drop(held);
                written
            }
        }
    }
}

/// A new conversation in `store`, made the active one (for this user too,
/// in the `ledger`).
fn create(
    store: &Store,
    ledger: &crate::ledger::Ledger,
) -> Result<(Conversation, ConversationLock), crate::error::Error> {
    let (conversation, lock) = store.create()?;
    store.set_active(&conversation.id)?;
    ledger.choose(&conversation.id);
    Ok((conversation, lock))
}

/// The message written in the editor, said back in one line. `Err` holds
/// the exit code when none was written (2) or the editor failed (1), said
/// on stderr; nothing is recorded then.
fn from_editor(
    printer: &Printer,
    prefill: &str,
    events: &[ConversationEvent],
) -> Result<String, ExitCode> {
    match compose::compose(prefill, events) {
        compose::Composed::Message(message) => {
            let mut lines = message.lines();
            let first = lines.next().unwrap_or_default();
            let more = match lines.count() {
                0 => String::new(),
                1 => " (and 1 more line)".to_owned(),
                n => format!(" (and {n} more lines)"),
            };
            printer.chrome_line(
                Style::Dim,
                &format!("you: {}{more}", jp_term::printer::cut(first, 100)),
            );
            Ok(message)
        }
        compose::Composed::Empty => {
            printer.chrome_line(
                Style::Warn,
                "cancelled: the message is empty, so nothing was sent",
            );
            Err(exit::USAGE.into())
        }
        compose::Composed::Failed { why, kept } => {
            printer.chrome_line(Style::Bad, &format!("error: {why}; nothing was sent"));
            if let Some(path) = kept {
                printer.chrome_line(
                    Style::Dim,
                    &format!("what you wrote is kept in {}", path.display()),
                );
            }
            Err(ExitCode::FAILURE)
        }
    }
}

/// What a query runs with, once its config is loaded.
struct Setup {
    /// The config: files, the conversation's changes, the flags; and
    /// where each part is written.
    loaded: Loaded,
    /// The workspace, or the plain directory (crate::place).
    root: PathBuf,
    store: Store,
    /// The active conversation, unless the query starts a new one.
    existing: Option<(Conversation, ConversationLock)>,
    /// What the flags change, recorded when the turn begins.
    record: Option<ConfigDelta>,
}

/// Loads the config a query runs with: the files, the active
/// conversation's changes (each authorized again) and the flags (what they
/// may record is recorded; sensitive keys stay on top, for this query
/// only). `Err` holds the exit code of a config that does not load or of
/// no place to keep the conversation, already reported.
fn configure(
    ctx: &mut Ctx,
    new: bool,
    resume: Option<&str>,
) -> Result<Result<Setup, ExitCode>, crate::error::Error> {
    // The config with the flags on top, as every command has it: the
    // flags are checked here, and the grants come from it.
    let (flagged, flag_layers) = match crate::recorded::load_with_flags(ctx) {
        Ok(loaded) => loaded,
        Err(error) => {
            print_load_error(&error);
            return Ok(Err(exit::INVALID_CONFIG.into()));
        }
    };
    // A workspace, or a plain directory (crate::place).
    let color = flagged.config.style.color;
    let (root, store) = match crate::place::for_query(ctx, flagged.workspace_root.clone(), color)? {
        Ok(here) => here,
        Err(code) => return Ok(Err(code)),
    };
    // The active conversation's config changes apply on top of the
    // files, each authorized again (a log is no authority); a new
    // conversation has none.
    let ledger = crate::ledger::Ledger::new(&root);
    // `--resume`: the conversation to continue is made the active one.
    if let Some(resume) = resume
        && let Some(code) = crate::pick::resume(&store, &ledger, resume)?
    {
        return Ok(Err(code));
    }
    let existing = if new {
        None
    } else {
        crate::conversation::open_active(&store, &ledger)?
    };
    let mut deltas = match &existing {
        Some((conversation, _)) => {
            let authorized =
                crate::conversation::conversation_deltas(conversation, &flagged.config, &ledger);
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
            .map_err(crate::error::Error::Flags)?;
        let id = existing.as_ref().map_or("(new)", |(c, _)| c.id.as_str());
        deltas.push(crate::recorded::layer(record, id));
    }
    let loaded = match ctx.load_with(deltas) {
        Ok(loaded) => loaded,
        Err(error) => {
            print_load_error(&error);
            return Ok(Err(exit::INVALID_CONFIG.into()));
        }
    };
    Ok(Ok(Setup {
        loaded,
        root,
        store,
        existing,
        record: flags.record,
    }))
}

/// Where questions go: the terminal, or nowhere (`--non-interactive`, or
/// no terminal), so what would ask is declined.
fn prompter(non_interactive: bool, printer: &Printer) -> Box<dyn Prompter> {
    if non_interactive {
        Box::new(NoPrompter)
    } else {
        TerminalPrompter::open(printer).map_or_else(
            || Box::new(NoPrompter) as Box<dyn Prompter>,
            |t| Box::new(t) as Box<dyn Prompter>,
        )
    }
}

/// The assistant's text drawn as markdown: on a terminal, with
/// `style.markdown` (the default); coloured as the printer colours stdout.
fn markdown(printer: &Printer, config: &AppConfig) -> Option<jp_md::Markdown> {
    use jp_md::{Ink, Markdown, MarkdownOptions, hyperlinks_supported, truecolor};
    (config.style.markdown && printer.is_terminal(Channel::Content)).then(|| {
        let var = |key: &str| std::env::var(key).ok();
        Markdown::new(MarkdownOptions {
            width: terminal_width(),
            ink: Ink {
                color: printer.is_colored(Channel::Content),
                truecolor: truecolor(var),
                hyperlinks: hyperlinks_supported(var),
            },
        })
        .measured_by(terminal_width)
    })
}

/// The terminal's width in columns (80 when it does not say).
fn terminal_width() -> usize {
    crossterm::terminal::size().map_or(80, |(columns, _)| usize::from(columns))
}

/// Calls render live, argument by argument, on a terminal; a log (a pipe,
/// a file) gets one line per call (`None`).
fn renderer(printer: &Printer, config: &AppConfig) -> Option<ToolRenderer> {
    printer.is_terminal(Channel::Chrome).then(|| {
        let style = &config.style.tool_call;
        ToolRenderer::new(RenderOptions {
            format: match style.format {
                jp_config::style::ToolCallFormat::FunctionCall => CallFormat::FunctionCall,
                jp_config::style::ToolCallFormat::Json => CallFormat::Json,
            },
            show_arguments: style.show_arguments,
            max_lines: style.argument_lines as usize,
            call_lines: style.call_lines as usize,
            width: terminal_width(),
        })
    })
}

/// Runs the turn on `runtime`, the signals watched, its tools
/// decided by a coordinator made anew whenever tools changed the config
/// (which is then resolved again: RFD 078 phase 3). `live`: the calls'
/// arguments are shown as they stream.
fn drive(
    runtime: &tokio::runtime::Runtime,
    session: &mut Session,
    ctx: &Ctx,
    env: &HashMap<String, String>,
    root: &Path,
    prompter: Box<dyn Prompter>,
    live: bool,
) -> Result<TurnEnd, crate::error::Error> {
    let self_exe = std::env::current_exe().ok();
    let printer = session.printer.clone();
    let servers = jp_llm::tool::mcp::McpServers::new(
        jp_config::sandbox::sandboxed_servers(&session.config),
        root.to_path_buf(),
    );
    // Keys typed while the turn prints are not echoed into it (a `^C`
    // in the middle of the text); prompts draw what they read.
    let echo_off = prompter
        .available()
        .then(jp_term::prompt::Quiet::start)
        .flatten();
    runtime.block_on(async {
        // (In `jp chat` the session silenced the terminal already.) Stopped
        // with the turn: a session's runtime outlives it.
        let quiet_again = (echo_off.is_some() || prompter.available())
            .then(|| tokio::spawn(jp_term::prompt::quiet_after_each_stop()));
        let _quiet_again = quiet_again.map(|task| AbortOnDrop(task.abort_handle()));
        // With a terminal, Ctrl+C opens a menu; without, it interrupts.
        let mut interrupts = interrupt_on_signals(prompter.available());
        let executor = jp_llm::tool::Executor::new(servers, interrupts.cancel.clone());
        let prompts = Prompts::new(prompter, interrupts.cancel.clone());
        let mut resume = None;
        let end = crate::mcp::attach_shared(&mut session.config, &executor, &printer, &|problem| {
            session.loaded.place(problem)
        })
        .await;
        let end = if let Err(message) = end {
            Ok(TurnEnd::ConfigFailed(message))
        } else {
            loop {
                let config = Arc::clone(&session.config);
                let judge = Judge::new(&config, root)
                    // Only what this user's jp recorded here gives authority.
                    .with_history(
                        &session.ledger.our_events(&session.conversation),
                        &|approval| {
                            session
                                .ledger
                                .approval_state(&session.conversation.id, approval)
                                == crate::ledger::ApprovalState::InForce
                        },
                    )?;
                let asker = Asker::new(&judge, printer.clone(), live);
                let runner = Runner::new(&asker, self_exe.clone())
                    .with_blobs(crate::blobs::Blobs::of(root, &session.conversation.id));
                let step = session
                    .run_turn(&runner, &executor, &prompts, &mut interrupts, resume.take())
                    .await?;
                // "Allow for this session" answers not recorded yet.
                for kind in judge.take_unrecorded() {
                    session.record(kind)?;
                }
                match step {
                    Step::End(end) => break Ok::<_, crate::error::Error>(end),
                    Step::Reload(state) => {
                        // Tools changed the config: the next request of this
                        // turn uses it (RFD 078 phase 3).
                        if let Err(message) = session.reload(ctx, env, root) {
                            break Ok(TurnEnd::ConfigFailed(message));
                        }
                        if let Err(message) = crate::mcp::attach_shared(
                            &mut session.config,
                            &executor,
                            &printer,
                            &|problem| session.loaded.place(problem),
                        )
                        .await
                        {
                            break Ok(TurnEnd::ConfigFailed(message));
                        }
                        resume = Some(*state);
                    }
                }
            }
        };
        executor.shutdown().await;
        end
    })
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
