//! Which keys answer a prompt, on a real terminal (tmux) through the real
//! binary: only keys pressed once it shows (a key typed ahead while the
//! answer streamed must not approve a call nobody has seen), and a key
//! pressed after the terminal was resized.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::providers::{Item, anthropic, text_reply};
use common::query::{initialized, responses, stored};
use common::tmux::{Tmux, from_line, query_line};
use jp_test_server::{Reply, Split, TestServer};

/// Text that streams for a while, then a call to delete `notes.txt`,
/// whose `policy.run` asks.
fn text_then_delete() -> Reply {
    let text: String = (1..=60).map(|n| format!("w{n} ")).collect();
    Reply::sse(anthropic(
        &[
            Item::Text(&text),
            Item::Tool("toolu_1", "fs_delete_file", r#"{"path": "notes.txt"}"#),
        ],
        "tool_use",
        false,
    ))
    .split(Split::Every(32))
    .pace(Duration::from_millis(40))
}

fn delete_line(ws: &common::Workspace, server: &TestServer) -> String {
    query_line(ws, server, "tidy up").replace(
        " query ",
        " query --cfg conversation.tools.fs_delete_file.policy.run=ask ",
    )
}

#[test]
fn a_key_typed_before_the_prompt_shows_answers_nothing() {
    let ws = initialized();
    ws.write("project/notes.txt", "keep me\n");
    let server = TestServer::start(vec![text_then_delete(), text_reply("Kept.")]);
    let Some(tmux) = Tmux::start_sized(&ws, &delete_line(&ws, &server), 120) else {
        return;
    };
    // `y` while the text streams, before the call (and its prompt) exist.
    tmux.wait_for("w3 ");
    tmux.send(&["y"]);
    let prompt = "Run fs_delete_file(path: \"notes.txt\")? [y,a,n,e,v,?]";
    tmux.wait_for(prompt);
    // The prompt waits: the early `y` was dropped when it opened.
    std::thread::sleep(Duration::from_millis(500));
    let screen = tmux.screen();
    assert!(
        screen.lines().any(|line| line.trim_end() == prompt),
        "{screen}"
    );
    assert_eq!(ws.read("project/notes.txt"), "keep me\n");
    tmux.send(&["n"]);
    let screen = tmux.wait_for("EXIT=");
    assert_eq!(
        from_line(&screen, "Run fs_delete_file("),
        format!(
            "{prompt} n\n\
             \x20 fs_delete_file: declined by you\n\
             ── jp (anthropic/claude-haiku-4-5) ──\n\
             Kept.\n\
             tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n\
             EXIT=0"
        )
    );
    assert_eq!(ws.read("project/notes.txt"), "keep me\n");
    assert_eq!(responses(&stored(&ws))[0].0, "declined");
}

#[test]
fn a_key_after_the_terminal_was_resized_answers_the_prompt() {
    let ws = initialized();
    ws.write("project/notes.txt", "keep me\n");
    let server = TestServer::start(vec![text_then_delete(), text_reply("Kept.")]);
    let Some(tmux) = Tmux::start_sized(&ws, &delete_line(&ws, &server), 120) else {
        return;
    };
    tmux.wait_for("[y,a,n,e,v,?]");
    tmux.resize(70);
    std::thread::sleep(Duration::from_millis(300));
    tmux.send(&["n"]);
    // The first key answers (it used to be lost, with a thread spinning).
    let screen = tmux.wait_for("EXIT=");
    assert!(
        screen.contains("fs_delete_file: declined by you"),
        "{screen}"
    );
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert_eq!(ws.read("project/notes.txt"), "keep me\n");
}
