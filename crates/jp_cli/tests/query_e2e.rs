//! `jp query` end to end: the real binary against a local server that
//! replays provider bytes (recorded ones from
//! `jp_test_server/tests/data/providers`, and scenario bodies in each wire
//! format), with real tool processes in a temporary workspace.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::providers::{Item, anthropic, ollama, openai};
use common::query::{
    echo_tool, event_types, hide_ids, initialized, query, replay, responses, stored,
};
use jp_test_server::{Fault, Reply, Split, TestServer};
use serde_json::{Value, json};

/// The parameters of the recordings' `run_me` tool.
const RUN_ME_PARAMETERS: &str = "[conversation.tools.run_me.parameters]\nfoo = { type = \"string\" }\nbar = { type = \"string\" }\n";

#[test]
fn anthropic_tool_call_creates_a_file() {
    let ws = initialized();
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Text("I'll create it."),
                Item::Tool(
                    "toolu_1",
                    "fs_create_file",
                    r#"{"path": "src/hello.rs", "content": "pub fn hello() -> &'static str {\n    \"héllo\"\n}\n"}"#,
                ),
            ],
            "tool_use",
            false,
        ))
        .split(Split::Every(1)),
        Reply::sse(anthropic(&[Item::Text("Created `src/hello.rs`.")], "end_turn", false))
            .split(Split::Random { seed: 7, max: 13 }),
    ]);
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "add hello");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "I'll create it.\nCreated `src/hello.rs`.\n");
    assert_eq!(
        run.stderr,
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         Calling tool fs_create_file(path: \"src/hello.rs\", content: \"pub fn hello() -> &'static str {\\n    …)\n  \
         unattended (policy.run[2] (prefix \"src/\" on /path) matched: \"src/hello.rs\" is under src/)\n  \
         fs_create_file success: created src/hello.rs (3 lines)\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n"
    );
    assert_eq!(
        ws.read("project/src/hello.rs"),
        "pub fn hello() -> &'static str {\n    \"héllo\"\n}\n"
    );

    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some("test-key"));
    let first = requests[0].json();
    assert_eq!(first["model"], "claude-haiku-4-5");
    assert_eq!(first["stream"], true);
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "fs_read_file",
            "fs_list_files",
            "fs_grep",
            "fs_glob",
            "fs_create_file",
            "fs_modify_file",
            "fs_delete_file",
            "run_command"
        ]
    );
    let create_schema = &first["tools"][4]["input_schema"];
    assert_eq!(create_schema["additionalProperties"], false);
    assert_eq!(
        create_schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["path", "content"]
    );
    let second = requests[1].json();
    assert_eq!(
        second["messages"][2],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "created src/hello.rs (3 lines)", "is_error": false, "cache_control": {"type": "ephemeral"}}]})
    );

    let conversation = stored(&ws);
    assert_eq!(
        event_types(&conversation),
        [
            "turn_start",
            "chat_request",
            "assistant_message",
            "tool_call_request",
            "usage",
            // What it created, for `jp conversation rewind` (issue 38).
            "file_change",
            "call_decision",
            "tool_call_response",
            "assistant_message",
            "usage"
        ]
    );
}

#[test]
fn recorded_anthropic_round_trip() {
    let ws = initialized();
    ws.write(
        "project/.jp/run_me.sh",
        "#!/bin/sh\ncat > \"$(dirname \"$0\")/request.json\"\nprintf '{\"type\":\"success\",\"content\":\"working!\"}'\n",
    );
    ws.write(
        "project/.jp/tools.toml",
        &format!(
            "[conversation.tools.run_me]\ncommand = [\"sh\", \".jp/run_me.sh\"]\npolicy.run = \"unattended\"\n{RUN_ME_PARAMETERS}"
        ),
    );
    let server = replay(
        "anthropic_test_tool_call_stream.yml",
        &Split::Random { seed: 3, max: 5 },
    );
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &["--cfg", "@.jp/tools.toml"],
        "Please run the tool, providing whatever arguments you want.",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let request: Value = serde_json::from_str(&ws.read("project/.jp/request.json")).unwrap();
    assert_eq!(request["tool"]["name"], "run_me");
    assert_eq!(
        request["tool"]["arguments"],
        json!({"bar": "foo", "foo": "foo"})
    );
    assert_eq!(request["context"]["action"], "run");
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert!(requests.iter().all(|r| r.path_mismatch.is_none()));
    assert_eq!(
        requests[1].json()["messages"][2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_0113bSV1GiCA46VddyWm86oR", "content": "working!", "is_error": false, "cache_control": {"type": "ephemeral"}})
    );
    assert!(
        run.stdout.ends_with("returned the output: \"working!\"\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn recorded_openrouter_parallel_calls_both_run() {
    let ws = initialized();
    ws.write(
        "project/.jp/tools.toml",
        &(echo_tool("list_items", "listed") + &echo_tool("search_items", "searched")),
    );
    let server = replay(
        "openrouter_test_anthropic_opus_5_parallel_tool_round_trip.yml",
        &Split::Every(3),
    );
    let run = query(
        &ws,
        &server,
        "openrouter/anthropic/claude-opus-5",
        &["--cfg", "@.jp/tools.toml"],
        "Call both list_items and search_items in parallel.",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests[0].path, "/api/v1/chat/completions");
    assert_eq!(requests[0].header("authorization"), Some("Bearer test-key"));
    let messages = requests[1].json()["messages"].clone();
    let results: Vec<(String, String)> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // The system prompt, the user's message, then the assistant's calls.
    assert_eq!(messages[0]["role"], "system");
    let calls = &messages[2]["tool_calls"];
    assert_eq!(calls.as_array().unwrap().len(), 2);
    assert_eq!(
        results,
        [
            (
                calls[0]["id"].as_str().unwrap().to_owned(),
                "listed".to_owned()
            ),
            (
                calls[1]["id"].as_str().unwrap().to_owned(),
                "searched".to_owned()
            ),
        ]
    );
    assert!(
        run.stdout.starts_with(
            "I'll call both tools in parallel now.\nBoth tools have been called in parallel"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn recorded_ollama_round_trip() {
    let ws = initialized();
    ws.write(
        "project/.jp/tools.toml",
        &(echo_tool("run_me", "working!") + RUN_ME_PARAMETERS),
    );
    let server = replay("ollama_test_tool_call_stream.yml", &Split::Every(2));
    let run = query(
        &ws,
        &server,
        "ollama/qwen3.5:9b",
        &["--cfg", "@.jp/tools.toml"],
        "Please run the tool, providing whatever arguments you want.",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests[0].path, "/api/chat");
    let messages = requests[1].json()["messages"].clone();
    // The system prompt, the user's message, the call, its result.
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["content"], "working!");
    assert!(
        run.stdout
            .starts_with("The tool ran successfully! It output: `working!`."),
        "{}",
        run.stdout
    );
}

#[test]
fn openai_and_ollama_formats_create_files_too() {
    for (model, first, second) in [
        (
            "llamacpp/qwen",
            Reply::sse(openai(
                &[Item::Tool(
                    "call_1",
                    "fs_create_file",
                    r#"{"path":"src/a.rs","content":"// a\n"}"#,
                )],
                // `stop` on a tool call: the call still runs.
                "stop",
            )),
            Reply::sse(openai(&[Item::Text("Done.")], "stop")),
        ),
        (
            "ollama/qwen3.5:9b",
            Reply::ndjson(ollama(&[Item::Tool(
                "call_1",
                "fs_create_file",
                r#"{"path":"src/a.rs","content":"// a\n"}"#,
            )])),
            Reply::ndjson(ollama(&[Item::Text("Done.")])),
        ),
    ] {
        let ws = initialized();
        let server = TestServer::start(vec![first.split(Split::Every(1)), second]);
        let run = query(&ws, &server, model, &[], "make a");
        assert_eq!(run.code, 0, "{model}: {run:?}");
        assert_eq!(run.stdout, "Done.\n", "{model}");
        assert_eq!(ws.read("project/src/a.rs"), "// a\n", "{model}");
        assert_eq!(
            responses(&stored(&ws)),
            [("success".to_owned(), "created src/a.rs (1 line)".to_owned())],
            "{model}"
        );
    }
}

#[test]
fn a_call_whose_policy_asks_is_declined_without_a_terminal() {
    let ws = initialized();
    ws.write("project/src/lib.rs", "pub fn main() {}\n");
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[Item::Tool(
                "toolu_1",
                "fs_modify_file",
                r#"{"path": "src/lib.rs", "patterns": [{"old": "main", "new": "hello"}]}"#,
            )],
            "tool_use",
            false,
        )),
        Reply::sse(anthropic(&[Item::Text("Understood.")], "end_turn", false)),
    ]);
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &[],
        "rename main",
    );
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(
        run.stderr,
        // `run = "ask"` decides before any argument arrives: declined at
        // once, and the rest of the call is never streamed.
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         Calling tool fs_modify_file()\n  \
         fs_modify_file: declined: policy.run is \"ask\", so jp must ask, and no terminal is available; run jp in a terminal to answer, or add a rule for calls like this one in a policy.run list that ends with { mode = \"ask\" } in conversation.tools.fs_modify_file (`jp policy check fs_modify_file` tries it)\n  \
         stopped the stream before fs_modify_file's arguments\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         tokens: 2 responses · 20 in · 43 out · $0.0002 · stream stopped before fs_modify_file's arguments; they were never generated · context 1% of 200k\n"
    );
    assert_eq!(ws.read("project/src/lib.rs"), "pub fn main() {}\n");
    let requests = server.wait_for(2, Duration::from_secs(5));
    let result = &requests[1].json()["messages"][2]["content"][0];
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["content"],
        "The call was not run: the user's policy requires confirmation and no one could confirm it (jp is running without a terminal). jp stopped your response before this call's arguments."
    );
}

#[test]
fn skip_answers_skipped_and_never_runs() {
    let ws = initialized();
    ws.write("project/src/old.rs", "x\n");
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[Item::Tool(
                "toolu_1",
                "fs_delete_file",
                r#"{"path": "src/old.rs"}"#,
            )],
            "tool_use",
            false,
        )),
        Reply::sse(anthropic(
            &[Item::Text("Skipped, then.")],
            "end_turn",
            false,
        )),
    ]);
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &["--cfg", "conversation.tools.fs_delete_file.policy.run=skip"],
        "delete old.rs",
    );
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(ws.read("project/src/old.rs"), "x\n");
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "skipped".to_owned(),
            "This call was skipped by the user's policy; it was not run. jp stopped your response before this call's arguments.".to_owned()
        )]
    );
}

#[test]
fn a_crashing_tool_becomes_an_error_result_and_jp_goes_on() {
    let ws = initialized();
    ws.write(
        "project/.jp/tools.toml",
        "[conversation.tools.crash]\ncommand = [\"sh\", \"-c\", \"echo dying >&2; kill -9 $$\"]\npolicy.run = \"unattended\"\n",
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[Item::Tool("toolu_1", "crash", "{}")],
            "tool_use",
            false,
        )),
        Reply::sse(anthropic(&[Item::Text("It crashed.")], "end_turn", false)),
    ]);
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &["--cfg", "@.jp/tools.toml"],
        "crash",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "It crashed.\n");
    let stored = responses(&stored(&ws));
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].0, "error");
    assert_eq!(
        stored[0].1,
        "tool `crash` was killed by signal 9 (SIGKILL); its stderr ends with:\ndying"
    );
}

#[test]
fn a_provider_error_mid_stream_keeps_the_conversation_readable() {
    let ws = initialized();
    let body = anthropic(
        &[
            Item::Text("Part one, then the line drops."),
            Item::Tool(
                "toolu_1",
                "fs_create_file",
                r#"{"path": "src/x.rs", "content": "x"}"#,
            ),
        ],
        "tool_use",
        false,
    );
    // Cut inside the tool call's arguments.
    let cut = body.find("partial_json\":\"{").unwrap() + 40;
    let server = TestServer::start(vec![
        Reply::sse(body)
            .split(Split::Every(16))
            .fault(Fault::DisconnectAfter(cut)),
    ]);
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "go");
    assert_eq!(run.code, 6, "{run:?}");
    assert_eq!(run.stdout, "Part one, then the line drops.\n");
    // The cause comes from the HTTP stack; jp's own words are exact.
    let stderr = hide_ids(&run.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    assert_eq!(lines[0], "── jp (anthropic/claude-haiku-4-5) ──");
    // What arrived before the drop was counted (message_start's usage).
    assert_eq!(
        lines[1],
        "tokens: 10 in · 1 out · under $0.0001 · context 1% of 200k"
    );
    assert!(
        lines[2].starts_with(
            "error: anthropic: the connection dropped mid-response: error reading the response: "
        ),
        "{stderr}"
    );
    assert_eq!(
        lines[3],
        "the conversation keeps what arrived; `jp query` continues it (conversation <id>)"
    );
    assert!(!ws.project().join("src/x.rs").exists());
    let conversation = stored(&ws);
    assert_eq!(
        event_types(&conversation),
        [
            "turn_start",
            "chat_request",
            "assistant_message",
            "tool_call_request",
            "usage",
            // Never run: the response failed (how it was decided, then its
            // answer).
            "call_decision",
            "tool_call_response"
        ]
    );
    assert_eq!(
        conversation["events"][2]["content"],
        "Part one, then the line drops."
    );
    assert_eq!(responses(&conversation)[0].0, "interrupted");
    assert_eq!(server.requests().len(), 1, "no automatic re-POST");
}

#[test]
fn a_second_query_continues_the_conversation() {
    let ws = initialized();
    let server = TestServer::start(vec![
        Reply::sse(anthropic(&[Item::Text("First answer.")], "end_turn", false)),
        Reply::sse(anthropic(
            &[Item::Text("Second answer.")],
            "end_turn",
            false,
        )),
    ]);
    let first = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "one");
    assert_eq!(first.code, 0, "{first:?}");
    let second = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "two");
    assert_eq!(second.code, 0, "{second:?}");
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(
        requests[1].json()["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "one", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [{"type": "text", "text": "First answer."}]},
            {"role": "user", "content": [{"type": "text", "text": "two", "cache_control": {"type": "ephemeral"}}]},
        ])
    );
    let ls = ws.jp(&["conversation", "ls"]);
    assert_eq!(ls.stdout.lines().count(), 1, "{ls:?}");
    assert!(ls.stdout.starts_with("* "), "{ls:?}");
    assert!(ls.stdout.ends_with("2 turns  one\n"), "{ls:?}");

    // `--new` starts another one.
    let server = TestServer::start(vec![Reply::sse(anthropic(
        &[Item::Text("Fresh.")],
        "end_turn",
        false,
    ))]);
    let third = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &["--new"],
        "three",
    );
    assert_eq!(third.code, 0, "{third:?}");
    assert_eq!(
        server.wait_for(1, Duration::from_secs(5))[0].json()["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "three", "cache_control": {"type": "ephemeral"}}]}])
    );
    assert_eq!(ws.jp(&["conversation", "ls"]).stdout.lines().count(), 2);
}

#[test]
fn rate_limits_are_retried_with_a_notice() {
    let ws = initialized();
    let server = TestServer::start(vec![
        Reply::status(
            429,
            "application/json",
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
        )
        .header("retry-after", "0"),
        Reply::sse(anthropic(&[Item::Text("Made it.")], "end_turn", false)),
    ]);
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "hi");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Made it.\n");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(
        run.stderr,
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         rate limited (HTTP 429); retrying in 0s (attempt 2 of 5)\n\
         tokens: 10 in · 42 out · $0.0002 · context 1% of 200k\n"
    );
}

#[test]
fn an_http_error_is_reported_clearly() {
    let ws = initialized();
    let server = TestServer::start(vec![Reply::status(
        400,
        "application/json",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}"#,
    )]);
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "hi");
    assert_eq!(run.code, 6, "{run:?}");
    assert_eq!(
        hide_ids(&run.stderr),
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         error: anthropic: HTTP 400: max_tokens: too large\n\
         the conversation keeps what arrived; `jp query` continues it (conversation <id>)\n"
    );
    assert_eq!(event_types(&stored(&ws)), ["turn_start", "chat_request"]);
}

/// Issue 39: a misspelled `--model` is caught before anything is recorded
/// or sent, with the closest name jp knows; a model jp does not list works
/// once the config names it.
#[test]
fn a_misspelled_model_is_said_before_anything_is_recorded() {
    let ws = initialized();
    let server = TestServer::start(vec![common::providers::text_reply("Hi.")]);
    let base = format!("providers.llm.anthropic.base_url={}", server.url());
    let ask = |model: &str| {
        ws.jp_with_env(
            &["query", "--cfg", &base, "--model", model, "hi"],
            &[common::query::KEY],
        )
    };
    let run = ask("anthropic/claude-sonet-4-5");
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            "error: --model anthropic/claude-sonet-4-5: `anthropic/claude-sonet-4-5` is not a model jp knows (did you mean anthropic/claude-sonnet-4-5?); a model jp does not list yet works once your config names it: `[providers.llm.anthropic.models.\"claude-sonet-4-5\"]`\n"
        )
    );
    assert_eq!(
        ws.jp(&["conversation", "ls"]).stdout,
        "no conversations yet; `jp query MESSAGE` starts one\n",
        "nothing was recorded"
    );
    assert_eq!(server.requests().len(), 0, "nothing was sent");

    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!("{config}\n[providers.llm.anthropic.models.\"claude-sonet-4-5\"]\n"),
    );
    let run = ask("anthropic/claude-sonet-4-5");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.requests()[0].json()["model"], "claude-sonet-4-5");
    // `-c` continues the active conversation (as without `--new`), and
    // says so against `--new`.
    let both = ws.jp(&["query", "-c", "--new", "hi"]);
    assert_eq!(both.code, 2, "{both:?}");
    assert!(
        both.stderr
            .starts_with("error: the argument '--continue' cannot be used with '--new'"),
        "{}",
        both.stderr
    );
}

#[test]
fn a_missing_api_key_fails_fast_naming_the_variable() {
    let ws = initialized();
    let run = ws.jp(&["query", "--model", "anthropic/claude-haiku-4-5", "hi"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: anthropic: the API key is missing: set the environment variable `ANTHROPIC_API_KEY`\n"
    );
}

#[test]
fn truncated_and_duplicate_key_arguments_are_refused() {
    let ws = initialized();
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Tool(
                    "toolu_1",
                    "fs_create_file",
                    r#"{"path": "src/a.rs", "path": "../evil", "content": ""}"#,
                ),
                Item::Tool(
                    "toolu_2",
                    "fs_create_file",
                    r#"{"path": "src/b.rs", "content": "cut of"#,
                ),
            ],
            "max_tokens",
            true,
        )),
        Reply::sse(anthropic(&[Item::Text("Sorry.")], "end_turn", false)),
    ]);
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "go");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!ws.project().join("src").exists());
    // The line shows both values of the repeated key, not just the last.
    assert_eq!(
        run.stderr,
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         Calling tool fs_create_file(path: \"src/a.rs\" or \"../evil\" (duplicate key), content: \"\")\n  \
         fs_create_file: refused: duplicate key `path` at /path: arguments with a repeated key are refused because its meaning is ambiguous\n\
         Calling tool fs_create_file(path: \"src/b.rs\")\n  \
         fs_create_file: refused: arguments are truncated: input ended inside a string at /content\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n"
    );
    assert_eq!(
        responses(&stored(&ws)),
        [
            (
                "refused".to_owned(),
                "The call was not run because its arguments are unusable: duplicate key `path` at /path: arguments with a repeated key are refused because its meaning is ambiguous.".to_owned()
            ),
            (
                "refused".to_owned(),
                "The call was not run because its arguments are unusable: arguments are truncated: input ended inside a string at /content.".to_owned()
            ),
        ]
    );
}

#[test]
fn the_offline_demo_runs_a_real_session() {
    let ws = initialized();
    let run = ws.jp(&[
        "query",
        "--model",
        "scripted/demo",
        "add a hello() to src/lib.rs",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "I'll look at what is in the workspace first.\n\
         There is no `src/lib.rs` yet, so I'll create it with a `hello()` function.\n\
         Done: `hello()` now lives in `src/lib.rs` and returns `\"Hello, world!\"`.\n"
    );
    assert_eq!(
        ws.read("project/src/lib.rs"),
        "/// Greets whoever calls it.\npub fn hello() -> &'static str {\n    \"Hello, world!\"\n}\n"
    );
    insta::assert_snapshot!(run.stderr);
    // It plays again in the same conversation, from the script's start,
    // with call ids new to the conversation (issue 25 part 3): the file is
    // there now, so its creation fails and the file stays as it was.
    let again = ws.jp(&["query", "--model", "scripted/demo", "once more"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(again.stdout, run.stdout);
    assert!(
        again.stderr.contains(
            "  fs_create_file error: cannot create `src/lib.rs`: it already exists; use fs_modify_file to change it\n"
        ),
        "{}",
        again.stderr
    );
    assert!(!again.stderr.contains("refused"), "{}", again.stderr);
    assert_eq!(
        ws.read("project/src/lib.rs"),
        "/// Greets whoever calls it.\npub fn hello() -> &'static str {\n    \"Hello, world!\"\n}\n"
    );
}

#[test]
fn a_repeated_call_id_never_borrows_another_calls_verdict() {
    let ws = initialized();
    ws.write("project/precious.txt", "keep me\n");
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Tool("dup", "fs_read_file", r#"{"path": "precious.txt"}"#),
                Item::Tool("dup", "fs_delete_file", r#"{"path": "precious.txt"}"#),
            ],
            "tool_use",
            false,
        )),
        Reply::sse(anthropic(&[Item::Text("Fine.")], "end_turn", false)),
    ]);
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "go");
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(ws.read("project/precious.txt"), "keep me\n");
    // The second call is declined as it starts (its policy asks and there
    // is no terminal), under an id of its own.
    assert_eq!(
        responses(&stored(&ws)),
        [
            ("success".to_owned(), "keep me\n".to_owned()),
            (
                "declined".to_owned(),
                "The call was not run: the user's policy requires confirmation and no one could confirm it (jp is running without a terminal). jp stopped your response before this call's arguments.".to_owned()
            ),
        ]
    );
    // Every result the provider gets names exactly one call.
    let sent = server.wait_for(2, Duration::from_secs(5))[1].json();
    let ids = |role_index: usize, key: &str| -> Vec<String> {
        sent["messages"][role_index]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[key].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(1, "id"), ["dup", "dup-2"]);
    assert_eq!(ids(2, "tool_use_id"), ["dup", "dup-2"]);
}

#[test]
fn a_dropped_connection_ends_the_turn_in_every_format() {
    for (model, reply, text) in [
        (
            "llamacpp/qwen",
            Reply::sse(openai(
                &[Item::Text("Partial answer that never ends")],
                "stop",
            )),
            "Partial answer that never ends",
        ),
        (
            "ollama/qwen3.5:9b",
            Reply::ndjson(ollama(&[Item::Text("Partial answer that never ends")])),
            "Partial answer that never ends",
        ),
    ] {
        let ws = initialized();
        // Cut at the start of the line that would end the response.
        let body = String::from_utf8(reply.body.clone()).unwrap();
        let end_marker = body
            .find("\"finish_reason\":\"stop\"")
            .or_else(|| body.find("\"done\":true"))
            .unwrap();
        let cut = body[..end_marker].rfind('\n').unwrap() + 1;
        let server = TestServer::start(vec![
            reply
                .split(Split::Every(5))
                .fault(Fault::DisconnectAfter(cut)),
        ]);
        let run = query(&ws, &server, model, &[], "go");
        assert_eq!(run.code, 6, "{model}: {run:?}");
        assert_eq!(run.stdout, format!("{text}\n"), "{model}");
        let provider = model.split('/').next().unwrap();
        let stderr = hide_ids(&run.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines[0], format!("── jp ({model}) ──"), "{model}");
        assert!(
            lines[1].starts_with(&format!(
                "error: {provider}: the connection dropped mid-response: "
            )),
            "{model}: {stderr}"
        );
        let conversation = stored(&ws);
        assert_eq!(
            event_types(&conversation),
            ["turn_start", "chat_request", "assistant_message"],
            "{model}"
        );
        assert_eq!(conversation["events"][2]["content"], text, "{model}");
    }
}

#[test]
fn a_server_error_is_reported_and_not_retried() {
    let ws = initialized();
    let server = TestServer::start(vec![Reply::status(
        500,
        "application/json",
        r#"{"error":{"message":"internal failure","type":"server_error"}}"#,
    )]);
    let run = query(&ws, &server, "openrouter/some/model", &[], "hi");
    assert_eq!(run.code, 6, "{run:?}");
    assert_eq!(
        hide_ids(&run.stderr),
        "── jp (openrouter/some/model) ──\n\
         error: openrouter: HTTP 500: internal failure\n\
         the conversation keeps what arrived; `jp query` continues it (conversation <id>)\n"
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn an_empty_message_is_a_usage_error() {
    let ws = initialized();
    let run = ws.jp(&["query", "--model", "scripted/demo", "  "]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: the message is empty; say what you want the assistant to do\n"
    );
    assert_eq!(
        ws.jp(&["conversation", "ls"]).stdout,
        "no conversations yet; `jp query MESSAGE` starts one\n"
    );
}

#[test]
fn a_tools_stderr_is_escaped_in_logs() {
    let ws = initialized();
    // The tool's log sets the window title and conceals what follows.
    ws.write(
        "project/.jp/loud.sh",
        "cat >/dev/null\nprintf '\\033]0;pwned\\007\\033[8mhidden\\n' >&2\nprintf '{\"type\":\"success\",\"content\":\"ok\"}'\n",
    );
    ws.write(
        "project/.jp/tools.toml",
        "[conversation.tools.loud]\ncommand = [\"sh\", \".jp/loud.sh\"]\npolicy.run = \"unattended\"\n",
    );
    ws.write(
        "project/.jp/script.toml",
        "[[responses]]\nparts = [{ tool = \"loud\", arguments = {} }]\n[[responses]]\nparts = [{ text = \"done\" }]\n",
    );
    let run = ws.jp(&[
        "-v",
        "query",
        "--model",
        "scripted/.jp/script.toml",
        "--cfg",
        "@.jp/tools.toml",
        "go",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let times = regex::Regex::new(r"(?m)^\S+Z +").unwrap();
    let ids = regex::Regex::new(r"conversation=\d+").unwrap();
    let stderr = times.replace_all(&run.stderr, "");
    assert_eq!(
        ids.replace_all(&stderr, "conversation=<id>"),
        "INFO turn starts conversation=<id>\n\
         ── jp (scripted/.jp/script.toml) ──\n\
         Calling tool loud()\n  \
         unattended (policy.run is \"unattended\")\n  \
         loud success: ok\n\
         INFO tool stderr tool=loud stderr=\\u{1b}]0;pwned\\u{7}\\u{1b}[8mhidden\n\
         ── jp (scripted/.jp/script.toml) ──\n"
    );
}

#[test]
fn color_flag_colours_chrome_and_never_the_answer() {
    let ws = initialized();
    let run = ws.jp(&[
        "--color",
        "always",
        "query",
        "--model",
        "scripted/demo",
        "add a hello() to src/lib.rs",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let first = run.stderr.lines().next().unwrap();
    assert_eq!(first, "\u{1b}[1m── jp (scripted/demo) ──\u{1b}[0m");
    assert!(!run.stdout.contains('\u{1b}'), "{:?}", run.stdout);
    let run = ws.jp_with_env(
        &[
            "--color",
            "never",
            "query",
            "--model",
            "scripted/demo",
            "again",
        ],
        &[],
    );
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
}

#[test]
fn tool_output_that_is_not_utf8_reaches_the_user_and_the_model_safely() {
    let ws = initialized();
    // A Latin-1 "café" in the outcome and in the log.
    ws.write(
        "project/.jp/latin.sh",
        "cat >/dev/null\nprintf 'caf\\351 log\\n' >&2\nprintf '{\"type\":\"success\",\"content\":\"caf\\351\"}'\n",
    );
    // Binary garbage, with a NUL and a clear-screen sequence, instead of
    // an outcome.
    ws.write(
        "project/.jp/binary.sh",
        "cat >/dev/null\nprintf '\\377\\376\\000\\033[2J'\n",
    );
    ws.write(
        "project/.jp/tools.toml",
        "[conversation.tools.latin]\ncommand = [\"sh\", \".jp/latin.sh\"]\npolicy.run = \"unattended\"\n\
         [conversation.tools.binary]\ncommand = [\"sh\", \".jp/binary.sh\"]\npolicy.run = \"unattended\"\n",
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Tool("toolu_1", "latin", "{}"),
                Item::Tool("toolu_2", "binary", "{}"),
            ],
            "tool_use",
            false,
        )),
        Reply::sse(anthropic(&[Item::Text("Ok.")], "end_turn", false)),
    ]);
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &["--cfg", "@.jp/tools.toml"],
        "go",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Ok.\n");
    let times = regex::Regex::new(r"(?m)^\S+Z +").unwrap();
    // The user is told that bytes were replaced, sees the rest, and sees
    // the garbage quoted with escapes (never raw).
    assert_eq!(
        times.replace_all(&run.stderr, ""),
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         Calling tool latin()\n  \
         unattended (policy.run is \"unattended\")\n\
         Calling tool binary()\n  \
         unattended (policy.run is \"unattended\")\n\
         WARN the tool wrote bytes that are not UTF-8 to stdout; they were replaced with U+FFFD tool=\"latin\"\n  \
         latin success: caf\u{fffd}\n  \
         binary error: tool `binary` wrote something other than an outcome to stdout: expected value at line 1 column 1; it starts with `\u{fffd}\u{fffd}\\0\\u{1b}[2J`\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n"
    );
    let sent = server.wait_for(2, Duration::from_secs(5))[1].json();
    // The model gets the same: lossy text, or an error that says why.
    assert_eq!(
        sent["messages"][2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "caf\u{fffd}", "is_error": false},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "tool `binary` wrote something other than an outcome to stdout: expected value at line 1 column 1; it starts with `\u{fffd}\u{fffd}\\0\\u{1b}[2J`", "is_error": true, "cache_control": {"type": "ephemeral"}},
        ]})
    );
}

/// A server that sends tool calls without ids (Ollama may): the ids jp
/// makes up are new to the conversation, so the call of the second
/// response runs like the first instead of being refused as a repeat.
#[test]
fn calls_without_ids_in_two_responses_both_run() {
    let ws = initialized();
    ws.write("project/.jp/tools.toml", &echo_tool("list_items", "listed"));
    let call = "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"list_items\",\"arguments\":{}}}]},\"done\":false}\n\
                {\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n";
    let server = TestServer::start(vec![
        Reply::ndjson(call),
        Reply::ndjson(call),
        Reply::ndjson(ollama(&[Item::Text("Both listed.")])),
    ]);
    let run = query(
        &ws,
        &server,
        "ollama/qwen3.5:9b",
        &["--cfg", "@.jp/tools.toml"],
        "List twice.",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Both listed.\n");
    let conversation = stored(&ws);
    assert_eq!(
        responses(&conversation),
        [
            ("success".to_owned(), "listed".to_owned()),
            ("success".to_owned(), "listed".to_owned())
        ]
    );
    let ids: Vec<&str> = conversation["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "tool_call_request")
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["jp_call_0", "jp_call_1"]);
    // The third request carries both calls under those ids.
    let sent = server.wait_for(3, Duration::from_secs(5))[2].json();
    let sent_ids: Vec<&str> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(sent_ids, ["jp_call_0", "jp_call_1"]);
}

/// A local provider with nothing listening says how to start it (issue 25
/// part 3).
#[test]
fn a_local_provider_that_is_not_running_says_how_to_start_it() {
    let ws = initialized();
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for (provider, base, path, hint) in [
        (
            "ollama",
            format!("http://127.0.0.1:{port}"),
            "/api/chat",
            "is Ollama running? Start it with `ollama serve` (and fetch the model with `ollama pull NAME`), or set providers.llm.ollama.base_url to where it listens",
        ),
        (
            "llamacpp",
            format!("http://127.0.0.1:{port}/v1"),
            "/chat/completions",
            "is llama.cpp's server running? Start it with `llama-server -m MODEL.gguf --port 8080`, or set providers.llm.llamacpp.base_url to where it listens",
        ),
    ] {
        let base_cfg = format!("providers.llm.{provider}.base_url={base}");
        let model = format!("{provider}/m");
        let run = ws.jp(&[
            "query", "--new", "--model", &model, "--cfg", &base_cfg, "hi",
        ]);
        assert_eq!(run.code, 6, "{run:?}");
        assert_eq!(
            hide_ids(&run.stderr),
            format!(
                "── jp ({provider}/m) ──\n\
                 error: {provider}: cannot reach {base}{path}: client error (Connect): tcp connect error: Connection refused (os error 111); {hint}\n\
                 the conversation keeps what arrived; `jp query` continues it (conversation <id>)\n"
            )
        );
    }
}

/// Runs `jp query MESSAGE...` on claude-haiku-4-5 against `server`, with
/// `stdin` piped to it.
fn query_piped(
    ws: &common::Workspace,
    server: &TestServer,
    message: &[&str],
    stdin: &[u8],
) -> common::Run {
    use std::io::Write as _;
    let base = format!("providers.llm.anthropic.base_url={}", server.url());
    let mut args = vec!["query", "--cfg", &base];
    args.extend_from_slice(message);
    let mut env = common::query::ENV.to_vec();
    env.push(("JP_CFG_ASSISTANT__MODEL__ID", "anthropic/claude-haiku-4-5"));
    let mut child = ws
        .command(&args, &env)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // A refused (too large) stdin is not read to its end: ignore EPIPE.
    let _ = input.write_all(stdin);
    drop(input);
    ws.run_of(child.wait_with_output().unwrap())
}

/// Text piped to `jp query` is the message, follows it in a fenced block,
/// or is all of it with `-`; more than 1 MiB or bytes that are not text
/// are refused before anything is sent (issue 25 part 2).
#[test]
fn piped_text_joins_the_message() {
    let ws = initialized();
    let server = TestServer::start(vec![
        Reply::sse(anthropic(&[Item::Text("A.")], "end_turn", false)),
        Reply::sse(anthropic(&[Item::Text("B.")], "end_turn", false)),
        Reply::sse(anthropic(&[Item::Text("C.")], "end_turn", false)),
    ]);
    let last_user = |n: usize| {
        let sent = server.wait_for(n, Duration::from_secs(5))[n - 1].json();
        let messages = sent["messages"].as_array().unwrap().clone();
        messages.last().unwrap()["content"][0]["text"].clone()
    };
    let run = query_piped(&ws, &server, &[], b"explain\n");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(last_user(1), json!("explain\n"));
    let run = query_piped(&ws, &server, &["explain", "this"], b"fn main() {}\n");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        last_user(2),
        json!("explain this\n\n```\nfn main() {}\n```")
    );
    let run = query_piped(&ws, &server, &["-"], b"the whole message");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(last_user(3), json!("the whole message"));

    let big = vec![b'a'; 2 * 1024 * 1024];
    let run = query_piped(&ws, &server, &["summarize"], &big);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: stdin holds more than 1 MiB; jp sends at most 1 MiB from a pipe (put the file in the workspace and ask the model to read it)\n"
    );
    let run = query_piped(&ws, &server, &["look"], b"\x7fELF\x02\x01\x01\0\0");
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: stdin is not text (a NUL byte at offset 7); jp sends only UTF-8 text from a pipe\n"
    );
    assert_eq!(server.requests().len(), 3, "nothing more was sent");
}
