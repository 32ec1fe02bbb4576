//! Ctrl+C during an MCP call, in a real terminal (tmux), through the real
//! `jp` binary and `jp-mcp-test-server`: the same menu as for a local
//! tool; stopping or restarting the call sends the server the protocol's
//! `notifications/cancelled` and the server keeps running; aborting (`a`,
//! or a second Ctrl+C) kills it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::Workspace;
use common::mcp::{assert_gone, running, server_pid, unattended, workspace};
use common::providers::tool_reply as tool;
use common::query::{responses, stored};
use common::tmux::{Tmux, query_line, shown, with_stty};
use jp_test_server::TestServer;

const MENU: &str =
    "Ctrl+C while hang runs (c continue, s stop and reply, r restart, a abort): [c,s,r,a,?]";

/// What the server recorded of the cancellations it received, once it
/// recorded `lines` of them.
fn cancellations(ws: &Workspace, lines: usize) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(ws.project().join("cancelled.txt")).unwrap_or_default();
        if text.lines().count() >= lines {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "the server recorded {text:?}, not {lines} cancellations"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A query in tmux whose model calls the server's `hang` tool, and the
/// server's pid once the call runs.
fn hanging_call(ws: &Workspace, server: &TestServer) -> Option<(Tmux, u32)> {
    let line = with_stty(&query_line(ws, server, "hang"));
    let tmux = Tmux::start(ws, &line)?;
    tmux.wait_for("running hang");
    let pid = server_pid(ws).expect("the MCP server never started");
    Some((tmux, pid))
}

#[test]
fn restart_cancels_the_mcp_call_on_the_server_and_a_second_ctrl_c_kills_it() {
    let ws = workspace("", &unattended("hang"));
    let server = TestServer::start(vec![tool("toolu_1", "hang", "{}")]);
    let Some((tmux, pid)) = hanging_call(&ws, &server) else {
        return;
    };
    tmux.send(&["C-c"]);
    tmux.wait_for(MENU);
    tmux.send(&["r"]);
    tmux.wait_for("hang: restarting");
    // The server was told, and runs on for the restarted call.
    assert_eq!(
        cancellations(&ws, 1),
        "cancelled: the user interrupted the call\n"
    );
    assert!(running(pid), "the server stopped after a cancellation");
    assert_eq!(server_pid(&ws), Some(pid), "the server was started again");
    tmux.send(&["C-c"]);
    tmux.wait_for(&format!("{MENU} r\n  hang: restarting\n{MENU}"));
    tmux.send(&["C-c"]);
    let screen = tmux.wait_for("STTY");
    assert_eq!(
        shown(&screen),
        format!(
            "── jp (anthropic/claude-haiku-4-5) ──\n\
             Calling tool hang\n\
             \x20 unattended (policy.run is \"unattended\")\n\
             {MENU} r\n\
             \x20 hang: restarting\n\
             {MENU} ^C\n\
             \x20 hang interrupted: The user interrupted the call to `hang` on MCP server `test`; jp sent the server MCP cancellation and stopped it.\n\
             tokens: 10 in · 42 out · $0.0002 · context 1% of 200k\n\
             interrupted; the conversation keeps what arrived\n\
             EXIT=130\n\
             STTY icanon echo"
        ),
        "{screen}"
    );
    assert_gone(&ws);
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "interrupted".to_owned(),
            "The user interrupted the call to `hang` on MCP server `test`; jp sent the server MCP cancellation and stopped it.".to_owned()
        )]
    );
    assert_eq!(server.requests().len(), 1, "nothing is sent after an exit");
}

#[test]
fn stop_and_reply_cancels_the_mcp_call_and_the_server_runs_until_jp_exits() {
    let ws = workspace("", &unattended("hang"));
    let server = TestServer::start(vec![tool("toolu_1", "hang", "{}")]);
    let Some((tmux, pid)) = hanging_call(&ws, &server) else {
        return;
    };
    tmux.send(&["C-c"]);
    tmux.wait_for(MENU);
    tmux.send(&["s"]);
    tmux.wait_for("Your reply (Enter alone ends the turn):");
    assert_eq!(
        cancellations(&ws, 1),
        "cancelled: the user interrupted the call\n"
    );
    assert!(running(pid), "the server stopped after a cancellation");
    tmux.send(&["Enter"]);
    let screen = tmux.wait_for("STTY");
    assert_eq!(
        shown(&screen),
        format!(
            "── jp (anthropic/claude-haiku-4-5) ──\n\
             Calling tool hang\n\
             \x20 unattended (policy.run is \"unattended\")\n\
             {MENU} s\n\
             \x20 hang interrupted: The user stopped the tool while it ran.\n\
             Your reply (Enter alone ends the turn):\n\
             tokens: 10 in · 42 out · $0.0002 · context 1% of 200k\n\
             stopped; the conversation keeps what arrived, and `jp query` continues it\n\
             EXIT=0\n\
             STTY icanon echo"
        ),
        "{screen}"
    );
    assert_gone(&ws);
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "interrupted".to_owned(),
            "The user stopped the tool while it ran.".to_owned()
        )]
    );
}
