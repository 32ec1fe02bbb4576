#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures_util::StreamExt as _;
use jp_conversation::{EventBuilder, FlushedEvent};

use super::*;

fn request(assistant_messages: usize) -> ChatRequest {
    let mut messages = vec![Message::User("hi".into())];
    for _ in 0..assistant_messages {
        messages.push(Message::Assistant {
            reasoning: None,
            text: String::new(),
            tool_calls: Vec::new(),
        });
    }
    ChatRequest {
        model: "demo".into(),
        system: None,
        messages,
        tools: Vec::new(),
        max_tokens: 100,
        temperature: None,
        top_p: None,
    }
}

fn collect(provider: &Scripted, turn: usize) -> Vec<Result<StreamEvent, ProviderError>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(provider.stream(request(turn)).collect())
}

#[test]
fn chunks_respect_characters() {
    assert_eq!(chunks("héllo", 2).collect::<Vec<_>>(), ["hé", "ll", "o"]);
    assert_eq!(chunks("", 2).count(), 0);
}

#[test]
fn the_demo_parses_and_ends_every_response() {
    let script = Script::parse(DEMO_SCRIPT, "demo").unwrap();
    assert_eq!(script.responses.len(), 3);
    let provider = Scripted::open("demo", Path::new("/nonexistent")).unwrap();
    for turn in 0..3 {
        let events = collect(&provider, turn);
        assert!(matches!(events.last(), Some(Ok(StreamEvent::Finished(_)))));
    }
    let beyond = collect(&provider, 3);
    assert_eq!(
        beyond,
        vec![Err(ProviderError::Config(
            "scripted: script `demo` has 3 responses and this is request #4 since your last message".into()
        ))]
    );
}

#[test]
fn a_replay_keeps_the_events_before_its_error() {
    // Text, then a delta whose JSON holds a lone surrogate: the text
    // arrives, then the error, as it would over HTTP.
    let script = Script::parse(
        r#"
            [[responses]]
            replay = { format = "anthropic", body = """
event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x\\ud800y"}}

""" }
            "#,
        "inline",
    )
    .unwrap();
    let provider = Scripted::from_script(script, "inline", Path::new("."));
    let events = collect(&provider, 0);
    assert_eq!(
        events[0],
        Ok(StreamEvent::Part {
            index: 0,
            part: EventPart::Message("a".into())
        })
    );
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        matches!(events[1], Err(ProviderError::Decode { .. })),
        "{events:?}"
    );
}

#[test]
fn a_replay_reads_the_openai_responses_format() {
    let script = Script::parse(
        r#"
            [[responses]]
            replay = { format = "openai_responses", body = """
event: response.output_item.added
data: {"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"run_me","arguments":""}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_1","delta":"{}"}

event: response.output_item.done
data: {"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_1","status":"completed","call_id":"call_1","name":"run_me","arguments":"{}"}}

event: response.completed
data: {"type":"response.completed","response":{"status":"completed"}}

""" }
            "#,
        "inline",
    )
    .unwrap();
    let provider = Scripted::from_script(script, "inline", Path::new("."));
    let events: Vec<StreamEvent> = collect(&provider, 0)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        events,
        vec![
            StreamEvent::Part {
                index: 0,
                part: EventPart::ToolCall(ToolCallPart::Start {
                    id: "call_1".into(),
                    name: "run_me".into(),
                }),
            },
            StreamEvent::Part {
                index: 0,
                part: EventPart::ToolCall(ToolCallPart::ArgumentChunk("{}".into())),
            },
            StreamEvent::Flush { index: 0 },
            StreamEvent::Finished(FinishReason::ToolUse),
        ]
    );
}

#[test]
fn tool_calls_stream_in_chunks_and_rebuild() {
    let script = Script::parse(
        r#"
            chunk_size = 3
            [[responses]]
            parts = [
              { text = "Héllo" },
              { tool = "fs_create_file", arguments = { path = "src/a.rs", content = "x" } },
              { tool = "t", id = "mine", arguments = '{"a": 1, "a": 2}' },
            ]
            "#,
        "inline",
    )
    .unwrap();
    let provider = Scripted::from_script(script, "inline", Path::new("."));
    let events: Vec<StreamEvent> = collect(&provider, 0)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        events[..3],
        [
            StreamEvent::Part {
                index: 0,
                part: EventPart::Message("Hé".into())
            },
            StreamEvent::Part {
                index: 0,
                part: EventPart::Message("llo".into())
            },
            StreamEvent::Flush { index: 0 },
        ]
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finished(FinishReason::ToolUse))
    );
    let mut builder = EventBuilder::new();
    let mut flushed = Vec::new();
    for event in events {
        match event {
            StreamEvent::Part { index, part } => {
                builder.handle_part(index, part).unwrap();
            }
            StreamEvent::Flush { index } => flushed.extend(builder.handle_flush(index)),
            _ => {}
        }
    }
    let FlushedEvent::ToolCallRequest(create) = &flushed[1] else {
        panic!("not a call: {flushed:?}")
    };
    assert_eq!(create.id, "call_0_1");
    assert_eq!(
        serde_json::Value::Object(create.arguments().unwrap().clone()),
        serde_json::json!({"path": "src/a.rs", "content": "x"})
    );
    let FlushedEvent::ToolCallRequest(dup) = &flushed[2] else {
        panic!("not a call")
    };
    assert_eq!(dup.id, "mine");
    assert_eq!(
        dup.arguments().unwrap_err().to_string(),
        "duplicate key `a` at /a: arguments with a repeated key are refused because its meaning is ambiguous"
    );
}

#[test]
fn max_tokens_leaves_the_last_call_unflushed() {
    let script = Script::parse(
        r#"
            [[responses]]
            finish = "max_tokens"
            parts = [{ tool = "t", arguments = '{"path": "a' }]
            "#,
        "inline",
    )
    .unwrap();
    let provider = Scripted::from_script(script, "inline", Path::new("."));
    let events: Vec<StreamEvent> = collect(&provider, 0)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::Flush { .. }))
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finished(FinishReason::MaxTokens))
    );
}

#[test]
fn script_errors_name_the_script() {
    assert_eq!(
        Script::parse("[[responses]]\nparts = [{ txt = \"x\" }]", "s.toml")
            .unwrap_err()
            .to_string(),
        "script s.toml: unknown field `txt`, expected one of `text`, `reasoning`, `tool`, `id`, `arguments`"
    );
    assert_eq!(
        Script::parse(
            "[[responses]]\nparts = [{ text = \"x\", tool = \"t\" }]",
            "s.toml"
        )
        .unwrap_err()
        .to_string(),
        "script s.toml: responses[0].parts[0] needs exactly one of `text`, `reasoning` and `tool`"
    );
    assert_eq!(
        Script::parse("chunk_size = 0", "s.toml")
            .unwrap_err()
            .to_string(),
        "script s.toml: chunk_size must be at least 1"
    );
    assert_eq!(
        Scripted::open("missing.toml", Path::new("/nonexistent"))
            .unwrap_err()
            .to_string(),
        "scripted: cannot read the script /nonexistent/missing.toml: no such file or directory (the built-in script is `scripted/demo`)"
    );
}

/// `format = "gemini"` replays through the Gemini decoder, whose calls
/// come without ids: the ids it makes are new to the conversation, as
/// over HTTP.
#[test]
fn a_gemini_replay_makes_call_ids_new_to_the_conversation() {
    let script = Script::parse(
        r#"
            [[responses]]
            parts = [{ tool = "list" }]
            [[responses]]
            replay = { format = "gemini", body = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"functionCall\": {\"name\": \"list\", \"args\": {}}}], \"role\": \"model\"}, \"finishReason\": \"STOP\"}]}\r\n\r\n" }
            "#,
        "inline",
    )
    .unwrap();
    let provider = Scripted::from_script(script, "inline", Path::new("."));
    let mut request = request(0);
    request.messages.push(Message::Assistant {
        reasoning: None,
        text: String::new(),
        tool_calls: vec![super::super::ToolCall {
            id: "jp_call_0".into(),
            name: "list".into(),
            arguments: std::sync::Arc::new(serde_json::json!({})),
        }],
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let events: Vec<_> = runtime.block_on(provider.stream(request).collect());
    assert_eq!(
        events,
        vec![
            // The chunk with the call is one group (issue 34).
            Ok(StreamEvent::GroupStart),
            Ok(StreamEvent::Part {
                index: 2,
                part: EventPart::ToolCall(ToolCallPart::Start {
                    id: "jp_call_1".into(),
                    name: "list".into()
                })
            }),
            Ok(StreamEvent::Part {
                index: 2,
                part: EventPart::ToolCall(ToolCallPart::ArgumentChunk("{}".into()))
            }),
            Ok(StreamEvent::Flush { index: 2 }),
            Ok(StreamEvent::Finished(FinishReason::EndTurn)),
            Ok(StreamEvent::GroupEnd),
        ]
    );
}

/// After a message of the user the script plays from its start again, and
/// the ids it makes up stay new to the conversation.
#[test]
fn a_new_message_plays_the_script_again_with_new_call_ids() {
    let provider = Scripted::open("demo", Path::new("/nonexistent")).unwrap();
    let mut again = request(3);
    again.messages.push(Message::User("once more".into()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let first: Vec<_> = runtime.block_on(provider.stream(request(0)).collect());
    let replayed: Vec<_> = runtime.block_on(provider.stream(again).collect());
    let ids = |events: &[Result<StreamEvent, ProviderError>]| -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                Ok(StreamEvent::Part {
                    part: EventPart::ToolCall(ToolCallPart::Start { id, .. }),
                    ..
                }) => Some(id.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(ids(&first), ["call_0_1"]);
    assert_eq!(ids(&replayed), ["call_3_1"]);
    let without_ids = |events: Vec<Result<StreamEvent, ProviderError>>| {
        events
            .into_iter()
            .filter(|e| {
                !matches!(
                    e,
                    Ok(StreamEvent::Part {
                        part: EventPart::ToolCall(ToolCallPart::Start { .. }),
                        ..
                    })
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(without_ids(first), without_ids(replayed));
}

#[test]
fn arguments_that_are_neither_a_table_nor_a_string_are_said_so() {
    let error = Script::parse(
        "[[responses]]\nparts = [{ tool = \"t\", arguments = 5 }]\n",
        "five.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains(
            "`arguments` must be a table (sent as its JSON) or a string (sent as written), not a number"
        ),
        "{error}"
    );
    assert!(!error.contains("ScriptedArguments"), "{error}");
}
