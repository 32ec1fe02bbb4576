//! Streaming one response: the shell that feeds the provider's events to
//! the [`TurnCoordinator`], the pieces of each call's arguments to the
//! renderer and to [`Calls`], and carries out what they return: print,
//! record, ask (while the call streams or once it is complete), end a call
//! or the stream.

use std::collections::HashMap;

use futures_util::StreamExt as _;
use futures_util::future::LocalBoxFuture;
use futures_util::stream::FuturesUnordered;
use jp_config::tool::limits::argument_limit;
use jp_conversation::{ProgressRef, ToolCallRequest};
use tokio_util::sync::CancellationToken;

use super::arguments::{arguments_page, received_arguments_line};
use super::calls::{CallInput, CallState, CallStep, Calls};
use super::decision::Verdict;
use super::session::Session;
use super::signals::{Interrupts, STREAM_MENU, STREAM_MENU_QUESTION, StreamMenu, answer, ctrl_c};
use super::tickets::CallTickets;
use super::tools::Asker;
use super::tools::allow::SESSION_APPROVED;
use super::turn::{Action, Input, TurnCoordinator};
use super::{diff, render};
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

/// One response's calls: what is decided about them ([`Calls`]), and the
/// shell's side of the questions about them.
pub struct Response<'t> {
    /// The decisions.
    pub calls: Calls<'t>,
    tools: &'t Asker<'t>,
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
    /// A response about to stream, its calls decided by `tools` and put to
    /// the user through `prompts`.
    pub fn new(tools: &'t Asker<'t>, prompts: &'t Prompts) -> Self {
        let (view_requests, views) = tokio::sync::mpsc::unbounded_channel();
        Self {
            calls: Calls::new(tools.judge(), prompts.available()),
            tools,
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
                    session.tell(self, settled);
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
            && let Some(lines) = self.tools.file_change(&request.id, name, arguments)
        {
            page.push_str(&diff::plain(&lines));
        }
        Some(page)
    }
}

impl Session {
    /// Streams one response into the turn; returns the actions left for
    /// after the stream (running tools, the next request, the end). Prompts
    /// for its calls wait for the user meanwhile; the stream is read and
    /// shown all along, also while the Ctrl+C menu is open.
    pub async fn stream_response<'t>(
        &mut self,
        turn: &mut TurnCoordinator,
        response: &mut Response<'t>,
        interrupts: &mut Interrupts,
    ) -> Result<Vec<Action>, crate::error::Error> {
        let cancel = interrupts.cancel.clone();
        let prompts = response.prompts;
        // The calls before this response have run: diffs are taken
        // against the files as they are now.
        response.tools.new_response();
        let request = self.request();
        let (model, window) = self.window();
        // A request larger than the model reads is not sent: the turn ends
        // as if the provider had refused it, in the words it would get.
        let mut stream = match super::window::refuse_before_sending(&request, &model, window) {
            Some(refusal) => {
                let refused: jp_llm::EventStream = Box::pin(futures_util::stream::iter([Err(
                    jp_llm::ProviderError::TooLarge(refusal),
                )]));
                refused
            }
            None => self.provider.stream(request),
        };
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
                Some((call, reply)) = response.views.recv() => {
                    let _ = reply.send(response.view(turn, call));
                    continue;
                }
                Some(settled) = response.pending.next(), if !response.pending.is_empty() => {
                    self.tell(response, settled);
                    match response.abandon.pop() {
                        Some(call) => Input::Abandon { call },
                        None => continue,
                    }
                }
                item = stream.next() => match item {
                    Some(Ok(event)) => Input::Event(event),
                    Some(Err(error)) => {
                        Input::StreamFailed(super::window::reword(error, &model, window))
                    }
                    None => Input::StreamEnded,
                },
            };
            let ends = self.take_input(turn, response, input, &mut after)?;
            if ends {
                // Every call of the response is decided or answered now; a
                // place still reserved would hold up the prompts to come
                // (a tool's question, the reply).
                response.tickets.release_all();
                if after
                    .iter()
                    .any(|a| matches!(a, Action::Finish(_) | Action::AskReply))
                {
                    // The response failed, or was interrupted or stopped:
                    // its calls are answered already; their prompts close,
                    // and what the turn prints next (why it ended) waits
                    // until they have, so it is not drawn above a prompt
                    // that then stays on screen, unanswered, below it.
                    response.pending.clear();
                    drop(menu.take());
                    prompts.closed().await;
                }
                // The next response, or the chrome after this one, starts on
                // a line of its own.
                self.printer.finish_content();
                return Ok(after);
            }
        }
    }

    /// Hands `input` to the turn, and the calls it ends while they stream
    /// after it; carries out what the turn returns, keeping in `after`
    /// what waits for the stream's end. Whether the stream ends here.
    fn take_input(
        &mut self,
        turn: &mut TurnCoordinator,
        response: &mut Response<'_>,
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
            let actions = turn.handle_with(input, &mut |call, progress, view| {
                let known = |key: &str| view.argument(key);
                let state = CallState {
                    argument: &known,
                    bytes: view.argument_bytes(),
                    others: view.others_streaming(),
                };
                self.on_progress(call, progress, &state, response);
            });
            for action in actions {
                if let Action::ToolCallStarted { call, name, .. } = &action {
                    let limit = argument_limit(&self.config.conversation.tools, name);
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
                        self.stopped_stream(&mut response.calls, call, &tool, bytes, whole);
                    }
                    other => self.perform(other, response, turn)?,
                }
            }
            inputs.extend(
                response
                    .abandon
                    .drain(..)
                    .map(|call| Input::Abandon { call }),
            );
        }
        Ok(ends)
    }

    /// The stream was closed early because call number `call`, declined,
    /// was the last one streaming (`whole`: had arrived whole): say so, to
    /// the user and the model.
    fn stopped_stream(
        &self,
        calls: &mut Calls<'_>,
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
        self.printer.chrome_line(
            Style::Dim,
            &format!("  {}", stopped_note(tool, bytes, whole)),
        );
        calls.tell_model(call, &told);
    }

    /// Carries out an action of the turn that needs no waiting.
    pub fn perform(
        &mut self,
        action: Action,
        response: &mut Response<'_>,
        turn: &TurnCoordinator,
    ) -> Result<(), crate::error::Error> {
        match action {
            Action::Text(text) => self.printer.write(Channel::Content, &text),
            Action::Reasoning(text) => {
                if self.config.style.show_reasoning {
                    self.printer.chrome_text(Style::Dim, &text);
                }
            }
            Action::Notice(text) => self.printer.chrome_line(Style::Warn, &text),
            Action::ToolCallStarted { call, id, name } => {
                tracing::debug!(%id, %name, "tool call started");
                if !self.hidden(&name)
                    && let Some(renderer) = &mut self.renderer
                {
                    let lines = renderer.start(&id, &name);
                    self.print_lines(lines);
                }
                let known = |key: &str| turn.argument(call, key);
                let state = CallState {
                    argument: &known,
                    bytes: 0,
                    others: turn.others_streaming(call),
                };
                let steps = response.calls.handle(CallInput::Started {
                    call,
                    id,
                    name,
                    state: &state,
                });
                self.apply(steps, response);
            }
            Action::ArgumentProgress { call, progress } => {
                let known = |key: &str| turn.argument(call, key);
                let state = CallState {
                    argument: &known,
                    bytes: turn.argument_bytes(call),
                    others: turn.others_streaming(call),
                };
                self.on_progress(call, progress.view(), &state, response);
            }
            Action::ArgumentsTooLarge {
                call,
                tool,
                limit,
                bytes,
            } => {
                tracing::debug!(call, %tool, limit, bytes, "arguments over the limit");
                let steps = response
                    .calls
                    .handle(CallInput::TooLarge { call, tool, limit });
                self.apply(steps, response);
            }
            Action::Record(kind) => self.record(kind)?,
            Action::Usage(usage) => self.record_usage(usage)?,
            Action::Decide { call, request } => {
                if response.calls.ended_early(call) {
                    // jp ended it while it streamed: what arrived is shown
                    // without calling it truncated (the model did not
                    // stop; jp stopped reading).
                    self.show_call(&request.as_received());
                } else {
                    self.show_call(&request);
                    self.show_change(&request, response.tools);
                }
                // A question open about it shows the whole call now.
                if let Some(question) = response.questions.remove(&call)
                    && let Ok(arguments) = request.arguments()
                {
                    question
                        .send_replace(response.tools.settled_question(&request.name, arguments));
                }
                let steps = response.calls.handle(CallInput::Complete { call, request });
                self.apply(steps, response);
            }
            Action::Request { .. }
            | Action::RunTools(_)
            | Action::AskReply
            | Action::Finish(_)
            | Action::CancelStream { .. } => {}
        }
        Ok(())
    }

    /// A piece of call number `call`'s arguments arrived: show it, and
    /// hand it to [`Calls`]. `state` is the call as it is after this
    /// piece. Nothing of the piece is kept past this call (issue 14).
    fn on_progress<'p>(
        &mut self,
        call: usize,
        progress: ProgressRef<'p>,
        state: &'p CallState<'p>,
        response: &mut Response<'_>,
    ) {
        tracing::trace!(?progress, "argument progress");
        if !self.hidden(progress.tool_name)
            && let Some(renderer) = &mut self.renderer
        {
            let lines = renderer.progress_ref(progress);
            self.print_lines(lines);
        }
        let steps = response.calls.handle(CallInput::Piece {
            call,
            progress,
            state,
        });
        self.apply(steps, response);
    }

    /// What a question settled (`settled`, a [`CallInput`] without
    /// borrows), handed to [`Calls`].
    pub fn tell(&self, response: &mut Response<'_>, settled: CallInput<'static>) {
        let steps = response.calls.handle(settled);
        self.apply(steps, response);
    }

    /// Carries out what [`Calls`] asked for.
    fn apply<'t>(&self, steps: Vec<CallStep>, response: &mut Response<'t>) {
        for step in steps {
            match step {
                CallStep::Reserve(call) => response.tickets.reserve(call),
                CallStep::Release(call) => response.tickets.release(call),
                CallStep::Withdraw(call) => {
                    if let Some(withdrawn) = response.withdraw.remove(&call) {
                        withdrawn.cancel();
                    }
                }
                CallStep::Abandon(call) => response.abandon.push(call),
                CallStep::Settled(call) => {
                    if let Some(verdict) = response.calls.verdict(call) {
                        self.show_verdict(verdict);
                        let id = match verdict {
                            Verdict::NotRun { response, .. } => Some(response.id.as_str()),
                            Verdict::Run { .. } => response
                                .calls
                                .page_source(call)
                                .and_then(|(_, request)| request)
                                .map(|request| request.id.as_str()),
                        };
                        if let Some(id) = id {
                            response.tools.settled(id, verdict);
                        }
                    }
                }
                CallStep::Ask { call, ask } => {
                    // The place in line taken when the call started.
                    let ticket = response.tickets.take(call);
                    let tools = response.tools;
                    response.pending.push(Box::pin(async move {
                        let verdict = tools.confirm(ask, ticket).await;
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
                    let shown = self
                        .renderer
                        .as_ref()
                        .and_then(|r| r.prompt_summary(&id))
                        .unwrap_or_else(|| format!("{name}(<streaming>)"));
                    let (question, live) =
                        tokio::sync::watch::channel(Asker::early_question(&cut(&shown, 160)));
                    response.questions.insert(call, question);
                    // The place in line taken when the call started.
                    let ticket = response.tickets.take(call);
                    let views = response.view_requests.clone();
                    let withdrawn = CancellationToken::new();
                    response.withdraw.insert(call, withdrawn.clone());
                    let tools = response.tools;
                    response.pending.push(Box::pin(async move {
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
                            answer = tools.confirm_early(&id, &name, &live, decision, &notes, ticket, view) => {
                                CallInput::Answered { call, answer }
                            }
                            () = withdrawn.cancelled() => CallInput::Withdrawn,
                        }
                    }));
                }
            }
        }
    }

    /// Whether calls of `tool` are hidden (`style.hidden`).
    pub fn hidden(&self, tool: &str) -> bool {
        self.config
            .conversation
            .tools
            .get(tool)
            .and_then(|t| t.style.hidden)
            .unwrap_or(false)
    }

    fn print_lines(&self, lines: Vec<render::Line>) {
        if lines.is_empty() {
            return;
        }
        self.printer.finish_content();
        for line in lines {
            self.printer.chrome_line(line.style, &line.text);
        }
    }

    /// The call, before it is decided (so a prompt follows it): on a
    /// terminal the rest of what streamed, in a log one line.
    fn show_call(&mut self, call: &ToolCallRequest) {
        self.printer.finish_content();
        if let Some(renderer) = &mut self.renderer {
            let lines = renderer.finish(call);
            if !self.hidden(&call.name) {
                self.print_lines(lines);
            }
            return;
        }
        if self.hidden(&call.name) {
            return;
        }
        let args = received_arguments_line(call, 100);
        self.printer.chrome_line(
            Style::Header,
            &format!("Calling tool {}({args})", call.name),
        );
    }

    /// On a terminal, below a complete call's arguments: the diff of the
    /// file change it would make (jp's `fs_modify_file`), wrapped and
    /// capped like the arguments.
    fn show_change(&self, call: &ToolCallRequest, tools: &Asker<'_>) {
        let style = &self.config.style.tool_call;
        let Some(renderer) = &self.renderer else {
            return;
        };
        if !style.show_arguments || self.hidden(&call.name) {
            return;
        }
        let Ok(arguments) = call.arguments() else {
            return;
        };
        if let Some(lines) = tools.file_change(&call.id, &call.name, arguments) {
            let lines = render::wrap_words(lines, renderer.width());
            self.print_lines(diff::capped(lines, style.call_lines as usize));
        }
    }

    fn show_verdict(&self, verdict: &Verdict) {
        match verdict {
            Verdict::Run {
                tool,
                mode,
                reason,
                approved,
                ..
            } => {
                if !self.hidden(tool) {
                    let how = if reason.starts_with(SESSION_APPROVED) {
                        reason.clone()
                    } else if *approved {
                        format!("approved ({mode}: {reason})")
                    } else {
                        format!("{mode} ({reason})")
                    };
                    self.printer.chrome_line(Style::Dim, &format!("  {how}"));
                }
            }
            Verdict::NotRun { note, .. } => {
                self.printer.chrome_line(Style::Warn, &format!("  {note}"));
            }
        }
    }
}
