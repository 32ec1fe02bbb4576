//! `jp query` as a process among others: two processes on one conversation,
//! Ctrl-C mid-stream, a kill mid-tool, tools that ask questions, results
//! withheld by policy, and the conversation commands.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::providers::{Item, anthropic};
use common::query::{echo_tool, initialized, query, query_command, responses, stored};
use jp_test_server::{Fault, Reply, TestServer};
use serde_json::json;

const MODEL: &str = "anthropic/claude-haiku-4-5";

/// Waits until the server has received `n` requests (complete or not).
fn wait_for_requests(server: &TestServer, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.requests().len() < n {
        assert!(Instant::now() < deadline, "no request arrived");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &std::process::Child, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_second_process_cannot_write_the_same_conversation_and_ctrl_c_closes_the_stream() {
    let ws = initialized();
    let body = anthropic(
        &[Item::Text("Thinking about it... and more")],
        "end_turn",
        false,
    );
    // Stall just before the event carrying "and mor" (text streams in
    // 7-character pieces).
    let piece = body.find("\"and mor\"").unwrap();
    let stall_at = body[..piece].rfind("event:").unwrap();
    let server = TestServer::start(vec![
        Reply::sse(body).fault(Fault::StallAfter(stall_at)),
        Reply::sse(anthropic(&[Item::Text("Continued.")], "end_turn", false)),
    ]);
    let first = query_command(&ws, &server, MODEL, &[], "one")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_requests(&server, 1);

    // The first jp holds the conversation; a second one is refused.
    let second = query(&ws, &server, MODEL, &[], "two");
    assert_eq!(second.code, 1, "{second:?}");
    let id = stored(&ws)["id"].as_str().unwrap().to_owned();
    assert_eq!(
        second.stderr,
        format!(
            "error: conversation `{id}` is in use by another jp process (pid {}); wait for it to finish\n",
            first.id()
        )
    );

    // Ctrl-C: jp drops the stream, which closes the connection.
    signal(&first, "INT");
    let output = first.wait_with_output().unwrap();
    let run = ws.run_of(output);
    assert_eq!(run.code, 130, "{run:?}");
    assert_eq!(run.stdout, "Thinking about it... \n");
    let requests = server.wait_for(1, Duration::from_secs(5));
    assert!(requests[0].client_disconnected, "{:?}", requests[0]);

    // The partial text is kept, and the next query continues from it.
    let next = query(&ws, &server, MODEL, &[], "three");
    assert_eq!(next.code, 0, "{next:?}");
    let sent = server.wait_for(2, Duration::from_secs(5))[1].json();
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "one", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Thinking about it... "}]},
            {"role": "user", "content": [{"type": "text", "text": "three", "cache_control": {"type": "ephemeral"}}]},
        ])
    );
}

#[test]
fn a_kill_during_a_tool_run_leaves_a_readable_conversation() {
    let ws = initialized();
    ws.write(
        "project/.jp/tools.toml",
        "[conversation.tools.slow]\ncommand = [\"sh\", \"-c\", \"touch .jp/started; sleep 10\"]\npolicy.run = \"unattended\"\n",
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[Item::Tool("toolu_1", "slow", "{}")],
            "tool_use",
            false,
        )),
        Reply::sse(anthropic(&[Item::Text("Recovered.")], "end_turn", false)),
    ]);
    let mut child = query_command(&ws, &server, MODEL, &["--cfg", "@.jp/tools.toml"], "go")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ws.project().join(".jp/started").exists() {
        assert!(Instant::now() < deadline, "the tool never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let conversation = stored(&ws);
    let types: Vec<_> = conversation["events"].as_array().unwrap()[2..]
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    // Killed while the tool ran: the call has no response.
    assert_eq!(types, ["tool_call_request", "usage"]);
    // The next query answers the dangling call for the provider.
    let run = query(&ws, &server, MODEL, &["--cfg", "@.jp/tools.toml"], "again");
    assert_eq!(run.code, 0, "{run:?}");
    let sent = server.wait_for(2, Duration::from_secs(5))[1].json();
    assert_eq!(
        sent["messages"][2],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "The tool call was interrupted before it finished; whether it ran is unknown.", "is_error": true}]})
    );
}

#[test]
fn a_question_without_a_terminal_and_a_withheld_result() {
    let ws = initialized();
    ws.write(
        "project/.jp/tools.toml",
        &format!(
            "[conversation.tools.asker]\ncommand = [\"sh\", \"-c\", \"cat >/dev/null; echo '{{\\\"type\\\":\\\"needs_input\\\",\\\"question\\\":{{\\\"id\\\":\\\"ok\\\",\\\"text\\\":\\\"Overwrite?\\\"}}}}'\"]\npolicy.run = \"unattended\"\n\
             {}policy.result = \"skip\"\n",
            echo_tool("secret", "s3cret")
        ),
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Tool("toolu_1", "asker", "{}"),
                Item::Tool("toolu_2", "secret", "{}"),
            ],
            "tool_use",
            false,
        )),
        Reply::sse(anthropic(&[Item::Text("Ok.")], "end_turn", false)),
    ]);
    let run = query(&ws, &server, MODEL, &["--cfg", "@.jp/tools.toml"], "go");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        responses(&stored(&ws)),
        [
            (
                "error".to_owned(),
                "The tool needs an answer to \"Overwrite?\" and no one could answer it (jp is running without a terminal); it did not finish.".to_owned()
            ),
            (
                "withheld".to_owned(),
                "The tool ran, but the user's policy withholds its result from you.".to_owned()
            ),
        ]
    );
    let sent = server.wait_for(2, Duration::from_secs(5))[1].json();
    assert!(!sent.to_string().contains("s3cret"));
}

#[test]
fn conversation_commands() {
    let ws = initialized();
    assert_eq!(
        ws.jp(&["conversation", "ls"]).stdout,
        "no conversations yet; `jp query MESSAGE` starts one\n"
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(&[Item::Text("A.")], "end_turn", false)),
        Reply::sse(anthropic(&[Item::Text("B.")], "end_turn", false)),
    ]);
    assert_eq!(query(&ws, &server, MODEL, &[], "first").code, 0);
    let a = stored(&ws)["id"].as_str().unwrap().to_owned();
    assert_eq!(query(&ws, &server, MODEL, &["--new"], "second").code, 0);
    let b = stored(&ws)["id"].as_str().unwrap().to_owned();
    assert_ne!(a, b);

    let shown = ws.jp(&["conversation", "show", &a]);
    assert_eq!(shown.code, 0);
    let lines: Vec<&str> = shown.stdout.lines().collect();
    assert_eq!(lines[0], format!("conversation {a} · first"));
    assert_eq!(
        lines[3..],
        [
            "you: first",
            "assistant: A.",
            "",
            "total: 1 turn · 10 in · 42 out · $0.0002"
        ]
    );

    assert_eq!(
        ws.jp(&["conversation", "use", &a]).stdout,
        format!("active conversation: {a}\n")
    );
    assert_eq!(stored(&ws)["id"], a.as_str());
    assert_eq!(
        ws.jp(&["conversation", "rm", &a]).stdout,
        format!("removed conversation {a}\n")
    );
    let ls = ws.jp(&["conversation", "ls"]).stdout;
    assert_eq!(ls.lines().count(), 1, "{ls}");
    assert!(ls.starts_with(&format!("  {b}  ")), "{ls}");
    let missing = ws.jp(&["conversation", "show", &a]);
    assert_eq!(missing.code, 2);
    assert_eq!(
        missing.stderr,
        format!("error: no conversation `{a}` (see `jp conversation ls`)\n")
    );
}

#[test]
fn ctrl_c_during_a_tool_run_stops_the_tool_and_ends_the_turn() {
    let ws = initialized();
    ws.write(
        "project/.jp/tools.toml",
        "[conversation.tools.slow]\ncommand = [\"sh\", \"-c\", \"touch .jp/started; sleep 20\"]\npolicy.run = \"unattended\"\n\
         [conversation.tools.never]\ncommand = [\"sh\", \"-c\", \"touch .jp/never-ran\"]\npolicy.run = \"unattended\"\n",
    );
    let server = TestServer::start(vec![Reply::sse(anthropic(
        &[
            Item::Tool("toolu_1", "slow", "{}"),
            Item::Tool("toolu_2", "never", "{}"),
        ],
        "tool_use",
        false,
    ))]);
    let child = query_command(&ws, &server, MODEL, &["--cfg", "@.jp/tools.toml"], "go")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ws.project().join(".jp/started").exists() {
        assert!(Instant::now() < deadline, "the tool never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let interrupted_at = Instant::now();
    signal(&child, "INT");
    let run = ws.run_of(child.wait_with_output().unwrap());
    assert_eq!(run.code, 130, "{run:?}");
    assert!(interrupted_at.elapsed() < Duration::from_secs(10));
    assert!(!ws.project().join(".jp/never-ran").exists());
    let stored = responses(&stored(&ws));
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert_eq!(
        stored[0],
        (
            "interrupted".to_owned(),
            "tool `slow` was cancelled; it was stopped".to_owned()
        )
    );
    assert_eq!(
        stored[1],
        (
            "interrupted".to_owned(),
            "The call was not run: the user interrupted the turn.".to_owned()
        )
    );
    assert_eq!(server.requests().len(), 1, "no request after the interrupt");
}

#[test]
fn sigterm_during_a_tool_run_stops_the_tool_too() {
    let ws = initialized();
    ws.write(
        "project/.jp/tools.toml",
        "[conversation.tools.slow]\ncommand = [\"sh\", \"-c\", \"echo $$ > .jp/pid; exec sleep 20\"]\npolicy.run = \"unattended\"\n",
    );
    let server = TestServer::start(vec![Reply::sse(anthropic(
        &[Item::Tool("toolu_1", "slow", "{}")],
        "tool_use",
        false,
    ))]);
    let child = query_command(&ws, &server, MODEL, &["--cfg", "@.jp/tools.toml"], "go")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = ws.project().join(".jp/pid");
    let deadline = Instant::now() + Duration::from_secs(10);
    let pid = loop {
        if let Ok(text) = std::fs::read_to_string(&pid_file)
            && text.ends_with('\n')
        {
            break text.trim().to_owned();
        }
        assert!(Instant::now() < deadline, "the tool never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    signal(&child, "TERM");
    let run = ws.run_of(child.wait_with_output().unwrap());
    assert_eq!(run.code, 130, "{run:?}");
    // The tool's process is gone (it was killed, not left to run on).
    let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
    let deadline = Instant::now() + Duration::from_secs(5);
    while proc_dir.exists() {
        assert!(Instant::now() < deadline, "the tool {pid} still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "interrupted".to_owned(),
            "tool `slow` was cancelled; it was stopped".to_owned()
        )]
    );
}

/// `jp conversation use`, `show` and `rm` take a unique start of an id,
/// and `use`/`show` take `last`; `ls` shows each conversation's age and
/// title (issue 25 part 3).
#[test]
fn conversations_are_named_by_a_prefix_or_last() {
    let ws = initialized();
    let server = TestServer::start(vec![
        Reply::sse(anthropic(&[Item::Text("A.")], "end_turn", false)),
        Reply::sse(anthropic(&[Item::Text("B.")], "end_turn", false)),
    ]);
    assert_eq!(
        query(&ws, &server, MODEL, &[], "first\nsecond line").code,
        0
    );
    let a = stored(&ws)["id"].as_str().unwrap().to_owned();
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(query(&ws, &server, MODEL, &["--new"], "other").code, 0);
    let b = stored(&ws)["id"].as_str().unwrap().to_owned();
    // Ids are creation times in ms: they share a long start.
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let ls = ws.jp(&["conversation", "ls"]).stdout;
    assert_eq!(
        ls,
        format!("  {a}  just now      1 turn   first\n* {b}  just now      1 turn   other\n")
    );
    // A unique start names one conversation.
    let use_a = ws.jp(&["conversation", "use", &a[..=common]]);
    assert_eq!(
        use_a.stdout,
        format!("active conversation: {a}\n"),
        "{use_a:?}"
    );
    // A shared start names several: an error listing them, nothing changes.
    let both = ws.jp(&["conversation", "use", &a[..common]]);
    assert_eq!(both.code, 2, "{both:?}");
    assert_eq!(
        both.stderr,
        format!(
            "error: `{}` starts more than one conversation id ({a}, {b}); give more of it\n",
            &a[..common]
        )
    );
    assert_eq!(stored(&ws)["id"], a.as_str());
    // `last` is the one with the latest activity.
    let last = ws.jp(&["conversation", "use", "last"]);
    assert_eq!(last.stdout, format!("active conversation: {b}\n"));
    let shown = ws.jp(&["conversation", "show", &b[..=common]]);
    assert_eq!(
        shown.stdout.lines().next(),
        Some(format!("conversation {b} · other").as_str())
    );
    let removed = ws.jp(&["conversation", "rm", &a[..=common]]);
    assert_eq!(removed.stdout, format!("removed conversation {a}\n"));
}
