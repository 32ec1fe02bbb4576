//! What runs a call, below everything that decides whether it runs: the
//! [`ToolExecutor`] trait (the one side effect of a call, behind which a
//! local tool and an MCP tool differ), the [`ToolTarget`] it runs, the
//! [`LocalExecutor`] (local tools as processes, [`run_local`]) and the
//! [`Executor`] jp runs with (local tools, and MCP tools on their
//! servers). Every policy is applied in front of it, in `jp_cli`'s query.

use std::future::Future;
use std::time::Instant;

use jp_tool::{Outcome, Request};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::local::{ToolLimits, ToolRun, run_local};
use super::mcp::McpServers;

/// What runs a call: a local tool's process, or an MCP server's tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolTarget {
    /// A local tool: its program and arguments.
    Local {
        /// The program and its arguments.
        argv: Vec<String>,
    },
    /// A tool of an MCP server.
    Mcp {
        /// The server, as named under `providers.mcp`.
        server: String,
        /// The server's name for the tool.
        tool: String,
    },
}

impl ToolTarget {
    /// A local tool's program and arguments; nothing for an MCP tool.
    #[must_use]
    pub fn argv(&self) -> &[String] {
        match self {
            Self::Local { argv } => argv,
            Self::Mcp { .. } => &[],
        }
    }
}

/// Runs a tool: the one side effect of a call, behind which a local tool
/// and an MCP tool differ; every policy is applied in front of it. The
/// production executor is [`Executor`] (local tools through
/// [`LocalExecutor`]); tests substitute their own.
pub trait ToolExecutor {
    /// Runs `target` with `request` (on a local tool's stdin; as the
    /// arguments of an MCP `tools/call`).
    fn run(
        &self,
        target: &ToolTarget,
        request: &Request,
        limits: &ToolLimits,
        cancel: &CancellationToken,
    ) -> impl Future<Output = ToolRun>;
}

/// Runs local tools as real processes (`jp_llm::tool::run_local`), and no
/// MCP tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalExecutor;

impl ToolExecutor for LocalExecutor {
    fn run(
        &self,
        target: &ToolTarget,
        request: &Request,
        limits: &ToolLimits,
        cancel: &CancellationToken,
    ) -> impl Future<Output = ToolRun> {
        run_local(target.argv(), request, limits, cancel)
    }
}

/// Runs local tools as processes and MCP tools on their servers, which it
/// starts when first needed and keeps for the query.
pub struct Executor {
    servers: Mutex<McpServers>,
    /// Cancelled when the user aborts the turn (not when they only stop a
    /// call): a server whose call it interrupts is killed, as a local
    /// tool's process is.
    aborted: CancellationToken,
}

impl Executor {
    /// An executor for `servers`, none started; `aborted` is the turn's
    /// interrupt.
    #[must_use]
    pub fn new(servers: McpServers, aborted: CancellationToken) -> Self {
        Self {
            servers: Mutex::new(servers),
            aborted,
        }
    }

    /// The servers, to start them ([`attach`]).
    pub fn servers(&self) -> &Mutex<McpServers> {
        &self.servers
    }

    /// Stops every server it started.
    pub async fn shutdown(&self) {
        self.servers.lock().await.shutdown().await;
    }
}

impl ToolExecutor for Executor {
    async fn run(
        &self,
        target: &ToolTarget,
        request: &Request,
        limits: &ToolLimits,
        cancel: &CancellationToken,
    ) -> ToolRun {
        {
            let (server, tool) = match target {
                ToolTarget::Local { .. } => {
                    return LocalExecutor.run(target, request, limits, cancel).await;
                }
                ToolTarget::Mcp { server, tool } => (server, tool),
            };
            let started = Instant::now();
            let mut servers = self.servers.lock().await;
            let mut outcome = match servers.server(server).await {
                Ok(running) => {
                    running
                        .call(tool, request.tool.arguments.clone(), limits, cancel)
                        .await
                }
                Err(error) => Outcome::error(error.to_string()),
            };
            // Aborted, not only stopped: the server goes with the call,
            // as a local tool's process does.
            // Over HTTP, the session is closed: the server is not jp's.
            if cancel.is_cancelled() && self.aborted.is_cancelled() {
                let stopped = if servers.over_http(server) {
                    "closed its session"
                } else {
                    "stopped it"
                };
                servers.kill(server).await;
                if matches!(outcome, Outcome::Error { .. }) {
                    outcome = Outcome::error(format!(
                        "The user interrupted the call to `{tool}` on MCP server `{server}`; jp sent the server MCP cancellation and {stopped}."
                    ));
                }
            }
            ToolRun {
                outcome,
                stderr: String::new(),
                duration: started.elapsed(),
            }
        }
    }
}
