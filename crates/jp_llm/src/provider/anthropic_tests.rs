//! Tests of the Anthropic request body and decoder: recorded streams fed at
//! many split patterns, hand-written edge cases, and the exact JSON sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_conversation::{FlushedEvent, ToolCallRequest};
use std::sync::Arc;

use serde_json::{Map, json};

use super::*;
use crate::decode::tests::{build, decode, fixture_bodies, fixture_requests, parts};
use crate::provider::{Provider, ToolCall, ToolDefinition, ToolResult};

const TOOL_CALL: &str = "anthropic_test_tool_call_stream.yml";
const MULTI_TURN: &str = "anthropic_test_multi_turn_conversation.yml";

fn usage(input: u64, output: u64) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        cache_read_tokens: Some(0),
        cache_write_tokens: Some(0),
    })
}

fn part(index: usize, part: EventPart) -> StreamEvent {
    StreamEvent::Part { index, part }
}

fn start(id: &str, name: &str) -> EventPart {
    EventPart::ToolCall(ToolCallPart::Start {
        id: id.into(),
        name: name.into(),
    })
}

fn chunk(text: &str) -> EventPart {
    EventPart::ToolCall(ToolCallPart::ArgumentChunk(text.into()))
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
    let body = &fixture_bodies(TOOL_CALL)[0];
    let events = decode_ok(body);
    let id = "toolu_0113bSV1GiCA46VddyWm86oR";
    assert_eq!(
        events,
        vec![
            usage(599, 26),
            part(0, start(id, "run_me")),
            part(0, chunk("{\"bar\": ")),
            part(0, chunk("\"foo\"")),
            part(0, chunk(", \"foo")),
            part(0, chunk("\": \"foo\"}")),
            StreamEvent::Flush { index: 0 },
            usage(599, 71),
            StreamEvent::Finished(FinishReason::ToolUse),
        ]
    );
    assert_eq!(
        build(&events),
        vec![FlushedEvent::ToolCallRequest(ToolCallRequest::new(
            id,
            "run_me",
            object(json!({"bar": "foo", "foo": "foo"}))
        ))]
    );
}

#[test]
fn recorded_answer_to_a_tool_result() {
    let body = &fixture_bodies(TOOL_CALL)[1];
    let texts = [
        "Done",
        "! The tool",
        " ran successfully with the arguments",
        " `",
        "bar",
        "=",
        "foo` and `foo=foo`,",
        " and",
        " returned",
        " the",
        " output:",
        " \"",
        "working!\"",
    ];
    let mut expected = vec![usage(102, 1)];
    expected.extend(parts(0, &texts, EventPart::Message));
    expected.extend([
        StreamEvent::Flush { index: 0 },
        usage(102, 31),
        StreamEvent::Finished(FinishReason::EndTurn),
    ]);
    let events = decode_ok(body);
    assert_eq!(events, expected);
    assert_eq!(build(&events), vec![FlushedEvent::Message(texts.concat())]);
}

#[test]
fn recorded_thinking_then_text() {
    let body = &fixture_bodies(MULTI_TURN)[1];
    let thinking = [
        "The user",
        " is asking me to repeat their previous message",
        ". Their",
        " previous",
        " message was \"Test message\".",
        "\n\nThis",
        " is straight",
        "forward - I should just repeat what",
        " they said.",
    ];
    let mut expected = vec![usage(79, 2)];
    expected.extend(parts(0, &thinking, EventPart::Reasoning));
    expected.push(StreamEvent::Flush { index: 0 });
    expected.extend(parts(1, &["Test", " message"], EventPart::Message));
    expected.extend([
        StreamEvent::Flush { index: 1 },
        usage(79, 46),
        StreamEvent::Finished(FinishReason::EndTurn),
    ]);
    let events = decode_ok(body);
    assert_eq!(events, expected);
    assert_eq!(
        build(&events),
        vec![
            FlushedEvent::Reasoning(thinking.concat()),
            FlushedEvent::Message("Test message".into()),
        ]
    );
}

/// Each response of the recorded conversation, assembled, is what the
/// next recorded request sends back as the assistant's turn.
#[test]
fn recorded_conversation_matches_the_history_sent_back() {
    let bodies = fixture_bodies(MULTI_TURN);
    let requests = fixture_requests(MULTI_TURN);
    for (turn, body) in bodies.iter().enumerate() {
        let flushed = build(&decode_ok(body));
        let content: Vec<Value> = flushed
            .iter()
            .map(|item| match item {
                FlushedEvent::Message(text) => json!({"type": "text", "text": text}),
                FlushedEvent::Reasoning(text) => json!({"type": "thinking", "thinking": text}),
                FlushedEvent::ToolCallRequest(call) => json!({
                    "type": "tool_use",
                    "id": call.id,
                    "input": call.arguments().unwrap(),
                    "name": call.name,
                }),
            })
            .collect();
        let expected = match requests.get(turn + 1) {
            Some(next) => {
                let messages = next["messages"].as_array().unwrap();
                let mut sent = messages[messages.len() - 2]["content"].clone();
                for block in sent.as_array_mut().unwrap() {
                    // jp does not keep signatures (see `request_body`).
                    block.as_object_mut().unwrap().remove("signature");
                }
                sent
            }
            None => json!([
                {"type": "thinking", "thinking": "The user is asking me what the result of the previous tool call was. Looking back at my previous response, I called a tool named \"run_me\" with the parameter `bar=\"foo\"`, and the function result was:\n\n\"The secret code is: 42\"\n\nSo I should tell them that the result was \"The secret code is: 42\"."},
                {"type": "text", "text": "The result of the previous tool call was:\n\n**The secret code is: 42**"},
            ]),
        };
        assert_eq!(Value::Array(content), expected, "turn {turn}");
    }
}

#[test]
fn the_request_sends_the_recorded_history() {
    let request = ChatRequest {
        model: "claude-haiku-4-5".into(),
        system: None,
        messages: vec![
            Message::User("Test message".into()),
            Message::Assistant {
                reasoning: None,
                text: "Hello! I'm Claude, an AI assistant made by Anthropic. Your message came through successfully. \n\nHow can I help you today?".into(),
                tool_calls: vec![],
            },
            Message::User("Repeat my previous message".into()),
            Message::Assistant {
                reasoning: Some("The user is asking me to repeat their previous message.".into()),
                text: "Test message".into(),
                tool_calls: vec![],
            },
            Message::User("Please run the tool, providing whatever arguments you want.".into()),
            Message::Assistant {
                reasoning: None,
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "toolu_01DA4zUaee3mDboviuzJpwdE".into(),
                    name: "run_me".into(),
                    arguments: Arc::new(json!({"bar": "foo"})),
                }],
            },
            Message::ToolResults(vec![ToolResult {
                id: "toolu_01DA4zUaee3mDboviuzJpwdE".into(),
                content: "The secret code is: 42".into(),
                is_error: false,
            }]),
            Message::Assistant {
                reasoning: None,
                text: "I've run the tool with the argument `bar=\"foo\"`. The tool returned \"The secret code is: 42\". \n\nIs there something specific you'd like me to do with this result?".into(),
                tool_calls: vec![],
            },
            Message::User("What was the result of the previous tool call?".into()),
        ],
        tools: vec![],
        max_tokens: 64000,
        temperature: None,
        top_p: None,
    };
    let mut recorded = fixture_requests(MULTI_TURN)[4]["messages"].clone();
    // The recorded client sent the thinking block back; jp leaves it out
    // (see `request_body`).
    for message in recorded.as_array_mut().unwrap() {
        message["content"]
            .as_array_mut()
            .unwrap()
            .retain(|block| block["type"] != "thinking");
    }
    let body = body_value(&request_body(&request, Caching::Off));
    assert_eq!(body["messages"], recorded);
    assert_eq!(
        body,
        json!({
            "model": "claude-haiku-4-5",
            "max_tokens": 64000,
            "messages": recorded,
            "stream": true,
        })
    );
}

/// A request with a system prompt, tools, parallel calls, an error result
/// and an empty assistant turn.
fn request_with_everything() -> ChatRequest {
    ChatRequest {
        model: "claude-sonnet-4-5".into(),
        system: Some("Be brief.".into()),
        messages: vec![
            Message::User("Make a file.".into()),
            Message::Assistant {
                reasoning: None,
                text: "Creating it.".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "toolu_1".into(),
                        name: "fs_create_file".into(),
                        arguments: Arc::new(json!({"path": "a.rs", "content": ""})),
                    },
                    ToolCall {
                        id: "toolu_2".into(),
                        name: "fs_list_files".into(),
                        arguments: Arc::new(json!({})),
                    },
                ],
            },
            Message::ToolResults(vec![
                ToolResult {
                    id: "toolu_1".into(),
                    content: "created a.rs".into(),
                    is_error: false,
                },
                ToolResult {
                    id: "toolu_2".into(),
                    content: "declined by policy".into(),
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
                description: Some("Create a file.".into()),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            },
            ToolDefinition {
                name: "fs_list_files".into(),
                description: None,
                parameters: json!({"type": "object", "properties": {}}),
            },
        ],
        max_tokens: 1024,
        temperature: Some(0.5),
        top_p: Some(0.9),
    }
}

/// Without caching the body is the one jp sent before caching existed:
/// this expectation predates it, unchanged.
#[test]
fn request_body_with_everything() {
    let request = request_with_everything();
    assert_eq!(
        body_text(&request_body(&request, Caching::Off)),
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Make a file."}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Creating it."},
                    {"type": "tool_use", "id": "toolu_1", "name": "fs_create_file",
                     "input": {"path": "a.rs", "content": ""}},
                    {"type": "tool_use", "id": "toolu_2", "name": "fs_list_files", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1",
                     "content": "created a.rs", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "toolu_2",
                     "content": "declined by policy", "is_error": true},
                ]},
            ],
            "tools": [
                {"name": "fs_create_file", "description": "Create a file.",
                 "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
                {"name": "fs_list_files", "input_schema": {"type": "object", "properties": {}}},
            ],
            "temperature": 0.5,
            "top_p": 0.9,
            "stream": true,
        })
        .to_string()
    );
}

/// With caching, the system prompt becomes one marked `text` block (it
/// covers the tools before it), and the history is marked on its last
/// block and where the previous request ended (the message before the
/// last assistant response); nothing else changes.
#[test]
fn request_body_with_everything_cached() {
    let request = request_with_everything();
    assert_eq!(
        body_text(&request_body(&request, Caching::Breakpoints)),
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": [
                {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}},
            ],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "Make a file.",
                     "cache_control": {"type": "ephemeral"}},
                ]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Creating it."},
                    {"type": "tool_use", "id": "toolu_1", "name": "fs_create_file",
                     "input": {"path": "a.rs", "content": ""}},
                    {"type": "tool_use", "id": "toolu_2", "name": "fs_list_files", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1",
                     "content": "created a.rs", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "toolu_2",
                     "content": "declined by policy", "is_error": true,
                     "cache_control": {"type": "ephemeral"}},
                ]},
            ],
            "tools": [
                {"name": "fs_create_file", "description": "Create a file.",
                 "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
                {"name": "fs_list_files", "input_schema": {"type": "object", "properties": {}}},
            ],
            "temperature": 0.5,
            "top_p": 0.9,
            "stream": true,
        })
        .to_string()
    );
}

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        description: None,
        parameters: json!({"type": "object"}),
    }
}

fn call(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "fs_read_file".into(),
        arguments: Arc::new(json!({"path": "a.rs"})),
    }
}

fn calling(id: &str) -> Message {
    Message::Assistant {
        reasoning: None,
        text: String::new(),
        tool_calls: vec![call(id)],
    }
}

fn result(id: &str, content: &str) -> Message {
    Message::ToolResults(vec![ToolResult {
        id: id.into(),
        content: content.into(),
        is_error: false,
    }])
}

/// Without a system prompt the tools' breakpoint is on the last tool; the
/// first request of a conversation has one history breakpoint, on the
/// user's message.
#[test]
fn first_request_without_a_system_prompt_marks_the_last_tool() {
    let request = ChatRequest {
        model: "m".into(),
        system: None,
        messages: vec![Message::User("Read a.rs".into())],
        tools: vec![tool("fs_read_file"), tool("fs_list_files")],
        max_tokens: 10,
        temperature: None,
        top_p: None,
    };
    assert_eq!(
        body_text(&request_body(&request, Caching::Breakpoints)),
        json!({
            "model": "m",
            "max_tokens": 10,
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "Read a.rs", "cache_control": {"type": "ephemeral"}},
                ]},
            ],
            "tools": [
                {"name": "fs_read_file", "input_schema": {"type": "object"}},
                {"name": "fs_list_files", "input_schema": {"type": "object"},
                 "cache_control": {"type": "ephemeral"}},
            ],
            "stream": true,
        })
        .to_string()
    );
}

/// Step 3 of a tool loop: the last tool result is marked, and so is the
/// result the previous request ended with; the first step's result, read
/// from the cache through the later marks, is not.
#[test]
fn a_tool_loop_marks_the_last_result_and_the_previous_end() {
    let request = ChatRequest {
        model: "m".into(),
        system: Some("Be brief.".into()),
        messages: vec![
            Message::User("Read a.rs twice".into()),
            calling("toolu_1"),
            result("toolu_1", "fn a() {}"),
            calling("toolu_2"),
            result("toolu_2", "fn a() {}"),
        ],
        tools: vec![tool("fs_read_file")],
        max_tokens: 10,
        temperature: None,
        top_p: None,
    };
    let use_block = |id: &str| {
        json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": "fs_read_file", "input": {"path": "a.rs"}},
        ]})
    };
    assert_eq!(
        body_text(&request_body(&request, Caching::Breakpoints)),
        json!({
            "model": "m",
            "max_tokens": 10,
            "system": [
                {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}},
            ],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Read a.rs twice"}]},
                use_block("toolu_1"),
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "fn a() {}",
                     "is_error": false, "cache_control": {"type": "ephemeral"}},
                ]},
                use_block("toolu_2"),
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "fn a() {}",
                     "is_error": false, "cache_control": {"type": "ephemeral"}},
                ]},
            ],
            "tools": [{"name": "fs_read_file", "input_schema": {"type": "object"}}],
            "stream": true,
        })
        .to_string()
    );
}

/// A new turn after a tool loop: the user's message is marked, and the
/// last result before the final answer (where the previous request ended).
#[test]
fn a_new_turn_marks_the_user_message_and_the_previous_end() {
    let request = ChatRequest {
        model: "m".into(),
        system: None,
        messages: vec![
            Message::User("Read a.rs".into()),
            calling("toolu_1"),
            result("toolu_1", "fn a() {}"),
            Message::Assistant {
                reasoning: None,
                text: "It defines a.".into(),
                tool_calls: vec![],
            },
            Message::User("Thanks".into()),
        ],
        tools: vec![],
        max_tokens: 10,
        temperature: None,
        top_p: None,
    };
    let body = body_value(&request_body(&request, Caching::Breakpoints));
    let marked: Vec<(usize, usize)> = blocks_marked(&body);
    assert_eq!(marked, [(2, 0), (4, 0)]);
    assert_eq!(body.get("tools"), None);
    assert_eq!(body.get("system"), None);
}

/// An empty `text` block cannot carry a breakpoint (Anthropic refuses
/// it); it is left unmarked.
#[test]
fn an_empty_text_block_is_not_marked() {
    let request = ChatRequest {
        model: "m".into(),
        system: Some(String::new()),
        messages: vec![Message::User(String::new())],
        tools: vec![],
        max_tokens: 10,
        temperature: None,
        top_p: None,
    };
    assert_eq!(
        body_text(&request_body(&request, Caching::Breakpoints)),
        body_text(&request_body(&request, Caching::Off)),
    );
}

/// The `(message, block)` positions that carry `cache_control`.
fn blocks_marked(body: &Value) -> Vec<(usize, usize)> {
    let mut marked = Vec::new();
    for (m, message) in body["messages"].as_array().unwrap().iter().enumerate() {
        for (b, block) in message["content"].as_array().unwrap().iter().enumerate() {
            if block.get("cache_control").is_some() {
                marked.push((m, b));
            }
        }
    }
    marked
}

#[test]
fn the_api_marks_breakpoints_unless_told_not_to() {
    let request = request_with_everything();
    let api = |caching| MessagesApi {
        api_key: Secret::new("k"),
        caching,
    };
    for caching in [Caching::Breakpoints, Caching::Off] {
        assert_eq!(
            body_text(&api(caching).body(&request)),
            body_text(&request_body(&request, caching))
        );
    }
    assert_eq!(Caching::from(true), Caching::Breakpoints);
    assert_eq!(Caching::from(false), Caching::Off);
}

/// Usage as Anthropic streams it when the cache is used (the shape of the
/// recorded `message_start` and `message_delta` events): Anthropic's
/// `input_tokens` are the uncached ones, beside the reads and writes, and
/// jp's are all three together (12 + 5,231 + 1,860).
#[test]
fn usage_reports_cache_reads_and_writes() {
    let body = sse(&[
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":1860,"cache_read_input_tokens":5231,"cache_creation":{"ephemeral_5m_input_tokens":1860,"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard"}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Done."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":12,"cache_creation_input_tokens":1860,"cache_read_input_tokens":5231,"output_tokens":9}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    let cached = |output| {
        StreamEvent::Usage(Usage {
            input_tokens: Some(7103),
            output_tokens: Some(output),
            cache_read_tokens: Some(5231),
            cache_write_tokens: Some(1860),
        })
    };
    assert_eq!(
        decode_ok(&body),
        vec![
            cached(1),
            part(0, EventPart::Message("Done.".into())),
            StreamEvent::Flush { index: 0 },
            cached(9),
            StreamEvent::Finished(FinishReason::EndTurn),
        ]
    );
}

/// A `message_delta` that reports only output tokens keeps the cache
/// counts `message_start` gave (and the input they add to: 3 + 2,048).
#[test]
fn usage_keeps_cache_counts_across_events() {
    let body = sse(&[
        r#"{"type":"message_start","message":{"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":2048,"output_tokens":1}}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    assert_eq!(
        decode_ok(&body)[1],
        StreamEvent::Usage(Usage {
            input_tokens: Some(2051),
            output_tokens: Some(5),
            cache_read_tokens: Some(2048),
            cache_write_tokens: Some(0),
        })
    );
}

/// A body made of `data` lines, each its own event.
fn sse(events: &[&str]) -> Vec<u8> {
    events
        .iter()
        .map(|data| format!("event: x\ndata: {data}\n\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn error_event_after_text() {
    let body = sse(&[
        r#"{"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi"}}"#,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"never seen"}}"#,
    ]);
    assert_eq!(
        decode(Decoder::new, &body),
        (
            vec![
                StreamEvent::Usage(Usage {
                    input_tokens: Some(3),
                    output_tokens: Some(1),
                    cache_read_tokens: None,
                    cache_write_tokens: None,
                }),
                part(0, EventPart::Message("Hi".into())),
            ],
            Some(ProviderError::Api {
                provider: "anthropic".into(),
                kind: "overloaded_error".into(),
                message: "Overloaded".into(),
            })
        )
    );
}

#[test]
fn tool_call_cut_by_max_tokens_is_refused() {
    let body = sse(&[
        r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Writing."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_9","name":"fs_create_file","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"src/a.rs\", \"content\": \"fn ma"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":20}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    let events = decode_ok(&body);
    assert_eq!(
        events[events.len() - 2..],
        [
            StreamEvent::Usage(Usage {
                input_tokens: Some(10),
                output_tokens: Some(20),
                cache_read_tokens: None,
                cache_write_tokens: None,
            }),
            StreamEvent::Finished(FinishReason::MaxTokens),
        ]
    );
    let flushed = build(&events);
    assert_eq!(flushed[0], FlushedEvent::Message("Writing.".into()));
    let FlushedEvent::ToolCallRequest(call) = &flushed[1] else {
        panic!("not a tool call: {flushed:?}");
    };
    assert_eq!(
        (call.id.as_str(), call.name.as_str()),
        ("toolu_9", "fs_create_file")
    );
    assert_eq!(
        call.arguments().unwrap_err().to_string(),
        "arguments are truncated: input ended inside a string at /content"
    );
    assert_eq!(
        call.received_arguments(),
        &object(json!({"path": "src/a.rs"}))
    );
}

#[test]
fn a_body_without_message_stop_is_a_disconnection() {
    let body = &fixture_bodies(TOOL_CALL)[0];
    let cut = body.len()
        - "event: message_stop\ndata: {\"type\":\"message_stop\"               }\n\n".len();
    let (events, error) = decode(Decoder::new, &body[..cut]);
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finished(FinishReason::ToolUse))
    );
    assert_eq!(
        error.unwrap().to_string(),
        "anthropic: the connection dropped mid-response: \
         the response ended before its `message_stop` event"
    );
}

#[test]
fn invalid_json_names_the_event_and_shows_it() {
    let body = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n\
                 event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\n\n";
    let (events, error) = decode(Decoder::new, body);
    assert_eq!(events, vec![]);
    assert_eq!(
        error.unwrap().to_string(),
        "anthropic: unreadable response: event `content_block_start` (line 4): \
         EOF while parsing a value at line 1 column 40: \
         `{\"type\":\"content_block_start\",\"index\":0,`"
    );
}

#[test]
fn structural_errors_name_the_block() {
    let delta_first = sse(&[
        r#"{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}"#,
    ]);
    assert_eq!(
        decode(Decoder::new, &delta_first).1.unwrap().to_string(),
        "anthropic: unreadable response: event `x` (line 1): \
         a delta for content block 3, which has not started"
    );
    let wrong_kind = sse(&[
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}"#,
    ]);
    assert_eq!(
        decode(Decoder::new, &wrong_kind).1.unwrap().to_string(),
        "anthropic: unreadable response: event `x` (line 4): \
         a tool_use delta for content block 0, which is a text block"
    );
    let missing_field = sse(&[r#"{"type":"content_block_stop"}"#]);
    assert_eq!(
        decode(Decoder::new, &missing_field).1.unwrap().to_string(),
        "anthropic: unreadable response: event `x` (line 1): \
         missing field `index`: `{\"type\":\"content_block_stop\"}`"
    );
}

#[test]
fn unknown_events_blocks_and_deltas_are_skipped() {
    let body = sse(&[
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"xyz"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"something_new","x":1}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"brand_new_event"}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"n","input":{"a":1}}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"message_stop"}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"after the end"}}"#,
    ]);
    assert_eq!(
        decode_ok(&body),
        vec![
            part(1, start("t", "n")),
            part(1, chunk("{\"a\":1}")),
            StreamEvent::Flush { index: 1 },
        ]
    );
}

#[test]
fn provider_basics() {
    let provider = Anthropic::new("http://localhost:1234/", "sk-secret");
    assert_eq!(provider.name(), "anthropic");
    assert_eq!(
        format!("{provider:?}"),
        "Anthropic { base_url: \"http://localhost:1234\", api_key: \"<redacted>\", \
         retry: RetryPolicy { max_attempts: 5, base_delay: 1s, max_delay: 30s } }"
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

/// Counts near `u64::MAX` (a broken or hostile server's) never wrap the
/// sum of uncached and cached input, and any count over
/// `MAX_REPORTED_TOKENS` is unknown.
#[test]
fn absurd_usage_is_unknown_and_never_wraps() {
    use crate::provider::MAX_REPORTED_TOKENS;
    let max = MAX_REPORTED_TOKENS;
    // (input, cache read, cache write, output) as sent => as jp takes them.
    let cases: [((u64, u64, u64, u64), Usage); 4] = [
        (
            (u64::MAX - 5, 10, 0, 3),
            Usage {
                input_tokens: None,
                output_tokens: Some(3),
                cache_read_tokens: Some(10),
                cache_write_tokens: Some(0),
            },
        ),
        (
            (5, u64::MAX, u64::MAX, u64::MAX),
            Usage {
                input_tokens: None,
                output_tokens: None,
                cache_read_tokens: None,
                cache_write_tokens: None,
            },
        ),
        (
            (max, 0, 0, max),
            Usage {
                input_tokens: Some(max),
                output_tokens: Some(max),
                cache_read_tokens: Some(0),
                cache_write_tokens: Some(0),
            },
        ),
        (
            (max, 1, 0, max + 1),
            Usage {
                input_tokens: None,
                output_tokens: None,
                cache_read_tokens: Some(1),
                cache_write_tokens: Some(0),
            },
        ),
    ];
    for ((input, read, write, output), expected) in cases {
        let start = format!(
            r#"{{"type":"message_start","message":{{"usage":{{"input_tokens":{input},"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read},"output_tokens":{output}}}}}}}"#
        );
        let body = sse(&[
            &start,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        assert_eq!(
            decode_ok(&body),
            vec![
                StreamEvent::Usage(expected),
                StreamEvent::Finished(FinishReason::EndTurn),
            ],
            "{start}"
        );
    }
}
