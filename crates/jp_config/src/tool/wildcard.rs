//! `conversation.tools.'SERVER.*'`: every tool of an MCP server, under
//! one entry and one policy.
//!
//! ```toml
//! [conversation.tools.'git.*']
//! source = "mcp.git"
//! policy.run = "ask"
//! ```
//!
//! Once the server's `tools/list` is known, [`expand`] gives each of its
//! tools an entry named as the server names it (`git_status`), with the
//! wildcard's settings; the entry's policy is the wildcard's (see
//! [`crate::tool::effective`]), and so are its limits
//! ([`crate::tool::limits::run_limits`]). A server tool that an entry of its own
//! already offers (an entry with the same `source` whose `tool`, or name,
//! is the server's name for it) is left to that entry. An entry of
//! settings alone under the tool's name (`[conversation.tools.git_status]`
//! with `max_output_bytes`, no `command`) is that tool's own settings,
//! over the wildcard's: a limit message names the tool's own key, and
//! setting it works. A server's tool whose name is taken by another tool
//! is a config error naming both.

use std::collections::BTreeMap;

use indexmap::IndexMap;

use super::{DEFAULTS_KEY, ToolConfig, ToolSource};
use crate::path::ConfigPath;

/// What ends a wildcard entry's name.
pub const SUFFIX: &str = ".*";

/// The server a wildcard entry's name stands for: `git` for `git.*`;
/// `None` for any other name.
#[must_use]
pub fn wildcard_server(name: &str) -> Option<&str> {
    name.strip_suffix(SUFFIX)
        .filter(|server| !server.is_empty())
}

/// The name of the wildcard entry of MCP server `server`.
#[must_use]
pub fn wildcard_name(server: &str) -> String {
    format!("{server}{SUFFIX}")
}

/// The path of entry `name` of `conversation.tools`.
fn path(name: &str) -> ConfigPath {
    ConfigPath::from_segments(["conversation", "tools", name])
}

/// The config key of entry `name` of `conversation.tools`, quoted as
/// needed (`conversation.tools.'git.*'`).
fn key(name: &str) -> String {
    path(name).to_string()
}

/// What the entry `cfg` is, for a message: "a local tool", "MCP server
/// `git`'s tool `status`".
fn what(name: &str, cfg: &ToolConfig) -> String {
    match &cfg.source {
        ToolSource::Mcp(server) => format!(
            "MCP server `{server}`'s tool `{}`",
            cfg.tool.as_deref().unwrap_or(name)
        ),
        ToolSource::Local => "a local tool".to_owned(),
        ToolSource::Builtin => "a builtin tool".to_owned(),
    }
}

/// Whether a server's tool name can be a jp tool's name as it is.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Gives each tool of each server in `servers` (its name, and its tools'
/// names in its order) an entry in `tools`, for the server's enabled
/// wildcard entry, and turns the wildcard entry off (it is no tool
/// itself). Returns the config errors, each with the wildcard entry it is
/// about: a name taken by another tool (or another wildcard's tool), or a
/// name no provider accepts.
pub fn expand(
    tools: &mut IndexMap<String, ToolConfig>,
    servers: &[(String, Vec<String>)],
) -> Vec<(ConfigPath, String)> {
    let mut errors = Vec::new();
    // The entries each wildcard added, by name: which wildcard added it.
    let mut added: BTreeMap<String, String> = BTreeMap::new();
    for (server, offered) in servers {
        let wildcard = wildcard_name(server);
        let Some(template) = tools.get(&wildcard).filter(|w| w.enable).cloned() else {
            continue;
        };
        let source = ToolSource::Mcp(server.clone());
        for tool in offered {
            let covered = tools.iter().any(|(name, cfg)| {
                name != &wildcard
                    && name != DEFAULTS_KEY
                    && cfg.source == source
                    && cfg.tool.as_deref().unwrap_or(name) == tool
            });
            if covered {
                continue;
            }
            let suggested: String = format!("{server}_{tool}")
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let fix = format!(
                "give it an entry of its own under another name: `[conversation.tools.{suggested}]` with `source = \"mcp.{server}\"` and `tool = \"{tool}\"` (`enable = false` leaves it out)"
            );
            if let Some(other) = added.get(tool) {
                errors.push((
                    path(&wildcard),
                    format!(
                        "MCP server `{server}`'s tool `{tool}` has the name of a tool that {} already offers; {fix}",
                        key(other)
                    ),
                ));
                continue;
            }
            let mut entry = template.clone();
            entry.tool = Some(tool.clone());
            // Its policy and limits are the wildcard's, found there, so
            // that messages name the key to change.
            entry.policy = super::PolicyConfig::default();
            entry.run = None;
            entry.result = None;
            entry.timeout_secs = None;
            entry.max_output_bytes = None;
            entry.max_argument_bytes = None;
            if let Some(settings) = tools.get(tool).filter(|cfg| is_settings(cfg)) {
                // An entry of settings alone for the tool
                // (`conversation.tools.echo.max_output_bytes`): they apply
                // over the wildcard's.
                apply_settings(&mut entry, settings);
                tools.insert(tool.clone(), entry);
                added.insert(tool.clone(), wildcard.clone());
                continue;
            }
            if let Some(existing) = tools.get(tool) {
                errors.push((
                    path(&wildcard),
                    format!(
                        "MCP server `{server}`'s tool `{tool}` has the name of {}, {}; {fix}",
                        key(tool),
                        what(tool, existing)
                    ),
                ));
                continue;
            }
            if !valid_name(tool) {
                errors.push((
                    path(&wildcard),
                    format!(
                        "MCP server `{server}`'s tool `{tool}` cannot be offered under its own name (a tool name may hold only letters, digits, `_` and `-`, at most 64 of them); {fix}"
                    ),
                ));
                continue;
            }
            tools.insert(tool.clone(), entry);
            added.insert(tool.clone(), wildcard.clone());
        }
        if let Some(entry) = tools.get_mut(&wildcard) {
            entry.enable = false;
        }
    }
    errors
}

/// Whether `cfg` carries settings alone, for a tool defined elsewhere (a
/// local entry with no `command` or `parameters`, naming no server tool):
/// for a tool a wildcard offers, its own settings over the wildcard's.
fn is_settings(cfg: &ToolConfig) -> bool {
    cfg.source == ToolSource::Local && !cfg.is_defined() && cfg.tool.is_none()
}

/// Lays the settings `settings` has over `entry`, a tool a wildcard
/// offers: whether it is offered, its policies and limits (the tool's own,
/// found before the wildcard's), and what the model reads of it and what it
/// may use.
fn apply_settings(entry: &mut ToolConfig, settings: &ToolConfig) {
    entry.enable = entry.enable && settings.enable;
    entry.policy = settings.policy.clone();
    entry.run = settings.run.clone();
    entry.result = settings.result.clone();
    entry.timeout_secs = settings.timeout_secs;
    entry.max_output_bytes = settings.max_output_bytes;
    entry.max_argument_bytes = settings.max_argument_bytes;
    if settings.summary.is_some() {
        entry.summary = settings.summary.clone();
    }
    if settings.description.is_some() {
        entry.description = settings.description.clone();
    }
    if !settings.options.is_empty() {
        entry.options = settings.options.clone();
    }
    if settings.access != crate::access::AccessConfig::default() {
        entry.access = settings.access.clone();
    }
}

#[cfg(test)]
#[path = "wildcard_tests.rs"]
mod tests;
