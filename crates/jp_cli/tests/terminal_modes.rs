//! The terminal's modes around a turn: jp turns echo off while a turn
//! prints in the foreground (so no `^C` lands in the text), and leaves the
//! terminal alone when it runs in the background (`jp query ... &`), where
//! the terminal belongs to whatever the user runs meanwhile.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::providers::{Item, anthropic};
use common::query::initialized;
use common::tmux::{Tmux, query_line};
use jp_test_server::{Reply, Split, TestServer};

/// An answer that takes a few seconds to stream (the modes are read
/// one second in).
fn slow_answer() -> Reply {
    let text: String = (1..=600).map(|n| format!("word{n} ")).collect();
    Reply::sse(anthropic(&[Item::Text(&text)], "end_turn", false))
        .split(Split::Every(64))
        .pace(Duration::from_millis(8))
}

/// The terminal's `echo` flag as `stty` reports it.
const ECHO_FLAG: &str = "stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?echo'";

#[test]
fn a_turn_in_the_background_leaves_the_terminals_echo_alone() {
    let ws = initialized();
    let server = TestServer::start(vec![slow_answer()]);
    // A shell with job control runs jp as a background job, its stdin
    // the terminal, while the foreground looks at the terminal's modes
    // mid-turn; then waits for jp.
    let line = query_line(&ws, &server, "talk").replace(
        "; echo EXIT=$?;",
        &format!(
            " < /dev/tty > out.txt 2>&1 & sleep 1; echo DURING $({ECHO_FLAG}); wait $!; echo EXIT=$?;"
        ),
    );
    let line = format!("bash -c 'set -m; {}'", line.replace('\'', "'\\''"));
    let Some(tmux) = Tmux::start(&ws, &line) else {
        return;
    };
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("DURING echo\n"), "{screen}");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(ws.read("project/out.txt").contains("word600"));
}

#[test]
fn a_turn_in_the_foreground_turns_echo_off_and_back_on() {
    let ws = initialized();
    let server = TestServer::start(vec![slow_answer()]);
    // A background `stty` reads the terminal's modes mid-turn (reading
    // them, unlike setting them, is allowed from the background).
    let line = query_line(&ws, &server, "talk").replace(
        "env -i",
        &format!("(sleep 1; echo DURING $({ECHO_FLAG}) > during.txt) < /dev/tty & env -i"),
    );
    let line = line.replace(
        "; echo EXIT=$?;",
        &format!("; echo EXIT=$?; echo AFTER $({ECHO_FLAG});"),
    );
    let Some(tmux) = Tmux::start(&ws, &line) else {
        return;
    };
    let screen = tmux.wait_for("AFTER");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(screen.contains("AFTER echo"), "{screen}");
    assert_eq!(ws.read("project/during.txt"), "DURING -echo\n");
}

#[test]
fn a_turn_stopped_and_continued_turns_echo_off_again() {
    let ws = initialized();
    let server = TestServer::start(vec![slow_answer()]);
    // An interactive shell: Ctrl+Z stops jp and the shell puts its own
    // modes back; `fg` continues it, with a background `stty` reading the
    // modes a second later, mid-turn.
    let Some(tmux) = Tmux::in_shell(&ws, &query_line(&ws, &server, "talk")) else {
        return;
    };
    tmux.wait_for("word3 ");
    tmux.send(&["C-z"]);
    tmux.wait_for("Stopped");
    tmux.send(&[
        "-l",
        &format!("(sleep 1; echo DURING $({ECHO_FLAG}) > during.txt) < /dev/tty & fg %1"),
    ]);
    tmux.send(&["Enter"]);
    // Continued, jp finishes the answer (the shell said `EXIT=148` for the
    // stop already).
    let screen = tmux.wait_for("tokens: ");
    assert!(screen.contains("word600"), "{screen}");
    let during = ws.project().join("during.txt");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&during).is_ok_and(|text| text.ends_with('\n')) {
        assert!(std::time::Instant::now() < deadline, "no stty reading");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(ws.read("project/during.txt"), "DURING -echo\n");
}
