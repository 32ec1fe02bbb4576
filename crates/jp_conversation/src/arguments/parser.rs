//! [`IncrementalArgParser`]: a push parser that turns JSON text, split into
//! chunks anywhere, into [`StreamFragment`]s (RFD 043, phase 2).
//!
//! The parser is an explicit state machine over bytes. Open arrays and objects
//! live on a heap-allocated stack bounded by [`ParserLimits::max_depth`], so
//! input depth never turns into call-stack depth. Its state does not grow with
//! the length of a string: decoded text is handed out at the end of every
//! push, and only an escape sequence cut in half (at most a few bytes) is
//! carried over to the next one. The one thing held whole is a number's text
//! (until the number ends), which [`ParserLimits::max_size`] bounds.

use super::error::{ArgParseError, Found, Limit, TruncatedIn};
use std::sync::atomic::{AtomicU64, Ordering};

use super::fragment::{
    EmptyKind, FragmentPath, FragmentRef, Leaf, PathSegment, Scalar, StreamFragment, StringId,
};
use super::lexical::{
    Escape, Literal, NumberState, STRING_SPECIAL, abbreviate, hex_value, is_whitespace, skip_plain,
    whole_escape,
};
pub use super::limits::ParserLimits;
use super::pointer::JsonPointer;
use super::state::{State, Step};

/// Parses tool-call argument JSON as it streams in.
///
/// Feed it text with [`push`](Self::push) in chunks split anywhere (inside
/// keys, escapes, numbers, literals) and call [`finish`](Self::finish) when
/// the input ends. Each call returns the [`StreamFragment`]s that became
/// known:
///
/// - a string value yields at most one `String` fragment per push with the
///   text decoded in that push, never an empty one;
/// - a key is reported only once complete, as part of its value's first
///   fragment;
/// - a number or literal is reported once the character after it arrives
///   (`12` then `3` is one `123`); a scalar at the root is reported by
///   `finish`;
/// - every value ends with exactly one `Done`, the root's being the last.
///
/// The root's `Done` does not mean the input was accepted: trailing garbage
/// after the root (`{} x`) is still an error. Only a successful `finish`
/// says the whole input was valid.
///
/// ```
/// use jp_conversation::{IncrementalArgParser, StreamFragment};
///
/// let mut parser = IncrementalArgParser::new();
/// let mut fragments = parser.push(r#"{"path":"src/ma"#).unwrap();
/// fragments.extend(parser.push(r#"in.rs"}"#).unwrap());
/// fragments.extend(parser.finish().unwrap());
///
/// let chunk = |s: &str| StreamFragment::String(s.into()).in_object("path");
/// assert_eq!(fragments, vec![
///     chunk("src/ma"),
///     chunk("in.rs"),
///     StreamFragment::Done.in_object("path"),
///     StreamFragment::Done,
/// ]);
/// ```
#[derive(Debug)]
pub struct IncrementalArgParser {
    limits: ParserLimits,
    /// Open arrays and objects, outermost first.
    stack: Vec<Frame>,
    state: State,
    /// Progress inside an escape sequence of the current string or key.
    escape: Escape,
    /// Bytes accepted by earlier pushes.
    offset: usize,
    /// Decoded text of the current string value not yet handed out.
    pending: String,
    /// Whether the current string value has produced a fragment yet.
    string_started: bool,
    /// The current (or last) string value, for its fragments: the
    /// aggregator appends a fragment of the string it appended to last
    /// without walking the path again.
    string_id: StringId,
    /// The object key being read.
    key: String,
    /// Source text of the number being read.
    number: String,
    /// Offset of the first byte of `number`.
    number_offset: usize,
    /// A complete scalar at the root, held back until `finish`.
    root_scalar: Option<Scalar>,
    /// Whether any non-whitespace input has arrived.
    started: bool,
    failed: Option<ArgParseError>,
    finished: bool,
}

/// An open array or object. Fragments borrow their path from the stack of
/// these (see [`FragmentPath`]).
#[derive(Debug)]
pub(crate) struct Frame {
    /// How many items (arrays) or entries (objects) have begun.
    count: usize,
    /// The key of the current entry; `None` for arrays.
    key: Option<String>,
}

impl Frame {
    fn is_object(&self) -> bool {
        self.key.is_some()
    }

    /// The step into the value open inside this container.
    pub(crate) fn segment(&self) -> PathSegment<'_> {
        match &self.key {
            Some(key) => PathSegment::Key(key),
            None => PathSegment::Index(self.count.saturating_sub(1)),
        }
    }
}

/// Where the parser hands its fragments.
type Sink<'s> = dyn FnMut(FragmentRef<'_>) + 's;

impl Default for IncrementalArgParser {
    fn default() -> Self {
        Self::new()
    }
}

impl IncrementalArgParser {
    /// A parser with the default [`ParserLimits`].
    #[must_use]
    pub fn new() -> Self {
        Self::with_limits(ParserLimits::default())
    }

    /// A parser with the given limits.
    #[must_use]
    pub fn with_limits(limits: ParserLimits) -> Self {
        Self {
            limits,
            stack: Vec::new(),
            state: State::Value,
            escape: Escape::None,
            offset: 0,
            pending: String::new(),
            string_started: false,
            string_id: StringId {
                parser: next_parser_id(),
                serial: 0,
            },
            key: String::new(),
            number: String::new(),
            number_offset: 0,
            root_scalar: None,
            started: false,
            failed: None,
            finished: false,
        }
    }

    /// The limits this parser enforces.
    #[must_use]
    pub fn limits(&self) -> ParserLimits {
        self.limits
    }

    /// Bytes accepted so far.
    #[must_use]
    pub fn bytes_consumed(&self) -> usize {
        self.offset
    }

    /// The error the parser failed with, if it failed.
    #[must_use]
    pub fn error(&self) -> Option<&ArgParseError> {
        self.failed.as_ref()
    }

    /// Whether anything but whitespace has arrived.
    #[must_use]
    pub fn has_started(&self) -> bool {
        self.started
    }

    /// Feeds the next chunk of JSON text and returns the fragments it
    /// completed.
    ///
    /// Each fragment owns its whole path, so a chunk of many small values
    /// nested deep costs far more memory than its text; jp itself uses
    /// [`push_with`](Self::push_with), which emits the same fragments
    /// without copying anything.
    ///
    /// # Errors
    ///
    /// An [`ArgParseError`] when the text so far is not a prefix of valid JSON
    /// or exceeds a limit. The parser then stays failed.
    pub fn push(&mut self, chunk: &str) -> Result<Vec<StreamFragment>, ArgParseError> {
        let mut out = Vec::new();
        self.push_with(chunk, |fragment| out.push(fragment.to_fragment()))?;
        Ok(out)
    }

    /// Feeds the next chunk of JSON text and hands each fragment it
    /// completed to `visit`, in order: the fragments [`push`](Self::push)
    /// returns, borrowed from the parser instead of owned, so memory stays
    /// proportional to the input and the nesting depth, never to their
    /// product (issue 14).
    ///
    /// ```
    /// use jp_conversation::IncrementalArgParser;
    ///
    /// let mut parser = IncrementalArgParser::new();
    /// let mut lines = Vec::new();
    /// parser.push_with(r#"{"a":[true,"x"]}"#, |f| lines.push(f.to_string())).unwrap();
    /// assert_eq!(lines, [
    ///     "/a/0 = true", "/a/0: done", "/a/1 += \"x\"", "/a/1: done", "/a: done",
    ///     "(root): done",
    /// ]);
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`push`](Self::push). The fragments before the error in this
    /// chunk have been handed to `visit` by then.
    pub fn push_with(
        &mut self,
        chunk: &str,
        mut visit: impl FnMut(FragmentRef<'_>),
    ) -> Result<(), ArgParseError> {
        if self.continues_string(chunk) {
            // The fast path for a long argument streamed a few characters at
            // a time: what `run` would do with this chunk, minus the state
            // dispatch and the checks that cannot fire.
            if !chunk.is_empty() {
                visit(FragmentRef::string(
                    FragmentPath::frames(&self.stack),
                    chunk,
                    self.string_id,
                ));
                self.string_started = true;
            }
            self.offset += chunk.len();
            return Ok(());
        }
        self.check_usable()?;
        match self.run(chunk, &mut visit) {
            Ok(()) => {
                self.offset += chunk.len();
                Ok(())
            }
            Err(error) => Err(self.fail(error)),
        }
    }

    /// Ends the input and returns the last fragments (a root scalar and its
    /// `Done`, if the root is a scalar).
    ///
    /// # Errors
    ///
    /// [`ArgParseError::Truncated`] when the input stopped inside a value,
    /// naming where; the parser's earlier error if it had failed.
    pub fn finish(&mut self) -> Result<Vec<StreamFragment>, ArgParseError> {
        let mut out = Vec::new();
        self.finish_with(|fragment| out.push(fragment.to_fragment()))?;
        Ok(out)
    }

    /// [`finish`](Self::finish), handing the last fragments to `visit`.
    ///
    /// # Errors
    ///
    /// As for [`finish`](Self::finish).
    pub fn finish_with(
        &mut self,
        mut visit: impl FnMut(FragmentRef<'_>),
    ) -> Result<(), ArgParseError> {
        self.check_usable()?;
        match self.finish_inner(&mut visit) {
            Ok(()) => {
                self.finished = true;
                Ok(())
            }
            Err(error) => Err(self.fail(error)),
        }
    }

    /// Whether `chunk` is nothing but more plain text of the open string
    /// (no quote, backslash or control byte; within the size limit) with
    /// nothing of it held back, in a parser that has neither failed nor
    /// finished: then the chunk is exactly this push's text of the string.
    #[inline]
    fn continues_string(&self, chunk: &str) -> bool {
        self.state == State::InString
            && self.escape == Escape::None
            && self.pending.is_empty()
            && self.failed.is_none()
            && !self.finished
            && chunk.len() <= self.limits.max_size.saturating_sub(self.offset)
            && skip_plain(chunk.as_bytes(), 0) == chunk.len()
    }

    fn check_usable(&self) -> Result<(), ArgParseError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        if self.finished {
            return Err(ArgParseError::AlreadyFinished);
        }
        Ok(())
    }

    fn fail(&mut self, error: ArgParseError) -> ArgParseError {
        self.failed = Some(error.clone());
        error
    }

    fn finish_inner(&mut self, out: &mut Sink<'_>) -> Result<(), ArgParseError> {
        match self.state {
            State::End => {
                if let Some(scalar) = self.root_scalar.take() {
                    self.emit(Leaf::Scalar(&scalar), out);
                    self.emit(Leaf::Done, out);
                }
                Ok(())
            }
            State::Number(number) if self.stack.is_empty() && number.is_complete() => {
                let scalar = self.take_number()?;
                self.emit(Leaf::Scalar(&scalar), out);
                self.emit(Leaf::Done, out);
                Ok(())
            }
            State::Literal { literal, matched }
                if self.stack.is_empty() && usize::from(matched) == literal.text().len() =>
            {
                self.emit(Leaf::Scalar(&literal.scalar()), out);
                self.emit(Leaf::Done, out);
                Ok(())
            }
            _ => Err(self.truncated()),
        }
    }

    /// Describes where the input stopped.
    fn truncated(&self) -> ArgParseError {
        let depth = self.stack.len();
        let (context, path_depth) = match self.state {
            State::Value if depth == 0 => (TruncatedIn::NoValue, 0),
            State::InString => (TruncatedIn::String, depth),
            State::Number(number) if !number.is_complete() => (TruncatedIn::Number, depth),
            State::Literal { literal, matched } if usize::from(matched) < literal.text().len() => {
                (TruncatedIn::Literal, depth)
            }
            State::Value if self.stack.last().is_some_and(Frame::is_object) => {
                (TruncatedIn::BeforeValue, depth)
            }
            State::InKey => (TruncatedIn::Key, depth - 1),
            _ if self.stack.last().is_some_and(Frame::is_object) => {
                (TruncatedIn::Object, depth - 1)
            }
            _ => (TruncatedIn::Array, depth.saturating_sub(1)),
        };
        ArgParseError::Truncated {
            path: self.pointer(path_depth),
            context,
        }
    }

    /// The pointer to the value open inside the outermost `depth` frames.
    fn pointer(&self, depth: usize) -> JsonPointer {
        let mut pointer = JsonPointer::root();
        for frame in &self.stack[..depth] {
            match &frame.key {
                Some(key) => pointer.push_key(key),
                None => pointer.push_index(frame.count.saturating_sub(1)),
            }
        }
        pointer
    }

    /// Emits `leaf` for the value open inside every frame, its path
    /// borrowed from the stack.
    fn emit(&self, leaf: Leaf<'_>, out: &mut Sink<'_>) {
        out(FragmentRef::new(FragmentPath::frames(&self.stack), leaf));
    }

    fn invalid(&self, chunk: &str, at: usize, expected: &'static str) -> ArgParseError {
        let found = chunk[at..].chars().next().map_or(Found::End, Found::Char);
        ArgParseError::Invalid {
            offset: self.offset + at,
            expected,
            found,
        }
    }

    fn run(&mut self, chunk: &str, out: &mut Sink<'_>) -> Result<(), ArgParseError> {
        if chunk.len() > self.limits.max_size.saturating_sub(self.offset) {
            return Err(ArgParseError::LimitExceeded {
                limit: Limit::Size,
                max: self.limits.max_size,
                offset: self.limits.max_size,
            });
        }
        let bytes = chunk.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            match self.state {
                State::InString if self.escape == Escape::None => {
                    at = self.scan_string(chunk, at, out)?;
                }
                State::InKey if self.escape == Escape::None => {
                    at = self.scan_key(chunk, at)?;
                }
                _ => match self.step(chunk, at, out)? {
                    Step::Consumed => at += 1,
                    Step::Reprocess => {}
                },
            }
        }
        if self.state == State::InString && !self.pending.is_empty() {
            self.emit_pending(out);
        }
        Ok(())
    }

    /// Hands out the decoded text of the current string.
    fn emit_pending(&mut self, out: &mut Sink<'_>) {
        out(FragmentRef::string(
            FragmentPath::frames(&self.stack),
            &self.pending,
            self.string_id,
        ));
        self.pending.clear();
        // A provider that sends a huge string in one chunk must not leave
        // the parser holding that much memory.
        if self.pending.capacity() > 64 * 1024 {
            self.pending = String::new();
        }
        self.string_started = true;
    }

    /// Hands out `run`, the last plain text of this push for the current
    /// string, after whatever `pending` holds: borrowed from the chunk when
    /// nothing was decoded before it in this push (no copy), else appended
    /// to `pending` first. Nothing is emitted when both are empty.
    fn emit_text(&mut self, run: &str, out: &mut Sink<'_>) {
        if self.pending.is_empty() {
            if !run.is_empty() {
                out(FragmentRef::string(
                    FragmentPath::frames(&self.stack),
                    run,
                    self.string_id,
                ));
                self.string_started = true;
            }
        } else {
            self.pending.push_str(run);
            self.emit_pending(out);
        }
    }

    /// Reads string content from `start`: plain runs found a word at a
    /// time, escapes that lie whole in the chunk decoded on the spot, up to
    /// the closing quote or the end of the chunk, where this push's text
    /// goes out. An escape cut by the chunk's end, or a malformed one, is
    /// left to the byte-at-a-time state machine ([`step`](Self::step)),
    /// which carries it over and words its errors. Returns the position
    /// after what it handled.
    fn scan_string(
        &mut self,
        chunk: &str,
        start: usize,
        out: &mut Sink<'_>,
    ) -> Result<usize, ArgParseError> {
        let bytes = chunk.as_bytes();
        // Plain text from `run` to `at` is not yet in `pending`. `"`, `\`
        // and control bytes are ASCII, so every position the loop stops at
        // is a char boundary.
        let mut run = start;
        let mut at = start;
        loop {
            at = skip_plain(bytes, at);
            let Some(&byte) = bytes.get(at) else {
                self.emit_text(&chunk[run..at], out);
                return Ok(at);
            };
            match byte {
                b'"' => {
                    if run == at && self.pending.is_empty() {
                        if !self.string_started {
                            self.emit(Leaf::Empty(EmptyKind::String), out);
                        }
                    } else {
                        self.emit_text(&chunk[run..at], out);
                    }
                    self.emit(Leaf::Done, out);
                    self.end_value();
                    return Ok(at + 1);
                }
                b'\\' => {
                    self.pending.push_str(&chunk[run..at]);
                    let Some((decoded, len)) = whole_escape(bytes, at) else {
                        self.escape = Escape::Backslash;
                        return Ok(at + 1);
                    };
                    self.pending.push(decoded);
                    at += len;
                    run = at;
                }
                _ => {
                    return Err(self.invalid(
                        chunk,
                        at,
                        "a string character (control characters must be escaped)",
                    ));
                }
            }
        }
    }

    /// Like [`scan_string`](Self::scan_string), for an object key.
    fn scan_key(&mut self, chunk: &str, start: usize) -> Result<usize, ArgParseError> {
        let bytes = chunk.as_bytes();
        let mut at = start;
        while at < bytes.len() && !STRING_SPECIAL[usize::from(bytes[at])] {
            at += 1;
        }
        self.key.push_str(&chunk[start..at]);
        if let Some(excess) = self.key.len().checked_sub(self.limits.max_key_len)
            && excess > 0
        {
            // The key was within the limit before this run, which was copied
            // byte for byte, so the first byte over the limit is in the run.
            return Err(self.key_too_long(at - excess));
        }
        let Some(&byte) = bytes.get(at) else {
            return Ok(at);
        };
        match byte {
            b'"' => {
                if let Some(frame) = self.stack.last_mut() {
                    let key = frame.key.get_or_insert_with(String::new);
                    std::mem::swap(key, &mut self.key);
                    frame.count += 1;
                }
                self.key.clear();
                self.state = State::Colon;
            }
            b'\\' => self.escape = Escape::Backslash,
            _ => {
                return Err(self.invalid(
                    chunk,
                    at,
                    "a key character (control characters must be escaped)",
                ));
            }
        }
        Ok(at + 1)
    }

    fn key_too_long(&self, at: usize) -> ArgParseError {
        ArgParseError::LimitExceeded {
            limit: Limit::KeyLength,
            max: self.limits.max_key_len,
            offset: self.offset + at,
        }
    }

    /// Handles one byte of an escape sequence in the current string or key.
    fn escape_byte(&mut self, chunk: &str, at: usize) -> Result<(), ArgParseError> {
        let byte = chunk.as_bytes()[at];
        let decoded = match self.escape {
            Escape::None => return Ok(()),
            Escape::Backslash => match byte {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    self.escape = Escape::Unicode {
                        code: 0,
                        digits: 0,
                        high: None,
                    };
                    return Ok(());
                }
                _ => {
                    return Err(self.invalid(
                        chunk,
                        at,
                        "an escape character (one of \" \\ / b f n r t u)",
                    ));
                }
            },
            Escape::Unicode { code, digits, high } => {
                let Some(digit) = hex_value(byte) else {
                    return Err(self.invalid(chunk, at, "a hexadecimal digit"));
                };
                let code = code << 4 | digit;
                if digits < 3 {
                    self.escape = Escape::Unicode {
                        code,
                        digits: digits + 1,
                        high,
                    };
                    return Ok(());
                }
                match (high, code) {
                    (None, 0xD800..=0xDBFF) => {
                        self.escape = Escape::LowBackslash { high: code };
                        return Ok(());
                    }
                    (None, 0xDC00..=0xDFFF) => {
                        return Err(self.invalid(
                            chunk,
                            at,
                            "a \\u escape that is not a lone low surrogate",
                        ));
                    }
                    (None, code) => char::from_u32(u32::from(code)).unwrap_or('\u{FFFD}'),
                    (Some(high), 0xDC00..=0xDFFF) => {
                        let scalar = 0x10000
                            + ((u32::from(high) - 0xD800) << 10)
                            + (u32::from(code) - 0xDC00);
                        char::from_u32(scalar).unwrap_or('\u{FFFD}')
                    }
                    (Some(_), _) => {
                        return Err(self.invalid(
                            chunk,
                            at,
                            "a low surrogate (\\uDC00 to \\uDFFF) after a high surrogate",
                        ));
                    }
                }
            }
            Escape::LowBackslash { high } => {
                if byte != b'\\' {
                    return Err(self.invalid(
                        chunk,
                        at,
                        "a \\u escape of a low surrogate after a high surrogate",
                    ));
                }
                self.escape = Escape::LowU { high };
                return Ok(());
            }
            Escape::LowU { high } => {
                if byte != b'u' {
                    return Err(self.invalid(
                        chunk,
                        at,
                        "a \\u escape of a low surrogate after a high surrogate",
                    ));
                }
                self.escape = Escape::Unicode {
                    code: 0,
                    digits: 0,
                    high: Some(high),
                };
                return Ok(());
            }
        };
        self.escape = Escape::None;
        if self.state == State::InKey {
            self.key.push(decoded);
            if self.key.len() > self.limits.max_key_len {
                return Err(self.key_too_long(at));
            }
            Ok(())
        } else {
            self.pending.push(decoded);
            Ok(())
        }
    }

    /// One byte outside plain string content.
    fn step(&mut self, chunk: &str, at: usize, out: &mut Sink<'_>) -> Result<Step, ArgParseError> {
        let byte = chunk.as_bytes()[at];
        match self.state {
            State::InString | State::InKey => {
                self.escape_byte(chunk, at)?;
            }
            State::Value | State::ValueOrEnd => {
                if is_whitespace(byte) {
                    return Ok(Step::Consumed);
                }
                if byte == b']' && self.state == State::ValueOrEnd {
                    return Ok(self.close_container(false, out));
                }
                self.begin_value(chunk, at)?;
            }
            State::KeyOrEnd | State::Key => match byte {
                _ if is_whitespace(byte) => {}
                b'"' => {
                    self.state = State::InKey;
                    self.escape = Escape::None;
                }
                b'}' if self.state == State::KeyOrEnd => {
                    return Ok(self.close_container(true, out));
                }
                _ => {
                    let expected = if self.state == State::KeyOrEnd {
                        "a string key or '}'"
                    } else {
                        "a string key"
                    };
                    return Err(self.invalid(chunk, at, expected));
                }
            },
            State::Colon => match byte {
                _ if is_whitespace(byte) => {}
                b':' => self.state = State::Value,
                _ => return Err(self.invalid(chunk, at, "':' after an object key")),
            },
            State::Number(number) => {
                if let Some(next) = number.next(byte) {
                    self.number.push(char::from(byte));
                    self.state = State::Number(next);
                } else if number.is_complete() && !number.is_leading_zero_of(byte) {
                    // The number ended just before this byte; whatever the
                    // byte is, the state after the value judges it.
                    let scalar = self.take_number()?;
                    self.end_scalar(scalar, out);
                    return Ok(Step::Reprocess);
                } else {
                    return Err(self.invalid(chunk, at, number.expected()));
                }
            }
            State::Literal { literal, matched } => {
                let Some(&want) = literal.text().get(usize::from(matched)) else {
                    self.end_scalar(literal.scalar(), out);
                    return Ok(Step::Reprocess);
                };
                if byte != want {
                    return Err(self.invalid(chunk, at, literal.expected()));
                }
                self.state = State::Literal {
                    literal,
                    matched: matched + 1,
                };
            }
            State::AfterValue => {
                let in_object = self.stack.last().is_some_and(Frame::is_object);
                match byte {
                    _ if is_whitespace(byte) => {}
                    b',' => self.state = if in_object { State::Key } else { State::Value },
                    b'}' if in_object => return Ok(self.close_container(true, out)),
                    b']' if !in_object => return Ok(self.close_container(false, out)),
                    _ => {
                        let expected = if in_object {
                            "',' or '}' after an object entry"
                        } else {
                            "',' or ']' after an array item"
                        };
                        return Err(self.invalid(chunk, at, expected));
                    }
                }
            }
            State::End => {
                if !is_whitespace(byte) {
                    return Err(self.invalid(chunk, at, "the end of the input after the value"));
                }
            }
        }
        Ok(Step::Consumed)
    }

    /// Starts the value whose first byte is at `at`.
    fn begin_value(&mut self, chunk: &str, at: usize) -> Result<(), ArgParseError> {
        let byte = chunk.as_bytes()[at];
        let is_start = matches!(
            byte,
            b'"' | b'{' | b'[' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
        );
        if !is_start {
            return Err(self.invalid(chunk, at, "a JSON value"));
        }
        self.started = true;
        if let Some(frame) = self.stack.last_mut()
            && !frame.is_object()
        {
            frame.count += 1;
        }
        match byte {
            b'"' => {
                self.state = State::InString;
                self.escape = Escape::None;
                self.string_started = false;
                self.string_id.serial += 1;
            }
            b'{' | b'[' => {
                if self.stack.len() >= self.limits.max_depth {
                    return Err(ArgParseError::LimitExceeded {
                        limit: Limit::Depth,
                        max: self.limits.max_depth,
                        offset: self.offset + at,
                    });
                }
                let is_object = byte == b'{';
                self.stack.push(Frame {
                    count: 0,
                    key: is_object.then(String::new),
                });
                self.state = if is_object {
                    State::KeyOrEnd
                } else {
                    State::ValueOrEnd
                };
            }
            b't' | b'f' | b'n' => {
                let literal = match byte {
                    b't' => Literal::True,
                    b'f' => Literal::False,
                    _ => Literal::Null,
                };
                self.state = State::Literal {
                    literal,
                    matched: 1,
                };
            }
            _ => {
                self.number.clear();
                self.number.push(char::from(byte));
                self.number_offset = self.offset + at;
                let state = match byte {
                    b'-' => NumberState::Minus,
                    b'0' => NumberState::Zero,
                    _ => NumberState::Integer,
                };
                self.state = State::Number(state);
            }
        }
        Ok(())
    }

    /// Parses the complete number text with serde_json, so the result is
    /// exactly what `serde_json::from_str` gives for the whole document.
    fn take_number(&mut self) -> Result<Scalar, ArgParseError> {
        match serde_json::from_str::<serde_json::Number>(&self.number) {
            Ok(number) => Ok(Scalar::Number(number)),
            Err(_) => Err(ArgParseError::NumberOutOfRange {
                text: abbreviate(&self.number),
                offset: self.number_offset,
            }),
        }
    }

    /// A number or literal ended.
    fn end_scalar(&mut self, scalar: Scalar, out: &mut Sink<'_>) {
        if self.stack.is_empty() {
            self.root_scalar = Some(scalar);
        } else {
            self.emit(Leaf::Scalar(&scalar), out);
            self.emit(Leaf::Done, out);
        }
        self.end_value();
    }

    /// Moves on after a value was closed and its `Done` emitted.
    fn end_value(&mut self) {
        self.state = if self.stack.is_empty() {
            State::End
        } else {
            State::AfterValue
        };
    }

    /// Closes the innermost container at `at` (`}` if `object`, else `]`).
    fn close_container(&mut self, object: bool, out: &mut Sink<'_>) -> Step {
        if let Some(frame) = self.stack.pop() {
            if frame.count == 0 {
                let kind = if object {
                    EmptyKind::Object
                } else {
                    EmptyKind::Array
                };
                self.emit(Leaf::Empty(kind), out);
            }
            self.emit(Leaf::Done, out);
        }
        self.end_value();
        Step::Consumed
    }
}

/// A parser id no other parser in the process has.
fn next_parser_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
