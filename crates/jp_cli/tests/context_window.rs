//! A conversation that outgrows its model (issue 23 part 5), through the
//! `jp` binary against the test server: jp's estimate refuses to send it,
//! a provider's own refusal reads the same, and old tool results can be
//! sent as stubs while the conversation keeps them whole.

#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::providers::{Item, anthropic};
use common::query::{hide_ids, initialized, query, stored};
use jp_test_server::{Reply, TestServer};
use serde_json::json;

const MODEL: &str = "anthropic/claude-haiku-4-5";
const REMEDY: &str = "Summarise older turns (`jp conversation compact`), take turns back (`jp conversation rewind N`), start a new conversation (`jp query --new`), switch to a model with a larger window (`--model`), or send old tool results as stubs (`conversation.elide_tool_results.enable = true`)";

/// What jp says of a turn whose first request was refused: it is taken
/// back, so the next query does not send it again.
const NOT_SENT: &str = "your message was not sent, and is not sent again; the conversation keeps it (`jp conversation show`, conversation <id>)";

fn add_config(ws: &common::Workspace, toml: &str) {
    let config = ws.read("project/.jp/config.toml");
    ws.write("project/.jp/config.toml", &format!("{config}\n{toml}"));
}

#[test]
fn a_conversation_larger_than_the_window_is_not_sent() {
    let ws = initialized();
    add_config(
        &ws,
        "[providers.llm.anthropic.models.claude-haiku-4-5]\ncontext_window = 3000\n",
    );
    let server = TestServer::start(vec![Reply::sse(anthropic(
        &[Item::Text("Small answer.")],
        "end_turn",
        false,
    ))]);
    let run = query(&ws, &server, MODEL, &[], &"word ".repeat(4000));
    assert_eq!(run.code, 6, "{run:?}");
    let estimate = regex::Regex::new(r"about [\d,]+ tokens").unwrap();
    // Only a shorter message or a larger window gets this turn through.
    assert_eq!(
        estimate.replace_all(&hide_ids(&run.stderr), "about N tokens"),
        format!(
            "── jp (anthropic/claude-haiku-4-5) ──\n\
             error: the conversation is too large for anthropic/claude-haiku-4-5: about N tokens by jp's estimate, and the model reads at most 3,000 tokens. This turn alone (with the system prompt and the tools) is about N tokens, so only a shorter message or a model with a larger window (`--model`) gets it through\n\
             {NOT_SENT}\n"
        )
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(server.requests().len(), 0, "nothing was sent");
    // The turn is taken back: the next query is not stuck on it.
    let types = common::query::event_types(&stored(&ws));
    assert_eq!(types, ["turn_start", "chat_request", "rewind"]);
    let next = query(&ws, &server, MODEL, &[], "small question");
    assert_eq!(next.code, 0, "{next:?}");
    let sent = server.wait_for(1, Duration::from_secs(5));
    assert_eq!(
        sent[0].json()["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "small question", "cache_control": {"type": "ephemeral"}}]}])
    );
    // The estimate is the characters sent over four: the message alone is
    // 20,000 characters.
    let shown = estimate
        .find(&run.stderr)
        .unwrap()
        .as_str()
        .replace(',', "");
    let tokens: u64 = shown
        .trim_start_matches("about ")
        .trim_end_matches(" tokens")
        .parse()
        .unwrap();
    assert!((5_000..7_000).contains(&tokens), "{tokens}");
}

#[test]
fn a_providers_too_long_answer_reads_the_same() {
    let ws = initialized();
    let server = TestServer::start(vec![Reply::status(
        400,
        "application/json",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens > 200000 maximum"}}"#,
    )]);
    let run = query(&ws, &server, MODEL, &[], "hello");
    assert_eq!(run.code, 6, "{run:?}");
    assert_eq!(
        hide_ids(&run.stderr),
        format!(
            "── jp (anthropic/claude-haiku-4-5) ──\n\
             error: the conversation is too large for anthropic/claude-haiku-4-5: 215,000 tokens by the provider's count, and the model reads at most 200,000 tokens. {REMEDY}\n\
             {NOT_SENT}\n"
        )
    );
}

#[test]
fn old_large_results_are_sent_as_stubs_and_kept_whole() {
    let ws = initialized();
    let notes = "line of notes\n".repeat(100);
    ws.write("project/notes.txt", &notes);
    add_config(
        &ws,
        "[conversation.elide_tool_results]\nenable = true\nkeep_turns = 1\nmin_bytes = 100\n",
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[Item::Tool(
                "toolu_1",
                "fs_read_file",
                r#"{"path": "notes.txt"}"#,
            )],
            "tool_use",
            false,
        )),
        Reply::sse(anthropic(&[Item::Text("Read.")], "end_turn", false)),
        Reply::sse(anthropic(&[Item::Text("Still.")], "end_turn", false)),
    ]);
    let run = query(&ws, &server, MODEL, &[], "read the notes");
    assert_eq!(run.code, 0, "{run:?}");
    let run = query(&ws, &server, MODEL, &[], "and now?");
    assert_eq!(run.code, 0, "{run:?}");
    let sent = server.wait_for(3, Duration::from_secs(5));
    let result = |n: usize| sent[n].json()["messages"][2]["content"][0]["content"].clone();
    // In its own turn the model reads the result whole ...
    assert_eq!(result(1), json!(notes));
    // ... and a turn later a stub naming the call and its size.
    assert_eq!(
        result(2),
        json!(
            "[jp left out this result of fs_read_file (call toolu_1) from an earlier turn: 1400 bytes, kept in the conversation but not sent again; call the tool again if you need it]"
        )
    );
    // The conversation keeps it whole.
    let kept: Vec<_> = stored(&ws)["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "tool_call_response")
        .map(|e| e["content"].clone())
        .collect();
    assert_eq!(kept, [json!(notes)]);
}

#[test]
fn keeping_no_turn_whole_is_a_config_error() {
    let ws = initialized();
    // The line of `keep_turns` below jp init's config.
    let line = ws.read("project/.jp/config.toml").lines().count() + 3;
    add_config(&ws, "[conversation.elide_tool_results]\nkeep_turns = 0\n");
    let run = ws.jp(&["config", "validate"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "error: .jp/config.toml:{line}: conversation.elide_tool_results.keep_turns: must be at least 1 (the current turn's results are always sent whole)\n"
        )
    );
}
