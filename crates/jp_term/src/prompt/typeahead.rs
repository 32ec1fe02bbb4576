//! What the user types while a turn prints, in an interactive session:
//! the next message, queued until the turn ends.
//!
//! While a [`TypeAhead`] lives, the terminal reads keys one by one without
//! echo ([`super::Quiet::start_keys`]); a thread reads them whenever no
//! prompt holds the terminal ([`super::terminal::hold_terminal`]), so a
//! key meant for the next message never answers a question, and a prompt
//! reads its own keys as it does in `jp query`. The line being typed shows
//! as the printer's prompt line (output prints above it); Enter queues it,
//! and the line stays on screen as `queued: TEXT`. Ctrl+C and Ctrl+Z keep
//! raising their signals: the turn's menu and job control are unchanged.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::echo::Quiet;
use super::keys::{Decoder, Key};
use super::terminal::{Input, fit_prompt, read_keys, try_hold_terminal, wait_for_input};
use crate::printer::Printer;

/// How long the reader waits for a key before it looks whether it should
/// stop or draw again.
const POLL: Duration = Duration::from_millis(40);

/// What the line shows while it is typed.
const TYPING: &str = "next› ";

/// A key that comes within this time of the last key typed ahead goes on
/// with the message, even when a question showed meanwhile: someone typing
/// does not stop the moment a question appears, and the next letter of
/// their message must not answer it (found in review: `a` of "also"
/// allowed a call for the session).
const BURST: Duration = Duration::from_millis(600);

/// Whether a [`TypeAhead`] lives.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// When the last key of the typed-ahead message came, in milliseconds
/// since [`EPOCH`] plus one (0: none yet).
static LAST_TYPED: AtomicU64 = AtomicU64::new(0);

/// Keys a question read that go on with the message ([`continues_typing`]).
static HANDED: Mutex<Vec<Key>> = Mutex::new(Vec::new());

static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

fn now_ms() -> u64 {
    u64::try_from(EPOCH.elapsed().as_millis())
        .unwrap_or(u64::MAX - 1)
        .saturating_add(1)
}

/// Whether a question should leave `key` (which it read) to the message
/// being typed ahead: a [`TypeAhead`] lives and its last key came less
/// than [`BURST`] ago. The key is then handed to it. Ctrl+C and Ctrl+D
/// are always the question's.
pub(super) fn continues_typing(key: Key) -> bool {
    if !ACTIVE.load(Ordering::SeqCst) || key == Key::Interrupt {
        return false;
    }
    let last = LAST_TYPED.load(Ordering::SeqCst);
    let now = now_ms();
    if last == 0 || now.saturating_sub(last) > u64::try_from(BURST.as_millis()).unwrap_or(0) {
        return false;
    }
    LAST_TYPED.store(now, Ordering::SeqCst);
    HANDED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(key);
    true
}

/// When a question shows while a [`TypeAhead`] lives, what was typed and
/// not read yet is the message's: read now and handed to it, as the start
/// of a burst ([`continues_typing`]). `false` when none lives (the caller
/// then drops those keys, as `jp query` does).
pub(super) fn keep_pending() -> bool {
    if !ACTIVE.load(Ordering::SeqCst) {
        return false;
    }
    let mut decoder = Decoder::default();
    let mut keys = Vec::new();
    while let Ok(Input::Keys) = wait_for_input(Duration::ZERO) {
        match read_keys(&mut decoder) {
            Ok(Some(read)) if !read.is_empty() => keys.extend(read),
            _ => break,
        }
    }
    keys.extend(decoder.settle());
    if !keys.is_empty() {
        LAST_TYPED.store(now_ms(), Ordering::SeqCst);
        HANDED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(keys.into_iter().filter(|key| *key != Key::Interrupt));
    }
    true
}

/// What was typed while a turn printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Typed {
    /// Lines ended with Enter, in order: the next message.
    pub queued: Vec<String>,
    /// What was typed after the last Enter.
    pub partial: String,
}

/// The keys typed while a turn prints, read on a thread of their own.
pub struct TypeAhead {
    stop: Arc<AtomicBool>,
    state: Arc<Mutex<Reader>>,
    thread: Option<JoinHandle<()>>,
    /// The terminal's modes while it lives.
    quiet: Option<Quiet>,
}

impl TypeAhead {
    /// Starts reading what is typed, drawn through `printer`, going on
    /// from `text` (typed during an earlier turn and not sent yet); `None`
    /// when stdin is no terminal in the foreground (nothing is read then).
    #[must_use]
    pub fn start(printer: &Printer, text: &str) -> Option<Self> {
        let quiet = Quiet::start_keys()?;
        let stop = Arc::new(AtomicBool::new(false));
        let mut reader = Reader::new(printer.clone());
        reader.text = text.to_owned();
        let state = Arc::new(Mutex::new(reader));
        LAST_TYPED.store(0, Ordering::SeqCst);
        HANDED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        let thread = {
            let stop = Arc::clone(&stop);
            let state = Arc::clone(&state);
            std::thread::Builder::new()
                .name("jp-typeahead".into())
                .spawn(move || read_until(&stop, &state))
                .ok()?
        };
        ACTIVE.store(true, Ordering::SeqCst);
        Some(Self {
            stop,
            state,
            thread: Some(thread),
            quiet: Some(quiet),
        })
    }

    /// Stops reading, takes what is still waiting on the terminal, and
    /// gives back what was typed; the terminal's modes are put back.
    #[must_use]
    pub fn finish(mut self) -> Typed {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let mut reader = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        // A question's thread may still be closing: wait a little for the
        // terminal, so what is left on it is read, not dropped.
        let mut terminal = None;
        for _ in 0..25 {
            terminal = try_hold_terminal();
            if terminal.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        reader.take_handed();
        if terminal.is_some() {
            reader.drain();
        }
        drop(terminal);
        ACTIVE.store(false, Ordering::SeqCst);
        reader.hide();
        let typed = Typed {
            queued: std::mem::take(&mut reader.queued),
            partial: std::mem::take(&mut reader.text),
        };
        drop(reader);
        self.quiet.take();
        typed
    }
}

impl Drop for TypeAhead {
    fn drop(&mut self) {
        ACTIVE.store(false, Ordering::SeqCst);
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads keys until `stop`, whenever no prompt holds the terminal.
fn read_until(stop: &AtomicBool, state: &Mutex<Reader>) {
    while !stop.load(Ordering::Relaxed) {
        let input = wait_for_input(POLL);
        let Some(_terminal) = try_hold_terminal() else {
            // A prompt reads the terminal: its keys are its own.
            std::thread::sleep(POLL);
            continue;
        };
        let mut reader = state.lock().unwrap_or_else(PoisonError::into_inner);
        reader.take_handed();
        match input {
            Ok(Input::Keys) => {
                if !reader.drain() {
                    return;
                }
            }
            Ok(Input::Nothing) => {
                if let Some(key) = reader.decoder.settle() {
                    reader.key(key);
                }
            }
            Ok(Input::HungUp) | Err(_) => return,
        }
        // A prompt that showed meanwhile took the line: draw it again.
        reader.draw();
    }
}

/// The line being typed and what was queued.
struct Reader {
    printer: Printer,
    decoder: Decoder,
    text: String,
    queued: Vec<String>,
    /// What the prompt line shows, when it shows ours.
    shown: Option<String>,
}

impl Reader {
    fn new(printer: Printer) -> Self {
        Self {
            printer,
            decoder: Decoder::default(),
            text: String::new(),
            queued: Vec::new(),
            shown: None,
        }
    }

    /// Reads what the terminal has now (the caller holds it); `false` when
    /// it hung up.
    fn drain(&mut self) -> bool {
        while let Ok(Input::Keys) = wait_for_input(Duration::ZERO) {
            match read_keys(&mut self.decoder) {
                Ok(Some(keys)) => {
                    for key in keys {
                        self.key(key);
                    }
                }
                Ok(None) | Err(_) => return false,
            }
        }
        true
    }

    /// The keys questions left to the message.
    fn take_handed(&mut self) {
        let handed = std::mem::take(&mut *HANDED.lock().unwrap_or_else(PoisonError::into_inner));
        for key in handed {
            self.key(key);
        }
    }

    /// One key typed.
    fn key(&mut self, key: Key) {
        LAST_TYPED.store(now_ms(), Ordering::SeqCst);
        match key {
            Key::Char(c) if !c.is_control() => self.text.push(c),
            Key::Backspace => {
                self.text.pop();
            }
            Key::Clear => self.text.clear(),
            Key::Enter if self.text.trim().is_empty() => self.text.clear(),
            Key::Enter => {
                let line = std::mem::take(&mut self.text);
                self.printer.show_prompt(&format!("queued: {line}"));
                self.printer.end_prompt("");
                self.shown = None;
                self.queued.push(line);
            }
            _ => {}
        }
    }

    /// Draws the line as typed, or takes it away when it is empty.
    fn draw(&mut self) {
        if self.text.is_empty() {
            self.hide();
            return;
        }
        let width =
            crossterm::terminal::size().map_or(80, |(columns, _)| usize::from(columns).max(2) - 1);
        let line = fit_prompt(&format!("{TYPING}{}", self.text), width);
        // Drawn again when it changed, or when a prompt took the line.
        if self.shown.as_deref() != Some(line.as_str()) || !self.printer.showing_prompt() {
            self.printer.show_prompt(&line);
            self.shown = Some(line);
        }
    }

    /// Takes the line off the screen, if it shows ours.
    fn hide(&mut self) {
        if self.shown.take().is_some() && self.printer.showing_prompt() {
            self.printer.dismiss_prompt();
        }
    }
}
