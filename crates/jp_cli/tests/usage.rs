//! Tokens and cost per turn (issue 23 part 3), through the `jp` binary
//! against the test server: the line after each turn, the usage each
//! response records, prices from the built-in table and from config, and
//! the totals of `jp conversation show`.

#![allow(clippy::unwrap_used)]

mod common;

use common::providers::{Item, anthropic};
use common::query::{initialized, query, stored};
use jp_test_server::{Reply, Split, TestServer};
use serde_json::{Value, json};

/// `body` (an Anthropic stream) with `start` as `message_start`'s usage
/// and `delta` as `message_delta`'s: what Anthropic reports when the
/// prompt cache is read and written.
fn with_usage(body: &str, start: &Value, delta: &Value) -> String {
    body.split("\n\n")
        .map(|event| {
            let Some((head, data)) = event.split_once("\ndata: ") else {
                return event.to_owned();
            };
            let mut data: Value = serde_json::from_str(data.trim_end()).unwrap();
            match data["type"].as_str() {
                Some("message_start") => data["message"]["usage"] = start.clone(),
                Some("message_delta") => data["usage"] = delta.clone(),
                _ => return event.to_owned(),
            }
            format!("{head}\ndata: {data}")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A tool loop on claude-sonnet-4-5 that writes the cache in its first
/// response and reads it in its second: the line sums both, Anthropic's
/// uncached `input_tokens` and its cache counts together, and prices each
/// kind at its own rate.
#[test]
fn a_turn_ends_with_its_tokens_cache_and_cost() {
    let ws = initialized();
    ws.write(
        "project/.jp/tools/ok.sh",
        "cat >/dev/null\necho '{\"type\":\"success\",\"content\":\"ok\"}'\n",
    );
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{}\n[conversation.tools.ok]\ncommand = [\"sh\", \".jp/tools/ok.sh\"]\npolicy.run = \"unattended\"\n",
            ws.read("project/.jp/config.toml")
        ),
    );
    let first = with_usage(
        &anthropic(&[Item::Tool("toolu_1", "ok", "{}")], "tool_use", false),
        &json!({"input_tokens": 12, "cache_creation_input_tokens": 3000, "cache_read_input_tokens": 0, "output_tokens": 1}),
        &json!({"input_tokens": 12, "cache_creation_input_tokens": 3000, "cache_read_input_tokens": 0, "output_tokens": 40}),
    );
    let second = with_usage(
        &anthropic(&[Item::Text("Done.")], "end_turn", false),
        &json!({"input_tokens": 15, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 3000, "output_tokens": 1}),
        &json!({"output_tokens": 20}),
    );
    let server = TestServer::start(vec![
        Reply::sse(first).split(Split::Random { seed: 3, max: 17 }),
        Reply::sse(second).split(Split::Random { seed: 4, max: 17 }),
    ]);
    let run = query(&ws, &server, "anthropic/claude-sonnet-4-5", &[], "go");
    assert_eq!(run.code, 0, "{run:?}");
    // In: 12 + 3,000 + 15 + 100 + 3,000. Cost: 12 × $3 + 3,000 × $3.75 +
    // 40 × $15, then 15 × $3 + 3,000 × $0.30 + 100 × $3.75 + 20 × $15, per
    // million: $0.011886 + $0.00162.
    assert_eq!(
        run.stderr,
        "── jp (anthropic/claude-sonnet-4-5) ──\n\
         Calling tool ok()\n  \
         unattended (policy.run is \"unattended\")\n  \
         ok success: ok\n\
         ── jp (anthropic/claude-sonnet-4-5) ──\n\
         tokens: 2 responses · 6,127 in (3,000 cached, 3,100 written to the cache) · 60 out · $0.0135 · context 1% of 200k\n"
    );
    let usage: Vec<Value> = stored(&ws)["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["type"] == "usage")
        .map(|event| {
            let mut event = event.clone();
            event.as_object_mut().unwrap().remove("at_ms");
            event
        })
        .collect();
    assert_eq!(
        usage,
        [
            json!({"type": "usage", "model": "anthropic/claude-sonnet-4-5", "input_tokens": 3012,
                   "cache_read_tokens": 0, "cache_write_tokens": 3000, "output_tokens": 40,
                   "cost_usd": 0.011886}),
            json!({"type": "usage", "model": "anthropic/claude-sonnet-4-5", "input_tokens": 3115,
                   "cache_read_tokens": 3000, "cache_write_tokens": 100, "output_tokens": 20,
                   "cost_usd": 0.00162}),
        ]
    );
    // Usage is jp's bookkeeping: the second request carries none of it.
    let sent = server.wait_for(2, std::time::Duration::from_secs(5))[1].json();
    assert!(!sent.to_string().contains("cost_usd"), "{sent}");
}

/// Config overrides a built-in price field by field, and adds models the
/// table lacks; a model with no known price gets no cost.
#[test]
fn prices_come_from_config_over_the_builtin_table() {
    let ws = initialized();
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{}\n[providers.llm.anthropic.models.claude-haiku-4-5]\nprice.output = 1000.0\n\n\
             [providers.llm.anthropic.models.claude-opus-5]\ncontext_window = 500000\n",
            ws.read("project/.jp/config.toml")
        ),
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(&[Item::Text("A.")], "end_turn", false)),
        Reply::sse(anthropic(&[Item::Text("B.")], "end_turn", false)),
    ]);
    // 10 in at the built-in $1, 42 out at the configured $1,000.
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "one");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        "── jp (anthropic/claude-haiku-4-5) ──\ntokens: 10 in · 42 out · $0.0420 · context 1% of 200k\n"
    );
    // A window but no price: tokens only.
    let run = query(&ws, &server, "anthropic/claude-opus-5", &[], "two");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        "── jp (anthropic/claude-opus-5) ──\ntokens: 10 in · 42 out · context 0% of 500k\n"
    );
}

/// `jp conversation show` totals every turn's usage, in text and JSON.
#[test]
fn conversation_show_totals_the_usage() {
    let ws = initialized();
    let server = TestServer::start(vec![
        Reply::sse(anthropic(&[Item::Text("A.")], "end_turn", false)),
        Reply::sse(anthropic(&[Item::Text("B.")], "end_turn", false)),
    ]);
    for message in ["one", "two"] {
        let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], message);
        assert_eq!(run.code, 0, "{run:?}");
    }
    let shown = ws.jp(&["conversation", "show"]);
    assert_eq!(shown.code, 0, "{shown:?}");
    assert_eq!(
        shown.stdout.lines().rev().take(2).collect::<Vec<_>>(),
        [
            "total: 2 turns · 2 responses · 20 in · 84 out · $0.0004",
            ""
        ]
    );
    let json = ws.jp(&["conversation", "show", "--format", "json"]);
    assert_eq!(json.code, 0, "{json:?}");
    let shown: Value = serde_json::from_str(&json.stdout).unwrap();
    let mut usage = shown["usage"].clone();
    // $0.00022 twice, as floats add.
    let cost = usage["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.00044).abs() < 1e-12, "{cost}");
    usage["cost_usd"] = json!("checked");
    assert_eq!(
        usage,
        json!({"responses": 2, "input_tokens": 20, "cache_read_tokens": 0,
               "cache_write_tokens": 0, "output_tokens": 84, "cost_usd": "checked",
               "unpriced": 0})
    );
}

/// A price that is not a number of dollars, or a window of 0, is a config
/// error that names the key.
#[test]
fn validate_names_a_bad_price_or_window() {
    let ws = initialized();
    let config = ws.read("project/.jp/config.toml");
    // The lines of `price` and `context_window` below jp init's config.
    let price_line = config.lines().count() + 3;
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n[providers.llm.openai.models.\"gpt-x\"]\nprice = {{ input = -1.0, output = 2.0 }}\ncontext_window = 0\n",
        ),
    );
    let run = ws.jp(&["config", "validate"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "error: .jp/config.toml:{price_line}: providers.llm.openai.models.gpt-x.price.input: must be a price in US dollars per million tokens, 0 or more, found -1\n\
             error: .jp/config.toml:{}: providers.llm.openai.models.gpt-x.context_window: must be at least 1 (the most tokens the model reads)\n",
            price_line + 1
        )
    );
    assert_eq!(run.stderr, "");
}

/// `jp conversation cost`: every request so far, by model when there were
/// several, the rewound turn said apart (it was paid for), and a model
/// with no known price named; by id, by a start of it and by `last`.
#[test]
fn conversation_cost_sums_by_model_and_says_what_rewound_turns_cost() {
    let ws = initialized();
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{}\n[providers.llm.anthropic.models.claude-opus-5]\ncontext_window = 500000\n",
            ws.read("project/.jp/config.toml")
        ),
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(&[Item::Text("A.")], "end_turn", false)),
        Reply::sse(anthropic(&[Item::Text("B.")], "end_turn", false)),
        Reply::sse(anthropic(&[Item::Text("C.")], "end_turn", false)),
    ]);
    for (model, message) in [
        ("anthropic/claude-haiku-4-5", "one"),
        ("anthropic/claude-haiku-4-5", "two"),
        ("anthropic/claude-opus-5", "three"),
    ] {
        let run = query(&ws, &server, model, &[], message);
        assert_eq!(run.code, 0, "{run:?}");
    }
    let rewind = ws.jp(&["conversation", "rewind", "--yes"]);
    assert_eq!(rewind.code, 0, "{rewind:?}");
    let id = stored(&ws)["id"].as_str().unwrap().to_owned();
    // 10 in at $1 and 42 out at $5 per million on haiku: $0.00022 a turn.
    let expected = format!(
        "conversation {id} · one\n\
         3 turns · 3 requests · 30 in · 126 out · $0.0004 for 2 of 3 requests (no price for anthropic/claude-opus-5)\n  \
         anthropic/claude-haiku-4-5: 2 requests · 20 in · 84 out · $0.0004\n  \
         anthropic/claude-opus-5: 1 request · 10 in · 42 out · cost unknown (no price for anthropic/claude-opus-5)\n\
         of it, rewound (1 turn, paid for, no longer sent): 1 request · 10 in · 42 out · cost unknown (no price for anthropic/claude-opus-5)\n"
    );
    for args in [
        &["conversation", "cost"][..],
        &["conversation", "cost", &id],
        &["conversation", "cost", &id[..id.len() - 1]],
        &["conversation", "cost", "last"],
    ] {
        let run = ws.jp(args);
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (0, expected.as_str(), ""),
            "{args:?}"
        );
    }
}

/// A conversation whose responses reported no usage (the scripted
/// provider's) says so; a name that fits no conversation is a usage error.
#[test]
fn conversation_cost_without_usage_or_conversation() {
    let ws = initialized();
    let run = ws.jp(&["conversation", "cost", "nope"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            2,
            "",
            "error: no conversation `nope` (see `jp conversation ls`)\n"
        )
    );
    let run = ws.jp(&["query", "--model", "scripted/demo", "add a hello"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = ws.jp(&["conversation", "cost"]);
    assert_eq!(run.code, 0, "{run:?}");
    let id = stored(&ws)["id"].as_str().unwrap().to_owned();
    assert_eq!(
        run.stdout,
        format!(
            "conversation {id} · add a hello\n1 turn · no usage recorded (no response reported its tokens)\n"
        )
    );
}

/// `jp usage` sums every conversation here, each on a line; `--since`
/// counts only what came after it; a bad `--since` is a usage error.
#[test]
fn jp_usage_sums_the_conversations_here() {
    let ws = initialized();
    let run = ws.jp(&["usage"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "no conversations yet; `jp query MESSAGE` starts one\n")
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(&[Item::Text("A.")], "end_turn", false)),
        Reply::sse(anthropic(&[Item::Text("B.")], "end_turn", false)),
    ]);
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "one");
    assert_eq!(run.code, 0, "{run:?}");
    let first = stored(&ws)["id"].as_str().unwrap().to_owned();
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &["--new"],
        "two",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let second = stored(&ws)["id"].as_str().unwrap().to_owned();
    let run = ws.jp(&["usage"]);
    assert_eq!(run.code, 0, "{run:?}");
    // Listed in the store's order (its ids, sorted).
    let mut listed = [(first, "one"), (second, "two")];
    listed.sort();
    let lines: Vec<String> = listed
        .iter()
        .map(|(id, title)| format!("{id} · {title}: 1 request · 10 in · 42 out · $0.0002\n"))
        .collect();
    let report = format!(
        "{}total: 2 conversations · 2 requests · 20 in · 84 out · $0.0004\n",
        lines.concat()
    );
    assert_eq!(run.stdout, report);
    let json = ws.jp(&["usage", "--format", "json"]);
    assert_eq!(json.code, 0, "{json:?}");
    let json: Value = serde_json::from_str(&json.stdout).unwrap();
    let ids: Vec<&str> = json["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [listed[0].0.as_str(), listed[1].0.as_str()]);
    assert_eq!(
        (
            &json["total"]["responses"],
            &json["total"]["input_tokens"],
            &json["total"]["output_tokens"]
        ),
        (&json!(2), &json!(20), &json!(84))
    );
    assert_eq!(
        json["early_declines"],
        json!({"responses": 0, "argument_bytes": 0})
    );
    assert_eq!(json["cache_saved_usd"], Value::Null);
    // The test clock stands at 2026-11-30: an hour back counts all of it,
    // the next day none.
    let run = ws.jp(&["usage", "--since", "1h"]);
    assert_eq!(run.stdout, report);
    let run = ws.jp(&["usage", "--since", "2026-12-01"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "nothing used in that time\n")
    );
    let run = ws.jp(&["usage", "--since", "yesterday"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            "error: --since yesterday: give a day (2026-12-01) or a span back from now (7d, 24h, 90m)\n"
        )
    );
}
