//! All output goes through here: the assistant's content to stdout; chrome
//! (headers, tool calls, decisions, progress) and diagnostics to stderr.
//!
//! So `jp q ... > answer.md` keeps only the answer. A closed stdout or
//! stderr (`jp ... | head -1`) is not an error: output to it stops, the work
//! goes on, and nothing panics. Colour is used only when the stream is a
//! terminal, `NO_COLOR` is unset and `style.color` allows it.

use std::io::{self, IsTerminal as _, Write};
use std::sync::{Arc, Mutex, MutexGuard};

mod width;

pub use width::{char_columns, columns, cut, cut_columns, expand_tabs, rows_drawn};

/// Which stream a piece of output belongs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Channel {
    /// The assistant's content (stdout).
    Content,
    /// Everything else (stderr).
    Chrome,
}

/// How text is styled, when colour is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Headers and rules.
    Header,
    /// Quieter text: reasoning, progress.
    Dim,
    /// Something that went well.
    Good,
    /// A refusal or a warning.
    Warn,
    /// An error.
    Bad,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Self::Header => "1",
            Self::Dim => "2",
            Self::Good => "32",
            Self::Warn => "33",
            Self::Bad => "31",
        }
    }
}

struct Sink {
    writer: Box<dyn Write + Send>,
    closed: bool,
    color: bool,
    /// Whether this stream is a terminal.
    terminal: bool,
    /// Whether the last byte written ended a line (for tidy chrome after
    /// streamed content).
    at_line_start: bool,
    /// On a terminal, what was written since the last newline, as written
    /// (escapes included); `None` once it grew past [`MAX_OPEN_LINE`].
    line: Option<String>,
}

/// Whether log lines go to stderr (`-v`, `RUST_LOG`): no spinner then,
/// as it would share their line.
static LOGGING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says that log lines go to stderr, so no spinner is drawn.
pub fn logs_on_stderr() {
    LOGGING.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The longest unfinished line a prompt keeps together with its rest
/// (see [`Printer::show_prompt`]).
const MAX_OPEN_LINE: usize = 64 * 1024;

impl Sink {
    fn write(&mut self, text: &str) {
        if self.closed || text.is_empty() {
            return;
        }
        let result = self
            .writer
            .write_all(text.as_bytes())
            .and_then(|()| self.writer.flush());
        match result {
            Ok(()) => {
                self.at_line_start = text.ends_with('\n');
                if self.terminal {
                    self.line = match text.rfind('\n') {
                        Some(end) => Some(text[end + 1..].to_owned()),
                        None => self.line.take().map(|mut line| {
                            line.push_str(text);
                            line
                        }),
                    }
                    .filter(|line| line.len() <= MAX_OPEN_LINE);
                }
            }
            // A reader that went away (`| head`) or any other failure:
            // stop writing to this stream rather than fail the work.
            Err(_) => self.closed = true,
        }
    }
}

/// What turns the assistant's text into what a terminal shows: the
/// markdown renderer, installed when stdout is a terminal
/// ([`Printer::set_content_format`]). What it returns is written as it is,
/// so it escapes the text itself.
pub trait ContentFormat: Send {
    /// The next piece of the text: what is ready to show.
    fn push(&mut self, text: &str) -> String;
    /// The text ends here, or something else is drawn below it: the rest.
    fn finish(&mut self) -> String;
}

/// The most output held back while an editor owns the terminal; what is
/// beyond it is counted and said, not shown.
const MAX_HELD: usize = 4 * 1024 * 1024;

/// A prompt on the terminal, and what output does around it.
///
/// While a prompt line is on screen, output to a terminal stream is
/// line-buffered and printed above it: the prompt line is cleared, whole
/// lines are written, and the prompt is drawn again below them. While an
/// editor owns the terminal, output to terminal streams is held and
/// written when it closes. Redirected streams are never touched.
#[derive(Default)]
struct Overlay {
    /// The terminal the prompt is drawn on.
    tty: Option<Box<dyn Write + Send>>,
    /// The prompt line on screen (question and typed answer).
    prompt: Option<String>,
    /// Whether an editor owns the terminal.
    hold: bool,
    /// Output held while `hold`, in order.
    held: Vec<(Channel, String)>,
    held_bytes: usize,
    held_dropped: usize,
    /// The unfinished last line of each terminal stream, while a prompt
    /// shows (content, chrome).
    partial: [String; 2],
    /// Asks the terminal's size.
    size: Option<TerminalSize>,
    /// The rows above the prompt line that hold the start of an
    /// unfinished line (kept in `partial`): erased with the prompt line
    /// whenever output is written above it, so that the line is drawn
    /// whole once it ends, never split by the prompt.
    kept_rows: usize,
}

impl Overlay {
    fn active(&self) -> bool {
        self.hold || self.prompt.is_some()
    }

    fn draw(&mut self, text: &str) {
        if let Some(tty) = &mut self.tty {
            let _ = tty.write_all(text.as_bytes()).and_then(|()| tty.flush());
        }
    }

    /// Erases the prompt line and the kept rows above it, leaving the
    /// cursor where the first of them started.
    fn erase(&mut self) {
        match std::mem::take(&mut self.kept_rows) {
            0 => self.draw(CLEAR_LINE),
            rows => self.draw(&format!("\r\x1b[{rows}A\x1b[J")),
        }
    }
}

/// Asks a terminal's size: (columns, rows), when it says.
pub type TerminalSize = fn() -> Option<(usize, usize)>;

/// Erases the line the cursor is on and returns to its start.
const CLEAR_LINE: &str = "\r\x1b[2K";

struct Inner {
    content: Sink,
    chrome: Sink,
    overlay: Overlay,
    /// A spinner on the chrome terminal while jp waits; cleared by the
    /// next output.
    spinner: Option<indicatif::ProgressBar>,
    /// Draws the assistant's text on a terminal stdout (markdown).
    format: Option<Box<dyn ContentFormat>>,
}

impl Inner {
    /// Draws what the content format holds back (a line not yet
    /// complete, a table), before other output goes below it.
    fn finish_format(&mut self) {
        if let Some(format) = &mut self.format {
            let rest = format.finish();
            self.emit(Channel::Content, &rest);
        }
    }

    fn sink(&mut self, channel: Channel) -> &mut Sink {
        match channel {
            Channel::Content => &mut self.content,
            Channel::Chrome => &mut self.chrome,
        }
    }

    /// When both streams are terminals (the same one, in practice),
    /// content that ended mid-line would glue to the chrome that follows;
    /// start it afresh. A redirected stdout keeps its bytes untouched.
    fn chrome_on_fresh_line(&mut self) {
        // Chrome text (reasoning) left its own line open, or content did on
        // the terminal both share.
        let chrome_open = !self.chrome.at_line_start;
        let content_open =
            !self.content.at_line_start && self.content.terminal && self.chrome.terminal;
        if chrome_open || content_open {
            self.chrome.write("\n");
        }
        if content_open {
            self.content.at_line_start = true;
        }
    }

    fn clear_spinner(&mut self) {
        if let Some(spinner) = self.spinner.take() {
            spinner.finish_and_clear();
        }
    }

    /// Writes `text` to `channel`, around a prompt or editor if one owns
    /// the terminal.
    fn emit(&mut self, channel: Channel, text: &str) {
        if text.is_empty() {
            return;
        }
        self.clear_spinner();
        // Content after chrome text (reasoning) left a line open on the
        // terminal both share: the content starts on a line of its own.
        if channel == Channel::Content
            && self.content.terminal
            && self.chrome.terminal
            && !self.chrome.at_line_start
            && !self.overlay.active()
        {
            self.chrome.write("\n");
        }
        if !self.sink(channel).terminal || !self.overlay.active() {
            self.sink(channel).write(text);
            return;
        }
        if self.overlay.hold {
            let overlay = &mut self.overlay;
            if overlay.held_bytes + text.len() > MAX_HELD {
                overlay.held_dropped += text.len();
            } else {
                overlay.held_bytes += text.len();
                overlay.held.push((channel, text.to_owned()));
            }
            return;
        }
        let slot = channel as usize;
        self.overlay.partial[slot].push_str(text);
        let Some(end) = self.overlay.partial[slot].rfind('\n') else {
            return;
        };
        let lines: String = self.overlay.partial[slot].drain(..=end).collect();
        self.overlay.erase();
        // On the terminal both streams share, the other one's unfinished
        // line ends first, as it does without a prompt (see
        // `chrome_on_fresh_line`): it is not left hidden until it ends.
        let other = match channel {
            Channel::Content => Channel::Chrome,
            Channel::Chrome => Channel::Content,
        };
        if self.content.terminal && self.chrome.terminal {
            let open = std::mem::take(&mut self.overlay.partial[other as usize]);
            if !open.is_empty() {
                self.sink(other).write(&format!("{open}\r\n"));
            }
        }
        // Raw mode (a prompt waiting for a key) does not turn `\n` into a
        // new line at column 0; `\r\n` does that in either mode.
        self.sink(channel).write(&lines.replace('\n', "\r\n"));
        let prompt = self.overlay.prompt.clone().unwrap_or_default();
        self.overlay.draw(&prompt);
    }

    /// Writes what a prompt or editor held back.
    fn flush_overlay(&mut self) {
        for (channel, text) in std::mem::take(&mut self.overlay.held) {
            if channel == Channel::Chrome {
                self.chrome_on_fresh_line();
            }
            self.sink(channel).write(&text);
        }
        self.overlay.held_bytes = 0;
        let dropped = std::mem::take(&mut self.overlay.held_dropped);
        if dropped > 0 {
            let note = format!(
                "… {dropped} bytes of output arrived while the editor was open and are not shown\n"
            );
            self.chrome.write(&note);
        }
        for channel in [Channel::Content, Channel::Chrome] {
            let partial = std::mem::take(&mut self.overlay.partial[channel as usize]);
            self.sink(channel).write(&partial);
        }
    }
}

/// The printer. Cheap to clone; clones share the streams.
#[derive(Clone)]
pub struct Printer {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for Printer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Printer")
    }
}

/// When to use colour: the `style.color` setting, as the printer takes it
/// (its caller maps the config's own type to this one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorMode {
    /// Colour on a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Whether colour may be used, from the `style.color` setting and the
/// environment.
#[must_use]
pub fn color_allowed(setting: ColorMode, is_terminal: bool) -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    match setting {
        ColorMode::Always => true,
        ColorMode::Never => false,
        ColorMode::Auto => is_terminal && !no_color,
    }
}

impl Printer {
    /// The process's stdout and stderr, coloured per `color`.
    #[must_use]
    pub fn stdio(color: ColorMode) -> Self {
        let (out_tty, err_tty) = (io::stdout().is_terminal(), io::stderr().is_terminal());
        let printer = Self::new(
            Box::new(io::stdout()),
            color_allowed(color, out_tty),
            Box::new(io::stderr()),
            color_allowed(color, err_tty),
        );
        printer.set_terminals(out_tty, err_tty);
        printer
    }

    /// Chrome on stderr, coloured per `color`, and content nowhere (for
    /// output whose content is written some other way).
    #[must_use]
    pub fn chrome_only(color: ColorMode) -> Self {
        let err_tty = io::stderr().is_terminal();
        let printer = Self::new(
            Box::new(io::sink()),
            false,
            Box::new(io::stderr()),
            color_allowed(color, err_tty),
        );
        printer.set_terminals(false, err_tty);
        printer
    }

    /// Says which streams are terminals (layout, not colour, depends on
    /// it).
    pub fn set_terminals(&self, content: bool, chrome: bool) {
        let mut inner = self.lock();
        inner.content.terminal = content;
        inner.chrome.terminal = chrome;
    }

    /// A printer over any two writers.
    #[must_use]
    pub fn new(
        content: Box<dyn Write + Send>,
        content_color: bool,
        chrome: Box<dyn Write + Send>,
        chrome_color: bool,
    ) -> Self {
        let sink = |writer, color| Sink {
            writer,
            closed: false,
            color,
            terminal: false,
            at_line_start: true,
            line: Some(String::new()),
        };
        Self {
            inner: Arc::new(Mutex::new(Inner {
                content: sink(content, content_color),
                chrome: sink(chrome, chrome_color),
                overlay: Overlay::default(),
                spinner: None,
                format: None,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while printing cannot leave the streams inconsistent in a
        // way that matters; keep printing.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether `channel` is a terminal.
    #[must_use]
    pub fn is_terminal(&self, channel: Channel) -> bool {
        self.lock().sink(channel).terminal
    }

    /// Whether `channel` is coloured.
    #[must_use]
    pub fn is_colored(&self, channel: Channel) -> bool {
        self.lock().sink(channel).color
    }

    /// Draws the assistant's text through `format` while stdout is a
    /// terminal; redirected, the text is still written byte for byte.
    pub fn set_content_format(&self, format: Box<dyn ContentFormat>) {
        self.lock().format = Some(format);
    }

    /// Writes `text` as is; assistant content on a terminal has its control
    /// characters made visible (see [`sanitize`]), or goes through the
    /// content format when one is set; redirected content is written byte
    /// for byte.
    pub fn write(&self, channel: Channel, text: &str) {
        let mut inner = self.lock();
        if channel == Channel::Content && inner.content.terminal {
            if let Some(format) = &mut inner.format {
                let shown = format.push(text);
                inner.emit(channel, &shown);
                return;
            }
            inner.emit(channel, &sanitize(text));
        } else {
            inner.emit(channel, text);
        }
    }

    /// Writes chrome text (no newline) styled with `style`, its control
    /// characters made visible.
    pub fn chrome_text(&self, style: Style, text: &str) {
        let mut inner = self.lock();
        inner.finish_format();
        let styled = paint(inner.chrome.color, style, &sanitize(text));
        inner.emit(Channel::Chrome, &styled);
    }

    /// Writes a chrome line styled with `style`, starting on a fresh line
    /// if streamed content left the terminal mid-line. Control characters
    /// in `text` are made visible (see [`sanitize`]).
    pub fn chrome_line(&self, style: Style, text: &str) {
        let mut inner = self.lock();
        inner.finish_format();
        // Around a prompt or editor, output is line-buffered or held, and
        // the newline is added when it is written.
        if !inner.overlay.active() {
            inner.chrome_on_fresh_line();
        }
        let mut styled = paint(inner.chrome.color, style, &sanitize(text));
        styled.push('\n');
        inner.emit(Channel::Chrome, &styled);
    }

    /// Ends streamed content, and streamed chrome text (reasoning), with a
    /// newline where they did not end with one.
    pub fn finish_content(&self) {
        let mut inner = self.lock();
        inner.finish_format();
        if inner.overlay.active() {
            if !inner.overlay.partial[Channel::Content as usize].is_empty() {
                inner.emit(Channel::Content, "\n");
            }
        } else {
            if !inner.content.at_line_start {
                inner.content.write("\n");
            }
            if !inner.chrome.at_line_start {
                inner.chrome.write("\n");
            }
        }
    }

    /// Shows a spinner with `message` and the time since, on the chrome
    /// stream when it is a terminal (never in a pipe or a log); the next
    /// output, prompt or [`Printer::stop_spinner`] clears it.
    pub fn spin(&self, message: &str) {
        let mut inner = self.lock();
        inner.clear_spinner();
        if !inner.chrome.terminal
            || inner.overlay.active()
            || LOGGING.load(std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        let spinner = indicatif::ProgressBar::with_draw_target(
            None,
            indicatif::ProgressDrawTarget::term_like_with_hz(
                Box::new(SpinnerTerm(console::Term::stderr())),
                20,
            ),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
            spinner.set_style(style);
        }
        spinner.set_message(sanitize(message).into_owned());
        spinner.enable_steady_tick(std::time::Duration::from_millis(100));
        inner.spinner = Some(spinner);
    }

    /// Clears the spinner, if one shows.
    pub fn stop_spinner(&self) {
        self.lock().clear_spinner();
    }

    /// Sets the terminal prompts are drawn on, and how to ask its size
    /// (columns, rows).
    pub fn set_prompt_terminal(&self, tty: Box<dyn Write + Send>, size: TerminalSize) {
        let mut inner = self.lock();
        inner.overlay.tty = Some(tty);
        inner.overlay.size = Some(size);
    }

    /// Draws `line` as the prompt line, replacing the one on screen; from
    /// now until [`Printer::end_prompt`], output prints above it.
    ///
    /// A line left unfinished on screen (text in flight when Ctrl+C opened
    /// a menu) stays in view above the prompt, and is drawn again whole
    /// once it ends: above the prompt if it ends while the prompt shows,
    /// below it otherwise. A line whose rows cannot be known (no size, or
    /// taller than the screen) stays where it is.
    pub fn show_prompt(&self, line: &str) {
        let mut inner = self.lock();
        inner.clear_spinner();
        if inner.overlay.prompt.is_none() {
            let size = inner.overlay.size.and_then(|size| size());
            // The prompt starts on a line of its own.
            for channel in [Channel::Content, Channel::Chrome] {
                let sink = inner.sink(channel);
                if sink.at_line_start || !sink.terminal {
                    continue;
                }
                let open = sink.line.clone();
                sink.write("\r\n");
                let (Some(open), Some((columns, height))) = (open, size) else {
                    continue;
                };
                let rows = rows_drawn(&open, columns);
                if inner.overlay.kept_rows + rows < height {
                    inner.overlay.kept_rows += rows;
                    inner.overlay.partial[channel as usize].insert_str(0, &open);
                }
            }
        }
        let line = sanitize(line).into_owned();
        inner.overlay.draw(&format!("{CLEAR_LINE}{line}"));
        inner.overlay.prompt = Some(line);
    }

    /// Prints `text` (whole lines) above the prompt line: help, a list of
    /// options.
    pub fn above_prompt(&self, text: &str) {
        let mut inner = self.lock();
        let prompt = inner.overlay.prompt.clone().unwrap_or_default();
        let text = sanitize(text).replace('\n', "\r\n");
        inner.overlay.erase();
        inner.overlay.draw(&format!("{text}{prompt}"));
    }

    /// Leaves the prompt line on screen followed by `answer` and a new
    /// line, and writes what was held back while it showed.
    pub fn end_prompt(&self, answer: &str) {
        let mut inner = self.lock();
        if let Some(prompt) = inner.overlay.prompt.take() {
            let answer = sanitize(answer);
            inner.overlay.erase();
            inner.overlay.draw(&format!("{prompt}{answer}\r\n"));
        }
        if !inner.overlay.hold {
            inner.flush_overlay();
        }
    }

    /// Takes the prompt line off the screen, leaving nothing of it, and
    /// writes what was held back while it showed (a line typed ahead that
    /// was emptied again).
    pub fn dismiss_prompt(&self) {
        let mut inner = self.lock();
        if inner.overlay.prompt.take().is_some() {
            inner.overlay.erase();
        }
        if !inner.overlay.hold {
            inner.flush_overlay();
        }
    }

    /// Whether a prompt line shows.
    #[must_use]
    pub fn showing_prompt(&self) -> bool {
        self.lock().overlay.prompt.is_some()
    }

    /// Holds output to terminal streams while `f` (an editor) owns the
    /// terminal, then writes it.
    pub fn holding<T>(&self, f: impl FnOnce() -> T) -> T {
        {
            let mut inner = self.lock();
            inner.clear_spinner();
            inner.overlay.hold = true;
        }
        struct Release<'a>(&'a Printer);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                let mut inner = self.0.lock();
                inner.overlay.hold = false;
                if inner.overlay.prompt.is_none() {
                    inner.flush_overlay();
                }
            }
        }
        let _release = Release(self);
        f()
    }
}

/// Whether jp escapes `c` in what it shows, decided by Unicode's own
/// properties rather than a hand list (which missed characters, issue 34):
///
/// - controls (general category `Cc`: C0 except newline and tab, DEL, C1);
/// - format characters (`Cf`: the bidirectional controls, zero-width
///   space, word joiner, invisible operators, byte-order mark, the tag
///   characters, the interlinear annotation characters, ...);
/// - the line and paragraph separators (`Zl`, `Zp`);
/// - every `Default_Ignorable_Code_Point` (Hangul fillers, the combining
///   grapheme joiner, the Mongolian and the supplementary variation
///   selectors, ..., and the code points Unicode keeps default-ignorable
///   before assigning them);
///
/// except the joiners (U+200C, U+200D) and the variation selectors emoji
/// need (U+FE00 to U+FE0F). The one test behind [`sanitize`] and
/// [`escape_json`].
#[must_use]
pub fn needs_escape(c: char) -> bool {
    use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory};
    use icu_properties::{CodePointMapData, CodePointSetData};

    if c.is_ascii() {
        return c.is_ascii_control() && c != '\n' && c != '\t';
    }
    if matches!(c, '\u{200c}' | '\u{200d}' | '\u{fe00}'..='\u{fe0f}') {
        return false;
    }
    CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || matches!(
            CodePointMapData::<GeneralCategory>::new().get(c),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        )
}

/// `text` with the characters [`needs_escape`] names made visible as
/// `\u{..}` escapes. Chrome shows text from the model and from tools
/// (names, arguments, results, questions), and commands show config and
/// conversations that may come from a cloned repository; raw, an escape
/// sequence in them could clear the screen, retitle the window or forge an
/// "approved" line.
#[must_use]
pub fn sanitize(text: &str) -> std::borrow::Cow<'_, str> {
    escape_with(text, |c, out| {
        out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
    })
}

/// JSON text (as `serde_json` writes it) with the characters
/// [`needs_escape`] names written as JSON escapes (`\u009b`, a surrogate
/// pair beyond the Basic Multilingual Plane): the same characters
/// [`sanitize`] escapes, in a form that keeps the JSON valid and means the
/// same to a parser. Outside strings, JSON text holds none of them.
#[must_use]
pub fn escape_json(json: &str) -> std::borrow::Cow<'_, str> {
    escape_with(json, |c, out| {
        let mut units = [0_u16; 2];
        for unit in c.encode_utf16(&mut units) {
            out.push_str(&format!("\\u{unit:04x}"));
        }
    })
}

/// `text` with each character [`needs_escape`] names written by `escape`.
fn escape_with(text: &str, escape: impl Fn(char, &mut String)) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `text` as jp draws it on one terminal line: [`sanitize`]d, its tabs
/// drawn as `TAB_COLUMNS` (4) spaces, so that [`columns`] measures what the
/// terminal shows.
#[must_use]
pub fn one_line(text: &str) -> String {
    expand_tabs(&sanitize(text)).into_owned()
}

fn paint(color: bool, style: Style, text: &str) -> String {
    if color {
        format!("\x1b[{}m{text}\x1b[0m", style.code())
    } else {
        text.to_owned()
    }
}

/// Prints a line to stdout, [`sanitize`]d; a closed stdout is ignored (see
/// the module docs). For commands that print results rather than stream a
/// turn: what they show (config, conversations, policies) may come from a
/// cloned repository, a tool or a model.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::printer::stdout_line(&format!($($arg)*))
    };
}

/// Prints a line to stderr, [`sanitize`]d; a closed stderr is ignored.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::printer::stderr_line(&format!($($arg)*))
    };
}

/// Writes `text`, [`sanitize`]d, and a newline to stdout, ignoring a closed
/// pipe.
pub fn stdout_line(text: &str) {
    write_line(&mut io::stdout().lock(), &sanitize(text));
}

/// Writes `text` and a newline to stdout: byte for byte when stdout is not
/// a terminal (a script reading one value, `jp config get`), [`sanitize`]d
/// when it is. A closed pipe is ignored.
pub fn stdout_value_line(text: &str) {
    let out = io::stdout();
    let terminal = out.is_terminal();
    write_line(&mut out.lock(), &value_text(text, terminal));
}

/// What [`stdout_value_line`] writes of `text`.
fn value_text(text: &str, terminal: bool) -> std::borrow::Cow<'_, str> {
    if terminal {
        sanitize(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Writes `json` (JSON text, as `serde_json` writes it), [`escape_json`]ed,
/// and a newline to stdout, ignoring a closed pipe.
pub fn stdout_json(json: &str) {
    write_line(&mut io::stdout().lock(), &escape_json(json));
}

/// Writes `text`, [`sanitize`]d, and a newline to stderr, ignoring a closed
/// pipe.
pub fn stderr_line(text: &str) {
    // Diagnostics quote config, files and names that may come from a
    // cloned repository: escaped like everything else jp shows.
    write_line(&mut io::stderr().lock(), &sanitize(text));
}

fn write_line(out: &mut impl Write, text: &str) {
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

/// Where the spinner draws: stderr, as a terminal a few columns narrower
/// than it is. indicatif pads its line to the terminal's width, leaving
/// the cursor in the last column, so the `^C` the terminal itself echoes
/// for a Ctrl+C would wrap onto the next line, and clearing the spinner
/// would then clear that line instead, leaving the spinner on screen. With
/// room to spare, the echo stays on the spinner's line and goes with it.
#[derive(Debug)]
struct SpinnerTerm(console::Term);

/// Columns kept free at the end of the spinner's line: room for `^C`.
const SPINNER_MARGIN: u16 = 3;

impl indicatif::TermLike for SpinnerTerm {
    fn width(&self) -> u16 {
        self.0.size().1.saturating_sub(SPINNER_MARGIN).max(1)
    }

    fn height(&self) -> u16 {
        self.0.size().0
    }

    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_up(n)
    }

    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_down(n)
    }

    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_right(n)
    }

    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_left(n)
    }

    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.0.write_line(s)
    }

    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.0.write_str(s)
    }

    fn clear_line(&self) -> std::io::Result<()> {
        self.0.clear_line()
    }

    fn flush(&self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// An in-memory writer for tests: what was written, shared.
#[cfg(any(test, feature = "test-support"))]
#[derive(Debug, Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

#[cfg(any(test, feature = "test-support"))]
impl Captured {
    /// Everything written, as text.
    #[must_use]
    pub fn text(&self) -> String {
        let bytes = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(any(test, feature = "test-support"))]
impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[path = "printer_tests.rs"]
mod tests;
