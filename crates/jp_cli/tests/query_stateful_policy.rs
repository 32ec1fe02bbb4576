//! Stateful policies (`conversation.policies`) through the real `jp`
//! binary: a model that changes a file it never read is told to read it
//! first, the file is untouched, and once it has read the file (spelled
//! differently) the change runs. A later `jp query` in the same
//! conversation still knows the file was read. A read that failed does not
//! count, and a change ahead of its read in one response is denied while
//! the read runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::Workspace;
use common::providers::{Item, anthropic, text_reply as text, tool_reply as tool};
use common::query::{event_types, initialized, query, query_command, responses, stored};
use jp_test_server::{Reply, TestServer};
use serde_json::json;

const MODEL: &str = "anthropic/claude-haiku-4-5";

const POLICY: &str = r#"
[[conversation.policies]]
kind = "read_before_write"
read_tools = ["fs_read_file"]
write_tools = ["fs_modify_file", "fs_create_file"]
"#;

const UNATTENDED: &str = "conversation.tools.fs_modify_file.policy.run=unattended";

fn with_policy() -> Workspace {
    let ws = initialized();
    let config = ws.read("project/.jp/config.toml");
    ws.write("project/.jp/config.toml", &format!("{config}{POLICY}"));
    ws.write("project/notes.txt", "draft\n");
    ws
}

/// The header of each response (on stderr; the text goes to stdout).
const HEADER: &str = "── jp (anthropic/claude-haiku-4-5) ──\n";

const DENIED: &str = "`notes.txt` already exists and has not been read in this conversation; read it with `fs_read_file` first, then call `fs_modify_file` again.";

#[test]
fn a_file_must_be_read_before_it_is_changed_and_the_conversation_remembers() {
    let ws = with_policy();
    let server = TestServer::start(vec![
        tool(
            "toolu_1",
            "fs_modify_file",
            r#"{"path": "notes.txt", "patterns": [{"old": "draft", "new": "final"}]}"#,
        ),
        tool("toolu_2", "fs_read_file", r#"{"path": "notes.txt"}"#),
        tool(
            "toolu_3",
            "fs_modify_file",
            r#"{"path": "./notes.txt", "patterns": [{"old": "draft", "new": "final"}]}"#,
        ),
        text("Done."),
    ]);
    let run = query(
        &ws,
        &server,
        MODEL,
        &["--cfg", UNATTENDED],
        "finalize the notes",
    );
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "{HEADER}\
             Calling tool fs_modify_file(path: \"notes.txt\", patterns: [{{\"old\":\"draft\",\"new\":\"final\"}}])\n  \
             unattended (policy.run is \"unattended\")\n  \
             fs_modify_file: denied by read_before_write: {DENIED}\n\
             {HEADER}\
             Calling tool fs_read_file(path: \"notes.txt\")\n  \
             unattended (policy.run[5] (catch-all) matched)\n  \
             fs_read_file success: draft\n\
             {HEADER}\
             Calling tool fs_modify_file(path: \"./notes.txt\", patterns: [{{\"old\":\"draft\",\"new\":\"final\"}}])\n  \
             unattended (policy.run is \"unattended\")\n  \
             fs_modify_file success: 1 change in notes.txt\n\
             {HEADER}\
             tokens: 4 responses · 40 in · 168 out · $0.0009 · context 1% of 200k\n"
        )
    );
    assert_eq!(ws.read("project/notes.txt"), "final\n");

    // The model got the reason, as an error result, and nothing else.
    let requests = server.wait_for(4, Duration::from_secs(5));
    assert_eq!(
        requests[1].json()["messages"][2]["content"][0],
        json!({
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": format!("The call was not run: {DENIED}"),
            "is_error": true,
            "cache_control": {"type": "ephemeral"}
        })
    );
    let conversation = stored(&ws);
    assert_eq!(
        event_types(&conversation)[2..8],
        [
            "tool_call_request",
            "usage",
            "policy_denied",
            "call_decision",
            "tool_call_response",
            "tool_call_request"
        ]
    );
    let denial = conversation["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "policy_denied")
        .unwrap();
    assert_eq!(denial["policy"], "read_before_write");
    assert_eq!(denial["tool"], "fs_modify_file");
    assert_eq!(denial["reason"], DENIED);
    assert_eq!(
        denial["metadata"],
        json!({ "tool": "fs_modify_file", "key": "notes.txt", "prerequisites": ["fs_read_file"] })
    );
    // The read's response keeps the key it taught, as resolved then, so a
    // later replay does not resolve it again.
    let read = conversation["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "tool_call_response" && e["id"] == "toolu_2")
        .unwrap();
    assert_eq!(read["ran"], json!({ "keys": { "/path": "notes.txt" } }));
    let show = ws.jp(&["conversation", "show"]);
    assert!(
        show.stdout.lines().any(|line| line
            == format!("policy read_before_write denied toolu_1 fs_modify_file: {DENIED} {{\"tool\":\"fs_modify_file\",\"key\":\"notes.txt\",\"prerequisites\":[\"fs_read_file\"]}}")),
        "{}",
        show.stdout
    );

    // `jp policy check` judges a call by the conversation: notes.txt was
    // read in it, other.txt was not (and exists).
    ws.write("project/other.txt", "x\n");
    let id = conversation["id"].as_str().unwrap().to_owned();
    for (path, expected) in [
        (
            "notes.txt",
            format!("  stateful policies (read_before_write): allow in conversation {id}"),
        ),
        (
            "other.txt",
            format!(
                "  stateful policies: read_before_write denies fs_modify_file in conversation {id}: `other.txt` already exists and has not been read in this conversation; read it with `fs_read_file` first, then call `fs_modify_file` again."
            ),
        ),
    ] {
        let args = format!(r#"{{"path": "{path}", "patterns": []}}"#);
        let run = ws.jp(&[
            "policy",
            "check",
            "fs_modify_file",
            "--args",
            &args,
            "--conversation",
            &id,
        ]);
        assert_eq!(run.code, 0, "{run:?}");
        assert_eq!(
            run.stdout.lines().last(),
            Some(expected.as_str()),
            "{}",
            run.stdout
        );
    }
    let run = ws.jp(&["policy", "check", "fs_read_file"]);
    assert!(
        run.stdout
            .lines()
            .any(|l| l == "  stateful policies (conversation.policies): read_before_write"),
        "{}",
        run.stdout
    );

    // A second query in the same conversation: the read is remembered.
    let server = TestServer::start(vec![
        tool(
            "toolu_4",
            "fs_modify_file",
            r#"{"path": "notes.txt", "patterns": [{"old": "final", "new": "FINAL"}]}"#,
        ),
        text("Shouted."),
    ]);
    let run = query(&ws, &server, MODEL, &["--cfg", UNATTENDED], "shout it");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read("project/notes.txt"), "FINAL\n");
    assert_eq!(
        responses(&stored(&ws)).last().unwrap(),
        &("success".to_owned(), "1 change in notes.txt".to_owned())
    );
}

/// `notes.txt` holding bytes that are not UTF-8: it exists, and
/// `fs_read_file` fails on it whoever runs it (permission bits would not
/// stop root).
fn with_unreadable_notes() -> Workspace {
    let ws = with_policy();
    std::fs::write(ws.project().join("notes.txt"), NOT_UTF8).unwrap();
    ws
}

const NOT_UTF8: &[u8] = b"caf\xe9\n";

const UNREADABLE: &str = "cannot read `notes.txt`: it is not UTF-8 text (an invalid byte at offset 3), and fs_read_file handles only UTF-8";

/// A read that failed teaches the policy nothing, in the query it failed
/// in and when a later query replays the conversation: the change that
/// follows is denied with the reason, and the file is untouched.
#[test]
fn a_read_that_failed_does_not_count() {
    let ws = with_unreadable_notes();
    let modify = r#"{"path": "notes.txt", "patterns": [{"old": "caf", "new": "cafe"}]}"#;
    let server = TestServer::start(vec![
        tool("toolu_1", "fs_read_file", r#"{"path": "notes.txt"}"#),
        tool("toolu_2", "fs_modify_file", modify),
        text("I cannot read it."),
    ]);
    let run = query(&ws, &server, MODEL, &["--cfg", UNATTENDED], "fix the notes");
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "{HEADER}\
             Calling tool fs_read_file(path: \"notes.txt\")\n  \
             unattended (policy.run[5] (catch-all) matched)\n  \
             fs_read_file error: {UNREADABLE}\n\
             {HEADER}\
             Calling tool fs_modify_file(path: \"notes.txt\", patterns: [{{\"old\":\"caf\",\"new\":\"cafe\"}}])\n  \
             unattended (policy.run is \"unattended\")\n  \
             fs_modify_file: denied by read_before_write: {DENIED}\n\
             {HEADER}\
             tokens: 3 responses · 30 in · 126 out · $0.0007 · context 1% of 200k\n"
        )
    );
    assert_eq!(
        std::fs::read(ws.project().join("notes.txt")).unwrap(),
        NOT_UTF8
    );
    let requests = server.wait_for(3, Duration::from_secs(5));
    assert_eq!(
        requests[2].json()["messages"][4]["content"][0],
        json!({
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": format!("The call was not run: {DENIED}"),
            "is_error": true,
            "cache_control": {"type": "ephemeral"}
        })
    );
    assert_eq!(
        responses(&stored(&ws)),
        [
            ("error".to_owned(), UNREADABLE.to_owned()),
            (
                "denied".to_owned(),
                format!("The call was not run: {DENIED}")
            ),
        ]
    );

    // The next query rebuilds the state from the conversation, where the
    // read is stored as failed: still no change.
    let server = TestServer::start(vec![
        tool("toolu_3", "fs_modify_file", modify),
        text("Still not."),
    ]);
    let run = query(&ws, &server, MODEL, &["--cfg", UNATTENDED], "try again");
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(
        std::fs::read(ws.project().join("notes.txt")).unwrap(),
        NOT_UTF8
    );
    assert_eq!(
        responses(&stored(&ws)).last().unwrap(),
        &(
            "denied".to_owned(),
            format!("The call was not run: {DENIED}")
        )
    );
}

/// Calls of one response are judged in order, each with what the earlier
/// ones did: a change before the read of the same file is denied (the read
/// has not run yet), and the read still runs.
#[test]
fn a_write_before_the_read_of_the_same_file_in_one_response_is_denied_and_the_read_runs() {
    let ws = with_policy();
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Tool(
                    "toolu_1",
                    "fs_modify_file",
                    r#"{"path": "notes.txt", "patterns": [{"old": "draft", "new": "final"}]}"#,
                ),
                Item::Tool("toolu_2", "fs_read_file", r#"{"path": "notes.txt"}"#),
            ],
            "tool_use",
            false,
        )),
        text("Read it; I will change it next."),
    ]);
    let run = query(
        &ws,
        &server,
        MODEL,
        &["--cfg", UNATTENDED],
        "finalize the notes",
    );
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "{HEADER}\
             Calling tool fs_modify_file(path: \"notes.txt\", patterns: [{{\"old\":\"draft\",\"new\":\"final\"}}])\n  \
             unattended (policy.run is \"unattended\")\n\
             Calling tool fs_read_file(path: \"notes.txt\")\n  \
             unattended (policy.run[5] (catch-all) matched)\n  \
             fs_modify_file: denied by read_before_write: {DENIED}\n  \
             fs_read_file success: draft\n\
             {HEADER}\
             tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n"
        )
    );
    assert_eq!(ws.read("project/notes.txt"), "draft\n");
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(
        requests[1].json()["messages"][2]["content"],
        json!([
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": format!("The call was not run: {DENIED}"),
                "is_error": true
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "content": "draft\n",
                "is_error": false,
                "cache_control": {"type": "ephemeral"}
            }
        ])
    );
}

/// Each denial is a `tracing` warning (issue 12). The terminal shows it as
/// chrome already, so jp's default log level leaves it out (the first
/// test sees no log line); `RUST_LOG=warn` shows it.
#[test]
fn a_denial_is_logged_as_a_warning() {
    let ws = with_policy();
    let server = TestServer::start(vec![
        tool(
            "toolu_1",
            "fs_modify_file",
            r#"{"path": "notes.txt", "patterns": [{"old": "draft", "new": "final"}]}"#,
        ),
        text("I will read it first."),
    ]);
    let mut command = query_command(
        &ws,
        &server,
        MODEL,
        &["--cfg", UNATTENDED],
        "finalize the notes",
    );
    command.env("RUST_LOG", "warn");
    let run = ws.run_of(command.output().unwrap());
    assert_eq!(run.code, 5, "{run:?}");
    // The timestamp varies.
    let timestamp = regex::Regex::new(r"(?m)^\d{4}-\d\d-\d\dT[0-9:.]+Z +").unwrap();
    assert_eq!(
        timestamp.replace_all(&run.stderr, "<time> "),
        format!(
            "{HEADER}\
             Calling tool fs_modify_file(path: \"notes.txt\", patterns: [{{\"old\":\"draft\",\"new\":\"final\"}}])\n  \
             unattended (policy.run is \"unattended\")\n\
             <time> WARN a stateful policy denied a tool call policy=\"read_before_write\" tool=\"fs_modify_file\" reason={DENIED}\n  \
             fs_modify_file: denied by read_before_write: {DENIED}\n\
             {HEADER}\
             tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n"
        )
    );
}
