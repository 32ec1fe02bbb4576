//! Exit codes shared by commands.

/// The config does not load, or a requested key does not exist (also
/// an error jp has no more particular code for).
pub const INVALID_CONFIG: u8 = 1;
/// The command was used wrongly: unknown tool, arguments that do not
/// fit, no workspace to write to.
pub const USAGE: u8 = 2;
/// A query that did not run: the workspace's config holds what needs
/// trust, and there is no terminal to ask on (`jp trust`).
pub const UNTRUSTED: u8 = 3;
/// A query stopped by its budget: `--max-turns` (`conversation.max_turns`)
/// or `--max-cost` (`conversation.max_cost`).
pub const BUDGET: u8 = 4;
/// A turn that completed, but in which a policy declined a tool call that
/// no one could answer: asked with no terminal, `skip`, a stateful
/// policy's denial, a `before_tool` hook.
pub const DECLINED: u8 = 5;
/// A turn the provider failed: an error response, a broken stream, a
/// request it refused (too large for the model's context).
pub const PROVIDER: u8 = 6;
/// A turn the user interrupted (as for SIGINT).
pub const INTERRUPTED: u8 = 130;
