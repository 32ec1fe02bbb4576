//! The diffs shown before `fs_modify_file` runs: taken against the file as
//! the calls before it in the same response leave it, and only the calls
//! that will run count.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_conversation::{ResponseStatus, ToolCallResponse};
use serde_json::json;

use super::*;
use crate::query::arguments::Arguments;
use crate::query::tools::Judge;
use crate::query::tools::fixture::{self, quiet_printer};
use jp_policy::Mode;

const CONFIG: &str = r#"
[conversation.tools.fs_modify_file]
command = ["jp", "tool", "fs_modify_file"]
parameters.path = { type = "path", required = true }
parameters.patterns = { type = "array", required = true, items = { type = "object" } }
"#;

/// A workspace whose `lib.rs` is `pub fn main() {}`.
fn workspace() -> (tempfile::TempDir, jp_config::AppConfig) {
    let (dir, config) = fixture::workspace(CONFIG);
    std::fs::write(dir.path().join("lib.rs"), "pub fn main() {}\n").unwrap();
    (dir, config)
}

fn modify(old: &str, new: &str) -> Map<String, Value> {
    json!({"path": "lib.rs", "patterns": [{"old": old, "new": new}]})
        .as_object()
        .unwrap()
        .clone()
}

/// The diff's lines as text.
fn shown(lines: Option<Vec<Line>>) -> Vec<String> {
    lines.unwrap().into_iter().map(|line| line.text).collect()
}

fn declined(call: &str) -> Verdict {
    Verdict::NotRun {
        response: ToolCallResponse {
            id: call.into(),
            status: ResponseStatus::Declined,
            content: String::new(),
            ran: None,
        },
        note: String::new(),
    }
}

const AFTER_FIRST: &str = "  against lib.rs as the calls before this one leave it";

#[test]
fn a_later_call_is_diffed_against_the_earlier_ones_until_the_next_response() {
    let (dir, config) = workspace();
    let judge = Judge::new(&config, dir.path());
    let asker = Asker::new(&judge, quiet_printer(), false);
    let _ = asker.file_change("c1", "fs_modify_file", &modify("main", "hello"));
    let second = shown(asker.file_change("c2", "fs_modify_file", &modify("hello", "greet")));
    assert_eq!(second[0], AFTER_FIRST);
    assert_eq!(
        second[4..],
        ["  1   - pub fn hello() {}", "    1 + pub fn greet() {}"]
    );
    // Shown again (`v`), it is the same: c1 comes before it, not c2 itself.
    let again = shown(asker.file_change("c2", "fs_modify_file", &modify("hello", "greet")));
    assert_eq!(again, second);
    // The first call, shown again, is still against the file on disk.
    let first = shown(asker.file_change("c1", "fs_modify_file", &modify("main", "hello")));
    assert_eq!(first[0], "  --- lib.rs");
    // A new response: the calls before it ran (or not); the disk says.
    asker.new_response();
    let fresh = shown(asker.file_change("c3", "fs_modify_file", &modify("hello", "greet")));
    assert_eq!(
        fresh,
        [
            "  no diff to show: patterns[0].old occurs 0 times in `lib.rs`; it must occur exactly once (check its spaces, indentation and line breaks against the file), so nothing was changed"
        ]
    );
}

#[test]
fn a_call_that_will_not_run_changes_nothing_for_the_ones_after_it() {
    let (dir, config) = workspace();
    let judge = Judge::new(&config, dir.path());
    let asker = Asker::new(&judge, quiet_printer(), false);
    let _ = asker.file_change("c1", "fs_modify_file", &modify("main", "hello"));
    asker.settled("c1", &declined("c1"));
    let second = shown(asker.file_change("c2", "fs_modify_file", &modify("main", "start")));
    assert_eq!(second[0], "  --- lib.rs");
    assert_eq!(
        second[3..],
        ["  1   - pub fn main() {}", "    1 + pub fn start() {}"]
    );
    // Nor does one that would fail: c2, shown again as edited to fail,
    // no longer counts.
    let _ = asker.file_change("c2", "fs_modify_file", &modify("absent", "x"));
    let third = shown(asker.file_change("c3", "fs_modify_file", &modify("main", "go")));
    assert_eq!(third[0], "  --- lib.rs");
}

#[test]
fn an_edited_call_counts_as_edited() {
    let (dir, config) = workspace();
    let judge = Judge::new(&config, dir.path());
    let asker = Asker::new(&judge, quiet_printer(), false);
    let _ = asker.file_change("c1", "fs_modify_file", &modify("main", "hello"));
    asker.settled(
        "c1",
        &Verdict::Run {
            tool: "fs_modify_file".into(),
            arguments: Arguments::new(modify("main", "begin")),
            edited: true,
            mode: Mode::Ask,
            reason: String::new(),
            approved: true,
            key: Some('y'),
        },
    );
    let second = shown(asker.file_change("c2", "fs_modify_file", &modify("begin", "end")));
    assert_eq!(second[0], AFTER_FIRST);
    assert_eq!(
        second[4..],
        ["  1   - pub fn begin() {}", "    1 + pub fn end() {}"]
    );
}
