//! The [`ToolCoordinator`]: whether a tool call may run (RFD D25
//! `policy.run`), running it, and how its result reaches the model
//! (`policy.result`).
//!
//! A call is decided as soon as its policy can be (RFD D26:
//! [`ToolCoordinator::early`] while its arguments stream) and checked again
//! once they are complete (at Flush, decision 7). In order, a call is
//! refused when the tool is unknown or disabled, when its arguments are
//! unusable (truncated or invalid JSON, a duplicate key: architecture
//! decisions 1 and 7), or when they do not fit the tool's parameters;
//! otherwise `policy.run` decides: `unattended` runs, `ask` and `edit`
//! prompt (and are declined when no prompt is possible, decision 6), `skip`
//! answers "skipped" without running. Before any of that, a call whose
//! arguments grow past the tool's `max_argument_bytes` is refused while
//! it streams, and the stream is stopped as for an early decline (issue 14,
//! [`too_large`]). Every call gets exactly one [`ToolCallResponse`].
//!
//! The coordinator is cut by what it does to a call, in order:
//! [`coordinator`] (the struct, its policies and the stateful policies),
//! [`decide`] (whether a call may run, while it streams and once complete),
//! [`advice`] (how to let such a call run without a terminal), [`confirm`]
//! (the questions put to the user; [`content`] is the text an edit opens),
//! [`preview`] (the diff of a file
//! change, shown before it runs), [`start`] (the check right before a
//! tool starts), [`execute`] (running it and delivering its result per
//! `policy.result`) and [`delta`] (a config change it proposes).

pub mod advice;
pub mod allow;
pub mod confirm;
pub mod content;
pub mod coordinator;
pub mod decide;
pub mod delta;
pub mod execute;
#[cfg(test)]
pub mod fixture;
pub mod preview;
pub mod scope;
pub mod start;

pub use coordinator::ToolCoordinator;
pub use start::Approval;

#[cfg(test)]
#[path = "tools_tests.rs"]
mod tests;
