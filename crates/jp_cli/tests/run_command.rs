//! The default `run_command` tool end to end (issue 26, item 4): the real
//! `jp` binary against the test server, `jp tool run_command` as its tool
//! process, and real programs: an unattended `git status` whose output
//! reaches the model, an asking `git push` declined without a terminal, a
//! timeout and a killed jp that leave nothing of the program's process
//! tree behind, and output over the cap.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::providers::{text_reply as text, tool_reply as tool};
use common::query::{initialized, query};
use common::{Run, Workspace};
use jp_test_server::TestServer;
use serde_json::{Value, json};

const MODEL: &str = "anthropic/claude-sonnet-4-5";

/// The default policy's pattern of git words that run unattended.
const GIT_WORDS: &str = "^(status|diff|log|--version|-s|--short|-b|--branch|--porcelain|--stat|--shortstat|--numstat|--name-only|--name-status|--cached|--staged|--oneline|--graph|--decorate|--all|-p|--patch|--no-color|--no-ext-diff|-[1-9][0-9]{0,3}|--max-count=[1-9][0-9]{0,3})$";

/// `--cfg` making every run_command call unattended, for programs the
/// default rules ask about.
const UNATTENDED: [&str; 2] = [
    "--cfg",
    "conversation.tools.run_command.policy.run=unattended",
];

/// The tool result the model got in the second request.
fn tool_result(server: &TestServer) -> Value {
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests.len(), 2);
    requests[1].json()["messages"][2]["content"][0].clone()
}

/// Runs `git args` in the project the way jp's tool does (the same clean
/// environment), for the output the model must get.
fn git(ws: &Workspace, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", ws.root())
        .current_dir(ws.project())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn an_unattended_git_status_reaches_the_model() {
    let ws = initialized();
    git(&ws, &["init", "-q", "-b", "main"]);
    ws.write("project/src/lib.rs", "pub fn a() {}\n");
    let server = TestServer::start(vec![
        tool(
            "toolu_1",
            "run_command",
            r#"{"program": "git", "args": ["status", "--short", "--branch"]}"#,
        ),
        text("Nothing is committed yet."),
    ]);
    let run = query(&ws, &server, MODEL, &[], "what changed?");
    let status = git(&ws, &["status", "--short", "--branch"]);
    assert_eq!(status, "## No commits yet on main\n?? .jp/\n?? src/\n");
    let content = format!(
        "`git status --short --branch` exited with status 0\noutput (stdout and stderr interleaved):\n{status}"
    );
    assert_eq!(
        tool_result(&server),
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": content, "is_error": false, "cache_control": {"type": "ephemeral"}})
    );
    assert_eq!(
        run,
        Run {
            code: 0,
            stdout: "Nothing is committed yet.\n".into(),
            stderr: format!(
                "── jp (anthropic/claude-sonnet-4-5) ──\n\
                 Calling tool run_command(program: \"git\", args: [\"status\",\"--short\",\"--branch\"])\n  \
                 unattended (policy.run[2] (pattern \"{GIT_WORDS}\" on /args) matched: each of the 3 values of /args matches pattern \"{GIT_WORDS}\")\n  \
                 run_command success:\n    \
                 `git status --short --branch` exited with status 0\n    \
                 output (stdout and stderr interleaved):\n    \
                 ## No commits yet on main\n    \
                 ?? .jp/\n    \
                 ?? src/\n\
                 ── jp (anthropic/claude-sonnet-4-5) ──\n\
                 tokens: 2 responses · 20 in · 84 out · $0.0013 · context 1% of 200k\n"
            ),
        }
    );
}

#[test]
fn an_asking_git_push_is_declined_without_a_terminal() {
    let ws = initialized();
    let server = TestServer::start(vec![
        tool(
            "toolu_1",
            "run_command",
            r#"{"program": "git", "args": ["push", "--force"]}"#,
        ),
        text("I could not push."),
    ]);
    let run = query(&ws, &server, MODEL, &[], "push it");
    let result = tool_result(&server);
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["content"],
        "The call was not run: the user's policy requires confirmation and no one could confirm it (jp is running without a terminal)."
    );
    assert_eq!(
        run,
        Run {
            code: 5,
            stdout: "I could not push.\n".into(),
            stderr: "── jp (anthropic/claude-sonnet-4-5) ──\n\
                     Calling tool run_command(program: \"git\", args: [\"push\",\"--force\"])\n  \
                     run_command: declined: policy.run[3] (catch-all) matched, so jp must ask, and no \
                     terminal is available; run jp in a terminal to answer, or add a rule for calls \
                     like this one before policy.run[3] in conversation.tools.run_command (`jp policy \
                     check run_command` tries it)\n\
                     ── jp (anthropic/claude-sonnet-4-5) ──\n\
                     tokens: 2 responses · 20 in · 84 out · $0.0013 · context 1% of 200k\n"
                .into(),
        }
    );
}

/// The pid a program wrote to `path` (waits up to 10 s for it).
fn pid_in(path: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Some(pid) = text.strip_suffix('\n').and_then(|p| p.parse().ok())
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "the program never wrote {path:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` is running (exists and is not a zombie).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, rest) = stat.rsplit_once(')')?;
            rest.split_ascii_whitespace().next().map(str::to_owned)
        })
        .is_some_and(|state| state != "Z" && state != "X")
}

/// Waits up to `limit` for every one of `pids` to stop running; the ones
/// still running then.
fn still_running(pids: &[u32], limit: Duration) -> Vec<u32> {
    let deadline = Instant::now() + limit;
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|&pid| running(pid)).collect();
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A program that starts a background `sleep`, writes both pids to files
/// in the workspace root (`child`, `program`), and waits for it.
const SLEEPER: &str = r#"{"program": "sh", "args": ["-c", "sleep 1000 & echo $! > child; echo $$ > program; echo started; wait"], "timeout_secs": 1}"#;

#[test]
fn a_timeout_kills_the_programs_whole_tree() {
    let ws = initialized();
    let dir = ws.project();
    let server = TestServer::start(vec![
        tool("toolu_1", "run_command", SLEEPER),
        text("It hung."),
    ]);
    let started = Instant::now();
    let run = query(&ws, &server, MODEL, &UNATTENDED, "run it");
    assert!(started.elapsed() < Duration::from_secs(10));
    let pids = [pid_in(&dir.join("program")), pid_in(&dir.join("child"))];
    assert_eq!(
        still_running(&pids, Duration::from_millis(500)),
        Vec::<u32>::new()
    );
    let result = tool_result(&server);
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["content"],
        "`sh -c \"sleep 1000 & echo $! > child; echo $$ > program; echo started; wait\"` did not \
         finish within 1 s (timeout_secs) and was killed, with the processes it started\n\
         output (stdout and stderr interleaved):\nstarted\n"
    );
    assert_eq!(
        run,
        Run {
            code: 0,
            stdout: "It hung.\n".into(),
            stderr: "── jp (anthropic/claude-sonnet-4-5) ──\n\
                     Calling tool run_command(program: \"sh\", args: [\"-c\",\"sleep 1000 & echo $! > child; ec…, timeout_secs: 1)\n  \
                     unattended (policy.run is \"unattended\")\n  \
                     run_command error:\n    \
                     `sh -c \"sleep 1000 & echo $! > child; echo $$ > program; echo started; wait\"` did not \
                     finish within 1 s (timeout_secs) and was killed, with the processes it started\n    \
                     output (stdout and stderr interleaved):\n    \
                     started\n\
                     ── jp (anthropic/claude-sonnet-4-5) ──\n\
                     tokens: 2 responses · 20 in · 84 out · $0.0013 · context 1% of 200k\n"
                .into(),
        }
    );
}

#[test]
fn a_killed_jp_leaves_nothing_of_the_program_running() {
    let ws = initialized();
    let dir = ws.project();
    let mut args: Value = serde_json::from_str(SLEEPER).unwrap();
    args["timeout_secs"] = json!(600);
    let server = TestServer::start(vec![tool("toolu_1", "run_command", &args.to_string())]);
    let mut jp = common::query::query_command(&ws, &server, MODEL, &UNATTENDED, "run it")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pids = [pid_in(&dir.join("program")), pid_in(&dir.join("child"))];
    assert_eq!(still_running(&pids, Duration::ZERO), pids);
    jp.kill().unwrap();
    jp.wait().unwrap();
    assert_eq!(
        still_running(&pids, Duration::from_secs(1)),
        Vec::<u32>::new(),
        "the program's processes outlived jp by 1 s"
    );
}

#[test]
fn output_over_the_cap_is_cut_and_the_model_is_told() {
    let ws = initialized();
    let server = TestServer::start(vec![
        tool(
            "toolu_1",
            "run_command",
            r#"{"program": "seq", "args": ["1", "10000"]}"#,
        ),
        text("Long."),
    ]);
    let run = query(&ws, &server, MODEL, &UNATTENDED, "count");
    let all: String = (1..=10_000).map(|i| format!("{i}\n")).collect();
    let content = format!(
        "`seq 1 10000` exited with status 0\noutput (stdout and stderr interleaved), 48,894 bytes, \
         over the cap of 32,768 bytes: the first 8,192 and the last 24,576 are shown:\n{}\n\
         [… 16,126 bytes left out …]\n{}",
        &all[..8192],
        &all[all.len() - 24_576..]
    );
    assert_eq!(
        tool_result(&server),
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": content, "is_error": false, "cache_control": {"type": "ephemeral"}})
    );
    assert_eq!(
        run,
        Run {
            code: 0,
            stdout: "Long.\n".into(),
            // What the terminal shows is cut again, to a few lines.
            stderr: "── jp (anthropic/claude-sonnet-4-5) ──\n\
                     Calling tool run_command(program: \"seq\", args: [\"1\",\"10000\"])\n  \
                     unattended (policy.run is \"unattended\")\n  \
                     run_command success:\n    \
                     `seq 1 10000` exited with status 0\n    \
                     output (stdout and stderr interleaved), 48,894 \
                     bytes, over the cap of 32,768 bytes: the first 8,192 and the last 24,576 are shown:\n    \
                     1\n    2\n    3\n    4\n    5\n    6\n    7\n    8\n    \
                     … 6768 more lines\n\
                     ── jp (anthropic/claude-sonnet-4-5) ──\n\
                     tokens: 2 responses · 20 in · 84 out · $0.0013 · context 5% of 200k\n"
                .into(),
        }
    );
}
