//! MCP servers (the Model Context Protocol) as a source of tools: one
//! server per `providers.mcp.NAME`, with the official SDK (`rmcp`): a
//! process jp runs and speaks to over its stdin and stdout (`command`), or
//! a server it reaches over Streamable HTTP (`url`, see the `http` module:
//! the same bounds, each call a request of one session, the session ended
//! with `DELETE` when jp is done).
//!
//! A server starts when a query first needs it ([`McpServers::server`]):
//! in the workspace root, with its `env` added, contained like a local
//! tool (its own process group, the parent-death signal and a sentinel,
//! see the `containment` module), so that no server outlives jp, however
//! jp ends. The `initialize` handshake and `tools/list` must finish within
//! its `startup_timeout_secs`.
//!
//! [`McpServer::call`] never fails: a timeout, a crash mid-call, a line
//! that is not JSON-RPC, an oversized result or an interrupted call each
//! become an [`Outcome::Error`] naming the server, so the model always has
//! a result and the turn goes on. A server that broke is stopped, and
//! started again when a call needs it. An interrupted call is abandoned
//! with the protocol's `notifications/cancelled`; the server keeps
//! running, unless the user aborted the turn: then the caller kills it
//! ([`McpServers::kill`]). Its stderr goes to jp's log, escaped, never to
//! the terminal. A server over HTTP that fails a request (an HTTP error,
//! a dropped connection) is broken the same way: its session is closed and
//! a new one opened for the next call.

mod error;
mod http;
mod lines;
mod result;

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indexmap::IndexMap;
use jp_config::mcp::McpServerConfig;
use jp_tool::Outcome;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, PaginatedRequestParams, ServerResult,
};
use rmcp::service::{
    ClientCacheConfig, PeerRequestOptions, RequestHandle, RoleClient, RunningService, ServiceError,
    ServiceExt as _,
};
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::containment::{self, Containment};
use super::local::{ToolLimits, limit_key};
pub use error::McpError;
pub use lines::{Fault, MAX_LINE_BYTES};
pub use result::outcome;

/// The reason jp gives a server in `notifications/cancelled` when the user
/// interrupts a call.
pub const CANCEL_REASON: &str = "the user interrupted the call";

/// How long writing a cancellation to a server may take.
const CANCEL_WAIT: Duration = Duration::from_secs(1);

/// How many lines of a server's stderr an error message quotes (its end).
const STDERR_LINES: usize = 10;

/// The most bytes of one line of a server's stderr that jp keeps (and
/// logs): the rest of a longer line is dropped as it is read, so a server
/// that writes without a newline costs no memory.
pub const MAX_STDERR_LINE_BYTES: usize = 1024;

/// The most pages of `tools/list` jp reads from a server: one that pages
/// without end fails its start.
pub const MAX_TOOL_PAGES: usize = 100;

/// The most tools jp takes from a server.
pub const MAX_SERVER_TOOLS: usize = 1000;

/// The most bytes of tools (their JSON, every page together) jp takes from
/// a server's `tools/list`.
pub const MAX_TOOLS_LIST_BYTES: usize = 16 * 1024 * 1024;

/// How long a server whose connection closed has to exit before jp says
/// it did not.
const EXIT_WAIT: Duration = Duration::from_millis(500);

/// How long a server may take to exit once jp closes its stdin, before it
/// is killed.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(1);

/// One tool a server offers, from its `tools/list`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTool {
    /// The server's name for it.
    pub name: String,
    /// Its human-readable title, if any.
    pub title: Option<String>,
    /// What it does.
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    pub input_schema: Map<String, Value>,
}

/// The end of a server's stderr, kept for error messages.
type StderrTail = Arc<Mutex<VecDeque<String>>>;

/// One running MCP server: a process jp started, or a session with a
/// server over HTTP.
pub struct McpServer {
    name: String,
    service: RunningService<RoleClient, ()>,
    /// The process; none for a server over HTTP.
    child: Option<Child>,
    containment: Option<Containment>,
    faults: watch::Receiver<Option<Fault>>,
    stderr: StderrTail,
    tools: Vec<ServerTool>,
    /// The server broke (crashed, wrote garbage, did not answer): it is
    /// stopped, and started again when next needed.
    broken: bool,
    /// Its process's private `TMPDIR` (none over HTTP); declared last, so
    /// it goes after the process.
    _confinement: Option<super::sandbox::Confinement>,
}

impl McpServer {
    /// Starts server `name` in `root` (or connects to it at its `url`),
    /// shakes hands and reads its tools, all within its startup timeout.
    ///
    /// # Errors
    ///
    /// Why it is not available, naming it.
    pub async fn start(
        name: &str,
        config: &McpServerConfig,
        root: &Path,
    ) -> Result<Self, McpError> {
        match &config.url {
            Some(url) => Self::connect(name, config, url).await,
            None => Self::spawn(name, config, root).await,
        }
    }

    /// Connects to server `name` over Streamable HTTP at `url`.
    async fn connect(name: &str, config: &McpServerConfig, url: &str) -> Result<Self, McpError> {
        let transport = http::transport(name, config, url)?;
        // No output to watch and no stderr: the sender goes at once, so
        // the fault arms never fire.
        let (_, faults) = watch::channel(None);
        let mut server = Starting {
            name,
            timeout: config.startup_timeout(),
            faults,
            stderr: StderrTail::default(),
        };
        let deadline = tokio::time::Instant::now() + server.timeout;
        let service = server
            .within(deadline, async {
                ().serve(transport).await.map_err(|e| match e {
                    rmcp::service::ClientInitializeError::ConnectionClosed(_) => {
                        "the server closed the connection during the handshake".to_owned()
                    }
                    rmcp::service::ClientInitializeError::TransportError { error, .. } => {
                        format!("cannot reach it: {}", http::describe(error.error.as_ref()))
                    }
                    other => http::describe(&other),
                })
            })
            .await?;
        let tools = server.list_tools(&service, deadline).await?;
        tracing::info!(server = name, "MCP server connected over HTTP");
        Ok(Self {
            name: name.to_owned(),
            service,
            child: None,
            containment: None,
            faults: server.faults,
            stderr: server.stderr,
            tools,
            broken: false,
            _confinement: None,
        })
    }

    /// Starts server `name`'s `command` in `root`.
    async fn spawn(name: &str, config: &McpServerConfig, root: &Path) -> Result<Self, McpError> {
        let Some((program, args)) = config.command.split_first() else {
            return Err(McpError::Start {
                server: name.to_owned(),
                program: String::new(),
                reason: format!("it has no command; set `providers.mcp.{name}.command`"),
            });
        };
        let mut command = Command::new(program);
        let sandbox = super::sandbox::Sandbox::from_config(&config.sandbox);
        let confinement = sandbox
            .apply(&mut command, root)
            .map_err(|e| McpError::Start {
                server: name.to_owned(),
                program: program.clone(),
                reason: e.to_string(),
            })?;
        command
            .args(args)
            .envs(&config.env)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let start_error = |reason: String| McpError::Start {
            server: name.to_owned(),
            program: program.clone(),
            reason,
        };
        let (mut child, containment) = containment::spawn(command)
            .await
            .map_err(|e| start_error(e.to_string()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(start_error("its standard streams were not piped".into()));
        };
        let tail = StderrTail::default();
        let logging = tokio::spawn(log_stderr(name.to_owned(), stderr, Arc::clone(&tail)));
        let (fault_sender, faults) = watch::channel(None);
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        tokio::spawn(lines::forward(stdout, ours, fault_sender));
        let mut server = Starting {
            name,
            timeout: config.startup_timeout(),
            faults,
            stderr: tail,
        };
        let deadline = tokio::time::Instant::now() + server.timeout;
        let handshake = server
            .within(deadline, async {
                ().serve((theirs, stdin)).await.map_err(|e| match e {
                    rmcp::service::ClientInitializeError::ConnectionClosed(_) => {
                        "the server closed the connection during the handshake".to_owned()
                    }
                    other => other.to_string(),
                })
            })
            .await;
        let service = match handshake {
            Ok(service) => service,
            Err(error) => return Err(exited(error, &mut child, logging, &server).await),
        };
        let tools = server.list_tools(&service, deadline).await?;
        tracing::info!(server = name, "MCP server started");
        Ok(Self {
            name: name.to_owned(),
            service,
            child: Some(child),
            containment: Some(containment),
            faults: server.faults,
            stderr: server.stderr,
            tools,
            broken: false,
            _confinement: Some(confinement),
        })
    }

    /// The tools it offers, in its order.
    #[must_use]
    pub fn tools(&self) -> &[ServerTool] {
        &self.tools
    }

    /// Calls its tool `tool` with `arguments`; never fails (see the module
    /// docs). `limits.timeout` bounds the wait for the answer and
    /// `limits.max_output_bytes` the result's text; `cancel` abandons the
    /// call: jp sends the server `notifications/cancelled` for it (written
    /// to the server before this returns) and the server keeps running.
    pub async fn call(
        &mut self,
        tool: &str,
        arguments: Map<String, Value>,
        limits: &ToolLimits,
        cancel: &CancellationToken,
    ) -> Outcome {
        let server = self.name.clone();
        self.faults.mark_unchanged();
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let sent = self
            .service
            .peer()
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await;
        let mut handle = match sent {
            Ok(handle) => handle,
            Err(error) => return self.failed(tool, error).await,
        };
        let answer = tokio::select! {
            answer = &mut handle.rx => answer.unwrap_or(Err(ServiceError::TransportClosed)),
            () = cancel.cancelled() => {
                cancel_call(handle, CANCEL_REASON.to_owned()).await;
                return Outcome::error(format!(
                    "The user interrupted the call to `{tool}` on MCP server `{server}`; jp sent the server MCP cancellation."
                ));
            }
            () = tokio::time::sleep(limits.timeout) => {
                let secs = limits.timeout.as_secs();
                cancel_call(handle, format!("no answer within {secs} s")).await;
                self.broken = true;
                return Outcome::Error {
                    message: format!(
                        "MCP server `{server}` did not answer the call to `{tool}` within {secs} s{}; jp sent it MCP cancellation and {}",
                        limit_key(limits.timeout_key.as_deref()),
                        self.stopped()
                    ),
                    transient: true,
                };
            }
            // The output ending is no fault: the call's answer says the
            // connection closed, and the server's exit status is read then.
            Ok(()) = self.faults.changed() => {
                self.broken = true;
                let fault = self.faults.borrow().clone();
                let what = fault.map_or_else(|| "its output ended".to_owned(), |f| f.to_string());
                return Outcome::error(format!(
                    "MCP server `{server}` broke the call to `{tool}`: {what}; jp stopped it"
                ));
            }
        };
        let result = match answer {
            Ok(ServerResult::CallToolResult(result)) => serde_json::to_value(&result),
            Ok(ServerResult::EmptyResult(_)) => Ok(Value::Object(Map::new())),
            Ok(_) => {
                return Outcome::error(format!(
                    "MCP server `{server}` answered the call to `{tool}` with something other than a tool result"
                ));
            }
            Err(ServiceError::McpError(error)) => {
                return Outcome::error(format!(
                    "MCP server `{server}` refused the call to `{tool}`: {}",
                    error.message
                ));
            }
            Err(error) => return self.failed(tool, error).await,
        };
        match result {
            Ok(value) => outcome(&server, tool, &value, limits),
            Err(e) => Outcome::error(format!(
                "cannot read MCP server `{server}`'s answer to `{tool}`: {e}"
            )),
        }
    }

    /// The error of a call to `tool` that failed for `error`: the server
    /// broke (it is started again for the next call); its exit status and
    /// the end of its stderr, when it exited.
    async fn failed(&mut self, tool: &str, error: ServiceError) -> Outcome {
        self.broken = true;
        let Some(child) = &mut self.child else {
            let error = match &error {
                // rmcp says no more when the stream ends early, or when it
                // refuses an event over its limit.
                ServiceError::TransportClosed => format!(
                    "the answer's stream ended before the answer came (the connection dropped, or the answer was over the {} MiB jp reads)",
                    MAX_LINE_BYTES / (1024 * 1024)
                ),
                ServiceError::TransportSend(e) => http::describe(e.error.as_ref()),
                other => http::describe(other),
            };
            return Outcome::error(format!(
                "MCP server `{}` failed during the call to `{tool}`: {error}; jp closed its session",
                self.name
            ));
        };
        let error = match error {
            ServiceError::TransportClosed => "the server closed the connection".to_owned(),
            other => other.to_string(),
        };
        let exit = match tokio::time::timeout(EXIT_WAIT, child.wait()).await {
            Ok(Ok(status)) => format!(" (it exited: {status})"),
            _ => String::new(),
        };
        Outcome::error(format!(
            "MCP server `{}` failed during the call to `{tool}`: {error}{exit}{}",
            self.name,
            stderr_suffix(&self.stderr)
        ))
    }

    /// What stopping it does, for a message: a process is stopped, a
    /// session over HTTP closed.
    fn stopped(&self) -> &'static str {
        if self.child.is_some() {
            "stopped it"
        } else {
            "closed its session"
        }
    }

    /// Whether it broke and must be started again before the next call.
    #[must_use]
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Kills it at once, with every process it started: the user aborted
    /// the turn while it ran a call. A server over HTTP is not jp's to
    /// kill: its session is closed.
    pub async fn kill(mut self) {
        let Some(child) = &mut self.child else {
            return self.shutdown().await;
        };
        if let Some(containment) = self.containment.take() {
            containment.release().await;
        }
        let _ = child.start_kill();
        let _ = tokio::time::timeout(SHUTDOWN_WAIT, child.wait()).await;
        tracing::info!(server = %self.name, "MCP server killed");
    }

    /// Stops it: closes the connection (over HTTP, rmcp ends the session
    /// with `DELETE`), gives it [`SHUTDOWN_WAIT`] to exit, then kills what
    /// is left of it.
    pub async fn shutdown(mut self) {
        let _ = self.service.close_with_timeout(SHUTDOWN_WAIT).await;
        if let Some(child) = &mut self.child {
            let _ = tokio::time::timeout(SHUTDOWN_WAIT, child.wait()).await;
        }
        if let Some(containment) = self.containment.take() {
            containment.release().await;
        }
        tracing::info!(server = %self.name, "MCP server stopped");
    }
}

/// Sends the server `notifications/cancelled` for the call `handle` waits
/// for, with `reason`; waits until it is written, but at most
/// [`CANCEL_WAIT`] (a server that reads nothing could block the write).
async fn cancel_call(handle: RequestHandle<RoleClient>, reason: String) {
    if tokio::time::timeout(CANCEL_WAIT, handle.cancel(Some(reason)))
        .await
        .is_err()
    {
        tracing::info!("an MCP server did not take its cancellation within {CANCEL_WAIT:?}");
    }
}

/// A server on its way up: what bounds its start.
struct Starting<'a> {
    name: &'a str,
    timeout: Duration,
    faults: watch::Receiver<Option<Fault>>,
    stderr: StderrTail,
}

impl Starting<'_> {
    /// Reads the server's tools (every page) before `deadline`, within
    /// [`MAX_TOOL_PAGES`], [`MAX_SERVER_TOOLS`] and [`MAX_TOOLS_LIST_BYTES`].
    async fn list_tools(
        &mut self,
        service: &RunningService<RoleClient, ()>,
        deadline: tokio::time::Instant,
    ) -> Result<Vec<ServerTool>, McpError> {
        let listed = self
            .within(deadline, async {
                let peer = service.peer();
                // rmcp would keep each page a server marks as cacheable:
                // jp reads the list once per start.
                peer.set_response_cache_config(ClientCacheConfig::disabled())
                    .await;
                let mut tally = ToolsTally::default();
                let mut tools = Vec::new();
                let mut cursor = None;
                loop {
                    tally.page()?;
                    let params =
                        cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
                    let page = peer.list_tools(params).await.map_err(|e| e.to_string())?;
                    for tool in page.tools {
                        tally.tool(serde_json::to_vec(&tool).map_or(0, |json| json.len()))?;
                        tools.push(tool);
                    }
                    match page.next_cursor {
                        Some(next) => cursor = Some(next),
                        None => break,
                    }
                }
                Ok(tools)
            })
            .await?;
        Ok(listed
            .into_iter()
            .map(|tool| ServerTool {
                name: tool.name.into_owned(),
                title: tool.title,
                description: tool.description.map(std::borrow::Cow::into_owned),
                input_schema: (*tool.input_schema).clone(),
            })
            .collect())
    }

    /// Runs one step of the start before `deadline`, failing it on a fault
    /// of the server's output.
    async fn within<T>(
        &mut self,
        deadline: tokio::time::Instant,
        step: impl Future<Output = Result<T, String>>,
    ) -> Result<T, McpError> {
        let failed = |reason: String, stderr: &StderrTail| McpError::Protocol {
            server: self.name.to_owned(),
            reason,
            stderr: stderr_suffix(stderr),
        };
        tokio::select! {
            done = step => done.map_err(|reason| failed(reason, &self.stderr)),
            () = tokio::time::sleep_until(deadline) => Err(McpError::StartupTimeout {
                server: self.name.to_owned(),
                secs: self.timeout.as_secs(),
                stderr: stderr_suffix(&self.stderr),
            }),
            Ok(()) = self.faults.changed() => {
                let fault = self.faults.borrow().clone();
                let reason = fault.map_or_else(|| "its output ended".to_owned(), |f| f.to_string());
                Err(failed(reason, &self.stderr))
            }
        }
    }
}

/// The error of a handshake that failed: if the server exited (it may
/// have before jp could write to it), that, with the end of its stderr
/// once it is read; otherwise `error`.
async fn exited(
    error: McpError,
    child: &mut Child,
    logging: tokio::task::JoinHandle<()>,
    server: &Starting<'_>,
) -> McpError {
    let Ok(Ok(status)) = tokio::time::timeout(EXIT_WAIT, child.wait()).await else {
        return error;
    };
    let _ = tokio::time::timeout(EXIT_WAIT, logging).await;
    McpError::Protocol {
        server: server.name.to_owned(),
        reason: format!("it exited during the handshake ({status})"),
        stderr: stderr_suffix(&server.stderr),
    }
}

/// What jp has read of a server's `tools/list`, against its bounds.
#[derive(Debug, Default)]
struct ToolsTally {
    pages: usize,
    tools: usize,
    bytes: usize,
}

impl ToolsTally {
    /// One more page is to be read.
    fn page(&mut self) -> Result<(), String> {
        self.pages += 1;
        if self.pages > MAX_TOOL_PAGES {
            return Err(format!(
                "its tools/list goes on past {MAX_TOOL_PAGES} pages, the most jp reads from a server"
            ));
        }
        Ok(())
    }

    /// One more tool, `bytes` long as JSON.
    fn tool(&mut self, bytes: usize) -> Result<(), String> {
        self.tools += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        if self.tools > MAX_SERVER_TOOLS {
            return Err(format!(
                "it lists more than {MAX_SERVER_TOOLS} tools, the most jp takes from a server"
            ));
        }
        if self.bytes > MAX_TOOLS_LIST_BYTES {
            return Err(format!(
                "its tools/list is over {} MiB, the most jp reads from a server",
                MAX_TOOLS_LIST_BYTES / (1024 * 1024)
            ));
        }
        Ok(())
    }
}

/// Logs each line of a server's stderr, escaped, and keeps its last lines;
/// of a line, only its first [`MAX_STDERR_LINE_BYTES`] are kept.
async fn log_stderr(server: String, stderr: impl AsyncRead + Unpin, tail: StderrTail) {
    let mut reader = StderrLines::default();
    let mut stderr = BufReader::new(stderr);
    while let Ok(buffer) = stderr.fill_buf().await {
        if buffer.is_empty() {
            break;
        }
        let taken = buffer.len();
        let lines = reader.push(buffer);
        stderr.consume(taken);
        for line in lines {
            keep_stderr_line(&server, &tail, line);
        }
    }
    if let Some(line) = reader.finish() {
        keep_stderr_line(&server, &tail, line);
    }
}

fn keep_stderr_line(server: &str, tail: &StderrTail, line: String) {
    tracing::info!(server = %server, "MCP server stderr: {line}");
    if let Ok(mut tail) = tail.lock() {
        if tail.len() == STDERR_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

/// A server's stderr cut into lines, each kept to its first
/// [`MAX_STDERR_LINE_BYTES`] and escaped; a longer line ends with a note
/// and is given as soon as it is over the bound (the rest of it is
/// dropped as it comes).
#[derive(Debug, Default)]
struct StderrLines {
    line: Vec<u8>,
    /// The line went over the bound and was given already: its rest is
    /// dropped up to its newline.
    skipping: bool,
}

impl StderrLines {
    /// Reads `bytes`; returns the lines they complete (or cut).
    fn push(&mut self, mut bytes: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        while !bytes.is_empty() {
            let (part, ended) = match bytes.iter().position(|b| *b == b'\n') {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            bytes = &bytes[(part.len() + usize::from(ended))..];
            if !self.skipping {
                let room = MAX_STDERR_LINE_BYTES - self.line.len();
                if part.len() > room {
                    self.line.extend_from_slice(&part[..room]);
                    lines.push(format!(
                        "{}… (a line over {MAX_STDERR_LINE_BYTES} bytes, cut)",
                        escaped(&self.line)
                    ));
                    self.line.clear();
                    self.skipping = true;
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            if ended {
                if !self.skipping {
                    lines.push(escaped(&self.line));
                }
                self.line.clear();
                self.skipping = false;
            }
        }
        lines
    }

    /// The stream ended: the last line, if it had no newline.
    fn finish(&mut self) -> Option<String> {
        let line = std::mem::take(&mut self.line);
        (!self.skipping && !line.is_empty()).then(|| escaped(&line))
    }
}

/// Bytes of stderr as text: lossy UTF-8, escaped (a cut character shows as
/// U+FFFD).
fn escaped(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .chars()
        .flat_map(char::escape_debug)
        .collect()
}

/// "; its stderr ends: ..." with the last lines of a server's stderr, or
/// nothing.
fn stderr_suffix(tail: &StderrTail) -> String {
    let lines = tail.lock().map(|t| t.iter().cloned().collect::<Vec<_>>());
    match lines {
        Ok(lines) if !lines.is_empty() => format!("; its stderr ends:\n{}", lines.join("\n")),
        _ => String::new(),
    }
}

/// The MCP servers of one query: each started when first needed, kept
/// until [`Self::shutdown`], started again after it broke.
pub struct McpServers {
    configs: IndexMap<String, McpServerConfig>,
    root: PathBuf,
    running: HashMap<String, McpServer>,
}

impl McpServers {
    /// The servers `configs` describes, none started, to run in `root`.
    #[must_use]
    pub fn new(configs: IndexMap<String, McpServerConfig>, root: PathBuf) -> Self {
        Self {
            configs,
            root,
            running: HashMap::new(),
        }
    }

    /// Server `name`, started now if it is not running (or broke).
    ///
    /// # Errors
    ///
    /// Why it cannot be started.
    pub async fn server(&mut self, name: &str) -> Result<&mut McpServer, McpError> {
        if let Some(broken) = self.running.remove(name) {
            if broken.is_broken() {
                broken.shutdown().await;
            } else {
                self.running.insert(name.to_owned(), broken);
            }
        }
        if !self.running.contains_key(name) {
            let Some(config) = self.configs.get(name) else {
                return Err(McpError::Unknown {
                    server: name.to_owned(),
                });
            };
            let server = McpServer::start(name, config, &self.root).await?;
            self.running.insert(name.to_owned(), server);
        }
        self.running.get_mut(name).ok_or_else(|| McpError::Unknown {
            server: name.to_owned(),
        })
    }

    /// Whether server `name` is reached over HTTP (it has a `url`): jp
    /// closes its session where it would stop a process.
    #[must_use]
    pub fn over_http(&self, name: &str) -> bool {
        self.configs.get(name).is_some_and(|c| c.url.is_some())
    }

    /// Kills server `name` at once, if it runs ([`McpServer::kill`]).
    pub async fn kill(&mut self, name: &str) {
        if let Some(server) = self.running.remove(name) {
            server.kill().await;
        }
    }

    /// Stops every running server.
    pub async fn shutdown(&mut self) {
        for (_, server) in self.running.drain() {
            server.shutdown().await;
        }
    }
}

#[cfg(test)]
#[path = "mcp_tests.rs"]
mod tests;
