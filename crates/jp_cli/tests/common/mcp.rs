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
