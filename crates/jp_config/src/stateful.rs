//! `conversation.policies`: stateful tool policies (the Tool Policy
//! Specification), as written in config.
//!
//! D25 policies decide each call on its own; these decide by what happened
//! earlier in the conversation:
//!
//! ```toml
//! [[conversation.policies]]
//! kind = "read_before_write"
//! read_tools = ["fs_read_file"]
//! write_tools = ["fs_modify_file", "fs_create_file"]
//!
//! [[conversation.policies]]
//! kind = "sequential"
//! tool = "deploy"
//! dependencies = ["run_tests"]
//! ```
//!
//! This module holds the config form; `validate::policies` checks it against
//! the whole config (kinds, fields, tool names, dependency cycles, key
//! pointers, conditions). `jp_cli` turns each entry into a policy of a
//! `jp_policy::stateful` registry, which evaluates it; names and globs are
//! `jp_policy`'s [`ToolPattern`](jp_policy::stateful::ToolPattern).

use schematic::Schematic;
use serde::{Deserialize, Serialize};

use crate::path::ConfigPath;

/// The key a `read_before_write` policy reads when it sets none.
pub const DEFAULT_PATH_KEY: &str = "/path";

/// One entry of `conversation.policies`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Schematic)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct StatefulPolicyConfig {
    /// `sequential` (a tool needs other tools to have succeeded first),
    /// `keyed` (the same, per argument value), or `read_before_write` (a
    /// file must be read before an existing one is changed).
    pub kind: StatefulKind,

    /// `sequential` and `keyed`: the tool this policy holds back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,

    /// `sequential`: every one of these tools must have succeeded before
    /// `tool` runs. `keyed`: one of them must have succeeded with the same
    /// key. Names or globs (`fs_*`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<String>,

    /// `keyed` (required) and `read_before_write` (default `"/path"`): a
    /// JSON pointer to the argument whose value is the key. A `path`
    /// parameter is resolved the way policies resolve paths, so `./a.txt`,
    /// `a.txt` and `src/../a.txt` are one key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,

    /// `read_before_write`: the tools that read a file. Names or globs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_tools: Vec<String>,

    /// `read_before_write`: the tools that change a file. Names or globs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_tools: Vec<String>,

    /// Only enforce this policy while a config value holds:
    /// `{ path = "assistant.model.id", equals = "ollama/qwen3.5:9b" }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<WhenConfig>,
}

/// The kinds of stateful policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Schematic)]
#[serde(rename_all = "snake_case")]
pub enum StatefulKind {
    /// A tool needs other tools to have succeeded first.
    Sequential,
    /// A tool needs one of some tools to have succeeded with the same key.
    Keyed,
    /// A file must be read before an existing one is written.
    ReadBeforeWrite,
}

impl StatefulKind {
    /// The name used in config files.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Sequential => "sequential",
            Self::Keyed => "keyed",
            Self::ReadBeforeWrite => "read_before_write",
        }
    }
}

/// A condition on the resolved config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Schematic)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct WhenConfig {
    /// A config key, such as `assistant.model.id`.
    pub path: String,
    /// The value it must have for the policy to apply. It must be a value
    /// the key can hold (its type, and one of its values for a key with a
    /// fixed set): one it never could would leave the policy off for good,
    /// so the config does not load.
    pub equals: serde_json::Value,
}

impl WhenConfig {
    /// Whether the condition holds in `resolved` (the config as JSON). A
    /// key that is not there does not hold.
    #[must_use]
    pub fn holds(&self, resolved: &serde_json::Value) -> bool {
        ConfigPath::parse(&self.path)
            .ok()
            .and_then(|path| path.lookup(resolved).cloned())
            .is_some_and(|value| jp_policy::matcher::json_equal(&value, &self.equals))
    }
}

impl jp_policy::stateful::ConfigCondition for WhenConfig {
    fn holds(&self, resolved: &serde_json::Value) -> bool {
        Self::holds(self, resolved)
    }
}

/// Which tools an entry governs, in its terms: the tools it holds back and
/// the tools that satisfy them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ToolRole {
    /// `tool`, or `write_tools`.
    Dependent,
    /// `dependencies`, or `read_tools`.
    Prerequisite,
}

impl StatefulPolicyConfig {
    /// The names or globs of the tools this entry holds back and of those
    /// that satisfy it, with the key each list is under.
    #[must_use]
    pub fn tool_lists(&self) -> [(&'static str, ToolRole, Vec<&str>); 2] {
        match self.kind {
            StatefulKind::Sequential | StatefulKind::Keyed => [
                (
                    "tool",
                    ToolRole::Dependent,
                    self.tool.iter().map(String::as_str).collect(),
                ),
                (
                    "dependencies",
                    ToolRole::Prerequisite,
                    self.dependencies.iter().map(String::as_str).collect(),
                ),
            ],
            StatefulKind::ReadBeforeWrite => [
                (
                    "write_tools",
                    ToolRole::Dependent,
                    self.write_tools.iter().map(String::as_str).collect(),
                ),
                (
                    "read_tools",
                    ToolRole::Prerequisite,
                    self.read_tools.iter().map(String::as_str).collect(),
                ),
            ],
        }
    }

    /// The key pointer this entry uses, if its kind has one.
    #[must_use]
    pub fn key_pointer(&self) -> Option<&str> {
        match self.kind {
            StatefulKind::Sequential => None,
            StatefulKind::Keyed => self.key.as_deref(),
            StatefulKind::ReadBeforeWrite => Some(self.key.as_deref().unwrap_or(DEFAULT_PATH_KEY)),
        }
    }
}
