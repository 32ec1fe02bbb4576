//! Framing a streamed body: one line splitter, with the two framings the
//! providers speak built over it.
//!
//! - [`sse`]: server-sent events (`text/event-stream`), the Anthropic and
//!   OpenAI-compatible streams;
//! - [`ndjson`]: newline-delimited JSON, Ollama's `/api/chat` stream.
//!
//! [`Lines`] takes the body as it arrives, split anywhere (even inside a
//! UTF-8 character or between the CR and LF of a line ending), and hands
//! out each complete line once its ending has arrived. The splitting and
//! the length cap are `tokio_util`'s [`AnyDelimiterCodec`]; the line
//! endings an event stream allows besides LF (a CR, or CRLF, even split
//! between two pieces) are turned into one LF as the bytes come in.
//!
//! A [`Framing`] is what a decoder reads frames from; the decoders built on
//! one are [`FramedDecoder`](crate::decode::FramedDecoder)s.

use bytes::{BufMut as _, Bytes, BytesMut};
use tokio_util::codec::Decoder as _;
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError};

pub(crate) mod ndjson;
pub(crate) mod sse;

/// The longest line, and the most data in one event, the decoders accept:
/// far beyond any real provider event, small enough that a server that
/// never ends a line cannot exhaust memory.
pub(crate) const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

/// A body cut into frames (events, lines), incrementally: [`push`] bytes,
/// then take frames with [`next_frame`] until it returns `None`.
///
/// [`push`]: Framing::push
/// [`next_frame`]: Framing::next_frame
pub(crate) trait Framing: Default + Send {
    /// One frame; it may borrow the framing until the next call.
    type Frame<'a>
    where
        Self: 'a;

    /// Why the bytes cannot be framed.
    type Error: std::fmt::Display;

    /// Adds the next bytes of the body.
    fn push(&mut self, bytes: &[u8]);

    /// The next complete frame, if one has arrived.
    fn next_frame(&mut self) -> Option<Result<Self::Frame<'_>, Self::Error>>;

    /// The body ended: the frame its last bytes make, if the framing lets
    /// a body end without a frame's terminator.
    ///
    /// # Errors
    ///
    /// When those bytes cannot be a frame.
    fn finish(&mut self) -> Result<Option<Self::Frame<'_>>, Self::Error>;
}

/// Which bytes end a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endings {
    /// LF only; a CR before it stays part of the line (NDJSON).
    Lf,
    /// LF, CR or CRLF (server-sent events).
    Any,
}

/// Why a line cannot be handed out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LineError {
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

/// One complete line, without its ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    /// The line's number (1-based), counting every line ending.
    pub(crate) number: usize,
    /// Its bytes.
    pub(crate) bytes: Bytes,
}

/// An incremental line splitter: [`push`](Self::push) bytes, then take
/// lines with [`next_line`](Self::next_line) until it returns `None`.
#[derive(Debug)]
pub(crate) struct Lines {
    /// Finds the line ends in `buf` and enforces the length cap.
    codec: AnyDelimiterCodec,
    /// Received bytes not yet handed out as lines, endings made LF.
    buf: BytesMut,
    endings: Endings,
    /// The last byte pushed was a CR ([`Endings::Any`]): a LF that follows
    /// belongs to that ending.
    after_cr: bool,
    /// Complete lines so far.
    lines: usize,
    max_line: usize,
    /// The error that stopped the splitting, returned from then on.
    failed: Option<LineError>,
}

impl Lines {
    /// A splitter of lines ending in `endings` that rejects lines over
    /// `max_line` bytes (a CR that [`Endings::Lf`] keeps counts).
    pub(crate) fn new(endings: Endings, max_line: usize) -> Self {
        Self {
            codec: AnyDelimiterCodec::new_with_max_length(vec![b'\n'], Vec::new(), max_line),
            buf: BytesMut::new(),
            endings,
            after_cr: false,
            lines: 0,
            max_line,
            failed: None,
        }
    }

    /// Adds the next bytes of the body.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if self.endings == Endings::Lf {
            self.buf.extend_from_slice(bytes);
            return;
        }
        let mut rest = bytes;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            rest = rest.strip_prefix(b"\n").unwrap_or(rest);
        }
        while let Some(cr) = rest.iter().position(|&b| b == b'\r') {
            self.buf.extend_from_slice(&rest[..cr]);
            self.buf.put_u8(b'\n');
            rest = &rest[cr + 1..];
            if rest.is_empty() {
                self.after_cr = true;
            }
            rest = rest.strip_prefix(b"\n").unwrap_or(rest);
        }
        self.buf.extend_from_slice(rest);
    }

    /// The next complete line, if one has arrived.
    pub(crate) fn next_line(&mut self) -> Option<Result<Line, LineError>> {
        if let Some(error) = &self.failed {
            return Some(Err(error.clone()));
        }
        match self.codec.decode(&mut self.buf) {
            Ok(Some(bytes)) => {
                self.lines += 1;
                Some(Ok(Line {
                    number: self.lines,
                    bytes,
                }))
            }
            Ok(None) => None,
            // The length cap is the only error decoding can meet.
            Err(AnyDelimiterCodecError::MaxChunkLengthExceeded | AnyDelimiterCodecError::Io(_)) => {
                let error = LineError::LineTooLong {
                    line: self.lines + 1,
                    limit: self.max_line,
                };
                self.failed = Some(error.clone());
                Some(Err(error))
            }
        }
    }

    /// The body ended: the bytes after the last line ending, numbered as
    /// the next line.
    pub(crate) fn rest(&mut self) -> Line {
        Line {
            number: self.lines + 1,
            bytes: self.buf.split().freeze(),
        }
    }
}

/// `bytes` of line `line` as text.
///
/// # Errors
///
/// [`LineError::InvalidUtf8`], naming the line and showing its start.
pub(crate) fn utf8(bytes: &[u8], line: usize) -> Result<&str, LineError> {
    std::str::from_utf8(bytes).map_err(|error| LineError::InvalidUtf8 {
        line,
        reason: error.to_string(),
        excerpt: excerpt(&String::from_utf8_lossy(bytes)),
    })
}

/// How many characters of bytes jp could not read an error quotes.
pub(crate) const EXCERPT_CHARS: usize = 60;

/// The start of `text` (bytes jp could not read: a provider's event, a
/// tool's stdout, a server's line) for an error message: at most
/// [`EXCERPT_CHARS`] characters between backticks, every control, format
/// character and backslash escaped as Rust writes them (`\n`, `\u{1b}`,
/// `\\`), marked with `…` when cut. An error never shows more of what
/// it could not read (a file named as a recording could be any file;
/// issue 34).
pub(crate) fn excerpt(text: &str) -> String {
    let mut chars = text.chars();
    let mut out = String::from("`");
    for c in chars.by_ref().take(EXCERPT_CHARS) {
        match c {
            // Quotes are shown as they are: JSON reads better so.
            '"' | '\'' => out.push(c),
            _ => out.extend(c.escape_debug()),
        }
    }
    out.push('`');
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
#[path = "framing_tests.rs"]
mod tests;
