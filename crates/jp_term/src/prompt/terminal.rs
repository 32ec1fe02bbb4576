//! The [`TerminalPrompter`]: one-key answers read in raw mode on the
//! controlling terminal.
//!
//! Raw mode is on only while a key is awaited, behind a guard that turns it
//! off on every way out (an answer, an error, an interrupt, unwinding); a
//! panic hook and [`restore_terminal`] cover the ways out that skip
//! destructors (`process::exit`, a panic that aborts).

use std::collections::VecDeque;
use std::io::IsTerminal as _;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use jp_tool::{AnswerKind, Question};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::external::{PagerFailure, edit_in_editor, pager, run_pager};
use super::keys::{Decoder, Key};
use super::prompter::{Choice, Live, LiveAnswer, LiveQuestion, PromptError, Prompter, YES_NO};
use crate::printer::{Printer, Style, char_columns, columns, cut_columns, one_line};

/// How often a waiting prompt checks whether the turn was interrupted.
const POLL: Duration = Duration::from_millis(50);

/// What the terminal has for a waiting prompt.
pub(super) enum Input {
    /// Something to read.
    Keys,
    /// Nothing yet.
    Nothing,
    /// It hung up (closed): nothing will ever come.
    HungUp,
}

/// Waits up to `timeout` for something to read on stdin, the terminal
/// prompts read keys from ([`TerminalPrompter::open`] requires stdin to
/// be one).
#[cfg(unix)]
pub(super) fn wait_for_input(timeout: Duration) -> Result<Input, PromptError> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    let timeout = Timespec {
        tv_sec: i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    match poll(&mut fds, Some(&timeout)) {
        Ok(_) => {}
        Err(rustix::io::Errno::INTR) => return Ok(Input::Nothing),
        Err(error) => return Err(terminal_error(error.into())),
    }
    let events = fds[0].revents();
    Ok(
        if events.intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL) {
            Input::HungUp
        } else if events.contains(PollFlags::IN) {
            Input::Keys
        } else {
            Input::Nothing
        },
    )
}

/// Waits up to `timeout` for a key, through crossterm.
#[cfg(not(unix))]
pub(super) fn wait_for_input(timeout: Duration) -> Result<Input, PromptError> {
    Ok(
        if crossterm::event::poll(timeout).map_err(terminal_error)? {
            Input::Keys
        } else {
            Input::Nothing
        },
    )
}

/// Reads what the terminal has (stdin, which [`wait_for_input`] said
/// has something) and decodes it; `None` at end of file (it hung up).
#[cfg(unix)]
pub(super) fn read_keys(decoder: &mut Decoder) -> Result<Option<Vec<Key>>, PromptError> {
    let mut buffer = [0u8; 256];
    match rustix::io::read(std::io::stdin(), &mut buffer) {
        Ok(0) => Ok(None),
        Ok(read) => Ok(Some(decoder.push(&buffer[..read]))),
        Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => Ok(Some(Vec::new())),
        Err(error) => Err(terminal_error(error.into())),
    }
}

/// Reads one key through crossterm.
#[cfg(not(unix))]
fn read_keys(_: &mut Decoder) -> Result<Option<Vec<Key>>, PromptError> {
    use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
    let Event::Key(event) = event::read().map_err(terminal_error)? else {
        return Ok(Some(Vec::new()));
    };
    if event.kind == KeyEventKind::Release {
        return Ok(Some(Vec::new()));
    }
    let control = event.modifiers.contains(KeyModifiers::CONTROL);
    let key = match event.code {
        KeyCode::Char('c' | 'd') if control => Key::Interrupt,
        KeyCode::Char('u') if control => Key::Clear,
        KeyCode::Char(c) if !control => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Esc => Key::Escape,
        _ => Key::Other,
    };
    Ok(Some(vec![key]))
}

/// Drops what was typed on the terminal and not read yet.
fn discard_pending_input() {
    #[cfg(unix)]
    {
        let _ = rustix::termios::tcflush(std::io::stdin(), rustix::termios::QueueSelector::IFlush);
    }
}

/// `line` on one line of `width` columns: whole if it fits, else its end
/// after a `…` (widths in terminal columns, of the line as drawn: escapes,
/// tabs and wide characters included).
pub(super) fn fit_prompt(line: &str, width: usize) -> String {
    let line = one_line(line);
    if columns(&line) <= width {
        return line;
    }
    let mut tail: Vec<char> = Vec::new();
    let mut used = 1; // the `…`
    for c in line.chars().rev() {
        used += char_columns(c);
        if used > width {
            break;
        }
        tail.push(c);
    }
    let tail: String = tail.into_iter().rev().collect();
    format!("…{tail}")
}

/// The terminal's input belongs to whoever holds this: a prompt while it
/// asks (and the editor or pager it opens), otherwise the keys typed
/// ahead in an interactive session ([`super::TypeAhead`]), which never
/// reads while a prompt holds it, so typed-ahead text never answers one.
static TERMINAL: Mutex<()> = Mutex::new(());

/// Holds the terminal's input for a prompt.
pub(super) fn hold_terminal() -> std::sync::MutexGuard<'static, ()> {
    TERMINAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Holds the terminal's input if no prompt does.
pub(super) fn try_hold_terminal() -> Option<std::sync::MutexGuard<'static, ()>> {
    match TERMINAL.try_lock() {
        Ok(guard) => Some(guard),
        Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

/// Prompts on the controlling terminal.
pub struct TerminalPrompter {
    printer: Printer,
    cancel: Option<CancellationToken>,
    /// Keys read and not yet taken, and the decoder's unfinished bytes.
    input: Mutex<(Decoder, VecDeque<Key>)>,
}

/// Raw mode while it lives: dropped on every way out (a return, an
/// error, unwinding), it turns raw mode off.
pub struct RawMode;

impl RawMode {
    /// Turns raw mode on.
    ///
    /// # Errors
    ///
    /// The terminal refused.
    pub fn enable() -> Result<Self, PromptError> {
        crossterm::terminal::enable_raw_mode().map_err(terminal_error)?;
        Ok(Self)
    }
}

/// The keys typed on the terminal (stdin, in raw mode: hold a [`RawMode`]),
/// one at a time, for a screen of jp's own (a list to choose from).
#[derive(Debug, Default)]
pub struct KeyReader {
    decoder: Decoder,
    queued: VecDeque<Key>,
}

impl KeyReader {
    /// Forgets what was typed before (and not read yet): a key pressed
    /// before the screen showed chooses nothing on it.
    #[must_use]
    pub fn new() -> Self {
        discard_pending_input();
        Self::default()
    }

    /// The next key, waiting for it; `None` when the terminal hung up.
    /// A lone Esc is told from the start of a sequence by a pause
    /// (`POLL`, 50 ms).
    ///
    /// # Errors
    ///
    /// The terminal could not be read.
    pub fn key(&mut self) -> Result<Option<Key>, PromptError> {
        loop {
            if let Some(key) = self.queued.pop_front() {
                return Ok(Some(key));
            }
            match wait_for_input(POLL)? {
                Input::HungUp => return Ok(None),
                Input::Nothing => self.queued.extend(self.decoder.settle()),
                Input::Keys => match read_keys(&mut self.decoder)? {
                    Some(keys) => self.queued.extend(keys),
                    None => return Ok(None),
                },
            }
        }
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

fn terminal_error(e: std::io::Error) -> PromptError {
    PromptError::Terminal(e.to_string())
}

/// Leaves raw mode if a prompt left it on, turns echo back on if a turn
/// turned it off ([`super::Quiet`]), and puts back the modes an
/// interactive session found ([`super::remember_modes`]); for exits that
/// skip destructors.
pub fn restore_terminal() {
    if crossterm::terminal::is_raw_mode_enabled().unwrap_or(false) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
    super::echo::restore();
    super::echo::restore_original();
}

/// Restores the terminal before a panic is reported, and reports it
/// escaped like every other line jp writes: a panic message can quote a
/// string from a config or a model (found in review).
pub fn install_panic_restore() {
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|text| (*text).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_owned());
        let at = info
            .location()
            .map(|at| format!(" at {}:{}:{}", at.file(), at.line(), at.column()))
            .unwrap_or_default();
        crate::errln!("jp panicked{at}: {message}");
        let trace = std::backtrace::Backtrace::capture();
        if trace.status() == std::backtrace::BacktraceStatus::Captured {
            crate::errln!("{trace}");
        } else {
            crate::errln!(
                "note: run with `RUST_BACKTRACE=1` to see where; please report this as a bug"
            );
        }
    }));
}

impl TerminalPrompter {
    /// The terminal, if jp has one: stdin is a terminal and `/dev/tty`
    /// opens. Prompts are drawn through `printer`, so output that arrives
    /// while one waits prints above it.
    #[must_use]
    pub fn open(printer: &Printer) -> Option<Self> {
        if !std::io::stdin().is_terminal() {
            return None;
        }
        let tty = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/tty")
            .ok()?;
        printer.set_prompt_terminal(Box::new(tty), || {
            crossterm::terminal::size()
                .ok()
                .map(|(columns, rows)| (usize::from(columns), usize::from(rows)))
        });
        Some(Self {
            printer: printer.clone(),
            cancel: None,
            input: Mutex::new((Decoder::default(), VecDeque::new())),
        })
    }

    /// The widest prompt line that fits the terminal without wrapping.
    fn width() -> usize {
        crossterm::terminal::size().map_or(80, |(columns, _)| usize::from(columns).max(2) - 1)
    }

    /// Shows `line` as the prompt, its end kept in view if it is too wide
    /// ([`fit_prompt`]).
    fn show(&self, line: &str) {
        self.printer.show_prompt(&fit_prompt(line, Self::width()));
    }

    /// Ends the prompt as interrupted, and the turn with it.
    fn interrupted(&self) -> PromptError {
        self.printer.end_prompt("^C");
        if let Some(cancel) = &self.cancel {
            cancel.cancel();
        }
        PromptError::Interrupted
    }

    /// The terminal went away (closed, hung up) while a prompt waited: no
    /// one can answer it, so the turn is interrupted, as by Ctrl+C.
    fn hung_up(&self) -> PromptError {
        tracing::info!("the terminal hung up while a prompt waited; interrupting the turn");
        self.printer.end_prompt("");
        if let Some(cancel) = &self.cancel {
            cancel.cancel();
        }
        PromptError::Interrupted
    }

    /// Waits for one key press in raw mode; raw mode is on while it waits.
    /// `idle` runs between polls (to redraw a question that changed).
    ///
    /// jp reads the terminal's bytes itself ([`super::keys`]), after
    /// waiting for them with poll(2): a terminal that hung up (end of
    /// file, or poll says so) interrupts the turn instead of being read
    /// forever.
    fn key(&self, stop: &CancellationToken, idle: &mut dyn FnMut()) -> Result<Key, PromptError> {
        let _raw = RawMode::enable()?;
        loop {
            if stop.is_cancelled() {
                self.printer.end_prompt("");
                return Err(PromptError::Interrupted);
            }
            let mut input = self.input.lock().unwrap_or_else(PoisonError::into_inner);
            let (decoder, queued) = &mut *input;
            if let Some(key) = queued.pop_front() {
                if super::typeahead::continues_typing(key) {
                    continue;
                }
                return Ok(key);
            }
            match wait_for_input(POLL)? {
                Input::HungUp => {
                    drop(input);
                    return Err(self.hung_up());
                }
                Input::Nothing => {
                    queued.extend(decoder.settle());
                    drop(input);
                    idle();
                }
                Input::Keys => match read_keys(decoder)? {
                    Some(keys) => queued.extend(keys),
                    None => {
                        drop(input);
                        return Err(self.hung_up());
                    }
                },
            }
        }
    }

    /// Forgets keys typed before the prompt showed: a key pressed while
    /// the answer streamed, meant for nothing or for the shell, must not
    /// answer a question the user has not seen yet (approve a call whose
    /// arguments have not even arrived).
    fn discard_typed_ahead(&self) {
        // In `jp chat`, what is typed ahead is the next message's
        // ([`super::TypeAhead`]): left for it, never taken as an answer.
        if !super::typeahead::keep_pending() {
            discard_pending_input();
        }
        let mut input = self.input.lock().unwrap_or_else(PoisonError::into_inner);
        input.0.clear();
        input.1.clear();
    }

    /// One key among `choices`, or Enter for `default`. With `live`, the
    /// question and its choices are its latest state, the prompt line is
    /// drawn again (only it) when that changes, and the answer says
    /// whether the state answered was settled.
    fn one_key(
        &self,
        prompt: &str,
        choices: &[Choice],
        default: Option<char>,
        live: Option<&LiveQuestion>,
        stop: &CancellationToken,
    ) -> Result<LiveAnswer, PromptError> {
        self.discard_typed_ahead();
        // The question as drawn; compared, not versioned: the sender may
        // be gone once it set the last state.
        let mut asked = match live {
            Some(live) => live.borrow().clone(),
            None => Live {
                text: prompt.to_owned(),
                choices: choices.to_vec(),
                settled: true,
            },
        };
        let draw = |asked: &Live| {
            let offered = asked
                .choices
                .iter()
                .map(|c| {
                    if Some(c.key) == default {
                        c.key.to_ascii_uppercase().to_string()
                    } else {
                        c.key.to_string()
                    }
                })
                .collect::<Vec<_>>();
            let keys = format!(" [{},?] ", offered.join(","));
            // The keys always show; a long question gives way.
            let room = Self::width().saturating_sub(columns(&keys)).max(1);
            format!("{}{keys}", cut_columns(&one_line(&asked.text), room))
        };
        let mut line = draw(&asked);
        self.show(&line);
        loop {
            let mut idle = || {
                if let Some(live) = live {
                    let now = live.borrow();
                    if *now != asked {
                        asked.clone_from(&now);
                        line = draw(&asked);
                        self.show(&line);
                    }
                }
            };
            let key = self.key(stop, &mut idle)?;
            let answer = |key: char| LiveAnswer {
                key,
                settled: asked.settled,
            };
            match key {
                Key::Interrupt => return Err(self.interrupted()),
                Key::Enter if default.is_some() => {
                    let key = default.unwrap_or('n');
                    self.printer.end_prompt(&key.to_string());
                    return Ok(answer(key));
                }
                Key::Char('?') => {
                    let mut help = String::from("?\n");
                    for choice in &asked.choices {
                        help.push_str(&format!("  {}  {}\n", choice.key, choice.help));
                    }
                    help.push_str("  ?  show this help\n");
                    self.printer.above_prompt(&format!("{line}{help}"));
                }
                Key::Char(c) => {
                    let c = c.to_ascii_lowercase();
                    if asked.choices.iter().any(|choice| choice.key == c) {
                        self.printer.end_prompt(&c.to_string());
                        return Ok(answer(c));
                    }
                }
                _ => {}
            }
        }
    }

    /// A line of text, edited with Backspace and Ctrl+U, ended by Enter.
    fn line(&self, prompt: &str, stop: &CancellationToken) -> Result<String, PromptError> {
        self.discard_typed_ahead();
        let mut text = String::new();
        loop {
            self.show(&format!("{prompt} {text}"));
            match self.key(stop, &mut || {})? {
                Key::Interrupt => return Err(self.interrupted()),
                Key::Enter => {
                    self.printer.end_prompt("");
                    return Ok(text);
                }
                Key::Backspace => {
                    text.pop();
                }
                Key::Clear => text.clear(),
                Key::Char(c) if !c.is_control() => text.push(c),
                _ => {}
            }
        }
    }
}

impl Prompter for TerminalPrompter {
    fn available(&self) -> bool {
        true
    }

    fn bind_interrupt(&mut self, cancel: CancellationToken) {
        self.cancel = Some(cancel);
    }

    fn choose(
        &mut self,
        question: &str,
        choices: &[Choice],
        stop: &CancellationToken,
    ) -> Result<char, PromptError> {
        let _terminal = hold_terminal();
        Ok(self.one_key(question, choices, None, None, stop)?.key)
    }

    fn choose_live(
        &mut self,
        question: &LiveQuestion,
        stop: &CancellationToken,
    ) -> Result<LiveAnswer, PromptError> {
        let _terminal = hold_terminal();
        self.one_key("", &[], None, Some(question), stop)
    }

    fn ask(&mut self, question: &Question, stop: &CancellationToken) -> Result<Value, PromptError> {
        let _terminal = hold_terminal();
        match &question.answer {
            AnswerKind::Boolean => {
                let default = question
                    .default
                    .as_ref()
                    .and_then(Value::as_bool)
                    .map(|b| if b { 'y' } else { 'n' });
                let key = self
                    .one_key(&question.text, &YES_NO, default, None, stop)?
                    .key;
                Ok(Value::Bool(key == 'y'))
            }
            AnswerKind::Text => {
                let answer = self.line(&question.text, stop)?;
                match &question.default {
                    Some(default) if answer.is_empty() => Ok(default.clone()),
                    _ => Ok(Value::String(answer)),
                }
            }
            AnswerKind::Select { options } => {
                let mut list = format!("{}\n", question.text);
                for (i, option) in options.iter().enumerate() {
                    list.push_str(&format!("  {}) {option}\n", i + 1));
                }
                self.printer.show_prompt("");
                self.printer.above_prompt(&list);
                loop {
                    let answer = self.line(&format!("choose 1-{}:", options.len()), stop)?;
                    if answer.is_empty()
                        && let Some(default) = &question.default
                    {
                        return Ok(default.clone());
                    }
                    let picked = answer
                        .trim()
                        .parse::<usize>()
                        .ok()
                        .and_then(|n| n.checked_sub(1))
                        .and_then(|i| options.get(i))
                        .or_else(|| options.iter().find(|o| **o == answer));
                    if let Some(option) = picked {
                        return Ok(Value::String(option.clone()));
                    }
                }
            }
        }
    }

    fn edit(&mut self, text: &str, file_name: &str) -> Result<String, PromptError> {
        // The editor owns the screen: what streams meanwhile waits.
        let _terminal = hold_terminal();
        self.printer.holding(|| edit_in_editor(text, file_name))
    }

    fn page(&mut self, text: &str) -> Result<(), PromptError> {
        // Raw mode is off between keys; the pager owns the screen, and what
        // streams meanwhile waits, as for the editor.
        let _terminal = hold_terminal();
        let failure = match pager() {
            Some(pager) => match self.printer.holding(|| run_pager(&pager, text)) {
                Ok(()) => return Ok(()),
                Err(failure) => Some(failure),
            },
            None => None,
        };
        let print = match failure {
            Some(PagerFailure::NotStarted(why)) => {
                self.printer.chrome_line(Style::Warn, &why);
                true
            }
            Some(PagerFailure::Failed(why)) => {
                self.printer.chrome_line(Style::Warn, &why);
                false
            }
            None => true,
        };
        if print {
            // No pager: the text prints above the prompt shown next.
            for line in text.lines() {
                self.printer.chrome_line(Style::Dim, line);
            }
        }
        Ok(())
    }
}
