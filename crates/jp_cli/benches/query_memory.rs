//! Resident memory of `jp query` when the model sends one large tool call
//! (issue 14).
//!
//! ```text
//! cargo bench -p jp_cli --bench query_memory
//! JP_BENCH_QUICK=1 cargo bench -p jp_cli --bench query_memory   # smaller documents
//! ```
//!
//! For each provider and document, the real `jp` binary answers one query
//! against the test server: the model calls the local tool `t` with the
//! document as its arguments (Ollama sends them whole, Anthropic in 9-byte
//! `input_json_delta`s), the tool runs (see [`tool_config`]), and the model
//! answers its result, so the call is parsed, decided, run, recorded and
//! sent back in the next request. jp's peak resident memory (`VmHWM`, read from `/proc` until it
//! exits) is compared with two baselines from the same run:
//!
//! - the same query with a small call: what jp needs anyway;
//! - a child of this benchmark that parses the document into a
//!   `serde_json::Value`, lets the text go and holds the value (its
//!   resident memory then, minus the same child's for `{}`): what one copy
//!   of the call costs.
//!
//! "copies" is (jp's peak − the small call's) / one copy: how many whole
//! copies of the call jp holds at its peak. Linux only; it prints a table
//! and fails only if a run does not do what it should.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::providers::{Item, anthropic, ollama, text_reply};
use common::query::{ENV, echo_tool, initialized, query_command};
use jp_test_server::documents::adversarial;
use jp_test_server::{Reply, TestServer};

/// Set in the child that measures one copy of a document: the document's
/// path.
const HOLD: &str = "JP_BENCH_HOLD";

/// The tool the model calls: reads its request and answers `ok`. Its
/// parameter check refuses the adversarial document (its elements have an
/// unknown member `k`), as it would in use; the others run, `objects` being
/// the hostile call that does.
fn tool_config() -> String {
    echo_tool("t", "ok")
        + r#"[conversation.tools.t.parameters.args]
type = "array"
items = { type = "object", properties = { path = { type = "string" }, content = { type = "string" }, recursive = { type = "boolean" }, depth = { type = "integer" } } }
"#
}

fn main() {
    if let Ok(path) = std::env::var(HOLD) {
        hold(&path);
        return;
    }
    if !cfg!(target_os = "linux") {
        println!("query_memory reads /proc: Linux only");
        return;
    }
    let quick = std::env::var_os("JP_BENCH_QUICK").is_some();
    let documents = if quick {
        [
            ("small", small()),
            ("text_200k", text(200_000)),
            ("objects_200k", objects(200_000)),
            ("adv_210k", adversarial(210_000)),
        ]
    } else {
        [
            ("small", small()),
            ("text_2m", text(2_000_000)),
            ("objects_2m", objects(2_000_000)),
            ("adv_2m", adversarial(2_000_000)),
        ]
    };
    let empty = value_resident("{}");
    println!("jp query, one tool call; peak resident memory (VmHWM), same run\n");
    println!(
        "| provider | document | bytes | jp peak | beyond the small call | one copy (Value) | copies | time |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for provider in ["ollama", "anthropic"] {
        let mut small_peak = None;
        for (name, document) in &documents {
            let (peak, elapsed) = query_peak(provider, document);
            let base = *small_peak.get_or_insert(peak);
            let beyond = peak.saturating_sub(base);
            let copy = value_resident(document).saturating_sub(empty);
            let copies = if *name == "small" || copy == 0 {
                "-".to_owned()
            } else {
                format!("{:.2}", beyond as f64 / copy as f64)
            };
            println!(
                "| {provider} | {name} | {} | {} | {} | {} | {copies} | {:.2} s |",
                document.len(),
                mib(peak),
                mib(beyond),
                mib(copy),
                elapsed.as_secs_f64()
            );
        }
    }
}

/// A small call of a few values.
fn small() -> String {
    r#"{"args":[{"path":"src/main.rs","recursive":true,"depth":3}]}"#.to_owned()
}

/// A `create_file`-like call whose content is about `size` bytes of source
/// text with quotes and newlines to escape.
fn text(size: usize) -> String {
    let line = "    let name = format!(\"{}\\t{}\", first, last); // \"quoted\"\n";
    let content = line.repeat(size / line.len() + 1);
    serde_json::json!({"args": [{"path": "src/big.rs", "content": content}]}).to_string()
}

/// Hostile arguments the tool's parameters accept, so the call runs:
/// about `size` bytes of small objects (`{"depth":7}`), each of which is a
/// map in a `Value`.
fn objects(size: usize) -> String {
    let mut text = String::from("{\"args\":[");
    let mut n = 0;
    while text.len() + 16 < size {
        if n > 0 {
            text.push(',');
        }
        text.push_str(&format!("{{\"depth\":{}}}", n % 10));
        n += 1;
    }
    text.push_str("]}");
    text
}

/// Runs one `jp query` whose model calls `t` with `arguments`; returns
/// jp's peak resident memory in bytes and how long it took.
fn query_peak(provider: &str, arguments: &str) -> (u64, Duration) {
    let ws = initialized();
    ws.write("project/.jp/tools.toml", &tool_config());
    let call = Item::Tool("call_1", "t", arguments);
    let (model, first, second) = match provider {
        "ollama" => (
            "ollama/qwen3.5:9b",
            Reply::ndjson(ollama(&[call])),
            Reply::ndjson(ollama(&[Item::Text("done")])),
        ),
        _ => (
            "anthropic/claude-haiku-4-5",
            Reply::sse(anthropic(&[call], "tool_use", false)),
            text_reply("done"),
        ),
    };
    let server = TestServer::start(vec![first, second]);
    let mut command = query_command(&ws, &server, model, &["--cfg", "@.jp/tools.toml"], "go");
    for (key, value) in ENV {
        command.env(key, value);
    }
    let out = ws.root().join("out");
    let err = ws.root().join("err");
    command
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let status = loop {
        // The high-water mark only grows, so a reading after the peak
        // shows it; only the last few milliseconds before exit go unseen.
        if let Some(hwm) = std::fs::read_to_string(&status_file)
            .ok()
            .and_then(|status| vm_hwm(&status))
        {
            peak = peak.max(hwm);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = started.elapsed();
    let stdout = std::fs::read_to_string(&out).unwrap();
    assert!(
        status.success() && stdout == "done\n",
        "{provider}: jp query did not finish the turn: {status}\nstdout: {stdout}\nstderr: {}",
        std::fs::read_to_string(&err).unwrap()
    );
    (peak, elapsed)
}

/// The resident memory of a child of this benchmark that has parsed
/// `document` into a `Value` and holds it (and not the text).
fn value_resident(document: &str) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("document.json");
    std::fs::write(&path, document).unwrap();
    let output = Command::new(std::env::current_exe().unwrap())
        .env(HOLD, &path)
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// In the child: parses the document at `path`, lets the text go, and
/// prints its resident memory while it holds the value alone.
fn hold(path: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    drop(text);
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    println!("{}", status_bytes(&status, "VmRSS:").unwrap());
    drop(std::hint::black_box(value));
}

/// `VmHWM` (peak resident memory) of a `/proc/PID/status`, in bytes.
fn vm_hwm(status: &str) -> Option<u64> {
    status_bytes(status, "VmHWM:")
}

/// The field `name` of a `/proc/PID/status` (given in KiB), in bytes.
fn status_bytes(status: &str, name: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}
