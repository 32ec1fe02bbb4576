//! Tests of the Chat Completions request body and decoder: recorded
//! OpenRouter and llama.cpp streams fed at many split patterns, hand-written
//! edge cases, and the exact JSON sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_conversation::{FlushedEvent, ToolCallRequest};
use std::sync::Arc;

use serde_json::{Map, json};

use super::*;
use crate::decode::tests::{build, decode, fixture_bodies, fixture_requests, parts};
use crate::provider::{Provider, ToolCall, ToolDefinition, ToolResult};

const OPENROUTER: &str = "openrouter_test_anthropic_opus_5_parallel_tool_round_trip.yml";
const LLAMACPP: &str = "llamacpp_test_tool_call_stream.yml";

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

fn flush(index: usize) -> StreamEvent {
    StreamEvent::Flush { index }
}

fn usage(input: u64, output: u64, cached: Option<u64>) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        cache_read_tokens: cached,
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
    let (events, error) = decode(|| Decoder::for_provider("test"), body);
    assert_eq!(error, None);
    events
}

/// A body of `data:` events.
fn sse(chunks: &[&str]) -> Vec<u8> {
    chunks
        .iter()
        .map(|data| format!("data: {data}\n\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn recorded_openrouter_parallel_tool_calls() {
    let events = decode_ok(&fixture_bodies(OPENROUTER)[0]);
    let list = "toolu_01TVUg5BitZKezwKEnwpHQby";
    let search = "toolu_01HWdXMAbtonx7U5f8wrXi6e";
    // Two finish chunks arrive; the indexes are flushed once.
    assert_eq!(
        events,
        vec![
            text(0, "I"),
            text(0, "'ll call both tools in parallel now."),
            start(2, list, "list_items"),
            chunk(2, "{}"),
            start(3, search, "search_items"),
            chunk(3, "{}"),
            flush(0),
            flush(2),
            flush(3),
            StreamEvent::Finished(FinishReason::ToolUse),
            usage(425, 63, Some(0)),
        ]
    );
    assert_eq!(
        build(&events),
        vec![
            FlushedEvent::Message("I'll call both tools in parallel now.".into()),
            call(list, "list_items", json!({})),
            call(search, "search_items", json!({})),
        ]
    );
}

#[test]
fn recorded_openrouter_answer() {
    let texts = [
        "Both tools have",
        " been called in parallel and completed successfully:\n\n- **list_items** — completed\n- **search_items** — completed\n\nNeither call returned any item data in its output, just a",
        " completion status. If you'd like, let me know what specific items or search criteria you're after (or any parameters these tools accept), and I can re-run",
        " them with the appropriate arguments.",
    ];
    let mut expected = parts(0, &texts, EventPart::Message);
    expected.extend([
        flush(0),
        StreamEvent::Finished(FinishReason::EndTurn),
        usage(164, 110, Some(0)),
    ]);
    let events = decode_ok(&fixture_bodies(OPENROUTER)[1]);
    assert_eq!(events, expected);
    assert_eq!(build(&events), vec![FlushedEvent::Message(texts.concat())]);
}

#[test]
fn recorded_llamacpp_tool_call_in_pieces() {
    let id = "XQaGnE82XyTYGBNOz5nJ4UCK5rTKyxJ3";
    let arguments = [
        "{",
        "\"foo\":\"",
        "test",
        "\"",
        ",\"bar\":\"",
        "[\\\"",
        "foo",
        "\\\",",
        " \\\"",
        "bar",
        "\\\"]",
        "\"",
        "}",
    ];
    let mut expected = vec![start(2, id, "run_me")];
    expected.extend(arguments.iter().map(|piece| chunk(2, piece)));
    expected.extend([flush(2), StreamEvent::Finished(FinishReason::ToolUse)]);
    let events = decode_ok(&fixture_bodies(LLAMACPP)[0]);
    assert_eq!(events, expected);
    assert_eq!(
        build(&events),
        vec![call(
            id,
            "run_me",
            json!({"foo": "test", "bar": "[\"foo\", \"bar\"]"})
        )]
    );
    // The next recorded request sends the same call back.
    let sent = &fixture_requests(LLAMACPP)[1]["messages"][1]["tool_calls"][0];
    assert_eq!(sent["id"], id);
    assert_eq!(sent["function"]["arguments"], arguments.concat());
}

#[test]
fn recorded_llamacpp_answer() {
    let texts = [
        "Great",
        "!",
        " The",
        " tool",
        " ran",
        " successfully",
        " with",
        " the",
        " arguments",
        " `",
        "foo",
        ":",
        " \"",
        "test",
        "\"`",
        " and",
        " `",
        "bar",
        ":",
        " [\"",
        "foo",
        "\",",
        " \"",
        "bar",
        "\"]",
        "`.",
        " The",
        " output",
        " was",
        ":",
        " `",
        "working",
        "!",
        "`.",
        "\n\nLet",
        " me",
        " know",
        " if",
        " you",
        "'d",
        " like",
        " to",
        " try",
        " it",
        " with",
        " different",
        " arguments",
        " or",
        " if",
        " you",
        " need",
        " help",
        " with",
        " anything",
        " else",
        "!",
    ];
    let mut expected = parts(0, &texts, EventPart::Message);
    expected.extend([flush(0), StreamEvent::Finished(FinishReason::EndTurn)]);
    let events = decode_ok(&fixture_bodies(LLAMACPP)[1]);
    assert_eq!(events, expected);
    assert_eq!(build(&events), vec![FlushedEvent::Message(texts.concat())]);
}

#[test]
fn the_request_sends_the_recorded_llamacpp_history() {
    let request = ChatRequest {
        model: "qwen3.5:9b".into(),
        system: None,
        messages: vec![
            Message::User("Please run the tool, providing whatever arguments you want.".into()),
            Message::Assistant {
                reasoning: None,
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "XQaGnE82XyTYGBNOz5nJ4UCK5rTKyxJ3".into(),
                    name: "run_me".into(),
                    arguments: Arc::new(json!({"foo": "test", "bar": "[\"foo\", \"bar\"]"})),
                }],
            },
            Message::ToolResults(vec![ToolResult {
                id: "XQaGnE82XyTYGBNOz5nJ4UCK5rTKyxJ3".into(),
                content: "working!".into(),
                is_error: false,
            }]),
        ],
        tools: vec![],
        max_tokens: 4096,
        temperature: None,
        top_p: None,
    };
    let recorded = fixture_requests(LLAMACPP)[1]["messages"].clone();
    assert_eq!(
        body_value(&request_body("llamacpp", &request)),
        json!({
            "model": "qwen3.5:9b",
            "messages": recorded,
            "max_tokens": 4096,
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[test]
fn a_call_s_arguments_are_sent_as_their_json_text_escaped_once() {
    // Keys and values that need escaping, a control character, a line
    // separator and characters outside the BMP: the arguments' compact
    // JSON text, written as a JSON string.
    let arguments = json!({"k\"ey\n": "é\u{1}\u{2028}😀", "n": [1.5, -0.0, null]});
    let request = ChatRequest {
        model: "m".into(),
        system: None,
        messages: vec![Message::Assistant {
            reasoning: None,
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "c".into(),
                name: "t".into(),
                arguments: Arc::new(arguments.clone()),
            }],
        }],
        tools: vec![],
        max_tokens: 16,
        temperature: None,
        top_p: None,
    };
    let body = body_text(&request_body("llamacpp", &request));
    let sent = [
        r#""arguments":"{\"k\\\"ey\\n\":\"é\\u0001"#,
        "\u{2028}",
        r#"😀\",\"n\":[1.5,-0.0,null]}""#,
    ]
    .concat();
    assert!(body.contains(&sent), "{body}");
    let value: Value = serde_json::from_str(&body).unwrap();
    let text = value["messages"][0]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), arguments);
}

#[test]
fn request_body_for_openai_with_everything() {
    let request = ChatRequest {
        model: "gpt-5".into(),
        system: Some("Be brief.".into()),
        messages: vec![
            Message::User("Make a file.".into()),
            Message::Assistant {
                reasoning: Some("thinking that is not sent".into()),
                text: "Creating it.".into(),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "fs_create_file".into(),
                    arguments: Arc::new(json!({"path": "a.rs", "content": "x"})),
                }],
            },
            Message::ToolResults(vec![ToolResult {
                id: "call_1".into(),
                content: "created a.rs".into(),
                is_error: false,
            }]),
            Message::Assistant {
                reasoning: None,
                text: "Done.".into(),
                tool_calls: vec![],
            },
            Message::User("Thanks".into()),
        ],
        tools: vec![ToolDefinition {
            name: "fs_create_file".into(),
            description: Some("Create a file.".into()),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        max_tokens: 1024,
        temperature: Some(0.25),
        top_p: Some(1.0),
    };
    assert_eq!(
        body_text(&request_body("openai", &request)),
        json!({
            "model": "gpt-5",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Make a file."},
                {"role": "assistant", "content": "Creating it.", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {
                        "name": "fs_create_file",
                        "arguments": "{\"path\":\"a.rs\",\"content\":\"x\"}",
                    }},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "created a.rs"},
                {"role": "assistant", "content": "Done."},
                {"role": "user", "content": "Thanks"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "fs_create_file",
                "description": "Create a file.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            }}],
            "max_completion_tokens": 1024,
            "temperature": 0.25,
            "top_p": 1.0,
            "stream": true,
            "stream_options": {"include_usage": true},
        })
        .to_string()
    );
}

/// OpenAI's own API gets `max_completion_tokens`; every other compatible
/// server gets `max_tokens`.
#[test]
fn the_token_limit_field_depends_on_the_provider() {
    let request = ChatRequest {
        model: "m".into(),
        system: None,
        messages: vec![Message::User("Hi".into())],
        tools: vec![],
        max_tokens: 2048,
        temperature: None,
        top_p: None,
    };
    assert_eq!(
        body_text(&request_body("openai", &request)),
        json!({
            "model": "m",
            "messages": [{"role": "user", "content": "Hi"}],
            "max_completion_tokens": 2048,
            "stream": true,
            "stream_options": {"include_usage": true},
        })
        .to_string()
    );
    // Names are matched exactly, as model ids spell them.
    for provider in ["openrouter", "llamacpp", "vllm", "OpenAI"] {
        assert_eq!(
            body_text(&request_body(provider, &request)),
            json!({
                "model": "m",
                "messages": [{"role": "user", "content": "Hi"}],
                "max_tokens": 2048,
                "stream": true,
                "stream_options": {"include_usage": true},
            })
            .to_string(),
            "{provider}"
        );
    }
    assert_eq!(token_limit_field("openai"), "max_completion_tokens");
    assert_eq!(token_limit_field("openrouter"), "max_tokens");
}

#[test]
fn reasoning_whole_arguments_and_stop_on_a_tool_call() {
    let body = sse(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Let me"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"reasoning_content":" look."}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"Looking."}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"fs_read_file","arguments":"{\"path\":\"a.rs\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":4}}}"#,
        "[DONE]",
        r#"{"choices":[{"index":0,"delta":{"content":"after DONE is ignored"}}]}"#,
    ]);
    let events = decode_ok(&body);
    assert_eq!(
        events,
        vec![
            part(1, EventPart::Reasoning("Let me".into())),
            part(1, EventPart::Reasoning(" look.".into())),
            text(0, "Looking."),
            start(2, "c1", "fs_read_file"),
            chunk(2, "{\"path\":\"a.rs\"}"),
            flush(0),
            flush(1),
            flush(2),
            StreamEvent::Finished(FinishReason::EndTurn),
            usage(7, 9, Some(4)),
        ]
    );
    assert_eq!(
        build(&events),
        vec![
            FlushedEvent::Message("Looking.".into()),
            FlushedEvent::Reasoning("Let me look.".into()),
            call("c1", "fs_read_file", json!({"path": "a.rs"})),
        ]
    );
}

#[test]
fn repeated_finish_chunks_flush_once_and_late_deltas_are_dropped() {
    let body = sse(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"late"},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ]);
    assert_eq!(
        decode_ok(&body),
        vec![
            text(0, "Hi"),
            flush(0),
            StreamEvent::Finished(FinishReason::EndTurn)
        ]
    );
}

#[test]
fn tool_call_cut_by_length_is_refused() {
    let body = sse(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"fs_create_file","arguments":""}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a.rs\",\"content\":\"fn"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
        "[DONE]",
    ]);
    let events = decode_ok(&body);
    assert_eq!(
        events,
        vec![
            start(2, "c1", "fs_create_file"),
            chunk(2, "{\"path\":\"a.rs\",\"content\":\"fn"),
            flush(2),
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
fn calls_without_index_or_id_and_arguments_before_the_name() {
    let body = sse(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"one","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"arguments":"{\"x\""}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"two","arguments":":1}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":5,"function":{"name":"three","arguments":{"y":2}}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    let events = decode_ok(&body);
    assert_eq!(
        events,
        vec![
            start(2, "a", "one"),
            chunk(2, "{}"),
            start(3, "b", "two"),
            chunk(3, "{\"x\":1}"),
            start(7, "jp_call_0", "three"),
            chunk(7, "{\"y\":2}"),
            flush(2),
            flush(3),
            flush(7),
            StreamEvent::Finished(FinishReason::ToolUse),
        ]
    );
}

#[test]
fn error_chunk_after_text() {
    let body = sse(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#,
        r#"{"error":{"code":502,"message":"Provider returned error"},"choices":[{"index":0,"delta":{},"finish_reason":"error"}]}"#,
    ]);
    assert_eq!(
        decode(|| Decoder::for_provider("openrouter"), &body),
        (
            vec![text(0, "Hi")],
            Some(ProviderError::Api {
                provider: "openrouter".into(),
                kind: "502".into(),
                message: "Provider returned error".into(),
            })
        )
    );
}

#[test]
fn a_body_without_finish_or_done_is_a_disconnection() {
    let body = &fixture_bodies(LLAMACPP)[0];
    let text = std::str::from_utf8(body).unwrap();
    let cut = text
        .find("data: {\"choices\":[{\"finish_reason\":\"tool_calls\"")
        .unwrap();
    let (events, error) = decode(|| Decoder::for_provider("llamacpp"), &body[..cut]);
    assert_eq!(events.len(), 14);
    assert_eq!(
        error.unwrap().to_string(),
        "llamacpp: the connection dropped mid-response: \
         the response ended before a finish reason or `data: [DONE]`"
    );
    // Finished but no [DONE]: complete.
    let cut = text.find("data: [DONE]").unwrap();
    let (events, error) = decode(|| Decoder::for_provider("llamacpp"), &body[..cut]);
    assert_eq!(error, None);
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finished(FinishReason::ToolUse))
    );
}

#[test]
fn invalid_json_names_the_event_and_shows_it() {
    let body = b": OPENROUTER PROCESSING\n\ndata: {\"choices\":[]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hi}]}\n\n";
    let (events, error) = decode(|| Decoder::for_provider("openrouter"), body);
    assert_eq!(events, vec![]);
    assert_eq!(
        error.unwrap().to_string(),
        "openrouter: unreadable response: event at line 5: \
         EOF while parsing a string at line 1 column 38: `{\"choices\":[{\"delta\":{\"content\":\"Hi}]}`"
    );
    let body = b"data: {\"choices\":[{\"delta\":{\"content\":7}}]}\n\n";
    assert_eq!(
        decode(Decoder::new, body).1.unwrap().to_string(),
        "openai: unreadable response: event at line 1: \
         invalid type: integer `7`, expected a string at line 1 column 33: \
         `{\"choices\":[{\"delta\":{\"content\":7}}]}`"
    );
}

#[test]
fn provider_basics() {
    let provider = OpenAiCompatible::new(
        "openrouter",
        "https://openrouter.ai/api/v1/",
        Some("k".into()),
    );
    assert_eq!(provider.name(), "openrouter");
    assert_eq!(
        format!("{provider:?}"),
        "OpenAiCompatible { name: \"openrouter\", base_url: \"https://openrouter.ai/api/v1\", \
         api_key: Some(\"<redacted>\"), retry: RetryPolicy { max_attempts: 5, base_delay: 1s, \
         max_delay: 30s } }"
    );
}

/// The exact JSON text of a request body.
fn body_text(body: &impl serde::Serialize) -> String {
    serde_json::to_string(body).unwrap()
}

/// A request body as a value, for comparing with recordings.
fn body_value(body: &impl serde::Serialize) -> Value {
    serde_json::to_value(body).unwrap()
}

#[test]
fn a_call_without_an_id_gets_one_new_to_the_conversation() {
    let body = sse(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"t","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_1","function":{"name":"t","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"name":"t","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ]);
    let mut taken = crate::call_ids::CallIds::default();
    taken.note("jp_call_0");
    let (events, error) = decode(
        || Decoder::for_provider("test").with_call_ids(taken.clone()),
        &body,
    );
    assert_eq!(error, None);
    let ids: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::Part {
                part: EventPart::ToolCall(ToolCallPart::Start { id, .. }),
                ..
            } => Some(id.clone()),
            _ => None,
        })
        .collect();
    // jp_call_0 is the conversation's, call_1 the server's own.
    assert_eq!(ids, ["jp_call_1", "call_1", "jp_call_2"]);
}

#[test]
fn arguments_held_before_a_tool_s_name_are_bounded() {
    // 1 MiB pieces for a call whose name never comes: refused once what is
    // held passes the parser's own limit for a call, not buffered on.
    let piece = "x".repeat(1024 * 1024);
    let delta = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{piece}\"}}}}]}}}}]}}\n\n"
    );
    let mut decoder = Decoder::for_provider("test");
    let mut fed = 0;
    let error = loop {
        match decoder.feed(delta.as_bytes()) {
            Ok(events) => assert_eq!(events, []),
            Err(error) => break error,
        }
        fed += 1;
        assert!(fed <= 64, "still buffering after {fed} MiB");
    };
    assert_eq!(fed, 64);
    assert!(
        error
            .to_string()
            .ends_with("tool calls sent more than 64 MiB of arguments before their tool's name"),
        "{error}"
    );
    // Named in time, the same text goes on to the parser.
    let mut decoder = Decoder::for_provider("test");
    decoder.feed(delta.as_bytes()).unwrap();
    let named = decoder
        .feed(br#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"t"}}]}}]}

"#)
        .unwrap();
    assert_eq!(named.len(), 2, "a start and the held text");
}
