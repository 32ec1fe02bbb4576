//! MCP servers' tools through the real `jp` binary (issue 24): the
//! provider is the local test server replaying Anthropic responses, the
//! MCP server is `jp-mcp-test-server` (jp_test_server's binary, built on
//! rmcp's server side), a real process that misbehaves on request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::Workspace;
use common::mcp::{assert_gone, running, server_binary, server_pid, unattended, workspace};
use common::providers::{Item, anthropic, text_reply as text, tool_reply as tool};
use common::query::{query_command, responses, stored};
use jp_test_server::{Reply, Split, TestServer};

const MODEL: &str = "anthropic/claude-haiku-4-5";

fn run(ws: &Workspace, server: &TestServer) -> common::Run {
    let output = query_command(ws, server, MODEL, &[], "use the tools")
        .output()
        .unwrap();
    ws.run_of(output)
}

/// What jp printed for the run: the chrome on stderr.
fn chrome(run: &common::Run) -> &str {
    &run.stderr
}

const HEADER: &str = "── jp (anthropic/claude-haiku-4-5) ──\n";

#[test]
fn a_call_runs_on_the_server_with_its_schema_and_the_result_reaches_the_model() {
    let ws = workspace("", &unattended("echo"));
    let server = TestServer::start(vec![
        tool("toolu_1", "echo", r#"{"text": "hello"}"#),
        text("Done."),
    ]);
    let run = run(&ws, &server);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Done.\n");
    assert_eq!(
        chrome(&run),
        format!(
            "{HEADER}Calling tool echo(text: \"hello\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             echo success: echo: hello\n{HEADER}\
             tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n"
        )
    );
    let requests = server.wait_for(2, Duration::from_secs(10));
    // The model is offered the tool as the server describes it.
    let sent = requests[0].json();
    let echo = sent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo")
        .unwrap()
        .clone();
    assert_eq!(
        echo,
        serde_json::json!({
            "name": "echo",
            "description": "Says the text back.",
            "input_schema": {
                "type": "object",
                "properties": { "text": { "type": "string", "description": "What to say." } },
                "required": ["text"],
                "additionalProperties": false
            }
        })
    );
    assert_eq!(
        requests[1].json()["messages"][2]["content"][0]["content"],
        "echo: hello"
    );
    // The server is gone once jp is.
    assert_gone(&ws);
}

/// A `save` tool of the server under jp's name `save_file`, its `path`
/// made a `path` parameter: unattended under `notes/`, asked otherwise.
const SAVE: &str = r#"[conversation.tools.save_file]
source = "mcp.test"
tool = "save"
parameters.path = { type = "path" }
policy.run = [{ arg = "/path", prefix = "notes/", mode = "unattended" }, { mode = "ask" }]
"#;

#[test]
fn a_path_rule_on_an_mcp_argument_runs_inside_and_declines_outside_the_workspace() {
    let ws = workspace("", SAVE);
    let server = TestServer::start(vec![
        tool(
            "toolu_1",
            "save_file",
            r#"{"path": "notes/a.txt", "content": "A"}"#,
        ),
        tool(
            "toolu_2",
            "save_file",
            r#"{"path": "notes/../../outside.txt", "content": "B"}"#,
        ),
        text("Done."),
    ]);
    let run = run(&ws, &server);
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(ws.read("project/notes/a.txt"), "A");
    assert!(!ws.root().join("outside.txt").exists());
    assert_eq!(
        chrome(&run),
        format!(
            "{HEADER}Calling tool save_file(path: \"notes/a.txt\", content: \"A\")\n  \
             unattended (policy.run[0] (prefix \"notes/\" on /path) matched: \"notes/a.txt\" is under notes/)\n  \
             save_file success: saved 1 bytes to notes/a.txt\n\
             {HEADER}Calling tool save_file(path: \"notes/../../outside.txt\")\n  \
             save_file: declined: policy.run[1] (catch-all) matched, so jp must ask, and no terminal is available; \
             run jp in a terminal to answer, or add a rule for calls like this one before policy.run[1] in \
             conversation.tools.save_file (`jp policy check save_file` tries it)\n  \
             stopped the stream after 36 B of save_file's arguments\n{HEADER}\
             tokens: 3 responses · 30 in · 85 out · $0.0005 · stream stopped after 36 B of save_file's arguments; the rest was never generated · context 1% of 200k\n"
        )
    );
}

#[test]
fn a_declined_mcp_call_stops_the_stream_before_its_content_is_paid_for() {
    let ws = workspace("", SAVE);
    let content = "a line of a long file\n".repeat(10_000);
    let args = serde_json::json!({ "path": ".env", "content": content }).to_string();
    let body = anthropic(
        &[Item::Tool("toolu_1", "save_file", &args)],
        "tool_use",
        false,
    );
    let total = body.len();
    let reply = Reply::sse(body)
        .split(Split::Every(8192))
        .pace(Duration::from_millis(2));
    let server = TestServer::start(vec![reply, text("Understood.")]);
    let run = run(&ws, &server);
    assert_eq!(run.code, 5, "{run:?}");
    let requests = server.wait_for(2, Duration::from_secs(10));
    assert!(requests[0].client_disconnected, "the stream was not closed");
    assert!(
        requests[0].body_bytes_sent < total / 20,
        "{} of {total} bytes were sent",
        requests[0].body_bytes_sent
    );
    assert!(!ws.project().join(".env").exists());
    assert_eq!(
        chrome(&run),
        format!(
            "{HEADER}Calling tool save_file(path: \".env\")\n  \
             save_file: declined: policy.run[1] (catch-all) matched, so jp must ask, and no terminal is available; \
             run jp in a terminal to answer, or allow calls like this one with a rule before policy.run[1] in \
             conversation.tools.save_file: {{ arg = \"/path\", const = \".env\", mode = \"unattended\" }}\n  \
             stopped the stream after 18 B of save_file's arguments\n{HEADER}\
             tokens: 2 responses · 20 in · 43 out · $0.0002 · stream stopped after 18 B of save_file's arguments; the rest was never generated · context 1% of 200k\n"
        )
    );
}

#[test]
fn a_crash_mid_call_is_an_error_result_and_the_next_call_restarts_the_server() {
    let tools = format!("{}{}", unattended("crash"), unattended("echo"));
    let ws = workspace("", &tools);
    let server = TestServer::start(vec![
        tool("toolu_1", "crash", "{}"),
        tool("toolu_2", "echo", r#"{"text": "again"}"#),
        text("Done."),
    ]);
    let run = run(&ws, &server);
    assert_eq!(run.code, 0, "{run:?}");
    let told = "MCP server `test` failed during the call to `crash`: the server closed the \
                connection (it exited: exit status: 3); its stderr ends:\n\
                crashing on purpose \\u{1b}[31mred\\u{1b}[0m";
    assert_eq!(
        responses(&stored(&ws)),
        [
            ("error".to_owned(), told.to_owned()),
            ("success".to_owned(), "echo: again".to_owned())
        ]
    );
    assert_eq!(
        chrome(&run),
        format!(
            "{HEADER}Calling tool crash()\n  unattended (policy.run is \"unattended\")\n  \
             crash error:\n    \
             MCP server `test` failed during the call to `crash`: the server closed the connection (it exited: exit status: 3); its stderr ends:\n    \
             crashing on purpose \\u{{1b}}[31mred\\u{{1b}}[0m\n\
             {HEADER}Calling tool echo(text: \"again\")\n  unattended (policy.run is \"unattended\")\n  \
             echo success: echo: again\n{HEADER}\
             tokens: 3 responses · 30 in · 126 out · $0.0007 · context 1% of 200k\n"
        )
    );
    assert_gone(&ws);
}

#[test]
fn misbehaving_results_become_error_results_naming_the_server_and_the_turn_goes_on() {
    let mut tools = String::from("[conversation.tools.hang]\ntimeout_secs = 1\n");
    tools.push_str(&unattended("hang").replace("[conversation.tools.hang]\n", ""));
    for name in ["garbage", "huge", "fail", "picture"] {
        tools.push_str(&unattended(name));
    }
    let ws = workspace("", &tools);
    let server = TestServer::start(vec![
        tool("toolu_1", "hang", "{}"),
        tool("toolu_2", "garbage", "{}"),
        tool("toolu_3", "huge", r#"{"bytes": 2000000}"#),
        tool("toolu_4", "fail", "{}"),
        tool("toolu_5", "picture", "{}"),
        text("Done."),
    ]);
    let started = Instant::now();
    let run = run(&ws, &server);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "it took {:?}",
        started.elapsed()
    );
    // The hung call was cancelled with the protocol's notification.
    assert_eq!(
        ws.read("project/cancelled.txt"),
        "cancelled: no answer within 1 s\n"
    );
    assert_eq!(
        responses(&stored(&ws)),
        [
            ("error".to_owned(), "MCP server `test` did not answer the call to `hang` within 1 s (conversation.tools.hang.timeout_secs); jp sent it MCP cancellation and stopped it".to_owned()),
            ("error".to_owned(), "MCP server `test` broke the call to `garbage`: it wrote more than 1 MiB of lines that are not JSON-RPC, the last: `this is not json`; jp stopped it".to_owned()),
            ("error".to_owned(), "MCP server `test` answered the call to `huge` with a result of 2000000 bytes, more than the 1048576 this tool may return (conversation.tools.huge.max_output_bytes)".to_owned()),
            ("error".to_owned(), "the tool failed on purpose".to_owned()),
            ("success".to_owned(), "a red dot\n[image: image/png, 8 bytes]".to_owned()),
        ]
    );
    assert_gone(&ws);
}

#[test]
fn a_server_that_cannot_start_withdraws_its_tools_and_the_turn_goes_on() {
    let ws = workspace("JP_MCP_TEST_START = \"exit\"", &unattended("echo"));
    let server = TestServer::start(vec![text("I have no tools.")]);
    let run = run(&ws, &server);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "I have no tools.\n");
    assert_eq!(
        chrome(&run),
        format!(
            "error: MCP server `test` failed to start: it exited during the handshake (exit status: 2); its stderr ends:\n\
             refusing to start; tool echo is not offered to the model\n{HEADER}\
             tokens: 10 in · 42 out · $0.0002 · context 1% of 200k\n"
        )
    );
    let requests = server.wait_for(1, Duration::from_secs(10));
    let offered = requests[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "echo");
    assert!(!offered);
}

#[test]
fn a_server_that_hangs_at_start_times_out_and_the_turn_goes_on() {
    let ws = workspace("JP_MCP_TEST_START = \"hang\"", &unattended("echo"));
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &config.replace(
            "[providers.mcp.test]\n",
            "[providers.mcp.test]\nstartup_timeout_secs = 1\n",
        ),
    );
    let server = TestServer::start(vec![text("I have no tools.")]);
    let run = run(&ws, &server);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        chrome(&run),
        format!(
            "error: MCP server `test` did not finish starting within 1 s (providers.mcp.test.startup_timeout_secs); \
             tool echo is not offered to the model\n{HEADER}\
             tokens: 10 in · 42 out · $0.0002 · context 1% of 200k\n"
        )
    );
    assert_gone(&ws);
}

#[test]
fn a_rule_on_an_argument_the_server_lacks_is_a_config_error_once_the_schema_is_known() {
    let tools = "[conversation.tools.echo]\nsource = \"mcp.test\"\n\
                 policy.run = [{ arg = \"/txt\", const = \"x\", mode = \"unattended\" }, { mode = \"ask\" }]\n";
    let ws = workspace("", tools);
    // Loading alone does not start the server, so it cannot know the
    // schema: the config loads, and the query that starts it refuses it.
    let validated = ws.jp(&["config", "validate"]);
    assert_eq!(validated.code, 0, "{validated:?}");
    assert!(
        server_pid(&ws).is_none(),
        "`jp config validate` started the server"
    );
    let server = TestServer::start(vec![text("unused")]);
    let run = run(&ws, &server);
    assert_eq!(run.code, 1, "{run:?}");
    let rule = ws.config_line(
        "policy.run = [{ arg = \"/txt\", const = \"x\", mode = \"unattended\" }, { mode = \"ask\" }]",
    );
    assert_eq!(
        common::query::hide_ids(&run.stderr),
        format!(
            "error: the config does not fit the MCP servers' tools:\n\
             error: .jp/config.toml:{rule}: conversation.tools.echo.policy.run[0]: \"arg\" \"/txt\": the tool has no parameter \"txt\" (it has /text)\n\
             the conversation keeps what arrived; `jp query` continues it (conversation <id>)\n"
        )
    );
    assert!(server.requests().is_empty(), "the provider was asked");
}

#[test]
fn entries_that_do_not_fit_the_servers_tools_are_errors_with_file_and_line() {
    let tools = "[conversation.tools.missing]\nsource = \"mcp.test\"\ntool = \"nope\"\n\n\
                 [conversation.tools.echo]\nsource = \"mcp.test\"\nparameters.volume = { type = \"integer\" }\n";
    let ws = workspace("", tools);
    let server = TestServer::start(vec![text("unused")]);
    let run = run(&ws, &server);
    assert_eq!(run.code, 1, "{run:?}");
    let tool = ws.config_line("tool = \"nope\"");
    let parameters = ws.config_line("parameters.volume = { type = \"integer\" }");
    assert_eq!(
        common::query::hide_ids(&run.stderr),
        format!(
            "error: the config does not fit the MCP servers' tools:\n\
             error: .jp/config.toml:{tool}: conversation.tools.missing.tool: MCP server `test` has no tool `nope` \
             (its tools: echo, save, read, fail, crash, hang, garbage, huge, picture)\n\
             error: .jp/config.toml:{parameters}: conversation.tools.echo.parameters: names the parameter `volume`, \
             which the tool's schema does not have (it has text)\n\
             the conversation keeps what arrived; `jp query` continues it (conversation <id>)\n"
        )
    );
    assert!(server.requests().is_empty(), "the provider was asked");
}

#[test]
fn a_server_command_that_cannot_run_is_said_with_file_and_line_and_the_turn_goes_on() {
    let ws = workspace("", &unattended("echo"));
    let config = ws.read("project/.jp/config.toml");
    let command = format!(
        "command = [{}]",
        serde_json::Value::String(server_binary().display().to_string())
    );
    ws.write(
        "project/.jp/config.toml",
        &config.replace(
            &command,
            "command = [\"/nonexistent/mcp-server\", \"--stdio\"]",
        ),
    );
    let line = ws.config_line("command = [\"/nonexistent/mcp-server\", \"--stdio\"]");
    let server = TestServer::start(vec![text("I have no tools.")]);
    let run = run(&ws, &server);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "I have no tools.\n");
    assert_eq!(
        chrome(&run),
        format!(
            "error: .jp/config.toml:{line}: providers.mcp.test.command: cannot start MCP server `test` \
             (`/nonexistent/mcp-server`): No such file or directory (os error 2); \
             tool echo is not offered to the model\n{HEADER}\
             tokens: 10 in · 42 out · $0.0002 · context 1% of 200k\n"
        )
    );
}

#[test]
fn config_show_lists_the_servers_and_the_mcp_tools() {
    let ws = workspace("GIT_PAGER = \"cat\"", SAVE);
    let shown = ws.jp(&["config", "show", "--format", "json"]);
    assert_eq!(shown.code, 0, "{shown:?}");
    let shown: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    let config = &shown["config"];
    assert_eq!(
        config["providers"]["mcp"],
        serde_json::json!({
            "test": {
                "command": [server_binary().display().to_string()],
                "env": { "GIT_PAGER": "cat" },
                "url": null,
                "headers": {},
                "headers_env": {},
                "bearer_token_env": null,
                "startup_timeout_secs": null,
                "sandbox": { "env": [], "write": [], "deny_read": [], "network": null, "none": false }
            }
        })
    );
    assert_eq!(
        config["conversation"]["tools"]["save_file"]["source"],
        "mcp.test"
    );
    assert_eq!(config["conversation"]["tools"]["save_file"]["tool"], "save");
}

#[cfg(target_os = "linux")]
#[test]
fn a_killed_jp_leaves_no_server_running() {
    let ws = workspace("", &unattended("hang"));
    let server = TestServer::start(vec![tool("toolu_1", "hang", "{}"), text("unused")]);
    let mut jp = query_command(&ws, &server, MODEL, &[], "hang")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the call is on the server: the provider's first request
    // is answered and the tool runs.
    server.wait_for(1, Duration::from_secs(10));
    let deadline = Instant::now() + Duration::from_secs(10);
    let pid = loop {
        if let Some(pid) = server_pid(&ws) {
            break pid;
        }
        assert!(Instant::now() < deadline, "the MCP server never started");
        std::thread::sleep(Duration::from_millis(10));
    };
    std::thread::sleep(Duration::from_millis(300));
    assert!(running(pid));
    jp.kill().unwrap();
    jp.wait().unwrap();
    assert_gone(&ws);
}

#[cfg(target_os = "linux")]
#[test]
fn an_interrupt_without_a_terminal_cancels_the_call_and_stops_the_server() {
    let ws = workspace("", &unattended("hang"));
    let server = TestServer::start(vec![tool("toolu_1", "hang", "{}"), text("unused")]);
    let jp = query_command(&ws, &server, MODEL, &[], "hang")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    server.wait_for(1, Duration::from_secs(10));
    let deadline = Instant::now() + Duration::from_secs(10);
    while server_pid(&ws).is_none() {
        assert!(Instant::now() < deadline, "the MCP server never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The call is on the server.
    std::thread::sleep(Duration::from_millis(300));
    let status = std::process::Command::new("kill")
        .args(["-INT", &jp.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let run = ws.run_of(jp.wait_with_output().unwrap());
    assert_eq!(run.code, 130, "{run:?}");
    let told = "The user interrupted the call to `hang` on MCP server `test`; \
                jp sent the server MCP cancellation and stopped it.";
    assert_eq!(
        chrome(&run),
        format!(
            "{HEADER}Calling tool hang()\n  unattended (policy.run is \"unattended\")\n  \
             hang interrupted: {told}\n\
             tokens: 10 in · 42 out · $0.0002 · context 1% of 200k\n\
             interrupted; the conversation keeps what arrived\n"
        )
    );
    assert_gone(&ws);
    assert_eq!(
        responses(&stored(&ws)),
        [("interrupted".to_owned(), told.to_owned())]
    );
    assert_eq!(
        server.requests().len(),
        1,
        "nothing is sent after an interrupt"
    );
}

#[test]
fn config_mistakes_about_servers_are_errors_with_file_and_line() {
    let ws = Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        "[providers.mcp.git]\ncommand = []\nstartup_timeout_secs = 0\n\n\
         [conversation.tools.a]\nsource = \"mcp.nope\"\ncommand = \"x\"\n\n\
         [conversation.tools.b]\ntool = \"t\"\ncommand = \"x\"\n",
    );
    let run = ws.jp(&["config", "validate"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        "error: .jp/config.toml:2: providers.mcp.git.command: an MCP server needs a `command`: the program and its arguments, such as [\"python3\", \"-m\", \"mcp_server_git\"] (or a `url`, for a server reached over HTTP)\n\
         error: .jp/config.toml:3: providers.mcp.git.startup_timeout_secs: must be at least 1\n\
         error: .jp/config.toml:6: conversation.tools.a.source: names the MCP server `nope`, which is not configured: add `[providers.mcp.nope]` with its `command` or `url` (servers: git)\n\
         error: .jp/config.toml:7: conversation.tools.a.command: an MCP tool runs on its server (`providers.mcp.nope.command`), not on a `command` of its own\n\
         error: .jp/config.toml:10: conversation.tools.b.tool: only an MCP tool (`source = \"mcp.NAME\"`) has a `tool`; this one's source is `local`\n"
    );
    ws.write(
        "project/.jp/config.toml",
        "[conversation.tools.c]\nsource = \"mcp.\"\n",
    );
    let run = ws.jp(&["config", "validate"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        "error: .jp/config.toml:2: conversation.tools.c.source: unknown tool source `mcp.`; expected `local`, `builtin` or `mcp.NAME` (a server under `providers.mcp`)\n"
    );
}
