//! `jp query --resume [ID]` through the real binary: with an ID the query
//! continues that conversation (made the active one); without one and
//! without a terminal it is a usage error; on a terminal (tmux) the user
//! picks the conversation from a list that is erased after, the terminal
//! restored.

#![allow(clippy::unwrap_used)]

mod common;

use common::Workspace;
use common::providers::{Item, anthropic};
use common::query::{initialized, query_command};
use common::tmux::{Tmux, shown, with_stty};
use jp_test_server::{Reply, TestServer};

const MODEL: &str = "anthropic/claude-haiku-4-5";

fn text(reply: &str) -> Reply {
    Reply::sse(anthropic(&[Item::Text(reply)], "end_turn", false))
}

/// Runs `jp query [extra...] MESSAGE` at `now_ms` (jp's clock).
fn query_at(
    ws: &Workspace,
    server: &TestServer,
    now_ms: u64,
    extra: &[&str],
    message: &str,
) -> common::Run {
    let mut command = query_command(ws, server, MODEL, extra, message);
    command.env("JP_NOW_MS", now_ms.to_string());
    ws.run_of(command.output().unwrap())
}

/// The ids of the workspace's conversations, oldest first.
fn ids(ws: &Workspace) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(ws.project().join(".jp/conversations"))
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.unwrap();
            entry
                .file_type()
                .unwrap()
                .is_dir()
                .then(|| entry.file_name().into_string().unwrap())
        })
        .collect();
    ids.sort();
    ids
}

const NOW: u64 = 1_796_040_000_000;

/// Three conversations: "first topic" three days ago, "second topic" two
/// hours ago, "third topic" (the active one) five minutes ago.
fn three_conversations(ws: &Workspace, server: &TestServer) -> Vec<String> {
    for (ago, message) in [
        (3 * 86_400_000, "first topic"),
        (2 * 3_600_000, "second topic"),
        (5 * 60_000, "third topic"),
    ] {
        let run = query_at(ws, server, NOW - ago, &["--new"], message);
        assert_eq!(run.code, 0, "{run:?}");
    }
    ids(ws)
}

/// The user messages of request `n` the server received.
fn user_messages(server: &TestServer, n: usize) -> Vec<String> {
    let requests = server.wait_for(n + 1, std::time::Duration::from_secs(5));
    requests[n].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            serde_json::Value::String(text) => text.clone(),
            content => content[0]["text"].as_str().unwrap_or_default().to_owned(),
        })
        .collect()
}

#[test]
fn resume_id_continues_that_conversation_and_makes_it_active() {
    let ws = initialized();
    let server = TestServer::start(vec![
        text("One."),
        text("Two."),
        text("Three."),
        text("Again."),
    ]);
    let ids = three_conversations(&ws, &server);
    // A unique start of the first conversation's id would be ambiguous
    // here (they differ in the last digits): the whole id.
    let run = query_at(&ws, &server, NOW, &["--resume", &ids[0]], "go on");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Again.\n");
    assert_eq!(user_messages(&server, 3), ["first topic", "go on"]);
    // It is the active one now: `jp conversation show` shows it.
    let shown = ws.jp(&["conversation", "show"]);
    assert!(
        shown
            .stdout
            .starts_with(&format!("conversation {} · first topic\n", ids[0])),
        "{shown:?}"
    );
    assert!(shown.stdout.contains("you: go on\n"), "{shown:?}");
}

#[test]
fn resume_last_continues_the_latest() {
    let ws = initialized();
    let server = TestServer::start(vec![text("One."), text("Two."), text("Again.")]);
    let first = query_at(&ws, &server, NOW - 60_000, &[], "older");
    assert_eq!(first.code, 0, "{first:?}");
    let second = query_at(&ws, &server, NOW, &["--new"], "newer");
    assert_eq!(second.code, 0, "{second:?}");
    // The older one made active again, then `last` picks the newer.
    let ids = ids(&ws);
    assert_eq!(ws.jp(&["conversation", "use", &ids[0]]).code, 0);
    let run = query_at(&ws, &server, NOW, &["--resume", "last"], "go on");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(user_messages(&server, 2), ["newer", "go on"]);
}

#[test]
fn resume_without_an_id_or_a_terminal_is_a_usage_error_and_sends_nothing() {
    let ws = initialized();
    let server = TestServer::start(vec![text("One.")]);
    let run = query_at(&ws, &server, NOW, &[], "hello");
    assert_eq!(run.code, 0, "{run:?}");
    for extra in [&["--resume", "--"][..], &["--resume=nope"]] {
        let run = query_at(&ws, &server, NOW, extra, "again");
        let expected = if extra.len() == 2 {
            "error: --resume without an ID needs a terminal to pick the conversation on; give it (`jp query --resume ID MESSAGE`; `jp conversation ls` lists them)\n"
        } else {
            "error: --resume: no conversation `nope` (see `jp conversation ls`)\n"
        };
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (2, "", expected),
            "{extra:?}"
        );
    }
    // Nothing was sent or recorded.
    assert_eq!(server.requests().len(), 1);
    assert_eq!(ids(&ws).len(), 1);
    // With --new or -c it makes no sense.
    let run = query_at(&ws, &server, NOW, &["--new", "--resume", "x"], "again");
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .starts_with("error: the argument '--new' cannot be used with '--resume [<ID>]'"),
        "{run:?}"
    );
}

/// The shell command running `jp query --resume -- MESSAGE` in tmux at
/// [`NOW`], then holding the pane open with the exit code and `stty`.
fn resume_line(ws: &Workspace, server: &TestServer, message: &str) -> String {
    with_stty(&format!(
        "env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/xdg' JP_TRUST_WORKSPACE=1 JP_NOW_MS={NOW} TERM=xterm ANTHROPIC_API_KEY=test-key \
         JP_CFG_ASSISTANT__MODEL__ID={MODEL} \
         '{jp}' query --cfg providers.llm.anthropic.base_url={url} --resume -- '{message}'; \
         echo EXIT=$?; sleep 60",
        path = std::env::var("PATH").unwrap_or_default(),
        home = ws.root().display(),
        jp = env!("CARGO_BIN_EXE_jp"),
        url = server.url(),
    ))
}

/// The list as it shows in an 80-column terminal (a 79-column list).
fn list(selected: usize) -> String {
    let rows = [
        ("third topic", "5 min ago"),
        ("second topic", "2 h ago"),
        ("first topic", "3 days ago"),
    ];
    let mut lines = vec![
        "Resume which conversation? ↑/↓ or j/k to move, Enter to choose, Esc or q to cancel"
            .chars()
            .take(78)
            .collect::<String>()
            + "…",
    ];
    for (at, (title, age)) in rows.iter().enumerate() {
        let marker = if at == selected { '>' } else { ' ' };
        lines.push(format!("{marker} {title:<65}  {age}").trim_end().to_owned());
    }
    lines.join("\n")
}

#[test]
fn the_picker_lists_newest_first_and_enter_continues_the_chosen_one() {
    let ws = initialized();
    let server = TestServer::start(vec![
        text("One."),
        text("Two."),
        text("Three."),
        text("Picked."),
    ]);
    three_conversations(&ws, &server);
    let Some(tmux) = Tmux::start_sized(&ws, &resume_line(&ws, &server, "go on"), 80) else {
        return;
    };
    let screen = tmux.wait_for("3 days ago");
    assert_eq!(shown(&screen), list(0));
    tmux.send(&["Down"]);
    tmux.wait_for("> second topic");
    tmux.send(&["j"]);
    tmux.wait_for("> first topic");
    tmux.send(&["k"]);
    let screen = tmux.wait_for("> second topic");
    assert_eq!(shown(&screen), list(1));
    tmux.send(&["Enter"]);
    let screen = tmux.wait_for("STTY");
    tmux.assert_restored(&screen);
    // The list is gone: the query's output starts where it was.
    let screen = shown(&screen);
    assert!(
        screen.starts_with("── jp (anthropic/claude-haiku-4-5) ──\nPicked.\n"),
        "{screen}"
    );
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert_eq!(user_messages(&server, 3), ["second topic", "go on"]);
}

/// Esc, `q` and Ctrl+C each cancel: the list is erased, nothing is sent,
/// and jp exits 130, as when any question of jp's is interrupted.
#[test]
fn esc_q_or_ctrl_c_in_the_picker_send_nothing_and_exit_130() {
    let ws = initialized();
    let server = TestServer::start(vec![text("One."), text("Two."), text("Three.")]);
    three_conversations(&ws, &server);
    for key in ["Escape", "q", "C-c"] {
        let Some(tmux) = Tmux::start_sized(&ws, &resume_line(&ws, &server, "go on"), 80) else {
            return;
        };
        tmux.wait_for("3 days ago");
        tmux.send(&["Down"]);
        tmux.wait_for("> second topic");
        tmux.send(&[key]);
        let screen = tmux.wait_for("STTY");
        tmux.assert_restored(&screen);
        let screen = shown(&screen);
        assert!(
            screen.starts_with("no conversation chosen; nothing was sent\nEXIT=130\n"),
            "{key}: {screen}"
        );
    }
    assert_eq!(server.requests().len(), 3);
}
