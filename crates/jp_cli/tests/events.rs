//! `jp query --format jsonl` through the real `jp`: the scripted demo's
//! whole event sequence, pinned (times and the conversation's id made
//! fixed, the timed argument progress checked apart); and a recorded
//! Anthropic response whose second call is declined while it streams:
//! the decision, the stopped stream, the usage with its cost and the end
//! with exit code 5, while a person's output stays on stderr.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;

use common::providers::{Item, anthropic, text_reply};
use common::query::{echo_tool, initialized, query};
use jp_test_server::{Reply, TestServer};
use serde_json::Value;

/// The events of `stdout`, one per line, each a JSON object.
fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// Checks the `tool_call_progress` events (their number depends on time)
/// and leaves them out: each follows its call's start, with more bytes
/// than the one before, never more than the call's arguments.
fn without_progress(events: Vec<Value>) -> Vec<Value> {
    let mut said: HashMap<String, u64> = HashMap::new();
    let mut kept = Vec::new();
    for event in events {
        match event["type"].as_str().unwrap() {
            "tool_call_start" => {
                said.insert(event["id"].as_str().unwrap().to_owned(), 0);
                kept.push(event);
            }
            "tool_call_progress" => {
                let id = event["id"].as_str().unwrap();
                let bytes = event["bytes"].as_u64().unwrap();
                let before = said.get_mut(id).expect("progress before its start");
                assert!(bytes > *before, "{event}");
                *before = bytes;
            }
            "call_decision" => {
                let id = event["call_id"].as_str().unwrap();
                assert!(said[id] <= event["bytes"].as_u64().unwrap(), "{event}");
                kept.push(event);
            }
            _ => kept.push(event),
        }
    }
    kept
}

#[test]
fn the_demo_writes_its_whole_turn_as_events() {
    let ws = initialized();
    let run = ws.jp(&[
        "query",
        "--format",
        "jsonl",
        "--new",
        "--model",
        "scripted/demo",
        "add a hello function",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let events = without_progress(events(&run.stdout));
    let conversation = events[0]["conversation"].as_str().unwrap().to_owned();
    let lines: Vec<String> = events
        .into_iter()
        .map(|mut event| {
            if event.get("at_ms").is_some() {
                event["at_ms"] = 0.into();
            }
            if event.get("conversation").is_some() {
                event["conversation"] = "ID".into();
            }
            event.to_string()
        })
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
    // A person's output is on stderr, and the answer is not on it twice.
    assert!(
        run.stderr.starts_with("── jp (scripted/demo) ──\n"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("Done: `hello()`"), "{}", run.stderr);
    // The same conversation was recorded.
    let shown = ws.jp(&["conversation", "show", &conversation, "--format", "json"]);
    assert_eq!(shown.code, 0, "{shown:?}");
}

#[test]
fn a_declined_call_stops_the_stream_and_the_query_exits_5() {
    let ws = initialized();
    let config = ws.read("project/.jp/config.toml");
    let tool = echo_tool("list_items", "three items").replace("policy.run = \"unattended\"\n", "");
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n{tool}[conversation.tools.list_items.parameters]\nfilter = {{ type = \"string\" }}\n\n[conversation.tools.list_items.policy]\nrun = [{{ arg = \"/filter\", const = \"all\", mode = \"unattended\" }}, {{ mode = \"ask\" }}]\n"
        ),
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Text("Listing."),
                Item::Tool("toolu_1", "list_items", r#"{"filter": "all"}"#),
                Item::Tool(
                    "toolu_2",
                    "list_items",
                    r#"{"filter": "secrets", "limit": 100}"#,
                ),
            ],
            "tool_use",
            false,
        )),
        text_reply("Done."),
    ]);
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &["--format", "jsonl"],
        "list them",
    );
    assert_eq!(run.code, 5, "{run:?}");
    let events = without_progress(events(&run.stdout));
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "start",
            "turn_start",
            "chat_request",
            "text_delta",
            "text_delta",
            "assistant_message",
            "tool_call_start",
            "tool_call_request",
            "tool_call_decided",
            "tool_call_start",
            "tool_call_request",
            "tool_call_decided",
            "stream_stopped",
            "usage",
            "call_decision",
            "tool_call_response",
            "call_decision",
            "tool_call_response",
            "text_delta",
            "assistant_message",
            "usage",
            "end",
        ]
    );
    // Decided as it streamed, said at once (before the stream stopped),
    // and recorded the same before its result.
    let (live, stopped, usage, recorded) = (&events[11], &events[12], &events[13], &events[16]);
    assert_eq!(live["runs"], false);
    assert_eq!(recorded["by"], "no_terminal");
    assert_eq!(recorded["rule"]["index"], 1);
    for field in ["call_id", "mode", "rule", "at_byte", "bytes", "by"] {
        assert_eq!(live[field], recorded[field], "{field}");
    }
    assert_eq!(stopped["bytes"], recorded["at_byte"]);
    assert!(usage["cost_usd"].is_number(), "{usage}");
    assert_eq!(events[8]["runs"], true);
    assert_eq!(events[8]["by"], "policy");
    assert_eq!(
        events.last().unwrap(),
        &serde_json::json!({"type": "end", "reason": "completed", "exit_code": 5})
    );
    assert!(
        run.stderr
            .contains("  list_items: declined: policy.run[1] (catch-all) matched"),
        "{}",
        run.stderr
    );
}
