//! A tool's processes do not outlive jp or the tool's run (issue 14, item
//! 2), through the real `jp` binary, real tool processes and the test
//! server, checked through `/proc`: a SIGKILLed jp takes the tool's whole
//! process group and a daemon it started in a session of its own with it,
//! and such a daemon is killed when the tool times out.
//!
//! A sandboxed tool cannot leave its process group at all (seccomp refuses
//! `setsid` and `setpgid`: tests/sandbox_check.rs, `outlive-setsid`).
//! These tests are about what jp does for a tool that can (one whose
//! sandbox is `none`, or on a system without the kernel sandbox), so they
//! run with the kernel sandbox off: `JP_TEST_SANDBOX=off`, a debug build's
//! switch.

#![cfg(all(target_os = "linux", debug_assertions))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::providers::{text_reply as text, tool_reply as tool};
use common::query::{ENV, initialized};
use common::{Run, Workspace};
use jp_test_server::TestServer;
use serde_json::Value;

/// A workspace with one unattended local tool `slow` running `script` with
/// `sh -c`, and `extra` config lines for it.
fn workspace(script: &str, extra: &str) -> Workspace {
    let ws = initialized();
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n[conversation.tools.slow]\ncommand = [\"sh\", \"-c\", {}]\n\
             summary = \"Take a while.\"\npolicy.run = \"unattended\"\n{extra}",
            Value::String(script.to_owned())
        ),
    );
    ws
}

/// `jp query` against `server`, not started.
fn query(ws: &Workspace, server: &TestServer) -> std::process::Command {
    let base = format!("providers.llm.anthropic.base_url={}", server.url());
    let mut env = ENV.to_vec();
    env.push(("JP_TEST_SANDBOX", "off"));
    ws.command(&["query", "--cfg", &base, "take your time"], &env)
}

/// The pid a tool wrote to `path` (waits up to 10 s for it).
fn pid_in(path: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Some(pid) = text.strip_suffix('\n').and_then(|p| p.parse().ok())
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "the tool never wrote {path:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `(pid, process group, state)` of every process, from `/proc/*/stat`
/// (`pid (comm) state ppid pgrp ...`, fields counted from the last `)`).
fn processes() -> Vec<(u32, u32, char)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (_, rest) = stat.rsplit_once(')')?;
            let mut fields = rest.split_ascii_whitespace();
            let state = fields.next()?.chars().next()?;
            let _ppid = fields.next()?;
            let pgrp = fields.next()?.parse().ok()?;
            Some((pid, pgrp, state))
        })
        .collect()
}

/// The processes of group `pgid` still running (a zombie only waits to be
/// reaped by whoever inherited it, and runs no more).
fn running_in_group(pgid: u32) -> Vec<u32> {
    processes()
        .into_iter()
        .filter(|&(_, pgrp, state)| pgrp == pgid && state != 'Z' && state != 'X')
        .map(|(pid, _, _)| pid)
        .collect()
}

/// Whether process `pid` is running (exists and is not a zombie).
fn running(pid: u32) -> bool {
    processes()
        .into_iter()
        .any(|(p, _, state)| p == pid && state != 'Z' && state != 'X')
}

#[test]
fn a_killed_jp_takes_the_tools_whole_process_group_and_its_daemon_with_it() {
    // The tool (a shell, the group's leader), a child in its group, and a
    // daemon that `setsid` took out of the group; each writes its pid in
    // the workspace (where the tool may write).
    let ws = workspace(
        "setsid sleep 97 >/dev/null 2>&1 < /dev/null & echo $! > daemon; \
         sleep 30 & echo $! > child; echo $$ > pid; wait",
        "",
    );
    let daemon_file = ws.project().join("daemon");
    let child_file = ws.project().join("child");
    let pid_file = ws.project().join("pid");
    let server = TestServer::start(vec![tool("toolu_1", "slow", "{}")]);
    let mut jp = query(&ws, &server)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let tool_pid = pid_in(&pid_file);
    let child = pid_in(&child_file);
    let daemon = pid_in(&daemon_file);
    // Until `setsid` has run, the daemon is still in the tool's group.
    let deadline = Instant::now() + Duration::from_secs(5);
    while running_in_group(tool_pid).len() != 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut group = running_in_group(tool_pid);
    group.sort_unstable();
    assert_eq!(group, [tool_pid, child], "{:?}", processes());
    assert!(running(daemon));

    jp.kill().unwrap();
    jp.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut left = running_in_group(tool_pid);
    while (!left.is_empty() || running(daemon)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        left = running_in_group(tool_pid);
    }
    assert_eq!(
        left,
        Vec::<u32>::new(),
        "the tool's group outlived jp by 1 s"
    );
    assert!(!running(daemon), "the tool's daemon outlived jp by 1 s");
}

#[test]
fn a_daemon_a_tool_started_is_killed_when_the_tool_times_out() {
    // `setsid` takes the daemon out of the tool's process group and session.
    let ws = workspace(
        "setsid sleep 97 >/dev/null 2>&1 < /dev/null & echo $! > daemon; sleep 30",
        "timeout_secs = 1\n",
    );
    let daemon_file = ws.project().join("daemon");
    let server = TestServer::start(vec![tool("toolu_1", "slow", "{}"), text("Gave up.")]);
    let started = Instant::now();
    let jp = query(&ws, &server)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let daemon = pid_in(&daemon_file);
    assert!(running(daemon));
    let run: Run = ws.run_of(jp.wait_with_output().unwrap());
    // jp reported the timeout and ended the turn: the daemon was sent
    // SIGKILL before that, and is gone (allowing a moment on a busy machine).
    let deadline = Instant::now() + Duration::from_millis(500);
    while running(daemon) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        !running(daemon),
        "the daemon {daemon} outlived the tool's run"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Gave up.\n");
    assert_eq!(
        run.stderr,
        "── jp (anthropic/claude-sonnet-4-5) ──\n\
         Calling tool slow()\n  \
         unattended (policy.run is \"unattended\")\n  \
         slow error: tool `slow` did not finish within 1 s (conversation.tools.slow.timeout_secs); it was stopped\n\
         ── jp (anthropic/claude-sonnet-4-5) ──\n\
         tokens: 2 responses · 20 in · 84 out · $0.0013 · context 1% of 200k\n"
    );
}
