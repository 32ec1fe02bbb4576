//! The limits on one call of a tool (how long it runs, how much it
//! prints, how much argument text it sends), each with the config key that
//! set it, so a message can say what to raise.

use indexmap::IndexMap;

use super::wildcard::wildcard_name;
use super::{
    DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_SECS, DEFAULTS_KEY,
    ToolConfig,
};
use crate::path::ConfigPath;

/// The most argument text one call of a tool may send, and the config key
/// a user changes to allow more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentLimit {
    /// The limit in bytes.
    pub bytes: u64,
    /// The key that set it (`conversation.tools.NAME.max_argument_bytes`,
    /// its server's wildcard entry's, or the `'*'` entry's); the tool's own
    /// key when the default applies.
    pub key: String,
}

/// The entries a limit of `tool` is read from, strongest first: its own,
/// for an MCP tool its server's wildcard entry (`'git.*'`), then `'*'`.
fn limit_entries(tools: &IndexMap<String, ToolConfig>, tool: &str) -> Vec<String> {
    let mut entries = vec![tool.to_owned()];
    if let Some(server) = tools.get(tool).and_then(|t| t.source.mcp_server()) {
        let wildcard = wildcard_name(server);
        if wildcard != tool {
            entries.push(wildcard);
        }
    }
    entries.push(DEFAULTS_KEY.to_owned());
    entries
}

/// A limit of `tool` (`get` reads it from an entry) and the key that set
/// it, as [`limit_entries`] orders them; the tool's own key and `default`
/// when none sets it.
fn limit(
    tools: &IndexMap<String, ToolConfig>,
    tool: &str,
    field: &str,
    get: fn(&ToolConfig) -> Option<u64>,
    default: u64,
) -> (u64, String) {
    let key = |entry: &str| {
        ConfigPath::from_segments(["conversation", "tools", entry, field]).to_string()
    };
    limit_entries(tools, tool)
        .iter()
        .find_map(|entry| Some((tools.get(entry).and_then(get)?, key(entry))))
        .unwrap_or_else(|| (default, key(tool)))
}

/// How much argument text one call of `tool` may send: the tool's own
/// setting, else its server's wildcard entry's, else the `'*'` entry's,
/// else the default.
#[must_use]
pub fn argument_limit(tools: &IndexMap<String, ToolConfig>, tool: &str) -> ArgumentLimit {
    let (bytes, key) = limit(
        tools,
        tool,
        "max_argument_bytes",
        |t| t.max_argument_bytes,
        DEFAULT_MAX_ARGUMENT_BYTES,
    );
    ArgumentLimit { bytes, key }
}

/// How long a run of a tool may take and how much it may print, each with
/// the config key that set it (for messages that say what to raise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLimits {
    /// How long one run may take.
    pub timeout: std::time::Duration,
    /// The key that set it (`conversation.tools.NAME.timeout_secs`, or the
    /// wildcard's or `'*'`'s); the tool's own key for the default.
    pub timeout_key: String,
    /// The most bytes of output (a local tool's stdout, an MCP result's
    /// text).
    pub max_output_bytes: u64,
    /// The key that set it, as for `timeout_key`.
    pub max_output_key: String,
}

/// How long a run of `tool` may take and how much it may print: the tool's
/// own setting, else its server's wildcard entry's, else the `'*'`
/// entry's, else the defaults.
#[must_use]
pub fn run_limits(tools: &IndexMap<String, ToolConfig>, tool: &str) -> RunLimits {
    let (secs, timeout_key) = limit(
        tools,
        tool,
        "timeout_secs",
        |t| t.timeout_secs,
        DEFAULT_TIMEOUT_SECS,
    );
    let (max_output_bytes, max_output_key) = limit(
        tools,
        tool,
        "max_output_bytes",
        |t| t.max_output_bytes,
        DEFAULT_MAX_OUTPUT_BYTES,
    );
    RunLimits {
        timeout: std::time::Duration::from_secs(secs),
        timeout_key,
        max_output_bytes,
        max_output_key,
    }
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
