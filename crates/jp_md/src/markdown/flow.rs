//! A paragraph's line drawn word by word while it streams, so a long line
//! shows as it arrives rather than when it ends.
//!
//! A word is drawn once the space after it arrives, and only while the
//! line so far holds no character that may be markdown (`*`, `_`, `` ` ``,
//! `[`, `<`, `&`, `\`, `~`, `|`, ...): plain words render as themselves
//! whatever follows them. From the first such character on, the rest of
//! the line waits for its end and is then parsed ([`super::inline`]) and
//! drawn after the words already shown. Rows break as [`wrap`] breaks
//! them (the same greedy rule, so a line drawn word by word looks as it
//! would drawn whole); at the top level, with no `room`, the terminal
//! wraps them.

use super::inline;
use super::paint::{Ink, Look, Span, paint, paint_open, wrap, wrap_from};
use jp_term::printer::{columns, sanitize};

/// The line being drawn.
pub struct Flow {
    /// The prefix of each row after the first (quote bars, list indent).
    rest: Vec<Span>,
    /// The columns of a row, past its prefix; `None`: the terminal wraps.
    room: Option<usize>,
    /// The columns of the current row used.
    used: usize,
    /// Spaces since the last word drawn.
    spaces: usize,
    /// The word arriving.
    word: String,
    /// From the first character that may be markdown: the rest of the
    /// line, drawn when it ends.
    tail: Option<String>,
}

impl Flow {
    /// A line whose first row's prefix is drawn already.
    pub fn new(rest: Vec<Span>, room: Option<usize>) -> Self {
        Self {
            rest,
            room,
            used: 0,
            spaces: 0,
            word: String::new(),
            tail: None,
        }
    }

    /// More of the line (no newline): the words it completes go to `out`.
    pub fn push(&mut self, text: &str, ink: Ink, out: &mut String) {
        for c in text.chars() {
            if let Some(tail) = &mut self.tail {
                tail.push(c);
                continue;
            }
            match c {
                ' ' => {
                    if !self.word.is_empty() {
                        self.draw_word(ink, out);
                    }
                    self.spaces += 1;
                }
                '\\' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '&' | '~' | '|' | '\t' | '\r' => {
                    let mut tail = " ".repeat(self.spaces);
                    tail.push_str(&std::mem::take(&mut self.word));
                    tail.push(c);
                    self.spaces = 0;
                    self.tail = Some(tail);
                }
                _ => self.word.push(c),
            }
        }
    }

    /// The line ended: the rest of it, and the end of its row.
    pub fn end(mut self, ink: Ink, out: &mut String) {
        let Some(tail) = self.tail.take() else {
            if !self.word.is_empty() {
                self.draw_word(ink, out);
            }
            out.push('\n');
            return;
        };
        let tail = tail.strip_suffix('\r').unwrap_or(&tail).trim_end();
        let spans = inline::spans(tail, Look::default(), ink.color, ink.hyperlinks);
        let room = self.room.unwrap_or(usize::MAX);
        for (i, row) in wrap_from(&spans, room, self.used).into_iter().enumerate() {
            if i == 0 {
                paint(&row, ink, out);
            } else {
                let mut spans = self.rest.clone();
                spans.extend(row);
                paint(&spans, ink, out);
            }
        }
    }

    /// Draws the word that arrived, after the spaces before it, on this row
    /// or the next.
    fn draw_word(&mut self, ink: Ink, out: &mut String) {
        let word = sanitize(&std::mem::take(&mut self.word)).into_owned();
        let spaces = std::mem::take(&mut self.spaces);
        let width = columns(&word);
        let room = self.room.unwrap_or(usize::MAX);
        if self.used > 0 && self.used + spaces + width <= room {
            out.push_str(&" ".repeat(spaces));
            out.push_str(&word);
            self.used += spaces + width;
            return;
        }
        if self.used == 0 && width <= room {
            out.push_str(&word);
            self.used = width;
            return;
        }
        // The word starts the next row; a word wider than a row is cut
        // where each row ends, as [`wrap`] cuts it.
        if self.used > 0 {
            self.new_row(ink, out);
        }
        for (i, row) in wrap(&[Span::plain(word)], room).into_iter().enumerate() {
            if i > 0 {
                self.new_row(ink, out);
            }
            let text: String = row.iter().map(|s| s.text.as_str()).collect();
            self.used = columns(&text);
            out.push_str(&text);
        }
    }

    /// Ends the row, and starts the next with its prefix.
    fn new_row(&mut self, ink: Ink, out: &mut String) {
        out.push('\n');
        paint_open(&self.rest, ink, out);
        self.used = 0;
    }
}
