//! The conversation log through the real `jp` binary (issue 14, item 3):
//! a query appends its events and rewrites nothing, a line a crash cut
//! short is reported and dropped, and a conversation from before the log
//! is read as it is and converted by the next query.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::MetadataExt as _;
use std::path::PathBuf;
use std::time::Duration;

use common::Workspace;
use common::providers::text_reply;
use common::query::{initialized, query, stored};
use jp_test_server::TestServer;
use serde_json::json;

const MODEL: &str = "anthropic/claude-haiku-4-5";
const HEADER: &str = "── jp (anthropic/claude-haiku-4-5) ──\n";
/// The line after a turn of one reply (the test server reports 10 input
/// and 42 output tokens; claude-haiku-4-5 costs $1 and $5 a million), in a
/// short conversation: the next request takes about 1% of the model's
/// 200,000-token window (most of it jp's system prompt and tools).
const TOKENS: &str = "tokens: 10 in · 42 out · $0.0002 · context 1% of 200k\n";

/// The log of conversation `id`.
fn log_path(ws: &Workspace, id: &str) -> PathBuf {
    ws.project()
        .join(".jp/conversations")
        .join(id)
        .join("events.jsonl")
}

/// `text` with every event time replaced by `T`.
fn hide_times(text: &str) -> String {
    let re = regex::Regex::new(r#""at_ms":\d+"#).unwrap();
    re.replace_all(text, r#""at_ms":T"#).into_owned()
}

#[test]
fn a_query_appends_its_events_and_rewrites_nothing() {
    let ws = initialized();
    let long = "All of it. ".repeat(2_000);
    let server = TestServer::start(vec![text_reply(&long), text_reply("Short.")]);
    let first = query(&ws, &server, MODEL, &[], "one");
    assert_eq!(first.code, 0, "{first:?}");
    let conversation = stored(&ws);
    let id = conversation["id"].as_str().unwrap();
    let created_ms = &conversation["created_ms"];
    let path = log_path(&ws, id);
    let after_first = std::fs::read(&path).unwrap();
    assert_eq!(
        hide_times(std::str::from_utf8(&after_first).unwrap()),
        format!(
            "{{\"format\":\"jp-conversation-log\",\"version\":2,\"id\":\"{id}\",\"created_ms\":{created_ms}}}\n\
             {{\"at_ms\":T,\"type\":\"turn_start\"}}\n\
             {{\"at_ms\":T,\"type\":\"chat_request\",\"content\":\"one\"}}\n\
             {{\"at_ms\":T,\"type\":\"assistant_message\",\"content\":\"{long}\"}}\n\
             {{\"at_ms\":T,\"type\":\"usage\",\"model\":\"anthropic/claude-haiku-4-5\",\"input_tokens\":10,\"output_tokens\":42,\"cost_usd\":0.00022}}\n"
        )
    );
    let inode = std::fs::metadata(&path).unwrap().ino();

    let second = query(&ws, &server, MODEL, &[], "two");
    assert_eq!(second.code, 0, "{second:?}");
    // 22,000 characters of the first answer, with the definitions of jp
    // init's tools (fs_grep and fs_glob since issue 40): about 4% of the
    // window.
    assert_eq!(
        second.stderr,
        format!("{HEADER}tokens: 10 in · 42 out · $0.0002 · context 4% of 200k\n")
    );
    let after_second = std::fs::read(&path).unwrap();
    // The same file, grown by the new events' lines and nothing else.
    assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
    assert_eq!(&after_second[..after_first.len()], &after_first[..]);
    assert_eq!(
        hide_times(std::str::from_utf8(&after_second[after_first.len()..]).unwrap()),
        "{\"at_ms\":T,\"type\":\"turn_start\"}\n\
         {\"at_ms\":T,\"type\":\"chat_request\",\"content\":\"two\"}\n\
         {\"at_ms\":T,\"type\":\"assistant_message\",\"content\":\"Short.\"}\n\
         {\"at_ms\":T,\"type\":\"usage\",\"model\":\"anthropic/claude-haiku-4-5\",\"input_tokens\":10,\"output_tokens\":42,\"cost_usd\":0.00022}\n"
    );
}

#[test]
fn a_torn_last_line_is_reported_and_dropped_and_the_next_query_works() {
    let ws = initialized();
    let server = TestServer::start(vec![text_reply("A."), text_reply("B.")]);
    assert_eq!(query(&ws, &server, MODEL, &[], "one").code, 0);
    let id = stored(&ws)["id"].as_str().unwrap().to_owned();
    let path = log_path(&ws, &id);
    let whole = std::fs::read(&path).unwrap();
    // What a kill in the middle of writing an event leaves.
    let mut torn = whole.clone();
    let cut = br#"{"at_ms":1795350600000,"type":"assistant_mes"#;
    torn.extend_from_slice(cut);
    std::fs::write(&path, &torn).unwrap();
    let where_ = format!("line 6, {} bytes at offset {}", cut.len(), whole.len());
    let shown_path = format!("<tmp>/project/.jp/conversations/{id}/events.jsonl");

    // A reader leaves the line out, says so, and changes nothing.
    let ignored = format!(
        "warning: {shown_path}: ignored its last line ({where_}): it is not a whole event (a crash or kill left it unfinished, or a jp is writing it now)\n"
    );
    let shown = ws.jp(&["conversation", "show"]);
    assert_eq!(shown.code, 0, "{shown:?}");
    assert_eq!(shown.stderr, ignored);
    assert_eq!(
        shown.stdout.lines().skip(3).collect::<Vec<_>>(),
        [
            "you: one",
            "assistant: A.",
            "",
            "total: 1 turn · 10 in · 42 out · $0.0002"
        ]
    );
    // So do the commands that read its config changes and its calls.
    let config = ws.jp(&["config", "get", "assistant.model.id"]);
    assert_eq!(config.code, 0, "{config:?}");
    assert_eq!(config.stderr, ignored);
    let args = r#"{"path": "src/a.rs"}"#;
    let policy = ws.jp(&["policy", "check", "fs_read_file", "--args", args]);
    assert_eq!(policy.code, 0, "{policy:?}");
    assert_eq!(policy.stderr, ignored);
    assert_eq!(std::fs::read(&path).unwrap(), torn);

    // The next query drops it from the file, says so, and continues.
    let next = query(&ws, &server, MODEL, &[], "two");
    assert_eq!(next.code, 0, "{next:?}");
    assert_eq!(
        next.stderr,
        format!(
            "warning: {shown_path}: dropped its last line ({where_}): an event that a crash or kill left unfinished; the conversation continues from the event before it\n{HEADER}{TOKENS}"
        )
    );
    assert_eq!(next.stdout, "B.\n");
    let sent = server.wait_for(2, Duration::from_secs(5))[1].json();
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "one", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [{"type": "text", "text": "A."}]},
            {"role": "user", "content": [{"type": "text", "text": "two", "cache_control": {"type": "ephemeral"}}]},
        ])
    );
    let repaired = std::fs::read(&path).unwrap();
    assert_eq!(&repaired[..whole.len()], &whole[..]);
    assert_eq!(
        hide_times(std::str::from_utf8(&repaired[whole.len()..]).unwrap()),
        "{\"at_ms\":T,\"type\":\"turn_start\"}\n\
         {\"at_ms\":T,\"type\":\"chat_request\",\"content\":\"two\"}\n\
         {\"at_ms\":T,\"type\":\"assistant_message\",\"content\":\"B.\"}\n\
         {\"at_ms\":T,\"type\":\"usage\",\"model\":\"anthropic/claude-haiku-4-5\",\"input_tokens\":10,\"output_tokens\":42,\"cost_usd\":0.00022}\n"
    );
    let again = ws.jp(&["conversation", "show"]);
    assert_eq!(again.stderr, "");
}

#[test]
fn jp_config_shows_the_config_when_the_active_conversation_cannot_be_read() {
    let ws = initialized();
    let server = TestServer::start(vec![text_reply("A.")]);
    assert_eq!(query(&ws, &server, MODEL, &[], "one").code, 0);
    let id = stored(&ws)["id"].as_str().unwrap().to_owned();
    std::fs::write(log_path(&ws, &id), "not a log\n").unwrap();
    let config = ws.jp(&["config", "get", "assistant.model.id"]);
    assert_eq!(config.code, 0, "{config:?}");
    assert_eq!(config.stdout, "anthropic/claude-sonnet-4-5\n");
    assert_eq!(
        config.stderr,
        format!(
            "warning: <tmp>/project/.jp/conversations/{id}/events.jsonl is not a readable \
             conversation: its header (line 1) is not readable: expected ident (column 2); \
             the config shown leaves out the changes recorded in it\n"
        )
    );
}

#[test]
fn a_version_1_conversation_is_read_then_converted_by_the_next_query() {
    let ws = initialized();
    let fixture = include_str!("data/v1_conversation.json");
    let id = "1795350600000";
    ws.write(
        &format!("project/.jp/conversations/{id}/conversation.json"),
        fixture,
    );
    ws.write("project/.jp/conversations/active", &format!("{id}\n"));
    // A conversation this user's jp did not record is continued only when
    // the user chooses it (issue 34, item 4); it is said to be from
    // elsewhere, and gives no authority.
    let elsewhere = "note: this conversation is from elsewhere: your jp did not record it in this \
                     workspace, so nothing in it counts as your history (no session approval, and \
                     no call a stateful policy looks for)\n";
    let chosen = ws.jp(&["conversation", "use", id]);
    assert_eq!(
        chosen.stdout,
        format!("active conversation: {id}\n{elsewhere}"),
        "{chosen:?}"
    );
    let old = ws
        .project()
        .join(format!(".jp/conversations/{id}/conversation.json"));

    // Readers read it as it is.
    // Its age is counted from the test's clock (TEST_NOW_MS), not today.
    let ls = ws.jp(&["conversation", "ls"]);
    assert_eq!(
        (ls.code, ls.stdout.as_str(), ls.stderr.as_str()),
        (
            0,
            "* 1795350600000  7 days ago    1 turn   (from elsewhere) Reading notes\n",
            ""
        )
    );
    let shown_before = ws.jp(&["conversation", "show"]);
    assert_eq!(
        shown_before.stdout,
        format!(
            "conversation 1795350600000 · Reading notes\n\
         {elsewhere}\
         \n\
         ── turn 1 · 2026-11-22 12:30 ──\n\
         you: what is in notes.txt?\n\
         tool call toolu_1 fs_read_file({{\"path\":\"notes.txt\"}})\n\
         tool result toolu_1 [success]: buy milk\n\
         assistant: It says: buy milk.\n"
        )
    );
    assert_eq!(std::fs::read_to_string(&old).unwrap(), fixture);
    assert!(!log_path(&ws, id).exists());

    // The next query continues it from its history, and converts it.
    let server = TestServer::start(vec![text_reply("Still milk.")]);
    let run = query(&ws, &server, MODEL, &[], "and now?");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stderr, format!("{HEADER}{TOKENS}"));
    let sent = server.wait_for(1, Duration::from_secs(5))[0].json();
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "what is in notes.txt?"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "fs_read_file", "input": {"path": "notes.txt"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "buy milk\n", "is_error": false, "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [{"type": "text", "text": "It says: buy milk."}]},
            {"role": "user", "content": [{"type": "text", "text": "and now?", "cache_control": {"type": "ephemeral"}}]},
        ])
    );
    assert!(!old.exists());
    let mut expected = String::from(
        "{\"format\":\"jp-conversation-log\",\"version\":2,\"id\":\"1795350600000\",\"created_ms\":1795350600000,\"title\":\"Reading notes\"}\n",
    );
    for line in fixture.lines().filter(|l| l.starts_with("    {")) {
        expected.push_str(line.trim().trim_end_matches(','));
        expected.push('\n');
    }
    let log = std::fs::read_to_string(log_path(&ws, id)).unwrap();
    assert_eq!(&log[..expected.len()], expected);
    assert_eq!(
        hide_times(&log[expected.len()..]),
        "{\"at_ms\":T,\"type\":\"turn_start\"}\n\
         {\"at_ms\":T,\"type\":\"chat_request\",\"content\":\"and now?\"}\n\
         {\"at_ms\":T,\"type\":\"assistant_message\",\"content\":\"Still milk.\"}\n\
         {\"at_ms\":T,\"type\":\"usage\",\"model\":\"anthropic/claude-haiku-4-5\",\"input_tokens\":10,\"output_tokens\":42,\"cost_usd\":0.00022}\n"
    );
    // What was there reads as before, with the new turn after it.
    // Its own events are the new turn's only.
    let shown_after = ws.jp(&["conversation", "show"]).stdout;
    let theirs = fixture.lines().filter(|l| l.starts_with("    {")).count();
    assert_eq!(
        shown_after.lines().nth(1).unwrap(),
        format!(
            "note: {theirs} of this conversation's {} events were not recorded by your jp in this \
             workspace (added or changed by hand, or from elsewhere); they count as no part of your \
             history (no session approval, and no call a stateful policy looks for)",
            theirs + 4
        )
    );
    assert_eq!(
        shown_after.lines().skip(2).take(6).collect::<Vec<_>>(),
        shown_before.stdout.lines().skip(2).collect::<Vec<_>>()
    );
    assert_eq!(
        shown_after.lines().skip(10).collect::<Vec<_>>(),
        [
            "you: and now?",
            "assistant: Still milk.",
            "",
            // The converted turn had no usage recorded; the new one has.
            "total: 2 turns · 10 in · 42 out · $0.0002"
        ]
    );
}

#[test]
fn an_active_conversation_that_went_missing_is_reported() {
    let ws = initialized();
    let server = TestServer::start(vec![text_reply("A."), text_reply("B.")]);
    assert_eq!(query(&ws, &server, MODEL, &[], "one").code, 0);
    let id = stored(&ws)["id"].as_str().unwrap().to_owned();
    std::fs::remove_file(log_path(&ws, &id)).unwrap();
    let next = query(&ws, &server, MODEL, &[], "two");
    assert_eq!(next.code, 0, "{next:?}");
    assert_eq!(
        next.stderr,
        format!(
            "warning: the active conversation `{id}` is not in <tmp>/project/.jp/conversations any more; this query starts a new one\n{HEADER}{TOKENS}"
        )
    );
    assert_ne!(stored(&ws)["id"].as_str().unwrap(), id);
}

/// Times come from `JP_NOW_MS` when it is set (the test harness sets it
/// for every run): a conversation is created at that time, its ages count
/// from it, and a value that is not a time is refused before jp does
/// anything (issue 34, item 10).
#[test]
fn the_clock_is_the_one_jp_now_ms_sets() {
    let ws = initialized();
    let server = TestServer::start(vec![text_reply("A."), text_reply("B.")]);
    assert_eq!(query(&ws, &server, MODEL, &[], "one").code, 0);
    let conversation = stored(&ws);
    assert_eq!(conversation["created_ms"], json!(1_796_040_000_000_u64));

    let later = ws.jp_with_env(&["conversation", "ls"], &[("JP_NOW_MS", "1796223600000")]);
    let id = conversation["id"].as_str().unwrap();
    assert_eq!(
        (later.code, later.stdout.as_str(), later.stderr.as_str()),
        (
            0,
            format!("* {id}  2 days ago    1 turn   one\n").as_str(),
            ""
        )
    );

    for bad in ["yesterday", "-1", "1.5", "", "18446744073709551616"] {
        let run = ws.jp_with_env(&["conversation", "ls"], &[("JP_NOW_MS", bad)]);
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr),
            (
                2,
                "",
                format!(
                    "error: JP_NOW_MS={bad:?} is not a time: give milliseconds since \
                     1970-01-01 UTC, or unset it to use the system clock\n"
                )
            ),
            "{bad:?}"
        );
    }
}
