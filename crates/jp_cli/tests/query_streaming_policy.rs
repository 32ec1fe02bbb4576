//! RFD D26 through the real `jp` binary: a call is decided while its
//! arguments stream, and a call declined early stops the stream, so the
//! rest of it is never paid for.
//!
//! The provider is the local test server replaying a paced response; it
//! records how many bytes it sent before the client hung up.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::Workspace;
use common::providers::{Item, anthropic, ollama, openai_parallel};
use common::query::{ENV, initialized, query_command, responses, stored};
use jp_test_server::{Reply, Split, TestServer};

const MODEL: &str = "anthropic/claude-haiku-4-5";

/// 200 KB and more of file content: 5,000 lines.
fn big_content() -> String {
    (1..=5_000)
        .map(|n| format!("line {n:05} of a file the model writes in one go\n"))
        .collect()
}

/// A response with one `fs_create_file` call whose arguments are `args`
/// (exact JSON text), in 9-byte deltas as Anthropic sends them, written
/// 8 KB at a time with a pause between writes.
fn slow_create(args: &str) -> (Reply, usize) {
    paced_create(args, Duration::from_millis(10))
}

/// [`slow_create`] at 8 KiB per `pace`. The tests that count how much was
/// sent before jp hung up use 10 ms (about 5 s for 4 MB): a busy machine
/// can leave jp unscheduled for tens of milliseconds, and at 2 ms the
/// server would send 5% of the body in 50 ms.
fn paced_create(args: &str, pace: Duration) -> (Reply, usize) {
    let body = anthropic(
        &[Item::Tool("toolu_1", "fs_create_file", args)],
        "tool_use",
        false,
    );
    let total = body.len();
    let reply = Reply::sse(body).split(Split::Every(8192)).pace(pace);
    (reply, total)
}

fn follow_up() -> Reply {
    Reply::sse(anthropic(&[Item::Text("Understood.")], "end_turn", false))
}

/// `jp query` with debug logs on, so stderr also says when each call was
/// decided and after how many bytes of its arguments.
fn run(ws: &Workspace, server: &TestServer, extra: &[&str]) -> common::Run {
    let mut command = query_command(ws, server, MODEL, extra, "write the file");
    command.env("RUST_LOG", "jp=debug");
    for (key, value) in ENV {
        command.env(key, value);
    }
    ws.run_of(command.output().unwrap())
}

/// The `bytes=` of each "decided while streaming" log line, with its mode.
fn decided_at(stderr: &str) -> Vec<(String, usize)> {
    stderr
        .lines()
        .filter(|line| line.contains("decided while streaming"))
        .map(|line| {
            let field = |name: &str| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(&format!("{name}=")))
                    .unwrap()
                    .to_owned()
            };
            (field("mode"), field("bytes").parse().unwrap())
        })
        .collect()
}

/// Each "decided while streaming" log line: the call's number, the mode,
/// the call's argument bytes then, and the other calls still streaming
/// then with their argument bytes.
fn decisions(stderr: &str) -> Vec<(usize, String, usize, usize, usize)> {
    stderr
        .lines()
        .filter(|line| line.contains("decided while streaming"))
        .map(|line| {
            let field = |name: &str| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(&format!("{name}=")))
                    .unwrap()
                    .to_owned()
            };
            let number = |name: &str| field(name).parse::<usize>().unwrap();
            (
                number("call"),
                field("mode"),
                number("bytes"),
                number("others"),
                number("others_bytes"),
            )
        })
        .collect()
}

/// Chrome lines of stderr, without the debug log lines.
fn chrome(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|line| !line.contains(" DEBUG ") && !line.contains(" INFO "))
        .map(|line| format!("{line}\n"))
        .collect()
}

#[test]
fn an_asking_call_without_a_terminal_is_declined_early_and_the_stream_stops() {
    let ws = initialized();
    let content = big_content();
    let args = serde_json::json!({ "path": ".env", "content": content }).to_string();
    assert!(content.len() > 200_000);
    let (reply, total) = slow_create(&args);
    let server = TestServer::start(vec![reply, follow_up()]);

    let run = run(&ws, &server, &[]);
    assert_eq!(run.code, 5, "{run:?}");

    // Decided (ask, declined: no terminal) as soon as `path` arrived.
    let decided = decided_at(&run.stderr);
    assert_eq!(decided.len(), 1, "{}", run.stderr);
    assert_eq!(decided[0].0, "ask");
    assert!(
        decided[0].1 < args.len() / 100,
        "decided after {} of {} argument bytes",
        decided[0].1,
        args.len()
    );
    // The client hung up before 5% of the response was sent.
    let requests = server.wait_for(2, Duration::from_secs(10));
    eprintln!(
        "decided after {} of {} argument bytes; {} of {total} response bytes sent",
        decided[0].1,
        args.len(),
        requests[0].body_bytes_sent
    );
    assert!(requests[0].client_disconnected, "the stream was not closed");
    assert!(
        requests[0].body_bytes_sent < total / 20,
        "{} of {total} bytes were sent",
        requests[0].body_bytes_sent
    );
    assert!(!ws.project().join(".env").exists());

    // What the user sees, and what the model is told.
    let bytes = decided[0].1;
    assert_eq!(
        chrome(&run.stderr),
        format!(
            "── jp (anthropic/claude-haiku-4-5) ──\n\
             Calling tool fs_create_file(path: \".env\")\n  \
             fs_create_file: declined: policy.run[3] (catch-all) matched, so jp must ask, and no \
             terminal is available; run jp in a terminal to answer, or allow calls like this one \
             with a rule before policy.run[3] in conversation.tools.fs_create_file: {{ arg = \
             \"/path\", const = \".env\", mode = \"unattended\" }}\n  \
             stopped the stream after {bytes} B of fs_create_file's arguments\n\
             ── jp (anthropic/claude-haiku-4-5) ──\n\
             tokens: 2 responses · 20 in · 43 out · $0.0002 · stream stopped after 18 B of fs_create_file's arguments; the rest was never generated · context 1% of 200k\n"
        )
    );
    let told = format!(
        "The call was not run: the user's policy requires confirmation and no one could confirm \
         it (jp is running without a terminal). jp stopped your response after {bytes} B of this \
         call's arguments."
    );
    assert_eq!(
        responses(&stored(&ws)),
        [("declined".to_owned(), told.clone())]
    );
    // The follow-up request carries the call with the arguments that had
    // completed, and the declined result.
    let sent = requests[1].json();
    assert_eq!(
        sent["messages"][1]["content"][0]["input"],
        serde_json::json!({ "path": ".env" })
    );
    assert_eq!(sent["messages"][2]["content"][0]["content"], told.as_str());
    assert_eq!(sent["messages"][2]["content"][0]["is_error"], true);

    // `jp conversation show` keeps the saving, under the call it cut short:
    // the arguments that had completed, not called truncated (jp stopped
    // the stream; the model did not stop).
    let conversation = stored(&ws);
    let id = conversation["id"].as_str().unwrap();
    let shown = ws.jp(&["conversation", "show"]);
    assert_eq!(shown.code, 0, "{shown:?}");
    assert_eq!(
        turn_times_hidden(&shown.stdout),
        format!(
            "conversation {id} · write the file\n\
             \n\
             ── turn 1 · TIME ──\n\
             you: write the file\n\
             tool call toolu_1 fs_create_file({{\"path\":\".env\"}})\n  \
             stopped the stream after {bytes} B of fs_create_file's arguments\n\
             tool result toolu_1 [declined]: {told}\n\
             assistant: Understood.\n\
             \n\
             total: 1 turn · 2 responses · 20 in · 43 out · $0.0002\n"
        )
    );
}

/// `jp conversation show`'s text with each turn's time replaced by `TIME`.
fn turn_times_hidden(text: &str) -> String {
    text.lines()
        .map(|line| match line.strip_prefix("── turn 1 · ") {
            Some(_) => "── turn 1 · TIME ──\n".to_owned(),
            None => format!("{line}\n"),
        })
        .collect()
}

/// `--cfg` for a `fs_create_file` policy that decides `mode` for `.env`
/// on its `path`, and asks for every other path.
fn env_rule(mode: &str) -> String {
    format!(
        "conversation.tools.fs_create_file.policy.run:=\
         [{{\"arg\":\"/path\",\"const\":\".env\",\"mode\":\"{mode}\"}},{{\"mode\":\"ask\"}}]"
    )
}

/// Runs a 200 KB+ `fs_create_file` of `.env`, `path` first, without a
/// terminal under [`env_rule`]`(mode)`, and checks that it was decided
/// `mode` from `path` alone, that the client hung up before 5% of the
/// response was sent, and that no file was written. Returns the
/// workspace, the run, the call's argument bytes at the decision and the
/// follow-up request.
fn stopped_at_env(mode: &str) -> (Workspace, common::Run, usize, serde_json::Value) {
    let ws = initialized();
    let content = big_content();
    let args = serde_json::json!({ "path": ".env", "content": content }).to_string();
    assert!(content.len() > 200_000);
    let (reply, total) = slow_create(&args);
    let server = TestServer::start(vec![reply, follow_up()]);

    let run = run(&ws, &server, &["--cfg", &env_rule(mode)]);
    assert_eq!(run.code, 5, "{run:?}");
    let decided = decided_at(&run.stderr);
    assert_eq!(decided.len(), 1, "{}", run.stderr);
    assert_eq!(decided[0].0, mode);
    assert!(decided[0].1 < args.len() / 100, "{decided:?}");
    let requests = server.wait_for(2, Duration::from_secs(10));
    assert!(requests[0].client_disconnected, "the stream was not closed");
    assert!(
        requests[0].body_bytes_sent < total / 20,
        "{} of {total} bytes were sent",
        requests[0].body_bytes_sent
    );
    assert!(!ws.project().join(".env").exists());
    let bytes = decided[0].1;
    let follow_up = requests[1].json();
    (ws, run, bytes, follow_up)
}

#[test]
fn an_editing_call_without_a_terminal_is_declined_early_and_the_stream_stops() {
    // Decision 6 declines `edit` without a prompt as it does `ask`: at the
    // moment of decision, so the rest of the call is not paid for.
    let (ws, run, bytes, sent) = stopped_at_env("edit");
    assert_eq!(
        chrome(&run.stderr),
        format!(
            "── jp (anthropic/claude-haiku-4-5) ──\n\
             Calling tool fs_create_file(path: \".env\")\n  \
             fs_create_file: declined: policy.run[0] (const \".env\" on /path) matched: \
             \".env\" equals .env, so jp must open an editor, and no terminal is available; run \
             jp in a terminal to answer, or allow calls like this one with a rule before \
             policy.run[0] in conversation.tools.fs_create_file: {{ arg = \"/path\", const = \
             \".env\", mode = \"unattended\" }}\n  \
             stopped the stream after {bytes} B of fs_create_file's arguments\n\
             ── jp (anthropic/claude-haiku-4-5) ──\n\
             tokens: 2 responses · 20 in · 43 out · $0.0002 · stream stopped after 18 B of fs_create_file's arguments; the rest was never generated · context 1% of 200k\n"
        )
    );
    let told = format!(
        "The call was not run: the user's policy requires confirmation and no one could confirm \
         it (jp is running without a terminal). jp stopped your response after {bytes} B of this \
         call's arguments."
    );
    assert_eq!(
        responses(&stored(&ws)),
        [("declined".to_owned(), told.clone())]
    );
    assert_eq!(sent["messages"][2]["content"][0]["content"], told.as_str());
}

#[test]
fn a_skipped_call_is_answered_early_and_the_stream_stops() {
    let (ws, run, bytes, sent) = stopped_at_env("skip");
    assert_eq!(
        chrome(&run.stderr),
        format!(
            "── jp (anthropic/claude-haiku-4-5) ──\n\
             Calling tool fs_create_file(path: \".env\")\n  \
             fs_create_file: skipped (policy.run[0] (const \".env\" on /path) matched: \
             \".env\" equals .env)\n  \
             stopped the stream after {bytes} B of fs_create_file's arguments\n\
             ── jp (anthropic/claude-haiku-4-5) ──\n\
             tokens: 2 responses · 20 in · 43 out · $0.0002 · stream stopped after 18 B of fs_create_file's arguments; the rest was never generated · context 1% of 200k\n"
        )
    );
    let told = format!(
        "This call was skipped by the user's policy; it was not run. jp stopped your response \
         after {bytes} B of this call's arguments."
    );
    assert_eq!(
        responses(&stored(&ws)),
        [("skipped".to_owned(), told.clone())]
    );
    assert_eq!(
        sent["messages"][1]["content"][0]["input"],
        serde_json::json!({ "path": ".env" })
    );
    assert_eq!(sent["messages"][2]["content"][0]["content"], told.as_str());
}

#[test]
fn an_unattended_call_is_decided_early_and_runs_once_complete() {
    let ws = initialized();
    let content = big_content();
    let args = serde_json::json!({ "path": "src/big.rs", "content": content }).to_string();
    // Read to the end: no hang-up to time.
    let (reply, total) = paced_create(&args, Duration::from_millis(2));
    let server = TestServer::start(vec![reply, follow_up()]);
    // The tool, run through a script that first counts its runs.
    let runs = ws.project().join("runs");
    let script = format!(
        "echo run >> '{}'; exec '{}' tool fs_create_file",
        runs.display(),
        env!("CARGO_BIN_EXE_jp")
    );
    let command = format!(
        "conversation.tools.fs_create_file.command:={}",
        serde_json::json!(["sh", "-c", script])
    );

    let run = run(&ws, &server, &["--cfg", &command]);
    assert_eq!(run.code, 0, "{run:?}");
    let decided = decided_at(&run.stderr);
    assert_eq!(decided.len(), 1, "{}", run.stderr);
    assert_eq!(decided[0].0, "unattended");
    assert!(decided[0].1 < args.len() / 100, "{decided:?}");
    // Nothing was cut short: the whole response was read, and the file
    // was written once, whole.
    let requests = server.wait_for(2, Duration::from_secs(10));
    assert!(!requests[0].client_disconnected);
    assert_eq!(requests[0].body_bytes_sent, total);
    assert_eq!(ws.read("project/src/big.rs"), content);
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "run\n");
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "success".to_owned(),
            "created src/big.rs (5000 lines)".to_owned()
        )]
    );
}

#[test]
fn content_before_path_waits_for_the_path_and_decides_right() {
    let ws = initialized();
    let content = big_content();
    // The model sends `content` first: the rule on `path` must wait.
    let args = format!(
        "{{\"content\": {}, \"path\": \".env\"}}",
        serde_json::Value::from(content.as_str())
    );
    let (reply, _) = paced_create(&args, Duration::from_millis(2));
    let server = TestServer::start(vec![reply, follow_up()]);

    let run = run(&ws, &server, &[]);
    assert_eq!(run.code, 5, "{run:?}");
    let decided = decided_at(&run.stderr);
    assert_eq!(decided.len(), 1, "{}", run.stderr);
    assert_eq!(decided[0].0, "ask");
    assert!(
        decided[0].1 > content.len(),
        "decided after {} bytes, before `path` arrived",
        decided[0].1
    );
    assert!(!ws.project().join(".env").exists());
    assert_eq!(responses(&stored(&ws))[0].0, "declined");
}

#[test]
fn declining_one_of_two_parallel_calls_keeps_the_stream_for_the_other() {
    let ws = initialized();
    let content = big_content();
    let env = serde_json::json!({ "path": ".env", "content": "SECRET=1\n" }).to_string();
    let big = serde_json::json!({ "path": "src/big.rs", "content": content }).to_string();
    let body = openai_parallel(
        &[
            ("call_1", "fs_create_file", &env),
            ("call_2", "fs_create_file", &big),
        ],
        64,
    );
    let total = body.len();
    let server = TestServer::start(vec![
        Reply::sse(body)
            .split(Split::Every(2048))
            .pace(Duration::from_millis(1)),
        Reply::sse(common::providers::openai(
            &[Item::Text("One of two.")],
            "stop",
        )),
    ]);
    let mut command = query_command(&ws, &server, "openrouter/test", &[], "write both");
    command.env("RUST_LOG", "jp=debug");
    for (key, value) in ENV {
        command.env(key, value);
    }
    let run = ws.run_of(command.output().unwrap());
    assert_eq!(run.code, 5, "{run:?}");

    // The first call was decided (ask: declined, no terminal) as soon as
    // its `path` arrived, while the second had received under 1% of its
    // arguments; the second was decided (unattended) early too. Without
    // streaming evaluation the first would be decided only when the
    // provider ends the calls, after the whole of the second.
    let decided = decisions(&run.stderr);
    assert_eq!(decided.len(), 2, "{}", run.stderr);
    let (call, mode, bytes, others, others_bytes) = decided[0].clone();
    assert_eq!((call, mode.as_str(), others), (0, "ask", 1), "{decided:?}");
    assert!(bytes <= env.len(), "{decided:?}");
    assert!(others_bytes < big.len() / 100, "{decided:?}");
    assert_eq!((decided[1].0, decided[1].1.as_str()), (1, "unattended"));
    // The decline was shown then, and the stream was not stopped for it:
    // the server sent the whole body, for the second call.
    let requests = server.wait_for(2, Duration::from_secs(10));
    assert!(!requests[0].client_disconnected, "{run:?}");
    assert_eq!(requests[0].body_bytes_sent, total);
    assert_eq!(
        chrome(&run.stderr),
        "── jp (openrouter/test) ──\n\
         Calling tool fs_create_file(path: \".env\", content: \"SECRET=1\\n\")\n  \
         fs_create_file: declined: policy.run[3] (catch-all) matched, so jp must ask, and no \
         terminal is available; run jp in a terminal to answer, or allow calls like this one \
         with a rule before policy.run[3] in conversation.tools.fs_create_file: { arg = \
         \"/path\", const = \".env\", mode = \"unattended\" }\n\
         Calling tool fs_create_file(path: \"src/big.rs\", content: \"line 00001 of a file the \
         model writes …)\n  \
         unattended (policy.run[2] (prefix \"src/\" on /path) matched: \"src/big.rs\" is under \
         src/)\n  \
         fs_create_file success: created src/big.rs (5000 lines)\n\
         ── jp (openrouter/test) ──\n\
         tokens: 10 in · 5 out\n"
    );
    eprintln!(
        "decisions: {decided:?} of {} and {} argument bytes",
        env.len(),
        big.len()
    );
    assert!(!ws.project().join(".env").exists());
    assert_eq!(ws.read("project/src/big.rs"), content);
    let responses = responses(&stored(&ws));
    assert_eq!(
        responses,
        [
            (
                "declined".to_owned(),
                "The call was not run: the user's policy requires confirmation and no one could \
                 confirm it (jp is running without a terminal)."
                    .to_owned()
            ),
            (
                "success".to_owned(),
                "created src/big.rs (5000 lines)".to_owned()
            ),
        ]
    );
}

#[test]
fn an_early_approval_does_not_run_arguments_with_a_repeated_key() {
    let ws = initialized();
    // `path` decides `unattended` early; a second `path` arrives later.
    let args = r#"{"path": "src/ok.rs", "content": "x\n", "path": "../outside.txt"}"#;
    let (reply, _) = slow_create(args);
    let server = TestServer::start(vec![reply, follow_up()]);

    let run = run(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(decided_at(&run.stderr)[0].0, "unattended");
    assert!(!ws.project().join("src/ok.rs").exists());
    assert!(!ws.root().join("outside.txt").exists());
    let responses = responses(&stored(&ws));
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0].0, "refused");
    assert!(
        responses[0].1.contains("duplicate key"),
        "{}",
        responses[0].1
    );
}

/// Issue 14: a call whose arguments grow past its tool's
/// `max_argument_bytes` is refused while it streams, the stream stops as
/// for an early decline, and the model is told why; what had arrived is
/// kept.
#[test]
fn a_call_over_its_argument_limit_is_refused_and_the_stream_stops() {
    let ws = initialized();
    let content = big_content();
    let args = serde_json::json!({ "path": "src/big.txt", "content": content }).to_string();
    let (reply, total) = slow_create(&args);
    let server = TestServer::start(vec![reply, follow_up()]);

    let limit = "conversation.tools.fs_create_file.max_argument_bytes=4096";
    let run = run(&ws, &server, &["--cfg", limit]);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.wait_for(2, Duration::from_secs(10));
    assert!(requests[0].client_disconnected, "the stream was not closed");
    assert!(
        requests[0].body_bytes_sent < total / 20,
        "{} of {total} bytes were sent",
        requests[0].body_bytes_sent
    );
    assert!(!ws.project().join("src/big.txt").exists());

    // Anthropic sends the arguments in 9-byte deltas: the one that would
    // pass 4096 bytes is not read.
    assert_eq!(
        chrome(&run.stderr),
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         Calling tool fs_create_file(path: \"src/big.txt\")\n  \
         fs_create_file: refused: its arguments are over the limit of 4096 bytes set by \
         conversation.tools.fs_create_file.max_argument_bytes\n  \
         stopped the stream after 4.0 KB of fs_create_file's arguments\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         tokens: 2 responses · 20 in · 43 out · $0.0002 · stream stopped after 4.0 KB of fs_create_file's arguments; the rest was never generated · context 1% of 200k\n"
    );
    let told = "The call was not run: its arguments are over the limit of 4096 bytes set by \
                conversation.tools.fs_create_file.max_argument_bytes. jp stopped your response \
                after 4.0 KB of this call's arguments.";
    assert_eq!(
        responses(&stored(&ws)),
        [("refused".to_owned(), told.to_owned())]
    );
    // The follow-up request carries the call with the arguments that had
    // completed, and the refusal.
    let sent = requests[1].json();
    assert_eq!(
        sent["messages"][1]["content"][0]["input"],
        serde_json::json!({ "path": "src/big.txt" })
    );
    assert_eq!(sent["messages"][2]["content"][0]["content"], told);
    assert_eq!(sent["messages"][2]["content"][0]["is_error"], true);
}

/// Issue 14: Ollama sends a call's arguments whole, in one chunk: over the
/// limit, that chunk is refused unread, and the model is told it was cut
/// after it.
#[test]
fn a_call_sent_whole_over_its_argument_limit_is_refused_unread() {
    let ws = initialized();
    let content = "x".repeat(2000);
    let args = serde_json::json!({ "path": "src/big.txt", "content": content }).to_string();
    let server = TestServer::start(vec![
        Reply::ndjson(ollama(&[Item::Tool("call_1", "fs_create_file", &args)])),
        Reply::ndjson(ollama(&[Item::Text("Understood.")])),
    ]);
    let limit = "conversation.tools.'*'.max_argument_bytes=1024";
    let mut command = query_command(
        &ws,
        &server,
        "ollama/qwen3.5:9b",
        &["--cfg", limit],
        "write the file",
    );
    for (key, value) in ENV {
        command.env(key, value);
    }
    let run = ws.run_of(command.output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!ws.project().join("src/big.txt").exists());
    assert_eq!(
        run.stderr,
        "── jp (ollama/qwen3.5:9b) ──\n\
         Calling tool fs_create_file()\n  \
         fs_create_file: refused: its arguments are over the limit of 1024 bytes set by \
         conversation.tools.'*'.max_argument_bytes\n  \
         stopped the stream after 2.0 KB of fs_create_file's arguments\n\
         ── jp (ollama/qwen3.5:9b) ──\n\
         tokens: 10 in · 5 out · stream stopped after 2.0 KB of fs_create_file's arguments; the rest was never generated\n"
    );
    assert_eq!(run.stdout, "Understood.\n");
    let told = "The call was not run: its arguments are over the limit of 1024 bytes set by \
                conversation.tools.'*'.max_argument_bytes. jp stopped your response after \
                2.0 KB of this call's arguments.";
    assert_eq!(
        responses(&stored(&ws)),
        [("refused".to_owned(), told.to_owned())]
    );
}
