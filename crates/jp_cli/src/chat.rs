//! `jp chat` (and `jp` alone on a terminal): an interactive session.
//!
//! A loop around the line editor ([`line`]): each message is one turn of
//! `jp query` ([`crate::query::Query::turn`], the same engine: streaming,
//! markdown, live tool calls, early prompts, the Ctrl+C menu), and each
//! command ([`commands`]) runs an existing subcommand in the session. What
//! the user types while a turn prints is read as the next message
//! ([`jp_term::prompt::TypeAhead`]) and sent when the turn ends.
//!
//! The terminal is left as the session found it on every way out: the
//! line editor's raw mode ends with each line; the modes are remembered at
//! the start and put back by the panic hook, on SIGTERM or SIGHUP while a
//! line is read ([`watch_signals`]), and at the end.

pub mod commands;
pub mod line;

use std::collections::VecDeque;
use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use rustyline::error::ReadlineError;

use crate::ctx::Ctx;
use crate::exit;
use crate::query::{Query, Source};
use commands::{Command, Input};
use jp_term::printer::{Printer, Style};

/// `jp chat`.
#[derive(Debug, Default, clap::Args)]
pub struct Chat {
    /// Start a new conversation instead of continuing the active one.
    #[arg(long)]
    new: bool,

    /// The model, as `PROVIDER/NAME` or an alias (`/model` changes it).
    #[arg(
        long,
        value_name = "PROVIDER/NAME",
        add = clap_complete::ArgValueCandidates::new(crate::cmd::complete::models)
    )]
    model: Option<String>,
}

/// What the prompt line shows.
const PROMPT: &str = "› ";

/// Whether the session is reading a line (the line editor owns the
/// terminal, in raw mode): a SIGTERM or SIGHUP then ends the session;
/// during a turn, the turn's own handling applies.
static READING: AtomicBool = AtomicBool::new(false);

/// The exit code of a SIGTERM or SIGHUP that came during a turn (0 for
/// none): the turn ends as it does in `jp query`, then the session.
static ENDING: AtomicU8 = AtomicU8::new(0);

/// Whether a turn runs (its own signal handling applies then).
static IN_TURN: AtomicBool = AtomicBool::new(false);

/// The session's state between lines.
struct Session {
    ctx: Ctx,
    /// The global flags the session was started with (`--cfg`, `--color`),
    /// given again to each command it runs.
    globals: Vec<String>,
    runtime: tokio::runtime::Runtime,
    printer: Printer,
    /// The next message starts a new conversation.
    new: bool,
    /// The model chosen (`--model`, `/model`), given to each turn.
    model: Option<String>,
    /// The model the last turn used.
    used: Option<String>,
    /// What the workspace's config held back for want of trust when it
    /// was last asked about ([`held_now`]).
    held: Option<jp_config::trust::Held>,
}

impl Chat {
    /// Runs the session until `/exit`, Ctrl+D, or Ctrl+C twice on an empty
    /// line. `globals`: the global flags, as typed.
    pub fn run(self, ctx: Ctx, globals: Vec<String>) -> Result<ExitCode, crate::error::Error> {
        if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
            jp_term::errln!(
                "error: jp chat needs a terminal, and stdin or stdout is not one; `jp query MESSAGE` takes a message from its arguments or a pipe"
            );
            return Ok(exit::USAGE.into());
        }
        if let Some(code) = crate::query::trusting::before_query(&ctx, true)? {
            return Ok(code);
        }
        let held = held_now(&ctx);
        jp_term::prompt::remember_modes();
        let runtime = crate::query::runtime()?;
        watch_signals(&runtime);
        let mut editor = line::editor().map_err(editor_error)?;
        let history = line::history_file(&ctx.env);
        if let Some(path) = &history {
            // A missing file is a first session; any other problem costs
            // only the history.
            let _ = editor.load_history(path);
        }
        let loaded = ctx.load().ok();
        // A misspelled `--model` is said before the session starts, as
        // `jp query` says it before anything is sent.
        if let Some(loaded) = &loaded
            && let Some(code) =
                crate::query::refuse_unknown_model(&loaded.config, self.model.as_deref())
        {
            return Ok(code);
        }
        let color = loaded.map_or(jp_term::printer::ColorMode::Auto, |loaded| {
            crate::ctx::color(loaded.config.style.color)
        });
        let mut session = Session {
            ctx,
            globals,
            runtime,
            printer: Printer::stdio(color),
            new: self.new,
            model: self.model,
            used: None,
            held,
        };
        session.printer.chrome_line(
            Style::Dim,
            &format!(
                "jp chat: {} · /help lists the commands · Ctrl+D leaves",
                if session.new {
                    "a new conversation"
                } else {
                    "continuing the active conversation"
                }
            ),
        );
        let code = session.lines(&mut editor, history.as_deref());
        jp_term::prompt::restore_terminal();
        Ok(code)
    }
}

impl Session {
    /// Reads and acts on lines until the session ends; its exit code.
    fn lines(
        &mut self,
        editor: &mut line::LineEditor,
        history: Option<&std::path::Path>,
    ) -> ExitCode {
        // Inputs queued while a turn printed, sent or run in order.
        let mut pending: VecDeque<String> = VecDeque::new();
        // Text typed and not sent: the start of the next line (in the
        // line editor, or typed ahead during the next queued turn).
        let mut carry = String::new();
        let mut interrupts = 0;
        loop {
            let line = match pending.pop_front() {
                Some(queued) => queued,
                None => match self.read_line(editor, &std::mem::take(&mut carry)) {
                    Read::Line(line) => line,
                    Read::Interrupted => {
                        interrupts += 1;
                        if interrupts >= 2 {
                            return ExitCode::SUCCESS;
                        }
                        self.printer
                            .chrome_line(Style::Dim, "(Ctrl+C again, Ctrl+D or /exit to leave)");
                        continue;
                    }
                    Read::End(code) => return code,
                },
            };
            tracing::debug!("message entered");
            interrupts = 0;
            let input = commands::parse(&line);
            if !matches!(input, Input::Empty) {
                let _ = editor.add_history_entry(line.trim_end());
                if let Some(path) = history {
                    save_history(editor, path);
                }
            }
            let source = match input {
                Input::Empty => continue,
                Input::Message(message) => Source::Given(message),
                Input::Unknown(name) => {
                    self.printer.chrome_line(
                        Style::Bad,
                        &format!("error: no command {name}; /help lists them (//text sends a message that starts with /)"),
                    );
                    continue;
                }
                Input::Command(Command::Exit) => return ExitCode::SUCCESS,
                Input::Command(Command::Edit) => Source::Editor(String::new()),
                Input::Command(command) => {
                    self.command(command);
                    continue;
                }
            };
            let typed = self.send(source, &std::mem::take(&mut carry));
            let ending = ENDING.load(Ordering::SeqCst);
            if ending != 0 {
                return ExitCode::from(ending);
            }
            if typed.ok {
                pending.extend(commands::group(&typed.queued));
                carry = typed.partial;
            } else {
                // After a turn that did not end well, what was queued
                // waits in the line, for the user to send or not.
                let mut lines: Vec<String> = pending.drain(..).collect();
                lines.extend(typed.queued);
                lines.push(typed.partial);
                carry = lines.join("\n").trim().to_owned();
            }
        }
    }

    /// Reads a line, `initial` already in it.
    fn read_line(&self, editor: &mut line::LineEditor, initial: &str) -> Read {
        READING.store(true, Ordering::SeqCst);
        // A signal that came just before is not lost.
        let ending = ENDING.load(Ordering::SeqCst);
        if ending != 0 {
            return Read::End(ExitCode::from(ending));
        }
        let read = editor.readline_with_initial(PROMPT, (initial, ""));
        READING.store(false, Ordering::SeqCst);
        match read {
            Ok(line) => Read::Line(line),
            Err(ReadlineError::Interrupted) => Read::Interrupted,
            Err(ReadlineError::Eof) => Read::End(ExitCode::SUCCESS),
            Err(error) => {
                self.printer
                    .chrome_line(Style::Bad, &format!("error: the terminal: {error}"));
                Read::End(ExitCode::FAILURE)
            }
        }
    }

    /// Runs one turn with the message from `source`, typed-ahead text
    /// going on from `typed`; what was typed meanwhile. A message that
    /// cannot go (the workspace's config changed and is not trusted, or
    /// the turn could not start) comes back as typed text, said.
    fn send(&mut self, source: Source, typed: &str) -> Typed {
        let unsent = |source: &Source| Typed {
            ok: false,
            queued: Vec::new(),
            partial: match source {
                Source::Given(message) if !typed.is_empty() => format!("{message}\n{typed}"),
                Source::Given(message) => message.clone(),
                Source::Editor(_) => typed.to_owned(),
            },
        };
        // The workspace's config may have changed since the last message
        // in what needs trust: asked about as `jp query` would ask (found
        // in review: it was left out, said only by a puzzling warning).
        let held = held_now(&self.ctx);
        if held != self.held {
            match crate::query::trusting::before_query(&self.ctx, true) {
                Ok(None) => self.held = held,
                Ok(Some(_)) => return unsent(&source),
                Err(error) => {
                    self.printer
                        .chrome_line(Style::Bad, &format!("error: {error}"));
                    return unsent(&source);
                }
            }
        }
        let query = Query::of_session(self.new, self.model.clone(), String::new());
        IN_TURN.store(true, Ordering::SeqCst);
        let turned = query.turn(self.ctx.clone(), source, &self.runtime, Some(typed));
        IN_TURN.store(false, Ordering::SeqCst);
        match turned {
            Ok(turned) => {
                if turned.conversation.is_some() {
                    self.new = false;
                }
                if turned.model.is_some() {
                    self.used = turned.model;
                }
                Typed {
                    // A call a policy declined (exit 5) ends a turn well.
                    ok: turned.code == ExitCode::SUCCESS
                        || turned.code == ExitCode::from(crate::exit::DECLINED),
                    queued: turned.typed.queued,
                    partial: turned.typed.partial,
                }
            }
            Err(error) => {
                self.printer
                    .chrome_line(Style::Bad, &format!("error: {error}"));
                Typed {
                    ok: false,
                    queued: Vec::new(),
                    partial: String::new(),
                }
            }
        }
    }

    /// Runs a session command.
    fn command(&mut self, command: Command) {
        match command {
            Command::Model(None) => {
                let line = match (&self.model, &self.used) {
                    (Some(model), _) => format!("model: {model} (for the next messages)"),
                    (None, Some(used)) => format!("model: {used}"),
                    (None, None) => {
                        "model: as configured (`jp config get assistant.model.id`)".to_owned()
                    }
                };
                self.printer.chrome_line(Style::Dim, &line);
            }
            Command::Model(Some(model)) => self.choose_model(model),
            Command::New => {
                self.new = true;
                self.printer
                    .chrome_line(Style::Dim, "the next message starts a new conversation");
            }
            Command::Help => {
                for line in commands::help().lines() {
                    self.printer.chrome_line(Style::Dim, line);
                }
            }
            Command::Misused(why) => self.printer.chrome_line(
                Style::Bad,
                &format!("error: {why}; /help lists the commands"),
            ),
            Command::Cost => self.subcommand(&["conversation", "cost"], &[]),
            Command::Compact(args) => self.subcommand(&["conversation", "compact"], &args),
            Command::Rewind(args) => self.subcommand(&["conversation", "rewind"], &args),
            Command::Tools => self.subcommand(&["policy", "ls"], &[]),
            Command::Trust(args) => self.subcommand(&["trust"], &args),
            Command::Edit | Command::Exit => {}
        }
    }

    /// `/model NAME`: checked now, as `--model` is, and used from the next
    /// message on.
    fn choose_model(&mut self, model: String) {
        let known = match self.ctx.load() {
            Ok(loaded) => jp_config::validate::unknown_model(&loaded.config, &model),
            Err(error) => {
                crate::ctx::print_load_error(&error);
                return;
            }
        };
        if let Some(why) = known {
            self.printer
                .chrome_line(Style::Bad, &format!("error: /model {model}: {why}"));
            return;
        }
        self.printer.chrome_line(
            Style::Dim,
            &format!("model: {model} from the next message on"),
        );
        self.model = Some(model);
    }

    /// Runs `jp ARGS EXTRA` here, with the session's global flags.
    fn subcommand(&self, args: &[&str], extra: &[String]) {
        let argv: Vec<String> = std::iter::once("jp".to_owned())
            .chain(self.globals.iter().cloned())
            .chain(args.iter().map(|a| (*a).to_owned()))
            .chain(extra.iter().cloned())
            .collect();
        let code = crate::cmd::run_args(&argv);
        if code != ExitCode::SUCCESS {
            tracing::debug!(?argv, "a session command failed");
        }
    }
}

/// What reading a line gave.
enum Read {
    Line(String),
    /// Ctrl+C on an empty line.
    Interrupted,
    /// The session ends, with this exit code.
    End(ExitCode),
}

/// What a turn left for the session.
struct Typed {
    /// The turn ended well (its exit code 0, or 5: a call a policy
    /// declined).
    ok: bool,
    queued: Vec<String>,
    partial: String,
}

/// What the workspace's config holds that needs trust and did not apply,
/// as it loads now (`None` for nothing, or a config that does not load:
/// the turn says why).
fn held_now(ctx: &Ctx) -> Option<jp_config::trust::Held> {
    jp_config::load::load(&ctx.load_options())
        .ok()
        .and_then(|loaded| loaded.held)
        .filter(|held| !held.applied)
}

fn editor_error(error: ReadlineError) -> crate::error::Error {
    crate::error::Error::Io(std::io::Error::other(format!("the line editor: {error}")))
}

/// Appends the newest history entry to the file (created readable by the
/// user alone); a failure costs only the history, said once in the log.
fn save_history(editor: &mut line::LineEditor, path: &std::path::Path) {
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    if let Err(error) = editor.append_history(path) {
        tracing::info!(%error, path = %path.display(), "the session's history was not saved");
    }
}

/// SIGTERM or SIGHUP outside a turn (a line being read, a command
/// running) ends the session at once, the terminal put back (bracketed
/// paste off, the modes it had); during a turn the turn's own handling
/// applies (it ends the turn keeping what arrived), and the session ends
/// after it ([`ENDING`]).
fn watch_signals(runtime: &tokio::runtime::Runtime) {
    #[cfg(unix)]
    runtime.spawn(async {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            return;
        };
        loop {
            let code: u8 = tokio::select! {
                _ = term.recv() => 143,
                _ = hup.recv() => 129,
            };
            ENDING.store(code, Ordering::SeqCst);
            // Outside a turn (a line being read, a command running), the
            // session ends now.
            if READING.load(Ordering::SeqCst) || !IN_TURN.load(Ordering::SeqCst) {
                use std::io::Write as _;
                let mut stdout = std::io::stdout();
                let _ = stdout.write_all(b"\x1b[?2004l\r\n");
                let _ = stdout.flush();
                jp_term::prompt::restore_terminal();
                std::process::exit(i32::from(code));
            }
        }
    });
}
