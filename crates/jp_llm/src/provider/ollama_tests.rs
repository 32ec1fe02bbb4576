//! Tests of the Ollama request body and decoder: recorded NDJSON streams fed
//! at many split patterns, hand-written edge cases, and the exact JSON sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_conversation::{FlushedEvent, ToolCallRequest};
use std::sync::Arc;

use serde_json::{Map, json};

use super::*;
use crate::decode::tests::{build, decode, fixture_bodies, parts};
use crate::provider::{Provider, ToolCall, ToolDefinition, ToolResult};

const TOOL_CALL: &str = "ollama_test_tool_call_stream.yml";

fn part(index: usize, part: EventPart) -> StreamEvent {
    StreamEvent::Part { index, part }
}

fn start(index: usize, id: &str, name: &str) -> StreamEvent {
    part(
        index,
        EventPart::ToolCall(ToolCallPart::Start {
            id: id.into(),
            name: name.into(),
        }),
    )
}

fn chunk(index: usize, text: &str) -> StreamEvent {
    part(
        index,
        EventPart::ToolCall(ToolCallPart::ArgumentChunk(text.into())),
    )
}

fn flush(index: usize) -> StreamEvent {
    StreamEvent::Flush { index }
}

fn usage(input: u64, output: u64) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        cache_read_tokens: None,
        cache_write_tokens: None,
    })
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn decode_ok(body: &[u8]) -> Vec<StreamEvent> {
    let (events, error) = decode(Decoder::new, body);
    assert_eq!(error, None);
    events
}

#[test]
fn recorded_tool_call() {
    let events = decode_ok(&fixture_bodies(TOOL_CALL)[0]);
    assert_eq!(
        events,
        vec![
            start(2, "call_7bvei3gw", "run_me"),
            chunk(2, "{}"),
            flush(2),
            usage(253, 15),
            StreamEvent::Finished(FinishReason::EndTurn),
        ]
    );
    assert_eq!(
        build(&events),
        vec![FlushedEvent::ToolCallRequest(ToolCallRequest::new(
            "call_7bvei3gw",
            "run_me",
            Map::new()
        ))]
    );
}

#[test]
fn recorded_answer() {
    let texts = [
        "The",
        " tool",
        " ran",
        " successfully",
        "!",
        " It",
        " output",
        ":",
        " `",
        "working",
        "!",
        "`.",
        " \n\nIs",
        " there",
        " a",
        " specific",
        " task",
        " or",
        " calculation",
        " you",
        "'d",
        " like",
        " me",
        " to",
        " try",
        " next",
        "?",
        " \u{1f60a}",
    ];
    let mut expected = parts(0, &texts, EventPart::Message);
    expected.extend([
        flush(0),
        usage(53, 31),
        StreamEvent::Finished(FinishReason::EndTurn),
    ]);
    let events = decode_ok(&fixture_bodies(TOOL_CALL)[1]);
    assert_eq!(events, expected);
    assert_eq!(build(&events), vec![FlushedEvent::Message(texts.concat())]);
}

#[test]
fn thinking_parallel_calls_and_a_last_line_without_newline() {
    let body = concat!(
        r#"{"message":{"role":"assistant","content":"","thinking":"Two files."},"done":false}"#,
        "\n",
        r#"{"message":{"role":"assistant","content":"Reading both."},"done":false}"#,
        "\n",
        r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"fs_read_file","arguments":{"path":"b.rs","lines":[1,2]}}},{"function":{"name":"fs_list_files"}}]},"done":false}"#,
        "\n",
        r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"length","eval_count":3}"#,
    );
    let events = decode_ok(body.as_bytes());
    assert_eq!(
        events,
        vec![
            part(1, EventPart::Reasoning("Two files.".into())),
            part(0, EventPart::Message("Reading both.".into())),
            start(2, "jp_call_0", "fs_read_file"),
            chunk(2, "{\"path\":\"b.rs\",\"lines\":[1,2]}"),
            flush(2),
            start(3, "jp_call_1", "fs_list_files"),
            flush(3),
            flush(0),
            flush(1),
            StreamEvent::Usage(Usage {
                input_tokens: None,
                output_tokens: Some(3),
                cache_read_tokens: None,
                cache_write_tokens: None,
            }),
            StreamEvent::Finished(FinishReason::MaxTokens),
        ]
    );
    assert_eq!(
        build(&events),
        vec![
            FlushedEvent::ToolCallRequest(ToolCallRequest::new(
                "jp_call_0",
                "fs_read_file",
                object(json!({"path": "b.rs", "lines": [1, 2]}))
            )),
            FlushedEvent::ToolCallRequest(ToolCallRequest::new(
                "jp_call_1",
                "fs_list_files",
                Map::new()
            )),
            FlushedEvent::Message("Reading both.".into()),
            FlushedEvent::Reasoning("Two files.".into()),
        ]
    );
}

/// Issue 14: arguments go to the parser as the text that arrived, never
/// through a `Value` (which would cost a whole copy and would quietly keep
/// the last of two duplicate keys, where jp refuses the call). Arguments a
/// server sends as a JSON string are that string's text.
#[test]
fn arguments_reach_the_parser_as_sent() {
    let body = concat!(
        r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"w","arguments":{ "path" : "a.rs", "path":"../x" }}},{"function":{"name":"r","arguments":"{\"path\":\"b.rs\"}"}},{"function":{"name":"n","arguments":null}}]},"done":false}"#,
        "\n",
        r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}"#,
        "\n",
    );
    let events = decode_ok(body.as_bytes());
    assert_eq!(
        events[..8],
        [
            start(2, "jp_call_0", "w"),
            chunk(2, r#"{ "path" : "a.rs", "path":"../x" }"#),
            flush(2),
            start(3, "jp_call_1", "r"),
            chunk(3, r#"{"path":"b.rs"}"#),
            flush(3),
            start(4, "jp_call_2", "n"),
            flush(4),
        ]
    );
    let built = build(&events);
    let FlushedEvent::ToolCallRequest(duplicate) = &built[0] else {
        panic!("{built:?}")
    };
    assert_eq!(
        duplicate.arguments().unwrap_err().to_string(),
        "duplicate key `path` at /path: arguments with a repeated key are refused because its meaning is ambiguous"
    );
}

#[test]
fn error_line_after_text() {
    let body = concat!(
        r#"{"message":{"role":"assistant","content":"Hi"},"done":false}"#,
        "\n",
        r#"{"error":"model runner has unexpectedly stopped"}"#,
        "\n",
    );
    assert_eq!(
        decode(Decoder::new, body.as_bytes()),
        (
            vec![part(0, EventPart::Message("Hi".into()))],
            Some(ProviderError::Api {
                provider: "ollama".into(),
                kind: "error".into(),
                message: "model runner has unexpectedly stopped".into(),
            })
        )
    );
}

#[test]
fn a_body_without_done_is_a_disconnection() {
    let body = &fixture_bodies(TOOL_CALL)[1];
    let text = std::str::from_utf8(body).unwrap();
    // Cut after a whole line, and in the middle of the next one.
    let whole_lines = text
        .find(r#"{"model":"qwen3.5:9b","created_at":"2026-03-06T14:53:00.151291Z""#)
        .unwrap();
    for (cut, message) in [
        (
            whole_lines,
            "the response ended before its `done: true` line",
        ),
        (
            whole_lines + 20,
            "the response ended in the middle of a line",
        ),
    ] {
        let (events, error) = decode(Decoder::new, &body[..cut]);
        assert_eq!(events, vec![part(0, EventPart::Message("The".into()))]);
        assert_eq!(
            error,
            Some(ProviderError::Disconnected {
                provider: "ollama".into(),
                message: message.into(),
            })
        );
    }
}

#[test]
fn invalid_json_names_the_line_and_shows_it() {
    let body = b"{\"message\":{\"content\":\"a\"},\"done\":false}\n\n{\"message\":{\"content\":\"b\"},\"done\":fals}\n";
    let (events, error) = decode(Decoder::new, body);
    assert_eq!(events, vec![part(0, EventPart::Message("a".into()))]);
    assert_eq!(
        error.unwrap().to_string(),
        "ollama: unreadable response: line 3: \
         expected ident at line 1 column 39: `{\"message\":{\"content\":\"b\"},\"done\":fals}`"
    );
}

#[test]
fn request_body_with_everything() {
    let request = ChatRequest {
        model: "qwen3.5:9b".into(),
        system: Some("Be brief.".into()),
        messages: vec![
            Message::User("Run it.".into()),
            Message::Assistant {
                reasoning: Some("not sent".into()),
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "call_7bvei3gw".into(),
                    name: "run_me".into(),
                    arguments: Arc::new(json!({"foo": "bar"})),
                }],
            },
            Message::ToolResults(vec![
                ToolResult {
                    id: "call_7bvei3gw".into(),
                    content: "working!".into(),
                    is_error: false,
                },
                ToolResult {
                    id: "unknown".into(),
                    content: "no such call".into(),
                    is_error: true,
                },
            ]),
            Message::Assistant {
                reasoning: None,
                text: String::new(),
                tool_calls: vec![],
            },
        ],
        tools: vec![ToolDefinition {
            name: "run_me".into(),
            description: None,
            parameters: json!({"type": "object", "properties": {"foo": {"type": "string"}}}),
        }],
        max_tokens: 512,
        temperature: Some(0.0),
        top_p: None,
    };
    assert_eq!(
        body_text(&request_body(&request)),
        json!({
            "model": "qwen3.5:9b",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Run it."},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_7bvei3gw", "function": {"name": "run_me", "arguments": {"foo": "bar"}}},
                ]},
                {"role": "tool", "content": "working!", "tool_name": "run_me",
                 "tool_call_id": "call_7bvei3gw"},
                {"role": "tool", "content": "no such call", "tool_call_id": "unknown"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "run_me",
                "parameters": {"type": "object", "properties": {"foo": {"type": "string"}}},
            }}],
            "options": {"num_predict": 512, "temperature": 0.0},
            "stream": true,
        })
        .to_string()
    );
}

#[test]
fn provider_basics() {
    let provider = Ollama::new("http://localhost:11434/", None);
    assert_eq!(provider.name(), "ollama");
    assert_eq!(
        format!("{provider:?}"),
        "Ollama { base_url: \"http://localhost:11434\", api_key: None, \
         retry: RetryPolicy { max_attempts: 5, base_delay: 1s, max_delay: 30s } }"
    );
}

/// The exact JSON text of a request body.
fn body_text(body: &impl serde::Serialize) -> String {
    serde_json::to_string(body).unwrap()
}
