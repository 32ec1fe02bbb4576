//! Prompt caching, measured on the request bodies jp sends (issue 23).
//!
//! A constructed 10-step tool loop (each step reads a file and sends its
//! text back) is turned into the Anthropic bodies jp sends with and without
//! caching. The bodies are cut into what Anthropic caches (each tool, the
//! system prompt, each content block, in that order) and sized by their
//! JSON bytes, at 4 bytes a token. Anthropic's documented accounting then
//! gives the input tokens billed for each step:
//!
//! - the longest prefix ending at one of the request's breakpoints that an
//!   earlier request wrote is read from the cache: 0.1 × base price;
//! - the rest up to the request's last breakpoint is written: 1.25 × (the
//!   five-minute cache);
//! - what follows the last breakpoint is ordinary input: 1 ×;
//! - a prefix shorter than the model's minimum (1,024 tokens for Sonnet)
//!   is neither written nor read.
//!
//! Without caching every step pays 1 × its whole input. The ratio of the
//! totals is what `docs/benchmarks.md` reports; run
//! `cargo test -p jp_llm --test prompt_cache -- --nocapture` for the
//! table. The same loop checks that no request carries more than
//! Anthropic's four breakpoints, that the last block of the history is
//! one, and that the OpenAI (Responses API) and OpenRouter (Chat
//! Completions) body of each step extends the previous one byte for byte
//! (they cache by prefix on their own).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::sync::Arc;

use jp_llm::anthropic::{Caching, request_body};
use jp_llm::{ChatRequest, Message, ToolCall, ToolDefinition, ToolResult};
use serde_json::{Value, json};

/// Steps in the measured loop.
const STEPS: usize = 10;
/// Bytes per token in the estimate.
const BYTES_PER_TOKEN: f64 = 4.0;
/// The shortest prefix Anthropic caches for Sonnet, in tokens.
const MIN_CACHEABLE: f64 = 1024.0;
/// Price factors of Anthropic's documented accounting.
const WRITE: f64 = 1.25;
const READ: f64 = 0.1;

/// `bytes` of text, deterministic, in lines of source.
fn text(label: &str, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 80);
    let mut line = 0;
    while out.len() < bytes {
        out.push_str(&format!(
            "    let {label}_{line} = compute({line}, \"{label}\"); // step {line}\n"
        ));
        line += 1;
    }
    out.truncate(bytes);
    out
}

/// Five tool definitions of about 580 bytes each, like jp's file tools
/// (2,931 bytes for the five).
fn tools() -> Vec<ToolDefinition> {
    [
        "fs_read_file",
        "fs_list_files",
        "fs_create_file",
        "fs_modify_file",
        "fs_delete_file",
    ]
    .into_iter()
    .map(|name| ToolDefinition {
        name: name.into(),
        description: Some(text(name, 200)),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": text("path", 70)},
                "content": {"type": "string", "description": text("content", 70)},
            },
            "required": ["path"],
            "additionalProperties": false,
        }),
    })
    .collect()
}

/// The requests of a tool loop of `steps` steps: step `k` sends the user's
/// message and the `k - 1` calls and results before it. Each call reads a
/// file whose text is `result_bytes` long.
fn tool_loop(steps: usize, result_bytes: usize) -> Vec<ChatRequest> {
    let mut messages = vec![Message::User(
        "Find where the retry delay is computed and explain it.".into(),
    )];
    let mut requests = Vec::with_capacity(steps);
    for step in 1..=steps {
        requests.push(ChatRequest {
            model: "claude-sonnet-4-5".into(),
            // About the size of jp's default system prompt.
            system: Some(text("system", 500)),
            messages: messages.clone(),
            tools: tools(),
            max_tokens: 8192,
            temperature: None,
            top_p: None,
        });
        let id = format!("toolu_{step:02}");
        messages.push(Message::Assistant {
            reasoning: None,
            text: format!("Reading src/file_{step}.rs next."),
            tool_calls: vec![ToolCall {
                id: id.clone(),
                name: "fs_read_file".into(),
                arguments: Arc::new(json!({"path": format!("src/file_{step}.rs")})),
            }],
        });
        messages.push(Message::ToolResults(vec![ToolResult {
            id,
            content: text(&format!("file_{step}"), result_bytes),
            is_error: false,
        }]));
    }
    requests
}

/// One cacheable piece of a body: its JSON text without `cache_control`,
/// and whether it carried one.
struct Segment {
    text: String,
    marked: bool,
}

/// `body`'s pieces in the order Anthropic caches them: tools, system,
/// messages.
fn segments(body: &Value) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut push = |item: &Value| {
        let mut item = item.clone();
        let marked = item
            .as_object_mut()
            .and_then(|map| map.remove("cache_control"))
            .is_some();
        out.push(Segment {
            text: item.to_string(),
            marked,
        });
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push(tool);
    }
    match &body["system"] {
        Value::Array(blocks) => blocks.iter().for_each(&mut push),
        Value::Null => {}
        system => push(system),
    }
    for message in body["messages"].as_array().unwrap() {
        for block in message["content"].as_array().unwrap() {
            push(block);
        }
    }
    out
}

fn tokens(bytes: usize) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let bytes = bytes as f64;
    bytes / BYTES_PER_TOKEN
}

/// The input tokens of one request, as Anthropic bills them.
#[derive(Debug, Default, Clone, Copy)]
struct Billed {
    total: f64,
    read: f64,
    write: f64,
    uncached: f64,
}

impl Billed {
    /// In base-price input tokens.
    fn cost(self) -> f64 {
        self.uncached + WRITE * self.write + READ * self.read
    }
}

/// Bills `bodies` in order, with the cache they fill as they go.
fn bill(bodies: &[Value]) -> Vec<Billed> {
    let mut cache: HashSet<String> = HashSet::new();
    bodies
        .iter()
        .map(|body| {
            let mut prefix = String::new();
            let mut billed = Billed::default();
            let mut last_written = 0.0;
            let mut written = Vec::new();
            for segment in segments(body) {
                prefix.push_str(&segment.text);
                prefix.push('\u{0}');
                let position = tokens(prefix.len());
                if segment.marked && position >= MIN_CACHEABLE {
                    if cache.contains(&prefix) {
                        billed.read = position;
                    }
                    last_written = position;
                    written.push(prefix.clone());
                }
            }
            billed.total = tokens(prefix.len());
            billed.write = (last_written - billed.read).max(0.0);
            billed.uncached = billed.total - billed.read - billed.write;
            cache.extend(written);
            billed
        })
        .collect()
}

fn bodies(requests: &[ChatRequest], caching: Caching) -> Vec<Value> {
    requests
        .iter()
        .map(|request| serde_json::to_value(request_body(request, caching)).unwrap())
        .collect()
}

/// The ratio of input tokens billed with caching to without, over the
/// loop, printing each step.
fn ratio(result_bytes: usize) -> f64 {
    let requests = tool_loop(STEPS, result_bytes);
    let cached = bill(&bodies(&requests, Caching::Breakpoints));
    let uncached = bill(&bodies(&requests, Caching::Off));
    println!("results of {result_bytes} bytes:");
    println!("step   input   read  write  uncached  billed (cached)  billed (off)");
    for (step, (on, off)) in cached.iter().zip(&uncached).enumerate() {
        assert_eq!(off.read + off.write, 0.0);
        println!(
            "{:>4} {:>7.0} {:>6.0} {:>6.0} {:>9.0} {:>16.0} {:>13.0}",
            step + 1,
            on.total,
            on.read,
            on.write,
            on.uncached,
            on.cost(),
            off.cost()
        );
    }
    let on: f64 = cached.iter().map(|b| b.cost()).sum();
    let off: f64 = uncached.iter().map(|b| b.cost()).sum();
    println!("total {on:.0} / {off:.0} = {:.3}\n", on / off);
    on / off
}

/// The ratios `docs/benchmarks.md` reports, for results of 1, 4 and 16
/// KB.
#[test]
fn a_ten_step_tool_loop_bills_a_fraction_of_its_input() {
    let measured: Vec<String> = [1024, 4096, 16384]
        .into_iter()
        .map(|bytes| format!("{:.2}", ratio(bytes)))
        .collect();
    assert_eq!(measured, ["0.32", "0.33", "0.33"]);
}

/// Every step's body has at most Anthropic's four breakpoints, one of them
/// on the system prompt and one on the last block of the history; without
/// caching there is none.
#[test]
fn every_step_marks_the_prefix_and_the_last_block() {
    let requests = tool_loop(STEPS, 100);
    for (step, body) in bodies(&requests, Caching::Breakpoints).iter().enumerate() {
        let marks = segments(body).iter().filter(|s| s.marked).count();
        assert!((2..=4).contains(&marks), "step {step}: {marks} breakpoints");
        assert_eq!(
            body["system"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        let last = body["messages"].as_array().unwrap().last().unwrap();
        let block = last["content"].as_array().unwrap().last().unwrap();
        assert_eq!(
            block["cache_control"],
            json!({"type": "ephemeral"}),
            "step {step}"
        );
    }
    for body in bodies(&requests, Caching::Off) {
        assert!(!body.to_string().contains("cache_control"));
    }
}

/// What Anthropic caches of step `k` (its pieces without the breakpoints)
/// begins with all of step `k - 1`: nothing is reordered or rewritten.
#[test]
fn each_anthropic_step_extends_the_previous_one() {
    let requests = tool_loop(STEPS, 100);
    let pieces: Vec<Vec<String>> = bodies(&requests, Caching::Breakpoints)
        .iter()
        .map(|body| segments(body).into_iter().map(|s| s.text).collect())
        .collect();
    for pair in pieces.windows(2) {
        assert!(pair[1].len() > pair[0].len());
        assert_eq!(pair[1][..pair[0].len()], pair[0][..]);
    }
}

/// Whether each body extends the one before: step `k - 1`'s list of
/// messages (or input items) ends where step `k`'s goes on with `,` and
/// more, and every byte before and after it is the same (the tools, sent
/// after it, unchanged).
fn assert_each_extends_the_previous(bodies: &[String], list: &str) {
    for (step, pair) in bodies.windows(2).enumerate() {
        let (before, after) = (&pair[0], &pair[1]);
        let common = before
            .bytes()
            .zip(after.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let tail = &before[common..];
        assert!(
            before[..common].contains(&format!("\"{list}\":[")),
            "step {step}: the bodies differ before `{list}`"
        );
        assert!(tail.starts_with("],\"tools\":["), "step {step}: {tail:.40}");
        assert_eq!(&after[common..=common], ",", "step {step}");
        assert!(after.ends_with(tail), "step {step}");
    }
}

/// OpenAI (the Responses API) and OpenRouter (Chat Completions) cache the
/// longest prefix they saw before, with no marks: the body of step `k` is
/// the body of step `k - 1` with items added at the end of its list.
#[test]
fn each_openai_step_extends_the_previous_body_byte_for_byte() {
    let requests = tool_loop(STEPS, 100);
    let chat: Vec<String> = requests
        .iter()
        .map(|request| json_text(&jp_llm::openai::request_body("openrouter", request)))
        .collect();
    assert_each_extends_the_previous(&chat, "messages");
    let responses: Vec<String> = requests
        .iter()
        .map(|request| json_text(&jp_llm::openai_responses::request_body(request)))
        .collect();
    assert_each_extends_the_previous(&responses, "input");
}

/// A body as its JSON text.
fn json_text(body: &impl serde::Serialize) -> String {
    serde_json::to_string(body).unwrap()
}
