//! An MCP server over stdio for jp's tests, built on `rmcp`'s server
//! side, that misbehaves on request.
//!
//! At start it writes its pid to `mcp-server.pid` in its working
//! directory (the workspace root), so a test can check that it is gone.
//! `JP_MCP_TEST_START=hang` makes it never answer the handshake;
//! `JP_MCP_TEST_START=exit` makes it exit before it.
//! `JP_MCP_TEST_TOOLS_LIST=forever` makes `tools/list` never end: each page
//! is one tool with a description of `JP_MCP_TEST_PAGE_BYTES` bytes (1 MiB
//! unless set) and a new cursor. `JP_MCP_TEST_STDERR=flood` makes it write
//! to stderr without a newline, without end, from the start.
//!
//! `jp-mcp-test-server --http` serves the same tools over Streamable HTTP
//! instead (rmcp's `StreamableHttpService` on hyper), on a free port of
//! 127.0.0.1: it prints its endpoint (`http://127.0.0.1:PORT/mcp`) as the
//! first line of its stdout, and adds a line of JSON to `http-requests.txt`
//! in its working directory for each request it gets (see
//! [`http::record`]). A `tools/call` of `http500` gets HTTP 500 before
//! rmcp sees it; `crash` ends the process mid-call, which drops the
//! connection.
//!
//! Its tools:
//! - `echo {text}`: answers `echo: TEXT`;
//! - `save {path, content}`: writes `content` to `path` (relative to its
//!   working directory) and says how many bytes;
//! - `read {path}`: answers with the file's text (relative to its working
//!   directory), or an `isError` result;
//! - `fail {}`: an `isError` result;
//! - `crash {}`: logs a line to stderr and exits with status 3;
//! - `hang {}`: never answers; each `notifications/cancelled` it gets (for
//!   any call) adds a line `cancelled: REASON` to `cancelled.txt`;
//! - `garbage {}`: writes lines that are not JSON to stdout, 1 MiB and a
//!   line of them (more than jp skips), then hangs;
//! - `huge {bytes}`: answers with that many `x`;
//! - `picture {}`: an image and structured content;
//! - `http500 {}` (only over HTTP): answered with HTTP 500.
//!
//! `JP_MCP_TEST_SCHEMAS=1` adds tools whose schemas use what published
//! servers send (issue 37), each answering `NAME: ARGUMENTS` (the
//! arguments as compact JSON): `log` (pydantic's `anyOf [T, null]`, as
//! `mcp-server-git`'s `git_log`), `either` (a type list), `edits`
//! (`$defs` and `$ref`), `tree` (a recursive `$ref`), `pick` (a root
//! `anyOf` of two objects) and `remote` (a `$ref` to another document,
//! which jp cannot use). `JP_MCP_TEST_STDOUT_NOISE=N` makes it print N
//! lines that are not JSON on stdout before it speaks JSON-RPC, as some
//! published servers do.

use std::io::Write as _;
use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    ContentBlock, ErrorData, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, ServiceExt as _};
use serde_json::{Map, Value, json};

/// The server; `http` when it serves over HTTP (it then has `http500`).
#[derive(Clone, Copy)]
struct TestServer {
    http: bool,
}

fn tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    let Value::Object(schema) = schema else {
        unreachable!("every schema here is an object")
    };
    Tool::new(name, description, Arc::new(schema))
}

fn tools(http: bool) -> Vec<Tool> {
    let none = json!({ "type": "object", "properties": {} });
    let mut tools = vec![
        tool(
            "echo",
            "Says the text back.",
            json!({ "type": "object", "properties": { "text": { "type": "string", "description": "What to say." } }, "required": ["text"] }),
        ),
        tool(
            "save",
            "Writes a file.",
            json!({ "type": "object", "properties": { "path": { "type": "string" }, "content": { "type": "string" } }, "required": ["path", "content"] }),
        ),
        tool(
            "read",
            "Reads a file.",
            json!({ "type": "object", "properties": { "path": { "type": "string" } }, "required": ["path"] }),
        ),
        tool("fail", "Fails.", none.clone()),
        tool("crash", "Exits mid-call.", none.clone()),
        tool("hang", "Never answers.", none.clone()),
        tool("garbage", "Writes lines that are not JSON.", none.clone()),
        tool(
            "huge",
            "Answers with many bytes.",
            json!({ "type": "object", "properties": { "bytes": { "type": "integer" } }, "required": ["bytes"] }),
        ),
        tool("picture", "An image.", none.clone()),
    ];
    if http {
        tools.push(tool("http500", "Fails with HTTP 500.", none));
    }
    if std::env::var_os("JP_MCP_TEST_SCHEMAS").is_some() {
        tools.extend(schema_tools());
    }
    tools
}

/// The names of [`schema_tools`].
const SCHEMA_TOOLS: &[&str] = &["log", "either", "edits", "tree", "pick", "remote"];

fn schema_tools() -> Vec<Tool> {
    let optional =
        |kind: &str| json!({ "anyOf": [{ "type": kind }, { "type": "null" }], "default": null });
    vec![
        tool(
            "log",
            "Shows commits.",
            json!({
                "type": "object",
                "properties": {
                    "repo_path": { "type": "string", "title": "Repo Path" },
                    "max_count": { "type": "integer", "default": 10, "minimum": 1 },
                    "start_timestamp": optional("string")
                },
                "required": ["repo_path"],
                "title": "GitLog"
            }),
        ),
        tool(
            "either",
            "Takes a flag or a word.",
            json!({
                "type": "object",
                "properties": { "flag": { "type": ["boolean", "string"] } },
                "required": ["flag"],
                "$schema": "http://json-schema.org/draft-07/schema#"
            }),
        ),
        tool(
            "edits",
            "Applies edits.",
            json!({
                "$defs": {
                    "Edit": {
                        "type": "object",
                        "properties": {
                            "file": { "type": "string" },
                            "line": { "type": "integer", "minimum": 1 }
                        },
                        "required": ["file", "line"]
                    }
                },
                "type": "object",
                "properties": { "edits": { "type": "array", "items": { "$ref": "#/$defs/Edit" } } },
                "required": ["edits"]
            }),
        ),
        tool(
            "tree",
            "Takes a tree.",
            json!({
                "$defs": {
                    "Node": {
                        "type": "object",
                        "properties": {
                            "name": { "type": "string" },
                            "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } }
                        },
                        "required": ["name"]
                    }
                },
                "type": "object",
                "properties": { "root": { "$ref": "#/$defs/Node" } },
                "required": ["root"]
            }),
        ),
        tool(
            "pick",
            "Takes an id or a name.",
            json!({
                "anyOf": [
                    { "type": "object", "properties": { "id": { "type": "integer" } }, "required": ["id"] },
                    { "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] }
                ]
            }),
        ),
        tool(
            "remote",
            "Its schema is elsewhere.",
            json!({
                "type": "object",
                "properties": { "x": { "$ref": "https://example.com/x.schema.json" } }
            }),
        ),
    ]
}

fn text(text: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
}

fn string<'a>(arguments: &'a Map<String, Value>, name: &str) -> &'a str {
    arguments
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if std::env::var("JP_MCP_TEST_TOOLS_LIST").as_deref() == Ok("forever") {
            let page: u64 = request
                .and_then(|r| r.cursor)
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            let bytes = std::env::var("JP_MCP_TEST_PAGE_BYTES")
                .ok()
                .and_then(|b| b.parse().ok())
                .unwrap_or(1024 * 1024);
            let tool = Tool::new(
                format!("tool{page}"),
                "d".repeat(bytes),
                Arc::new(Map::new()),
            );
            let mut result = ListToolsResult::with_all_items(vec![tool]);
            result.next_cursor = Some((page + 1).to_string());
            return Ok(result);
        }
        Ok(ListToolsResult::with_all_items(tools(self.http)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        match request.name.as_ref() {
            "echo" => text(format!("echo: {}", string(&arguments, "text"))),
            "save" => {
                let (path, content) = (string(&arguments, "path"), string(&arguments, "content"));
                let parent = std::path::Path::new(path).parent();
                if let Some(parent) = parent.filter(|p| !p.as_os_str().is_empty()) {
                    let _ = std::fs::create_dir_all(parent);
                }
                match std::fs::write(path, content) {
                    Ok(()) => text(format!("saved {} bytes to {path}", content.len())),
                    Err(e) => {
                        Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]).into())
                    }
                }
            }
            "read" => match std::fs::read_to_string(string(&arguments, "path")) {
                Ok(content) => text(content),
                Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]).into()),
            },
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "the tool failed on purpose",
            )])
            .into()),
            "crash" => {
                eprintln!("crashing on purpose \u{1b}[31mred\u{1b}[0m");
                std::process::exit(3)
            }
            "hang" => {
                context.ct.cancelled().await;
                Err(ErrorData::internal_error("cancelled", None))
            }
            "garbage" => {
                let mut stdout = std::io::stdout();
                let line = b"this is not json\n";
                for _ in 0..=(1024 * 1024 / line.len()) {
                    let _ = stdout.write_all(line);
                }
                let _ = stdout.flush();
                context.ct.cancelled().await;
                Err(ErrorData::internal_error("cancelled", None))
            }
            "huge" => {
                let bytes = arguments.get("bytes").and_then(Value::as_u64).unwrap_or(0);
                text("x".repeat(usize::try_from(bytes).unwrap_or(0)))
            }
            "picture" => {
                let mut result = CallToolResult::success(vec![
                    ContentBlock::text("a red dot"),
                    ContentBlock::image("iVBORw0KGgo=", "image/png"),
                ]);
                result.structured_content = Some(json!({ "width": 1 }));
                Ok(result.into())
            }
            name if SCHEMA_TOOLS.contains(&name) => {
                text(format!("{name}: {}", Value::Object(arguments)))
            }
            other => Err(ErrorData::invalid_params(
                format!("no tool `{other}`"),
                None,
            )),
        }
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        let reason = notification.reason.as_deref().unwrap_or("(no reason)");
        let line = format!("cancelled: {reason}\n");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open("cancelled.txt");
        if let Ok(mut file) = file {
            let _ = file.write_all(line.as_bytes());
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let _ = std::fs::write("mcp-server.pid", std::process::id().to_string());
    if std::env::args().nth(1).as_deref() == Some("--http") {
        return http::serve().await;
    }
    if std::env::var("JP_MCP_TEST_STDERR").as_deref() == Ok("flood") {
        std::thread::spawn(|| {
            let chunk = vec![b'e'; 64 * 1024];
            let mut stderr = std::io::stderr();
            while stderr.write_all(&chunk).is_ok() {}
        });
    }
    if let Some(lines) = std::env::var("JP_MCP_TEST_STDOUT_NOISE")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
    {
        let mut stdout = std::io::stdout();
        for i in 0..lines {
            let _ = writeln!(stdout, "Service {i} initialized");
        }
        let _ = stdout.flush();
    }
    match std::env::var("JP_MCP_TEST_START").as_deref() {
        Ok("exit") => {
            eprintln!("refusing to start");
            return std::process::ExitCode::from(2);
        }
        Ok("hang") => loop {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        },
        _ => {}
    }
    let Ok(service) = TestServer { http: false }
        .serve(rmcp::transport::stdio())
        .await
    else {
        return std::process::ExitCode::FAILURE;
    };
    let _ = service.waiting().await;
    std::process::ExitCode::SUCCESS
}

/// The Streamable HTTP mode.
mod http {
    use std::convert::Infallible;
    use std::io::Write as _;
    use std::sync::Arc;

    use bytes::Bytes;
    use http_body_util::{BodyExt as _, Full};
    use hyper::body::Incoming;
    use hyper::{Request, Response, StatusCode};
    use hyper_util::rt::TokioIo;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    use serde_json::{Value, json};

    use super::TestServer;

    type Service = StreamableHttpService<TestServer, LocalSessionManager>;
    type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

    /// Serves until killed; prints the endpoint first.
    pub async fn serve() -> std::process::ExitCode {
        let Ok(listener) = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await else {
            return std::process::ExitCode::FAILURE;
        };
        let Ok(addr) = listener.local_addr() else {
            return std::process::ExitCode::FAILURE;
        };
        let mut stdout = std::io::stdout();
        let _ = writeln!(stdout, "http://{addr}/mcp");
        let _ = stdout.flush();
        let service: Service = StreamableHttpService::new(
            || Ok(TestServer { http: true }),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let service = service.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request| {
                    let service = service.clone();
                    async move { Ok::<_, Infallible>(handle(&service, request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handler)
                    .await;
            });
        }
    }

    /// Records the request, then answers `http500` itself and passes
    /// everything else to rmcp.
    async fn handle(service: &Service, request: Request<Incoming>) -> Response<Body> {
        let (parts, body) = request.into_parts();
        let body = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let tool = message["params"]["name"].as_str();
        record(&parts, &message);
        if message["method"] == "tools/call" && tool == Some("http500") {
            return Response::builder()
                .status(StatusCode::INTERNAL_SERVER_ERROR)
                .body(Full::new(Bytes::from_static(b"internal error on purpose")).boxed())
                .unwrap_or_default();
        }
        service
            .handle(Request::from_parts(parts, Full::new(body)))
            .await
    }

    /// Adds a line to `http-requests.txt`: the HTTP method, the JSON-RPC
    /// method (and tool) if any, whether it named a session, and the
    /// `authorization` header and every `x-` header.
    pub fn record(parts: &hyper::http::request::Parts, message: &Value) {
        let headers: serde_json::Map<String, Value> = parts
            .headers
            .iter()
            .filter(|(name, _)| name.as_str() == "authorization" || name.as_str().starts_with("x-"))
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), Value::String(value))
            })
            .collect();
        let line = json!({
            "http": parts.method.as_str(),
            "rpc": message.get("method"),
            "tool": message["params"].get("name"),
            "session": parts.headers.contains_key("mcp-session-id"),
            "headers": headers,
        });
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open("http-requests.txt");
        // One write per line: `writeln!` writes its pieces one by one, so
        // a reader (and a concurrent request) could see half a line.
        if let Ok(mut file) = file {
            let _ = file.write_all(format!("{line}\n").as_bytes());
        }
    }
}
