//! jp's tool-call policies: what jp does with a call before it runs,
//! decided by the call's arguments (RFD D25), as they stream (RFD D26).
//!
//! This crate owns:
//! - the argument schema policies are compiled against ([`parameter`]:
//!   [`ParamType`], [`ToolParameterConfig`], which is also the JSON Schema
//!   the model is shown);
//! - the config-file form of a policy ([`PolicySpec`], [`RuleSpec`],
//!   [`Mode`]), its compiler (validation and unreachable-rule detection)
//!   and the evaluator, with JSON pointers ([`pointer`]) and path arguments
//!   ([`path`]);
//! - streaming evaluation ([`streaming`]) and [`PolicyWatch`], which feeds
//!   it from `jp_conversation`'s incremental argument parser;
//! - [`stateful`]: the stateful policies across a conversation's calls
//!   (read before write, sequential and keyed dependencies), rebuilt by
//!   replaying `jp_conversation`'s events;
//! - [`listing`]: how a message lists allowed values, cut short (also used
//!   by `jp_config`'s messages).
//!
//! It depends on `jp_conversation` (the parser's progress, the events a
//! stateful policy replays) and on nothing above it: not `jp_config`
//! (which depends on this crate to check policies when config loads and to
//! build a tool's effective policy), nor `jp_llm`, `jp_tools` or `jp_cli`. No terminal and no network; the disk only in
//! [`path`], which reads links to resolve a path argument.
//!
//! ## Policies in config
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
pub mod links;
pub mod listing;
pub mod matcher;
pub mod parameter;
pub mod path;
pub mod pointer;
mod rule;
mod shadow;
mod spec;
pub mod stateful;
pub mod streaming;
mod watch;

pub use compile::{Compiled, Policy, RuleOrigin};
pub use evaluate::{Decision, RuleTrace};
pub use matcher::{Condition, Literal, Matcher};
pub use parameter::{ParamType, ToolParameterConfig, ToolParameters, parameters_json_schema};
pub use path::{PolicyPath, Workspace};
pub use pointer::Step;
pub use rule::{PolicyIssue, Rule};
pub use spec::{Mode, PolicyField, PolicySpec, RuleSpec};
pub use streaming::{
    Piece, Segment, Streaming, StreamingPolicyState, ordering_warnings, top_parameter,
};
pub use watch::PolicyWatch;

#[cfg(test)]
mod support_tests;
