//! The [`TurnCoordinator`]: the pure state machine of one turn.
//!
//! A turn is: stream a response; when its tool calls are complete, have
//! them decided and run; send the results; stream the next response; until
//! the model stops calling tools. The coordinator does no I/O. The shell
//! feeds it [`Input`]s (stream events, the stream's end, the tools' end)
//! and carries out the [`Action`]s it returns, in order: print, record in
//! the conversation, decide a call, run the calls, request the next
//! response, finish.

use std::collections::{HashMap, HashSet};

use jp_conversation::{
    ArgumentsError, CallView, EventBuilder, EventKind, FlushedEvent, ProgressRef, ResponseStatus,
    ToolCallArgumentProgress, ToolCallRequest, ToolCallResponse,
};
use jp_llm::{FinishReason, ProviderError, StreamEvent, Usage};

/// What the shell tells the coordinator.
#[derive(Debug)]
pub enum Input {
    /// The next event of the response stream.
    Event(StreamEvent),
    /// The stream ended normally.
    StreamEnded,
    /// The stream failed; what arrived before stays.
    StreamFailed(ProviderError),
    /// The user interrupted the response (Ctrl-C); what arrived stays.
    Interrupted,
    /// The user stopped the response, or the tools, to write a reply;
    /// what arrived stays.
    Stopped,
    /// The user's reply after [`Action::AskReply`]; `None` ends the turn.
    Reply(Option<String>),
    /// Every call of the last response has its response recorded.
    ToolsDone,
    /// The query passed its cost budget while the response streamed
    /// ([`super::budget`]): end it as an interrupt would, keeping what
    /// arrived.
    BudgetReached(super::budget::Over),
    /// Call number `call` of this response was declined while its
    /// arguments streamed: end it with the arguments that completed and
    /// drop the rest of its chunks; when no other call is still streaming,
    /// stop the stream (nothing after the calls is worth paying for).
    Abandon {
        /// The call's number in the response.
        call: usize,
    },
}

/// What the coordinator asks the shell to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Call number `call` of a response that did not end well never runs:
    /// record how it was decided (`by`, `how`), then `response`.
    Unrun {
        /// The call's number in this response.
        call: usize,
        /// Its answer, for the model.
        response: ToolCallResponse,
        /// Who ended it: the user (interrupted, stopped) or jp (the
        /// response failed, the budget was reached).
        by: jp_conversation::DecidedBy,
        /// How.
        how: &'static str,
    },
    /// Send the next request (the conversation holds everything to send).
    Request {
        /// The response's number in this turn, from 1.
        cycle: usize,
    },
    /// Print assistant text as it streams.
    Text(String),
    /// Print reasoning as it streams.
    Reasoning(String),
    /// Tell the user something that is not part of the response.
    Notice(String),
    /// A tool call began streaming.
    ToolCallStarted {
        /// The call's number in this response, from 0: how the shell tells
        /// calls apart (ids come from the provider and may repeat).
        call: usize,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A piece of a call's arguments arrived.
    ArgumentProgress {
        /// The call's number in this response.
        call: usize,
        /// What arrived.
        progress: ToolCallArgumentProgress,
    },
    /// Append this event to the conversation and save it.
    Record(EventKind),
    /// A call is complete: decide whether it may run (the shell records the
    /// decision and, for a call that will not run, its response).
    Decide {
        /// The call's number in this response.
        call: usize,
        /// The call.
        request: ToolCallRequest,
    },
    /// A call's arguments grew past its tool's `max_argument_bytes`: it is
    /// refused (the shell records why) and ended like a call declined while
    /// it streams, with the arguments that had completed; the chunk that
    /// crossed the limit is not read.
    ArgumentsTooLarge {
        /// The call's number in this response.
        call: usize,
        /// The call's tool.
        tool: String,
        /// The limit, in bytes.
        limit: usize,
        /// The bytes of argument text the call had sent, counting the chunk
        /// that crossed the limit.
        bytes: usize,
    },
    /// Stop reading the response and close its stream: a declined call was
    /// the last one streaming. The response's end follows.
    CancelStream {
        /// The declined call's number.
        call: usize,
        /// The declined call's tool.
        tool: String,
        /// How many bytes of its arguments had arrived.
        bytes: usize,
        /// Whether the call had arrived whole (the stream is stopped after
        /// it, not in it).
        whole: bool,
    },
    /// The response ended with these calls (each with its number): run the
    /// approved ones, record every call's response, then send
    /// [`Input::ToolsDone`].
    RunTools(Vec<(usize, ToolCallRequest)>),
    /// Ask the user for a reply (they stopped the turn to write one), then
    /// send [`Input::Reply`].
    AskReply,
    /// What the response used, as the provider last reported it: record
    /// it (once per response, before its calls run or the turn ends).
    Usage(Usage),
    /// The turn is over.
    Finish(TurnEnd),
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEnd {
    /// The model finished its answer.
    Completed,
    /// The last response hit the token limit.
    MaxTokens,
    /// The provider failed; the conversation keeps what arrived.
    Failed(String),
    /// The config a tool changed does not resolve, or an MCP server it
    /// names could not be used; the conversation keeps what arrived.
    ConfigFailed(String),
    /// The user interrupted the turn; the conversation keeps what arrived.
    Interrupted,
    /// The user stopped the turn and wrote no reply.
    Stopped,
    /// The model kept calling tools past the cycle limit
    /// (`conversation.max_turns`).
    CycleLimit(usize),
    /// The query reached its cost budget (`conversation.max_cost`).
    CostLimit(super::budget::Over),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Streaming,
    RunningTools,
    AwaitingReply,
    Done,
}

/// What a [`ReadPieces`] can read about a streaming call while a piece of
/// its arguments is handed to it.
#[derive(Debug, Clone, Copy)]
pub struct StreamView<'a> {
    call: usize,
    view: &'a CallView<'a>,
    open: &'a HashMap<usize, usize>,
}

impl<'a> StreamView<'a> {
    /// The value of the call's top-level argument `key`, once complete.
    #[must_use]
    pub fn argument(&self, key: &str) -> Option<&'a serde_json::Value> {
        self.view.argument(key)
    }

    /// How many bytes of argument text the call has received.
    #[must_use]
    pub fn argument_bytes(&self) -> usize {
        self.view.argument_bytes()
    }

    /// The other calls still streaming: how many, and how many bytes of
    /// arguments they have received together (as
    /// [`TurnCoordinator::others_streaming`]).
    #[must_use]
    pub fn others_streaming(&self) -> (usize, usize) {
        let others = self.view.others();
        self.open
            .iter()
            .filter(|(_, open)| **open != self.call)
            .fold((0, 0), |(count, bytes), (&index, _)| {
                (count + 1, bytes + others.argument_bytes(index))
            })
    }
}

/// What reads each piece of a call's arguments while the turn parses it,
/// borrowed from the parser: nothing is copied per fragment (issue 14).
/// The shell's reader ([`super::pieces::PieceReader`]) draws the piece and
/// hands it to the [`Calls`](super::calls::Calls) machine, keeping what
/// they give for the shell to carry out once the turn has returned: the
/// turn never calls into the shell.
pub trait ReadPieces {
    /// Reads piece `progress` of call number `call`; `view` shows the call
    /// as it is after it.
    fn read(&mut self, call: usize, progress: ProgressRef<'_>, view: &StreamView<'_>);
}

/// A reader that keeps each piece as an owned
/// [`Action::ArgumentProgress`], in order.
struct Owned(Vec<Action>);

impl ReadPieces for Owned {
    fn read(&mut self, call: usize, progress: ProgressRef<'_>, _: &StreamView<'_>) {
        self.0.push(Action::ArgumentProgress {
            call,
            progress: progress.to_progress(),
        });
    }
}

/// A stop of the stream for a declined call: the call's number, id and
/// tool, the bytes of its arguments that arrived, and whether it had
/// arrived whole.
#[derive(Debug)]
struct Stop {
    call: usize,
    call_id: String,
    tool: String,
    bytes: usize,
    whole: bool,
}

/// The turn's state machine.
#[derive(Debug)]
pub struct TurnCoordinator {
    phase: Phase,
    builder: EventBuilder,
    cycle: usize,
    max_cycles: usize,
    calls: Vec<(usize, ToolCallRequest)>,
    /// The open tool calls of this response: stream index to call number.
    open: HashMap<usize, usize>,
    /// Stream indexes of calls abandoned while they streamed; their later
    /// parts are dropped.
    abandoned: HashSet<usize>,
    /// The most argument text each call of this response may send, by call
    /// number (see [`limit_arguments`](Self::limit_arguments)).
    argument_limits: HashMap<usize, usize>,
    /// The next call number.
    next_call: usize,
    /// The bytes of argument text of each call that was complete, by call
    /// number: what a call declined once whole had sent.
    whole_bytes: HashMap<usize, usize>,
    /// The bytes of argument text each call that ended (complete, ended
    /// early, cut off) had received, by call number.
    received: HashMap<usize, usize>,
    /// Whether the events arriving are one group of the provider's (see
    /// [`StreamEvent::GroupStart`]).
    grouped: bool,
    /// Calls declined while a group arrived, ended when it is in.
    deferred: Vec<usize>,
    /// The stream stop a call ended in a group asked for, made when the
    /// group is in.
    deferred_stop: Option<Stop>,
    finish: Option<FinishReason>,
    /// Every tool-call id in the conversation so far.
    seen_ids: HashSet<String>,
    /// What the provider last reported this response used.
    usage: Option<Usage>,
}

impl TurnCoordinator {
    /// A turn that sends at most `max_cycles` requests, in a conversation
    /// whose earlier tool calls have `seen_ids`.
    #[must_use]
    pub fn new(max_cycles: usize, seen_ids: HashSet<String>) -> Self {
        Self {
            phase: Phase::Idle,
            builder: EventBuilder::new(),
            cycle: 0,
            max_cycles: max_cycles.max(1),
            calls: Vec::new(),
            open: HashMap::new(),
            abandoned: HashSet::new(),
            argument_limits: HashMap::new(),
            next_call: 0,
            whole_bytes: HashMap::new(),
            received: HashMap::new(),
            grouped: false,
            deferred: Vec::new(),
            deferred_stop: None,
            finish: None,
            seen_ids,
            usage: None,
        }
    }

    /// Starts the turn: the first request.
    pub fn start(&mut self) -> Vec<Action> {
        debug_assert_eq!(self.phase, Phase::Idle);
        self.next_request()
    }

    fn next_request(&mut self) -> Vec<Action> {
        if self.cycle >= self.max_cycles {
            self.phase = Phase::Done;
            return vec![Action::Finish(TurnEnd::CycleLimit(self.max_cycles))];
        }
        self.cycle += 1;
        self.phase = Phase::Streaming;
        self.builder = EventBuilder::new();
        self.calls.clear();
        self.open.clear();
        self.abandoned.clear();
        self.usage = None;
        self.argument_limits.clear();
        self.next_call = 0;
        self.whole_bytes.clear();
        self.received.clear();
        self.grouped = false;
        self.deferred.clear();
        self.deferred_stop = None;
        self.finish = None;
        vec![Action::Request { cycle: self.cycle }]
    }

    /// Call number `call` may send at most `max_bytes` of argument text: a
    /// chunk that would take it past that refuses the call
    /// ([`Action::ArgumentsTooLarge`]) and is not parsed. The shell sets it
    /// when the call starts, from the tool's config.
    pub fn limit_arguments(&mut self, call: usize, max_bytes: usize) {
        self.argument_limits.insert(call, max_bytes);
    }

    /// Whether the turn is over.
    #[must_use]
    #[cfg(test)]
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Feeds one input; returns what to do, in order, each piece of
    /// argument progress as an owned [`Action::ArgumentProgress`] (a
    /// reader that copies the path of every piece: for tests and small
    /// inputs; the shell reads them borrowed, [`Self::handle_reading`]).
    pub fn handle(&mut self, input: Input) -> Vec<Action> {
        let mut progress = Owned(Vec::new());
        let actions = self.handle_reading(input, &mut progress);
        // Progress comes from an argument chunk, which yields no other
        // action before it.
        progress.0.extend(actions);
        progress.0
    }

    /// [`handle`](Self::handle), with each piece of argument progress
    /// handed to `reader` as it is parsed (with the call's number and a
    /// view of the call), borrowed from the parser, instead of returned:
    /// so that a chunk of many small values nested deep costs no memory
    /// per fragment (issue 14). The reader is a pure machine; what it
    /// makes of the pieces is the shell's to carry out once this returns.
    pub fn handle_reading(&mut self, input: Input, reader: &mut dyn ReadPieces) -> Vec<Action> {
        match (self.phase, input) {
            (Phase::Streaming, Input::Event(event)) => self.on_event(event, reader),
            (Phase::Streaming, Input::StreamEnded) => self.on_end(None),
            (Phase::Streaming, Input::StreamFailed(error)) => {
                self.on_end(Some(TurnEnd::Failed(error.to_string())))
            }
            (Phase::Streaming, Input::Interrupted) => self.on_end(Some(TurnEnd::Interrupted)),
            (Phase::Streaming, Input::Stopped) => self.on_end(Some(TurnEnd::Stopped)),
            (Phase::Streaming, Input::BudgetReached(over)) => {
                self.on_end(Some(TurnEnd::CostLimit(over)))
            }
            (Phase::Streaming, Input::Abandon { call }) if self.grouped => {
                // The rest of the group has arrived: it is read first.
                self.deferred.push(call);
                Vec::new()
            }
            (Phase::Streaming, Input::Abandon { call }) => self.abandon(call),
            (Phase::RunningTools, Input::ToolsDone) => self.next_request(),
            // The shell answered every call already.
            (Phase::RunningTools, Input::Stopped) => {
                self.phase = Phase::AwaitingReply;
                vec![Action::AskReply]
            }
            (Phase::AwaitingReply, Input::Reply(Some(content))) => {
                let mut actions = vec![Action::Record(EventKind::ChatRequest { content })];
                actions.extend(self.next_request());
                actions
            }
            (Phase::AwaitingReply, Input::Reply(None)) => {
                self.phase = Phase::Done;
                vec![Action::Finish(TurnEnd::Stopped)]
            }
            // Anything else is a shell bug; ignoring it keeps the turn
            // consistent.
            (_, input) => {
                tracing::warn!(?input, phase = ?self.phase, "turn input out of order, ignored");
                Vec::new()
            }
        }
    }

    fn on_event(&mut self, event: StreamEvent, progress: &mut dyn ReadPieces) -> Vec<Action> {
        match event {
            StreamEvent::Part { index, part } => {
                let starts = matches!(
                    part,
                    jp_conversation::EventPart::ToolCall(
                        jp_conversation::ToolCallPart::Start { .. }
                    )
                );
                if self.abandoned.contains(&index) {
                    if !starts {
                        // The rest of a declined call: not wanted.
                        return Vec::new();
                    }
                    self.abandoned.remove(&index);
                }
                let mut actions = Vec::new();
                match &part {
                    jp_conversation::EventPart::Message(text) => {
                        actions.push(Action::Text(text.clone()));
                    }
                    jp_conversation::EventPart::Reasoning(text) => {
                        actions.push(Action::Reasoning(text.clone()));
                    }
                    jp_conversation::EventPart::ToolCall(
                        jp_conversation::ToolCallPart::Start { id, name },
                    ) => {
                        if self.open.contains_key(&index) {
                            // A second start at an open index: the builder
                            // rejects it below.
                        } else {
                            let call = self.next_call;
                            self.next_call += 1;
                            self.open.insert(index, call);
                            actions.push(Action::ToolCallStarted {
                                call,
                                id: id.clone(),
                                name: name.clone(),
                            });
                        }
                    }
                    jp_conversation::EventPart::ToolCall(_) => {}
                }
                let call = self.open.get(&index).copied();
                if let (
                    Some(call),
                    jp_conversation::EventPart::ToolCall(
                        jp_conversation::ToolCallPart::ArgumentChunk(chunk),
                    ),
                ) = (call, &part)
                    && let Some(&limit) = self.argument_limits.get(&call)
                {
                    let bytes = self
                        .builder
                        .argument_bytes(index)
                        .saturating_add(chunk.len());
                    if bytes > limit {
                        return self.too_large(call, index, limit, bytes);
                    }
                }
                let open = &self.open;
                let handled = self.builder.handle_part_with(index, part, |piece, view| {
                    if let Some(call) = call {
                        let view = StreamView { call, view, open };
                        progress.read(call, piece, &view);
                    }
                });
                if let Err(error) = handled {
                    actions.push(Action::Notice(format!(
                        "ignored a malformed part of the response: {error}"
                    )));
                }
                actions
            }
            StreamEvent::Flush { index } => {
                if self.abandoned.contains(&index) {
                    return Vec::new();
                }
                let call = self.open.remove(&index);
                if let Some(call) = call {
                    let bytes = self.builder.argument_bytes(index);
                    self.whole_bytes.insert(call, bytes);
                    self.received.insert(call, bytes);
                }
                self.builder
                    .handle_flush(index)
                    .map(|flushed| self.flushed(call, flushed))
                    .unwrap_or_default()
            }
            StreamEvent::Finished(reason) => {
                self.finish = Some(reason);
                Vec::new()
            }
            StreamEvent::Usage(usage) => {
                tracing::debug!(?usage, "usage");
                // Providers report counts so far; the last report stands.
                self.usage = Some(usage);
                Vec::new()
            }
            StreamEvent::Notice(text) => vec![Action::Notice(text)],
            StreamEvent::GroupStart => {
                self.grouped = true;
                Vec::new()
            }
            StreamEvent::GroupEnd => self.group_end(),
        }
    }

    /// A group of events is in: the calls declined meanwhile are ended,
    /// and the stream stopped if one of them asked for it and it is still
    /// worth stopping.
    fn group_end(&mut self) -> Vec<Action> {
        self.grouped = false;
        let mut actions = Vec::new();
        for call in std::mem::take(&mut self.deferred) {
            if self.phase != Phase::Streaming {
                return actions;
            }
            actions.extend(self.abandon(call));
        }
        if self.phase == Phase::Streaming
            && let Some(stop) = self.deferred_stop.take()
        {
            actions.extend(self.stop(stop));
        }
        actions
    }

    /// The value of the top-level argument `key` of call number `call`,
    /// once that argument is complete and while the call streams.
    #[must_use]
    pub fn argument(&self, call: usize, key: &str) -> Option<&serde_json::Value> {
        let index = self.index_of(call)?;
        self.builder.argument(index, key)
    }

    /// What has arrived of the arguments of call number `call`, while it
    /// streams: what `v` at its prompt shows.
    #[must_use]
    pub fn arguments_so_far(&self, call: usize) -> Option<jp_conversation::ArgumentsSoFar> {
        let index = self.index_of(call)?;
        self.builder.arguments_so_far(index)
    }

    /// How many bytes of argument text call number `call` has received,
    /// while it streams.
    #[must_use]
    pub fn argument_bytes(&self, call: usize) -> usize {
        self.index_of(call)
            .map_or(0, |index| self.builder.argument_bytes(index))
    }

    /// The calls still streaming, each with the bytes of argument text it
    /// has received.
    pub fn streaming(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.open
            .iter()
            .map(|(&index, &call)| (call, self.builder.argument_bytes(index)))
    }

    /// How many bytes of argument text call number `call` received in all,
    /// once it has ended (or so far, while it streams).
    #[must_use]
    pub fn received_bytes(&self, call: usize) -> usize {
        self.received
            .get(&call)
            .copied()
            .unwrap_or_else(|| self.argument_bytes(call))
    }

    /// The calls other than `call` still streaming: how many, and how many
    /// bytes of arguments they have received together.
    #[must_use]
    pub fn others_streaming(&self, call: usize) -> (usize, usize) {
        self.open
            .iter()
            .filter(|(_, open)| **open != call)
            .fold((0, 0), |(count, bytes), (&index, _)| {
                (count + 1, bytes + self.builder.argument_bytes(index))
            })
    }

    fn index_of(&self, call: usize) -> Option<usize> {
        self.open
            .iter()
            .find_map(|(&index, &open)| (open == call).then_some(index))
    }

    /// Refuses call number `call` (at stream index `index`), whose
    /// arguments would pass `limit` with the chunk just received, and ends
    /// it as declined.
    fn too_large(&mut self, call: usize, index: usize, limit: usize, bytes: usize) -> Vec<Action> {
        let tool = self.builder.tool_name(index).unwrap_or_default().to_owned();
        let mut actions = vec![Action::ArgumentsTooLarge {
            call,
            tool,
            limit,
            bytes,
        }];
        // The refused chunk arrived: the model is told it was cut after it.
        actions.extend(self.abandon_after(call, Some(bytes)));
        actions
    }

    /// Ends call number `call`, declined while it streamed; stops the
    /// stream when no other call is still streaming.
    fn abandon(&mut self, call: usize) -> Vec<Action> {
        self.abandon_after(call, None)
    }

    /// [`abandon`](Self::abandon); `arrived` counts the argument bytes that
    /// arrived when some were not parsed (the chunk that crossed the
    /// limit), else the parsed ones count.
    fn abandon_after(&mut self, call: usize, arrived: Option<usize>) -> Vec<Action> {
        let Some(index) = self.index_of(call) else {
            // Complete already (it arrived whole, or completed before the
            // decline was taken): it is decided the normal way.
            return self.stop_after_whole(call);
        };
        let bytes = arrived.unwrap_or_else(|| self.builder.argument_bytes(index));
        self.received.insert(call, bytes);
        self.open.remove(&index);
        self.abandoned.insert(index);
        let mut actions = Vec::new();
        if let Some(flushed) = self.builder.abandon(index) {
            actions.extend(self.flushed(Some(call), flushed));
        }
        if !self.builder.has_open_calls() {
            // The call as recorded (its id may have been made unique).
            let (call_id, tool) = actions
                .iter()
                .find_map(|action| match action {
                    Action::Record(EventKind::ToolCallRequest(request)) => {
                        Some((request.id.clone(), request.name.clone()))
                    }
                    _ => None,
                })
                .unwrap_or_default();
            let stop = Stop {
                call,
                call_id,
                tool,
                bytes,
                whole: false,
            };
            if self.grouped {
                // The rest of the group has arrived: it is read first.
                self.deferred_stop = Some(stop);
            } else {
                actions.extend(self.stop(stop));
            }
        }
        actions
    }

    /// Stops the stream for a declined call, unless the response has
    /// ended (stopping it would save nothing) or another call still
    /// streams.
    fn stop(&mut self, stop: Stop) -> Vec<Action> {
        if self.finish.is_some() || self.builder.has_open_calls() {
            return Vec::new();
        }
        let Stop {
            call,
            call_id,
            tool,
            bytes,
            whole,
        } = stop;
        // The conversation keeps what the early stop saved.
        let mut actions = vec![
            Action::Record(EventKind::StreamStopped {
                call_id,
                tool: tool.clone(),
                bytes,
                whole,
            }),
            Action::CancelStream {
                call,
                tool,
                bytes,
                whole,
            },
        ];
        actions.extend(self.on_end(None));
        actions
    }

    /// Call number `call`, declined, had arrived whole: the stream stops
    /// after it when nothing else streams and the response goes on. A
    /// response that has ended (Gemini sends a call whole, often with the
    /// response's end) is left to end: stopping it would save nothing.
    fn stop_after_whole(&mut self, call: usize) -> Vec<Action> {
        // Only a call that completed (not one ended while it streamed).
        let Some(&bytes) = self.whole_bytes.get(&call) else {
            return Vec::new();
        };
        let Some((_, request)) = self.calls.iter().find(|(number, _)| *number == call) else {
            return Vec::new();
        };
        let stop = Stop {
            call,
            call_id: request.id.clone(),
            tool: request.name.clone(),
            bytes,
            whole: true,
        };
        self.stop(stop)
    }

    fn flushed(&mut self, call: Option<usize>, flushed: FlushedEvent) -> Vec<Action> {
        match flushed {
            FlushedEvent::Message(content) if content.is_empty() => Vec::new(),
            FlushedEvent::Message(content) => {
                vec![Action::Record(EventKind::AssistantMessage { content })]
            }
            FlushedEvent::Reasoning(content) if content.is_empty() => Vec::new(),
            FlushedEvent::Reasoning(content) => {
                vec![Action::Record(EventKind::AssistantReasoning { content })]
            }
            FlushedEvent::ToolCallRequest(request) => {
                let request = self.unique(request);
                let call = call.unwrap_or_else(|| {
                    // Every call starts before it flushes; a number of its
                    // own keeps it apart all the same.
                    let call = self.next_call;
                    self.next_call += 1;
                    call
                });
                self.calls.push((call, request.clone()));
                vec![
                    Action::Record(EventKind::ToolCallRequest(request.clone())),
                    Action::Decide { call, request },
                ]
            }
        }
    }

    /// `call`, or, when its id is taken, the call under a fresh id and
    /// refused (decision 1's spirit: ambiguity fails closed). Calls and
    /// results are matched by id, so a repeated id could hand one call's
    /// verdict or result to another. The fresh id (`ID-2`) keeps to the
    /// characters providers accept in ids (Anthropic takes letters, digits,
    /// `_` and `-`), since it goes back to the provider with the result.
    fn unique(&mut self, call: ToolCallRequest) -> ToolCallRequest {
        if self.seen_ids.insert(call.id.clone()) {
            return call;
        }
        let fresh = (2..)
            .map(|n| format!("{}-{n}", call.id))
            .find(|id| !self.seen_ids.contains(id))
            .unwrap_or_default();
        self.seen_ids.insert(fresh.clone());
        let error = ArgumentsError::DuplicateId(call.id.clone());
        call.refused_as(fresh, error)
    }

    /// The stream ended; `failure` is how the turn ends if it did not end
    /// well.
    fn on_end(&mut self, failure: Option<TurnEnd>) -> Vec<Action> {
        // Whatever the provider left open: text is kept; calls come back
        // marked truncated, so they are refused, never run.
        let mut actions = Vec::new();
        for (&index, &call) in &self.open {
            self.received
                .insert(call, self.builder.argument_bytes(index));
        }
        for (index, flushed) in self.builder.interrupt_each() {
            let call = self.open.remove(&index);
            actions.extend(self.flushed(call, flushed));
        }
        // What the response used is recorded after what it said.
        actions.extend(self.usage.take().map(Action::Usage));
        if let Some(failure) = failure {
            // A failed response never runs its calls; each gets an
            // "interrupted" response so the conversation stays valid.
            actions.retain(|a| !matches!(a, Action::Decide { .. }));
            use jp_conversation::DecidedBy;
            let (content, by, how) = match failure {
                TurnEnd::Interrupted => (
                    "The call was not run: the user interrupted the turn.",
                    DecidedBy::Interrupted,
                    "the turn was interrupted",
                ),
                TurnEnd::Stopped => (
                    "The call was not run: the user stopped the response.",
                    DecidedBy::Interrupted,
                    "the response was stopped",
                ),
                TurnEnd::CostLimit(_) => (
                    "The call was not run: the query reached its cost budget.",
                    DecidedBy::Jp,
                    "the query reached its cost budget",
                ),
                _ => (
                    "The call was not run: the response failed before it ended.",
                    DecidedBy::Jp,
                    "the response failed",
                ),
            };
            for (call, request) in self.calls.drain(..) {
                actions.push(Action::Unrun {
                    call,
                    response: ToolCallResponse {
                        id: request.id,
                        status: ResponseStatus::Interrupted,
                        content: content.into(),
                        ran: None,
                    },
                    by,
                    how,
                });
            }
            if failure == TurnEnd::Stopped {
                self.phase = Phase::AwaitingReply;
                actions.push(Action::AskReply);
            } else {
                self.phase = Phase::Done;
                actions.push(Action::Finish(failure));
            }
            return actions;
        }
        if !self.calls.is_empty() {
            // Tool-call parts are authoritative, whatever the finish reason.
            self.phase = Phase::RunningTools;
            actions.push(Action::RunTools(self.calls.clone()));
            return actions;
        }
        self.phase = Phase::Done;
        actions.push(Action::Finish(match self.finish {
            Some(FinishReason::MaxTokens) => TurnEnd::MaxTokens,
            _ => TurnEnd::Completed,
        }));
        actions
    }
}

#[cfg(test)]
#[path = "turn_tests.rs"]
mod tests;
