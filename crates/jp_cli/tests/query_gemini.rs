//! The `google` provider (Gemini's `streamGenerateContent`) through the
//! real `jp` binary against the test server: a recorded round trip, and a
//! call declined while the response streams, which closes the stream.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::providers::{Item, gemini};
use common::query::{ENV, echo_tool, initialized, query, query_command, replay, responses, stored};
use jp_test_server::{Reply, Split, TestServer};
use serde_json::json;

/// The parameters of the recording's `run_me` tool (the model sent `bar`
/// as a list of strings).
const RUN_ME_PARAMETERS: &str = "[conversation.tools.run_me.parameters]\nfoo = { type = \"string\" }\nbar = { type = \"array\", items = { type = \"string\" } }\n";

#[test]
fn recorded_gemini_round_trip() {
    let ws = initialized();
    ws.write(
        "project/.jp/tools.toml",
        &(echo_tool("run_me", "working!") + RUN_ME_PARAMETERS),
    );
    let server = replay(
        "google_test_tool_call_stream.yml",
        &Split::Random { seed: 11, max: 17 },
    );
    let run = query(
        &ws,
        &server,
        "google/gemini-2.5-flash-lite",
        &["--cfg", "@.jp/tools.toml"],
        "Please run the tool, providing whatever arguments you want.",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.wait_for(2, Duration::from_secs(5));
    for request in &requests {
        assert_eq!(
            request.path,
            "/v1beta/models/gemini-2.5-flash-lite:streamGenerateContent?alt=sse"
        );
        assert_eq!(request.path_mismatch, None);
        assert_eq!(request.header("x-goog-api-key"), Some("test-key"));
    }
    // The call (with the id jp made: Gemini sent none) and its result, as
    // the second request sends them.
    let contents = requests[1].json()["contents"].clone();
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [{
            "functionCall": {"id": "jp_call_0", "name": "run_me", "args": {"bar": ["hello", "world"], "foo": "test"}},
            "thoughtSignature": "skip_thought_signature_validator",
        }]})
    );
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [{
            "functionResponse": {"id": "jp_call_0", "name": "run_me", "response": {"output": "working!"}},
        }]})
    );
    assert_eq!(
        responses(&stored(&ws)),
        [("success".to_owned(), "working!".to_owned())]
    );
    assert_eq!(
        run.stdout,
        "```json\n{\"run_me_response\": {\"content\": \"working!\"}}\n```\n"
    );
}

/// A call whose policy asks, without a terminal, is declined as soon as it
/// arrives; nothing else streams, so jp closes the stream: the long answer
/// the model goes on with is never sent (nor paid for). Gemini sends the
/// call whole, so the stream stops after it, its arguments read and shown
/// (jp once said it stopped before the arguments, which had arrived;
/// issue 34). The stopped response still counts: each chunk carries the
/// counts so far (jp once counted only responses that finished).
#[test]
fn a_declined_gemini_call_closes_the_stream() {
    let ws = initialized();
    ws.write("project/src/lib.rs", "pub fn main() {}\n");
    let rest = "More words the model writes after the call. ".repeat(1_000);
    let body = gemini(&[
        Item::Tool(
            "",
            "fs_modify_file",
            r#"{"path": "src/lib.rs", "patterns": [{"old": "main", "new": "hello"}]}"#,
        ),
        Item::Text(&rest),
    ]);
    let total = body.len();
    let server = TestServer::start(vec![
        Reply::sse(body)
            .split(Split::Every(8192))
            .pace(Duration::from_millis(2)),
        Reply::sse(gemini(&[Item::Text("Understood.")])),
    ]);
    let mut command = query_command(&ws, &server, "google/gemini-2.5-flash", &[], "rename main");
    command.env("RUST_LOG", "jp=debug");
    for (key, value) in ENV {
        command.env(key, value);
    }
    let run = ws.run_of(command.output().unwrap());
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(ws.read("project/src/lib.rs"), "pub fn main() {}\n");
    assert!(
        run.stderr
            .lines()
            .any(|line| line.contains("decided while streaming") && line.contains("mode=ask")),
        "{}",
        run.stderr
    );
    let chrome: String = run
        .stderr
        .lines()
        .filter(|line| !line.contains(" DEBUG ") && !line.contains(" INFO "))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(
        chrome,
        "── jp (google/gemini-2.5-flash) ──\n\
         Calling tool fs_modify_file(path: \"src/lib.rs\", patterns: [{\"old\":\"main\",\"new\":\"hello\"}])\n  \
         fs_modify_file: declined: policy.run is \"ask\", so jp must ask, and no terminal is available; run jp in a terminal to answer, or add a rule for calls like this one in a policy.run list that ends with { mode = \"ask\" } in conversation.tools.fs_modify_file (`jp policy check fs_modify_file` tries it)\n  \
         stopped the stream after fs_modify_file's call (63 B, whole)\n\
         ── jp (google/gemini-2.5-flash) ──\n\
         tokens: 2 responses · 20 in · 10 out · under $0.0001 · stream stopped after fs_modify_file's call; the rest of the response was never generated · context 0% of 1M\n"
    );
    assert_eq!(run.stdout, "Understood.\n");

    // The client hung up before a tenth of the response was sent.
    let requests = server.wait_for(2, Duration::from_secs(10));
    eprintln!(
        "{} of {total} response bytes sent",
        requests[0].body_bytes_sent
    );
    assert!(requests[0].client_disconnected, "the stream was not closed");
    assert!(
        requests[0].body_bytes_sent < total / 10,
        "{} of {total} bytes were sent",
        requests[0].body_bytes_sent
    );

    // What the model is told, in the next request.
    let told = "The call was not run: the user's policy requires confirmation and no one could \
                confirm it (jp is running without a terminal). jp stopped your response after \
                this call.";
    assert_eq!(
        responses(&stored(&ws)),
        [("declined".to_owned(), told.to_owned())]
    );
    let contents = requests[1].json()["contents"].clone();
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(
        contents[1]["parts"][0]["functionCall"]["name"],
        "fs_modify_file"
    );
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [{
            "functionResponse": {"id": "jp_call_0", "name": "fs_modify_file", "response": {"error": told}},
        }]})
    );
    assert_eq!(contents.as_array().map(Vec::len), Some(3), "{contents}");
}

/// Gemini sends a call whole, in one event, here with the response's end
/// and usage: when jp declines the call, the response has ended, so
/// nothing is stopped or saved, and both responses count. jp once said
/// "stopped the stream after 198.3 KB ... the rest was never generated",
/// to the user and the model, and counted one response (issue 34).
#[test]
fn a_call_declined_with_the_end_of_its_response_stops_nothing_and_counts() {
    let ws = initialized();
    let content = "x".repeat(200_000);
    let event = json!({
        "candidates": [{
            "content": {"parts": [{"functionCall": {"name": "fs_create_file", "args": {"path": "notes/big.txt", "content": content}}}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
    });
    let server = TestServer::start(vec![
        Reply::sse(format!("data: {event}\r\n\r\n")).split(Split::Every(8192)),
        Reply::sse(gemini(&[Item::Text("Understood.")])),
    ]);
    let run = query(&ws, &server, "google/gemini-2.5-flash", &[], "write it");
    assert_eq!(run.code, 5, "{run:?}");
    assert!(!ws.project().join("notes/big.txt").exists());
    let told = "The call was not run: the user's policy requires confirmation and no one could \
                confirm it (jp is running without a terminal).";
    assert_eq!(
        run.stderr,
        format!(
            "── jp (google/gemini-2.5-flash) ──\n\
             Calling tool fs_create_file(path: \"notes/big.txt\", content: \"{}…)\n  \
             fs_create_file: declined: policy.run[3] (catch-all) matched, so jp must ask, and no terminal is available; run jp in a terminal to answer, or allow calls like this one with a rule before policy.run[3] in conversation.tools.fs_create_file: {{ arg = \"/path\", const = \"notes/big.txt\", mode = \"unattended\" }}\n\
             ── jp (google/gemini-2.5-flash) ──\n\
             tokens: 2 responses · 20 in · 10 out · under $0.0001 · context 5% of 1M\n",
            "x".repeat(38)
        )
    );
    assert_eq!(run.stdout, "Understood.\n");
    assert_eq!(
        responses(&stored(&ws)),
        [("declined".to_owned(), told.to_owned())]
    );
    // The model is sent its call as it wrote it, whole.
    let requests = server.wait_for(2, Duration::from_secs(10));
    let contents = requests[1].json()["contents"].clone();
    assert_eq!(
        contents[1]["parts"][0]["functionCall"]["args"]["content"]
            .as_str()
            .map(str::len),
        Some(200_000)
    );
}
