//! What keeping a command's changes costs (issue 38): `jp query` whose
//! model calls `run_command` once (`true`, sandboxed, unattended) in a
//! workspace of N files, with `conversation.undo` on (jp looks at the
//! workspace before and after the call) against off, alternating in the
//! same run so the machine's noise falls on both.
//!
//! - `warm`: the undo cache knows the workspace (every query but the
//!   first): a walk of `lstat`s before and after the call;
//! - `cold`: the cache was emptied first, so every file is read and
//!   hashed once (a workspace's first command).
//!
//! Prints milliseconds per query (the median of the rounds) and the ratio
//! to the same query with undo off.
//!
//! ```text
//! cargo bench -p jp_cli --bench undo_snapshot
//! JP_BENCH_QUICK=1 cargo bench -p jp_cli --bench undo_snapshot   # fewer files
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::Workspace;

const ROUNDS: usize = 9;

/// The script: one `run_command` call of `true`, then the answer.
const SCRIPT: &str = r#"
[[responses]]
parts = [{ tool = "run_command", arguments = { program = "true" } }]

[[responses]]
parts = [{ text = "Done." }]
"#;

/// A sandboxed-commands workspace with `files` files of 2 KiB in
/// directories of 100.
fn workspace(files: usize) -> Workspace {
    let ws = Workspace::new();
    let run = ws.jp(&["init", "--yes", "--sandboxed-commands"]);
    assert_eq!(run.code, 0, "{run:?}");
    ws.write("project/.jp/bench.toml", SCRIPT);
    let line = "// a line of source, about forty bytes.\n".repeat(51);
    for n in 0..files {
        ws.write(&format!("project/src/d{:03}/f{n:05}.rs", n / 100), &line);
    }
    ws
}

/// One query's wall time, with undo on or off.
fn query(ws: &Workspace, undo: bool) -> Duration {
    let enable = format!("conversation.undo.enable={undo}");
    let began = Instant::now();
    let run = ws.jp(&[
        "query",
        "--new",
        "--model",
        "scripted/.jp/bench.toml",
        "--cfg",
        &enable,
        "run it",
    ]);
    let took = began.elapsed();
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Done.\n", "{run:?}");
    took
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let quick = std::env::var_os("JP_BENCH_QUICK").is_some();
    let sizes: &[usize] = if quick { &[1_000] } else { &[1_000, 10_000] };
    println!("| files | undo off (ms) | warm (ms) | ratio | cold (ms) | ratio |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for &files in sizes {
        let ws = workspace(files);
        let cache = ws.root().join(".cache/jp");
        // The first query of each kind warms the file system's caches.
        query(&ws, false);
        query(&ws, true);
        let (mut off, mut warm, mut cold) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            off.push(query(&ws, false));
            warm.push(query(&ws, true));
            std::fs::remove_dir_all(&cache).unwrap();
            cold.push(query(&ws, true));
        }
        let (off, warm, cold) = (median(off), median(warm), median(cold));
        println!(
            "| {files} | {:.1} | {:.1} | {:.2} | {:.1} | {:.2} |",
            ms(off),
            ms(warm),
            ms(warm) / ms(off),
            ms(cold),
            ms(cold) / ms(off),
        );
    }
}
