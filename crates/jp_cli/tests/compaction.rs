//! Compaction (issue 38), through the `jp` binary: `jp conversation
//! compact` has a model summarise the older turns, the summary is sent in
//! their place while the log keeps them byte for byte, `jp query` compacts
//! by itself (once) when a request nears the window, and a first request
//! too large for the window is not left to be sent again.

#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::providers::text_reply;
use common::query::{ENV, event_types, hide_ids, initialized, query, stored};
use jp_test_server::TestServer;
use serde_json::{Value, json};

const MODEL: &str = "anthropic/claude-haiku-4-5";

/// What the summary request asks, as its last message.
const INSTRUCTION: &str = "jp is compacting this conversation: write a summary of everything above, to be sent in its place from now on. Keep what the rest of the work needs: the user's goals and requests, the decisions made and why, file paths and exact identifiers (functions, types, commands, error messages), what was changed, and the tasks and questions still open. Answer with the summary alone, as plain notes, and call no tool.";

fn add_config(ws: &common::Workspace, toml: &str) {
    let config = ws.read("project/.jp/config.toml");
    ws.write("project/.jp/config.toml", &format!("{config}\n{toml}"));
}

/// `jp conversation compact ARGS` against `server`.
fn compact(ws: &common::Workspace, server: &TestServer, args: &[&str]) -> common::Run {
    let base = format!("providers.llm.anthropic.base_url={}", server.url());
    let mut all = vec!["conversation", "compact", "--cfg", &base];
    all.extend_from_slice(args);
    let mut env = ENV.to_vec();
    env.push(("JP_CFG_ASSISTANT__MODEL__ID", MODEL));
    let output = ws.command(&all, &env).output().unwrap();
    ws.run_of(output)
}

/// The log of the only conversation.
fn log(ws: &common::Workspace) -> Vec<u8> {
    let dir = ws.project().join(".jp/conversations");
    let id = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .find(|entry| entry.path().join("events.jsonl").is_file())
        .unwrap()
        .path();
    std::fs::read(id.join("events.jsonl")).unwrap()
}

/// The texts of a recorded Anthropic request's messages, one a message.
fn texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| match &message["content"] {
            Value::String(text) => text.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            other => other.to_string(),
        })
        .collect()
}

/// The stored events of type `kind`.
fn of_type(conversation: &Value, kind: &str) -> Vec<Value> {
    conversation["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["type"] == kind)
        .cloned()
        .collect()
}

#[test]
fn compact_sends_a_summary_in_place_of_the_older_turns_and_keeps_them() {
    let ws = initialized();
    let server = TestServer::start(vec![
        text_reply("Answer one."),
        text_reply("Answer two."),
        text_reply("Summary: the user asked ALPHA; src/lib.rs is open."),
        text_reply("Answer three."),
    ]);
    assert_eq!(query(&ws, &server, MODEL, &[], "first ALPHA").code, 0);
    assert_eq!(query(&ws, &server, MODEL, &[], "second BETA").code, 0);
    let before = log(&ws);
    let run = compact(&ws, &server, &["--keep", "1"]);
    assert_eq!(
        run,
        common::Run {
            code: 0,
            stdout: "compacted turn 1 (about 6 tokens) into a 13-token summary by anthropic/claude-haiku-4-5\n".into(),
            stderr: String::new(),
        }
    );
    assert_eq!(query(&ws, &server, MODEL, &[], "third GAMMA").code, 0);
    let sent = server.wait_for(4, Duration::from_secs(5));
    // The summary request: turn 1 as it is sent, and the instruction.
    assert_eq!(
        texts(&sent[2].json()),
        ["first ALPHA", "Answer one.", INSTRUCTION]
    );
    // Turn 3 sends the summary with turn 2, and not turn 1.
    assert_eq!(
        texts(&sent[3].json()),
        [
            "[jp's summary of the earlier part of this conversation, sent in place of it:]\nSummary: the user asked ALPHA; src/lib.rs is open.\n[end of summary]\n\nsecond BETA",
            "Answer two.",
            "third GAMMA"
        ]
    );
    // The log only grew.
    let after = log(&ws);
    assert!(after.starts_with(&before), "the old lines are unchanged");
    let conversation = stored(&ws);
    let compactions = of_type(&conversation, "compaction");
    assert_eq!(
        compactions,
        [json!({
            "type": "compaction",
            "at_ms": compactions[0]["at_ms"],
            "upto": 4,
            "summary": "Summary: the user asked ALPHA; src/lib.rs is open.",
            "model": "anthropic/claude-haiku-4-5",
        })]
    );
    // Its usage is counted with the conversation's.
    assert_eq!(of_type(&conversation, "usage").len(), 4);
    let show = ws.jp(&["conversation", "show"]);
    assert_eq!(hide_ids(&show.stdout), "");
}
