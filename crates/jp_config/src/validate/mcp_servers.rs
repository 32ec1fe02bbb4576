//! Checks of `providers.mcp`: each server has either a `command` to run
//! or a `url` to reach (one, not both), a `url` jp may send the session
//! over, headers it can send, and a name a tool's `source` can name.

use crate::app::AppConfig;
use crate::mcp::{McpServerConfig, check_header_name, check_url, header_value_ok};
use crate::path::ConfigPath;

/// An error: the key it is about, and what is wrong.
pub(super) type Problem = (ConfigPath, String);

/// Every error of the servers under `providers.mcp`.
pub(super) fn check_mcp_servers(config: &AppConfig, problems: &mut Vec<Problem>) {
    for (name, server) in &config.providers.mcp {
        let base = ConfigPath::from_segments(["providers", "mcp", name]);
        if name.is_empty() || name.contains('.') {
            problems.push(error(base.clone(),
                "an MCP server's name must not be empty or contain `.` (a tool names it as `mcp.NAME`)",
            ));
        }
        check_transport(&base, server, problems);
        if server.startup_timeout_secs == Some(0) {
            problems.push(error(
                base.join("startup_timeout_secs"),
                "must be at least 1",
            ));
        }
    }
}

/// `command` or `url`, exactly one, and what goes with each.
fn check_transport(base: &ConfigPath, server: &McpServerConfig, problems: &mut Vec<Problem>) {
    let Some(url) = &server.url else {
        if server.command.first().is_none_or(String::is_empty) {
            problems.push(error(base.join("command"),
                "an MCP server needs a `command`: the program and its arguments, such as [\"python3\", \"-m\", \"mcp_server_git\"] (or a `url`, for a server reached over HTTP)",
            ));
        }
        let http_only = [
            ("headers", !server.headers.is_empty()),
            ("headers_env", !server.headers_env.is_empty()),
            ("bearer_token_env", server.bearer_token_env.is_some()),
        ];
        for (field, set) in http_only {
            if set {
                problems.push(error(base.join(field),
                    "is sent only to a server reached over HTTP (one with a `url`); this one runs its `command`",
                ));
            }
        }
        return;
    };
    if !server.command.is_empty() {
        problems.push(error(base.join("url"),
            "an MCP server has either a `command` (jp runs it) or a `url` (jp reaches it over HTTP), not both; remove one",
        ));
    }
    if !server.env.is_empty() {
        problems.push(error(base.join("env"),
            "is for a server jp runs (`command`); to send a value from jp's environment to a `url` server, use `headers_env` or `bearer_token_env`",
        ));
    }
    if let Err(reason) = check_url(url) {
        problems.push(error(base.join("url"), reason));
    }
    check_headers(base, server, problems);
}

/// The names and values of `headers`, `headers_env` and
/// `bearer_token_env` (never quoting a value: it may be a secret).
fn check_headers(base: &ConfigPath, server: &McpServerConfig, problems: &mut Vec<Problem>) {
    let bearer = server.bearer_token_env.is_some();
    let names = server
        .headers
        .keys()
        .map(|name| ("headers", name))
        .chain(server.headers_env.keys().map(|name| ("headers_env", name)));
    let mut seen = Vec::new();
    for (field, name) in names {
        let at = base.join(field).join(name.clone());
        let lower = name.to_ascii_lowercase();
        if let Err(reason) = check_header_name(name) {
            problems.push(error(at, reason));
        } else if bearer && lower == "authorization" {
            problems.push(error(
                at,
                "`bearer_token_env` sets `Authorization` already; set it in one place",
            ));
        } else if seen.contains(&lower) {
            problems.push(error(
                at,
                format!("the header `{name}` is set in both `headers` and `headers_env`"),
            ));
        }
        seen.push(lower);
    }
    for (name, value) in &server.headers {
        if !header_value_ok(value) {
            problems.push(error(
                base.join("headers").join(name.clone()),
                "the value has a control character (a line break?), which a header cannot carry",
            ));
        }
    }
    let variables = server
        .headers_env
        .iter()
        .map(|(name, variable)| (base.join("headers_env").join(name.clone()), variable))
        .chain(
            server
                .bearer_token_env
                .iter()
                .map(|variable| (base.join("bearer_token_env"), variable)),
        );
    for (at, variable) in variables {
        if variable.is_empty() || variable.contains(['=', '\0']) {
            problems.push(error(
                at,
                format!("`{variable}` is no environment variable's name"),
            ));
        }
    }
}

/// The error about `path`.
fn error(path: ConfigPath, message: impl Into<String>) -> Problem {
    (path, message.into())
}
