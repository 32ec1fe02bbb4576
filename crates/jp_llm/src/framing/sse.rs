//! Server-sent events (`text/event-stream`), the framing of the Anthropic
//! and OpenAI-compatible streaming APIs, over [`Lines`].
//!
//! [`SseDecoder`] takes the body as it arrives, split anywhere (even inside a
//! UTF-8 character or between the CR and LF of a line ending), and yields
//! each event once its terminating blank line has arrived. It follows the
//! WHATWG "event stream interpretation" rules that matter for API streams:
//! lines end in LF, CRLF or CR; a line starting with `:` is a comment
//! (OpenRouter's `: OPENROUTER PROCESSING` keep-alives); `event` and `data`
//! are the only fields kept; several `data` lines join with LF; a leading
//! byte-order mark is dropped; an event still open when the body ends is
//! never dispatched.

use super::{DEFAULT_MAX_LINE, Endings, Framing, LineError, Lines, utf8};

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event` field, if the event had a non-empty one.
    pub(crate) event: Option<String>,
    /// The `data` lines, joined with LF.
    pub(crate) data: String,
    /// The line (1-based) of the event's first field, for messages.
    pub(crate) line: usize,
}

impl SseEvent {
    /// Names the event for an error message: ``event `ping` (line 7)``.
    pub(crate) fn describe(&self) -> String {
        match &self.event {
            Some(name) => format!("event `{name}` (line {})", self.line),
            None => format!("event at line {}", self.line),
        }
    }
}

/// Why the bytes are not an event stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SseError {
    /// A line is not UTF-8 or too long.
    #[error(transparent)]
    Line(#[from] LineError),
    /// One event's data grew past the limit.
    #[error("the event starting at line {line} has more than {limit} bytes of data")]
    EventTooLarge {
        /// The event's first line.
        line: usize,
        /// The limit.
        limit: usize,
    },
}

/// An incremental event-stream decoder: [`push`](Self::push) bytes, then
/// take events with [`next_event`](Self::next_event) until it returns
/// `None`.
#[derive(Debug)]
pub(crate) struct SseDecoder {
    lines: Lines,
    max_line: usize,
    pending: Pending,
}

/// The event being assembled.
#[derive(Debug, Default)]
struct Pending {
    event: Option<String>,
    data: String,
    has_data: bool,
    first_line: Option<usize>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder with the default line limit.
    pub(crate) fn new() -> Self {
        Self::with_max_line(DEFAULT_MAX_LINE)
    }

    /// A decoder that rejects lines (and event data) over `max_line` bytes.
    pub(crate) fn with_max_line(max_line: usize) -> Self {
        Self {
            lines: Lines::new(Endings::Any, max_line),
            max_line,
            pending: Pending::default(),
        }
    }

    /// Adds the next bytes of the body.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.lines.push(bytes);
    }

    /// The next complete event, if one has arrived.
    pub(crate) fn next_event(&mut self) -> Option<Result<SseEvent, SseError>> {
        loop {
            let line = match self.lines.next_line()? {
                Ok(line) => line,
                Err(error) => return Some(Err(error.into())),
            };
            let mut bytes = &line.bytes[..];
            if line.number == 1 {
                bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            }
            let text = match utf8(bytes, line.number) {
                Ok(text) => text,
                Err(error) => return Some(Err(error.into())),
            };
            match self.pending.take_line(text, line.number, self.max_line) {
                Ok(Some(event)) => return Some(Ok(event)),
                Ok(None) => {}
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

impl Framing for SseDecoder {
    type Frame<'a> = SseEvent;
    type Error = SseError;

    fn push(&mut self, bytes: &[u8]) {
        self.push(bytes);
    }

    fn next_frame(&mut self) -> Option<Result<SseEvent, SseError>> {
        self.next_event()
    }

    /// An event still open when the body ends is never dispatched.
    fn finish(&mut self) -> Result<Option<SseEvent>, SseError> {
        Ok(None)
    }
}

impl Pending {
    /// Interprets one line; returns the event a blank line completes.
    fn take_line(
        &mut self,
        line: &str,
        line_no: usize,
        limit: usize,
    ) -> Result<Option<SseEvent>, SseError> {
        if line.is_empty() {
            let first_line = self.first_line.take();
            let event = self.event.take();
            if !std::mem::take(&mut self.has_data) {
                // An event without data is not dispatched (the spec's
                // "empty data buffer" rule).
                return Ok(None);
            }
            return Ok(Some(SseEvent {
                event,
                data: std::mem::take(&mut self.data),
                line: first_line.unwrap_or(line_no),
            }));
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => {
                self.first_line.get_or_insert(line_no);
                self.event = (!value.is_empty()).then(|| value.to_owned());
            }
            "data" => {
                let first_line = *self.first_line.get_or_insert(line_no);
                if self.data.len() + value.len() + 1 > limit {
                    return Err(SseError::EventTooLarge {
                        line: first_line,
                        limit,
                    });
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // `id`, `retry` and unknown fields mean nothing to an API
            // stream.
            _ => {}
        }
        Ok(None)
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
