//! Stateful tool policies (the Tool Policy Specification): rules about the
//! order of calls across a conversation, such as "read a file before
//! changing it" or "run the tests before deploying".
//!
//! A [`ToolPolicy`] looks at a call before it runs
//! ([`check`](ToolPolicy::check)) and learns from each call that
//! succeeded ([`on_result`](ToolPolicy::on_result)).
//! The [`PolicyRegistry`] holds the policies of a conversation: every
//! policy that governs a tool must allow a call of it, checked in
//! registration order, and the first denial is the answer (the call does
//! not run; the model gets the denial's reason).
//!
//! Everything here is pure: what needs the file system (turning a `path`
//! argument into a key, asking whether a file exists) is behind
//! [`PolicyEnv`], so the policies are tested without one (the disk's
//! implementation is `jp_cli`'s, which reads the config's tools). The state is not stored anywhere: it is rebuilt by replaying a
//! conversation's calls and their successful responses ([`replay()`]), so a
//! resumed, forked or edited conversation has the state its own events
//! imply.
//!
//! The config form (`conversation.policies`) is `jp_config`'s, which names
//! config keys in `when`; [`ConfigCondition`] is how such a condition
//! reaches [`Conditional`]. Turning the entries into a registry is
//! `jp_cli`'s (it needs both this and the config).

mod builtin;
mod pattern;
mod policy;
mod registry;
mod replay;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use builtin::{Conditional, ConfigCondition, Keyed, Sequential};
pub use pattern::{BadGlob, ToolPattern};
pub use policy::{Call, Denial, Key, PolicyContext, PolicyDecision, PolicyEnv, ToolPolicy};
pub use registry::{DENIAL_LOG_TARGET, PolicyRegistry, RegistryError, Snapshot};
pub use replay::{Recording, replay};

#[cfg(test)]
#[path = "stateful_tests.rs"]
mod tests;
