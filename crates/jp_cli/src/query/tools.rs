//! A tool call's life after it is parsed, as three owned types in the
//! order a call travels:
//!
//! - the [`Judge`] decides whether a call may run (RFD D25 `policy.run`):
//!   while its arguments stream (RFD D26, [`Judge::early`]) and once they
//!   are complete (decision 7, [`Judge::decide_after`]). In order, a call
//!   is refused when the tool is unknown or disabled, when its arguments
//!   are unusable (truncated or invalid JSON, a duplicate key: decisions 1
//!   and 7), or when they do not fit the tool's parameters; otherwise
//!   `policy.run` decides: `unattended` runs, `ask` and `edit` prompt (and
//!   are declined when no prompt is possible, decision 6), `skip` answers
//!   "skipped" without running. Before any of that, a call whose arguments
//!   grow past the tool's `max_argument_bytes` is refused while it
//!   streams, and the stream is stopped as for an early decline (issue 14,
//!   [`Judge::too_large`]). The stateful policies and the session
//!   approvals in force ([`allow`]) are its too. It does no I/O but
//!   resolving `path` arguments.
//! - the [`Asker`] puts what asks to the user ([`answers`] are the
//!   answers each question takes; [`content`] the text an edit opens) and
//!   shows what they must see first ([`preview`]: the diff of a file
//!   change). It alone holds the printer.
//! - the [`Runner`] runs what was cleared: the check right before each
//!   start, the tool's process, its questions and config change
//!   ([`delta`]), and its result delivered per `policy.result`.
//!
//! Every call gets exactly one [`ToolCallResponse`](jp_conversation::ToolCallResponse).
//! [`scope`] is what a session approval covers.

pub mod allow;
pub mod answers;
pub mod asker;
pub mod content;
pub mod delta;
#[cfg(test)]
pub mod fixture;
pub mod judge;
pub(crate) mod kept;
pub mod preview;
pub mod runner;
pub mod scope;
pub mod snapshot;
pub mod undo;

pub use asker::Asker;
pub use judge::Judge;
pub use runner::{Approval, AtStart, Runner};

#[cfg(test)]
#[path = "tools_tests.rs"]
mod tests;
