//! [`Cycle`]: running one response's calls, in order, once every one of
//! them is decided: each checked at its start, run (Ctrl+C opens the tool
//! menu), its result shown and kept for the conversation; what they record
//! and change is committed in [`super::changes`].

use std::collections::HashMap;

use futures_util::future::LocalBoxFuture;
use jp_conversation::{EventKind, ResponseStatus, ToolCallRequest, ToolCallResponse};
use tokio_util::sync::CancellationToken;

use super::calls::Calls;
use super::decision::{Ran, Verdict, denied};
use super::session::Session;
use super::signals::{Interrupts, TOOL_MENU, ToolMenu, answer, ctrl_c};
use super::trail::Trail;
use jp_conversation::DecidedBy;
use jp_llm::tool::ToolExecutor;
use jp_term::printer::Style;
use jp_term::prompt::Answer as _;
use jp_term::prompt::{PromptError, Prompts};

use super::tools::undo::Changes;
use super::tools::{Approval, Runner};

/// Runs one response's calls, in order, once every one of them is decided,
/// and commits what they changed ([`super::changes`]): holds what runs
/// them, and what the calls record and change until the response's config
/// changes are committed.
pub struct Cycle<'c, E> {
    /// Where the calls' results are recorded, and shown.
    pub(super) session: &'c mut Session,
    executor: &'c E,
    runner: &'c Runner<'c>,
    prompts: &'c Prompts,
    /// What the calls record from the first call that changed the config
    /// on, each response with whether its change is in `changes`: recorded
    /// together with the change when it is committed, or told the change
    /// was not applied when the cycle is interrupted (the model must never
    /// read "switched to ..." for a switch that did not happen).
    pub(super) held: Vec<(EventKind, bool)>,
    /// Config changes the tools' grants allowed, committed together when
    /// every call of this response is done.
    pub(super) changes: jp_config::delta::Buffer,
    /// Whether the user stopped the tools to reply.
    stopped: bool,
}

/// How running one response's calls ended.
pub struct RanTools {
    /// The user interrupted the turn.
    pub interrupted: bool,
    /// The user stopped the tools to reply.
    pub stopped: bool,
    /// Config changes were committed: the config must be resolved again.
    pub committed: bool,
}

/// Why a stateful policy denied `call`, as the conversation records it
/// (telemetry for `jp conversation show`; never sent to the model).
fn denial_event(call: &ToolCallRequest, denial: jp_policy::stateful::Denial) -> EventKind {
    EventKind::PolicyDenied(jp_conversation::PolicyDenial {
        id: call.id.clone(),
        policy: denial.policy,
        tool: call.name.clone(),
        reason: denial.reason,
        metadata: denial.metadata,
    })
}

/// What the model reads of a call whose config change was dropped because
/// the turn was interrupted before the cycle's changes were committed.
pub const INTERRUPTED_CHANGE: &str = "The tool finished, but the user interrupted jp before its config change was applied; the change was not applied and the result was not kept.";

/// `response` as the conversation records it: a call that failed because
/// the user interrupted the turn was stopped, not failed on its own.
fn as_recorded(response: ToolCallResponse, cancel: &CancellationToken) -> ToolCallResponse {
    if cancel.is_cancelled() && response.status == ResponseStatus::Error {
        ToolCallResponse {
            status: ResponseStatus::Interrupted,
            ..response
        }
    } else {
        response
    }
}

impl<'c, E: ToolExecutor> Cycle<'c, E> {
    /// The calls of one response about to run: by `executor`, as `runner`
    /// decide, the questions put through `prompts`, recorded in `session`.
    pub fn new(
        session: &'c mut Session,
        runner: &'c Runner<'c>,
        executor: &'c E,
        prompts: &'c Prompts,
    ) -> Self {
        Self {
            session,
            executor,
            runner,
            prompts,
            held: Vec::new(),
            changes: jp_config::delta::Buffer::default(),
            stopped: false,
        }
    }

    /// Runs the calls of one response, in order, once every one of them
    /// is decided: each checked at its start, its result shown and kept,
    /// what the cycle records held from the first call that changed the
    /// config on, and the changes committed with it at the end (or not,
    /// [`Cycle::settle_changes`]).
    pub async fn run_tools(
        mut self,
        list: Vec<(usize, ToolCallRequest)>,
        calls: &mut Calls<'_>,
        interrupts: &mut Interrupts,
    ) -> Result<RanTools, crate::error::Error> {
        let cancel = interrupts.cancel.clone();
        let judge = self.runner.judge();
        // "Allow for this session" answers given at this response's
        // prompts, recorded before its calls run.
        for kind in judge.take_unrecorded() {
            self.session.record(kind)?;
        }
        // Where the paths of the calls the user approved lead
        // now, before any call runs: as they were approved.
        let mut seen: HashMap<usize, Vec<(String, String)>> = list
            .iter()
            .filter_map(|(number, _)| match calls.verdict(*number) {
                Some(Verdict::Run {
                    tool,
                    arguments,
                    approved: true,
                    ..
                }) => Some((*number, judge.path_targets(tool, arguments.as_value()))),
                _ => None,
            })
            .collect();
        for (number, call) in list {
            let mut changed_config = false;
            let mut trail = calls.take_trail(number);
            let not_run = |content: &str| ToolCallResponse {
                id: call.id.clone(),
                status: ResponseStatus::Interrupted,
                content: content.into(),
                ran: None,
            };
            let response = match calls.take_verdict(number) {
                // Interrupted: the calls not yet run never run.
                Some(Verdict::Run { .. }) if cancel.is_cancelled() => {
                    trail.overrule(DecidedBy::Interrupted, None);
                    not_run("The call was not run: the user interrupted the turn.")
                }
                Some(Verdict::Run { .. }) if self.stopped => {
                    trail.overrule(DecidedBy::Interrupted, Some("stopped to reply"));
                    not_run("The call was not run: the user stopped the tools to reply.")
                }
                Some(Verdict::Run {
                    arguments,
                    tool,
                    edited,
                    mode,
                    ..
                }) if tool == call.name => {
                    let approval = Approval {
                        arguments,
                        edited,
                        mode,
                        runs: 0,
                        seen: seen.remove(&number),
                        at_start: None,
                    };
                    let (response, changed) = self
                        .run_approved(number, &call, approval, &mut trail, interrupts)
                        .await?;
                    changed_config = changed;
                    response
                }
                Some(Verdict::NotRun { response, .. }) => {
                    if let Some(denial) = calls.take_denial(number) {
                        self.keep(denial_event(&call, denial), false)?;
                    }
                    response
                }
                // A verdict for another tool, or none: fail closed.
                Some(Verdict::Run { .. }) | None => ToolCallResponse {
                    id: call.id.clone(),
                    status: ResponseStatus::Refused,
                    content: "The call was not run: jp made no decision for it.".into(),
                    ran: None,
                },
            };
            let response = as_recorded(response, &cancel);
            let loaded = &self.session.loaded;
            let decision = trail.record(&call.id, &call.name, &|index| {
                super::trail::rule_source(loaded, &call.name, index)
            });
            self.keep(EventKind::CallDecision(decision), changed_config)?;
            self.keep(EventKind::ToolCallResponse(response), changed_config)?;
        }
        let interrupted = cancel.is_cancelled();
        // An interrupted cycle commits no config change, and the calls
        // that proposed one say so.
        let stopped = self.stopped;
        let committed = self.settle_changes(interrupted)?;
        Ok(RanTools {
            interrupted,
            stopped,
            committed,
        })
    }

    /// Runs call number `number`, approved as `approval`, unless the
    /// stateful policies deny it now (they decide last, with what the calls
    /// before it did): shows its result, keeps its config change in the
    /// cycle, and teaches the stateful policies what it did. The response
    /// to record, and whether the call changed the config.
    /// The response of a call a `before_tool` hook declined, said to the
    /// user; `None` when the hooks let it run.
    async fn before_hooks(
        &self,
        call: &ToolCallRequest,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<ToolCallResponse> {
        let root = self.runner.judge().workspace().root();
        let config = &self.session.config;
        let super::hooks::Before::Declined { reason, note } =
            super::hooks::before(config, root, &call.id, &call.name, arguments).await
        else {
            return None;
        };
        self.session.printer.chrome_line(
            Style::Warn,
            &jp_term::printer::sanitize(&format!("  {note}")),
        );
        Some(ToolCallResponse::new(
            call.id.clone(),
            ResponseStatus::Declined,
            format!("The call was not run: a hook declined it: {reason}"),
        ))
    }

    /// Adds what the `after_tool` hooks say to `response` as notes, and
    /// reports those that failed.
    async fn after_hooks(
        &self,
        call: &ToolCallRequest,
        arguments: &serde_json::Map<String, serde_json::Value>,
        response: &mut ToolCallResponse,
    ) {
        let config = &self.session.config;
        if config.hooks.after_tool.is_empty() {
            return;
        }
        let root = self.runner.judge().workspace().root();
        let (notes, failed) =
            super::hooks::after(config, root, &call.name, arguments, response).await;
        for failure in failed {
            self.session.printer.chrome_line(
                Style::Warn,
                &jp_term::printer::sanitize(&format!("  note: {failure}")),
            );
        }
        for note in notes {
            response
                .content
                .push_str(&format!("\n\nNote from a hook: {note}"));
        }
    }

    async fn run_approved(
        &mut self,
        number: usize,
        call: &ToolCallRequest,
        mut approval: Approval,
        trail: &mut Trail,
        interrupts: &mut Interrupts,
    ) -> Result<(ToolCallResponse, bool), jp_conversation::StoreError> {
        let cancel = interrupts.cancel.clone();
        let stateful = self.runner.judge().stateful();
        if let Some(denial) = stateful.check(&call.name, &approval.arguments, false) {
            trail.overrule(DecidedBy::Stateful, Some(&denial.policy));
            let Verdict::NotRun { response, note } = denied(&call.id, &call.name, &denial) else {
                unreachable!("denied() is a NotRun verdict")
            };
            self.session
                .printer
                .chrome_line(Style::Warn, &format!("  {note}"));
            self.keep(denial_event(call, denial), false)?;
            return Ok((response, false));
        }
        let arguments = approval
            .arguments
            .as_value()
            .as_object()
            .cloned()
            .unwrap_or_default();
        if let Some(response) = self.before_hooks(call, &arguments).await {
            trail.overrule(DecidedBy::Hook, None);
            return Ok((response, false));
        }
        let (mut ran, stop) = self.run_call(call, &mut approval, interrupts).await;
        self.stopped |= stop;
        trail.at_start(&ran, self.prompts.available(), approval.at_start);
        if !cancel.is_cancelled() {
            self.after_hooks(call, &arguments, &mut ran.response).await;
        }
        // What it changed is held with its response when the cycle holds
        // it (a config change): one commit, or none.
        let holds = ran.delta.is_some();
        match std::mem::take(&mut ran.changes) {
            Changes::Kept(changes) => {
                for change in changes {
                    // Said at the turn, not only when a rewind cannot.
                    if let jp_conversation::FileState::Unkept { reason, .. } = &change.before {
                        self.session.printer.chrome_line(
                            Style::Warn,
                            &jp_term::printer::sanitize(&format!(
                                "  note: jp did not keep {} as it was ({reason}): a rewind cannot put it back",
                                change.path
                            )),
                        );
                    }
                    self.keep(EventKind::FileChange(change), holds)?;
                }
            }
            Changes::NotKept(reason) => {
                let not_kept = jp_conversation::ChangesNotKept {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    reason,
                };
                self.keep(EventKind::ChangesNotKept(not_kept), holds)?;
            }
        }
        if let Some(denial) = ran.denial.clone() {
            // Denied at its start, after an edit.
            self.keep(denial_event(call, denial), false)?;
        }
        let changed = ran.delta.is_some();
        if let Some(delta) = ran.delta.clone() {
            self.changes.add(number, &call.name, delta);
        }
        // Shown as it is recorded.
        let ran = Ran {
            response: as_recorded(ran.response, &cancel),
            ..ran
        };
        if ran.shown {
            // Read whole at the question that sent it: not printed again.
            self.session.printer.chrome_line(
                Style::Good,
                &jp_term::printer::sanitize(&format!(
                    "  {} {}: sent to the model as shown above",
                    call.name,
                    ran.response.status.as_str()
                )),
            );
        } else {
            self.session
                .show_result(call, &ran.response, ran.note.as_deref());
        }
        if !ran.stderr.is_empty() {
            tracing::info!(tool = %call.name, stderr = %ran.stderr.trim_end(), "tool stderr");
        }
        let Approval {
            arguments, edited, ..
        } = approval;
        let keys = stateful.learn(&call.name, &arguments, &ran.response);
        // What really ran, for a replay.
        let ran_with = jp_conversation::RanWith {
            arguments: edited.then(|| arguments.into_map()),
            keys,
        };
        let response = ToolCallResponse {
            ran: (ran_with != jp_conversation::RanWith::default()).then_some(ran_with),
            ..ran.response
        };
        Ok((response, changed))
    }

    /// Runs one approved call. Ctrl+C meanwhile opens the tool menu:
    /// continue, stop it and reply (the second value is then true), or
    /// restart it.
    async fn run_call(
        &self,
        call: &ToolCallRequest,
        approval: &mut Approval,
        interrupts: &mut Interrupts,
    ) -> (Ran, bool) {
        let (executor, runner, prompts) = (self.executor, self.runner, self.prompts);
        let question = format!(
            "Ctrl+C while {} runs (c continue, s stop and reply, r restart, a abort):",
            call.name
        );
        loop {
            if !self.session.hidden(&call.name) {
                self.session.printer.spin(&format!("running {}", call.name));
            }
            let stop = interrupts.cancel.child_token();
            let mut run = std::pin::pin!(runner.run(call, approval, executor, prompts, &stop));
            let mut menu: Option<LocalBoxFuture<'_, Result<char, PromptError>>> = None;
            let choice = loop {
                tokio::select! {
                    ran = &mut run => return (ran, false),
                    Some(()) = interrupts.menu.recv() => {
                        ctrl_c(&mut menu, &interrupts.cancel, || prompts.urgent(&question, &TOOL_MENU));
                    }
                    choice = answer(&mut menu), if menu.is_some() => {
                        menu = None;
                        match ToolMenu::of(choice) {
                            Ok(ToolMenu::Continue) => {}
                            Ok(key @ (ToolMenu::Stop | ToolMenu::Restart)) => break key,
                            // `a`, or Ctrl+C at the menu.
                            Ok(ToolMenu::Abort) | Err(_) => interrupts.cancel.cancel(),
                        }
                    }
                }
            };
            stop.cancel();
            let ran = run.await;
            if choice == ToolMenu::Stop {
                let response = ToolCallResponse {
                    status: ResponseStatus::Interrupted,
                    content: "The user stopped the tool while it ran.".into(),
                    ..ran.response
                };
                let ran = Ran { response, ..ran };
                return (ran, true);
            }
            self.session
                .printer
                .chrome_line(Style::Warn, &format!("  {}: restarting", call.name));
        }
    }
}
