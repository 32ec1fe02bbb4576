//! `hooks`: commands jp runs around tool calls (docs/policies.md, "Hooks").
//!
//! A `before_tool` hook runs once a call may run (its policy, and the user
//! where it asked, let it), with the call as JSON on stdin: exit 0 lets it
//! run, exit 2 declines it with the hook's stderr as the reason the model
//! sees (the convention other agent CLIs use, so their hooks port), and
//! any other end declines it and is reported. An `after_tool` hook gets the
//! call and its result; what it prints on stdout (exit 0) is added to the
//! result as a note. Hooks run as local tools do, in the sandbox.

use schematic::{Config, Schematic};
use serde::{Deserialize, Serialize};

use crate::tool::ToolCommand;

/// The hooks. Lists from every config layer are concatenated (user config
/// first); a workspace's are held until it is trusted, and no tool may set
/// them through a grant.
#[derive(Debug, Clone, Config, Serialize)]
#[config(rename_all = "snake_case")]
pub struct HooksConfig {
    /// Run before a call that may run, in order; the first that declines
    /// ends it.
    #[setting(merge = schematic::merge::append_vec)]
    pub before_tool: Vec<HookConfig>,
    /// Run after a call ran, in order, each given the result as it is.
    #[setting(merge = schematic::merge::append_vec)]
    pub after_tool: Vec<HookConfig>,
}

/// One hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Schematic)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct HookConfig {
    /// The program and its arguments (`jp` is this jp), run in the
    /// workspace root.
    pub command: ToolCommand,
    /// The tools it runs for (names or globs, `fs_*`); every tool when
    /// empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Seconds before it is killed (and, before a call, the call declined).
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
}

fn default_timeout() -> u64 {
    30
}

impl HookConfig {
    /// Whether it runs for calls of `tool`.
    #[must_use]
    pub fn covers(&self, tool: &str) -> bool {
        self.tools.is_empty()
            || self.tools.iter().any(|pattern| {
                glob::Pattern::new(pattern).map_or(pattern == tool, |glob| glob.matches(tool))
            })
    }
}
