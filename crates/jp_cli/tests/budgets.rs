//! A query's budgets through the real `jp`: `--max-cost` cuts a response
//! as soon as the query's cost passes it (here a recorded Anthropic
//! response, split at random offsets), `--max-turns` ends the query after
//! that many responses, and a budget jp cannot keep is refused before
//! anything is sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::providers::{Item, ollama};
use common::query::{echo_tool, initialized, query, replay};
use jp_test_server::{Reply, Split, TestServer};

/// The parameters of the recording's `run_me` tool.
const RUN_ME: &str = "[conversation.tools.run_me]\ncommand = [\"sh\", \"-c\", \"cat >/dev/null; printf '{\\\"type\\\":\\\"success\\\",\\\"content\\\":\\\"working!\\\"}'\"]\npolicy.run = \"unattended\"\n[conversation.tools.run_me.parameters]\nfoo = { type = \"string\" }\nbar = { type = \"string\" }\n";

#[test]
fn max_cost_cuts_the_response_that_passes_it() {
    let ws = initialized();
    ws.write("project/.jp/tools.toml", RUN_ME);
    // Haiku 4.5 at $1 in and $5 out a million: the first response (599
    // in, 71 out) costs $0.000954; the second passes $0.0011 after 50
    // bytes of its text (102 in, about 16 out by the estimate).
    let server = replay(
        "anthropic_test_tool_call_stream.yml",
        &Split::Random { seed: 11, max: 9 },
    );
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &["--cfg", "@.jp/tools.toml", "--max-cost", "0.0011"],
        "Please run the tool, providing whatever arguments you want.",
    );
    assert_eq!(run.code, 4, "{run:?}");
    assert_eq!(
        run.stdout,
        "Done! The tool ran successfully with the arguments\n"
    );
    let conversation = ws.read("project/.jp/conversations/active");
    assert!(
        run.stderr.ends_with(&format!(
            "stopped: the query spent about $0.001136 of its $0.0011 budget (--max-cost, conversation.max_cost); \
             the conversation keeps what arrived, and `jp query -c` goes on (conversation {})\n",
            conversation.trim()
        )),
        "{}",
        run.stderr
    );
    assert_eq!(server.wait_for(2, Duration::from_secs(5)).len(), 2);
}

/// The same cut with `--format jsonl`: the events end with the reason
/// and the exit code, after the text that arrived and each response's
/// usage with its cost.
#[test]
fn max_cost_ends_the_event_stream_with_its_reason() {
    let ws = initialized();
    ws.write("project/.jp/tools.toml", RUN_ME);
    let server = replay(
        "anthropic_test_tool_call_stream.yml",
        &Split::Random { seed: 5, max: 9 },
    );
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &[
            "--cfg",
            "@.jp/tools.toml",
            "--max-cost",
            "0.0011",
            "--format",
            "jsonl",
        ],
        "Please run the tool, providing whatever arguments you want.",
    );
    assert_eq!(run.code, 4, "{run:?}");
    let events: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        events.last().unwrap(),
        &serde_json::json!({"type": "end", "reason": "max_cost", "exit_code": 4})
    );
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Done! The tool ran successfully with the arguments");
    let costs: Vec<f64> = events
        .iter()
        .filter(|e| e["type"] == "usage")
        .map(|e| e["cost_usd"].as_f64().unwrap())
        .collect();
    // The cut response records what the provider had reported when it
    // was cut (its input, and the first output token); the budget went by
    // the estimate of what had arrived.
    assert_eq!(costs, [0.000954, 0.000107]);
    assert!(
        run.stderr
            .contains("stopped: the query spent about $0.001136"),
        "{}",
        run.stderr
    );
}

#[test]
fn max_turns_ends_the_query_with_the_calls_results_kept() {
    let ws = initialized();
    ws.write("project/.jp/tools.toml", &echo_tool("list_items", "listed"));
    let server = TestServer::start(vec![
        Reply::sse(common::providers::anthropic(
            &[Item::Tool("toolu_1", "list_items", "{}")],
            "tool_use",
            false,
        )),
        Reply::sse(common::providers::anthropic(
            &[Item::Text("Never sent.")],
            "end_turn",
            false,
        )),
    ]);
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &["--cfg", "@.jp/tools.toml", "--max-turns", "1"],
        "list them",
    );
    assert_eq!(run.code, 4, "{run:?}");
    let conversation = ws.read("project/.jp/conversations/active");
    assert!(
        run.stderr.contains("list_items success: listed")
            && run.stderr.ends_with(&format!(
                "stopped: the model kept calling tools past 1 response (--max-turns, conversation.max_turns); \
                 the calls' results are kept, and `jp query -c` goes on (conversation {})\n",
                conversation.trim()
            )),
        "{}",
        run.stderr
    );
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        server.requests().len(),
        1,
        "the second request is never sent"
    );
}

#[test]
fn a_cost_budget_without_a_price_is_refused_before_anything_is_sent() {
    let ws = initialized();
    let server = TestServer::start(vec![Reply::sse(ollama(&[Item::Text("Hi.")]))]);
    let run = query(
        &ws,
        &server,
        "ollama/qwen3",
        &["--max-cost", "0.5"],
        "hello",
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: --max-cost (conversation.max_cost): jp knows no price for ollama/qwen3, so it cannot keep to a cost budget; \
         set one in `providers.llm.models` (docs/query.md, \"Tokens and cost\")\n"
    );
    let run = query(&ws, &server, "ollama/qwen3", &["--max-turns", "0"], "hello");
    assert_eq!(run.code, 2, "{run:?}");
    std::thread::sleep(Duration::from_millis(100));
    assert!(server.requests().is_empty(), "nothing was sent");
}
