//! `sandbox`: what a process jp starts may reach, at `conversation.sandbox`
//! (every tool and MCP server) and per tool (`conversation.tools.NAME.sandbox`)
//! or per MCP server (`providers.mcp.NAME.sandbox`), which add to it.
//!
//! ```toml
//! [conversation.sandbox]
//! env = ["CARGO_HOME", "RUSTUP_HOME"]   # passed to every tool, besides jp's list
//!
//! [providers.mcp.github.sandbox]
//! env = ["GITHUB_PERSONAL_ACCESS_TOKEN"]
//! ```
//!
//! All of it is sensitive (RFD 078): a tool can never change it, and an
//! untrusted workspace's is held (see `docs/sandbox.md`).

use schematic::Config;

/// The variables of jp's environment every process jp starts gets, when
/// jp has them: what a program needs to run and to find its user's tools,
/// and nothing that holds a credential. `LC_*` stands for every locale
/// variable.
pub const DEFAULT_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TMPDIR",
    "TZ",
];

/// What a process jp starts may reach.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct SandboxConfig {
    /// Environment variables of jp's passed to the process besides
    /// [`DEFAULT_ENV`], by exact name. Nothing else of jp's environment
    /// reaches it: no provider key, nothing like `*_KEY`, `*_TOKEN`,
    /// `*_SECRET` or `*PASSWORD*` unless it is named here. Lists from every
    /// config layer are joined.
    #[setting(merge = schematic::merge::append_vec)]
    pub env: Vec<String>,

    /// Directories (or files) beneath which the process may write, besides
    /// the workspace root and its private temporary directory (`TMPDIR`):
    /// absolute, or starting with `~/` for the user's home. Enforced by the
    /// kernel (Landlock, Linux). Lists from every config layer are joined.
    /// (Prototype of issue 36.)
    #[setting(merge = schematic::merge::append_vec)]
    pub write: Vec<String>,
}

impl SandboxConfig {
    /// Whether it sets nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.env.is_empty() && self.write.is_empty()
    }
}

/// Whether `name` can be an environment variable's name: letters, digits
/// and `_`, not starting with a digit.
#[must_use]
pub fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The variables passed to the process of tool `name`:
/// `conversation.sandbox.env`, then the tool's own.
#[must_use]
pub fn tool_env(config: &crate::AppConfig, name: &str) -> Vec<String> {
    let own = config
        .conversation
        .tools
        .get(name)
        .map_or(&[][..], |tool| &tool.sandbox.env[..]);
    joined(&config.conversation.sandbox.env, own)
}

/// The paths beneath which the process of tool `name` may write besides
/// its workspace and `TMPDIR`: `conversation.sandbox.write`, then the
/// tool's own.
#[must_use]
pub fn tool_write(config: &crate::AppConfig, name: &str) -> Vec<String> {
    let own = config
        .conversation
        .tools
        .get(name)
        .map_or(&[][..], |tool| &tool.sandbox.write[..]);
    joined(&config.conversation.sandbox.write, own)
}

/// The MCP servers of `config`, each with `conversation.sandbox` joined to
/// its own `sandbox`: as they are started.
#[must_use]
pub fn sandboxed_servers(
    config: &crate::AppConfig,
) -> indexmap::IndexMap<String, crate::mcp::McpServerConfig> {
    let mut servers = config.providers.mcp.clone();
    for server in servers.values_mut() {
        server.sandbox.env = joined(&config.conversation.sandbox.env, &server.sandbox.env);
        server.sandbox.write = joined(&config.conversation.sandbox.write, &server.sandbox.write);
    }
    servers
}

/// `first`, then what of `then` is not in it.
fn joined(first: &[String], then: &[String]) -> Vec<String> {
    let mut all = first.to_vec();
    all.extend(then.iter().filter(|name| !first.contains(name)).cloned());
    all
}
