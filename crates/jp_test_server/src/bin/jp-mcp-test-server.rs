//! An MCP server over stdio for jp's tests, built on `rmcp`'s server
//! side, that misbehaves on request.
//!
//! At start it writes its pid to `mcp-server.pid` in its working
//! directory (the workspace root), so a test can check that it is gone.
//! `JP_MCP_TEST_START=hang` makes it never answer the handshake;
//! `JP_MCP_TEST_START=exit` makes it exit before it.
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
//! - `garbage {}`: writes a line that is not JSON to stdout, then hangs;
//! - `huge {bytes}`: answers with that many `x`;
//! - `picture {}`: an image and structured content.

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

struct TestServer;

fn tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    let Value::Object(schema) = schema else {
        unreachable!("every schema here is an object")
    };
    Tool::new(name, description, Arc::new(schema))
}

fn tools() -> Vec<Tool> {
    let none = json!({ "type": "object", "properties": {} });
    vec![
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
        tool("garbage", "Writes a line that is not JSON.", none.clone()),
        tool(
            "huge",
            "Answers with many bytes.",
            json!({ "type": "object", "properties": { "bytes": { "type": "integer" } }, "required": ["bytes"] }),
        ),
        tool("picture", "An image.", none),
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
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
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
                let _ = stdout.write_all(b"this is not json\n");
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
    let Ok(service) = TestServer.serve(rmcp::transport::stdio()).await else {
        return std::process::ExitCode::FAILURE;
    };
    let _ = service.waiting().await;
    std::process::ExitCode::SUCCESS
}
