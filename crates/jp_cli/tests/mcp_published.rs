//! A published MCP server, run unmodified through the real `jp` binary
//! (issue 24): `@modelcontextprotocol/server-everything` from npm, which
//! `.ci/run` installs under the target directory (`mcp-servers/npm/`, with
//! `.ci/mcp/install.sh`), over stdio and over Streamable HTTP.
//!
//! Without it the test skips with the reason on stderr, unless
//! `JP_REQUIRE_MCP_EVERYTHING` is set (as `.ci/run` sets it): then it fails.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::providers::{text_reply as text, tool_reply as tool};
use common::query::{initialized, query_command, responses, stored};
use jp_test_server::TestServer;

/// The server's program: `JP_MCP_EVERYTHING`, else where `.ci/run`
/// installs it; `None` (after saying why, or failing when it is required)
/// when it is not there.
fn everything() -> Option<PathBuf> {
    let path = std::env::var_os("JP_MCP_EVERYTHING").map_or_else(
        || {
            let jp = PathBuf::from(env!("CARGO_BIN_EXE_jp"));
            let target = jp.parent().unwrap().parent().unwrap();
            target.join("mcp-servers/npm/node_modules/.bin/mcp-server-everything")
        },
        PathBuf::from,
    );
    if path.is_file() {
        return Some(path);
    }
    let reason = format!(
        "{} is not installed; `.ci/mcp/install.sh TARGET/mcp-servers` installs it",
        path.display()
    );
    assert!(
        std::env::var_os("JP_REQUIRE_MCP_EVERYTHING").is_none(),
        "JP_REQUIRE_MCP_EVERYTHING is set, but {reason}"
    );
    eprintln!("skipped: {reason}");
    None
}

/// A workspace made by `jp init` whose config runs `program` over stdio as
/// the MCP server `everything`, then says `more` (keys of that server's
/// table first, then tables of its own).
fn with_everything(program: &Path, more: &str) -> common::Workspace {
    let ws = initialized();
    let config = ws.read("project/.jp/config.toml");
    let command = serde_json::Value::String(program.display().to_string());
    ws.write(
        "project/.jp/config.toml",
        &format!("{config}\n[providers.mcp.everything]\ncommand = [{command}, \"stdio\"]\n{more}"),
    );
    ws
}

#[test]
fn server_everything_lists_its_tools_and_answers_calls_through_a_query() {
    let Some(program) = everything() else {
        return;
    };
    let ws = with_everything(
        &program,
        "\n[conversation.tools.echo]\nsource = \"mcp.everything\"\npolicy.run = \"unattended\"\n\n\
         [conversation.tools.add]\nsource = \"mcp.everything\"\ntool = \"get-sum\"\n\
         policy.run = [{ arg = \"/a\", const = 2, mode = \"unattended\" }, { mode = \"ask\" }]\n",
    );
    let server = TestServer::start(vec![
        tool("toolu_1", "echo", r#"{"message": "hello"}"#),
        tool("toolu_2", "add", r#"{"a": 2, "b": 3}"#),
        text("Done."),
    ]);
    let output = query_command(&ws, &server, "anthropic/claude-haiku-4-5", &[], "try it")
        .output()
        .unwrap();
    let run = ws.run_of(output);
    assert_eq!(run.code, 0, "{run:?}");
    let header = "── jp (anthropic/claude-haiku-4-5) ──\n";
    assert_eq!(
        run.stderr,
        format!(
            "{header}Calling tool echo(message: \"hello\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             echo success: Echo: hello\n\
             {header}Calling tool add(a: 2, b: 3)\n  \
             unattended (policy.run[0] (const 2 on /a) matched: 2 equals 2)\n  \
             add success: The sum of 2 and 3 is 5.\n\
             {header}tokens: 3 responses · 30 in · 126 out · $0.0007 · context 1% of 200k\n"
        )
    );
    assert_eq!(
        responses(&stored(&ws)),
        [
            ("success".to_owned(), "Echo: hello".to_owned()),
            ("success".to_owned(), "The sum of 2 and 3 is 5.".to_owned()),
        ]
    );
    // The model was offered the server's schemas.
    let requests = server.wait_for(1, std::time::Duration::from_secs(10));
    let add = requests[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "add")
        .unwrap()["input_schema"]
        .clone();
    assert_eq!(add["required"], serde_json::json!(["a", "b"]));
    assert_eq!(add["properties"]["a"]["type"], "number");
}

/// The published server killed when the test ends, however it ends.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The same server in its Streamable HTTP mode (the TypeScript SDK's
/// server side), reached at its `url`: its tools, a call, and a call's
/// result, as over stdio.
#[test]
fn server_everything_over_streamable_http_answers_calls_through_a_query() {
    use std::io::BufRead as _;
    let Some(program) = everything() else {
        return;
    };
    let ws = initialized();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = std::process::Command::new(&program)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .current_dir(ws.project())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _running = Running(child);
    // It says on stderr when it listens.
    let mut lines = std::io::BufReader::new(stderr).lines();
    let listening = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|line| line.contains("listening on port"));
    assert!(listening, "mcp-server-everything did not start listening");
    std::thread::spawn(move || lines.for_each(drop));
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n[providers.mcp.everything]\nurl = \"http://localhost:{port}/mcp\"\n\n\
             [conversation.tools.echo]\nsource = \"mcp.everything\"\npolicy.run = \"unattended\"\n\n\
             [conversation.tools.add]\nsource = \"mcp.everything\"\ntool = \"get-sum\"\n\
             policy.run = [{{ arg = \"/a\", const = 2, mode = \"unattended\" }}, {{ mode = \"ask\" }}]\n"
        ),
    );
    let server = TestServer::start(vec![
        tool("toolu_1", "echo", r#"{"message": "over http"}"#),
        tool("toolu_2", "add", r#"{"a": 2, "b": 3}"#),
        text("Done."),
    ]);
    let output = query_command(&ws, &server, "anthropic/claude-haiku-4-5", &[], "try it")
        .output()
        .unwrap();
    let run = ws.run_of(output);
    assert_eq!(run.code, 0, "{run:?}");
    let header = "── jp (anthropic/claude-haiku-4-5) ──\n";
    assert_eq!(
        run.stderr,
        format!(
            "{header}Calling tool echo(message: \"over http\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             echo success: Echo: over http\n\
             {header}Calling tool add(a: 2, b: 3)\n  \
             unattended (policy.run[0] (const 2 on /a) matched: 2 equals 2)\n  \
             add success: The sum of 2 and 3 is 5.\n\
             {header}tokens: 3 responses · 30 in · 126 out · $0.0007 · context 1% of 200k\n"
        )
    );
    assert_eq!(
        responses(&stored(&ws)),
        [
            ("success".to_owned(), "Echo: over http".to_owned()),
            ("success".to_owned(), "The sum of 2 and 3 is 5.".to_owned()),
        ]
    );
}

/// The published server's `get-env` answers with its whole environment:
/// before the sandbox (issue 36), that put jp's provider key into the
/// model's context. Now it holds jp's allowlist and what the server's
/// `sandbox.env` names, and nothing else of jp's.
#[test]
fn server_everything_get_env_sees_no_provider_key() {
    let Some(program) = everything() else {
        return;
    };
    let ws = with_everything(
        &program,
        "sandbox.env = [\"SERVER_SETTING\"]\n\n\
         [conversation.tools.env]\nsource = \"mcp.everything\"\ntool = \"get-env\"\n\
         policy.run = \"unattended\"\n",
    );
    let server = TestServer::start(vec![tool("toolu_1", "env", "{}"), text("Done.")]);
    let mut command = query_command(&ws, &server, "anthropic/claude-haiku-4-5", &[], "env?");
    command
        .env("SERVER_SETTING", "on")
        .env("GITHUB_TOKEN", "ghp_secret");
    let run = ws.run_of(command.output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
    let got = responses(&stored(&ws));
    let env: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&got[0].1).unwrap();
    let mut names: Vec<&str> = env.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["HOME", "JP_TOOL_RUN_ID", "PATH", "SERVER_SETTING", "TMPDIR"],
        "{env:?}"
    );
    let sent = server.wait_for(2, std::time::Duration::from_secs(10))[1]
        .json()
        .to_string();
    assert!(!sent.contains("test-key") && !sent.contains("ghp_secret"));
}
