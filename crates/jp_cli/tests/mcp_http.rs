//! MCP servers reached over Streamable HTTP (`providers.mcp.NAME.url`)
//! through the real `jp` binary: the provider is the local test server
//! replaying Anthropic responses, the MCP server `jp-mcp-test-server
//! --http` (rmcp's server side on hyper), a real process on a port of
//! 127.0.0.1 that records each request it gets.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::mcp::{http_workspace, unattended};
use common::providers::{text_reply as text, tool_reply as tool};
use common::query::{query_command, responses, stored};
use common::{Run, Workspace};
use jp_test_server::TestServer;

const MODEL: &str = "anthropic/claude-haiku-4-5";

const HEADER: &str = "── jp (anthropic/claude-haiku-4-5) ──\n";

fn run(ws: &Workspace, server: &TestServer, env: &[(&str, &str)]) -> Run {
    let output = query_command(ws, server, MODEL, &[], "use the tools")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    ws.run_of(output)
}

/// The server's table: a bearer token and a header from the environment,
/// a header as written.
const HEADERS: &str = "bearer_token_env = \"TEST_MCP_TOKEN\"\n\
                       headers_env = { X-Api-Key = \"TEST_MCP_KEY\" }\n\
                       headers = { X-Team = \"platform\" }\n";

const SECRETS: [(&str, &str); 2] = [("TEST_MCP_TOKEN", "tok-123"), ("TEST_MCP_KEY", "key-456")];

#[test]
fn a_call_runs_over_http_with_the_headers_and_the_result_reaches_the_model() {
    let (ws, mcp) = http_workspace(HEADERS, &unattended("echo"));
    let server = TestServer::start(vec![
        tool("toolu_1", "echo", r#"{"text": "hello"}"#),
        text("Done."),
    ]);
    let run = run(&ws, &server, &SECRETS);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Done.\n");
    assert_eq!(
        run.stderr,
        format!(
            "{HEADER}Calling tool echo(text: \"hello\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             echo success: echo: hello\n{HEADER}\
             tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n"
        )
    );
    let requests = server.wait_for(2, Duration::from_secs(10));
    let offered = &requests[0].json()["tools"];
    assert!(
        offered
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "echo"),
        "{offered}"
    );
    assert_eq!(
        requests[1].json()["messages"][2]["content"][0]["content"],
        "echo: hello"
    );
    // One session: opened, used, and ended with DELETE when jp was done.
    let calls: Vec<String> = mcp.calls().into_iter().filter(|c| c != "GET").collect();
    assert_eq!(
        calls,
        [
            "POST initialize",
            "POST notifications/initialized",
            "POST tools/list",
            "POST tools/call echo",
            "DELETE",
        ]
    );
    for request in mcp.requests() {
        assert_eq!(
            request["headers"],
            serde_json::json!({
                "authorization": "Bearer tok-123",
                "x-api-key": "key-456",
                "x-team": "platform",
            }),
            "{request}"
        );
        let first = request["rpc"] == "initialize";
        assert_eq!(request["session"], !first, "{request}");
    }
}

#[test]
fn jp_mcp_tools_lists_the_tools_of_a_server_over_http() {
    let (ws, mcp) = http_workspace("", &unattended("echo"));
    let run = ws.jp(&["mcp", "ls"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert_eq!(
        run.stdout,
        "test: started, 10 tools\n  \
         echo     Says the text back. (conversation.tools.echo)\n  \
         save     Writes a file. (not configured)\n  \
         read     Reads a file. (not configured)\n  \
         fail     Fails. (not configured)\n  \
         crash    Exits mid-call. (not configured)\n  \
         hang     Never answers. (not configured)\n  \
         garbage  Writes lines that are not JSON. (not configured)\n  \
         huge     Answers with many bytes. (not configured)\n  \
         picture  An image. (not configured)\n  \
         http500  Fails with HTTP 500. (not configured)\n"
    );
    let run = ws.jp(&["mcp", "tools", "test"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    let empty = "  input schema: {\n    \"type\": \"object\",\n    \"properties\": {}\n  }\n";
    assert!(
        run.stdout.starts_with(
            "echo\n  Says the text back.\n  configured as conversation.tools.echo\n  input schema: {\n    \
             \"type\": \"object\",\n    \"properties\": {\n      \"text\": {\n        \"type\": \"string\",\n        \
             \"description\": \"What to say.\"\n      }\n    },\n    \"required\": [\n      \"text\"\n    ]\n  }\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.ends_with(&format!(
            "http500\n  Fails with HTTP 500.\n  not configured\n{empty}"
        )),
        "{}",
        run.stdout
    );
    // Each command had a session of its own, and ended it.
    let deletes = mcp.calls().iter().filter(|c| *c == "DELETE").count();
    assert_eq!(deletes, 2, "{:?}", mcp.calls());
}

#[test]
fn an_http_error_and_a_dropped_connection_are_error_results_and_the_turn_goes_on() {
    let tools: String = ["http500", "echo", "crash"].map(unattended).concat();
    let (ws, mut mcp) = http_workspace("", &tools);
    let server = TestServer::start(vec![
        tool("toolu_1", "http500", "{}"),
        tool("toolu_2", "echo", r#"{"text": "again"}"#),
        tool("toolu_3", "crash", "{}"),
        tool("toolu_4", "echo", r#"{"text": "anyone?"}"#),
        text("Done."),
    ]);
    let started = Instant::now();
    let run = run(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "{HEADER}Calling tool http500()\n  \
             unattended (policy.run is \"unattended\")\n  \
             http500 error: MCP server `test` failed during the call to `http500`: HTTP 500; jp closed its session\n\
             {HEADER}Calling tool echo(text: \"again\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             echo success: echo: again\n\
             {HEADER}Calling tool crash()\n  \
             unattended (policy.run is \"unattended\")\n  \
             crash error: MCP server `test` failed during the call to `crash`: the answer's stream ended before the answer came (the connection dropped, or the answer was over the 16 MiB jp reads); jp closed its session\n\
             {HEADER}Calling tool echo(text: \"anyone?\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             echo error: MCP server `test` failed to start: cannot reach it: error sending request: client error (Connect): tcp connect error: Connection refused (os error 111)\n\
             {HEADER}tokens: 5 responses · 50 in · 210 out · $0.0011 · context 1% of 200k\n"
        )
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "it took {:?}",
        started.elapsed()
    );
    assert!(!mcp.running(), "the crash tool ends the server");
    assert_eq!(
        responses(&stored(&ws)),
        [
            ("error".to_owned(), "MCP server `test` failed during the call to `http500`: HTTP 500; jp closed its session".to_owned()),
            ("success".to_owned(), "echo: again".to_owned()),
            ("error".to_owned(), "MCP server `test` failed during the call to `crash`: the answer's stream ended before the answer came \
              (the connection dropped, or the answer was over the 16 MiB jp reads); jp closed its session".to_owned()),
            // The next call finds no server.
            ("error".to_owned(), "MCP server `test` failed to start: cannot reach it: error sending request: \
              client error (Connect): tcp connect error: Connection refused (os error 111)".to_owned()),
        ]
    );
}

#[test]
fn a_call_that_takes_too_long_is_cancelled_over_http() {
    let tools = format!(
        "{}timeout_secs = 1\n{}",
        unattended("hang"),
        unattended("echo")
    );
    let (ws, mcp) = http_workspace("", &tools);
    let server = TestServer::start(vec![
        tool("toolu_1", "hang", "{}"),
        tool("toolu_2", "echo", r#"{"text": "after"}"#),
        text("Done."),
    ]);
    let run = run(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "{HEADER}Calling tool hang()\n  \
             unattended (policy.run is \"unattended\")\n  \
             hang error: MCP server `test` did not answer the call to `hang` within 1 s (conversation.tools.hang.timeout_secs); jp sent it MCP cancellation and closed its session\n\
             {HEADER}Calling tool echo(text: \"after\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             echo success: echo: after\n\
             {HEADER}tokens: 3 responses · 30 in · 126 out · $0.0007 · context 1% of 200k\n"
        )
    );
    assert_eq!(
        ws.read("project/cancelled.txt"),
        "cancelled: no answer within 1 s\n"
    );
    assert_eq!(
        responses(&stored(&ws)),
        [
            ("error".to_owned(), "MCP server `test` did not answer the call to `hang` within 1 s (conversation.tools.hang.timeout_secs); jp sent it MCP cancellation and closed its session".to_owned()),
            ("success".to_owned(), "echo: after".to_owned()),
        ]
    );
    let calls: Vec<String> = mcp.calls().into_iter().filter(|c| c != "GET").collect();
    assert_eq!(
        calls,
        [
            "POST initialize",
            "POST notifications/initialized",
            "POST tools/list",
            "POST tools/call hang",
            "POST notifications/cancelled",
            "DELETE",
            // A new session for the next call.
            "POST initialize",
            "POST notifications/initialized",
            "POST tools/list",
            "POST tools/call echo",
            "DELETE",
        ]
    );
}

#[test]
fn a_header_variable_that_is_not_set_withdraws_the_tools_and_says_where() {
    let (ws, mcp) = http_workspace(HEADERS, &unattended("echo"));
    let server = TestServer::start(vec![text("I have no tools.")]);
    let run = run(&ws, &server, &SECRETS[1..]);
    assert_eq!(run.code, 0, "{run:?}");
    let line = ws.config_line("bearer_token_env = \"TEST_MCP_TOKEN\"");
    assert_eq!(
        run.stderr,
        format!(
            "error: .jp/config.toml:{line}: providers.mcp.test.bearer_token_env: cannot connect to MCP server `test`: \
             the environment variable `TEST_MCP_TOKEN` is not set; tool echo is not offered to the model\n{HEADER}\
             tokens: 10 in · 42 out · $0.0002 · context 1% of 200k\n"
        )
    );
    assert_eq!(mcp.requests(), Vec::<serde_json::Value>::new());
}

#[test]
fn plain_http_to_another_host_is_a_config_error() {
    let ws = common::query::initialized();
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n[providers.mcp.remote]\nurl = \"http://mcp.example.com/mcp\"\n\n{}",
            unattended("echo").replace("mcp.test", "mcp.remote")
        ),
    );
    let line = ws.config_line("url = \"http://mcp.example.com/mcp\"");
    let server = TestServer::start(vec![text("unused")]);
    let run = run(&ws, &server, &[]);
    assert_eq!(
        run,
        Run {
            code: 1,
            stdout: String::new(),
            stderr: format!(
                "error: .jp/config.toml:{line}: providers.mcp.remote.url: `http://mcp.example.com/mcp` would send the MCP session \
                 and its headers unencrypted; use `https://`, or `http://` only for a server on this machine (localhost, 127.0.0.1 or [::1])\n"
            ),
        }
    );
    assert!(server.requests().is_empty());
}

#[test]
fn an_untrusted_workspace_never_connects_to_its_server() {
    let (ws, mcp) = http_workspace(HEADERS, &unattended("echo"));
    let server = TestServer::start(vec![text("I have no tools.")]);
    let mut command = query_command(&ws, &server, MODEL, &[], "use the tools");
    command.env_remove("JP_TRUST_WORKSPACE");
    command.env("JP_TRUST_WORKSPACE", "0");
    command.envs(SECRETS);
    let run = ws.run_of(command.output().unwrap());
    // `jp init` trusted the workspace as it made it; what the test added
    // since is held.
    assert_eq!(
        run,
        Run {
            code: 0,
            stdout: "I have no tools.\n".into(),
            stderr: format!(
                "note: this workspace's config changed since you trusted it; until you trust it again, jp leaves out what it would run or decide:\n\
                 note:   added    .jp/config.toml: conversation.tools.echo\n\
                 note:   added    .jp/config.toml: providers.mcp.test\n\
                 note: review them, then run `jp trust` to apply them (JP_TRUST_WORKSPACE=1 trusts it for one run)\n\
                 {HEADER}tokens: 10 in · 42 out · $0.0002 · context 0% of 200k\n"
            ),
        }
    );
    let requests = server.wait_for(1, Duration::from_secs(10));
    assert_eq!(requests[0].json().get("tools"), None, "no tool is offered");
    assert_eq!(mcp.requests(), Vec::<serde_json::Value>::new());
}

#[cfg(target_os = "linux")]
#[test]
fn an_interrupt_without_a_terminal_cancels_the_call_over_http_and_ends_the_session() {
    let (ws, mcp) = http_workspace("", &unattended("hang"));
    let server = TestServer::start(vec![tool("toolu_1", "hang", "{}"), text("unused")]);
    let jp = query_command(&ws, &server, MODEL, &[], "hang")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !mcp.calls().iter().any(|c| c == "POST tools/call hang") {
        assert!(
            Instant::now() < deadline,
            "the call never reached the server"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    let status = std::process::Command::new("kill")
        .args(["-INT", &jp.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let run = ws.run_of(jp.wait_with_output().unwrap());
    assert_eq!(run.code, 130, "{run:?}");
    let told = "The user interrupted the call to `hang` on MCP server `test`; \
                jp sent the server MCP cancellation and closed its session.";
    assert_eq!(
        run.stderr,
        format!(
            "{HEADER}Calling tool hang()\n  unattended (policy.run is \"unattended\")\n  \
             hang interrupted: {told}\n\
             tokens: 10 in · 42 out · $0.0002 · context 1% of 200k\n\
             interrupted; the conversation keeps what arrived\n"
        )
    );
    assert_eq!(
        responses(&stored(&ws)),
        [("interrupted".to_owned(), told.to_owned())]
    );
    assert_eq!(
        ws.read("project/cancelled.txt"),
        "cancelled: the user interrupted the call\n"
    );
    let calls = mcp.calls();
    let last: Vec<&str> = calls
        .iter()
        .filter(|c| *c != "GET")
        .map(String::as_str)
        .rev()
        .take(3)
        .collect();
    assert_eq!(
        last,
        [
            "DELETE",
            "POST notifications/cancelled",
            "POST tools/call hang"
        ]
    );
}

#[test]
fn answers_too_large_are_error_results_and_the_turn_goes_on() {
    let tools = format!(
        "{}max_output_bytes = 20000000\n{}",
        unattended("huge"),
        unattended("echo")
    );
    let (ws, _mcp) = http_workspace("", &tools);
    let server = TestServer::start(vec![
        tool("toolu_1", "huge", r#"{"bytes": 2000}"#),
        // More than the 16 MiB jp reads of one answer, whatever the tool's
        // own limit.
        tool("toolu_2", "huge", r#"{"bytes": 17000000}"#),
        tool("toolu_3", "echo", r#"{"text": "still here"}"#),
        text("Done."),
    ]);
    let run = run(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let x = "x".repeat(199);
    assert_eq!(
        run.stderr,
        format!(
            "{HEADER}Calling tool huge(bytes: 2000)\n  \
             unattended (policy.run is \"unattended\")\n  \
             huge success: {x}…\n\
             {HEADER}Calling tool huge(bytes: 17000000)\n  \
             unattended (policy.run is \"unattended\")\n  \
             huge error: MCP server `test` failed during the call to `huge`: the answer's stream ended before the answer came (the connection dropped, or the answer was over the 16 MiB jp reads); jp closed its session\n\
             {HEADER}Calling tool echo(text: \"still here\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             echo success: echo: still here\n\
             {HEADER}tokens: 4 responses · 40 in · 168 out · $0.0009 · context 1% of 200k\n"
        )
    );
    assert_eq!(
        responses(&stored(&ws)),
        [
            ("success".to_owned(), "x".repeat(2000)),
            ("error".to_owned(), "MCP server `test` failed during the call to `huge`: the answer's stream ended before the answer came \
              (the connection dropped, or the answer was over the 16 MiB jp reads); jp closed its session".to_owned()),
            ("success".to_owned(), "echo: still here".to_owned()),
        ]
    );
}

/// A proxy from the environment is for the network: plain `http://` on
/// this machine goes to the server directly, never in clear text through
/// a proxy.
#[test]
fn plain_http_on_this_machine_never_goes_through_a_proxy() {
    let (ws, mcp) = http_workspace("", &unattended("echo"));
    // The server as `localhost`: the provider, at 127.0.0.1, is kept off
    // the proxy by NO_PROXY, the MCP server only by jp.
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &config.replace("url = \"http://127.0.0.1:", "url = \"http://localhost:"),
    );
    let proxy = TestServer::start(vec![]);
    let server = TestServer::start(vec![
        tool("toolu_1", "echo", r#"{"text": "direct"}"#),
        text("Done."),
    ]);
    let proxy_url = proxy.url();
    let env = [
        ("HTTP_PROXY", proxy_url.as_str()),
        ("http_proxy", proxy_url.as_str()),
        ("ALL_PROXY", proxy_url.as_str()),
        ("NO_PROXY", "127.0.0.1"),
    ];
    let run = run(&ws, &server, &env);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        responses(&stored(&ws)),
        [("success".to_owned(), "echo: direct".to_owned())]
    );
    assert!(mcp.calls().contains(&"POST tools/call echo".to_owned()));
    assert!(proxy.requests().is_empty(), "{:?}", proxy.requests());
}

/// A server that takes the connection and never answers: connecting,
/// the handshake and `tools/list` share `startup_timeout_secs`.
#[test]
fn a_server_that_never_answers_times_out_at_start_and_the_turn_goes_on() {
    let ws = common::query::initialized();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", silent.local_addr().unwrap());
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n[providers.mcp.test]\nurl = \"{url}\"\nstartup_timeout_secs = 1\n\n{}",
            unattended("echo")
        ),
    );
    let server = TestServer::start(vec![text("I have no tools.")]);
    let started = Instant::now();
    let run = run(&ws, &server, &[]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "it took {:?}",
        started.elapsed()
    );
    assert_eq!(
        run,
        Run {
            code: 0,
            stdout: "I have no tools.\n".into(),
            stderr: format!(
                "error: MCP server `test` did not finish starting within 1 s (providers.mcp.test.startup_timeout_secs); \
                 tool echo is not offered to the model\n{HEADER}\
                 tokens: 10 in · 42 out · $0.0002 · context 1% of 200k\n"
            ),
        }
    );
    drop(silent);
}

#[test]
fn jp_mcp_ls_says_why_a_server_over_http_is_not_reachable_and_exits_1() {
    let ws = common::query::initialized();
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!("{config}\n[providers.mcp.gone]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    );
    let run = ws.jp(&["mcp", "ls"]);
    assert_eq!(
        run,
        Run {
            code: 1,
            stdout: "gone: not started: MCP server `gone` failed to start: cannot reach it: error sending request: \
                     client error (Connect): tcp connect error: Connection refused (os error 111)\n"
                .into(),
            stderr: String::new(),
        }
    );
}
