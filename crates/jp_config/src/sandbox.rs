//! `sandbox`: what a process jp starts may reach, at `conversation.sandbox`
//! (every tool and MCP server) and per tool (`conversation.tools.NAME.sandbox`)
//! or per MCP server (`providers.mcp.NAME.sandbox`), which add to it.
//!
//! ```toml
//! [conversation.sandbox]
//! env = ["CARGO_HOME", "RUSTUP_HOME"]   # passed to every tool, besides jp's list
//! write = ["~/.cargo"]                  # writable besides the workspace and TMPDIR
//! deny_read = ["~/work/other-client"]   # unreadable besides DEFAULT_DENY_READ
//! network = false                       # the default
//!
//! [providers.mcp.github.sandbox]
//! env = ["GITHUB_PERSONAL_ACCESS_TOKEN"]
//! network = true
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
    #[setting(merge = schematic::merge::append_vec)]
    pub write: Vec<String>,

    /// Directories (or files) the process may not read, besides
    /// [`DEFAULT_DENY_READ`]: absolute, or starting with `~/`. Enforced by
    /// the kernel (Landlock, Linux). Lists from every config layer are
    /// joined.
    #[setting(merge = schematic::merge::append_vec)]
    pub deny_read: Vec<String>,

    /// Whether the process may use the network (TCP and UDP, DNS and
    /// loopback included). Unset is `false`; a tool's or MCP server's own
    /// value wins over `conversation.sandbox`'s.
    pub network: Option<bool>,

    /// No kernel sandbox for this tool or MCP server at all (`sandbox =
    /// "none"` says the same, see `load/parse.rs`): its process
    /// may write, read and connect wherever the user can (its environment
    /// is still built from the allowlist). Every call of it asks, whatever
    /// its policy says, and no session approval covers it. Only per tool
    /// or per server, never in `conversation.sandbox`.
    pub none: bool,
}

impl SandboxConfig {
    /// Whether it sets nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.env.is_empty()
            && self.write.is_empty()
            && self.deny_read.is_empty()
            && self.network.is_none()
            && !self.none
    }

    /// Whether the process may use the network.
    #[must_use]
    pub fn network(&self) -> bool {
        self.network.unwrap_or(false)
    }

    /// `self` (`conversation.sandbox`) with `own` (a tool's or server's)
    /// added: lists joined, `own`'s `network` winning.
    #[must_use]
    pub fn with(&self, own: &Self) -> Self {
        Self {
            env: joined(&self.env, &own.env),
            write: joined(&self.write, &own.write),
            deny_read: joined(&self.deny_read, &own.deny_read),
            network: own.network.or(self.network),
            none: own.none,
        }
    }
}

/// The places no process jp starts may read, whatever its config says
/// (`sandbox.deny_read` adds to them): keys, credentials and tokens of the
/// usual tools, browser profiles (cookies, saved passwords), jp's own
/// user directory (its config, trust records and seal key), and the
/// terminals. `~/` is the
/// user's home; `$XDG_CONFIG_HOME/jp` is added where that is set
/// elsewhere.
pub const DEFAULT_DENY_READ: &[&str] = &[
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.kube",
    "~/.config/gcloud",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.config/gh",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.mozilla",
    "~/.config/google-chrome",
    "~/.config/chromium",
    "~/.config/BraveSoftware",
    "~/.config/microsoft-edge",
    "~/.config/jp",
    // The terminals: a tool has no terminal input, and must not read the
    // keys the user types at jp's prompts.
    "/dev/tty",
    "/dev/pts",
];

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

/// The sandbox of tool `name`'s process: `conversation.sandbox` with the
/// tool's own added ([`SandboxConfig::with`]).
#[must_use]
pub fn for_tool(config: &crate::AppConfig, name: &str) -> SandboxConfig {
    match config.conversation.tools.get(name) {
        Some(tool) => config.conversation.sandbox.with(&tool.sandbox),
        None => config.conversation.sandbox.clone(),
    }
}

/// The sandbox of the process a call of tool `name` runs in: the tool's
/// own ([`for_tool`]), or for an MCP tool its server's joined to
/// `conversation.sandbox`; `None` for a tool `config` does not have and
/// for one of an MCP server over HTTP, which runs no process of jp's.
#[must_use]
pub fn of_call(config: &crate::AppConfig, name: &str) -> Option<SandboxConfig> {
    let tool = config.conversation.tools.get(name)?;
    match tool.source.mcp_server() {
        Some(server) => {
            let server = config.providers.mcp.get(server)?;
            server
                .url
                .is_none()
                .then(|| config.conversation.sandbox.with(&server.sandbox))
        }
        None => Some(for_tool(config, name)),
    }
}

/// The variables passed to the process of tool `name`:
/// `conversation.sandbox.env`, then the tool's own.
#[must_use]
pub fn tool_env(config: &crate::AppConfig, name: &str) -> Vec<String> {
    for_tool(config, name).env
}

/// The MCP servers of `config`, each with `conversation.sandbox` joined to
/// its own `sandbox`: as they are started.
#[must_use]
pub fn sandboxed_servers(
    config: &crate::AppConfig,
) -> indexmap::IndexMap<String, crate::mcp::McpServerConfig> {
    let mut servers = config.providers.mcp.clone();
    for server in servers.values_mut() {
        server.sandbox = config.conversation.sandbox.with(&server.sandbox);
    }
    servers
}

/// `first`, then what of `then` is not in it.
fn joined(first: &[String], then: &[String]) -> Vec<String> {
    let mut all = first.to_vec();
    all.extend(then.iter().filter(|name| !first.contains(name)).cloned());
    all
}
