//! [`Calls`]: what is decided about each call of one response, as a pure
//! machine beside the [`TurnCoordinator`](super::turn::TurnCoordinator).
//!
//! The turn says when a call starts, when a piece of its arguments arrives
//! and when it is complete; prompts say what the user answered. Each is a
//! [`CallInput`]; [`Calls::handle`] returns the [`CallStep`]s the shell
//! carries out, in order: hold or give up a call's place in the prompt
//! line, put a question to the user (while the call streams, or once it is
//! complete), close a question no longer wanted, end a call in the turn
//! (which stops the stream when it was the last one streaming), show a
//! verdict. Whether a call may run is the [`Judge`]'s to say
//! (policies read config and what ran before; they do no I/O); what to do
//! with that, and when, is this machine's. It keeps, by the call's number
//! in the response (never its id, which a provider could repeat):
//!
//! - the early state of each call while it streams ([`Early`]);
//! - the verdict of each call, for the shell's `RunTools` ([`Verdict`]);
//! - the stateful denials to record with a call's response;
//! - which calls have a question open, so a refusal can withdraw it.
//!
//! What the stages of a decision are called, from a policy's `Decision` to
//! the verdict and what running the call gave, is in [`super::decision`].

use std::collections::{HashMap, HashSet};

use jp_conversation::{ProgressRef, ToolCallRequest};
use jp_policy::stateful::Denial;
use jp_policy::{Decision, Mode};
use serde_json::Value;

use super::decision::{Answer, Ask, Decided, Early, Verdict, denied};
use super::tools::Judge;
use super::trail::Trail;
use jp_conversation::DecidedBy;

/// A streaming call as it is after a piece of its arguments: what the turn
/// knows of it, read without the turn (which is busy parsing while the
/// piece is handed out).
pub struct CallState<'a> {
    /// A completed top-level argument's value.
    pub argument: &'a dyn Fn(&str) -> Option<&'a Value>,
    /// Bytes of argument text received.
    pub bytes: usize,
    /// The other calls still streaming and their bytes.
    pub others: (usize, usize),
}

/// What [`Calls`] is told.
pub enum CallInput<'a> {
    /// Call number `call` started streaming.
    Started {
        /// The call's number in the response.
        call: usize,
        /// Its id.
        id: String,
        /// Its tool.
        name: String,
        /// The call as it is (nothing of its arguments has arrived).
        state: &'a CallState<'a>,
    },
    /// A piece of call number `call`'s arguments arrived.
    Piece {
        /// The call's number.
        call: usize,
        /// The piece.
        progress: ProgressRef<'a>,
        /// The call as it is after the piece.
        state: &'a CallState<'a>,
    },
    /// Call number `call`'s arguments grew past `limit` bytes.
    TooLarge {
        /// The call's number.
        call: usize,
        /// Its tool.
        tool: String,
        /// The limit, in bytes.
        limit: usize,
        /// The bytes that had arrived, past the limit.
        bytes: usize,
    },
    /// Call number `call` is complete: decide it.
    Complete {
        /// The call's number.
        call: usize,
        /// The call.
        request: ToolCallRequest,
        /// The bytes of its arguments that arrived.
        bytes: usize,
    },
    /// The question put while call number `call` streamed was answered.
    Answered {
        /// The call's number.
        call: usize,
        /// The answer.
        answer: Answer,
    },
    /// The question put about complete call number `call` was answered.
    Confirmed {
        /// The call's number.
        call: usize,
        /// The verdict the answer makes.
        verdict: Verdict,
    },
    /// A question was closed unanswered (the call was refused meanwhile).
    Withdrawn,
}

/// What [`Calls`] asks the shell to do.
#[derive(Debug)]
pub enum CallStep {
    /// Hold a place in the prompt line for call number `.0` (it started:
    /// prompts show in call order, however the calls are decided).
    Reserve(usize),
    /// Call number `.0` will not ask in its place: the calls after it need
    /// not wait for it.
    Release(usize),
    /// Ask whether to run call number `call` while its arguments stream,
    /// in its place in line, and send the answer back as
    /// [`CallInput::Answered`] (or [`CallInput::Withdrawn`] when the
    /// question is closed by [`CallStep::Withdraw`]).
    AskEarly {
        /// The call's number.
        call: usize,
        /// Its id.
        id: String,
        /// Its tool.
        name: String,
        /// The decision that asks.
        decision: Decision,
        /// What the question says of the path arguments that arrived
        /// ([`Judge::path_notes`]).
        notes: Vec<String>,
    },
    /// Put complete call number `call` to the user, in its place in line,
    /// and send the verdict back as [`CallInput::Confirmed`].
    Ask {
        /// The call's number.
        call: usize,
        /// The question.
        ask: Ask,
    },
    /// Close the question open about call number `.0`, unanswered.
    Withdraw(usize),
    /// End call number `.0` in the turn (it will not run): the turn's
    /// `Input::Abandon`.
    Abandon(usize),
    /// Call number `.0`'s verdict is known ([`Calls::verdict`]): show it.
    Settled(usize),
}

/// What is decided about the calls of one response (see the module).
pub struct Calls<'t> {
    judge: &'t Judge<'t>,
    /// Whether anyone can be asked.
    can_ask: bool,
    /// Each started call's id and tool.
    started: HashMap<usize, (String, String)>,
    /// What was decided while a call streamed.
    early: HashMap<usize, Early>,
    /// Calls whose arguments completed while their early question is open.
    complete: HashMap<usize, ToolCallRequest>,
    /// The verdicts, for `RunTools`.
    verdicts: HashMap<usize, Verdict>,
    /// Calls with a question open while they stream.
    asking: HashSet<usize>,
    /// Whether a question was withdrawn: it leaves the terminal on its own
    /// thread, so what the turn prints next waits for it.
    withdrawn: bool,
    /// Calls a stateful policy denied before they were put to the user,
    /// recorded (as `policy_denied`) with their response.
    denials: HashMap<usize, Denial>,
    /// How each call is being decided, for its record.
    trails: HashMap<usize, Trail>,
    /// Each complete call's id and tool, as recorded.
    recorded: HashMap<usize, (String, String)>,
}

impl<'t> Calls<'t> {
    /// No calls yet; `judge` decides, and `can_ask` says whether a question
    /// can be put to anyone.
    #[must_use]
    pub fn new(judge: &'t Judge<'t>, can_ask: bool) -> Self {
        Self {
            judge,
            can_ask,
            started: HashMap::new(),
            early: HashMap::new(),
            complete: HashMap::new(),
            verdicts: HashMap::new(),
            asking: HashSet::new(),
            withdrawn: false,
            denials: HashMap::new(),
            trails: HashMap::new(),
            recorded: HashMap::new(),
        }
    }

    /// Takes `input`; returns what the shell does about it, in order.
    pub fn handle(&mut self, input: CallInput<'_>) -> Vec<CallStep> {
        let mut steps = Vec::new();
        match input {
            CallInput::Started {
                call,
                id,
                name,
                state,
            } => self.started(call, id, name, state, &mut steps),
            CallInput::Piece {
                call,
                progress,
                state,
            } => self.piece(call, progress, state, &mut steps),
            CallInput::TooLarge {
                call,
                tool,
                limit,
                bytes,
            } => {
                let id = self
                    .started
                    .get(&call)
                    .map(|(id, _)| id.clone())
                    .unwrap_or_default();
                let verdict = self.judge.too_large(&id, &tool, limit);
                self.trail(call).refused(bytes, "arguments over the limit");
                // The call is ended next (the turn does it), and its
                // completion takes this answer.
                self.refuse(call, verdict, &mut steps);
            }
            CallInput::Complete {
                call,
                request,
                bytes,
            } => {
                self.trail(call).bytes = bytes;
                self.recorded
                    .insert(call, (request.id.clone(), request.name.clone()));
                let early = match self.early.remove(&call) {
                    Some(Early::Asking) => {
                        // The answer decides, when it comes.
                        self.complete.insert(call, request);
                        return steps;
                    }
                    Some(Early::Answered(answer)) => Some(answer),
                    Some(Early::Decided(decision) | Early::Held(decision)) => {
                        Some(Answer::Policy(decision))
                    }
                    Some(Early::Watching(_)) | None => None,
                };
                let decided = self.decide(call, &request, early);
                self.decided(call, decided, &mut steps);
            }
            CallInput::Answered { call, answer } => {
                self.asking.remove(&call);
                self.trail(call).answered(&answer);
                if let Some(request) = self.complete.remove(&call) {
                    let decided = self.decide(call, &request, Some(answer));
                    self.decided(call, decided, &mut steps);
                    return steps;
                }
                // Still streaming: a decline ends it now.
                if matches!(answer, Answer::NotRun(_)) {
                    steps.push(CallStep::Abandon(call));
                }
                self.early.insert(call, Early::Answered(answer));
            }
            CallInput::Confirmed { call, verdict } => {
                self.trail(call).confirmed(&verdict);
                self.settle(call, verdict, &mut steps);
            }
            // Its verdict is kept already.
            CallInput::Withdrawn => self.withdrawn = true,
        }
        steps
    }

    /// Whether call number `call` was ended by jp while it streamed
    /// (declined, refused): what arrived of it is then shown as received,
    /// not as truncated (the model did not stop; jp stopped reading).
    #[must_use]
    pub fn ended_early(&self, call: usize) -> bool {
        matches!(
            self.early.get(&call),
            Some(Early::Answered(Answer::NotRun(_)))
        )
    }

    /// Whether a question was closed unanswered this response.
    #[must_use]
    pub fn withdrawn(&self) -> bool {
        self.withdrawn
    }

    /// The verdict of call number `call`, once settled.
    #[must_use]
    pub fn verdict(&self, call: usize) -> Option<&Verdict> {
        self.verdicts.get(&call)
    }

    /// Takes call number `call`'s verdict, to act on it.
    pub fn take_verdict(&mut self, call: usize) -> Option<Verdict> {
        self.verdicts.remove(&call)
    }

    /// Decides complete call number `call` (`request`), after what was
    /// `early` decided; what the complete arguments' policy said goes to
    /// its record (a stricter decision wins there).
    fn decide(&mut self, call: usize, request: &ToolCallRequest, early: Option<Answer>) -> Decided {
        let mut policy = None;
        let decided = self
            .judge
            .decide_noting(request, self.can_ask, early, &mut policy);
        if let Some(policy) = policy {
            self.trail(call).decided(&policy, None);
        }
        decided
    }

    /// Takes how call number `call` was decided, to record it with its
    /// response.
    pub fn take_trail(&mut self, call: usize) -> Trail {
        self.trails.remove(&call).unwrap_or_default()
    }

    /// Call number `call` as recorded once complete: its id (which may
    /// differ from the one it started with, when that one was taken) and
    /// tool.
    #[must_use]
    pub fn recorded(&self, call: usize) -> Option<(&str, &str)> {
        self.recorded
            .get(&call)
            .map(|(id, tool)| (id.as_str(), tool.as_str()))
    }

    /// The tool of call number `call`, once it started.
    #[must_use]
    pub fn tool_of(&self, call: usize) -> Option<&str> {
        self.started.get(&call).map(|(_, tool)| tool.as_str())
    }

    /// How call number `call` has been decided so far.
    #[must_use]
    pub fn trail_so_far(&self, call: usize) -> Trail {
        self.trails.get(&call).cloned().unwrap_or_default()
    }

    /// How call number `call` is being decided.
    fn trail(&mut self, call: usize) -> &mut Trail {
        self.trails.entry(call).or_default()
    }

    /// Takes the stateful denial to record with call number `call`'s
    /// response, if a stateful policy denied it before it was asked about.
    pub fn take_denial(&mut self, call: usize) -> Option<Denial> {
        self.denials.remove(&call)
    }

    /// Adds `told` to what the model reads of call number `call`, declined
    /// while it streamed (why the rest of its arguments is missing).
    pub fn tell_model(&mut self, call: usize, told: &str) {
        if let Some(Verdict::NotRun { response, .. }) = self.verdicts.get_mut(&call) {
            response.content.push_str(told);
        }
    }

    /// What `v` at call number `call`'s early question pages: its tool, and
    /// the call once complete (`None` while its arguments still stream).
    #[must_use]
    pub fn page_source(&self, call: usize) -> Option<(&str, Option<&ToolCallRequest>)> {
        let (_, name) = self.started.get(&call)?;
        Some((name, self.complete.get(&call)))
    }

    fn started(
        &mut self,
        call: usize,
        id: String,
        name: String,
        state: &CallState<'_>,
        steps: &mut Vec<CallStep>,
    ) {
        let not_offered = self.judge.not_offered(&id, &name);
        self.started.insert(call, (id, name.clone()));
        steps.push(CallStep::Reserve(call));
        if let Some(verdict) = not_offered {
            self.trail(call).refused(0, "not offered");
            // It can never run: refused now, and the stream closed as for
            // a decline when nothing else streams.
            self.refuse(call, verdict, steps);
            steps.push(CallStep::Abandon(call));
            return;
        }
        match self.judge.watch(&name) {
            None => {}
            Some(Ok(decision)) => {
                let (others, others_bytes) = state.others;
                tracing::debug!(
                    call,
                    tool = %name,
                    mode = %decision.mode,
                    bytes = 0,
                    others,
                    others_bytes,
                    "decided while streaming"
                );
                let known = |key: &str| (state.argument)(key).cloned();
                self.act_early(call, decision, 0, &known, steps);
            }
            Some(Err(watch)) => {
                self.early.insert(call, Early::Watching(watch));
            }
        }
    }

    /// A piece of call number `call`'s arguments arrived: feed the
    /// streaming policy, and act on a decision it made. `state` is the call
    /// as it is after this piece. Nothing of the piece is kept past this
    /// call (issue 14).
    fn piece(
        &mut self,
        call: usize,
        progress: ProgressRef<'_>,
        state: &CallState<'_>,
        steps: &mut Vec<CallStep>,
    ) {
        // A value that can never run (a path with NUL, an integer written
        // `1e2`) is refused before any policy looks at it.
        if !self.ended_early(call)
            && let Some((id, _)) = self.started.get(&call)
            && let Some(verdict) = self.judge.refused_while_streaming(
                id,
                progress.tool_name,
                progress.fragment.path(),
                progress.fragment.leaf(),
            )
        {
            self.trail(call)
                .refused(state.bytes, "a value that can never run");
            self.refuse(call, verdict, steps);
            steps.push(CallStep::Abandon(call));
            return;
        }
        let known = |key: &str| (state.argument)(key).cloned();
        if let Some(Early::Watching(watch)) = self.early.get_mut(&call)
            && let Some(decision) = watch
                .feed_fragment(progress.fragment, state.argument, self.judge.workspace())
                .cloned()
        {
            // With the other calls still streaming then, so a log shows
            // what a decision came before.
            let (others, others_bytes) = state.others;
            tracing::debug!(
                call,
                tool = %progress.tool_name,
                mode = %decision.mode,
                bytes = state.bytes,
                others,
                others_bytes,
                "decided while streaming"
            );
            self.act_early(call, decision, state.bytes, &known, steps);
        }
        // A question held for a stateful policy's argument: asked (or
        // denied) once it is in. Only at the end of one it waits for: the
        // builder may be further on than this fragment, the renderer is
        // not.
        if let Some(Early::Held(_)) = self.early.get(&call)
            && let Some(key) = progress.fragment.completes_argument()
            && self.judge.stateful().waits_on(progress.tool_name, key)
            && !self.judge.stateful().waits(progress.tool_name, &known)
            && let Some(Early::Held(decision)) = self.early.remove(&call)
        {
            self.act_early(call, decision, state.bytes, &known, steps);
        }
    }

    /// Acts on a decision made while call number `call` streams, after
    /// `at` bytes of its arguments. `known` gives each top-level argument
    /// that has arrived.
    fn act_early(
        &mut self,
        call: usize,
        decision: Decision,
        at: usize,
        known: &dyn Fn(&str) -> Option<Value>,
        steps: &mut Vec<CallStep>,
    ) {
        let Some((id, name)) = self.started.get(&call).cloned() else {
            return;
        };
        // As it stands: a call that would run without its sandbox asks.
        let decision = self.judge.bounded(&name, decision);
        self.trail(call).decided(&decision, Some(at));
        let decision = match self.judge.early(&id, &name, decision, self.can_ask, known) {
            Ok(decision) => decision,
            Err(verdict) => {
                self.trail(call).unasked(&verdict);
                steps.push(CallStep::Release(call));
                self.early
                    .insert(call, Early::Answered(Answer::NotRun(*verdict)));
                steps.push(CallStep::Abandon(call));
                return;
            }
        };
        // Allowed for this session: not asked while it streams; whether it
        // runs unasked is decided once its paths are known.
        if decision.mode != Mode::Ask
            || self
                .judge
                .session_covers(&name, decision.mode, decision.rule)
        {
            if decision.mode == Mode::Unattended {
                // It runs unasked: the check at Flush can refuse it, never
                // make it ask (the streaming decision equals the batch
                // one), so the calls after it need not wait for its
                // question. (Only the check at its start, after the calls
                // before it ran, can still make it ask, and that question
                // takes a new place in line.)
                steps.push(CallStep::Release(call));
            }
            self.early.insert(call, Early::Decided(decision));
            return;
        }
        // The question waits for what the stateful policies check.
        if self.judge.stateful().waits(&name, known) {
            self.early.insert(call, Early::Held(decision));
            return;
        }
        // Not asked about when a stateful policy will deny it whatever the
        // user says: it ends now, like a decline.
        if self.nothing_runs_before(call)
            && let Some(denial) = self.judge.stateful_check_partial(&name, known)
        {
            let verdict = denied(&id, &name, &denial);
            steps.push(CallStep::Release(call));
            self.trail(call)
                .settle(DecidedBy::Stateful, Some(&denial.policy));
            self.denials.insert(call, denial);
            self.early
                .insert(call, Early::Answered(Answer::NotRun(verdict)));
            steps.push(CallStep::Abandon(call));
            return;
        }
        self.early.insert(call, Early::Asking);
        self.asking.insert(call);
        let notes = self.judge.path_notes_known(&name, known);
        steps.push(CallStep::AskEarly {
            call,
            id,
            name,
            decision,
            notes,
        });
    }

    /// What deciding complete call number `call` gave: keep the verdict,
    /// or put the question to the user.
    fn decided(&mut self, call: usize, decided: Decided, steps: &mut Vec<CallStep>) {
        match decided {
            Decided::Now(verdict) => {
                self.trail(call).unasked(&verdict);
                self.settle(call, verdict, steps);
            }
            Decided::Ask(ask)
                if self.nothing_runs_before(call)
                    && let Some((verdict, denial)) = self.judge.deny_instead_of_asking(&ask) =>
            {
                // A stateful policy will deny it: not put to the user.
                self.trail(call)
                    .settle(DecidedBy::Stateful, Some(&denial.policy));
                self.denials.insert(call, denial);
                self.settle(call, verdict, steps);
            }
            Decided::Ask(ask) => steps.push(CallStep::Ask { call, ask }),
        }
    }

    /// Call number `call`'s verdict is known: kept for `RunTools`, and
    /// shown.
    fn settle(&mut self, call: usize, verdict: Verdict, steps: &mut Vec<CallStep>) {
        steps.push(CallStep::Release(call));
        self.verdicts.insert(call, verdict);
        steps.push(CallStep::Settled(call));
    }

    /// Call number `call` is refused while it streams (`verdict`), whatever
    /// was pending for it: an open question about it is withdrawn, and its
    /// completion takes this answer.
    fn refuse(&mut self, call: usize, verdict: Verdict, steps: &mut Vec<CallStep>) {
        if self.asking.remove(&call) {
            steps.push(CallStep::Withdraw(call));
        }
        steps.push(CallStep::Release(call));
        self.early
            .insert(call, Early::Answered(Answer::NotRun(verdict)));
    }

    /// Whether no call before number `call` of the response will run, so
    /// nothing can change what the stateful policies say about it before
    /// it would run: every one of them has already been answered without
    /// running.
    fn nothing_runs_before(&self, call: usize) -> bool {
        self.started.keys().filter(|n| **n < call).all(|n| {
            matches!(self.verdicts.get(n), Some(Verdict::NotRun { .. }))
                || matches!(self.early.get(n), Some(Early::Answered(Answer::NotRun(_))))
        })
    }
}

#[cfg(test)]
#[path = "calls_tests.rs"]
mod tests;
