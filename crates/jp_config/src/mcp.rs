//! `providers.mcp`: the MCP servers whose tools jp offers the model.
//!
//! ```toml
//! [providers.mcp.git]
//! command = ["python3", "-m", "mcp_server_git", "--repository", "."]
//! env = { GIT_PAGER = "cat" }
//! startup_timeout_secs = 20
//! ```
//!
//! A tool names its server with `source = "mcp.git"` (see
//! [`crate::tool::ToolSource`]); jp starts the server when a query first
//! needs it.

use indexmap::IndexMap;
use schematic::Config;

use schematic::PartialConfig as _;

/// The default for [`McpServerConfig::startup_timeout_secs`].
pub const DEFAULT_STARTUP_TIMEOUT_SECS: u64 = 20;

/// One MCP server, spoken to over its stdin and stdout.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct McpServerConfig {
    /// The program and its arguments, run in the workspace root.
    pub command: Vec<String>,

    /// Environment variables added to jp's own for the server.
    pub env: IndexMap<String, String>,

    /// How long the server may take to start and answer the `initialize`
    /// handshake and `tools/list`, in seconds. Unset: 20.
    pub startup_timeout_secs: Option<u64>,
}

impl McpServerConfig {
    /// How long the server may take to start.
    #[must_use]
    pub fn startup_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.startup_timeout_secs
                .unwrap_or(DEFAULT_STARTUP_TIMEOUT_SECS),
        )
    }
}

/// Merges server tables key by key, each server field by field, so a
/// workspace can change one server's timeout without repeating its
/// command.
pub(crate) fn merge_servers(
    mut prev: IndexMap<String, PartialMcpServerConfig>,
    next: IndexMap<String, PartialMcpServerConfig>,
    context: &(),
) -> schematic::MergeResult<IndexMap<String, PartialMcpServerConfig>> {
    for (name, server) in next {
        match prev.get_mut(&name) {
            Some(existing) => existing
                .merge(context, server)
                .map_err(|e| schematic::MergeError::new(format!("MCP server `{name}`: {e}")))?,
            None => {
                prev.insert(name, server);
            }
        }
    }
    Ok(Some(prev))
}
