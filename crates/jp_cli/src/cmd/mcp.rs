//! `jp mcp`: the configured MCP servers, started to see their state and
//! their tools. These commands (and queries, and `jp policy check` on an
//! MCP tool) start servers; `jp config` commands never do.

use std::process::ExitCode;

use jp_config::AppConfig;
use jp_config::load::Loaded;
use jp_llm::tool::mcp::{McpServer, ServerTool};

use super::format::Format;
use crate::ctx::{Ctx, print_load_error};
use crate::exit;

#[derive(Debug, clap::Subcommand)]
pub enum Mcp {
    /// List the configured MCP servers (`providers.mcp`): each is started,
    /// within its `startup_timeout_secs`, to say whether it starts and
    /// which tools it offers, and under which names jp offers them to the
    /// model. The servers are stopped again before jp exits.
    ///
    /// Exits 0 when every server started, 1 when one did not (or the
    /// config is invalid).
    Ls {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Start one MCP server and show its tools with their input schemas
    /// (the JSON Schema of their arguments, as the server sends it).
    ///
    /// Exits 0 when it started, 1 when it did not (or the config is
    /// invalid), 2 when no server has that name.
    Tools {
        /// The server's name: `NAME` of `providers.mcp.NAME`.
        #[arg(add = clap_complete::ArgValueCandidates::new(super::complete::servers))]
        server: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

/// What starting one server gave.
struct Started {
    name: String,
    /// Its tools, or why it did not start.
    tools: Result<Vec<ServerTool>, String>,
}

impl Mcp {
    pub fn run(self, ctx: &Ctx) -> Result<ExitCode, crate::error::Error> {
        let loaded = match ctx.load() {
            Ok(loaded) => loaded,
            Err(error) => {
                print_load_error(&error);
                return Ok(exit::INVALID_CONFIG.into());
            }
        };
        match self {
            Self::Ls { format } => {
                let names: Vec<String> = loaded.config.providers.mcp.keys().cloned().collect();
                if names.is_empty() && format == Format::Text {
                    jp_term::outln!(
                        "no MCP server is configured (add `[providers.mcp.NAME]` with its `command`, or its `url` for a server over HTTP)"
                    );
                    return Ok(ExitCode::SUCCESS);
                }
                let started = start(ctx, &loaded, &names)?;
                match format {
                    Format::Json => print_json(&loaded.config, &started, false)?,
                    Format::Text => {
                        for server in &started {
                            print_ls(&loaded.config, server);
                        }
                    }
                }
                Ok(ended(&started))
            }
            Self::Tools { server, format } => {
                if !loaded.config.providers.mcp.contains_key(&server) {
                    let names: Vec<&str> = loaded
                        .config
                        .providers
                        .mcp
                        .keys()
                        .map(String::as_str)
                        .collect();
                    let list = if names.is_empty() {
                        "none".to_owned()
                    } else {
                        names.join(", ")
                    };
                    jp_term::errln!(
                        "error: no MCP server `{server}` is configured (servers: {list}); add `[providers.mcp.{server}]` with its `command` or `url`"
                    );
                    return Ok(exit::USAGE.into());
                }
                let started = start(ctx, &loaded, std::slice::from_ref(&server))?;
                match format {
                    Format::Json => print_json(&loaded.config, &started, true)?,
                    Format::Text => {
                        for server in &started {
                            print_tools(&loaded.config, server);
                        }
                    }
                }
                Ok(ended(&started))
            }
        }
    }
}

/// 0 when every server started, else 1.
fn ended(started: &[Started]) -> ExitCode {
    if started.iter().all(|s| s.tools.is_ok()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Starts each server of `names` in turn, reads its tools and stops it.
fn start(
    ctx: &Ctx,
    loaded: &Loaded,
    names: &[String],
) -> Result<Vec<Started>, crate::error::Error> {
    let root = loaded
        .workspace_root
        .clone()
        .unwrap_or_else(|| ctx.cwd.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let servers = &jp_config::sandbox::sandboxed_servers(&loaded.config);
    Ok(runtime.block_on(async {
        let mut started = Vec::new();
        for name in names {
            let Some(config) = servers.get(name) else {
                continue;
            };
            let tools = match McpServer::start(name, config, &root).await {
                Ok(server) => {
                    let tools = server.tools().to_vec();
                    server.shutdown().await;
                    Ok(tools)
                }
                Err(error) => Err(error.to_string()),
            };
            started.push(Started {
                name: name.clone(),
                tools,
            });
        }
        started
    }))
}

/// `text` with every line after the first indented by `indent`.
fn indented(text: &str, indent: &str) -> String {
    text.lines()
        .collect::<Vec<_>>()
        .join(&format!("\n{indent}"))
}

/// The first line of a description, for a listing.
fn first_line(text: Option<&str>) -> &str {
    text.and_then(|t| t.lines().next()).unwrap_or("")
}

/// How the config offers the server's tool: `conversation.tools.X` for
/// each entry that names it, `disabled` after those that are off.
fn offered_as(config: &AppConfig, server: &str, tool: &str) -> Vec<String> {
    crate::mcp::configured_as(config, server, tool)
        .into_iter()
        .map(|(key, enabled)| {
            if enabled {
                key
            } else {
                format!("{key}, disabled")
            }
        })
        .collect()
}

/// Why jp cannot offer the server's tool whatever the config says: its
/// schema is one jp cannot use (a `$ref` to another document, too large).
fn unusable(tool: &ServerTool) -> Option<String> {
    let schema = serde_json::Value::Object(tool.input_schema.clone());
    jp_config::tool::schema::usable(&schema)
        .err()
        .map(|reason| reason.to_string())
}

/// One server of `jp mcp ls`: its state, then a line a tool.
fn print_ls(config: &AppConfig, server: &Started) {
    let tools = match &server.tools {
        Ok(tools) => tools,
        Err(error) => {
            jp_term::outln!("{}: not started: {}", server.name, indented(error, "  "));
            return;
        }
    };
    let count = match tools.len() {
        1 => "1 tool".to_owned(),
        n => format!("{n} tools"),
    };
    jp_term::outln!("{}: started, {count}", server.name);
    let width = tools
        .iter()
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(0);
    for tool in tools {
        let used = offered_as(config, &server.name, &tool.name);
        let used = if used.is_empty() {
            "not configured".to_owned()
        } else {
            used.join("; ")
        };
        let used = match unusable(tool) {
            Some(reason) => format!("{used}; not offered: {reason}"),
            None => used,
        };
        let about = match first_line(tool.description.as_deref()) {
            "" => format!("({used})"),
            description => format!("{description} ({used})"),
        };
        jp_term::outln!("  {:width$}  {about}", tool.name);
    }
}

/// One server of `jp mcp tools`: each tool with its description and its
/// input schema.
fn print_tools(config: &AppConfig, server: &Started) {
    let tools = match &server.tools {
        Ok(tools) => tools,
        Err(error) => {
            jp_term::outln!("{}: not started: {}", server.name, indented(error, "  "));
            return;
        }
    };
    for tool in tools {
        match &tool.title {
            Some(title) => jp_term::outln!("{} ({title})", tool.name),
            None => jp_term::outln!("{}", tool.name),
        }
        if let Some(description) = &tool.description {
            jp_term::outln!("  {}", indented(description, "  "));
        }
        let used = offered_as(config, &server.name, &tool.name);
        if used.is_empty() {
            jp_term::outln!("  not configured");
        } else {
            jp_term::outln!("  configured as {}", used.join("; "));
        }
        if let Some(reason) = unusable(tool) {
            jp_term::outln!("  not offered: {reason}");
        }
        let schema = serde_json::to_string_pretty(&tool.input_schema).unwrap_or_default();
        jp_term::outln!("  input schema: {}", indented(&schema, "  "));
    }
}

/// One JSON document: each server's state and tools (with their schemas
/// when `schemas`).
fn print_json(
    config: &AppConfig,
    started: &[Started],
    schemas: bool,
) -> Result<(), serde_json::Error> {
    let servers: Vec<serde_json::Value> = started
        .iter()
        .map(|server| {
            let mut out = serde_json::json!({ "name": server.name });
            match &server.tools {
                Ok(tools) => {
                    out["state"] = "started".into();
                    let tools: Vec<serde_json::Value> = tools
                        .iter()
                        .map(|tool| {
                            let configured: Vec<serde_json::Value> =
                                crate::mcp::configured_as(config, &server.name, &tool.name)
                                    .into_iter()
                                    .map(|(key, enabled)| {
                                        serde_json::json!({ "key": key, "enabled": enabled })
                                    })
                                    .collect();
                            let mut out = serde_json::json!({
                                "name": tool.name,
                                "title": tool.title,
                                "description": tool.description,
                                "configured_as": configured,
                            });
                            if let Some(reason) = unusable(tool) {
                                out["unusable"] = reason.into();
                            }
                            if schemas {
                                out["input_schema"] = tool.input_schema.clone().into();
                            }
                            out
                        })
                        .collect();
                    out["tools"] = tools.into();
                }
                Err(error) => {
                    out["state"] = "failed".into();
                    out["error"] = error.clone().into();
                }
            }
            out
        })
        .collect();
    let out = serde_json::json!({ "servers": servers });
    jp_term::printer::stdout_json(&serde_json::to_string_pretty(&out)?);
    Ok(())
}
