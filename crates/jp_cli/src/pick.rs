//! `jp query --resume [ID]`: which conversation the query continues. With
//! an id (or a unique start of one, or `last`), that one; without, on a
//! terminal, the user picks it from a list of the conversations, newest
//! first, with their titles and ages. Either way it becomes the active
//! conversation, as `jp conversation use` makes it, and the query goes on
//! with it.
//!
//! The list is a pure state machine ([`List`]: keys in, lines out) behind a
//! thin shell ([`choose`]) that draws it on the terminal (`/dev/tty`), reads
//! keys in raw mode behind a guard, and erases what it drew on every way
//! out.

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use jp_conversation::{Store, StoreError};
use jp_term::errln;
use jp_term::printer::{columns, cut_columns, one_line, sanitize};
use jp_term::prompt::{Key, KeyReader, RawMode};

use crate::conversation::{age, from_elsewhere, resolve};
use crate::exit;
use crate::ledger::Ledger;

/// One conversation in the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: String,
    /// Its title, or its first message, on one line.
    pub title: String,
    /// `5 min ago`.
    pub age: String,
}

/// What a key did to the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Still choosing: draw it again.
    Stay,
    /// Enter: this conversation.
    Chosen(String),
    /// Esc, `q`, Ctrl+C or Ctrl+D: none.
    Cancelled,
}

/// The first line of the list.
const HEADER: &str =
    "Resume which conversation? ↑/↓ or j/k to move, Enter to choose, Esc or q to cancel";

/// The list: its entries, the one selected, and the window of `rows`
/// entries shown.
#[derive(Debug)]
pub struct List {
    entries: Vec<Entry>,
    selected: usize,
    top: usize,
    rows: usize,
}

impl List {
    /// `entries` (not empty), the first selected, `rows` of them shown at
    /// a time (at least one).
    #[must_use]
    pub fn new(entries: Vec<Entry>, rows: usize) -> Self {
        Self {
            entries,
            selected: 0,
            top: 0,
            rows: rows.max(1),
        }
    }

    /// Acts on `key`.
    pub fn key(&mut self, key: Key) -> Step {
        match key {
            Key::Up | Key::Char('k') => self.selected = self.selected.saturating_sub(1),
            Key::Down | Key::Char('j') => {
                self.selected = (self.selected + 1).min(self.entries.len().saturating_sub(1));
            }
            Key::Enter => {
                return self
                    .entries
                    .get(self.selected)
                    .map_or(Step::Cancelled, |entry| Step::Chosen(entry.id.clone()));
            }
            Key::Escape | Key::Char('q') | Key::Interrupt => return Step::Cancelled,
            _ => {}
        }
        // The selected entry stays in the window.
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + self.rows {
            self.top = self.selected + 1 - self.rows;
        }
        Step::Stay
    }

    /// The lines to draw, none wider than `width` columns: the header, the
    /// entries in the window (`>` marks the selected one; each title cut to
    /// fit, the ages aligned), and, when not all fit, which of how many is
    /// selected.
    #[must_use]
    pub fn lines(&self, width: usize) -> Vec<String> {
        let shown = &self.entries[self.top..(self.top + self.rows).min(self.entries.len())];
        let age_width = shown.iter().map(|e| columns(&e.age)).max().unwrap_or(0);
        // `> `, the title, two spaces, the age.
        let title_width = width.saturating_sub(age_width + 4).max(1);
        let mut lines = vec![cut_columns(HEADER, width)];
        for (at, entry) in shown.iter().enumerate() {
            let marker = if self.top + at == self.selected {
                ">"
            } else {
                " "
            };
            let title = cut_columns(&entry.title, title_width);
            let pad = title_width.saturating_sub(columns(&title));
            let line = format!("{marker} {title}{}  {}", " ".repeat(pad), entry.age);
            lines.push(cut_columns(&line, width));
        }
        if self.entries.len() > self.rows {
            lines.push(cut_columns(
                &format!("  {} of {}", self.selected + 1, self.entries.len()),
                width,
            ));
        }
        lines
    }
}

/// The conversations of `store`, newest first (by their latest activity);
/// one that does not read is left out.
fn entries(store: &Store) -> Result<Vec<Entry>, StoreError> {
    let now = jp_conversation::conversation::now_ms();
    let mut found = Vec::new();
    for id in store.ids()? {
        let Ok(conversation) = store.load(&id) else {
            continue;
        };
        let title = conversation
            .title()
            .unwrap_or_else(|| "(untitled)".to_owned());
        let title = one_line(title.lines().next().unwrap_or_default());
        let at = conversation.last_activity_ms();
        found.push((
            at,
            Entry {
                id,
                title,
                age: age(now, at),
            },
        ));
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.id.cmp(&a.1.id)));
    Ok(found.into_iter().map(|(_, entry)| entry).collect())
}

/// What the list drew on the terminal, erased when it is dropped: on
/// every way out, a choice, a cancel, an error or unwinding.
struct Screen {
    tty: std::fs::File,
    /// The lines drawn; the cursor is at the end of the last.
    drawn: usize,
}

impl Screen {
    /// Back to the start of the first line drawn, and everything below
    /// it cleared.
    fn clear(&mut self) -> String {
        let up = match self.drawn {
            0 | 1 => String::new(),
            n => format!("\x1b[{}A", n - 1),
        };
        self.drawn = 0;
        format!("\r{up}\x1b[J")
    }

    /// Draws `lines` in place of what was drawn (raw mode: `\r\n` ends a
    /// line).
    fn draw(&mut self, lines: &[String]) {
        let mut out = self.clear();
        out.push_str(&lines.join("\r\n"));
        self.drawn = lines.len();
        let _ = self.tty.write_all(out.as_bytes());
        let _ = self.tty.flush();
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let out = self.clear();
        let _ = self.tty.write_all(out.as_bytes());
        let _ = self.tty.flush();
    }
}

/// Lets the user pick one of `entries` on the terminal; `None` when they
/// cancelled (or the terminal went away). The terminal is left as it was:
/// the list erased, raw mode off.
fn choose(entries: Vec<Entry>) -> Result<Option<String>, crate::error::Error> {
    let terminal = |error: jp_term::prompt::PromptError| std::io::Error::other(error.to_string());
    let tty = std::fs::OpenOptions::new().write(true).open("/dev/tty")?;
    // The terminal's size now: `(columns, rows)`.
    let size = || {
        crossterm::terminal::size().map_or((80, 24), |(columns, rows)| {
            (usize::from(columns), usize::from(rows))
        })
    };
    // The header, the position line and the line the cursor is left on.
    let mut list = List::new(entries, size().1.saturating_sub(3).clamp(1, 15));
    // Dropped in reverse order: the list is erased, then raw mode is off.
    let _raw = RawMode::enable().map_err(terminal)?;
    let mut screen = Screen { tty, drawn: 0 };
    let mut keys = KeyReader::new();
    loop {
        // A line as wide as the terminal wraps on some terminals: one
        // less; measured at each draw, as the terminal may have narrowed.
        screen.draw(&list.lines(size().0.saturating_sub(1).max(10)));
        let key = keys.key().map_err(terminal)?;
        match key.map_or(Step::Cancelled, |key| list.key(key)) {
            Step::Stay => {}
            Step::Chosen(id) => return Ok(Some(id)),
            Step::Cancelled => return Ok(None),
        }
    }
}

/// `jp query --resume [ID]` (`asked` empty without an ID): makes the
/// conversation the active one, as `jp conversation use` does, so the
/// query continues it. `Some` is the exit code to stop with, already
/// said: a name that fits no conversation or several, no terminal to pick
/// on, or a pick cancelled (130, as any question of jp's cancelled:
/// nothing was sent).
pub fn resume(
    store: &Store,
    ledger: &Ledger,
    asked: &str,
) -> Result<Option<ExitCode>, crate::error::Error> {
    let id = if asked.is_empty() {
        if !std::io::stdin().is_terminal() {
            errln!(
                "error: --resume without an ID needs a terminal to pick the conversation on; give it (`jp query --resume ID MESSAGE`; `jp conversation ls` lists them)"
            );
            return Ok(Some(exit::USAGE.into()));
        }
        let entries = entries(store)?;
        if entries.is_empty() {
            errln!("error: --resume: there is no conversation yet; `jp query MESSAGE` starts one");
            return Ok(Some(exit::USAGE.into()));
        }
        match choose(entries)? {
            Some(id) => id,
            None => {
                errln!("no conversation chosen; nothing was sent");
                return Ok(Some(exit::INTERRUPTED.into()));
            }
        }
    } else {
        match resolve(store, asked, true) {
            Ok(id) => id,
            Err(code) => return Ok(Some(code)),
        }
    };
    match store.set_active(&id) {
        Ok(()) => {}
        Err(error @ (StoreError::NotFound(_) | StoreError::BadId(_))) => {
            errln!("error: --resume: {error}");
            return Ok(Some(exit::USAGE.into()));
        }
        Err(error) => return Err(error.into()),
    }
    ledger.choose(&id);
    if let Ok(conversation) = store.load(&id)
        && let Some(note) = from_elsewhere(ledger, &conversation)
    {
        errln!("{}", sanitize(&format!("note: {note}")));
    }
    Ok(None)
}

#[cfg(test)]
#[path = "pick_tests.rs"]
mod tests;
