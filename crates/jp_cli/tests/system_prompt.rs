//! The system prompt through the real `jp`: the default one the model gets,
//! what the user's config adds to it, and instruction files kept inside the
//! workspace. Requests go to the test server, which records their bodies.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::Workspace;
use common::providers::{Item, ollama};
use common::query::{initialized, query};
use jp_test_server::{Reply, Split, TestServer};
use serde_json::Value;

/// The default system prompt for a workspace at `root`, on the test's
/// day (`TEST_NOW_MS`, 2026-11-30).
fn default_prompt(root: &std::path::Path) -> String {
    let today = "2026-11-30";
    format!(
        "You are jp, a coding assistant working in the user's workspace.\n\n\
         - Workspace root: {}\n\
         - Operating system: {} ({})\n\
         - Today's date: {today} (UTC)\n\n\
         You reach the workspace's files only through your tools; a path you give a tool is \
         relative to the workspace root. The user sees each tool call and may decline it: a \
         declined call is the user's decision, not an error, so do not retry it unchanged; ask \
         what they want, or take another way.",
        root.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
    )
}

/// The system message of the one request `server` got.
fn sent_system(server: &TestServer) -> Value {
    let requests = server.wait_for(1, Duration::from_secs(5));
    assert_eq!(requests.len(), 1);
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    body["messages"][0].clone()
}

fn answer() -> TestServer {
    TestServer::start(vec![
        Reply::sse(ollama(&[Item::Text("Hi.")])).split(Split::Random { seed: 3, max: 9 }),
    ])
}

#[test]
fn the_model_is_told_where_it_is() {
    let ws = initialized();
    let server = answer();
    let run = query(&ws, &server, "ollama/qwen3", &[], "hello");
    assert_eq!(run.code, 0, "{run:?}");
    let root = ws.project().canonicalize().unwrap();
    assert_eq!(
        sent_system(&server),
        serde_json::json!({"role": "system", "content": default_prompt(&root)})
    );
}

#[test]
fn instructions_and_instruction_files_follow_the_default() {
    let ws = initialized();
    ws.write("project/AGENTS.md", "Run cargo test before you finish.\n");
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{}\n[assistant]\ninstructions = [\"Be brief.\"]\ninstruction_files = [\"AGENTS.md\"]\n",
            ws.read("project/.jp/config.toml")
        ),
    );
    let server = answer();
    let run = query(&ws, &server, "ollama/qwen3", &[], "hello");
    assert_eq!(run.code, 0, "{run:?}");
    let root = ws.project().canonicalize().unwrap();
    let expected = format!(
        "{}\n\nBe brief.\n\nRun cargo test before you finish.",
        default_prompt(&root)
    );
    assert_eq!(
        sent_system(&server)["content"],
        Value::from(expected.clone())
    );
    // `--print-system-prompt` prints what was sent, and sends nothing.
    let printed = ws.jp(&["query", "--print-system-prompt"]);
    assert_eq!(printed.code, 0, "{printed:?}");
    // (A run's output names the temporary directory `<tmp>`.)
    let shown = expected.replace(&ws.root().display().to_string(), "<tmp>");
    assert_eq!(printed.stdout, format!("{shown}\n"));
}

#[test]
fn a_system_prompt_replaces_the_default_and_is_sent_as_written() {
    let ws = initialized();
    let server = answer();
    let run = query(
        &ws,
        &server,
        "ollama/qwen3",
        &[
            "--cfg",
            "assistant.system_prompt=Today is {{date}}; $(whoami).",
        ],
        "hello",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        sent_system(&server),
        serde_json::json!({"role": "system", "content": "Today is {{date}}; $(whoami)."})
    );
}

#[test]
fn an_instruction_file_that_leads_out_of_the_workspace_sends_nothing() {
    let ws: Workspace = initialized();
    ws.write("secret.txt", "api-token-123");
    #[cfg(unix)]
    std::os::unix::fs::symlink(ws.root().join("secret.txt"), ws.project().join("notes.md"))
        .unwrap();
    let server = answer();
    let run = query(
        &ws,
        &server,
        "ollama/qwen3",
        &["--cfg", "assistant.instruction_files=[\"notes.md\"]"],
        "hello",
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: assistant.instruction_files[0] (notes.md): it is outside the workspace; name a file in it, relative to its root\n"
    );
    std::thread::sleep(Duration::from_millis(100));
    assert!(server.requests().is_empty(), "nothing was sent");
}
