//! Tests of the Gemini request body and decoder: recorded streams fed at
//! many split patterns (fixed and pseudo-random), hand-written edge cases,
//! and the exact JSON sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use jp_conversation::{FlushedEvent, ToolCallRequest};
use serde_json::{Map, json};

use super::*;
use crate::decode::tests::{build, decode, decode_in, fixture_bodies};
use crate::provider::{Provider, ToolCall, ToolDefinition, ToolResult};

/// Upstream JP's recording: one call, then the answer to its result.
const TOOL_CALL: &str = "google_test_tool_call_stream.yml";

fn part(index: usize, part: EventPart) -> StreamEvent {
    StreamEvent::Part { index, part }
}

fn text(text: &str) -> StreamEvent {
    part(TEXT_INDEX, EventPart::Message(text.into()))
}

fn thought(text: &str) -> StreamEvent {
    part(REASONING_INDEX, EventPart::Reasoning(text.into()))
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

/// Piece sizes in `1..=max` from a small linear congruential generator:
/// the same for the same `seed` on every run.
fn random_sizes(seed: u64, max: usize) -> Vec<usize> {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..97)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            usize::try_from(state >> 33).unwrap() % max + 1
        })
        .collect()
}

/// The events of `body` (and the error that ended them), after checking
/// that the fixed split patterns and 40 pseudo-random ones give the same.
fn decode_all(body: &[u8]) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let whole = decode(Decoder::new, body);
    for seed in 0..40 {
        let sizes = random_sizes(seed, 1 + usize::try_from(seed).unwrap() * 7);
        assert_eq!(
            decode_in(&Decoder::new, body, &sizes),
            whole,
            "split at random (seed {seed})"
        );
    }
    whole
}

fn decode_ok(body: &[u8]) -> Vec<StreamEvent> {
    let (events, error) = decode_all(body);
    assert_eq!(error, None);
    events
}

/// `lines` as a Gemini stream: each a `data:` event, lines ending in CRLF
/// as Google sends them.
fn sse(lines: &[Value]) -> Vec<u8> {
    lines
        .iter()
        .map(|line| format!("data: {line}\r\n\r\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn recorded_tool_call() {
    let events = decode_ok(&fixture_bodies(TOOL_CALL)[0]);
    assert_eq!(
        events,
        vec![
            StreamEvent::GroupStart,
            start(2, "jp_call_0", "run_me"),
            chunk(2, r#"{"bar": ["hello","world"],"foo": "test"}"#),
            flush(2),
            usage(67, 23 + 225, None),
            StreamEvent::Finished(FinishReason::EndTurn),
            StreamEvent::GroupEnd,
        ]
    );
    assert_eq!(
        build(&events),
        vec![FlushedEvent::ToolCallRequest(ToolCallRequest::new(
            "jp_call_0",
            "run_me",
            object(json!({"bar": ["hello", "world"], "foo": "test"}))
        ))]
    );
}

#[test]
fn recorded_answer() {
    let events = decode_ok(&fixture_bodies(TOOL_CALL)[1]);
    let second = "\n{\"run_me_response\": {\"content\": \"working!\"}}\n```";
    assert_eq!(
        events,
        vec![
            text("```json"),
            usage(276, 2, None),
            text(second),
            flush(TEXT_INDEX),
            usage(276, 18, None),
            StreamEvent::Finished(FinishReason::EndTurn),
        ]
    );
    assert_eq!(
        build(&events),
        vec![FlushedEvent::Message(format!("```json{second}"))]
    );
}

/// Google ends lines in CRLF; the recording above keeps LF. Both decode
/// alike, however the CR and LF are split.
#[test]
fn crlf_line_endings_decode_like_lf() {
    let body = fixture_bodies(TOOL_CALL)[1].clone();
    let crlf = String::from_utf8(body.clone())
        .unwrap()
        .replace('\n', "\r\n");
    assert_eq!(decode_ok(crlf.as_bytes()), decode_ok(&body));
}

/// Upstream JP's recording with thoughts shown (`gemini-3-pro-preview`):
/// two thoughts, the answer, and a last event of an empty text with the
/// thought signature and `finishReason`, which the body ends in without
/// its blank line.
#[test]
fn recorded_gemini_3_reasoning() {
    let body = &fixture_bodies("unterminated/google_test_gemini_3_reasoning.yml")[0];
    assert_eq!(body.len(), 3409);
    assert!(body.ends_with(b"\"Yhc9ae36McSjxN8Phtus6As\"}"));
    let first = "**Reviewing Test Prompt**\n\nI've successfully received and interpreted the input \"Test message.\" My process is currently focused on determining the best response. I've identified the intent as a connectivity check and am now solidifying the optimal acknowledgment and confirmation strategy.\n\n\n";
    let second = "**Choosing Response Strategy**\n\nI've examined several response options. \"Received\" feels too terse, while \"I hear you...\" is a bit too casual for this scenario. I'm leaning toward a blend: a concise acknowledgement followed by an offer of assistance. The current draft, \"Message received! How can I help you today?\" feels almost there. A final touch will be to include a phrase to reinforce that the initial check was good.\n\n\n";
    let answer = "Message received. I am working correctly! How can I help you today?";
    let events = decode_ok(body);
    assert_eq!(
        events,
        vec![
            thought(first),
            StreamEvent::Usage(Usage {
                input_tokens: Some(3),
                ..Usage::default()
            }),
            thought(second),
            text(answer),
            usage(3, 15 + 196, None),
            flush(TEXT_INDEX),
            flush(REASONING_INDEX),
            StreamEvent::Finished(FinishReason::EndTurn),
        ]
    );
    assert_eq!(
        build(&events),
        vec![
            FlushedEvent::Message(answer.into()),
            FlushedEvent::Reasoning(format!("{first}{second}")),
        ]
    );
}

/// Upstream JP's recording of a call (`gemini-2.5-flash-lite`, no thought
/// signature) and of the answer to its result, in three pieces.
#[test]
fn recorded_tool_call_and_answer_without_thoughts() {
    let bodies = fixture_bodies("google_test_tool_call_reasoning.yml");
    assert_eq!(
        decode_ok(&bodies[0]),
        vec![
            StreamEvent::GroupStart,
            start(2, "jp_call_0", "run_me"),
            chunk(2, r#"{"bar": "foo"}"#),
            flush(2),
            usage(67, 15, None),
            StreamEvent::Finished(FinishReason::EndTurn),
            StreamEvent::GroupEnd,
        ]
    );
    let events = decode_ok(&bodies[1]);
    let pieces = [
        "This is the output of the",
        " tool: `{\"run_me_response\": {\"content\": \"working!\"}}",
        "`.",
    ];
    let expected = vec![
        text(pieces[0]),
        usage(43, 6, None),
        text(pieces[1]),
        usage(43, 23, None),
        text(pieces[2]),
        flush(TEXT_INDEX),
        usage(43, 24, None),
        StreamEvent::Finished(FinishReason::EndTurn),
    ];
    assert_eq!(events, expected);
}

/// A recording of the Vercel AI SDK's (`vercel_ai/`): one chunk per line,
/// sent as Google sends it, each line a `data:` event, lines ending in
/// CRLF.
fn vercel_recording(name: &str) -> Vec<u8> {
    let path = jp_test_server::shared_fixture(&format!("vercel_ai/{name}"));
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter(|line| !line.is_empty())
        .map(|line| format!("data: {line}\r\n\r\n"))
        .collect::<String>()
        .into_bytes()
}

/// `gemini-3-pro-preview` calls a function (its signature skipped), then
/// ends with an empty text part.
#[test]
fn recorded_gemini_3_tool_call() {
    let events = decode_ok(&vercel_recording("google-tool-call-gemini3.chunks.txt"));
    assert_eq!(
        events,
        vec![
            StreamEvent::GroupStart,
            start(2, "jp_call_0", "weather"),
            chunk(2, r#"{"location":"San Francisco"}"#),
            flush(2),
            usage(29, 15 + 804, None),
            StreamEvent::GroupEnd,
            StreamEvent::Finished(FinishReason::EndTurn),
        ]
    );
    assert_eq!(
        build(&events),
        vec![FlushedEvent::ToolCallRequest(ToolCallRequest::new(
            "jp_call_0",
            "weather",
            object(json!({"location": "San Francisco"}))
        ))]
    );
}

/// `gemini-3.1-pro-preview` sends its own call id: it is kept.
#[test]
fn recorded_text_then_a_call_with_geminis_id() {
    let events = decode_ok(&vercel_recording("issue-10781.1.chunks.txt"));
    assert_eq!(
        events,
        vec![
            text("Let me check."),
            usage(83, 4 + 178, None),
            StreamEvent::GroupStart,
            start(2, "g1bmv6il", "get_weather"),
            chunk(2, r#"{"city":"San Francisco"}"#),
            flush(2),
            usage(83, 21 + 178, None),
            StreamEvent::GroupEnd,
            flush(TEXT_INDEX),
            StreamEvent::Finished(FinishReason::EndTurn),
        ]
    );
}

/// Two calls in one chunk (`gemini-2.5-flash` on Vertex AI, kept by an
/// Envoy fork's tests, see `envoy/README.md`): each gets its own index and
/// an id of jp's, in order, and both are flushed with the chunk. The file
/// ends its lines in LF; the same bytes with CRLF, as the Gemini API sends
/// them, give the same events.
#[test]
fn recorded_two_calls_in_one_chunk() {
    let path = jp_test_server::shared_fixture("envoy/gemini-2.5-flash-vertex-parallel-calls.sse");
    let body = std::fs::read(&path).unwrap();
    let events = decode_ok(&body);
    assert_eq!(
        events,
        vec![
            StreamEvent::GroupStart,
            start(2, "jp_call_0", "get_weather"),
            chunk(2, r#"{"city": "Paris"}"#),
            flush(2),
            start(3, "jp_call_1", "get_weather"),
            chunk(3, r#"{"city": "Tokyo"}"#),
            flush(3),
            usage(27, 10, None),
            StreamEvent::Finished(FinishReason::EndTurn),
            StreamEvent::GroupEnd,
        ]
    );
    let crlf = String::from_utf8(body).unwrap().replace('\n', "\r\n");
    assert_eq!(decode_ok(crlf.as_bytes()), events);
    assert_eq!(
        build(&events),
        vec![
            FlushedEvent::ToolCallRequest(ToolCallRequest::new(
                "jp_call_0",
                "get_weather",
                object(json!({"city": "Paris"}))
            )),
            FlushedEvent::ToolCallRequest(ToolCallRequest::new(
                "jp_call_1",
                "get_weather",
                object(json!({"city": "Tokyo"}))
            )),
        ]
    );
}

#[test]
fn recorded_blocked_prompt() {
    assert_eq!(
        decode_ok(&vercel_recording("issue-19758-prompt-block.chunks.txt")),
        vec![
            StreamEvent::Usage(Usage {
                input_tokens: Some(9),
                output_tokens: None,
                cache_read_tokens: None,
                cache_write_tokens: None,
            }),
            StreamEvent::Finished(FinishReason::Other("blocked: PROHIBITED_CONTENT".into())),
        ]
    );
}

#[test]
fn thoughts_text_parallel_calls_and_cached_tokens() {
    let body = sse(&[
        json!({"candidates": [{"content": {"parts": [{"text": "Two files", "thought": true}], "role": "model"}, "index": 0}]}),
        json!({"candidates": [{"content": {"parts": [{"text": " to read.", "thought": true}], "role": "model"}, "index": 0}]}),
        json!({"candidates": [{"content": {"parts": [{"text": "Reading both."}], "role": "model"}, "index": 0}]}),
        json!({"candidates": [{"content": {"parts": [
            {"functionCall": {"name": "fs_read_file", "args": {"path": "b.rs", "lines": [1, 2]}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "fs_list_files", "args": {}}},
            {"functionCall": {"name": "now"}}
        ], "role": "model"}, "finishReason": "STOP", "index": 0}],
         "usageMetadata": {"promptTokenCount": 900, "candidatesTokenCount": 40, "thoughtsTokenCount": 12, "cachedContentTokenCount": 512, "totalTokenCount": 952}}),
    ]);
    let events = decode_ok(&body);
    assert_eq!(
        events,
        vec![
            thought("Two files"),
            thought(" to read."),
            text("Reading both."),
            StreamEvent::GroupStart,
            start(2, "jp_call_0", "fs_read_file"),
            chunk(2, r#"{"path":"b.rs","lines":[1,2]}"#),
            flush(2),
            start(3, "jp_call_1", "fs_list_files"),
            chunk(3, "{}"),
            flush(3),
            start(4, "jp_call_2", "now"),
            flush(4),
            flush(TEXT_INDEX),
            flush(REASONING_INDEX),
            usage(900, 52, Some(512)),
            StreamEvent::Finished(FinishReason::EndTurn),
            StreamEvent::GroupEnd,
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
            FlushedEvent::ToolCallRequest(ToolCallRequest::new("jp_call_2", "now", Map::new())),
            FlushedEvent::Message("Reading both.".into()),
            FlushedEvent::Reasoning("Two files to read.".into()),
        ]
    );
}

/// Ids are new to the conversation (an earlier response's `jp_call_0` is
/// skipped), and an id Gemini sends is kept.
#[test]
fn call_ids_are_new_to_the_conversation_and_sent_ids_kept() {
    let body = sse(&[json!({"candidates": [{"content": {"parts": [
        {"functionCall": {"id": "jp_call_1", "name": "a", "args": {}}},
        {"functionCall": {"name": "b", "args": {}}}
    ]}, "finishReason": "STOP"}]})]);
    let request = ChatRequest {
        messages: vec![
            Message::User("go".into()),
            Message::Assistant {
                reasoning: None,
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "jp_call_0".into(),
                    name: "a".into(),
                    arguments: Arc::new(json!({})),
                }],
            },
        ],
        ..request()
    };
    let ids = CallIds::of(&request);
    let (events, error) = decode(|| Decoder::new().with_call_ids(ids.clone()), &body);
    assert_eq!(error, None);
    let started: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::Part {
                part: EventPart::ToolCall(ToolCallPart::Start { id, .. }),
                ..
            } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["jp_call_1", "jp_call_2"]);
}

/// Issue 14: `args` reach the parser as the text that arrived, so a
/// duplicate key is still there for jp to refuse.
#[test]
fn arguments_reach_the_parser_as_sent() {
    let body = b"data: {\"candidates\": [{\"content\": {\"parts\": [{\"functionCall\": {\"name\": \"w\", \"args\": { \"path\" : \"a.rs\", \"path\":\"../x\" }}}]}, \"finishReason\": \"STOP\"}]}\r\n\r\n";
    let events = decode_ok(body);
    assert_eq!(events[2], chunk(2, r#"{ "path" : "a.rs", "path":"../x" }"#));
}

#[test]
fn max_tokens_and_other_finish_reasons() {
    for (reason, finish) in [
        ("MAX_TOKENS", FinishReason::MaxTokens),
        ("SAFETY", FinishReason::Other("SAFETY".into())),
        (
            "MALFORMED_FUNCTION_CALL",
            FinishReason::Other("MALFORMED_FUNCTION_CALL".into()),
        ),
    ] {
        let body = sse(&[
            json!({"candidates": [{"content": {"parts": [{"text": "Cut"}]}}]}),
            json!({"candidates": [{"content": {"parts": [{"text": ""}]}, "finishReason": reason}]}),
        ]);
        assert_eq!(
            decode_ok(&body),
            vec![
                text("Cut"),
                flush(TEXT_INDEX),
                StreamEvent::Finished(finish)
            ]
        );
    }
}

#[test]
fn a_blocked_prompt_finishes_without_content() {
    let body = sse(&[json!({
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7}
    })]);
    assert_eq!(
        decode_ok(&body),
        vec![
            StreamEvent::Usage(Usage {
                input_tokens: Some(7),
                output_tokens: None,
                cache_read_tokens: None,
                cache_write_tokens: None,
            }),
            StreamEvent::Finished(FinishReason::Other("blocked: PROHIBITED_CONTENT".into())),
        ]
    );
}

/// Usage that comes in a chunk of its own after the finish reason still
/// counts (the last report wins).
#[test]
fn usage_after_the_finish_reason_is_reported() {
    let body = sse(&[
        json!({"candidates": [{"content": {"parts": [{"text": "Hi"}]}, "finishReason": "STOP"}]}),
        json!({"usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1}}),
    ]);
    assert_eq!(
        decode_ok(&body),
        vec![
            text("Hi"),
            flush(TEXT_INDEX),
            StreamEvent::Finished(FinishReason::EndTurn),
            usage(3, 1, None),
        ]
    );
}

#[test]
fn an_error_event_after_text_is_an_api_error() {
    let body = sse(&[
        json!({"candidates": [{"content": {"parts": [{"text": "Partial"}]}}]}),
        json!({"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}),
    ]);
    let (events, error) = decode_all(&body);
    assert_eq!(events, vec![text("Partial")]);
    assert_eq!(
        error,
        Some(ProviderError::Api {
            provider: "google".into(),
            kind: "UNAVAILABLE".into(),
            message: "The model is overloaded. Please try again later.".into(),
        })
    );
}

#[test]
fn a_body_without_a_finish_reason_is_a_disconnection() {
    let body = &fixture_bodies(TOOL_CALL)[1];
    let text_body = std::str::from_utf8(body).unwrap();
    let second = text_body.rfind("data: ").unwrap();
    // Cut after the first event, and in the middle of the second.
    for (cut, message) in [
        (
            second,
            "the response ended before a chunk with its `finishReason`",
        ),
        (second + 40, "the response ended in the middle of an event"),
    ] {
        let (events, error) = decode_all(&body[..cut]);
        assert_eq!(events, vec![text("```json"), usage(276, 2, None)]);
        assert_eq!(
            error,
            Some(ProviderError::Disconnected {
                provider: "google".into(),
                message: message.into(),
            })
        );
    }
}

#[test]
fn invalid_json_names_the_event_and_shows_it() {
    let body = b"data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"a\"}]}}]}\r\n\r\ndata: {\"candidates\": [}\r\n\r\n";
    let (events, error) = decode_all(body);
    assert_eq!(events, vec![text("a")]);
    assert_eq!(
        error.unwrap().to_string(),
        "google: unreadable response: event at line 3: \
         expected value at line 1 column 17: `{\"candidates\": [}`"
    );
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "gemini-2.5-flash".into(),
        system: None,
        messages: vec![Message::User("Hi".into())],
        tools: vec![],
        max_tokens: 1024,
        temperature: None,
        top_p: None,
    }
}

#[test]
fn request_body_with_everything() {
    let request = ChatRequest {
        system: Some("Be brief.".into()),
        messages: vec![
            Message::User("Run it.".into()),
            Message::Assistant {
                reasoning: Some("not sent".into()),
                text: "Running both.".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "jp_call_0".into(),
                        name: "run_me".into(),
                        arguments: Arc::new(json!({"foo": "bar"})),
                    },
                    ToolCall {
                        id: "jp_call_1".into(),
                        name: "list".into(),
                        arguments: Arc::new(json!({})),
                    },
                ],
            },
            Message::ToolResults(vec![
                ToolResult {
                    id: "jp_call_0".into(),
                    content: "working!".into(),
                    is_error: false,
                },
                ToolResult {
                    id: "jp_call_1".into(),
                    content: "declined".into(),
                    is_error: true,
                },
            ]),
            Message::Assistant {
                reasoning: None,
                text: String::new(),
                tool_calls: vec![],
            },
            Message::User("Again.".into()),
        ],
        tools: vec![
            ToolDefinition {
                name: "run_me".into(),
                description: Some("Runs.".into()),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "foo": {"type": "string", "enum": ["bar", "baz"]},
                        "n": {"type": "integer", "enum": [1, 2], "description": "How many."},
                        "tags": {"type": "array"}
                    },
                    "required": ["foo", "gone"],
                    "additionalProperties": false
                }),
            },
            ToolDefinition {
                name: "list".into(),
                description: None,
                parameters: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            },
        ],
        max_tokens: 512,
        temperature: Some(0.0),
        top_p: Some(0.9),
        ..request()
    };
    assert_eq!(
        body_text(&request_body(&request)),
        json!({
            "contents": [
                {"role": "user", "parts": [{"text": "Run it."}]},
                {"role": "model", "parts": [
                    {"text": "Running both."},
                    {"functionCall": {"id": "jp_call_0", "name": "run_me", "args": {"foo": "bar"}},
                     "thoughtSignature": "skip_thought_signature_validator"},
                    {"functionCall": {"id": "jp_call_1", "name": "list", "args": {}}},
                ]},
                // The results and the next message: one user turn.
                {"role": "user", "parts": [
                    {"functionResponse": {"id": "jp_call_0", "name": "run_me", "response": {"output": "working!"}}},
                    {"functionResponse": {"id": "jp_call_1", "name": "list", "response": {"error": "declined"}}},
                    {"text": "Again."},
                ]},
            ],
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "tools": [{"functionDeclarations": [
                {"name": "run_me", "description": "Runs.", "parameters": {
                    "type": "object",
                    "propertyOrdering": ["foo", "n", "tags"],
                    "properties": {
                        "foo": {"type": "string", "enum": ["bar", "baz"]},
                        "n": {"type": "integer", "description": "How many. One of: 1, 2."},
                        "tags": {"type": "array", "items": {"type": "string"}}
                    },
                    "required": ["foo"]
                }},
                {"name": "list"},
            ]}],
            "generationConfig": {"maxOutputTokens": 512, "temperature": 0.0, "topP": 0.9},
        })
        .to_string()
    );
}

#[test]
fn request_body_minimal() {
    assert_eq!(
        body_text(&request_body(&request())),
        json!({
            "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
            "generationConfig": {"maxOutputTokens": 1024},
        })
        .to_string()
    );
}

/// Gemini 3 refuses a call in the history without a thought signature;
/// jp keeps none, so the first call of each model turn carries Google's
/// documented placeholder, whatever the model.
#[test]
fn the_first_call_of_each_model_turn_carries_the_placeholder_signature() {
    let call = |id: &str| ToolCall {
        id: id.into(),
        name: "a".into(),
        arguments: Arc::new(json!({})),
    };
    let result = |id: &str| ToolResult {
        id: id.into(),
        content: "ok".into(),
        is_error: false,
    };
    let request = ChatRequest {
        model: "gemini-3-flash-preview".into(),
        messages: vec![
            Message::User("go".into()),
            Message::Assistant {
                reasoning: None,
                text: String::new(),
                tool_calls: vec![call("jp_call_0"), call("jp_call_1")],
            },
            Message::ToolResults(vec![result("jp_call_0"), result("jp_call_1")]),
            Message::Assistant {
                reasoning: None,
                text: "More.".into(),
                tool_calls: vec![call("jp_call_2")],
            },
            Message::ToolResults(vec![result("jp_call_2")]),
        ],
        ..request()
    };
    let body: Value = serde_json::from_str(&body_text(&request_body(&request))).unwrap();
    assert_eq!(
        body["contents"][1]["parts"],
        json!([
            {"functionCall": {"id": "jp_call_0", "name": "a", "args": {}}, "thoughtSignature": "skip_thought_signature_validator"},
            {"functionCall": {"id": "jp_call_1", "name": "a", "args": {}}},
        ])
    );
    assert_eq!(
        body["contents"][3]["parts"],
        json!([
            {"text": "More."},
            {"functionCall": {"id": "jp_call_2", "name": "a", "args": {}}, "thoughtSignature": "skip_thought_signature_validator"},
        ])
    );
}

#[test]
fn the_path_names_the_model() {
    let api = GeminiApi {
        api_key: Secret::new("k"),
    };
    assert_eq!(
        api.path(&request()),
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(
        format!("{:?}", api.headers()),
        "[x-goog-api-key: <redacted>]"
    );
}

#[test]
fn provider_basics() {
    let provider = Google::new("https://generativelanguage.googleapis.com/", "secret");
    assert_eq!(provider.name(), "google");
    assert_eq!(
        format!("{provider:?}"),
        "Google { base_url: \"https://generativelanguage.googleapis.com\", \
         api_key: \"<redacted>\", \
         retry: RetryPolicy { max_attempts: 5, base_delay: 1s, max_delay: 30s } }"
    );
}

/// The exact JSON text of a request body.
fn body_text(body: &impl serde::Serialize) -> String {
    serde_json::to_string(body).unwrap()
}

/// A chunk with a call is one group of events (the call arrived whole),
/// its usage and finish inside it when the chunk ends the response; a
/// chunk of text alone is none (issue 34).
#[test]
fn a_chunk_with_a_call_is_one_group() {
    let body = sse(&[
        json!({"candidates": [{"content": {"parts": [{"text": "Writing."}]}}]}),
        json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "w", "args": {"path": "a"}}}]}, "finishReason": "STOP"}],
               "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1}}),
    ]);
    assert_eq!(
        decode_ok(&body),
        vec![
            text("Writing."),
            StreamEvent::GroupStart,
            start(2, "jp_call_0", "w"),
            chunk(2, r#"{"path":"a"}"#),
            flush(2),
            flush(TEXT_INDEX),
            usage(3, 1, None),
            StreamEvent::Finished(FinishReason::EndTurn),
            StreamEvent::GroupEnd,
        ]
    );
}
