//! What recording one event costs (issue 14, item 3): bytes written and
//! time per append to a conversation of 10 events against one of 10,000,
//! measured in the same run, for the append-only log and for the full
//! rewrite that jp did before it (format version 1, kept here as the
//! baseline). Then the issue's scenario: a conversation holding one 2.3 MB
//! tool call, continued by a query that receives a one-line answer.
//!
//! ```text
//! cargo bench -p jp_conversation --bench conversation_store
//! JP_BENCH_QUICK=1 cargo bench -p jp_conversation --bench conversation_store   # smoke run
//! ```
//!
//! Started without `--bench` (as `cargo test --all-targets` does), it only
//! runs its checks, once. Bytes written are what the process passed to
//! `write` (`wchar` in `/proc/self/io`), so they count every byte the store
//! writes, temporary files included; where that file does not exist, the
//! growth of the log is shown instead. Every append syncs, so the times are
//! those of the disk under `target/` (`CARGO_TARGET_TMPDIR`).
//!
//! It prints tables and never fails on a number; it fails when an append
//! writes anything but its own lines, or a log reads back wrong.

#![allow(clippy::expect_used)]

#[path = "arg_stream/timing.rs"]
#[allow(dead_code)]
mod timing;

use std::fs::{self, File};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use jp_conversation::{
    Conversation, ConversationEvent, ConversationLock, EventKind, ResponseStatus, Store,
    ToolCallRequest, ToolCallResponse,
};
use serde_json::{Map, Value};

use timing::{Settings, compare};

const SMALL: usize = 10;
const LARGE: usize = 10_000;
const TARGET_RATIO: f64 = 2.0;

/// Event `i` of a made-up conversation: a message, an answer, a tool call
/// and its result, about 300 bytes each on average.
fn event(i: usize) -> ConversationEvent {
    let kind = match i % 4 {
        0 => EventKind::ChatRequest {
            content: format!("Please look at src/module_{i}.rs and tell me what it does."),
        },
        1 => EventKind::AssistantMessage {
            content: format!("Let me read it. {}", "It parses the input. ".repeat(10)),
        },
        2 => {
            let mut arguments = Map::new();
            arguments.insert("path".into(), Value::String(format!("src/module_{i}.rs")));
            EventKind::ToolCallRequest(ToolCallRequest::new(
                format!("toolu_{i}"),
                "fs_read_file",
                arguments,
            ))
        }
        _ => EventKind::ToolCallResponse(ToolCallResponse::new(
            format!("toolu_{}", i - 1),
            ResponseStatus::Success,
            "pub fn parse(input: &str) -> Result<Ast, Error> {\n    todo!()\n}\n".repeat(6),
        )),
    };
    ConversationEvent {
        at_ms: 1_795_350_600_000 + i as u64,
        kind,
    }
}

/// The event each measured append records.
fn appended() -> ConversationEvent {
    ConversationEvent {
        at_ms: 1_795_350_700_000,
        kind: EventKind::AssistantMessage {
            content: "Done: the parser now accepts trailing commas.".into(),
        },
    }
}

/// Bytes this process has passed to `write` so far, if the system says.
fn written() -> Option<u64> {
    let io = fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|line| line.strip_prefix("wchar: "))
        .and_then(|n| n.trim().parse().ok())
}

/// A conversation of `n` events in `store`, open for writing. The events
/// go in as one commit.
fn conversation(store: &Store, n: usize) -> (Conversation, ConversationLock) {
    let (mut conversation, mut lock) = store.create().expect("create");
    lock.append(&mut conversation, (0..n).map(event))
        .expect("append");
    (conversation, lock)
}

fn log_of(store: &Store, conversation: &Conversation) -> PathBuf {
    store.root().join(&conversation.id).join("events.jsonl")
}

/// What jp did before the log, for every event: the whole conversation
/// (format version 1, one event per line) to a temporary file, synced,
/// renamed over `conversation.json`, the directory synced.
fn rewrite_v1(dir: &Path, conversation: &Conversation) {
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(b"{\n");
    out.extend_from_slice(
        format!("  \"version\": 1,\n  \"id\": \"{}\",\n", conversation.id).as_bytes(),
    );
    out.extend_from_slice(format!("  \"created_ms\": {},\n", conversation.created_ms).as_bytes());
    out.extend_from_slice(b"  \"events\": [");
    for (i, event) in conversation.events.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b"\n    " } else { b",\n    " });
        serde_json::to_writer(&mut out, event).expect("serialize");
    }
    out.extend_from_slice(b"\n  ]\n}\n");
    let path = dir.join("conversation.json");
    let tmp = dir.join(".conversation.json.tmp");
    let mut file = File::create(&tmp).expect("create");
    file.write_all(&out).expect("write");
    file.sync_all().expect("sync");
    fs::rename(&tmp, &path).expect("rename");
    File::open(dir)
        .and_then(|d| d.sync_all())
        .expect("sync dir");
}

/// A conversation kept in memory and rewritten whole on every event.
struct Rewritten {
    dir: PathBuf,
    conversation: Conversation,
}

impl Rewritten {
    fn new(root: &Path, name: &str, n: usize) -> Self {
        let dir = root.join(name);
        fs::create_dir_all(&dir).expect("dir");
        let conversation = Conversation {
            id: name.into(),
            created_ms: 1_795_350_600_000,
            title: None,
            events: (0..n).map(event).collect(),
            torn_tail: None,
        };
        rewrite_v1(&dir, &conversation);
        Self { dir, conversation }
    }

    fn record(&mut self, event: ConversationEvent) {
        self.conversation.events.push(event);
        rewrite_v1(&self.dir, &self.conversation);
    }
}

/// Bytes one append to `conversation` writes; checks that the log grew by
/// exactly the event's line and reads back whole.
fn append_bytes(
    store: &Store,
    conversation: &mut Conversation,
    lock: &mut ConversationLock,
) -> Result<(u64, u64), String> {
    let path = log_of(store, conversation);
    let before = fs::read(&path).map_err(|e| e.to_string())?;
    let wchar = written();
    lock.append(conversation, [appended()])
        .map_err(|e| e.to_string())?;
    let wchar = written().zip(wchar).map(|(after, before)| after - before);
    let after = fs::read(&path).map_err(|e| e.to_string())?;
    let mut line = serde_json::to_vec(&appended()).map_err(|e| e.to_string())?;
    line.push(b'\n');
    if after.len() != before.len() + line.len()
        || after[..before.len()] != before[..]
        || after[before.len()..] != line[..]
    {
        return Err(format!(
            "appending to {} events changed more than its own line",
            conversation.events.len() - 1
        ));
    }
    let grew = (after.len() - before.len()) as u64;
    let read = store.load(&conversation.id).map_err(|e| e.to_string())?;
    if read.events != conversation.events || read.torn_tail.is_some() {
        return Err("the log does not read back as written".into());
    }
    Ok((wchar.unwrap_or(grew), grew))
}

/// Bytes one full rewrite writes.
fn rewrite_bytes(rewritten: &mut Rewritten) -> u64 {
    let wchar = written();
    rewritten.record(appended());
    let size = fs::metadata(rewritten.dir.join("conversation.json"))
        .map(|m| m.len())
        .unwrap_or(0);
    written()
        .zip(wchar)
        .map_or(size, |(after, before)| after - before)
}

fn mib(bytes: u64) -> String {
    if bytes >= 100_000 {
        format!("{:.2} MB", bytes as f64 / 1e6)
    } else {
        format!("{bytes} B")
    }
}

fn time(seconds: f64) -> String {
    if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.1} µs", seconds * 1e6)
    }
}

fn main() -> ExitCode {
    let bench = std::env::args().any(|a| a == "--bench");
    let settings = Settings::from_env();
    match run(bench, &settings) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("conversation_store: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(bench: bool, settings: &Settings) -> Result<(), String> {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).map_err(|e| e.to_string())?;
    let workspace = tmp.path().join("workspace");
    let store = Store::new(&workspace);
    if written().is_none() {
        println!("(/proc/self/io is not readable: bytes are the log's growth)");
    }

    // Bytes per append.
    let (mut small, mut small_lock) = conversation(&store, SMALL);
    let (mut large, mut large_lock) = conversation(&store, LARGE);
    let large_size = fs::metadata(log_of(&store, &large))
        .map_err(|e| e.to_string())?
        .len();
    let (small_bytes, line) = append_bytes(&store, &mut small, &mut small_lock)?;
    let (large_bytes, _) = append_bytes(&store, &mut large, &mut large_lock)?;
    let old_root = tmp.path().join("v1");
    let mut old_small = Rewritten::new(&old_root, "small", SMALL);
    let mut old_large = Rewritten::new(&old_root, "large", LARGE);
    let old_small_bytes = rewrite_bytes(&mut old_small);
    let old_large_bytes = rewrite_bytes(&mut old_large);
    let scenario = issue_scenario(&store, &old_root)?;
    if !bench {
        println!("checks passed (run with `cargo bench` to measure)");
        return Ok(());
    }

    println!(
        "conversation of {SMALL} events vs {LARGE} events ({} log); appended event: {line} B line{}",
        mib(large_size),
        if settings.quick { "; quick run" } else { "" }
    );
    println!();
    // Time per append, interleaved so that load hits both sides.
    let log_time = compare(
        settings,
        || small_lock.append(&mut small, [appended()]).map(|()| 0),
        || large_lock.append(&mut large, [appended()]).map(|()| 0),
    );
    let old_time = compare(
        settings,
        || old_small.record(appended()),
        || old_large.record(appended()),
    );
    println!(
        "| store | bytes, {SMALL} events | bytes, {LARGE} events | ratio | time, {SMALL} events | time, {LARGE} events | ratio | target (≤ {TARGET_RATIO}×) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    let bytes_ratio = large_bytes as f64 / small_bytes as f64;
    let met = bytes_ratio <= TARGET_RATIO && log_time.ratio() <= TARGET_RATIO;
    println!(
        "| append-only log | {} | {} | {:.2} | {} | {} | {:.2} | {} |",
        mib(small_bytes),
        mib(large_bytes),
        bytes_ratio,
        time(log_time.baseline),
        time(log_time.subject),
        log_time.ratio(),
        if met { "met" } else { "MISSED" }
    );
    println!(
        "| full rewrite (before) | {} | {} | {:.0} | {} | {} | {:.1} | n/a |",
        mib(old_small_bytes),
        mib(old_large_bytes),
        old_large_bytes as f64 / old_small_bytes as f64,
        time(old_time.baseline),
        time(old_time.subject),
        old_time.ratio()
    );
    println!(
        "({} and {} timed appends per side; the conversations grew to {} and {} events)",
        log_time.samples,
        old_time.samples,
        small.events.len(),
        large.events.len()
    );
    println!();
    println!(
        "issue scenario: one {} tool call, then a query that receives a one-line answer (3 commit points)",
        mib(scenario.call_bytes)
    );
    println!("| store | bytes written | time |");
    println!("| --- | --- | --- |");
    println!(
        "| full rewrite (before) | {} | {} |",
        mib(scenario.before.0),
        time(scenario.before.1)
    );
    println!(
        "| append-only log | {} | {} |",
        mib(scenario.after.0),
        time(scenario.after.1)
    );
    Ok(())
}

struct Scenario {
    call_bytes: u64,
    /// Bytes written and seconds, rewriting.
    before: (u64, f64),
    /// Bytes written and seconds, appending (opening the log included).
    after: (u64, f64),
}

/// One 2.3 MB tool call (a file created with 2.3 MB of content, and its
/// result), then a follow-up query: a turn start, the message and a
/// one-line answer, each recorded on its own as `jp query` does.
fn issue_scenario(store: &Store, old_root: &Path) -> Result<Scenario, String> {
    let mut arguments = Map::new();
    arguments.insert("path".into(), Value::String("data/big.txt".into()));
    arguments.insert(
        "content".into(),
        Value::String("0123456789abcdef".repeat(2_300_000 / 16)),
    );
    let history = vec![
        ConversationEvent {
            at_ms: 1,
            kind: EventKind::TurnStart,
        },
        ConversationEvent {
            at_ms: 2,
            kind: EventKind::ChatRequest {
                content: "write data/big.txt".into(),
            },
        },
        ConversationEvent {
            at_ms: 3,
            kind: EventKind::ToolCallRequest(ToolCallRequest::new(
                "toolu_1",
                "fs_create_file",
                arguments,
            )),
        },
        ConversationEvent {
            at_ms: 4,
            kind: EventKind::ToolCallResponse(ToolCallResponse::new(
                "toolu_1",
                ResponseStatus::Success,
                "created data/big.txt",
            )),
        },
    ];
    let call_bytes = serde_json::to_vec(&history[2])
        .map_err(|e| e.to_string())?
        .len() as u64;
    let follow_up = || {
        [
            EventKind::TurnStart,
            EventKind::ChatRequest {
                content: "is it there?".into(),
            },
            EventKind::AssistantMessage {
                content: "Yes.".into(),
            },
        ]
        .map(|kind| ConversationEvent { at_ms: 5, kind })
    };

    let (mut conversation, mut lock) = store.create().map_err(|e| e.to_string())?;
    lock.append(&mut conversation, history.clone())
        .map_err(|e| e.to_string())?;
    drop(lock);
    let id = conversation.id;
    let start = std::time::Instant::now();
    let wchar = written();
    let (mut conversation, mut lock) = store.open(&id).map_err(|e| e.to_string())?;
    for event in follow_up() {
        lock.append(&mut conversation, [event])
            .map_err(|e| e.to_string())?;
    }
    let after_bytes = written().zip(wchar).map(|(a, b)| a - b);
    let after_time = start.elapsed().as_secs_f64();
    let after_bytes = match after_bytes {
        Some(bytes) => bytes,
        None => follow_up()
            .iter()
            .map(|e| serde_json::to_vec(e).map_or(0, |v| v.len() as u64 + 1))
            .sum(),
    };

    let mut old = Rewritten::new(old_root, "scenario", 0);
    old.conversation.events = history;
    rewrite_v1(&old.dir, &old.conversation);
    let start = std::time::Instant::now();
    let mut before_bytes = 0;
    for event in follow_up() {
        let wchar = written();
        old.record(event);
        let size = fs::metadata(old.dir.join("conversation.json")).map_or(0, |m| m.len());
        before_bytes += written().zip(wchar).map_or(size, |(a, b)| a - b);
    }
    let before_time = start.elapsed().as_secs_f64();
    Ok(Scenario {
        call_bytes,
        before: (before_bytes, before_time),
        after: (after_bytes, after_time),
    })
}
