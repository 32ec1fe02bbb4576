//! The `openai` provider through the real `jp` binary: it speaks OpenAI's
//! Responses API (issue 23, part 4), sending the whole conversation each
//! time as input items, and its calls are decided while they stream like
//! any other provider's: a declined one closes the stream.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::providers::{Item, openai_responses};
use common::query::{ENV, initialized, query, query_command, replay, responses, stored};
use jp_test_server::{Reply, Split, TestServer};
use serde_json::{Value, json};

/// The parameters of the recording's `run_me` tool.
const RUN_ME_PARAMETERS: &str = "[conversation.tools.run_me.parameters]\nfoo = { type = \"string\" }\nbar = { type = \"string\" }\n";

#[test]
fn recorded_responses_round_trip() {
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
        "openai_test_tool_call_stream.yml",
        &Split::Random { seed: 23, max: 11 },
    );
    let prompt = "Please run the tool, providing whatever arguments you want.";
    let run = query(
        &ws,
        &server,
        "openai/gpt-5-mini",
        &["--cfg", "@.jp/tools.toml"],
        prompt,
    );
    assert_eq!(run.code, 0, "{run:?}");
    let request: Value = serde_json::from_str(&ws.read("project/.jp/request.json")).unwrap();
    assert_eq!(request["tool"]["name"], "run_me");
    assert_eq!(
        request["tool"]["arguments"],
        json!({"foo": "hello", "bar": "foo"})
    );
    assert!(
        run.stdout
            .ends_with("tell me which values to use (or say \"choose for me\") and I'll run it.\n"),
        "{}",
        run.stdout
    );

    let requests = server.wait_for(2, Duration::from_secs(5));
    for sent in &requests {
        assert_eq!(sent.path, "/v1/responses");
        assert_eq!(sent.path_mismatch, None);
        assert_eq!(sent.header("authorization"), Some("Bearer test-key"));
    }
    let first = requests[0].json();
    assert_eq!(first["model"], "gpt-5-mini");
    assert_eq!(first["store"], false);
    assert_eq!(first["stream"], true);
    // gpt-5-mini reasons: jp asks for summaries of its reasoning.
    assert_eq!(first["reasoning"], json!({"summary": "auto"}));
    // Flat function tools, not nested as in Chat Completions.
    let run_me = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "run_me")
        .unwrap();
    assert_eq!(run_me["type"], "function");
    assert_eq!(run_me["strict"], false);
    assert_eq!(run_me.get("function"), None);
    assert_eq!(
        run_me["parameters"]["properties"],
        json!({"foo": {"type": "string"}, "bar": {"type": "string"}})
    );
    // Stateless: the second request repeats the conversation, with the call
    // and its result as items, and never points at the first response.
    let second = requests[1].json();
    assert_eq!(second.get("previous_response_id"), None);
    assert_eq!(
        second["input"],
        json!([
            {"role": "user", "content": prompt},
            {"type": "function_call", "call_id": "call_AujnMFG9aQStXpHVXQ5Gwfgi", "name": "run_me", "arguments": "{\"foo\":\"hello\",\"bar\":\"foo\"}"},
            {"type": "function_call_output", "call_id": "call_AujnMFG9aQStXpHVXQ5Gwfgi", "output": "working!"},
        ])
    );
}

/// 200 KB and more of file content: 5,000 lines.
fn big_content() -> String {
    (1..=5_000)
        .map(|n| format!("line {n:05} of a file the model writes in one go\n"))
        .collect()
}

#[test]
fn a_call_declined_while_it_streams_closes_the_stream() {
    let ws = initialized();
    let content = big_content();
    let args = json!({ "path": ".env", "content": content }).to_string();
    let body = openai_responses(&[
        Item::Text("Writing it."),
        Item::Tool("call_env", "fs_create_file", &args),
    ]);
    let total = body.len();
    // Paced so that a loaded machine still closes the stream within the
    // bound below (at 2 ms a piece, one run in twenty under load read a
    // piece more than 5%).
    let server = TestServer::start(vec![
        Reply::sse(body)
            .split(Split::Every(8192))
            .pace(Duration::from_millis(10)),
        Reply::sse(openai_responses(&[Item::Text("Understood.")])),
    ]);
    let mut command = query_command(&ws, &server, "openai/gpt-5", &[], "write the file");
    command.env("RUST_LOG", "jp=debug");
    for (key, value) in ENV {
        command.env(key, value);
    }
    let run = ws.run_of(command.output().unwrap());
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(run.stdout, "Writing it.\nUnderstood.\n");

    // Decided (ask, declined: no terminal) as soon as `path` arrived.
    let decided: Vec<(String, usize)> = run
        .stderr
        .lines()
        .filter(|line| line.contains("decided while streaming"))
        .map(|line| {
            let field = |name: &str| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(&format!("{name}=")))
                    .unwrap()
                    .to_owned()
            };
            (field("mode"), field("bytes").parse().unwrap())
        })
        .collect();
    assert_eq!(decided.len(), 1, "{}", run.stderr);
    assert_eq!(decided[0].0, "ask");
    assert!(decided[0].1 < args.len() / 100, "{decided:?}");
    // The client hung up before 5% of the response was sent.
    let requests = server.wait_for(2, Duration::from_secs(10));
    assert!(requests[0].client_disconnected, "the stream was not closed");
    assert!(
        requests[0].body_bytes_sent < total / 20,
        "{} of {total} bytes were sent",
        requests[0].body_bytes_sent
    );
    assert!(!ws.project().join(".env").exists());
    let bytes = decided[0].1;
    assert!(
        run.stderr.contains(&format!(
            "  stopped the stream after {bytes} B of fs_create_file's arguments\n"
        )),
        "{}",
        run.stderr
    );

    // The model is told, as a `function_call_output` for its call.
    let (status, told) = responses(&stored(&ws)).remove(0);
    assert_eq!(status, "declined");
    let input = requests[1].json()["input"].clone();
    let items = input.as_array().unwrap();
    assert_eq!(
        items[0],
        json!({"role": "user", "content": "write the file"})
    );
    assert_eq!(
        items[1],
        json!({"role": "assistant", "content": "Writing it."})
    );
    assert_eq!(items[2]["type"], "function_call");
    assert_eq!(items[2]["call_id"], "call_env");
    assert_eq!(
        items[3],
        json!({"type": "function_call_output", "call_id": "call_env", "output": told})
    );
    assert_eq!(items.len(), 4);
}

/// A model that does not reason is not asked for summaries (the API
/// refuses `reasoning` for it); config can say a model reasons.
#[test]
fn reasoning_summaries_are_asked_of_reasoning_models_only() {
    let ws = initialized();
    ws.write(
        "project/.jp/models.toml",
        "[providers.llm.openai.models.my-reasoner]\nreasoning = true\n",
    );
    let server = TestServer::start(vec![
        Reply::sse(openai_responses(&[Item::Text("One.")])),
        Reply::sse(openai_responses(&[Item::Text("Two.")])),
    ]);
    let run = query(&ws, &server, "openai/gpt-4.1", &[], "one");
    assert_eq!(run.code, 0, "{run:?}");
    let run = query(
        &ws,
        &server,
        "openai/my-reasoner",
        &["--cfg", "@.jp/models.toml"],
        "two",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let sent = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(sent[0].json()["model"], "gpt-4.1");
    assert_eq!(sent[0].json().get("reasoning"), None);
    assert_eq!(sent[1].json()["model"], "my-reasoner");
    assert_eq!(sent[1].json()["reasoning"], json!({"summary": "auto"}));
}
