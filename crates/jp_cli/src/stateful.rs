//! Stateful tool policies (the Tool Policy Specification): rules about the
//! order of calls across a conversation, such as "read a file before
//! changing it" or "run the tests before deploying".
//!
//! A [`ToolPolicy`](policy::ToolPolicy) looks at a call before it runs
//! ([`check`](policy::ToolPolicy::check)) and learns from each call that
//! succeeded ([`on_result`](policy::ToolPolicy::on_result)).
//! The [`PolicyRegistry`] holds the policies of a conversation: every
//! policy that governs a tool must allow a call of it, checked in
//! registration order, and the first denial is the answer (the call does
//! not run; the model gets the denial's reason).
//!
//! Everything here is pure: what needs the file system (turning a `path`
//! argument into a key, asking whether a file exists) is behind
//! [`PolicyEnv`](policy::PolicyEnv), so the policies are tested without
//! one. The state is not stored anywhere: it is rebuilt by replaying a
//! conversation's calls and their successful responses ([`replay()`]), so a
//! resumed, forked or edited conversation has the state its own events
//! imply.

mod builtin;
mod config;
mod policy;
mod registry;
mod replay;

pub use config::{SetupError, WorkspaceEnv, from_config};
pub use policy::{Call, Denial, PolicyContext, PolicyDecision};
pub use registry::{DENIAL_LOG_TARGET, PolicyRegistry};
pub use replay::{Recording, replay};

#[cfg(test)]
#[path = "stateful_tests.rs"]
mod tests;
#[cfg(test)]
#[path = "stateful/trace_tests.rs"]
mod trace_tests;
