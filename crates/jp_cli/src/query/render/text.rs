//! One long string argument on screen: a [`TextBlock`] turns the pieces of
//! a string, as they stream, into screen rows under a prefix (`  │ `, or
//! `  - ` / `  + ` in a diff).
//!
//! The cap counts screen rows, not lines, so no string can fill the screen
//! whatever its shape: a line wider than the terminal takes several rows
//! (the ones after the first are indented as far as the prefix), and a row
//! shows as soon as it is full, so a long line without a newline (a
//! minified file) is shown live too. A line shows at most [`LINE_CHARS`]
//! terminal columns; its last row shown then ends in `…`, and so does the last
//! row the cap allows when its line goes on. What is not shown is counted
//! into one tail line: `… N more lines` (lines not shown at all), `… N more
//! bytes` (the rest of lines cut short), or both.
//!
//! Only the unfinished row is kept, so memory is bounded by the terminal's
//! width, not by the string.

use super::line::{Line, wrap};
use jp_term::printer::{Style, columns, sanitize};

/// The most terminal columns of one line of a long string that are shown;
/// the rest of the line is counted, not shown.
pub const LINE_CHARS: usize = 400;

/// How the line being received is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Row by row.
    Showing,
    /// Part of it showed; the rest is counted in bytes.
    Cut,
    /// The cap was reached before it began: counted as a line.
    Hidden,
}

/// The screen rows of one long string, as it streams.
#[derive(Debug)]
pub struct TextBlock {
    prefix: &'static str,
    style: Style,
    /// The terminal's width (at least 8, as [`wrap`] has it).
    width: usize,
    /// The most rows shown, the tail aside.
    rows_max: usize,
    rows: usize,
    /// Of the line being received: what arrived and is not shown yet (less
    /// than a row, except while a row is being cut off), and its width on
    /// screen in columns (see [`shown_width`]).
    pending: String,
    pending_width: usize,
    /// Its columns and rows shown so far.
    line_width: usize,
    line_rows: usize,
    /// Whether any of it arrived.
    line_started: bool,
    state: State,
    hidden_lines: usize,
    cut_bytes: usize,
}

impl TextBlock {
    /// A block shown under `prefix` in `style`, `width` columns wide, at
    /// most `rows_max` rows (and its tail).
    pub fn new(prefix: &'static str, style: Style, width: usize, rows_max: usize) -> Self {
        Self {
            prefix,
            style,
            width: width.max(8),
            rows_max,
            rows: 0,
            pending: String::new(),
            pending_width: 0,
            line_width: 0,
            line_rows: 0,
            line_started: false,
            state: if rows_max == 0 {
                State::Hidden
            } else {
                State::Showing
            },
            hidden_lines: 0,
            cut_bytes: 0,
        }
    }

    /// The rows shown so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The next piece of the string: the rows it completes go to `out`.
    pub fn push(&mut self, piece: &str, out: &mut Vec<Line>) {
        let mut rest = piece;
        while let Some(end) = rest.find('\n') {
            self.push_in_line(&rest[..end], out);
            self.end_line(out);
            rest = &rest[end + 1..];
        }
        self.push_in_line(rest, out);
    }

    /// The string is complete (or ends here): its last line, then the
    /// tail, if anything was not shown.
    pub fn end(&mut self, out: &mut Vec<Line>) {
        if self.line_started {
            self.end_line(out);
        }
        let lines = match self.hidden_lines {
            0 => None,
            1 => Some("1 more line".to_owned()),
            n => Some(format!("{n} more lines")),
        };
        let bytes = match self.cut_bytes {
            0 => None,
            1 => Some("1 more byte".to_owned()),
            n => Some(format!("{n} more bytes")),
        };
        let tail = match (bytes, lines) {
            (None, None) => return,
            (Some(one), None) | (None, Some(one)) => one,
            (Some(bytes), Some(lines)) => format!("{bytes} and {lines}"),
        };
        out.push(Line {
            style: Style::Dim,
            text: format!("{}… {tail}", self.prefix),
        });
    }

    /// Part of a line, without a newline.
    fn push_in_line(&mut self, part: &str, out: &mut Vec<Line>) {
        if part.is_empty() {
            return;
        }
        self.line_started = true;
        match self.state {
            State::Hidden => return,
            State::Cut => {
                self.cut_bytes += part.len();
                return;
            }
            State::Showing => {}
        }
        for (at, c) in part.char_indices() {
            self.pending.push(c);
            self.pending_width += shown_width(c);
            self.show_full_rows(out);
            if self.state == State::Cut {
                self.cut_bytes += part.len() - at - c.len_utf8();
                return;
            }
        }
    }

    /// Shows the rows of the line being received that are full and have
    /// more of the line after them (the last row waits: the line may end
    /// there, and then it needs no `…`).
    fn show_full_rows(&mut self, out: &mut Vec<Line>) {
        let room = self
            .width
            .saturating_sub(self.prefix.chars().count())
            .max(1);
        loop {
            let limit = room.min(LINE_CHARS.saturating_sub(self.line_width));
            if self.pending_width <= limit {
                return;
            }
            // The line goes on past this row: the row is the last one shown
            // of it when the line or the block reaches its cap.
            let last = self.line_width + limit >= LINE_CHARS || self.rows + 1 >= self.rows_max;
            let fit = if last { limit.saturating_sub(1) } else { limit };
            let (mut end, mut width) = (0, 0);
            for (at, c) in self.pending.char_indices() {
                let w = shown_width(c);
                if width + w > fit {
                    break;
                }
                width += w;
                end = at + c.len_utf8();
            }
            if end == 0 && !last {
                // An escape wider than the row: it gets a row of its own.
                let c = self.pending.chars().next().unwrap_or(' ');
                end = c.len_utf8();
                width = shown_width(c);
            }
            let row: String = self.pending.drain(..end).collect();
            self.pending_width -= width;
            self.line_width += width;
            self.show_row(&row, if last { "…" } else { "" }, out);
            if last {
                self.state = State::Cut;
                self.cut_bytes += self.pending.len();
                self.pending.clear();
                self.pending_width = 0;
                return;
            }
        }
    }

    /// A newline: the rest of the line shows (or is counted).
    fn end_line(&mut self, out: &mut Vec<Line>) {
        match self.state {
            State::Hidden => self.hidden_lines += 1,
            State::Cut => {}
            State::Showing => {
                // An empty line shows as an empty row; the last row of a
                // longer one holds at least a character.
                if self.line_rows == 0 || !self.pending.is_empty() {
                    let row = std::mem::take(&mut self.pending);
                    self.show_row(&row, "", out);
                }
            }
        }
        self.pending.clear();
        self.pending_width = 0;
        self.line_width = 0;
        self.line_rows = 0;
        self.line_started = false;
        self.state = if self.rows >= self.rows_max {
            State::Hidden
        } else {
            State::Showing
        };
    }

    fn show_row(&mut self, row: &str, end: &str, out: &mut Vec<Line>) {
        let lead = if self.line_rows == 0 {
            self.prefix.to_owned()
        } else {
            " ".repeat(self.prefix.chars().count())
        };
        let line = Line {
            style: self.style,
            text: format!("{lead}{}{end}", sanitize(row)),
        };
        // A row fits, except one holding an escape wider than the room.
        let rows = wrap(vec![line], self.width);
        self.rows += rows.len();
        self.line_rows += 1;
        out.extend(rows);
    }
}

/// How many terminal columns `c` takes once sanitized (an escaped control
/// character takes its escape; see [`columns`]), counting a zero-width
/// character (a combining mark, a joiner) as one: rows and the line cap
/// then bound what is held and shown whatever the text, at the price of a
/// row a little narrower than the terminal where such characters are.
fn shown_width(c: char) -> usize {
    let mut buffer = [0; 4];
    columns(&sanitize(c.encode_utf8(&mut buffer))).max(1)
}
