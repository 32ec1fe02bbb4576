//! Tests of the Responses request body and decoder: recorded OpenAI streams
//! (jp's upstream recording and vercel/ai's, see
//! `tests/data/openai_responses/README.md`) fed at many split patterns,
//! hand-written edge cases, and the exact JSON sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use jp_conversation::{FlushedEvent, ToolCallRequest};
use serde_json::{Map, json};

use super::*;
use crate::decode::tests::{build, decode, fixture_bodies, parts};
use crate::provider::{Provider, ToolCall, ToolResult};

const UPSTREAM: &str = "openai_test_tool_call_stream.yml";

fn part(index: usize, part: EventPart) -> StreamEvent {
    StreamEvent::Part { index, part }
}

fn text(index: usize, text: &str) -> StreamEvent {
    part(index, EventPart::Message(text.into()))
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

fn chunks(index: usize, texts: &[&str]) -> Vec<StreamEvent> {
    texts.iter().map(|text| chunk(index, text)).collect()
}

fn flush(index: usize) -> StreamEvent {
    StreamEvent::Flush { index }
}

fn usage(input: u64, output: u64, cached: u64) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        cache_read_tokens: Some(cached),
        cache_write_tokens: None,
    })
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn call(id: &str, name: &str, arguments: Value) -> FlushedEvent {
    FlushedEvent::ToolCallRequest(ToolCallRequest::new(id, name, object(arguments)))
}

fn decode_ok(body: &[u8]) -> Vec<StreamEvent> {
    let (events, error) = decode(Decoder::new, body);
    assert_eq!(error, None);
    events
}

/// A recording of `tests/data/openai_responses/` as the bytes OpenAI sends:
/// each line of `data` JSON as an event named by its `type`.
fn recording(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/data/openai_responses/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    sse(&text.lines().collect::<Vec<_>>())
}

/// A body of events named by their `type`.
fn sse(events: &[&str]) -> Vec<u8> {
    events
        .iter()
        .map(|data| {
            let kind = serde_json::from_str::<Value>(data).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned();
            format!("event: {kind}\ndata: {data}\n\n")
        })
        .collect::<String>()
        .into_bytes()
}

#[test]
fn recorded_upstream_tool_call() {
    let id = "call_AujnMFG9aQStXpHVXQ5Gwfgi";
    let events = decode_ok(&fixture_bodies(UPSTREAM)[0]);
    // The reasoning item has no summary: nothing at index 0.
    let mut expected = vec![start(1, id, "run_me")];
    expected.extend(chunks(
        1,
        &[
            "{\"", "foo", "\":\"", "hello", "\",\"", "bar", "\":\"", "foo", "\"}",
        ],
    ));
    expected.extend([
        flush(1),
        usage(72, 36, 0),
        StreamEvent::Finished(FinishReason::ToolUse),
    ]);
    assert_eq!(events, expected);
    assert_eq!(
        build(&events),
        vec![call(id, "run_me", json!({"foo": "hello", "bar": "foo"}))]
    );
}

#[test]
fn recorded_upstream_answer_to_the_tool_result() {
    let events = decode_ok(&fixture_bodies(UPSTREAM)[1]);
    let answer = "I ran the tool with the arguments {\"foo\":\"hello\", \"bar\":\"foo\"}. \
                  The tool responded: \"working!\"\n\nIf you want me to run it again with \
                  different arguments, tell me which values to use (or say \"choose for me\") \
                  and I'll run it.";
    let (last, body) = events.split_last().unwrap();
    assert_eq!(last, &StreamEvent::Finished(FinishReason::EndTurn));
    let (usage_event, body) = body.split_last().unwrap();
    assert_eq!(usage_event, &usage(49, 74, 0));
    let (flushed, texts) = body.split_last().unwrap();
    assert_eq!(flushed, &flush(1));
    assert!(
        texts.iter().all(|event| matches!(
            event,
            StreamEvent::Part {
                index: 1,
                part: EventPart::Message(_)
            }
        )),
        "{texts:?}"
    );
    assert_eq!(texts.len(), 56, "one part per recorded delta");
    assert_eq!(build(&events), vec![FlushedEvent::Message(answer.into())]);
}

#[test]
fn the_request_sends_the_upstream_history_as_input_items() {
    // The second request of the upstream recording, as jp sends it: the
    // call and its result as `function_call` and `function_call_output`.
    let request = ChatRequest {
        model: "gpt-5-mini".into(),
        system: None,
        messages: vec![
            Message::User("Please run the tool, providing whatever arguments you want.".into()),
            Message::Assistant {
                reasoning: None,
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "call_AujnMFG9aQStXpHVXQ5Gwfgi".into(),
                    name: "run_me".into(),
                    arguments: Arc::new(json!({"foo": "hello", "bar": "foo"})),
                }],
            },
            Message::ToolResults(vec![ToolResult {
                id: "call_AujnMFG9aQStXpHVXQ5Gwfgi".into(),
                content: "working!".into(),
                is_error: false,
            }]),
        ],
        tools: vec![],
        max_tokens: 8192,
        temperature: None,
        top_p: None,
    };
    assert_eq!(
        body_text(&request_body(&request)),
        json!({
            "model": "gpt-5-mini",
            "input": [
                {"role": "user", "content": "Please run the tool, providing whatever arguments you want."},
                {"type": "function_call", "call_id": "call_AujnMFG9aQStXpHVXQ5Gwfgi", "name": "run_me", "arguments": "{\"foo\":\"hello\",\"bar\":\"foo\"}"},
                {"type": "function_call_output", "call_id": "call_AujnMFG9aQStXpHVXQ5Gwfgi", "output": "working!"},
            ],
            "max_output_tokens": 8192,
            "store": false,
            "stream": true,
        })
        .to_string()
    );
}

#[test]
fn recorded_gpt_5_1_tool_call() {
    let id = "call_2FQdm3Br7Qb35YUBSkDR7kue";
    let events = decode_ok(&recording("issue-19493-gpt-5.1-tool-call.chunks.txt"));
    let mut expected = vec![start(0, id, "get_weather")];
    expected.extend(chunks(0, &["{\"", "city", "\":\"", "Be", "ijing", "\"}"]));
    expected.extend([
        flush(0),
        usage(45, 25, 0),
        StreamEvent::Finished(FinishReason::ToolUse),
    ]);
    assert_eq!(events, expected);
    assert_eq!(
        build(&events),
        vec![call(id, "get_weather", json!({"city": "Beijing"}))]
    );
}

#[test]
fn recorded_reasoning_summary_then_tool_call() {
    let id = "call_AB6AaRZ1FYZB2RwS6A5vbdqn";
    let summary = [
        "**Calcul",
        "ating",
        " step",
        "-by",
        "-step",
        " using",
        " calculator",
        "**\n\nI'll",
        " compute",
        " 12",
        " plus",
        " 7",
        ",",
        " then",
        " multiply",
        " the",
        " result",
        " by",
        " 3",
        ",",
        " and",
        " finally",
        " multiply",
        " that",
        " by",
        " 10",
        ",",
        " reporting",
        " the",
        " final",
        " product",
        ".",
    ];
    let events = decode_ok(&recording(
        "openai-reasoning-encrypted-content.1.first-response.chunks.txt",
    ));
    // The summary is flushed when its item is done, before the call starts.
    let mut expected = parts(0, &summary, EventPart::Reasoning);
    expected.push(flush(0));
    expected.push(start(1, id, "calculator"));
    expected.extend(chunks(
        1,
        &[
            "{\"", "a", "\":", "12", ",\"", "b", "\":", "7", ",\"", "op", "\":\"", "add", "\"}",
        ],
    ));
    expected.extend([
        flush(1),
        usage(134, 28, 0),
        StreamEvent::Finished(FinishReason::ToolUse),
    ]);
    assert_eq!(events, expected);
    assert_eq!(
        build(&events),
        vec![
            FlushedEvent::Reasoning(
                "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then \
                 multiply the result by 3, and finally multiply that by 10, reporting the final \
                 product."
                    .into()
            ),
            call(id, "calculator", json!({"a": 12, "b": 7, "op": "add"})),
        ]
    );
}

#[test]
fn recorded_error_event_is_the_error() {
    let (events, error) = decode(Decoder::new, &recording("openai-error.1.chunks.txt"));
    assert_eq!(events, vec![]);
    assert_eq!(
        error,
        Some(ProviderError::Api {
            provider: "openai".into(),
            kind: "insufficient_quota".into(),
            message: "You exceeded your current quota, please check your plan and billing \
                      details. For more information on this error, read the docs: \
                      https://platform.openai.com/docs/guides/error-codes/api-errors."
                .into(),
        })
    );
}

/// Two calls in one response (`gpt-4o`, vercel/ai's test of streamed tool
/// calls): each is flushed when its item is done, and its id is the one
/// its `response.output_item.added` gave (vercel/ai's edit of the
/// recording gives the `.done` items other `call_id`s, and zero usage).
#[test]
fn recorded_two_calls_in_one_response() {
    let first = "call_6KxSghkb4MVnunFH2TxPErLP";
    let second = "call_Dg6WUmFHNeR5JxX1s53s1G4b";
    let events = decode_ok(&recording("vercel-ai-test-streaming-tool-calls.chunks.txt"));
    let mut expected = vec![
        start(0, first, "currentLocation"),
        chunk(0, "{}"),
        flush(0),
        start(1, second, "weather"),
    ];
    expected.extend(chunks(1, &["{", "\"location", "\":", "\"Rome", "\"}"]));
    expected.extend([
        flush(1),
        usage(0, 0, 0),
        StreamEvent::Finished(FinishReason::ToolUse),
    ]);
    assert_eq!(events, expected);
    assert_eq!(
        build(&events),
        vec![
            call(first, "currentLocation", json!({})),
            call(second, "weather", json!({"location": "Rome"})),
        ]
    );
}

/// A text cut by `max_output_tokens` (`gpt-4o`, vercel/ai's test of an
/// incomplete response): the message item is done `incomplete`, so it
/// stays open until `response.incomplete` flushes it and ends the turn
/// with `MaxTokens`.
#[test]
fn recorded_text_cut_by_max_output_tokens() {
    let events = decode_ok(&recording("vercel-ai-test-incomplete-response.chunks.txt"));
    assert_eq!(
        events,
        vec![
            text(0, "Hello,"),
            flush(0),
            usage(0, 0, 0),
            StreamEvent::Finished(FinishReason::MaxTokens),
        ]
    );
    assert_eq!(build(&events), vec![FlushedEvent::Message("Hello,".into())]);
}

#[test]
fn parallel_calls_are_flushed_as_each_completes() {
    let body = sse(&[
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}"#,
        r#"{"type":"response.output_text.delta","output_index":0,"item_id":"msg_1","content_index":0,"delta":"Both."}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_1","status":"completed"}}"#,
        r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_a","name":"list","arguments":""}}"#,
        r#"{"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","id":"fc_2","call_id":"call_b","name":"search","arguments":""}}"#,
        r#"{"type":"response.function_call_arguments.delta","output_index":2,"item_id":"fc_2","delta":"{\"q\":"}"#,
        r#"{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_1","delta":"{}"}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc_1","status":"completed","call_id":"call_a","name":"list","arguments":"{}"}}"#,
        r#"{"type":"response.function_call_arguments.delta","output_index":2,"item_id":"fc_2","delta":"\"x\"}"}"#,
        r#"{"type":"response.output_item.done","output_index":2,"item":{"type":"function_call","id":"fc_2","status":"completed","call_id":"call_b","name":"search","arguments":"{\"q\":\"x\"}"}}"#,
        r#"{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":5}}}"#,
    ]);
    let events = decode_ok(&body);
    assert_eq!(
        events,
        vec![
            text(0, "Both."),
            flush(0),
            start(1, "call_a", "list"),
            start(2, "call_b", "search"),
            chunk(2, "{\"q\":"),
            chunk(1, "{}"),
            flush(1),
            chunk(2, "\"x\"}"),
            flush(2),
            usage(10, 5, 4),
            StreamEvent::Finished(FinishReason::ToolUse),
        ]
    );
}

#[test]
fn a_call_cut_by_max_output_tokens_is_refused() {
    let body = sse(&[
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"fs_create_file","arguments":""}}"#,
        r#"{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_1","delta":"{\"path\":\"a.rs\",\"content\":\"fn"}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_1","status":"incomplete","call_id":"call_1","name":"fs_create_file","arguments":"{\"path\":\"a.rs\",\"content\":\"fn"}}"#,
        r#"{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":0},"output_tokens":9}}}"#,
    ]);
    let events = decode_ok(&body);
    assert_eq!(
        events,
        vec![
            start(0, "call_1", "fs_create_file"),
            chunk(0, "{\"path\":\"a.rs\",\"content\":\"fn"),
            flush(0),
            usage(3, 9, 0),
            StreamEvent::Finished(FinishReason::MaxTokens),
        ]
    );
    let flushed = build(&events);
    let [FlushedEvent::ToolCallRequest(call)] = flushed.as_slice() else {
        panic!("not one tool call: {flushed:?}");
    };
    assert_eq!(
        call.arguments().unwrap_err().to_string(),
        "arguments are truncated: input ended inside a string at /content"
    );
}

#[test]
fn other_incomplete_reasons_and_refusals() {
    let body = sse(&[
        r#"{"type":"response.refusal.delta","output_index":0,"item_id":"msg_1","content_index":0,"delta":"I can't."}"#,
        r#"{"type":"response.incomplete","response":{"incomplete_details":{"reason":"content_filter"}}}"#,
    ]);
    assert_eq!(
        decode_ok(&body),
        vec![
            text(0, "I can't."),
            flush(0),
            StreamEvent::Finished(FinishReason::Other("content_filter".into())),
        ]
    );
}

#[test]
fn summary_parts_of_one_item_are_separated() {
    let body = sse(&[
        r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"item_id":"rs","summary_index":0,"delta":"**One**"}"#,
        r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"item_id":"rs","summary_index":1,"delta":"**Two**"}"#,
        r#"{"type":"response.output_text.delta","output_index":1,"item_id":"msg","content_index":0,"delta":"Hi"}"#,
        r#"{"type":"response.completed","response":{}}"#,
    ]);
    let events = decode_ok(&body);
    assert_eq!(
        build(&events),
        vec![
            FlushedEvent::Reasoning("**One**\n\n**Two**".into()),
            FlushedEvent::Message("Hi".into()),
        ]
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finished(FinishReason::EndTurn))
    );
}

#[test]
fn arguments_sent_only_whole_are_kept() {
    // A server that sends the arguments in the item, not as deltas.
    let body = sse(&[
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"","name":"list","arguments":""}}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","status":"completed","name":"list","arguments":"{\"all\":true}"}}"#,
        r#"{"type":"response.completed","response":{}}"#,
    ]);
    let events = decode_ok(&body);
    assert_eq!(
        events,
        vec![
            start(0, "jp_call_0", "list"),
            chunk(0, "{\"all\":true}"),
            flush(0),
            StreamEvent::Finished(FinishReason::ToolUse),
        ]
    );
}

#[test]
fn a_failed_response_is_its_error() {
    let body = sse(&[
        r#"{"type":"response.output_text.delta","output_index":0,"item_id":"m","content_index":0,"delta":"Par"}"#,
        r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}"#,
    ]);
    let (events, error) = decode(Decoder::new, &body);
    assert_eq!(events, vec![text(0, "Par")]);
    assert_eq!(
        error,
        Some(ProviderError::Api {
            provider: "openai".into(),
            kind: "server_error".into(),
            message: "boom".into(),
        })
    );
}

#[test]
fn an_error_event_with_top_level_fields() {
    let body = sse(&[
        r#"{"type":"error","code":"rate_limit_exceeded","message":"slow down","param":null}"#,
    ]);
    let (_, error) = decode(Decoder::new, &body);
    assert_eq!(
        error,
        Some(ProviderError::Api {
            provider: "openai".into(),
            kind: "rate_limit_exceeded".into(),
            message: "slow down".into(),
        })
    );
}

#[test]
fn a_body_without_a_terminal_event_is_a_disconnection() {
    let body = sse(&[
        r#"{"type":"response.output_text.delta","output_index":0,"item_id":"m","content_index":0,"delta":"Hi"}"#,
    ]);
    let (events, error) = decode(Decoder::new, &body);
    assert_eq!(events, vec![text(0, "Hi")]);
    assert_eq!(
        error,
        Some(ProviderError::Disconnected {
            provider: "openai".into(),
            message: "the response ended before `response.completed` or `response.incomplete`"
                .into(),
        })
    );
}

#[test]
fn structural_errors_name_the_event() {
    let cases: [(&str, &str); 3] = [
        (
            r#"{"type":"response.function_call_arguments.delta","output_index":3,"item_id":"fc","delta":"{}"}"#,
            "event `response.function_call_arguments.delta` (line 1): arguments for output item 3, which is not an open function call",
        ),
        (
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c"}}"#,
            "event `response.output_item.added` (line 1): function call 0 has no name",
        ),
        (
            r#"{"type":"response.output_text.delta","delta":"x"}"#,
            "event `response.output_text.delta` (line 1): `response.output_text.delta` without an `output_index`",
        ),
    ];
    for (data, message) in cases {
        let (_, error) = decode(Decoder::new, &sse(&[data]));
        assert_eq!(
            error,
            Some(ProviderError::Decode {
                provider: "openai".into(),
                message: message.into(),
            }),
            "{data}"
        );
    }
}

#[test]
fn invalid_json_names_the_event_and_shows_it() {
    let (_, error) = decode(Decoder::new, b"event: response.created\ndata: {nope\n\n");
    let Some(ProviderError::Decode { message, .. }) = error else {
        panic!("{error:?}");
    };
    assert!(
        message.starts_with("event `response.created` (line 1): key must be a string"),
        "{message}"
    );
    assert!(message.ends_with("`{nope`"), "{message}");
}

#[test]
fn request_body_with_everything() {
    let request = ChatRequest {
        model: "gpt-5".into(),
        system: Some("Be brief.".into()),
        messages: vec![
            Message::User("Write a.rs".into()),
            Message::Assistant {
                reasoning: Some("not sent".into()),
                text: "Writing.".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "call_1".into(),
                        name: "fs_create_file".into(),
                        arguments: Arc::new(json!({"path": "a.rs", "content": "\"quoted\"\n"})),
                    },
                    ToolCall {
                        id: "call_2".into(),
                        name: "list".into(),
                        arguments: Arc::new(json!({})),
                    },
                ],
            },
            Message::ToolResults(vec![
                ToolResult {
                    id: "call_1".into(),
                    content: "created".into(),
                    is_error: false,
                },
                ToolResult {
                    id: "call_2".into(),
                    content: "declined".into(),
                    is_error: true,
                },
            ]),
            Message::Assistant {
                reasoning: None,
                text: String::new(),
                tool_calls: vec![],
            },
        ],
        tools: vec![
            ToolDefinition {
                name: "fs_create_file".into(),
                description: Some("Creates a file.".into()),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}),
            },
            ToolDefinition {
                name: "list".into(),
                description: None,
                parameters: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            },
        ],
        max_tokens: 1024,
        temperature: Some(0.5),
        top_p: Some(0.9),
    };
    assert_eq!(
        body_text(&request_body(&request)),
        json!({
            "model": "gpt-5",
            "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": "Write a.rs"},
                {"role": "assistant", "content": "Writing."},
                {"type": "function_call", "call_id": "call_1", "name": "fs_create_file", "arguments": "{\"path\":\"a.rs\",\"content\":\"\\\"quoted\\\"\\n\"}"},
                {"type": "function_call", "call_id": "call_2", "name": "list", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "created"},
                {"type": "function_call_output", "call_id": "call_2", "output": "declined"},
            ],
            "tools": [
                {"type": "function", "name": "fs_create_file", "description": "Creates a file.", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}, "strict": false},
                {"type": "function", "name": "list", "parameters": {"type": "object", "properties": {}, "additionalProperties": false}, "strict": false},
            ],
            "max_output_tokens": 1024,
            "temperature": 0.5,
            "top_p": 0.9,
            "store": false,
            "stream": true,
        })
        .to_string()
    );
}

#[test]
fn provider_basics() {
    let provider = OpenAiResponses::new("https://api.openai.com/v1/", "sk-secret");
    assert_eq!(provider.name(), "openai");
    assert_eq!(
        format!("{provider:?}"),
        "OpenAiResponses { base_url: \"https://api.openai.com/v1\", api_key: \"<redacted>\", \
         retry: RetryPolicy { max_attempts: 5, base_delay: 1s, max_delay: 30s } }"
    );
}

fn body_text(body: &impl serde::Serialize) -> String {
    serde_json::to_string(body).unwrap()
}
