//! Why an MCP server is not available ([`McpError`]).

/// Why an MCP server is not available.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// No `providers.mcp.NAME` entry.
    #[error("no MCP server `{server}` is configured (add `[providers.mcp.{server}]`)")]
    Unknown {
        /// The server's name.
        server: String,
    },
    /// The process could not be started.
    #[error("cannot start MCP server `{server}` (`{program}`): {reason}")]
    Start {
        /// The server's name.
        server: String,
        /// The program.
        program: String,
        /// Why.
        reason: String,
    },
    /// The handshake or `tools/list` did not finish in time.
    #[error(
        "MCP server `{server}` did not finish starting within {secs} s (providers.mcp.{server}.startup_timeout_secs){stderr}"
    )]
    StartupTimeout {
        /// The server's name.
        server: String,
        /// The timeout.
        secs: u64,
        /// The end of its stderr, as a suffix of the message.
        stderr: String,
    },
    /// A setting of a server reached over HTTP cannot be used (a header's
    /// environment variable is not set).
    #[error("cannot connect to MCP server `{server}`: {reason} (providers.mcp.{server}.{key})")]
    Setting {
        /// The server's name.
        server: String,
        /// The key under `providers.mcp.NAME` (`bearer_token_env`).
        key: String,
        /// Why, quoting no header value.
        reason: String,
    },
    /// The handshake or `tools/list` failed.
    #[error("MCP server `{server}` failed to start: {reason}{stderr}")]
    Protocol {
        /// The server's name.
        server: String,
        /// What went wrong.
        reason: String,
        /// The end of its stderr, as a suffix of the message.
        stderr: String,
    },
}
