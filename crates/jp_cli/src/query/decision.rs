//! What is decided about a tool call, stage by stage: one ladder of types,
//! in the order a call meets them.
//!
//! 1. [`Decision`]: what a policy says (`jp_config`): a mode (`unattended`,
//!    `ask`, `edit`, `skip`) and why.
//! 2. [`Early`]: what the turn knows of a call while its arguments stream
//!    (watching them, held for a stateful policy's argument, decided,
//!    asking, answered), kept by [`Calls`](super::calls::Calls).
//! 3. [`Answer`]: what was settled before the arguments completed: the
//!    policy's own early decision, or the user's answer.
//! 4. [`Decided`]: once the call is complete, its [`Verdict`] now, or an
//!    [`Ask`] to put to the user first.
//! 5. [`Verdict`]: run it (with which arguments, cleared at which mode),
//!    or not (what the model and the user are told).
//! 6. [`Ran`]: what running it gave: the response for the model, the
//!    config change it proposed, what to tell the user.
//!
//! The verdicts that do not run a call are made here too, so every reason
//! a call does not run reads the same wherever it is found.

use jp_conversation::{ResponseStatus, ToolCallRequest, ToolCallResponse};
use jp_policy::stateful::Denial;
use jp_policy::{Decision, Mode, PolicyWatch};

use super::arguments::Arguments;

/// What the turn knows about a call before its arguments are complete.
#[derive(Debug)]
pub enum Early {
    /// Deciding from the arguments as they arrive.
    Watching(PolicyWatch),
    /// The policy decided `unattended` or `edit` early: acted on when the
    /// arguments are complete (and checked against them then).
    Decided(Decision),
    /// The policy asks, but a stateful policy needs an argument that has
    /// not arrived to know whether the call may run at all: the question
    /// waits for it, so the user is never asked about a call that will be
    /// denied anyway.
    Held(Decision),
    /// The user is being asked; the answer arrives as [`Answer`].
    Asking,
    /// The answer came before the arguments completed.
    Answered(Answer),
}

/// What was settled about a call while its arguments streamed: the
/// answer to a prompt opened then, or the policy's own decision.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The policy decided this (`unattended` or `edit`) without asking.
    Policy(Decision),
    /// Run it once the arguments are complete (if they still pass).
    Run {
        /// The decision that asked.
        decision: Decision,
    },
    /// Run it, and calls like it for the rest of the session (`a`), once
    /// the arguments are complete (if they still pass).
    Allow {
        /// The decision that asked.
        decision: Decision,
    },
    /// Open the editor once the arguments are complete.
    Edit {
        /// The decision that asked.
        decision: Decision,
    },
    /// Not run: declined, skipped, interrupted.
    NotRun(Verdict),
}

/// What [`Judge::decide`](super::tools::Judge::decide_after) decided.
#[derive(Debug)]
pub enum Decided {
    /// The verdict, without asking.
    Now(Verdict),
    /// The user must be asked.
    Ask(Ask),
}

/// A call whose policy asks: what [`Asker::confirm`](super::tools::Asker::confirm) puts to the
/// user.
#[derive(Debug, Clone)]
pub struct Ask {
    pub(super) call: ToolCallRequest,
    pub(super) arguments: Arguments,
    pub(super) mode: Mode,
    pub(super) why: String,
    /// The `policy.run` rule that asked (`None`: the implicit fallback),
    /// for "allow for this session" (`a`).
    pub(super) rule: Option<usize>,
    /// Whether `a` is offered and a session approval may answer for the
    /// user: not when a call is asked about again at its start (its
    /// policy turned stricter, or a path leads elsewhere now).
    pub(super) session: bool,
}

impl Ask {
    /// The mode that asks: `ask` or `edit` (for `jp policy replay`).
    #[must_use]
    pub const fn mode(&self) -> Mode {
        self.mode
    }

    /// Why the policy asks.
    #[must_use]
    pub fn why(&self) -> &str {
        &self.why
    }
}

/// What was decided about a call before running it.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Run it, with these (possibly user-edited) arguments.
    Run {
        /// The tool this verdict is for.
        tool: String,
        /// The arguments the tool gets.
        arguments: Arguments,
        /// Whether the user edited them.
        edited: bool,
        /// The `policy.run` decision.
        mode: Mode,
        /// Why, in the user's terms.
        reason: String,
        /// Whether the user approved it at a prompt.
        approved: bool,
        /// The key the user answered with at the question about the
        /// complete call (`y`, `a`); `None` when no one answered there (a
        /// policy, a session approval, an answer given while it streamed).
        key: Option<char>,
    },
    /// Not run; `response` answers the model, `note` tells the user.
    NotRun {
        /// The answer for the model.
        response: ToolCallResponse,
        /// What the user sees.
        note: String,
    },
}

/// A call that ran: its response and what to show the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    /// The answer for the model.
    pub response: ToolCallResponse,
    /// The config change the tool proposed and that was approved, for the
    /// cycle's commit buffer (RFD 078); `None` when it proposed none.
    pub delta: Option<jp_config::delta::Proposal>,
    /// The tool's stderr, for diagnostics.
    pub stderr: String,
    /// What happened to the result, when it did not simply go to the model.
    pub note: Option<String>,
    /// The user read the whole result at the `policy.result = "ask"`
    /// question and sent it: it is not printed a second time.
    pub shown: bool,
    /// The stateful policy that denied the call at its start (after the
    /// user edited it then), for the conversation's `policy_denied` record.
    pub denial: Option<Denial>,
    /// The files it changed, with what they were before (issue 38), for
    /// the conversation's `file_change` records.
    pub changes: super::tools::undo::Changes,
}

/// A verdict that does not run `call`.
pub(super) fn not_run(
    call: &ToolCallRequest,
    status: ResponseStatus,
    content: String,
    note: String,
) -> Verdict {
    Verdict::NotRun {
        response: ToolCallResponse {
            id: call.id.clone(),
            status,
            content,
            ran: None,
        },
        note,
    }
}

/// The verdict for a call the policy skips.
/// The verdict for a call a stateful policy denied: the model is told what
/// to do so it can run (never the rule set).
pub fn denied(id: &str, name: &str, denial: &Denial) -> Verdict {
    Verdict::NotRun {
        response: ToolCallResponse::new(
            id,
            ResponseStatus::Denied,
            format!("The call was not run: {}", denial.reason),
        ),
        note: format!("{name}: denied by {}: {}", denial.policy, denial.reason),
    }
}

/// The verdict for a call whose arguments grew past `limit` bytes, the
/// limit `key` sets: refused while it streamed.
pub fn too_large(id: &str, name: &str, limit: usize, key: &str) -> Verdict {
    let why = format!("its arguments are over the limit of {limit} bytes set by {key}");
    Verdict::NotRun {
        response: ToolCallResponse::new(
            id,
            ResponseStatus::Refused,
            format!("The call was not run: {why}."),
        ),
        note: format!("{name}: refused: {why}"),
    }
}

pub(super) fn skipped(id: &str, name: &str, why: &str) -> Verdict {
    Verdict::NotRun {
        response: ToolCallResponse {
            id: id.to_owned(),
            status: ResponseStatus::Skipped,
            content: "This call was skipped by the user's policy; it was not run.".into(),
            ran: None,
        },
        note: format!("{name}: skipped ({why})"),
    }
}

/// The verdict for a call whose policy asks when no one can answer
/// (decision 6).
pub(super) fn no_terminal(id: &str, name: &str, mode: Mode, why: &str, advice: &str) -> Verdict {
    let must = if mode == Mode::Edit {
        "jp must open an editor"
    } else {
        "jp must ask"
    };
    Verdict::NotRun {
        response: ToolCallResponse {
            id: id.to_owned(),
            status: ResponseStatus::Declined,
            content: "The call was not run: the user's policy requires confirmation and no one could confirm it (jp is running without a terminal).".into(),
            ran: None,
        },
        note: format!("{name}: declined: {why}, so {must}, and no terminal is available; {advice}"),
    }
}

/// The verdict for a call whose prompt was interrupted: not run, and the
/// turn ends.
pub(super) fn interrupted(call: &ToolCallRequest) -> Verdict {
    Verdict::NotRun {
        response: ToolCallResponse {
            id: call.id.clone(),
            status: ResponseStatus::Interrupted,
            content: "The call was not run: the user interrupted the turn.".into(),
            ran: None,
        },
        note: format!("{}: interrupted", call.name),
    }
}
