//! MCP tools in a query: their servers' schemas merged into the config
//! ([`attach`]), and the [`Executor`] that runs a call on its server (or a
//! local tool as a process).
//!
//! Everything else a call goes through (D25 policies on its arguments,
//! D26 decisions while they stream, the check at its start, stateful
//! policies, the edit) works on the tool's config and its parameters, so
//! once [`attach`] has put the server's schema there, an MCP tool is a
//! tool like any other up to the moment it runs.

use std::collections::HashSet;

use jp_config::diagnostic::Diagnostic;
use jp_config::tool::schema::{AdoptError, adopt};
use jp_config::tool::wildcard::{expand, wildcard_name, wildcard_server};
use jp_config::tool::{ToolConfig, offered};
use jp_config::validate::{McpSchemas, Problem, validate_with};
use jp_config::{AppConfig, ConfigPath};
use jp_llm::tool::Executor;
use jp_llm::tool::mcp::{McpError, McpServers, ServerTool};
use tokio::sync::Mutex;

use jp_term::printer::{Printer, Style};

/// Where a config problem is written: the loaded config's file and line
/// for it ([`jp_config::load::Loaded::place`]).
pub type Locate<'a> = &'a dyn Fn(Problem) -> Diagnostic;

/// Puts each offered MCP tool's schema into `config`: starts the servers
/// they name, reads their tools, imports each tool's `inputSchema` into
/// its parameters (with what the config adds) and takes its description
/// where the config sets none; then checks the config again now that the
/// parameters are known (a rule on an argument the server lacks is an
/// error).
///
/// A server that cannot start is reported on `printer` and its tools are
/// not offered in this query. Each problem is said with the file and line
/// `locate` finds for it, like the loader's.
///
/// # Errors
///
/// The config errors found, one a line.
pub async fn attach(
    config: &mut AppConfig,
    servers: &Mutex<McpServers>,
    printer: &Printer,
    locate: Locate<'_>,
) -> Result<(), String> {
    let configured: HashSet<String> = config.conversation.tools.keys().cloned().collect();
    let mut errors = expand_wildcards(config, servers, printer, locate).await;
    let wanted: Vec<(String, String)> = offered(&config.conversation.tools)
        .filter_map(|(name, tool)| {
            tool.source
                .mcp_server()
                .map(|server| (name.clone(), server.to_owned()))
        })
        .collect();
    if wanted.is_empty() && errors.is_empty() {
        return Ok(());
    }
    let mut servers = servers.lock().await;
    for (name, server) in wanted {
        let Some(tool) = config.conversation.tools.get_mut(&name) else {
            continue;
        };
        // An entry a wildcard added is written as the wildcard's.
        let entry = if configured.contains(&name) {
            name.clone()
        } else {
            wildcard_name(&server)
        };
        match servers.server(&server).await {
            Ok(running) => match import(&name, &entry, &server, tool, running.tools()) {
                Ok(()) => {}
                Err(Imported::Config(error)) => errors.push(*error),
                // A schema jp cannot use costs that tool alone: said
                // once, and the rest of the server and the query go on.
                Err(Imported::Unusable(reason)) => {
                    say_once(
                        printer,
                        &format!("warning: {reason}; tool {name} is not offered to the model"),
                    );
                    tool.enable = false;
                }
            },
            Err(error) => {
                printer.chrome_line(
                    Style::Bad,
                    &format!(
                        "{}; tool {name} is not offered to the model",
                        start_error(&server, &error, locate)
                    ),
                );
                tool.enable = false;
            }
        }
    }
    drop(servers);
    if errors.is_empty() {
        errors.extend(
            validate_with(config, McpSchemas::Known)
                .into_iter()
                .filter(|problem| problem.diagnostic.is_error()),
        );
    }
    if errors.is_empty() {
        Ok(())
    } else {
        let lines: Vec<String> = errors
            .into_iter()
            .map(|problem| locate(problem).to_string())
            .collect();
        Err(format!(
            "the config does not fit the MCP servers' tools:\n{}",
            lines.join("\n")
        ))
    }
}

/// `error: ...` for a server that did not start: a program that cannot be
/// run is a mistake in its `command`, and a header's variable that is not
/// set one in that setting, each said with the file and line of it;
/// anything else is the server's doing.
fn start_error(server: &str, error: &McpError, locate: Locate<'_>) -> String {
    match error {
        McpError::Start { .. } => {
            let key = ConfigPath::from_segments(["providers", "mcp", server, "command"]);
            locate(Problem::error(key, error.to_string())).to_string()
        }
        // A setting of a server over HTTP that cannot be used: said at
        // that setting (`headers_env.X-Api-Key`).
        McpError::Setting { key, reason, .. } => {
            let mut path = ConfigPath::from_segments(["providers", "mcp", server]);
            for segment in key.splitn(2, '.') {
                path = path.join(segment.to_owned());
            }
            let message = format!("cannot connect to MCP server `{server}`: {reason}");
            locate(Problem::error(path, message)).to_string()
        }
        _ => format!("error: {error}"),
    }
}

/// Gives each tool of a server with an enabled wildcard entry
/// (`'git.*'`) an entry of its own ([`expand`]), starting the server to
/// learn its tools; a server that cannot start is reported on `printer`
/// and its wildcard turned off. Returns the config errors.
async fn expand_wildcards(
    config: &mut AppConfig,
    servers: &Mutex<McpServers>,
    printer: &Printer,
    locate: Locate<'_>,
) -> Vec<Problem> {
    let wildcards: Vec<(String, String)> = offered(&config.conversation.tools)
        .filter_map(|(name, _)| Some((name.clone(), wildcard_server(name)?.to_owned())))
        .collect();
    if wildcards.is_empty() {
        return Vec::new();
    }
    let mut lists = Vec::new();
    let mut servers = servers.lock().await;
    for (name, server) in wildcards {
        match servers.server(&server).await {
            Ok(running) => {
                let tools = running.tools().iter().map(|t| t.name.clone()).collect();
                lists.push((server, tools));
            }
            Err(error) => {
                let key = ConfigPath::from_segments(["conversation", "tools", &name]);
                printer.chrome_line(
                    Style::Bad,
                    &format!(
                        "{}; its tools ({key}) are not offered to the model",
                        start_error(&server, &error, locate)
                    ),
                );
                if let Some(entry) = config.conversation.tools.get_mut(&name) {
                    entry.enable = false;
                }
            }
        }
    }
    expand(&mut config.conversation.tools, &lists)
        .into_iter()
        .map(|(entry, message)| Problem::error(entry, message))
        .collect()
}

/// [`attach`] on a query's shared config, with its executor's servers.
///
/// # Errors
///
/// As [`attach`].
pub async fn attach_shared(
    config: &mut std::sync::Arc<AppConfig>,
    executor: &Executor,
    printer: &Printer,
    locate: Locate<'_>,
) -> Result<(), String> {
    attach(
        std::sync::Arc::make_mut(config),
        executor.servers(),
        printer,
        locate,
    )
    .await
}

/// Says `line` on `printer` unless this process said it already: a query
/// attaches the servers' tools again when a tool changes the config, and
/// a tool jp cannot use is said once.
fn say_once(printer: &Printer, line: &str) {
    static SAID: std::sync::Mutex<Option<HashSet<String>>> = std::sync::Mutex::new(None);
    let mut said = SAID
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if said
        .get_or_insert_with(HashSet::new)
        .insert(line.to_owned())
    {
        printer.chrome_line(Style::Bad, line);
    }
}

/// Why a server's tool could not be imported.
enum Imported {
    /// A mistake in the config: the query does not run.
    Config(Box<Problem>),
    /// The tool's schema cannot be used (said as a sentence): the tool is
    /// not offered.
    Unusable(String),
}

/// [`attach`] outside a query: starts the servers the config's tools
/// name, puts their schemas into `loaded`'s config, and stops them (for
/// `jp policy check` and `jp config validate --mcp`). Problems with a
/// server or a tool's schema are said on stderr as a query says them.
///
/// # Errors
///
/// The runtime cannot start; inside, the config errors found (as
/// [`attach`]).
pub fn attach_once(
    ctx: &crate::ctx::Ctx,
    loaded: &mut jp_config::load::Loaded,
) -> std::io::Result<Result<(), String>> {
    let root = loaded
        .workspace_root
        .clone()
        .unwrap_or_else(|| ctx.cwd.clone());
    let servers = Mutex::new(McpServers::new(
        jp_config::sandbox::sandboxed_servers(&loaded.config),
        root,
    ));
    let printer = Printer::stdio(crate::ctx::color(loaded.config.style.color));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    Ok(runtime.block_on(async {
        let located = loaded.clone();
        let locate = |problem| located.place(problem);
        let attached = attach(&mut loaded.config, &servers, &printer, &locate).await;
        servers.lock().await.shutdown().await;
        attached
    }))
}

/// Imports the server's tool into the config of the tool `name`, written
/// as the entry `entry` (its own, or the wildcard that added it): its
/// schema becomes the tool's ([`adopt`]), with what the config adds.
fn import(
    name: &str,
    entry: &str,
    server: &str,
    tool: &mut ToolConfig,
    offered: &[ServerTool],
) -> Result<(), Imported> {
    let wanted = tool.tool.clone().unwrap_or_else(|| name.to_owned());
    let path = ConfigPath::from_segments(["conversation", "tools", entry]);
    let Some(found) = offered.iter().find(|t| t.name == wanted) else {
        let names = offered
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let at = if tool.tool.is_some() {
            path.join("tool")
        } else {
            path
        };
        return Err(Imported::Config(Box::new(Problem::error(
            at,
            format!("MCP server `{server}` has no tool `{wanted}` (its tools: {names})"),
        ))));
    };
    let schema = serde_json::Value::Object(found.input_schema.clone());
    adopt(tool, &schema).map_err(|error| match error {
        AdoptError::Unusable(reason) => {
            Imported::Unusable(format!("MCP server `{server}`'s tool `{wanted}`: {reason}"))
        }
        AdoptError::Config(message) => {
            Imported::Config(Box::new(Problem::error(path.join("parameters"), message)))
        }
    })?;
    if tool.summary.is_none() && tool.description.is_none() {
        tool.description.clone_from(&found.description);
        tool.summary.clone_from(&found.title);
    }
    Ok(())
}

/// The entries of `conversation.tools` that offer MCP server `server`'s
/// tool `tool`, as config keys, each with whether it is enabled.
/// When none does, the server's wildcard entry (`'git.*'`), if it has one.
#[must_use]
pub fn configured_as(config: &AppConfig, server: &str, tool: &str) -> Vec<(String, bool)> {
    let tools = &config.conversation.tools;
    let wildcard = wildcard_name(server);
    let key = |name: &str| ConfigPath::from_segments(["conversation", "tools", name]).to_string();
    let own: Vec<(String, bool)> = tools
        .iter()
        .filter(|(name, cfg)| {
            **name != wildcard
                && cfg.source.mcp_server() == Some(server)
                && cfg.tool.as_deref().unwrap_or(name.as_str()) == tool
        })
        .map(|(name, cfg)| (key(name), cfg.enable))
        .collect();
    if !own.is_empty() {
        return own;
    }
    tools
        .get(&wildcard)
        .filter(|cfg| cfg.source.mcp_server() == Some(server))
        .map(|cfg| vec![(key(&wildcard), cfg.enable)])
        .unwrap_or_default()
}
