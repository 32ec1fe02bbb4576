//! Incremental decoding of server-sent events (`text/event-stream`), the
//! framing of the Anthropic and OpenAI-compatible streaming APIs.
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
//!
//! This module also holds the two helpers every wire decoder shares:
//! [`excerpt`] for error messages and [`Latch`] for returning the events
//! decoded before an error.

use crate::error::ProviderError;
use crate::provider::StreamEvent;

/// The longest line, and the most data in one event, the decoders accept:
/// far beyond any real provider event, small enough that a server that
/// never ends a line cannot exhaust memory.
pub(crate) const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

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
    /// Received bytes not yet consumed as lines; `buf[pos..]` is pending.
    buf: Vec<u8>,
    pos: usize,
    /// How many pending bytes were already searched for a line end, so
    /// byte-at-a-time input is not rescanned quadratically.
    scanned: usize,
    /// The last line ended in CR: a LF that follows belongs to that ending.
    after_cr: bool,
    /// Complete lines so far.
    lines: usize,
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
            buf: Vec::new(),
            pos: 0,
            scanned: 0,
            after_cr: false,
            lines: 0,
            max_line,
            pending: Pending::default(),
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

    /// The next complete event, if one has arrived.
    pub(crate) fn next_event(&mut self) -> Option<Result<SseEvent, SseError>> {
        loop {
            let (start, end) = match self.next_line()? {
                Ok(range) => range,
                Err(error) => return Some(Err(error)),
            };
            let line_no = self.lines;
            let mut bytes = &self.buf[start..end];
            if line_no == 1 {
                bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            }
            let line = match std::str::from_utf8(bytes) {
                Ok(line) => line,
                Err(error) => {
                    return Some(Err(SseError::InvalidUtf8 {
                        line: line_no,
                        reason: error.to_string(),
                        excerpt: excerpt(&String::from_utf8_lossy(bytes)),
                    }));
                }
            };
            match self.pending.take_line(line, line_no, self.max_line) {
                Ok(Some(event)) => return Some(Ok(event)),
                Ok(None) => {}
                Err(error) => return Some(Err(error)),
            }
        }
    }

    /// The byte range of the next complete line, without its ending.
    fn next_line(&mut self) -> Option<Result<(usize, usize), SseError>> {
        if self.after_cr {
            match self.buf.get(self.pos) {
                None => return None,
                Some(b'\n') => self.pos += 1,
                Some(_) => {}
            }
            self.after_cr = false;
        }
        let start = self.pos;
        let search_from = start + self.scanned;
        match self.buf[search_from..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        {
            Some(offset) => {
                let end = search_from + offset;
                if end - start > self.max_line {
                    return Some(Err(self.too_long()));
                }
                self.after_cr = self.buf[end] == b'\r';
                self.pos = end + 1;
                self.scanned = 0;
                self.lines += 1;
                Some(Ok((start, end)))
            }
            None => {
                self.scanned = self.buf.len() - start;
                if self.scanned > self.max_line {
                    return Some(Err(self.too_long()));
                }
                None
            }
        }
    }

    fn too_long(&self) -> SseError {
        SseError::LineTooLong {
            line: self.lines + 1,
            limit: self.max_line,
        }
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

/// The start of `text` for an error message: at most 120 characters,
/// marked with `…` when cut.
pub(crate) fn excerpt(text: &str) -> String {
    const MAX_CHARS: usize = 120;
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Holds a decoder's first error so that the events decoded before it in
/// the same bytes are not lost.
///
/// A decoder that fails halfway through a chunk returns the events before
/// the failure as `Ok`, and the error from its next call (a `feed` of any
/// bytes, even none, or `finish`); every later call returns the error
/// again. The events a stream produces are then the same however its
/// bytes were split.
#[derive(Debug, Default)]
pub(crate) struct Latch {
    error: Option<ProviderError>,
}

impl Latch {
    /// Runs one decoding step that appends to a fresh list of events.
    pub(crate) fn run(
        &mut self,
        step: impl FnOnce(&mut Vec<StreamEvent>) -> Result<(), ProviderError>,
    ) -> Result<Vec<StreamEvent>, ProviderError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        let mut events = Vec::new();
        match step(&mut events) {
            Ok(()) => Ok(events),
            Err(error) => {
                self.error = Some(error.clone());
                if events.is_empty() {
                    Err(error)
                } else {
                    Ok(events)
                }
            }
        }
    }
}

/// Helpers for the decoders' tests: feed recorded bodies at many split
/// patterns and assemble the events the way jp does.
#[cfg(test)]
pub(crate) mod test_support {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use jp_conversation::{EventBuilder, FlushedEvent};

    use crate::error::ProviderError;
    use crate::provider::{StreamEvent, WireDecoder};

    /// The events of `body` fed to a fresh decoder in pieces of the sizes in
    /// `sizes` (cycled), then finished, and the error that stopped it.
    pub(crate) fn decode_in<D: WireDecoder>(
        make: &impl Fn() -> D,
        body: &[u8],
        sizes: &[usize],
    ) -> (Vec<StreamEvent>, Option<ProviderError>) {
        let mut decoder = make();
        let mut events = Vec::new();
        let mut rest = body;
        let mut sizes = sizes.iter().copied().cycle();
        while !rest.is_empty() {
            let size = sizes.next().unwrap_or(1).clamp(1, rest.len());
            let (piece, tail) = rest.split_at(size);
            rest = tail;
            match decoder.feed(piece) {
                Ok(more) => events.extend(more),
                Err(error) => return (events, Some(error)),
            }
        }
        match decoder.finish() {
            Ok(more) => {
                events.extend(more);
                (events, None)
            }
            Err(error) => (events, Some(error)),
        }
    }

    /// The split patterns every recorded body is fed at: whole, byte by
    /// byte, fixed sizes and irregular ones.
    pub(crate) const SPLITS: &[&[usize]] = &[
        &[usize::MAX],
        &[1],
        &[2],
        &[3],
        &[7],
        &[64],
        &[1, 2, 3, 5, 8, 13, 21],
        &[17, 1, 1, 250, 4],
    ];

    /// The events of `body` (and the error that ended them), after
    /// checking that every pattern in [`SPLITS`] gives the same.
    pub(crate) fn decode<D: WireDecoder>(
        make: impl Fn() -> D,
        body: &[u8],
    ) -> (Vec<StreamEvent>, Option<ProviderError>) {
        let whole = decode_in(&make, body, SPLITS[0]);
        for sizes in &SPLITS[1..] {
            assert_eq!(
                decode_in(&make, body, sizes),
                whole,
                "split into pieces of {sizes:?}"
            );
        }
        whole
    }

    /// Feeds `events` to an [`EventBuilder`] as jp does and returns what
    /// the flushes produced, in order. Asserts every flush ends an item and
    /// nothing is left open.
    pub(crate) fn build(events: &[StreamEvent]) -> Vec<FlushedEvent> {
        let mut builder = EventBuilder::new();
        let mut flushed = Vec::new();
        for event in events {
            match event {
                StreamEvent::Part { index, part } => {
                    builder.handle_part(*index, part.clone()).unwrap();
                }
                StreamEvent::Flush { index } => {
                    let item = builder.handle_flush(*index);
                    flushed.push(item.unwrap_or_else(|| panic!("flush of empty index {index}")));
                }
                _ => {}
            }
        }
        assert!(builder.is_empty(), "indexes left open: {builder:?}");
        flushed
    }

    /// The response bodies of a shared fixture file, in order.
    pub(crate) fn fixture_bodies(name: &str) -> Vec<Vec<u8>> {
        jp_test_server::load_fixtures(jp_test_server::shared_fixture(name))
            .unwrap()
            .into_iter()
            .map(|fixture| fixture.body)
            .collect()
    }

    /// The request bodies of a shared fixture file, in order.
    pub(crate) fn fixture_requests(name: &str) -> Vec<serde_json::Value> {
        jp_test_server::load_fixtures(jp_test_server::shared_fixture(name))
            .unwrap()
            .into_iter()
            .map(|fixture| fixture.request_body.unwrap())
            .collect()
    }

    /// Parts at `index` with each of `texts` built by `make`.
    pub(crate) fn parts(
        index: usize,
        texts: &[&str],
        make: impl Fn(String) -> jp_conversation::EventPart,
    ) -> Vec<StreamEvent> {
        texts
            .iter()
            .map(|text| StreamEvent::Part {
                index,
                part: make((*text).to_owned()),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// Decodes `input` fed in pieces of `size` bytes.
    fn decode_in(input: &[u8], size: usize) -> Result<Vec<SseEvent>, SseError> {
        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        for piece in input.chunks(size.max(1)) {
            decoder.push(piece);
            while let Some(event) = decoder.next_event() {
                events.push(event?);
            }
        }
        Ok(events)
    }

    /// Decodes `input` at every piece size up to its length, checks every
    /// size agrees, and returns the result.
    fn decode(input: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let whole = decode_in(input, input.len());
        for size in 1..input.len() {
            assert_eq!(decode_in(input, size), whole, "pieces of {size} bytes");
        }
        whole
    }

    fn event(event: Option<&str>, data: &str, line: usize) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
            line,
        }
    }

    #[test]
    fn events_with_names_data_and_comments() {
        let input = b": keep-alive\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\ndata:[DONE]\n\n";
        assert_eq!(
            decode(input).unwrap(),
            vec![
                event(Some("ping"), "{\"type\": \"ping\"}", 3),
                event(None, "[DONE]", 6),
            ]
        );
    }

    #[test]
    fn every_line_ending_and_a_split_crlf() {
        let input = b"data: a\r\n\r\ndata: b\r\rdata: c\n\n";
        assert_eq!(
            decode(input).unwrap(),
            vec![
                event(None, "a", 1),
                event(None, "b", 3),
                event(None, "c", 5)
            ]
        );
    }

    #[test]
    fn data_lines_join_and_only_one_space_is_stripped() {
        let input = b"data: one\ndata:  two\ndata\nid: 7\nretry: 10\nfoo: bar\n\n";
        assert_eq!(decode(input).unwrap(), vec![event(None, "one\n two\n", 1)]);
    }

    #[test]
    fn an_event_without_data_is_not_dispatched_and_its_name_is_reset() {
        let input = b"event: orphan\n\ndata: x\n\nevent:\ndata: y\n\n";
        assert_eq!(
            decode(input).unwrap(),
            vec![event(None, "x", 3), event(None, "y", 5)]
        );
    }

    #[test]
    fn empty_data_is_still_an_event() {
        assert_eq!(decode(b"data:\n\n").unwrap(), vec![event(None, "", 1)]);
    }

    #[test]
    fn utf8_split_anywhere_and_a_leading_bom() {
        let input = "\u{feff}data: h\u{e9}llo \u{1f60a}\n\n".as_bytes();
        assert_eq!(
            decode(input).unwrap(),
            vec![event(None, "h\u{e9}llo \u{1f60a}", 1)]
        );
    }

    #[test]
    fn an_unfinished_event_is_not_dispatched() {
        assert_eq!(
            decode(b"data: a\n\ndata: b\n").unwrap(),
            vec![event(None, "a", 1)]
        );
        assert_eq!(decode(b"data: a").unwrap(), vec![]);
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let error = decode(b"data: ok\n\ndata: \xff\xfe bad\n\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "line 3 is not valid UTF-8 (invalid utf-8 sequence of 1 bytes from index 6): \
             data: \u{fffd}\u{fffd} bad"
        );
    }

    #[test]
    fn a_line_over_the_limit_is_an_error_even_unterminated() {
        let mut decoder = SseDecoder::with_max_line(10);
        decoder.push(b"data: 1\n\ndata: 123");
        assert_eq!(decoder.next_event(), Some(Ok(event(None, "1", 1))));
        assert_eq!(decoder.next_event(), None);
        decoder.push(b"45");
        assert_eq!(
            decoder.next_event(),
            Some(Err(SseError::LineTooLong { line: 3, limit: 10 }))
        );
        assert_eq!(
            SseError::LineTooLong { line: 3, limit: 10 }.to_string(),
            "line 3 is longer than the limit of 10 bytes"
        );
    }

    #[test]
    fn event_data_over_the_limit_is_an_error() {
        let mut decoder = SseDecoder::with_max_line(12);
        decoder.push(b"data:123456\ndata:123456\n\n");
        assert_eq!(
            decoder.next_event(),
            Some(Err(SseError::EventTooLarge { line: 1, limit: 12 }))
        );
    }

    #[test]
    fn excerpt_cuts_at_a_character_boundary() {
        let long = "\u{e9}".repeat(130);
        assert_eq!(excerpt(&long), format!("{}…", "\u{e9}".repeat(120)));
        assert_eq!(excerpt("short"), "short");
    }

    #[test]
    fn latch_returns_events_before_an_error_then_the_error() {
        let error = ProviderError::Config("boom".into());
        let mut latch = Latch::default();
        let first = latch.run(|events| {
            events.push(StreamEvent::Notice("before".into()));
            Err(error.clone())
        });
        assert_eq!(first, Ok(vec![StreamEvent::Notice("before".into())]));
        assert_eq!(latch.run(|_| Ok(())), Err(error.clone()));
        assert_eq!(latch.run(|_| Ok(())), Err(error));
    }
}
