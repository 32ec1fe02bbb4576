//! Exit codes shared by commands.

/// The config does not load, or a requested key does not exist.
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
/// A turn the user interrupted (as for SIGINT).
pub const INTERRUPTED: u8 = 130;
