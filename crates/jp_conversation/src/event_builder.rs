//! [`EventBuilder`]: turns streamed [`EventPart`]s into complete events,
//! parsing tool-call arguments as they arrive (RFD 043, phase 3).

use serde_json::{Map, Value};

use crate::arguments::{
    ArgParseError, ArgumentsSoFar, FragmentAggregator, IncrementalArgParser, ParserLimits,
    ProgressRef, ToolCallArgumentProgress,
};
use crate::event::{
    ArgumentsError, EventPart, FlushedEvent, ToolCallPart, ToolCallRequest, json_type_name,
};

/// Collects the parts of a streamed response, one buffer per index.
///
/// Each tool call gets its own [`IncrementalArgParser`] and
/// [`FragmentAggregator`], so calls whose chunks interleave (parallel tool
/// calls on OpenAI-compatible providers) never mix. Arguments are never
/// buffered as text: by the time a call is flushed its value is already
/// assembled.
#[derive(Debug, Default)]
pub struct EventBuilder {
    limits: ParserLimits,
    buffers: Buffers,
}

/// The buffers by index, in index order.
///
/// A sorted `Vec`: a response holds a handful of items, and every argument
/// chunk takes its call out and puts it back (so the visitor can look at
/// the others), which in a `BTreeMap` cost more than parsing the chunk when
/// chunks are a byte or two (issue 27). Here that is a move of the items
/// after it, none for the last, and never an allocation.
#[derive(Debug, Default)]
struct Buffers(Vec<(usize, Buffer)>);

impl Buffers {
    fn position(&self, index: usize) -> Result<usize, usize> {
        self.0.binary_search_by_key(&index, |(at, _)| *at)
    }

    fn get(&self, index: &usize) -> Option<&Buffer> {
        let position = self.position(*index).ok()?;
        self.0.get(position).map(|(_, buffer)| buffer)
    }

    fn get_mut(&mut self, index: &usize) -> Option<&mut Buffer> {
        let position = self.position(*index).ok()?;
        self.0.get_mut(position).map(|(_, buffer)| buffer)
    }

    /// Puts `buffer` at `index`, replacing what was there.
    fn insert(&mut self, index: usize, buffer: Buffer) {
        match self.position(index) {
            Ok(position) => self.0[position].1 = buffer,
            Err(position) => self.0.insert(position, (index, buffer)),
        }
    }

    fn remove(&mut self, index: &usize) -> Option<Buffer> {
        self.take(*index).map(|(_, buffer)| buffer)
    }

    /// Removes the buffer at `index`, with where it was for
    /// [`put_back`](Self::put_back).
    fn take(&mut self, index: usize) -> Option<(usize, Buffer)> {
        let position = self.position(index).ok()?;
        Some((position, self.0.remove(position).1))
    }

    /// Returns a buffer [`take`](Self::take) removed, nothing having been
    /// added or removed since.
    fn put_back(&mut self, position: usize, index: usize, buffer: Buffer) {
        self.0.insert(position, (index, buffer));
    }

    fn keys(&self) -> impl Iterator<Item = &usize> {
        self.0.iter().map(|(index, _)| index)
    }

    fn values(&self) -> impl Iterator<Item = &Buffer> {
        self.0.iter().map(|(_, buffer)| buffer)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[derive(Debug)]
enum Buffer {
    Text(TextKind, String),
    ToolCall(Box<ToolCallBuffer>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextKind {
    Message,
    Reasoning,
}

impl TextKind {
    fn name(self) -> &'static str {
        match self {
            Self::Message => "a message",
            Self::Reasoning => "reasoning",
        }
    }
}

impl Buffer {
    fn kind(&self) -> &'static str {
        match self {
            Self::Text(kind, _) => kind.name(),
            Self::ToolCall(_) => "a tool call",
        }
    }
}

#[derive(Debug)]
struct ToolCallBuffer {
    id: String,
    name: String,
    parser: IncrementalArgParser,
    aggregator: FragmentAggregator,
    /// The root value, once its `Done` arrived.
    root: Option<Value>,
}

/// What a visitor of [`EventBuilder::handle_part_with`] can read about the
/// call a fragment belongs to, as it is after that fragment.
#[derive(Debug, Clone, Copy)]
pub struct CallView<'a> {
    aggregator: &'a FragmentAggregator,
    root: Option<&'a Value>,
    bytes: usize,
    others: &'a EventBuilder,
}

impl<'a> CallView<'a> {
    /// The value of the top-level argument `key`, once it is complete (see
    /// [`EventBuilder::argument`]).
    #[must_use]
    pub fn argument(&self, key: &str) -> Option<&'a Value> {
        match self.root {
            Some(Value::Object(map)) => map.get(key),
            Some(_) => None,
            None => self.aggregator.arguments()?.get(key),
        }
    }

    /// How many bytes of argument text the call has received, counting
    /// the whole chunk being handled.
    #[must_use]
    pub fn argument_bytes(&self) -> usize {
        self.bytes
    }

    /// The builder's other items: this call is left out while its chunk is
    /// handled.
    #[must_use]
    pub fn others(&self) -> &'a EventBuilder {
        self.others
    }
}

/// A part that does not fit the parts before it at its index: a bug in a
/// provider decoder, reported instead of guessed around.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventBuilderError {
    /// Argument chunks arrived for an index with no tool call started.
    #[error("argument chunk for index {index}, where no tool call has started")]
    ChunkWithoutStart {
        /// The index.
        index: usize,
    },
    /// A tool call started at an index that already holds one.
    #[error("a second tool call start at index {index}")]
    DuplicateStart {
        /// The index.
        index: usize,
    },
    /// A part of one kind arrived at an index that holds another kind.
    #[error("{part} part at index {index}, which already holds {holds}")]
    KindMismatch {
        /// The index.
        index: usize,
        /// What arrived.
        part: &'static str,
        /// What the index holds.
        holds: &'static str,
    },
}

impl EventBuilder {
    /// A builder whose tool-call parsers use the default limits.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder whose tool-call parsers use `limits`.
    #[must_use]
    pub fn with_limits(limits: ParserLimits) -> Self {
        Self {
            limits,
            buffers: Buffers::default(),
        }
    }

    /// Adds a part at `index`; returns the argument progress it produced
    /// (empty for anything but a tool call's argument chunk).
    ///
    /// A chunk that makes the arguments invalid is not an error here: the
    /// call is flushed as invalid and its remaining chunks are ignored. The
    /// fragments that chunk completed before the invalid byte are handed
    /// out (and aggregated) all the same: fragments go out as they are
    /// parsed, never held back for the rest of the chunk.
    ///
    /// # Errors
    ///
    /// [`EventBuilderError`] when the part cannot belong at `index`.
    pub fn handle_part(
        &mut self,
        index: usize,
        part: EventPart,
    ) -> Result<Vec<ToolCallArgumentProgress>, EventBuilderError> {
        let mut progress = Vec::new();
        self.handle_part_with(index, part, |fragment, _| {
            progress.push(fragment.to_progress());
        })?;
        Ok(progress)
    }

    /// Like [`handle_part`](Self::handle_part), handing each piece of
    /// argument progress to `visit` instead of collecting it: nothing is
    /// copied per fragment, so a chunk of many small values nested deep
    /// costs memory in proportion to its text (issue 14). Alongside each
    /// piece, `visit` gets a [`CallView`] of the call as it is after that
    /// fragment.
    ///
    /// # Errors
    ///
    /// As for [`handle_part`](Self::handle_part).
    pub fn handle_part_with(
        &mut self,
        index: usize,
        part: EventPart,
        mut visit: impl FnMut(ProgressRef<'_>, &CallView<'_>),
    ) -> Result<(), EventBuilderError> {
        match part {
            EventPart::Message(text) => self.append_text(index, TextKind::Message, text),
            EventPart::Reasoning(text) => self.append_text(index, TextKind::Reasoning, text),
            EventPart::ToolCall(ToolCallPart::Start { id, name }) => {
                match self.buffers.get(&index) {
                    None => {}
                    Some(Buffer::ToolCall(_)) => {
                        return Err(EventBuilderError::DuplicateStart { index });
                    }
                    Some(other) => {
                        return Err(EventBuilderError::KindMismatch {
                            index,
                            part: "a tool call start",
                            holds: other.kind(),
                        });
                    }
                }
                let call = ToolCallBuffer {
                    id,
                    name,
                    parser: IncrementalArgParser::with_limits(self.limits),
                    aggregator: FragmentAggregator::new(),
                    root: None,
                };
                self.buffers.insert(index, Buffer::ToolCall(Box::new(call)));
                Ok(())
            }
            EventPart::ToolCall(ToolCallPart::ArgumentChunk(chunk)) => {
                match self.buffers.take(index) {
                    Some((position, Buffer::ToolCall(mut call))) => {
                        // Out of the map while it parses, so the visitor
                        // can look at the other calls.
                        call.push_with(&chunk, self, &mut visit);
                        self.buffers
                            .put_back(position, index, Buffer::ToolCall(call));
                        Ok(())
                    }
                    Some((position, other)) => {
                        let holds = other.kind();
                        self.buffers.put_back(position, index, other);
                        Err(EventBuilderError::KindMismatch {
                            index,
                            part: "an argument chunk",
                            holds,
                        })
                    }
                    None => Err(EventBuilderError::ChunkWithoutStart { index }),
                }
            }
        }
    }

    fn append_text(
        &mut self,
        index: usize,
        kind: TextKind,
        text: String,
    ) -> Result<(), EventBuilderError> {
        match self.buffers.get_mut(&index) {
            None => {
                self.buffers.insert(index, Buffer::Text(kind, text));
                Ok(())
            }
            Some(Buffer::Text(held, buffer)) if *held == kind => {
                buffer.push_str(&text);
                Ok(())
            }
            Some(other) => Err(EventBuilderError::KindMismatch {
                index,
                part: kind.name(),
                holds: other.kind(),
            }),
        }
    }

    /// The parse error of the tool call at `index`, as soon as it happens:
    /// a streaming consumer can stop waiting for a call that will be
    /// refused.
    #[must_use]
    pub fn argument_error(&self, index: usize) -> Option<&ArgParseError> {
        match self.buffers.get(&index)? {
            Buffer::ToolCall(call) => call.parser.error(),
            Buffer::Text(..) => None,
        }
    }

    /// The value of the top-level argument `key` of the tool call at
    /// `index`, once that argument is complete (its `Done` has been
    /// handed out), until the call is flushed. Streaming policy evaluation
    /// reads it here instead of keeping a copy.
    #[must_use]
    pub fn argument(&self, index: usize, key: &str) -> Option<&Value> {
        let Some(Buffer::ToolCall(call)) = self.buffers.get(&index) else {
            return None;
        };
        match &call.root {
            Some(Value::Object(map)) => map.get(key),
            Some(_) => None,
            None => call.aggregator.arguments()?.get(key),
        }
    }

    /// What has arrived of the arguments of the tool call at `index`,
    /// until it is flushed (see [`FragmentAggregator::so_far`]).
    #[must_use]
    pub fn arguments_so_far(&self, index: usize) -> Option<ArgumentsSoFar> {
        let Some(Buffer::ToolCall(call)) = self.buffers.get(&index) else {
            return None;
        };
        match &call.root {
            Some(Value::Object(map)) => Some(ArgumentsSoFar {
                arguments: map.clone(),
                streaming: None,
                complete: true,
            }),
            Some(_) => None,
            None => call.aggregator.so_far(),
        }
    }

    /// How many bytes of argument text the tool call at `index` has
    /// received so far.
    #[must_use]
    pub fn argument_bytes(&self, index: usize) -> usize {
        match self.buffers.get(&index) {
            Some(Buffer::ToolCall(call)) => call.parser.bytes_consumed(),
            _ => 0,
        }
    }

    /// The tool name of the call at `index`, until it is flushed.
    #[must_use]
    pub fn tool_name(&self, index: usize) -> Option<&str> {
        match self.buffers.get(&index)? {
            Buffer::ToolCall(call) => Some(&call.name),
            Buffer::Text(..) => None,
        }
    }

    /// Whether a tool call is still open (started and not flushed).
    #[must_use]
    pub fn has_open_calls(&self) -> bool {
        self.buffers
            .values()
            .any(|buffer| matches!(buffer, Buffer::ToolCall(_)))
    }

    /// Ends the tool call at `index` before the provider finished it (jp
    /// declined it while it streamed): it is returned with the arguments
    /// that had completed, marked truncated so it can never run.
    pub fn abandon(&mut self, index: usize) -> Option<FlushedEvent> {
        match self.buffers.get(&index)? {
            Buffer::ToolCall(_) => self.flush(index, Ending::Interrupted),
            Buffer::Text(..) => None,
        }
    }

    /// Ends the item at `index` and returns it complete; `None` if nothing
    /// was buffered there.
    ///
    /// A tool call's arguments are checked here: truncated or invalid JSON,
    /// a root that is not an object, and duplicate keys all produce a
    /// [`ToolCallRequest`] marked [`invalid`](ToolCallRequest::invalid),
    /// never silently empty arguments. A call that received no argument text
    /// at all has empty arguments.
    pub fn handle_flush(&mut self, index: usize) -> Option<FlushedEvent> {
        self.flush(index, Ending::Flushed)
    }

    /// Ends every index still open, in index order, when the stream stopped
    /// before the provider flushed them (a dropped connection, a
    /// cancellation): nothing received is lost, and every tool call among
    /// them is marked truncated, even one that had no argument text yet,
    /// because the provider never said its arguments were complete.
    pub fn interrupt(&mut self) -> Vec<FlushedEvent> {
        self.interrupt_each()
            .into_iter()
            .map(|(_, event)| event)
            .collect()
    }

    /// [`interrupt`](Self::interrupt), with the index of each item.
    pub fn interrupt_each(&mut self) -> Vec<(usize, FlushedEvent)> {
        let indexes: Vec<usize> = self.buffers.keys().copied().collect();
        indexes
            .into_iter()
            .filter_map(|index| Some((index, self.flush(index, Ending::Interrupted)?)))
            .collect()
    }

    fn flush(&mut self, index: usize, ending: Ending) -> Option<FlushedEvent> {
        Some(match self.buffers.remove(&index)? {
            Buffer::Text(TextKind::Message, text) => FlushedEvent::Message(text),
            Buffer::Text(TextKind::Reasoning, text) => FlushedEvent::Reasoning(text),
            Buffer::ToolCall(call) => FlushedEvent::ToolCallRequest(call.finish(ending)),
        })
    }

    /// Whether any index is still open.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.buffers.is_empty()
    }
}

/// How a buffered item ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// The provider said the item is complete.
    Flushed,
    /// The stream stopped first.
    Interrupted,
}

impl ToolCallBuffer {
    /// Feeds a chunk, each fragment to the aggregator and then to `visit`;
    /// after a parse error the call is lost and later chunks are ignored
    /// (the parser keeps its error for the flush). `others` is the builder
    /// without this call.
    fn push_with(
        &mut self,
        chunk: &str,
        others: &EventBuilder,
        visit: &mut impl FnMut(ProgressRef<'_>, &CallView<'_>),
    ) {
        let bytes = self.parser.bytes_consumed() + chunk.len();
        let Self {
            id,
            name,
            parser,
            aggregator,
            root,
        } = self;
        let _ = parser.push_with(chunk, |fragment| {
            if let Some(value) = aggregator.push_fragment(fragment) {
                *root = Some(value);
            }
            let view = CallView {
                aggregator,
                root: root.as_ref(),
                bytes,
                others,
            };
            let progress = ProgressRef {
                tool_call_id: id,
                tool_name: name,
                fragment,
            };
            visit(progress, &view);
        });
    }

    fn finish(mut self, ending: Ending) -> ToolCallRequest {
        let error = self.check(ending);
        let received = match self.root.take() {
            Some(Value::Object(map)) => map,
            _ => self.aggregator.arguments().cloned().unwrap_or_default(),
        };
        match error {
            None => ToolCallRequest::new(self.id, self.name, received),
            Some(error) => ToolCallRequest::invalid(self.id, self.name, received, error),
        }
    }

    /// Ends the parse and says what, if anything, makes the arguments
    /// unusable.
    fn check(&mut self, ending: Ending) -> Option<ArgumentsError> {
        if let Some(error) = self.parser.error() {
            return Some(error.clone().into());
        }
        if !self.parser.has_started() && ending == Ending::Flushed {
            // No argument text (or only whitespace) in a call the provider
            // completed: a call without arguments, which providers send for
            // parameterless tools.
            self.root = Some(Value::Object(Map::new()));
            return None;
        }
        let Self {
            parser,
            aggregator,
            root,
            ..
        } = self;
        let finished = parser.finish_with(|fragment| {
            if let Some(value) = aggregator.push_fragment(fragment) {
                *root = Some(value);
            }
        });
        if let Err(error) = finished {
            return Some(error.into());
        }
        if let Some(error) = self.aggregator.error() {
            return Some(ArgumentsError::Assembly(error.clone()));
        }
        if let Some(duplicate) = self.aggregator.duplicate_keys().first() {
            return Some(ArgumentsError::DuplicateKey(duplicate.clone()));
        }
        match &self.root {
            Some(Value::Object(_)) => None,
            Some(other) => Some(ArgumentsError::NotAnObject(json_type_name(other))),
            // The parser finished cleanly, so the aggregator must have
            // produced the root; if not, that is a bug to report.
            None => Some(ArgumentsError::Assembly(crate::arguments::AggregateError {
                index: 0,
                reason: "the parser finished but no root value was assembled",
            })),
        }
    }
}

#[cfg(test)]
#[path = "event_builder_tests.rs"]
mod tests;
