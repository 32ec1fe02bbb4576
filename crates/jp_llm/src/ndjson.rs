//! Incremental splitting of newline-delimited JSON (Ollama's `/api/chat`
//! stream) into lines.
//!
//! [`NdjsonSplitter`] takes the body as it arrives, split anywhere, and
//! yields each complete line once its LF has arrived, without the LF (or a
//! CR before it). Blank lines are skipped. The bytes after the last LF are
//! handed out by [`finish`](NdjsonSplitter::finish), because a server may
//! end its final line with the body instead of a newline.

use crate::sse::excerpt;

/// Why a line cannot be handed out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NdjsonError {
    /// A complete line is not UTF-8.
    #[error("line {line} is not valid UTF-8 ({reason}): {excerpt}")]
    InvalidUtf8 {
        /// The line (1-based).
        line: usize,
        /// What `std::str::from_utf8` said.
        reason: String,
        /// The line's start, invalid bytes replaced.
        excerpt: String,
    },
    /// A line grew past the limit without ending.
    #[error("line {line} is longer than the limit of {limit} bytes")]
    LineTooLong {
        /// The line (1-based).
        line: usize,
        /// The limit.
        limit: usize,
    },
}

/// An incremental NDJSON line splitter: [`push`](Self::push) bytes, then
/// take lines with [`next_line`](Self::next_line) until it returns `None`.
#[derive(Debug)]
pub(crate) struct NdjsonSplitter {
    /// Received bytes; `buf[pos..]` is not yet handed out.
    buf: Vec<u8>,
    pos: usize,
    /// How many pending bytes were already searched for a LF.
    scanned: usize,
    /// Lines ended so far (blank ones included), for messages.
    lines: usize,
    max_line: usize,
}

impl Default for NdjsonSplitter {
    fn default() -> Self {
        Self::new()
    }
}

impl NdjsonSplitter {
    /// A splitter with the default line limit (16 MiB).
    pub(crate) fn new() -> Self {
        Self::with_max_line(crate::sse::DEFAULT_MAX_LINE)
    }

    /// A splitter that rejects lines over `max_line` bytes.
    pub(crate) fn with_max_line(max_line: usize) -> Self {
        Self {
            buf: Vec::new(),
            pos: 0,
            scanned: 0,
            lines: 0,
            max_line,
        }
    }

    /// Adds the next bytes of the body.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 && self.pos >= self.buf.len() / 2 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete, non-blank line, with its number (1-based).
    pub(crate) fn next_line(&mut self) -> Option<Result<(usize, &str), NdjsonError>> {
        loop {
            let start = self.pos;
            let search_from = start + self.scanned;
            let Some(offset) = self.buf[search_from..].iter().position(|&b| b == b'\n') else {
                self.scanned = self.buf.len() - start;
                if self.scanned > self.max_line {
                    return Some(Err(NdjsonError::LineTooLong {
                        line: self.lines + 1,
                        limit: self.max_line,
                    }));
                }
                return None;
            };
            let end = search_from + offset;
            self.pos = end + 1;
            self.scanned = 0;
            self.lines += 1;
            if end - start > self.max_line {
                return Some(Err(NdjsonError::LineTooLong {
                    line: self.lines,
                    limit: self.max_line,
                }));
            }
            let bytes = &self.buf[start..end];
            let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Some(to_str(bytes, self.lines).map(|line| (self.lines, line)));
        }
    }

    /// The body ended: the bytes after the last LF, if they are not blank,
    /// with their line number.
    ///
    /// # Errors
    ///
    /// When those bytes are not UTF-8.
    pub(crate) fn finish(&mut self) -> Result<Option<(usize, &str)>, NdjsonError> {
        let bytes = &self.buf[self.pos..];
        self.pos = self.buf.len();
        self.scanned = 0;
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        self.lines += 1;
        to_str(bytes, self.lines).map(|line| Some((self.lines, line)))
    }
}

fn to_str(bytes: &[u8], line: usize) -> Result<&str, NdjsonError> {
    std::str::from_utf8(bytes).map_err(|error| NdjsonError::InvalidUtf8 {
        line,
        reason: error.to_string(),
        excerpt: excerpt(&String::from_utf8_lossy(bytes)),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// Numbered lines and the remainder.
    type Split = (Vec<(usize, String)>, Option<String>);

    /// The lines of `input` fed in pieces of `size` bytes, with their line
    /// numbers, then the remainder.
    fn split_in(input: &[u8], size: usize) -> Result<Split, NdjsonError> {
        let mut splitter = NdjsonSplitter::new();
        let mut lines = Vec::new();
        for piece in input.chunks(size.max(1)) {
            splitter.push(piece);
            while let Some(line) = splitter.next_line() {
                let (number, line) = line?;
                lines.push((number, line.to_owned()));
            }
        }
        let rest = splitter.finish()?.map(|(_, line)| line.to_owned());
        Ok((lines, rest))
    }

    fn split(input: &[u8]) -> Result<Split, NdjsonError> {
        let whole = split_in(input, input.len());
        for size in 1..input.len() {
            assert_eq!(split_in(input, size), whole, "pieces of {size} bytes");
        }
        whole
    }

    #[test]
    fn lines_blank_lines_crlf_and_utf8_split_anywhere() {
        let input = "{\"a\":1}\n\n  \r\n{\"b\":\"\u{1f60a}\"}\r\n{\"c\":3}".as_bytes();
        assert_eq!(
            split(input).unwrap(),
            (
                vec![
                    (1, "{\"a\":1}".to_owned()),
                    (4, "{\"b\":\"\u{1f60a}\"}".to_owned()),
                ],
                Some("{\"c\":3}".to_owned())
            )
        );
    }

    #[test]
    fn a_blank_remainder_is_nothing() {
        assert_eq!(
            split(b"{}\n \n").unwrap(),
            (vec![(1, "{}".to_owned())], None)
        );
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        assert_eq!(
            split(b"{}\n{\"x\":\"\xc3\x28\"}\n")
                .unwrap_err()
                .to_string(),
            "line 2 is not valid UTF-8 (invalid utf-8 sequence of 1 bytes from index 6): \
             {\"x\":\"\u{fffd}(\"}"
        );
    }

    #[test]
    fn a_line_over_the_limit_is_an_error() {
        let mut splitter = NdjsonSplitter::with_max_line(4);
        splitter.push(b"1234\n12345");
        assert_eq!(splitter.next_line(), Some(Ok((1, "1234"))));
        assert_eq!(
            splitter.next_line(),
            Some(Err(NdjsonError::LineTooLong { line: 2, limit: 4 }))
        );
    }
}
