//! The terminal going away under a waiting prompt (tmux killed, a terminal
//! window closed): jp takes it as an interrupt and exits, keeping the
//! conversation, instead of spinning on a terminal that reads nothing but
//! end of file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::mcp::running;
use common::providers::{Item, anthropic};
use common::query::{initialized, responses, stored};
use common::tmux::{Tmux, pids_running, query_line};
use jp_test_server::{Reply, TestServer};

/// The pid of the `jp` the terminal runs against `server`.
fn jp_pid(server: &TestServer) -> u32 {
    let jp = env!("CARGO_BIN_EXE_jp");
    let pids = pids_running(jp, &server.url());
    assert_eq!(pids.len(), 1, "jp processes for this test: {pids:?}");
    pids[0]
}

/// Waits up to `limit` for `pid` to end; how long it took, if it did.
fn ends_within(pid: u32, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    while running(pid) {
        if started.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(started.elapsed())
}

#[cfg(target_os = "linux")]
#[test]
fn a_terminal_that_hangs_up_under_a_prompt_interrupts_the_turn_and_jp_exits() {
    let ws = initialized();
    ws.write("project/src/lib.rs", "pub fn main() {}\n");
    let server = TestServer::start(vec![Reply::sse(anthropic(
        &[Item::Tool(
            "toolu_1",
            "fs_modify_file",
            r#"{"path": "src/lib.rs", "patterns": [{"old": "main", "new": "hello"}]}"#,
        )],
        "tool_use",
        false,
    ))]);
    let line = query_line(&ws, &server, "rename main");
    let Some(tmux) = Tmux::start(&ws, &line) else {
        return;
    };
    tmux.wait_for("[y,a,n,e,v,?]");
    let jp = jp_pid(&server);
    tmux.kill();
    let took = ends_within(jp, Duration::from_secs(5));
    if took.is_none() {
        // Not left spinning after the test.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &jp.to_string()])
            .status();
        panic!("jp {jp} still ran 5 s after its terminal closed");
    }
    // Nothing is lost: the call is recorded as not run, as for Ctrl+C at
    // the prompt, and the file is untouched.
    assert_eq!(ws.read("project/src/lib.rs"), "pub fn main() {}\n");
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "interrupted".to_owned(),
            "The call was not run: the user interrupted the turn.".to_owned()
        )]
    );
    assert_eq!(server.requests().len(), 1, "nothing is sent after a hangup");
}
