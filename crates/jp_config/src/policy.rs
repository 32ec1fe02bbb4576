//! Argument-conditional tool policies (RFD D25), as written in config.
//!
//! `policy.run` decides whether jp asks before running a tool call;
//! `policy.result` decides how its result reaches the model. Both are either
//! a [`Mode`] string or an ordered list of rules, the first matching rule
//! deciding:
//!
//! ```toml
//! [conversation.tools.fs_modify_file.policy]
//! run = [
//!     { arg = "/path", prefix = "src/", mode = "unattended" },
//!     { arg = "/path", prefix = ".env", mode = "ask" },
//!     { mode = "ask" },
//! ]
//! ```
//!
//! `spec` holds the config-file form ([`PolicySpec`], [`RuleSpec`]).
//! Rules are kept as written, so that every problem in one (an unknown key,
//! two matchers, a matcher that does not fit the parameter) is reported with
//! the tool, the field and the rule index once the tool's parameters are
//! known, instead of as an opaque parse error. `compile` checks it into
//! [`Rule`]s (`rule`, which also holds [`PolicyIssue`]); `shadow` finds the
//! unreachable ones; `evaluate` and `streaming` decide calls with them.

mod compile;
mod evaluate;
pub mod matcher;
pub mod path;
pub mod pointer;
mod rule;
mod shadow;
mod spec;
pub mod streaming;

pub use compile::{Compiled, Policy, RuleOrigin};
pub use evaluate::{Decision, RuleTrace};
pub use matcher::{Condition, Literal, Matcher};
pub use path::{PolicyPath, Workspace};
pub use pointer::Step;
pub use rule::{PolicyIssue, Rule};
pub use spec::{Mode, PolicyField, PolicySpec, RuleSpec};
pub use streaming::{
    Piece, Segment, Streaming, StreamingPolicyState, ordering_warnings, top_parameter,
};

#[cfg(test)]
mod support_tests;
