//! `providers.mcp`: the MCP servers whose tools jp offers the model.
//!
//! ```toml
//! [providers.mcp.git]
//! command = ["python3", "-m", "mcp_server_git", "--repository", "."]
//! env = { GIT_PAGER = "cat" }
//! startup_timeout_secs = 20
//! ```
//!
//! A server reached over MCP's Streamable HTTP transport has a `url`
//! instead of a `command`, and may send headers, a value either written
//! out or read from an environment variable:
//!
//! ```toml
//! [providers.mcp.tracker]
//! url = "https://mcp.example.com/mcp"
//! bearer_token_env = "TRACKER_TOKEN"        # Authorization: Bearer $TRACKER_TOKEN
//! headers_env = { X-Api-Key = "TRACKER_KEY" }
//! headers = { X-Team = "platform" }
//! ```
//!
//! A tool names its server with `source = "mcp.git"` (see
//! [`crate::tool::ToolSource`]); jp starts the server (or connects to it)
//! when a query first needs it.

use indexmap::IndexMap;
use schematic::Config;

use crate::sandbox::{PartialSandboxConfig, SandboxConfig};

/// The default for [`McpServerConfig::startup_timeout_secs`].
pub const DEFAULT_STARTUP_TIMEOUT_SECS: u64 = 20;

/// One MCP server: a program jp runs and speaks to over its stdin and
/// stdout (`command`), or an endpoint it reaches over Streamable HTTP
/// (`url`); exactly one of the two.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct McpServerConfig {
    /// The program and its arguments, run in the workspace root.
    pub command: Vec<String>,

    /// Environment variables set for the server, over what its sandbox
    /// passes of jp's own (`sandbox.env`).
    pub env: IndexMap<String, String>,

    /// The server's Streamable HTTP endpoint: `https://...`, or
    /// `http://...` on a loopback host only (see [`check_url`]).
    pub url: Option<String>,

    /// Headers sent with every request to a `url` server, values as
    /// written.
    pub headers: IndexMap<String, String>,

    /// Headers sent with every request to a `url` server, each value read
    /// from the environment variable named (`{ X-Api-Key = "MY_KEY" }`).
    pub headers_env: IndexMap<String, String>,

    /// The environment variable holding a token a `url` server takes as
    /// `Authorization: Bearer TOKEN`.
    pub bearer_token_env: Option<String>,

    /// How long the server may take to start and answer the `initialize`
    /// handshake and `tools/list`, in seconds. Unset: 20.
    pub startup_timeout_secs: Option<u64>,

    /// What the server's process may reach, besides `conversation.sandbox`.
    #[setting(nested)]
    pub sandbox: SandboxConfig,
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

/// Headers jp sets itself on a Streamable HTTP request (or that name the
/// session and the stream): a server's `headers` cannot set them.
pub const RESERVED_HEADERS: [&str; 9] = [
    "accept",
    "connection",
    "content-length",
    "content-type",
    "host",
    "last-event-id",
    "mcp-protocol-version",
    "mcp-session-id",
    "transfer-encoding",
];

/// Why `url` cannot be a server's `url`, if it cannot: it must parse,
/// carry no user name or password, and be `https`, or `http` on a
/// loopback host (`localhost`, `127.0.0.0/8`, `::1`), where no one between
/// jp and the server can read what is sent.
///
/// # Errors
///
/// What is wrong, to follow the key in a message.
pub fn check_url(url: &str) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("`{url}` is not a URL ({e})"))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        // Not quoted: the URL holds a secret.
        return Err(
            "the URL carries a user name or password; give credentials in `bearer_token_env` or `headers_env`, which keep them out of the config and out of messages"
                .to_owned(),
        );
    }
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(&parsed) => Ok(()),
        "http" => Err(format!(
            "`{url}` would send the MCP session and its headers unencrypted; use `https://`, or `http://` only for a server on this machine (localhost, 127.0.0.1 or [::1])"
        )),
        other => Err(format!(
            "`{url}` is no HTTP URL (scheme `{other}`); an MCP server is reached over `https://` (`http://` on localhost), or run with `command`"
        )),
    }
}

/// Whether the URL's host is this machine.
fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Why `name` cannot be a header of a server's `headers`, `headers_env`,
/// if it cannot: an HTTP token, and none of [`RESERVED_HEADERS`].
///
/// # Errors
///
/// What is wrong.
pub fn check_header_name(name: &str) -> Result<(), String> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Err(format!("`{name}` is no HTTP header name"));
    }
    if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "jp sets the header `{name}` itself on every MCP request"
        ));
    }
    Ok(())
}

/// Whether `value` can be sent as a header value: no control characters
/// but tab (a line break would end the header).
#[must_use]
pub fn header_value_ok(value: &str) -> bool {
    !value.chars().any(|c| c.is_control() && c != '\t')
}

/// Merges server tables key by key, each server field by field, so a
/// workspace can change one server's timeout without repeating its
/// command.
pub(crate) fn merge_servers(
    prev: IndexMap<String, PartialMcpServerConfig>,
    next: IndexMap<String, PartialMcpServerConfig>,
    context: &(),
) -> schematic::MergeResult<IndexMap<String, PartialMcpServerConfig>> {
    crate::named::merge_by_name(prev, next, context, "MCP server")
}

#[cfg(test)]
#[path = "mcp_tests.rs"]
mod tests;
