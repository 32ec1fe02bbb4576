//! [`Response`]: streaming one response. The shell that feeds the
//! provider's events to the [`TurnCoordinator`], the pieces of each call's
//! arguments to the renderer and to [`Calls`], and carries out what they
//! return through the [`Session`]: print, record, ask (while the call
//! streams or once it is complete), end a call or the stream.

use std::collections::HashMap;

use futures_util::StreamExt as _;
use futures_util::future::LocalBoxFuture;
use futures_util::stream::FuturesUnordered;
use jp_config::tool::limits::argument_limit;
use jp_conversation::{ConversationEvent, EventKind, ToolCallRequest};
use tokio_util::sync::CancellationToken;

use super::arguments::arguments_page;
use super::calls::{CallInput, CallState, CallStep, Calls};
use super::decision::Verdict;
use super::diff;
use super::pieces::{PieceReader, Read};
use super::session::Session;
use super::signals::{Interrupts, STREAM_MENU, STREAM_MENU_QUESTION, StreamMenu, answer, ctrl_c};
use super::tickets::CallTickets;
use super::tools::Asker;
use super::turn::{Action, Input, TurnCoordinator};
use crate::conversation::{human_bytes, stopped_note};
use jp_term::printer::{Channel, Style, cut};
use jp_term::prompt::Answer as _;
use jp_term::prompt::{PromptError, Prompts};

/// A question open about call number `.0`'s prompt: what answering it
/// tells [`Calls`].
type Pending<'t> = FuturesUnordered<LocalBoxFuture<'t, CallInput<'static>>>;

/// A prompt's request to page call number `.0`'s arguments so far (`v`):
/// the turn holds them, not the prompt, so it answers on `.1`.
type ViewRequest = (usize, tokio::sync::oneshot::Sender<Option<String>>);

/// Streams one response into the turn: holds what is decided about its
/// calls ([`Calls`]) and the shell's side of the questions about them, and
/// carries out what the turn and [`Calls`] return, through the [`Session`]
/// it is handed.
pub struct Response<'t> {
    /// The decisions.
    pub calls: Calls<'t>,
    asker: &'t Asker<'t>,
    prompts: &'t Prompts,
    /// Each call's place in the prompt line, taken when it started.
    tickets: CallTickets<'t>,
    /// Closes the question open about a call while it streams.
    withdraw: HashMap<usize, CancellationToken>,
    /// The questions open.
    pending: Pending<'t>,
    /// Where open questions ask to see a call's arguments so far, and
    /// where the turn reads those requests.
    view_requests: tokio::sync::mpsc::UnboundedSender<ViewRequest>,
    views: tokio::sync::mpsc::UnboundedReceiver<ViewRequest>,
    /// Calls ended while they stream, to end in the turn.
    abandon: Vec<usize>,
    /// The question open about each call while it streams (`Run
    /// CALL(<streaming>)?`), set to the whole call once it is complete.
    questions: HashMap<usize, tokio::sync::watch::Sender<jp_term::prompt::Live>>,
}

impl<'t> Response<'t> {
    /// A response about to stream, its calls decided by `asker`'s judge and put to
    /// the user through `prompts`.
    pub fn new(asker: &'t Asker<'t>, prompts: &'t Prompts) -> Self {
        let (view_requests, views) = tokio::sync::mpsc::unbounded_channel();
        Self {
            calls: Calls::new(asker.judge(), prompts.available()),
            asker,
            prompts,
            tickets: CallTickets::new(prompts),
            withdraw: HashMap::new(),
            pending: FuturesUnordered::new(),
            view_requests,
            views,
            abandon: Vec::new(),
            questions: HashMap::new(),
        }
    }

    /// Waits until every open question is answered, answering the
    /// questions' requests to see a call's arguments meanwhile.
    pub async fn settle_questions(&mut self, session: &Session, turn: &TurnCoordinator) {
        loop {
            tokio::select! {
                settled = self.pending.next() => {
                    let Some(settled) = settled else { break };
                    self.tell(session, settled);
                }
                Some((call, reply)) = self.views.recv() => {
                    let _ = reply.send(self.view(turn, call));
                }
            }
        }
        if self.calls.withdrawn() {
            // A withdrawn question leaves the terminal before anything
            // else is printed below it.
            self.prompts.closed().await;
        }
    }

    /// What `v` at call number `call`'s early question pages: its
    /// arguments as far as they have arrived, or all of them once
    /// complete.
    fn view(&self, turn: &TurnCoordinator, call: usize) -> Option<String> {
        let (name, complete) = self.calls.page_source(call)?;
        let so_far = match complete {
            Some(request) => jp_conversation::ArgumentsSoFar {
                arguments: request.received_arguments().clone(),
                streaming: None,
                complete: true,
            },
            None => turn.arguments_so_far(call)?,
        };
        let mut page = arguments_page(name, &so_far);
        if let Some(Ok(arguments)) = complete.map(ToolCallRequest::arguments)
            && let Some(request) = complete
            && let Some(lines) = self.asker.file_change(&request.id, name, arguments)
        {
            page.push_str(&diff::plain(&lines));
        }
        Some(page)
    }

    /// Streams one response into the turn; returns the actions left for
    /// after the stream (running tools, the next request, the end). Prompts
    /// for its calls wait for the user meanwhile; the stream is read and
    /// shown all along, also while the Ctrl+C menu is open.
    pub async fn stream(
        &mut self,
        session: &mut Session,
        turn: &mut TurnCoordinator,
        interrupts: &mut Interrupts,
    ) -> Result<Vec<Action>, crate::error::Error> {
        let cancel = interrupts.cancel.clone();
        let prompts = self.prompts;
        // The calls before this response have run: diffs are taken
        // against the files as they are now.
        self.asker.new_response();
        let (model, window) = session.window();
        // A request larger than the model reads (once compacted, if it
        // can be) is not sent: the turn ends as if the provider had
        // refused it, in the words it would get.
        let mut stream = match super::fit::fitted_request(session, &cancel).await? {
            Err(refusal) => {
                let refused: jp_llm::EventStream = Box::pin(futures_util::stream::iter([Err(
                    jp_llm::ProviderError::TooLarge(refusal),
                )]));
                refused
            }
            Ok(request) => session.provider.stream(request),
        };
        if let Some(budget) = &mut session.budget {
            budget.start_response();
        }
        let mut after = Vec::new();
        let mut menu: Option<LocalBoxFuture<'t, Result<char, PromptError>>> = None;
        loop {
            let input = tokio::select! {
                // An interrupt wins over events already waiting.
                biased;
                () = cancel.cancelled() => Input::Interrupted,
                Some(()) = interrupts.menu.recv() => {
                    ctrl_c(&mut menu, &cancel, || prompts.urgent(STREAM_MENU_QUESTION, &STREAM_MENU));
                    continue;
                }
                choice = answer(&mut menu), if menu.is_some() => {
                    drop(menu.take());
                    match StreamMenu::of(choice) {
                        Ok(StreamMenu::Continue) => continue,
                        Ok(StreamMenu::Stop) => Input::Stopped,
                        // `a`, or Ctrl+C at the menu.
                        Ok(StreamMenu::Abort) | Err(_) => {
                            cancel.cancel();
                            continue;
                        }
                    }
                }
                Some((call, reply)) = self.views.recv() => {
                    let _ = reply.send(self.view(turn, call));
                    continue;
                }
                Some(settled) = self.pending.next(), if !self.pending.is_empty() => {
                    self.tell(session, settled);
                    match self.abandon.pop() {
                        Some(call) => Input::Abandon { call },
                        None => continue,
                    }
                }
                item = stream.next() => match item {
                    Some(Ok(event)) => Input::Event(event),
                    Some(Err(error)) => {
                        let error = super::window::reword(error, &model, window);
                        // A first request refused as too large is not
                        // sent again by the next query.
                        if matches!(error, jp_llm::ProviderError::TooLarge(_)) {
                            super::fit::take_back_refused(session)?;
                        }
                        Input::StreamFailed(error)
                    }
                    None => Input::StreamEnded,
                },
            };
            let over = match &input {
                Input::Event(event) => session.budget.as_mut().and_then(|b| b.on_event(event)),
                _ => None,
            };
            let event = matches!(input, Input::Event(_));
            let mut ends = self.take_input(session, turn, input, &mut after)?;
            if event {
                progress(session, turn);
            }
            if let Some(over) = over
                && !ends
            {
                // Closing the stream stops generation and billing.
                ends = self.take_input(session, turn, Input::BudgetReached(over), &mut after)?;
            }
            if ends {
                // Every call of the response is decided or answered now; a
                // place still reserved would hold up the prompts to come
                // (a tool's question, the reply).
                self.tickets.release_all();
                if after
                    .iter()
                    .any(|a| matches!(a, Action::Finish(_) | Action::AskReply))
                {
                    // The response failed, or was interrupted or stopped:
                    // its calls are answered already; their prompts close,
                    // and what the turn prints next (why it ended) waits
                    // until they have, so it is not drawn above a prompt
                    // that then stays on screen, unanswered, below it.
                    self.pending.clear();
                    drop(menu.take());
                    prompts.closed().await;
                }
                // The next response, or the chrome after this one, starts on
                // a line of its own.
                session.printer.finish_content();
                return Ok(after);
            }
        }
    }

    /// Hands `input` to the turn, and the calls it ends while they stream
    /// after it; carries out what the turn returns, keeping in `after`
    /// what waits for the stream's end. Whether the stream ends here.
    fn take_input(
        &mut self,
        session: &mut Session,
        turn: &mut TurnCoordinator,
        input: Input,
        after: &mut Vec<Action>,
    ) -> Result<bool, crate::error::Error> {
        let mut inputs = vec![input];
        let mut ends = false;
        while let Some(input) = inputs.pop() {
            // On an interrupt, a stop or a cancel, leaving the stream's
            // loop drops the stream, which closes the connection: that
            // stops generation and billing.
            ends |= !matches!(input, Input::Event(_) | Input::Abandon { .. });
            let mut reader = PieceReader::new(&mut self.calls, session);
            let actions = turn.handle_reading(input, &mut reader);
            let read = reader.read;
            self.carry_out(session, read);
            for action in actions {
                if let Action::ToolCallStarted { call, name, .. } = &action {
                    let limit = argument_limit(&session.config.conversation.tools, name);
                    turn.limit_arguments(*call, usize::try_from(limit.bytes).unwrap_or(usize::MAX));
                }
                match action {
                    Action::RunTools(_)
                    | Action::Request { .. }
                    | Action::AskReply
                    | Action::Finish(_) => after.push(action),
                    Action::CancelStream {
                        call,
                        tool,
                        bytes,
                        whole,
                    } => {
                        ends = true;
                        self.stopped_stream(session, call, &tool, bytes, whole);
                    }
                    other => self.perform(session, other, turn)?,
                }
            }
            inputs.extend(self.abandon.drain(..).map(|call| Input::Abandon { call }));
        }
        Ok(ends)
    }

    /// The stream was closed early because call number `call`, declined,
    /// was the last one streaming (`whole`: had arrived whole): say so, to
    /// the user and the model.
    fn stopped_stream(
        &mut self,
        session: &Session,
        call: usize,
        tool: &str,
        bytes: usize,
        whole: bool,
    ) {
        let told = if whole {
            " jp stopped your response after this call.".to_owned()
        } else if bytes == 0 {
            " jp stopped your response before this call's arguments.".to_owned()
        } else {
            format!(
                " jp stopped your response after {} of this call's arguments.",
                human_bytes(bytes)
            )
        };
        session.printer.chrome_line(
            Style::Dim,
            &format!("  {}", stopped_note(tool, bytes, whole)),
        );
        self.calls.tell_model(call, &told);
    }

    /// Carries out an action of the turn that needs no waiting.
    pub fn perform(
        &mut self,
        session: &mut Session,
        action: Action,
        turn: &TurnCoordinator,
    ) -> Result<(), crate::error::Error> {
        match action {
            Action::Text(text) => {
                if let Some(stream) = &session.events {
                    stream.text(&text);
                }
                session.printer.write(Channel::Content, &text);
            }
            Action::Reasoning(text) => {
                if let Some(stream) = &session.events {
                    stream.reasoning(&text);
                }
                if session.config.style.show_reasoning {
                    session.printer.chrome_text(Style::Dim, &text);
                }
            }
            Action::Notice(text) => session.printer.chrome_line(Style::Warn, &text),
            Action::ToolCallStarted { call, id, name } => {
                tracing::debug!(%id, %name, "tool call started");
                if let Some(stream) = &session.events {
                    stream.call_started(call, &id, &name);
                }
                if !session.hidden(&name)
                    && let Some(renderer) = &mut session.renderer
                {
                    let lines = renderer.start(&id, &name, self.asker.judge().default_tool(&name));
                    session.print_lines(lines);
                }
                let known = |key: &str| turn.argument(call, key);
                let state = CallState {
                    argument: &known,
                    bytes: 0,
                    others: turn.others_streaming(call),
                };
                let steps = self.calls.handle(CallInput::Started {
                    call,
                    id,
                    name,
                    state: &state,
                });
                self.apply(session, steps);
            }
            Action::ArgumentProgress { call, progress } => {
                let known = |key: &str| turn.argument(call, key);
                let state = CallState {
                    argument: &known,
                    bytes: turn.argument_bytes(call),
                    others: turn.others_streaming(call),
                };

                let mut reader = PieceReader::new(&mut self.calls, session);
                reader.take(call, progress.view(), &state);
                let read = reader.read;
                self.carry_out(session, read);
            }
            Action::ArgumentsTooLarge {
                call,
                tool,
                limit,
                bytes,
            } => {
                tracing::debug!(call, %tool, limit, bytes, "arguments over the limit");
                let steps = self.calls.handle(CallInput::TooLarge {
                    call,
                    tool,
                    limit,
                    bytes,
                });
                self.apply(session, steps);
            }
            Action::Record(kind) => session.record(kind)?,
            Action::Unrun {
                call,
                response,
                by,
                how,
            } => self.unrun(session, turn, call, response, (by, how))?,
            Action::Usage(usage) => session.record_usage(usage)?,
            Action::Decide { call, request } => {
                if self.calls.ended_early(call) {
                    // jp ended it while it streamed: what arrived is shown
                    // without calling it truncated (the model did not
                    // stop; jp stopped reading).
                    session.show_call(&request.as_received());
                } else {
                    session.show_call(&request);
                    session.show_change(&request, self.asker);
                }
                // A question open about it shows the whole call now.
                if let Some(question) = self.questions.remove(&call)
                    && let Ok(arguments) = request.arguments()
                {
                    question.send_replace(self.asker.settled_question(&request.name, arguments));
                }
                let bytes = turn.received_bytes(call);
                let steps = self.calls.handle(CallInput::Complete {
                    call,
                    request,
                    bytes,
                });
                self.apply(session, steps);
            }
            Action::Request { .. }
            | Action::RunTools(_)
            | Action::AskReply
            | Action::Finish(_)
            | Action::CancelStream { .. } => {}
        }
        Ok(())
    }

    /// Records that call number `call` of a response that did not end well
    /// never runs: how it was decided, ended `ended` (who, how), then its
    /// `response`.
    fn unrun(
        &mut self,
        session: &mut Session,
        turn: &TurnCoordinator,
        call: usize,
        response: jp_conversation::ToolCallResponse,
        ended: (jp_conversation::DecidedBy, &str),
    ) -> Result<(), jp_conversation::StoreError> {
        let mut trail = self.calls.take_trail(call);
        trail.bytes = trail.bytes.max(turn.received_bytes(call));
        trail.overrule(ended.0, Some(ended.1));
        let tool = self.calls.tool_of(call).unwrap_or_default();
        let decision = trail.record(&response.id, tool, &|i| {
            super::trail::rule_source(&session.loaded, tool, i)
        });
        session.append([
            ConversationEvent::now(EventKind::CallDecision(decision)),
            ConversationEvent::now(EventKind::ToolCallResponse(response)),
        ])
    }

    /// Carries out what a [`PieceReader`] read, in order.
    fn carry_out(&mut self, session: &Session, read: Vec<Read>) {
        for read in read {
            match read {
                Read::Lines(lines) => session.print_lines(lines),
                Read::Steps(steps) => self.apply(session, steps),
            }
        }
    }

    /// What a question settled (`settled`, a [`CallInput`] without
    /// borrows), handed to [`Calls`].
    pub fn tell(&mut self, session: &Session, settled: CallInput<'static>) {
        let steps = self.calls.handle(settled);
        self.apply(session, steps);
    }

    /// Carries out what [`Calls`] asked for.
    fn apply(&mut self, session: &Session, steps: Vec<CallStep>) {
        for step in steps {
            match step {
                CallStep::Reserve(call) => self.tickets.reserve(call),
                CallStep::Release(call) => self.tickets.release(call),
                CallStep::Withdraw(call) => {
                    if let Some(withdrawn) = self.withdraw.remove(&call) {
                        withdrawn.cancel();
                    }
                }
                CallStep::Abandon(call) => self.abandon.push(call),
                CallStep::Settled(call) => {
                    if let Some(verdict) = self.calls.verdict(call) {
                        session.show_verdict(verdict);
                        let id = match verdict {
                            Verdict::NotRun { response, .. } => Some(response.id.as_str()),
                            Verdict::Run { .. } => self
                                .calls
                                .page_source(call)
                                .and_then(|(_, request)| request)
                                .map(|request| request.id.as_str()),
                        };
                        if let Some(id) = id {
                            self.asker.settled(id, verdict);
                        }
                        if let Some(stream) = &session.events
                            && let Some((id, tool)) = self.calls.recorded(call)
                        {
                            let record = self.calls.trail_so_far(call).record(id, tool, &|i| {
                                super::trail::rule_source(&session.loaded, tool, i)
                            });
                            stream.decided(&record, matches!(verdict, Verdict::Run { .. }));
                        }
                    }
                }
                CallStep::Ask { call, ask } => {
                    // The place in line taken when the call started.
                    let ticket = self.tickets.take(call);
                    let asker = self.asker;
                    self.pending.push(Box::pin(async move {
                        let verdict = asker.confirm(ask, ticket).await;
                        CallInput::Confirmed { call, verdict }
                    }));
                }
                CallStep::AskEarly {
                    call,
                    id,
                    name,
                    decision,
                    notes,
                } => {
                    let shown = session
                        .renderer
                        .as_ref()
                        .and_then(|r| r.prompt_summary(&id))
                        .unwrap_or_else(|| format!("{name}(<streaming>)"));
                    let (question, live) = tokio::sync::watch::channel(Asker::early_question(
                        &cut(&shown, 160),
                        &self.asker.judge().reach(&name),
                        self.asker.judge().held(&name).is_none(),
                    ));
                    self.questions.insert(call, question);
                    // The place in line taken when the call started.
                    let ticket = self.tickets.take(call);
                    let views = self.view_requests.clone();
                    let withdrawn = CancellationToken::new();
                    self.withdraw.insert(call, withdrawn.clone());
                    let asker = self.asker;
                    self.pending.push(Box::pin(async move {
                        // `v`: the turn sends the arguments so far.
                        let view = || {
                            let views = views.clone();
                            async move {
                                let (reply, answer) = tokio::sync::oneshot::channel();
                                views.send((call, reply)).ok()?;
                                answer.await.ok().flatten()
                            }
                        };
                        tokio::select! {
                            answer = asker.confirm_early(&id, &name, &live, decision, &notes, ticket, view) => {
                                CallInput::Answered { call, answer }
                            }
                            () = withdrawn.cancelled() => CallInput::Withdrawn,
                        }
                    }));
                }
            }
        }
    }
}

/// Writes how far the calls still streaming have come to the event
/// stream, if there is one (at most every `PROGRESS_EVERY` a call).
fn progress(session: &Session, turn: &TurnCoordinator) {
    if let Some(stream) = &session.events {
        let now = std::time::Instant::now();
        for (call, bytes) in turn.streaming() {
            stream.progress(call, bytes, now);
        }
    }
}
