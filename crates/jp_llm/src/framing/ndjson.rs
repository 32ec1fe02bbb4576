//! Newline-delimited JSON (Ollama's `/api/chat` stream), over [`Lines`].
//!
//! [`NdjsonSplitter`] takes the body as it arrives, split anywhere, and
//! yields each complete line once its LF has arrived, without the LF (or a
//! CR before it). Blank lines are skipped. The bytes after the last LF are
//! handed out by [`finish`](NdjsonSplitter::finish), because a server may
//! end its final line with the body instead of a newline.

use bytes::Bytes;

use super::{DEFAULT_MAX_LINE, Endings, Framing, Line, LineError, Lines, utf8};

/// Why a line cannot be handed out.
pub(crate) type NdjsonError = LineError;

/// An incremental NDJSON line splitter: [`push`](Self::push) bytes, then
/// take lines with [`next_line`](Self::next_line) until it returns `None`.
#[derive(Debug)]
pub(crate) struct NdjsonSplitter {
    lines: Lines,
    /// The line last handed out, which its text borrows.
    current: Bytes,
}

impl Default for NdjsonSplitter {
    fn default() -> Self {
        Self::new()
    }
}

impl NdjsonSplitter {
    /// A splitter with the default line limit (16 MiB).
    pub(crate) fn new() -> Self {
        Self::with_max_line(DEFAULT_MAX_LINE)
    }

    /// A splitter that rejects lines over `max_line` bytes.
    pub(crate) fn with_max_line(max_line: usize) -> Self {
        Self {
            lines: Lines::new(Endings::Lf, max_line),
            current: Bytes::new(),
        }
    }

    /// Adds the next bytes of the body.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.lines.push(bytes);
    }

    /// The next complete, non-blank line, with its number (1-based).
    pub(crate) fn next_line(&mut self) -> Option<Result<(usize, &str), NdjsonError>> {
        let line = loop {
            match self.lines.next_line()? {
                Ok(line) => {
                    if let Some(line) = content(line) {
                        break line;
                    }
                }
                Err(error) => return Some(Err(error)),
            }
        };
        Some(self.text(line))
    }

    /// The body ended: the bytes after the last LF, if they are not blank,
    /// with their line number.
    ///
    /// # Errors
    ///
    /// When those bytes are not UTF-8.
    pub(crate) fn finish(&mut self) -> Result<Option<(usize, &str)>, NdjsonError> {
        match content(self.lines.rest()) {
            Some(line) => self.text(line).map(Some),
            None => Ok(None),
        }
    }

    /// `line` as text, kept until the next line is asked for.
    fn text(&mut self, line: Line) -> Result<(usize, &str), NdjsonError> {
        self.current = line.bytes;
        utf8(&self.current, line.number).map(|text| (line.number, text))
    }
}

/// `line` without a CR at its end, unless it is blank.
fn content(line: Line) -> Option<Line> {
    let bytes = line.bytes.strip_suffix(b"\r").unwrap_or(&line.bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(Line {
        number: line.number,
        bytes: line.bytes.slice_ref(bytes),
    })
}

impl Framing for NdjsonSplitter {
    type Frame<'a> = (usize, &'a str);
    type Error = NdjsonError;

    fn push(&mut self, bytes: &[u8]) {
        self.push(bytes);
    }

    fn next_frame(&mut self) -> Option<Result<(usize, &str), NdjsonError>> {
        self.next_line()
    }

    /// The last line, if the body ended it without its newline.
    fn finish(&mut self) -> Result<Option<(usize, &str)>, NdjsonError> {
        self.finish()
    }
}

#[cfg(test)]
#[path = "ndjson_tests.rs"]
mod tests;
