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

/// An answer that takes about two seconds to stream.
fn slow_answer() -> Reply {
    let text: String = (1..=200).map(|n| format!("word{n} ")).collect();
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
    assert!(ws.read("project/out.txt").contains("word200"));
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
