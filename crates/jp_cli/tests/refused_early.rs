//! Calls refused before any policy looks at them, and a config change
//! dropped by an interrupt (issue 21, item 6), through the real binary
//! against the test server.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::Workspace;
use common::providers::{Item, anthropic};
use common::query::{event_types, initialized, query, query_command, responses, stored};
use jp_test_server::{Reply, Split, TestServer};
use serde_json::Value;

const MODEL: &str = "anthropic/claude-haiku-4-5";

/// `save(path, content)`: unattended under `src/`, asks elsewhere. Never
/// meant to run in these tests: it leaves a mark if it does.
const SAVE: &str = "[conversation.tools.save]\n\
    command = [\"sh\", \"-c\", \"touch .jp/save-ran\"]\n\
    parameters.path = { type = \"path\", required = true }\n\
    parameters.content = { type = \"string\", required = true }\n\
    policy.run = [{ arg = \"/path\", prefix = \"src/\", mode = \"unattended\" }, { mode = \"ask\" }]\n";

fn workspace() -> Workspace {
    let ws = initialized();
    ws.write("project/.jp/tools.toml", SAVE);
    ws
}

/// One response calling `name` with `args` (cut at random places), then a
/// closing text.
fn one_call(name: &str, args: &str) -> TestServer {
    TestServer::start(vec![
        Reply::sse(anthropic(
            &[Item::Tool("toolu_1", name, args)],
            "tool_use",
            false,
        ))
        .split(Split::Random { seed: 7, max: 4096 }),
        Reply::sse(anthropic(&[Item::Text("ok")], "end_turn", false)),
    ])
}

#[test]
fn a_path_with_nul_is_refused_before_the_policy_and_the_stream_is_closed() {
    let ws = workspace();
    // Under `src/`, so the policy would have approved it; the NUL refuses
    // it first, and the long content after it is not read.
    let content = "x".repeat(300_000);
    let args = serde_json::json!({ "path": "src/a\u{0}.rs", "content": content }).to_string();
    let server = one_call("save", &args);
    let run = query(
        &ws,
        &server,
        MODEL,
        &["--cfg", "@.jp/tools.toml"],
        "save it",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         Calling tool save(path: \"src/a\\u0000.rs\")\n  \
         save: refused: the arguments do not fit its parameters: /path: expected a path, found a \
         string containing NUL\n  \
         stopped the stream after 27 B of save's arguments\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         tokens: 2 responses · 20 in · 43 out · $0.0002 · stream stopped after 27 B of save's arguments; the rest was never generated · context 1% of 200k\n"
    );
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "refused".to_owned(),
            "The call was not run because its arguments do not fit the tool's parameters: \
             /path: expected a path, found a string containing NUL. jp stopped your response \
             after 27 B of this call's arguments."
                .to_owned()
        )]
    );
    assert!(!ws.project().join(".jp/save-ran").exists());
}

#[test]
fn a_call_to_a_tool_that_is_not_configured_is_refused_as_it_starts() {
    let ws = workspace();
    let content = "x".repeat(475_000);
    let args = serde_json::json!({ "content": content }).to_string();
    let server = one_call("nope", &args);
    let run = query(&ws, &server, MODEL, &["--cfg", "@.jp/tools.toml"], "do it");
    assert_eq!(run.code, 0, "{run:?}");
    let tools = "fs_read_file, fs_list_files, fs_grep, fs_glob, fs_create_file, fs_modify_file, fs_delete_file, run_command, save";
    assert_eq!(
        run.stderr,
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         Calling tool nope()\n  \
         nope: refused: no such tool is configured\n  \
         stopped the stream before nope's arguments\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         tokens: 2 responses · 20 in · 43 out · $0.0002 · stream stopped before nope's arguments; they were never generated · context 1% of 200k\n"
    );
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "refused".to_owned(),
            format!(
                "There is no tool named `nope`. Available tools: {tools}. jp stopped your \
                 response before this call's arguments."
            )
        )]
    );
}

#[test]
fn an_interrupt_that_drops_a_config_change_tells_the_model_it_was_not_applied() {
    let ws = initialized();
    let config = ws.read("project/.jp/config.toml").replace(
        "id = \"anthropic/claude-sonnet-4-5\"",
        "id = \"anthropic/claude-haiku-4-5\"",
    );
    let switch = r#"{"type":"success","content":"switched to opus","config":{"assistant":{"model":{"id":"opus"}}}}"#;
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n\
             [conversation.tools.change_model]\n\
             command = [\"sh\", \"-c\", {switch}]\n\
             policy.run = \"unattended\"\n\
             [[conversation.tools.change_model.access.config]]\n\
             path = \"assistant.model.id\"\n\
             write = true\n\
             apply = \"unattended\"\n\
             [conversation.tools.slow]\n\
             command = [\"sh\", \"-c\", \"touch .jp/started; exec sleep 30\"]\n\
             policy.run = \"unattended\"\n",
            switch = Value::String(format!("echo '{switch}'")),
        ),
    );
    let server = TestServer::start(vec![Reply::sse(anthropic(
        &[
            Item::Tool("toolu_1", "change_model", "{}"),
            Item::Tool("toolu_2", "slow", "{}"),
        ],
        "tool_use",
        false,
    ))]);
    let child = query_command(&ws, &server, MODEL, &[], "switch and wait")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ws.project().join(".jp/started").exists() {
        assert!(Instant::now() < deadline, "the slow tool never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Ctrl+C without a terminal interrupts the turn.
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let run = ws.run_of(child.wait_with_output().unwrap());
    assert_eq!(run.code, 130, "{run:?}");
    assert!(
        run.stderr.contains(
            "  the config change of call toolu_1 was not applied: the turn was interrupted\n"
        ),
        "{}",
        run.stderr
    );
    let conversation = stored(&ws);
    assert_eq!(
        event_types(&conversation),
        [
            "turn_start",
            "chat_request",
            "tool_call_request",
            "tool_call_request",
            "usage",
            "call_decision",
            "tool_call_response",
            // The file the slow tool made before it was stopped (for `jp
            // conversation rewind`).
            "file_change",
            "call_decision",
            "tool_call_response"
        ],
        "no config change is recorded"
    );
    assert_eq!(
        responses(&conversation),
        [
            (
                "interrupted".to_owned(),
                "The tool finished, but the user interrupted jp before its config change was \
                 applied; the change was not applied and the result was not kept."
                    .to_owned()
            ),
            (
                "interrupted".to_owned(),
                "tool `slow` was cancelled; it was stopped".to_owned()
            )
        ]
    );
    assert_eq!(
        ws.jp(&["config", "get", "assistant.model.id"]).stdout,
        "anthropic/claude-haiku-4-5\n"
    );
}
