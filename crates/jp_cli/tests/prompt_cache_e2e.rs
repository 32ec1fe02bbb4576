//! Prompt caching through the real `jp` binary (issue 23): the Anthropic
//! bodies the test server received carry `cache_control` breakpoints on
//! the stable prefix and on the last block of the history, never more
//! than four, and none with `providers.llm.anthropic.cache = false`; the
//! OpenAI (Responses API) and OpenRouter (Chat Completions) body of each
//! step of a tool loop extends the previous one byte for byte, so the
//! provider's automatic prefix cache hits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::providers::{Item, openai, openai_responses, text_reply, tool_reply};
use common::query::{initialized, query};
use jp_test_server::{Reply, TestServer};
use serde_json::{Value, json};

const EPHEMERAL: &str = r#"{"type":"ephemeral"}"#;

/// A loop of two `fs_create_file` calls (under `src/`, which runs
/// unattended) and an answer.
fn anthropic_loop() -> TestServer {
    TestServer::start(vec![
        tool_reply(
            "toolu_1",
            "fs_create_file",
            r#"{"path": "src/a.rs", "content": "fn a() {}\n"}"#,
        ),
        tool_reply(
            "toolu_2",
            "fs_create_file",
            r#"{"path": "src/b.rs", "content": "fn b() {}\n"}"#,
        ),
        text_reply("Created both."),
    ])
}

/// Where a body has breakpoints: `tools[i]`, `system[i]` and
/// `messages[m][b]`.
fn breakpoints(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let marked = |item: &Value| item.get("cache_control").map(Value::to_string);
    for (i, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        if let Some(mark) = marked(tool) {
            out.push(format!("tools[{i}] {mark}"));
        }
    }
    for (i, block) in body["system"].as_array().into_iter().flatten().enumerate() {
        if let Some(mark) = marked(block) {
            out.push(format!("system[{i}] {mark}"));
        }
    }
    for (m, message) in body["messages"].as_array().unwrap().iter().enumerate() {
        for (b, block) in message["content"].as_array().unwrap().iter().enumerate() {
            if let Some(mark) = marked(block) {
                out.push(format!("messages[{m}][{b}] {mark}"));
            }
        }
    }
    out
}

/// The breakpoints of the three requests of [`anthropic_loop`], run with
/// `extra` arguments: the bodies and their breakpoints.
fn loop_breakpoints(extra: &[&str]) -> (Vec<Value>, Vec<Vec<String>>) {
    let ws = initialized();
    let server = anthropic_loop();
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        extra,
        "make two",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.wait_for(3, Duration::from_secs(5));
    let bodies: Vec<Value> = requests.iter().map(|r| r.json()).collect();
    for body in &bodies {
        assert!(breakpoints(body).len() <= 4);
        let messages = body["messages"].as_array().unwrap();
        let last = messages.last().unwrap()["content"].as_array().unwrap();
        assert_eq!(
            last.last().unwrap()["cache_control"],
            json!({"type": "ephemeral"})
        );
    }
    let marks = bodies.iter().map(breakpoints).collect();
    (bodies, marks)
}

/// Step 1: the prefix and the user's message. Step 2: also the result.
/// Step 3: the previous request's end (result 1) and the last result.
fn expected(prefix: &str) -> Vec<Vec<String>> {
    let at = |m: usize| format!("messages[{m}][0] {EPHEMERAL}");
    let prefix = format!("{prefix} {EPHEMERAL}");
    vec![
        vec![prefix.clone(), at(0)],
        vec![prefix.clone(), at(0), at(2)],
        vec![prefix, at(2), at(4)],
    ]
}

#[test]
fn anthropic_requests_mark_the_system_prompt_and_the_last_history_block() {
    let (bodies, marks) = loop_breakpoints(&[]);
    assert_eq!(marks, expected("system[0]"));
    // The default system prompt, as one text block.
    for body in &bodies {
        let system = body["system"].as_array().unwrap();
        assert_eq!(system.len(), 1);
        assert_eq!(system[0]["type"], "text");
        assert!(
            system[0]["text"]
                .as_str()
                .unwrap()
                .starts_with("You are jp")
        );
    }
    assert_eq!(
        bodies[2]["messages"][4],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "created src/b.rs (1 line)", "is_error": false, "cache_control": {"type": "ephemeral"}}]})
    );
}

#[test]
fn without_a_system_prompt_the_last_tool_is_marked() {
    let (bodies, marks) = loop_breakpoints(&["--cfg", "assistant.system_prompt="]);
    assert_eq!(bodies[0].get("system"), None);
    let last_tool = bodies[0]["tools"].as_array().unwrap().len() - 1;
    assert_eq!(marks, expected(&format!("tools[{last_tool}]")));
}

#[test]
fn a_system_prompt_is_sent_as_one_marked_block() {
    let ws = initialized();
    let server = TestServer::start(vec![text_reply("Hi.")]);
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &["--cfg", "assistant.system_prompt=Be brief."],
        "hello",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let body = server.wait_for(1, Duration::from_secs(5))[0].json();
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        breakpoints(&body),
        [
            format!("system[0] {EPHEMERAL}"),
            format!("messages[0][0] {EPHEMERAL}")
        ]
    );
}

#[test]
fn cache_false_sends_no_breakpoint() {
    let ws = initialized();
    let server = anthropic_loop();
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &[
            "--cfg",
            "providers.llm.anthropic.cache=false",
            "--cfg",
            "assistant.system_prompt=Be brief.",
        ],
        "make two",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.wait_for(3, Duration::from_secs(5));
    for request in &requests {
        let text = String::from_utf8(request.body.clone()).unwrap();
        assert!(!text.contains("cache_control"), "{text}");
        assert_eq!(request.json()["system"], "Be brief.");
    }
    assert_eq!(
        requests[2].json()["messages"][4],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "created src/b.rs (1 line)", "is_error": false}]})
    );
}

/// The bodies of a loop of two `fs_create_file` calls and an answer,
/// through `model`, each reply made by `reply` from its items.
fn loop_bodies(model: &str, reply: fn(&[Item<'_>]) -> Reply) -> Vec<String> {
    let ws = initialized();
    let server = TestServer::start(vec![
        reply(&[Item::Tool(
            "call_1",
            "fs_create_file",
            r#"{"path": "src/a.rs", "content": "fn a() {}\n"}"#,
        )]),
        reply(&[Item::Tool(
            "call_2",
            "fs_create_file",
            r#"{"path": "src/b.rs", "content": "fn b() {}\n"}"#,
        )]),
        reply(&[Item::Text("Created both.")]),
    ]);
    let run = query(&ws, &server, model, &[], "make two");
    assert_eq!(run.code, 0, "{run:?}");
    server
        .wait_for(3, Duration::from_secs(5))
        .iter()
        .map(|r| String::from_utf8(r.body.clone()).unwrap())
        .collect()
}

/// Each body is the one before with items added at the end of its `list`:
/// every byte before and after them the same (the tools, sent after it,
/// unchanged).
fn assert_each_extends_the_previous(bodies: &[String], list: &str) {
    assert_eq!(bodies.len(), 3);
    for pair in bodies.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        let common = before
            .bytes()
            .zip(after.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        assert!(before[..common].contains(&format!("\"{list}\":[")));
        let tail = &before[common..];
        assert!(tail.starts_with("],\"tools\":["), "{tail:.60}");
        assert_eq!(&after[common..=common], ",");
        assert!(after.ends_with(tail));
    }
}

/// OpenAI (the Responses API) caches by prefix on its own: each step's
/// body extends the previous one byte for byte.
#[test]
fn openai_bodies_extend_the_previous_step_byte_for_byte() {
    let bodies = loop_bodies("openai/gpt-4.1", |items| {
        Reply::sse(openai_responses(items))
    });
    assert_each_extends_the_previous(&bodies, "input");
}

/// So does OpenRouter (Chat Completions).
#[test]
fn openrouter_bodies_extend_the_previous_step_byte_for_byte() {
    let bodies = loop_bodies("openrouter/anthropic/claude-opus-5", |items| {
        let finish = if matches!(items[0], Item::Tool(..)) {
            "tool_calls"
        } else {
            "stop"
        };
        Reply::sse(openai(items, finish))
    });
    assert_each_extends_the_previous(&bodies, "messages");
}
