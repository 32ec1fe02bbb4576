//! Response bodies in each provider's wire format, for scenarios the
//! recordings do not cover (our own tools, denials, faults). They copy the
//! quirks of the recordings in `jp_test_server/tests/data/providers`:
//! Anthropic's padded `data:` JSON, `ping` events and empty first
//! `input_json_delta`; OpenRouter's comment lines and repeated finish
//! chunks; Ollama's arguments arriving whole; Gemini's CRLF events, calls
//! arriving whole without ids, and usage in every chunk.

#![allow(dead_code)]

use serde_json::{Value, json};

/// One item of a scripted response.
pub enum Item<'a> {
    /// Assistant text.
    Text(&'a str),
    /// A tool call: id, name and the arguments' exact JSON text.
    Tool(&'a str, &'a str, &'a str),
}

/// An Anthropic response that calls one tool and stops for its result.
pub fn tool_reply(id: &str, name: &str, args: &str) -> jp_test_server::Reply {
    jp_test_server::Reply::sse(anthropic(&[Item::Tool(id, name, args)], "tool_use", false))
}

/// An Anthropic response that answers `text` and ends the turn.
pub fn text_reply(text: &str) -> jp_test_server::Reply {
    jp_test_server::Reply::sse(anthropic(&[Item::Text(text)], "end_turn", false))
}

fn pieces(text: &str, size: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = size.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        out.push(rest[..end].to_owned());
        rest = &rest[end..];
    }
    out
}

fn sse(out: &mut String, event: &str, data: &Value, pad: usize) {
    out.push_str(&format!(
        "event: {event}\ndata: {}{}\n\n",
        data,
        " ".repeat(pad)
    ));
}

/// An Anthropic Messages stream. `stop_reason` is what `message_delta`
/// says; with `cut` the last block gets no `content_block_stop` (a
/// response cut off by `max_tokens`).
pub fn anthropic(items: &[Item<'_>], stop_reason: &str, cut: bool) -> String {
    let mut out = String::new();
    sse(
        &mut out,
        "message_start",
        &json!({"type": "message_start", "message": {"model": "claude-haiku-4-5-20251001", "id": "msg_test", "type": "message", "role": "assistant", "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        12,
    );
    for (index, item) in items.iter().enumerate() {
        match item {
            Item::Text(text) => {
                sse(
                    &mut out,
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
                    5,
                );
                if index == 0 {
                    out.push_str("event: ping\ndata: {\"type\": \"ping\"}\n\n");
                }
                for piece in pieces(text, 7) {
                    sse(
                        &mut out,
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
                        3,
                    );
                }
            }
            Item::Tool(id, name, arguments) => {
                sse(
                    &mut out,
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}, "caller": {"type": "direct"}}}),
                    5,
                );
                sse(
                    &mut out,
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": ""}}),
                    5,
                );
                for piece in pieces(arguments, 9) {
                    sse(
                        &mut out,
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                        9,
                    );
                }
            }
        }
        if !(cut && index + 1 == items.len()) {
            sse(
                &mut out,
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": index}),
                4,
            );
        }
    }
    sse(
        &mut out,
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 42}}),
        0,
    );
    sse(
        &mut out,
        "message_stop",
        &json!({"type": "message_stop"}),
        15,
    );
    out
}

/// An OpenAI-compatible Chat Completions stream (OpenRouter flavour:
/// comment lines first, the finish chunk sent twice).
pub fn openai(items: &[Item<'_>], finish_reason: &str) -> String {
    let mut out = String::from(": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n");
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "gen-test", "object": "chat.completion.chunk", "created": 1, "model": "test", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let mut call_index = 0;
    for item in items {
        match item {
            Item::Text(text) => {
                for piece in pieces(text, 7) {
                    out.push_str(&chunk(
                        json!({"role": "assistant", "content": piece}),
                        Value::Null,
                    ));
                }
            }
            Item::Tool(id, name, arguments) => {
                out.push_str(&chunk(
                    json!({"role": "assistant", "content": null, "tool_calls": [{"index": call_index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
                    Value::Null,
                ));
                for piece in pieces(arguments, 9) {
                    out.push_str(&chunk(
                        json!({"role": "assistant", "content": null, "tool_calls": [{"index": call_index, "type": "function", "function": {"arguments": piece}}]}),
                        Value::Null,
                    ));
                }
                call_index += 1;
            }
        }
    }
    for _ in 0..2 {
        out.push_str(&chunk(
            json!({"role": "assistant", "content": ""}),
            json!(finish_reason),
        ));
    }
    out.push_str(&format!(
        "data: {}\n\n",
        json!({"id": "gen-test", "object": "chat.completion.chunk", "created": 1, "model": "test", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    ));
    out.push_str("data: [DONE]\n\n");
    out
}

/// An Ollama `/api/chat` NDJSON stream: text in pieces, tool calls whole.
pub fn ollama(items: &[Item<'_>]) -> String {
    let mut out = String::new();
    let line = |message: Value, done: bool| {
        let mut value = json!({"model": "qwen3.5:9b", "created_at": "2026-03-06T14:52:25.617827Z", "message": message, "done": done});
        if done {
            value["done_reason"] = json!("stop");
            value["prompt_eval_count"] = json!(10);
            value["eval_count"] = json!(5);
        }
        format!("{value}\n")
    };
    for (i, item) in items.iter().enumerate() {
        match item {
            Item::Text(text) => {
                for piece in pieces(text, 7) {
                    out.push_str(&line(json!({"role": "assistant", "content": piece}), false));
                }
            }
            Item::Tool(id, name, arguments) => {
                let arguments: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
                out.push_str(&line(
                    json!({"role": "assistant", "content": "", "tool_calls": [{"id": id, "function": {"index": i, "name": name, "arguments": arguments}}]}),
                    false,
                ));
            }
        }
    }
    out.push_str(&line(json!({"role": "assistant", "content": ""}), true));
    out
}

/// An OpenAI-compatible stream of parallel tool calls whose argument
/// deltas interleave: each call starts, then the calls take turns sending
/// `size`-byte pieces of their arguments.
pub fn openai_parallel(calls: &[(&str, &str, &str)], size: usize) -> String {
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "gen-test", "object": "chat.completion.chunk", "created": 1, "model": "test", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let mut out = String::new();
    for (index, (id, name, _)) in calls.iter().enumerate() {
        out.push_str(&chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ));
    }
    let mut pieces: Vec<std::collections::VecDeque<String>> = calls
        .iter()
        .map(|(_, _, arguments)| pieces(arguments, size).into())
        .collect();
    while pieces.iter().any(|p| !p.is_empty()) {
        for (index, queue) in pieces.iter_mut().enumerate() {
            if let Some(piece) = queue.pop_front() {
                out.push_str(&chunk(
                    json!({"role": "assistant", "content": null, "tool_calls": [{"index": index, "type": "function", "function": {"arguments": piece}}]}),
                    Value::Null,
                ));
            }
        }
    }
    out.push_str(&chunk(
        json!({"role": "assistant", "content": ""}),
        json!("tool_calls"),
    ));
    out.push_str("data: [DONE]\n\n");
    out
}

/// An OpenAI Responses stream, shaped like jp's recording
/// (`openai_test_tool_call_stream.yml`): `response.created`, an empty
/// reasoning item at output index 0, then each item at the next output
/// index: text as `response.output_text.delta`s of 7 bytes, a call as
/// `response.output_item.added` and `response.function_call_arguments.delta`s
/// of 9 bytes, each closed by `response.output_item.done`; then
/// `response.completed` with the usage.
pub fn openai_responses(items: &[Item<'_>]) -> String {
    let mut out = String::new();
    let mut seq = 0;
    let mut event = |out: &mut String, mut data: Value| {
        let kind = data["type"].as_str().unwrap().to_owned();
        data["sequence_number"] = json!(seq);
        seq += 1;
        out.push_str(&format!("event: {kind}\ndata: {data}\n\n"));
    };
    event(
        &mut out,
        json!({"type": "response.created", "response": {"id": "resp_test", "object": "response", "status": "in_progress", "output": [], "store": false, "usage": null}}),
    );
    let reasoning = json!({"id": "rs_test", "type": "reasoning", "summary": []});
    event(
        &mut out,
        json!({"type": "response.output_item.added", "item": reasoning, "output_index": 0}),
    );
    event(
        &mut out,
        json!({"type": "response.output_item.done", "item": reasoning, "output_index": 0}),
    );
    for (n, item) in items.iter().enumerate() {
        let index = n + 1;
        match item {
            Item::Text(text) => {
                let id = format!("msg_{index}");
                event(
                    &mut out,
                    json!({"type": "response.output_item.added", "item": {"id": id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}, "output_index": index}),
                );
                for piece in pieces(text, 7) {
                    event(
                        &mut out,
                        json!({"type": "response.output_text.delta", "content_index": 0, "delta": piece, "item_id": id, "logprobs": [], "output_index": index}),
                    );
                }
                event(
                    &mut out,
                    json!({"type": "response.output_item.done", "item": {"id": id, "type": "message", "status": "completed", "content": [{"type": "output_text", "annotations": [], "text": text}], "role": "assistant"}, "output_index": index}),
                );
            }
            Item::Tool(call_id, name, arguments) => {
                let id = format!("fc_{index}");
                event(
                    &mut out,
                    json!({"type": "response.output_item.added", "item": {"id": id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call_id, "name": name}, "output_index": index}),
                );
                for piece in pieces(arguments, 9) {
                    event(
                        &mut out,
                        json!({"type": "response.function_call_arguments.delta", "delta": piece, "item_id": id, "output_index": index}),
                    );
                }
                event(
                    &mut out,
                    json!({"type": "response.function_call_arguments.done", "arguments": arguments, "item_id": id, "output_index": index}),
                );
                event(
                    &mut out,
                    json!({"type": "response.output_item.done", "item": {"id": id, "type": "function_call", "status": "completed", "arguments": arguments, "call_id": call_id, "name": name}, "output_index": index}),
                );
            }
        }
    }
    event(
        &mut out,
        json!({"type": "response.completed", "response": {"id": "resp_test", "object": "response", "status": "completed", "output": [], "store": false, "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}}),
    );
    out
}

/// A Gemini `streamGenerateContent?alt=sse` stream: text in pieces, each
/// call whole in a chunk of its own (Gemini sends no call ids: the ids of
/// `items` are not sent), the last chunk with `finishReason: STOP`, lines
/// ending in CRLF.
pub fn gemini(items: &[Item<'_>]) -> String {
    let mut out = String::new();
    let mut chunk = |parts: Value, finish: bool| {
        let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
        if finish {
            candidate["finishReason"] = json!("STOP");
        }
        let value = json!({
            "candidates": [candidate],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "gemini-2.5-flash",
            "responseId": "test",
        });
        out.push_str(&format!("data: {value}\r\n\r\n"));
    };
    for item in items {
        match item {
            Item::Text(text) => {
                for piece in pieces(text, 7) {
                    chunk(json!([{"text": piece}]), false);
                }
            }
            Item::Tool(_, name, arguments) => {
                let arguments: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
                chunk(
                    json!([{"functionCall": {"name": name, "args": arguments}}]),
                    false,
                );
            }
        }
    }
    chunk(json!([{"text": ""}]), true);
    out
}
