//! The EventBuilder as the turn loop uses it: parts in, argument progress and
//! complete tool calls out.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_conversation::{
    ArgParseError, ArgumentsError, EventBuilder, EventBuilderError, EventPart, FlushedEvent,
    JsonPointer, StreamFragment, ToolCallPart, ToolCallRequest, TruncatedIn,
};
use serde_json::{Value, json};

fn start(id: &str, name: &str) -> EventPart {
    EventPart::ToolCall(ToolCallPart::Start {
        id: id.into(),
        name: name.into(),
    })
}

fn chunk(text: &str) -> EventPart {
    EventPart::ToolCall(ToolCallPart::ArgumentChunk(text.into()))
}

fn flush_call(builder: &mut EventBuilder, index: usize) -> ToolCallRequest {
    match builder.handle_flush(index) {
        Some(FlushedEvent::ToolCallRequest(request)) => request,
        other => panic!("expected a tool call at index {index}, got {other:?}"),
    }
}

/// Streams `arguments` for one call in chunks of `size` characters.
fn stream_call(arguments: &str, size: usize) -> (ToolCallRequest, Vec<StreamFragment>) {
    let mut builder = EventBuilder::new();
    builder
        .handle_part(0, start("call_1", "fs_create_file"))
        .unwrap();
    let chars: Vec<char> = arguments.chars().collect();
    let mut fragments = Vec::new();
    for piece in chars.chunks(size) {
        let text: String = piece.iter().collect();
        for progress in builder.handle_part(0, chunk(&text)).unwrap() {
            assert_eq!(progress.tool_call_id, "call_1");
            assert_eq!(progress.tool_name, "fs_create_file");
            fragments.push(progress.fragment);
        }
    }
    (flush_call(&mut builder, 0), fragments)
}

#[test]
fn arguments_arriving_whole_or_in_pieces_give_the_same_call() {
    let arguments =
        r#"{"path":"src/main.rs","content":"fn main() {\n    println!(\"h\u00e9\");\n}\n"}"#;
    let (whole, _) = stream_call(arguments, usize::MAX);
    let expected: Value = serde_json::from_str(arguments).unwrap();
    assert_eq!(Value::Object(whole.arguments().unwrap().clone()), expected);
    for size in [1, 2, 3, 7, 64] {
        let (pieces, fragments) = stream_call(arguments, size);
        assert_eq!(pieces, whole, "chunks of {size}");
        assert_eq!(fragments.last(), Some(&StreamFragment::Done));
    }
}

#[test]
fn progress_reports_short_arguments_before_the_long_one_ends() {
    let mut builder = EventBuilder::new();
    builder
        .handle_part(3, start("toolu_1", "fs_create_file"))
        .unwrap();
    let first = builder
        .handle_part(3, chunk(r#"{"path": "src/x.rs", "content": "line 1\n"#))
        .unwrap();
    let shown: Vec<String> = first.iter().map(|p| p.fragment.to_string()).collect();
    assert_eq!(
        shown,
        vec![
            r#"/path += "src/x.rs""#,
            "/path: done",
            r#"/content += "line 1\n""#
        ]
    );
    let rest = builder.handle_part(3, chunk(r#"line 2"}"#)).unwrap();
    let shown: Vec<String> = rest.iter().map(|p| p.fragment.to_string()).collect();
    assert_eq!(
        shown,
        vec![r#"/content += "line 2""#, "/content: done", "(root): done"]
    );
    let call = flush_call(&mut builder, 3);
    assert_eq!(
        Value::Object(call.arguments().unwrap().clone()),
        json!({"path": "src/x.rs", "content": "line 1\nline 2"})
    );
}

#[test]
fn interleaved_parallel_calls_keep_separate_parsers() {
    let mut builder = EventBuilder::new();
    builder.handle_part(0, start("a", "fs_read_file")).unwrap();
    builder.handle_part(1, start("b", "fs_read_file")).unwrap();
    let parts = [
        (0, r#"{"pa"#),
        (1, r#"{"path":"#),
        (0, r#"th":"one"#),
        (1, r#""two"}"#),
        (0, ".rs\"}"),
    ];
    let mut ids = Vec::new();
    for (index, text) in parts {
        for progress in builder.handle_part(index, chunk(text)).unwrap() {
            ids.push((progress.tool_call_id, progress.fragment.to_string()));
        }
    }
    assert_eq!(
        ids,
        vec![
            ("a".into(), r#"/path += "one""#.into()),
            ("b".into(), r#"/path += "two""#.into()),
            ("b".into(), "/path: done".into()),
            ("b".into(), "(root): done".into()),
            ("a".into(), r#"/path += ".rs""#.into()),
            ("a".into(), "/path: done".into()),
            ("a".into(), "(root): done".into()),
        ]
    );
    let second = flush_call(&mut builder, 1);
    let first = flush_call(&mut builder, 0);
    assert_eq!(
        Value::Object(first.arguments().unwrap().clone()),
        json!({"path": "one.rs"})
    );
    assert_eq!(
        Value::Object(second.arguments().unwrap().clone()),
        json!({"path": "two"})
    );
    assert!(builder.is_empty());
}

fn invalid_message(arguments: &[&str]) -> String {
    let mut builder = EventBuilder::new();
    builder.handle_part(0, start("c", "t")).unwrap();
    for text in arguments {
        builder.handle_part(0, chunk(text)).unwrap();
    }
    let call = flush_call(&mut builder, 0);
    let error = call.arguments().expect_err("arguments were accepted");
    error.to_string()
}

#[test]
fn unusable_arguments_mark_the_call_invalid_with_the_reason() {
    assert_eq!(
        invalid_message(&[r#"{"path":"a.rs","patterns":[{"old":"fn ma"#]),
        "arguments are truncated: input ended inside a string at /patterns/0/old"
    );
    assert_eq!(
        invalid_message(&[r#"{"path": 'a'}"#]),
        "invalid JSON at byte 9: expected a JSON value, found '\\''"
    );
    assert_eq!(
        invalid_message(&["[1,2]"]),
        "tool arguments must be a JSON object, got an array"
    );
    assert_eq!(
        invalid_message(&[r#"{"path":"src/a.rs","#, r#""path":"/etc/passwd"}"#]),
        "duplicate key `path` at /path: arguments with a repeated key are refused because its meaning is ambiguous"
    );
    // Keys come from the model: control characters never reach the terminal.
    assert_eq!(
        invalid_message(&[r#"{"\u001b[2J":1,"\u001b[2J":2}"#]),
        "duplicate key `\\u{001b}[2J` at /\\u{001b}[2J: arguments with a repeated key are refused because its meaning is ambiguous"
    );
    assert_eq!(
        invalid_message(&[r#"{"p":[{"x":1,"x":2}]}"#]),
        "duplicate key `x` at /p/0/x: arguments with a repeated key are refused because its meaning is ambiguous"
    );
}

#[test]
fn a_truncated_call_keeps_the_arguments_that_were_complete() {
    let mut builder = EventBuilder::new();
    builder
        .handle_part(0, start("c", "fs_create_file"))
        .unwrap();
    builder
        .handle_part(0, chunk(r#"{"path":"src/a.rs","content":"par"#))
        .unwrap();
    let call = flush_call(&mut builder, 0);
    assert_eq!(
        Value::Object(call.received_arguments().clone()),
        json!({"path": "src/a.rs"})
    );
    assert!(matches!(call.error(), Some(ArgumentsError::Parse(e)) if e.is_truncated()));
}

#[test]
fn chunks_after_an_error_are_ignored() {
    let mut builder = EventBuilder::new();
    builder.handle_part(0, start("c", "t")).unwrap();
    assert_eq!(builder.argument_error(0), None);
    assert_eq!(builder.handle_part(0, chunk("{]")).unwrap(), vec![]);
    // A streaming consumer learns at once that this call will be refused.
    assert_eq!(
        builder
            .argument_error(0)
            .map(ToString::to_string)
            .as_deref(),
        Some("invalid JSON at byte 1: expected a string key or '}', found ']'")
    );
    assert_eq!(builder.handle_part(0, chunk(r#""a":1}"#)).unwrap(), vec![]);
    let call = flush_call(&mut builder, 0);
    assert_eq!(
        call.error().unwrap().to_string(),
        "invalid JSON at byte 1: expected a string key or '}', found ']'"
    );
}

#[test]
fn a_call_without_argument_text_has_empty_arguments() {
    for chunks in [&[][..], &[""][..], &["", "  "][..], &["{}"][..]] {
        let mut builder = EventBuilder::new();
        builder.handle_part(0, start("c", "list_items")).unwrap();
        for text in chunks {
            builder.handle_part(0, chunk(text)).unwrap();
        }
        let call = flush_call(&mut builder, 0);
        assert_eq!(call.arguments(), Ok(&serde_json::Map::new()), "{chunks:?}");
    }
}

#[test]
fn an_interrupted_stream_keeps_everything_and_trusts_no_open_call() {
    let mut builder = EventBuilder::new();
    builder
        .handle_part(0, EventPart::Reasoning("think".into()))
        .unwrap();
    builder
        .handle_part(1, EventPart::Message("Hel".into()))
        .unwrap();
    builder
        .handle_part(0, EventPart::Reasoning("ing".into()))
        .unwrap();
    builder
        .handle_part(1, EventPart::Message("lo".into()))
        .unwrap();
    builder.handle_part(2, start("c", "t")).unwrap();
    builder.handle_part(2, chunk(r#"{"a":"#)).unwrap();
    builder.handle_part(3, start("d", "list_items")).unwrap();
    builder.handle_part(4, start("e", "t")).unwrap();
    builder.handle_part(4, chunk(r#"{"done":true}"#)).unwrap();
    let mut a = JsonPointer::root();
    a.push_key("a");
    assert_eq!(
        builder.interrupt(),
        vec![
            FlushedEvent::Reasoning("thinking".into()),
            FlushedEvent::Message("Hello".into()),
            FlushedEvent::ToolCallRequest(ToolCallRequest::invalid(
                "c",
                "t",
                serde_json::Map::new(),
                ArgumentsError::Parse(ArgParseError::Truncated {
                    path: a,
                    context: TruncatedIn::BeforeValue,
                }),
            )),
            // The provider never completed this call, so "no arguments" is
            // not a conclusion jp may draw.
            FlushedEvent::ToolCallRequest(ToolCallRequest::invalid(
                "d",
                "list_items",
                serde_json::Map::new(),
                ArgumentsError::Parse(ArgParseError::Truncated {
                    path: JsonPointer::root(),
                    context: TruncatedIn::NoValue,
                }),
            )),
            // Complete JSON is self-delimiting: nothing can follow its `}`.
            FlushedEvent::ToolCallRequest(ToolCallRequest::new(
                "e",
                "t",
                json!({"done": true}).as_object().unwrap().clone(),
            )),
        ]
    );
    assert!(builder.is_empty());
    assert_eq!(builder.handle_flush(0), None);
}

#[test]
fn parts_that_do_not_fit_their_index_are_errors() {
    let mut builder = EventBuilder::new();
    assert_eq!(
        builder.handle_part(4, chunk("{}")),
        Err(EventBuilderError::ChunkWithoutStart { index: 4 })
    );
    builder
        .handle_part(0, EventPart::Message("hi".into()))
        .unwrap();
    assert_eq!(
        builder.handle_part(0, chunk("{}")).unwrap_err().to_string(),
        "an argument chunk part at index 0, which already holds a message"
    );
    assert_eq!(
        builder
            .handle_part(0, start("c", "t"))
            .unwrap_err()
            .to_string(),
        "a tool call start part at index 0, which already holds a message"
    );
    builder.handle_part(1, start("c", "t")).unwrap();
    assert_eq!(
        builder
            .handle_part(1, start("c2", "t"))
            .unwrap_err()
            .to_string(),
        "a second tool call start at index 1"
    );
    assert_eq!(
        builder
            .handle_part(1, EventPart::Reasoning("x".into()))
            .unwrap_err()
            .to_string(),
        "reasoning part at index 1, which already holds a tool call"
    );
}

/// The argument chunks Anthropic really sent (padded JSON, an empty first
/// `input_json_delta`), taken from a recorded stream.
#[test]
fn recorded_anthropic_stream_builds_the_recorded_call() {
    // The workspace's provider recordings live in jp_test_server, which
    // this crate does not depend on.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../jp_test_server/tests/data/providers/anthropic_test_tool_call_stream.yml"
    );
    let recording = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read the recording {path}: {e}"));
    let mut builder = EventBuilder::new();
    let mut calls = Vec::new();
    let mut chunks = 0;
    for line in recording.lines() {
        let Some(data) = line.trim_start().strip_prefix("data: ") else {
            continue;
        };
        let event: Value = serde_json::from_str(data).unwrap();
        let index = event["index"].as_u64().unwrap_or(0) as usize;
        match event["type"].as_str().unwrap() {
            "content_block_start" if event["content_block"]["type"] == "tool_use" => {
                let block = &event["content_block"];
                let part = start(
                    block["id"].as_str().unwrap(),
                    block["name"].as_str().unwrap(),
                );
                builder.handle_part(index, part).unwrap();
            }
            "content_block_delta" if event["delta"]["type"] == "input_json_delta" => {
                chunks += 1;
                let text = event["delta"]["partial_json"].as_str().unwrap();
                builder.handle_part(index, chunk(text)).unwrap();
            }
            "content_block_stop" => {
                if let Some(FlushedEvent::ToolCallRequest(call)) = builder.handle_flush(index) {
                    calls.push(call);
                }
            }
            _ => {}
        }
    }
    assert_eq!(
        chunks, 5,
        "the recording streams its arguments in five deltas"
    );
    let arguments: Vec<Value> = calls
        .iter()
        .map(|c| {
            assert_eq!(c.name, "run_me");
            Value::Object(c.arguments().unwrap().clone())
        })
        .collect();
    assert_eq!(arguments, vec![json!({"bar": "foo", "foo": "foo"})]);
}

/// `handle_part_with` hands out the progress `handle_part` returns, and
/// with each piece a view of the call as it is after that piece: the
/// top-level arguments complete by then, the call's bytes counting the
/// chunk being handled, and the other calls (issue 14).
#[test]
fn handle_part_with_hands_out_the_same_progress_with_a_view_of_the_call() {
    let text = r#"{"path":"a.rs","n":[1,2],"x":"yz"}"#;
    let mut owned = EventBuilder::new();
    owned.handle_part(0, start("c", "t")).unwrap();
    let expected: Vec<String> = owned
        .handle_part(0, chunk(text))
        .unwrap()
        .iter()
        .map(|p| format!("{} {} {}", p.tool_call_id, p.tool_name, p.fragment))
        .collect();

    let mut builder = EventBuilder::new();
    builder.handle_part(0, start("c", "t")).unwrap();
    builder.handle_part(1, start("d", "u")).unwrap();
    builder.handle_part(1, chunk(r#"{"a":"#)).unwrap();
    let mut seen = Vec::new();
    builder
        .handle_part_with(0, chunk(text), |progress, view| {
            seen.push(format!(
                "{} {} {}",
                progress.tool_call_id, progress.tool_name, progress.fragment
            ));
            if let Some(key) = progress.fragment.completes_argument() {
                seen.push(format!(
                    "  {key} = {} ({} bytes; other call: {} bytes)",
                    view.argument(key).unwrap(),
                    view.argument_bytes(),
                    view.others().argument_bytes(1),
                ));
            }
        })
        .unwrap();
    let arguments: Vec<&str> = seen
        .iter()
        .filter(|line| line.starts_with("  "))
        .map(String::as_str)
        .collect();
    assert_eq!(
        arguments,
        [
            "  path = \"a.rs\" (34 bytes; other call: 5 bytes)",
            "  n = [1,2] (34 bytes; other call: 5 bytes)",
            "  x = \"yz\" (34 bytes; other call: 5 bytes)",
        ]
    );
    let progress: Vec<String> = seen
        .into_iter()
        .filter(|line| !line.starts_with("  "))
        .collect();
    assert_eq!(progress, expected);
    assert_eq!(
        Value::Object(flush_call(&mut builder, 0).arguments().unwrap().clone()),
        json!({"path": "a.rs", "n": [1, 2], "x": "yz"})
    );
}
