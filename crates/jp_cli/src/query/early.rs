//! Deciding a call while its arguments stream (RFD D26): [`Early`] is what
//! the turn knows about a call before its arguments are complete; a
//! [`PolicyWatch`] (in `jp_conversation`) decides from its argument
//! progress.

use jp_config::policy::Decision;
use jp_conversation::PolicyWatch;

use super::tools::Verdict;

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
    /// Open the editor once the arguments are complete.
    Edit {
        /// The decision that asked.
        decision: Decision,
    },
    /// Not run: declined, skipped, interrupted.
    NotRun(Verdict),
}
