//! `jp conversation decisions` through the real `jp`: after a recorded
//! Anthropic response with two calls of one tool, one run unattended by
//! the rule its first argument matched and one declined with no terminal
//! while it streamed (the stream stopped there), the command lists each
//! call's rule with its file and line, the byte it was decided at, who
//! settled it and what became of it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::providers::{Item, anthropic, text_reply};
use common::query::{echo_tool, initialized, query};
use jp_test_server::{Reply, TestServer};

const POLICY: &str = "[conversation.tools.list_items.parameters]
filter = { type = \"string\" }
note = { type = \"string\" }

[conversation.tools.list_items.policy]
run = [
    { arg = \"/filter\", const = \"all\", mode = \"unattended\" },
    { mode = \"ask\" },
]
";

/// A workspace from `jp init` with `list_items` and its [`POLICY`].
fn with_policy() -> common::Workspace {
    let ws = initialized();
    let tool = echo_tool("list_items", "three items").replace("policy.run = \"unattended\"\n", "");
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!("{config}\n{tool}{POLICY}"),
    );
    ws
}

fn run() -> common::Workspace {
    let ws = with_policy();
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Tool(
                    "toolu_1",
                    "list_items",
                    r#"{"filter": "all", "note": "first"}"#,
                ),
                Item::Tool(
                    "toolu_2",
                    "list_items",
                    r#"{"filter": "secrets", "note": "second one"}"#,
                ),
            ],
            "tool_use",
            false,
        )),
        text_reply("Done."),
    ]);
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "list them");
    assert_eq!(run.code, 5, "{run:?}");
    ws
}

/// The 1-based line of `.jp/config.toml` that starts with `start`.
fn line_of(ws: &common::Workspace, start: &str) -> usize {
    let config = ws.read("project/.jp/config.toml");
    1 + config
        .lines()
        .position(|line| line.trim_start().starts_with(start))
        .unwrap()
}

#[test]
fn each_call_lists_its_rule_byte_and_who_settled_it() {
    let ws = run();
    // The catch-all is the line after the first rule.
    let first = line_of(&ws, "{ arg = \"/filter\"");
    let second = first + 1;
    let out = ws.jp(&["conversation", "decisions"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        format!(
            "call toolu_1 list_items · turn 1 · success
  rule     unattended: conversation.tools.list_items.policy.run[0] (.jp/config.toml:{first})
  decided  after 18 B of 34 B of its arguments
  by       policy
call toolu_2 list_items · turn 1 · declined
  rule     ask: conversation.tools.list_items.policy.run[1] (.jp/config.toml:{second})
  decided  after 27 B, where jp stopped reading
  by       no terminal
  stream   stopped the stream after 27 B of list_items's arguments
"
        )
    );
    // Each was decided once `filter` was complete, before `note` arrived.
}

#[test]
fn scripts_get_the_same_as_json() {
    let ws = run();
    let line = line_of(&ws, "{ arg = \"/filter\"");
    let out = ws.jp(&["conversation", "decisions", "last", "--format", "json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let rows: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        rows[0],
        serde_json::json!({
            "call_id": "toolu_1",
            "tool": "list_items",
            "mode": "unattended",
            "rule": {
                "index": 0,
                "key": "conversation.tools.list_items.policy.run",
                "file": ".jp/config.toml",
                "line": line,
            },
            "at_byte": 18,
            "bytes": 34,
            "by": "policy",
            "turn": 1,
            "outcome": "success",
            "stream_cut": null,
        })
    );
    assert_eq!(rows[1]["by"], "no_terminal");
    assert_eq!(
        rows[1]["stream_cut"],
        serde_json::json!({"bytes": 27, "whole": false})
    );
    assert_eq!(rows.as_array().unwrap().len(), 2);
}

/// A response that breaks after a complete call: the call never runs, and
/// its record says it was decided by its rule, then ended by jp because
/// the response failed (exit 6, the provider's failure).
#[test]
fn a_call_of_a_response_that_failed_is_recorded_as_ended_by_jp() {
    let ws = with_policy();
    let whole = anthropic(
        &[Item::Tool("toolu_1", "list_items", r#"{"filter": "all"}"#)],
        "tool_use",
        false,
    );
    // The connection drops before the response's end.
    let broken = whole[..whole.find("event: message_delta").unwrap()].to_owned();
    let server = TestServer::start(vec![Reply::sse(broken)]);
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "list them");
    assert_eq!(run.code, 6, "{run:?}");
    let out = ws.jp(&["conversation", "decisions", "--format", "json"]);
    let rows: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let row = &rows[0];
    assert_eq!(
        (
            &row["mode"],
            &row["rule"]["index"],
            &row["by"],
            &row["how"],
            &row["outcome"]
        ),
        (
            &"unattended".into(),
            &0.into(),
            &"jp".into(),
            &"the response failed".into(),
            &"interrupted".into()
        ),
        "{rows}"
    );
    assert_eq!(rows.as_array().unwrap().len(), 1);
}
