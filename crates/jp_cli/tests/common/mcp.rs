//! The MCP test server (`jp-mcp-test-server`) and workspaces that use it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::Workspace;
use super::query::initialized;

/// The test MCP server's binary, built once per test process (a no-op
/// when `cargo test --workspace` built it already).
pub fn server_binary() -> &'static PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let jp = PathBuf::from(env!("CARGO_BIN_EXE_jp"));
        let profile_dir = jp.parent().unwrap();
        let target_dir = profile_dir.parent().unwrap();
        let status = std::process::Command::new(env!("CARGO"))
            .args([
                "build",
                "-q",
                "-p",
                "jp_test_server",
                "--bin",
                "jp-mcp-test-server",
            ])
            .arg("--target-dir")
            .arg(target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(status.success(), "cannot build jp-mcp-test-server");
        profile_dir.join("jp-mcp-test-server")
    })
}

/// A workspace with the MCP server `test` (its `env` added) and `tools`
/// config lines after it.
pub fn workspace(env: &str, tools: &str) -> Workspace {
    let ws = initialized();
    let config = ws.read("project/.jp/config.toml");
    let command = serde_json::Value::String(server_binary().display().to_string());
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n[providers.mcp.test]\ncommand = [{command}]\nenv = {{ {env} }}\n\n{tools}"
        ),
    );
    ws
}

/// An unattended tool `name` of the server `test`.
pub fn unattended(name: &str) -> String {
    format!("[conversation.tools.{name}]\nsource = \"mcp.test\"\npolicy.run = \"unattended\"\n")
}

/// The pid the test server wrote in the workspace root.
pub fn server_pid(ws: &Workspace) -> Option<u32> {
    std::fs::read_to_string(ws.project().join("mcp-server.pid"))
        .ok()?
        .parse()
        .ok()
}

/// Whether process `pid` runs (exists and is not a zombie).
pub fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
        !matches!(state, Some(Some('Z' | 'X')))
    })
}

/// Asserts that the server that wrote its pid is no longer running (1 s
/// of grace on a busy machine).
pub fn assert_gone(ws: &Workspace) {
    let pid = server_pid(ws).expect("the MCP server never started");
    let deadline = Instant::now() + Duration::from_secs(1);
    while running(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!running(pid), "the MCP server {pid} outlived jp by 1 s");
}

/// `jp-mcp-test-server --http` running in a workspace's root: its
/// endpoint, and the requests it recorded. Killed when dropped.
pub struct HttpServer {
    child: std::process::Child,
    url: String,
    dir: PathBuf,
}

impl HttpServer {
    /// Starts it in `ws`'s project directory and waits for its endpoint.
    pub fn start(ws: &Workspace) -> Self {
        use std::io::BufRead as _;
        let mut child = std::process::Command::new(server_binary())
            .arg("--http")
            .current_dir(ws.project())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("http://127.0.0.1:"), "{line:?}");
        Self {
            child,
            url: line.trim_end().to_owned(),
            dir: ws.project(),
        }
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the process still runs.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Each request it got, as it recorded it (a JSON object: `http`,
    /// `rpc`, `tool`, `session`, `headers`). A line the server is still
    /// writing (no newline yet) is not one yet.
    pub fn requests(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(self.dir.join("http-requests.txt")).unwrap_or_default();
        let complete = text.rfind('\n').map_or("", |end| &text[..end]);
        complete
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// Each request as `HTTP rpc tool`, the parts it has, in order.
    pub fn calls(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| {
                let mut parts = vec![r["http"].as_str().unwrap().to_owned()];
                parts.extend(r["rpc"].as_str().map(str::to_owned));
                parts.extend(r["tool"].as_str().map(str::to_owned));
                parts.join(" ")
            })
            .collect()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A workspace whose MCP server `test` is `server`, reached over HTTP,
/// with `keys` added to its table and `tools` after it.
pub fn http_workspace(keys: &str, tools: &str) -> (Workspace, HttpServer) {
    let ws = initialized();
    let server = HttpServer::start(&ws);
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n[providers.mcp.test]\nurl = \"{}\"\n{keys}\n{tools}",
            server.url()
        ),
    );
    (ws, server)
}
