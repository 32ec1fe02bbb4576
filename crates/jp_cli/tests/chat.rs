//! `jp chat`, the interactive session, in a real terminal (tmux): messages
//! as turns of the query engine, a message typed while the model streams
//! (queued, sent when the turn ends), the session's commands, and the
//! terminal left as it was on every way out.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::Workspace;
use common::providers::{Item, anthropic, text_reply, tool_reply};
use common::query::initialized;
use common::tmux::{Tmux, shown};
use jp_test_server::{Reply, Split, TestServer};

/// The shell line running `jp chat ARGS` against `server`, then printing
/// its exit code and the terminal's `icanon` and `echo` flags.
fn chat_line(ws: &Workspace, server: &TestServer, args: &str) -> String {
    format!(
        "env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/xdg' JP_TRUST_WORKSPACE=1 JP_NOW_MS={now} TERM=xterm ANTHROPIC_API_KEY=test-key \
         JP_CFG_ASSISTANT__MODEL__ID=anthropic/claude-haiku-4-5 \
         '{jp}' --cfg providers.llm.anthropic.base_url={url} chat {args}; \
         echo EXIT=$?; echo STTY $(stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)'); sleep 60",
        path = std::env::var("PATH").unwrap_or_default(),
        home = ws.root().display(),
        jp = env!("CARGO_BIN_EXE_jp"),
        url = server.url(),
        now = common::TEST_NOW_MS,
    )
}

/// An answer that streams for a few seconds.
fn slow_answer() -> Reply {
    let text: String = (1..=400).map(|n| format!("word{n} ")).collect();
    Reply::sse(anthropic(&[Item::Text(&text)], "end_turn", false))
        .split(Split::Every(48))
        .pace(Duration::from_millis(10))
}

/// A server whose first answer streams `n` words and then calls
/// `fs_create_file` (for a.txt), then answers twice.
fn question_after_words(n: usize) -> TestServer {
    let words: String = (1..=n).map(|n| format!("word{n} ")).collect();
    TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Text(&words),
                Item::Tool(
                    "toolu_1",
                    "fs_create_file",
                    r#"{"path":"a.txt","content":"x"}"#,
                ),
            ],
            "tool_use",
            false,
        ))
        .split(Split::Every(48))
        .pace(Duration::from_millis(10)),
        text_reply("AFTER-THE-DECLINE"),
        text_reply("ANSWER-TO-WHAT-WAS-TYPED"),
    ])
}

/// [`chat_line`] with `fs_create_file` set to ask. (The flag goes before
/// `chat`: a global flag given after the subcommand replaces the ones
/// before it.)
fn asking_chat_line(ws: &Workspace, server: &TestServer) -> String {
    chat_line(ws, server, "").replace(
        " chat ",
        " --cfg conversation.tools.fs_create_file.policy.run=ask chat ",
    )
}

/// Waits until the session reads a line: the last line on screen is the
/// bare prompt.
fn wait_for_prompt(tmux: &Tmux) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let screen = tmux.screen();
        if shown(&screen).lines().last() == Some("›") {
            return screen;
        }
        assert!(
            Instant::now() < deadline,
            "waited for the prompt; the screen shows:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Types `text` and Enter.
fn say(tmux: &Tmux, text: &str) {
    tmux.send(&["-l", text]);
    tmux.send(&["Enter"]);
}

/// The text of the last user message of a recorded Anthropic request.
fn last_user_text(body: &[u8]) -> String {
    let body: serde_json::Value = serde_json::from_slice(body).unwrap();
    let message = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()
        .clone();
    match &message["content"] {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => panic!("{other}"),
    }
}

#[test]
fn a_session_of_messages_with_a_tool_call_a_queued_message_and_a_model_change() {
    let ws = initialized();
    ws.write("project/notes.txt", "NOTE-CONTENT\n");
    let server = TestServer::start(vec![
        tool_reply("toolu_1", "fs_read_file", r#"{"path":"notes.txt"}"#),
        text_reply("The notes say NOTE-CONTENT."),
        slow_answer(),
        text_reply("ANSWER-TO-THE-QUEUED"),
        text_reply("ANSWER-FROM-SONNET"),
    ]);
    let Some(tmux) = Tmux::start(&ws, &chat_line(&ws, &server, "--new")) else {
        return;
    };
    wait_for_prompt(&tmux);
    say(&tmux, "read notes.txt");
    tmux.wait_for("The notes say NOTE-CONTENT.");
    wait_for_prompt(&tmux);
    say(&tmux, "count for me");
    tmux.wait_for("word3 ");
    // Typed while the answer streams: shown as it is typed, queued on
    // Enter, sent once the turn ends.
    say(&tmux, "and then this");
    tmux.wait_for("queued: and then this");
    tmux.wait_for("ANSWER-TO-THE-QUEUED");
    wait_for_prompt(&tmux);
    say(&tmux, "/model anthropic/claude-sonet-4-5");
    tmux.wait_for("did you mean anthropic/claude-sonnet-4-5?");
    wait_for_prompt(&tmux);
    say(&tmux, "/model anthropic/claude-sonnet-4-5");
    tmux.wait_for("model: anthropic/claude-sonnet-4-5 from the next message on");
    wait_for_prompt(&tmux);
    say(&tmux, "and now you");
    tmux.wait_for("ANSWER-FROM-SONNET");
    wait_for_prompt(&tmux);
    // `jp conversation cost`, run in the session.
    say(&tmux, "/cost");
    tmux.wait_for("4 turns · 5 requests · ");
    wait_for_prompt(&tmux);
    say(&tmux, "/exit");
    let screen = tmux.wait_for("STTY");
    assert!(screen.contains("EXIT=0"), "{screen}");
    tmux.assert_restored(&screen);

    let requests = server.requests();
    assert_eq!(requests.len(), 5, "{screen}");
    assert_eq!(last_user_text(&requests[0].body), "read notes.txt");
    assert_eq!(last_user_text(&requests[2].body), "count for me");
    assert_eq!(last_user_text(&requests[3].body), "and then this");
    assert_eq!(last_user_text(&requests[4].body), "and now you");
    let model = |i: usize| {
        let body: serde_json::Value = serde_json::from_slice(&requests[i].body).unwrap();
        body["model"].as_str().unwrap().to_owned()
    };
    assert_eq!(model(3), "claude-haiku-4-5");
    assert_eq!(model(4), "claude-sonnet-4-5");
    // The typed-ahead text never landed inside the streamed answer, and
    // every message went to one conversation.
    let streamed = screen
        .lines()
        .filter(|l| l.contains("word200"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!streamed.contains("and then"), "{screen}");
    let listed = ws.jp(&["conversation", "ls"]);
    assert_eq!(listed.stdout.lines().count(), 1, "{listed:?}");
}

#[test]
fn ctrl_c_clears_the_line_twice_on_an_empty_line_leaves_and_ctrl_d_leaves() {
    let ws = initialized();
    let server = TestServer::start(vec![]);
    let Some(tmux) = Tmux::start(&ws, &chat_line(&ws, &server, "")) else {
        return;
    };
    wait_for_prompt(&tmux);
    tmux.send(&["-l", "half a thought"]);
    tmux.wait_for("› half a thought");
    tmux.send(&["C-c"]);
    wait_for_prompt(&tmux);
    tmux.send(&["C-c"]);
    tmux.wait_for("(Ctrl+C again, Ctrl+D or /exit to leave)");
    wait_for_prompt(&tmux);
    tmux.send(&["C-c"]);
    let screen = tmux.wait_for("STTY");
    assert!(screen.contains("EXIT=0"), "{screen}");
    tmux.assert_restored(&screen);
    assert!(server.requests().is_empty());

    // Ctrl+D at an empty line leaves too.
    let Some(tmux) = Tmux::start(&ws, &chat_line(&ws, &server, "")) else {
        return;
    };
    wait_for_prompt(&tmux);
    tmux.send(&["C-d"]);
    let screen = tmux.wait_for("STTY");
    assert!(screen.contains("EXIT=0"), "{screen}");
    tmux.assert_restored(&screen);
}

#[test]
fn a_kill_while_the_session_reads_puts_the_terminal_back() {
    let ws = initialized();
    let server = TestServer::start(vec![]);
    let Some(tmux) = Tmux::start(&ws, &chat_line(&ws, &server, "")) else {
        return;
    };
    wait_for_prompt(&tmux);
    tmux.send(&["-l", "typing"]);
    tmux.wait_for("› typing");
    let pids = common::tmux::pids_running(env!("CARGO_BIN_EXE_jp"), &server.url());
    assert_eq!(pids.len(), 1, "{pids:?}");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pids[0].to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let screen = tmux.wait_for("STTY");
    assert!(screen.contains("EXIT=143"), "{screen}");
    tmux.assert_restored(&screen);
}

#[test]
fn a_kill_during_a_turn_ends_the_turn_then_the_session() {
    let ws = initialized();
    let server = TestServer::start(vec![slow_answer()]);
    let Some(tmux) = Tmux::start(&ws, &chat_line(&ws, &server, "")) else {
        return;
    };
    wait_for_prompt(&tmux);
    say(&tmux, "count for me");
    tmux.wait_for("word3 ");
    let pids = common::tmux::pids_running(env!("CARGO_BIN_EXE_jp"), &server.url());
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pids[0].to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let screen = tmux.wait_for("STTY");
    assert!(
        screen.contains("interrupted; the conversation keeps what arrived"),
        "{screen}"
    );
    assert!(screen.contains("EXIT=143"), "{screen}");
    tmux.assert_restored(&screen);
}

#[test]
fn a_session_stopped_with_ctrl_z_and_continued_with_fg_still_works() {
    let ws = initialized();
    let server = TestServer::start(vec![text_reply("AFTER-FG")]);
    let Some(tmux) = Tmux::in_shell(&ws, &chat_line(&ws, &server, "")) else {
        return;
    };
    wait_for_prompt(&tmux);
    tmux.send(&["C-z"]);
    tmux.wait_for("Stopped");
    // The shell has the terminal back, as it wants it.
    tmux.send(&[
        "-l",
        "echo SHELL $(stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)')",
    ]);
    tmux.send(&["Enter"]);
    tmux.wait_for("SHELL icanon echo");
    tmux.send(&["-l", "fg"]);
    tmux.send(&["Enter"]);
    std::thread::sleep(Duration::from_millis(500));
    say(&tmux, "still there?");
    tmux.wait_for("AFTER-FG");
    wait_for_prompt(&tmux);
    say(&tmux, "/exit");
    // (The shell ran the rest of its line at the stop: it looks again.)
    tmux.wait_for("› /exit\n$ ");
    say(
        &tmux,
        "echo AFTER $(stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)')",
    );
    let screen = tmux.wait_for("AFTER icanon echo");
    assert_eq!(tmux.cursor_flag(), "1", "{screen}");
}

#[test]
fn keys_typed_ahead_never_answer_a_question_and_wait_in_the_line() {
    let ws = initialized();
    let server = question_after_words(200);
    let line = asking_chat_line(&ws, &server);
    let Some(tmux) = Tmux::start(&ws, &line) else {
        return;
    };
    wait_for_prompt(&tmux);
    say(&tmux, "make a.txt");
    tmux.wait_for("word3 ");
    // `y` typed before the question shows: it goes to the next message.
    tmux.send(&["-l", "yy"]);
    tmux.wait_for("next› yy");
    tmux.wait_for("[y,a,n,e,v,?]");
    tmux.send(&["n"]);
    tmux.wait_for("AFTER-THE-DECLINE");
    // The turn ended; what was typed is in the line, to go on with.
    tmux.wait_for("› yy");
    say(&tmux, " and more");
    tmux.wait_for("ANSWER-TO-WHAT-WAS-TYPED");
    wait_for_prompt(&tmux);
    say(&tmux, "/exit");
    let screen = tmux.wait_for("STTY");
    assert!(screen.contains("[y,a,n,e,v,?] n"), "{screen}");
    assert!(!ws.project().join("a.txt").exists(), "{screen}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{screen}");
    assert_eq!(last_user_text(&requests[2].body), "yy and more");
    tmux.assert_restored(&screen);
}

#[test]
fn pasted_lines_and_alt_enter_make_one_message() {
    let ws = initialized();
    let server = TestServer::start(vec![text_reply("PASTED"), text_reply("TYPED")]);
    let Some(tmux) = Tmux::start(&ws, &chat_line(&ws, &server, "")) else {
        return;
    };
    wait_for_prompt(&tmux);
    // tmux pastes as the terminal would: bracketed, since jp asked for it.
    let status = std::process::Command::new("tmux")
        .args(tmux.args(&["set-buffer", "line one\nline two"]))
        .status()
        .unwrap();
    assert!(status.success());
    let status = std::process::Command::new("tmux")
        .args(tmux.args(&["paste-buffer", "-p"]))
        .status()
        .unwrap();
    assert!(status.success());
    tmux.wait_for("line two");
    tmux.send(&["Enter"]);
    tmux.wait_for("PASTED");
    wait_for_prompt(&tmux);
    tmux.send(&["-l", "first"]);
    tmux.send(&["M-Enter"]);
    tmux.send(&["-l", "second"]);
    tmux.send(&["C-j"]);
    tmux.send(&["-l", "third"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("TYPED");
    let requests = server.requests();
    assert_eq!(last_user_text(&requests[0].body), "line one\nline two");
    assert_eq!(last_user_text(&requests[1].body), "first\nsecond\nthird");
}

#[test]
fn without_a_terminal_jp_chat_says_so_and_jp_alone_prints_its_help() {
    let ws = initialized();
    let run = ws.jp(&["chat"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: jp chat needs a terminal, and stdin or stdout is not one; `jp query MESSAGE` takes a message from its arguments or a pipe\n"
    );
    assert_eq!(run.stdout, "");
    let run = ws.jp(&[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .starts_with("The jp command-line assistant.\n\nUsage: jp [OPTIONS] [COMMAND]\n"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("\n  chat "), "{}", run.stderr);
}

#[test]
fn rewind_and_new_in_a_session_run_their_subcommands() {
    let ws = initialized();
    let server = TestServer::start(vec![
        tool_reply(
            "toolu_1",
            "fs_create_file",
            r#"{"path":"src/made.rs","content":"pub fn made() {}\n"}"#,
        ),
        text_reply("MADE-IT"),
        text_reply("A-FRESH-START"),
    ]);
    let Some(tmux) = Tmux::start(&ws, &chat_line(&ws, &server, "--new")) else {
        return;
    };
    wait_for_prompt(&tmux);
    say(&tmux, "make src/made.rs");
    tmux.wait_for("MADE-IT");
    assert!(ws.project().join("src/made.rs").exists());
    wait_for_prompt(&tmux);
    // `jp conversation rewind`, asking on the session's terminal.
    say(&tmux, "/rewind");
    tmux.wait_for("Rewind? [y,N,?]");
    tmux.send(&["y"]);
    tmux.wait_for("rewound turn 1");
    wait_for_prompt(&tmux);
    assert!(!ws.project().join("src/made.rs").exists());
    say(&tmux, "/new");
    tmux.wait_for("the next message starts a new conversation");
    wait_for_prompt(&tmux);
    say(&tmux, "hello again");
    tmux.wait_for("A-FRESH-START");
    wait_for_prompt(&tmux);
    tmux.send(&["C-d"]);
    let screen = tmux.wait_for("STTY");
    assert!(screen.contains("EXIT=0"), "{screen}");
    tmux.assert_restored(&screen);
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{screen}");
    // The new conversation starts with this message alone.
    let body: serde_json::Value = serde_json::from_slice(&requests[2].body).unwrap();
    assert_eq!(body["messages"].as_array().unwrap().len(), 1, "{body}");
    let listed = ws.jp(&["conversation", "ls"]);
    assert_eq!(listed.stdout.lines().count(), 2, "{listed:?}");
}

#[test]
fn ctrl_c_in_a_later_turn_opens_the_menu_each_time() {
    let ws = initialized();
    let server = TestServer::start(vec![text_reply("FIRST-DONE"), slow_answer()]);
    let Some(tmux) = Tmux::start(&ws, &chat_line(&ws, &server, "")) else {
        return;
    };
    wait_for_prompt(&tmux);
    say(&tmux, "one");
    tmux.wait_for("FIRST-DONE");
    wait_for_prompt(&tmux);
    say(&tmux, "two");
    tmux.wait_for("word3 ");
    // A past turn's signal watcher must not take these (found in review:
    // the second Ctrl+C exited, as if pressed twice in one turn).
    let menu =
        "Ctrl+C while the response streams (c continue, s stop and reply, a abort): [c,s,a,?]";
    for presses in 1..=2 {
        tmux.send(&["C-c"]);
        let screen = tmux.wait_for(&format!("{menu} "));
        assert_eq!(screen.matches(menu).count(), presses, "{screen}");
        tmux.send(&["c"]);
        tmux.wait_for(&format!("{menu} c"));
    }
    tmux.wait_for("word400");
    wait_for_prompt(&tmux);
    say(&tmux, "/exit");
    let screen = tmux.wait_for("STTY");
    assert!(screen.contains("EXIT=0"), "{screen}");
    tmux.assert_restored(&screen);
}

#[test]
fn typing_on_when_a_question_shows_goes_on_with_the_message() {
    let ws = initialized();
    let server = question_after_words(120);
    let line = asking_chat_line(&ws, &server);
    let Some(tmux) = Tmux::start(&ws, &line) else {
        return;
    };
    wait_for_prompt(&tmux);
    say(&tmux, "make a.txt");
    tmux.wait_for("word3 ");
    // Typed on, a key every 80 ms, across the moment the question shows:
    // `a` (allow for the session) and `y` are in it.
    let message = "also say yes and allow";
    for c in message.chars() {
        tmux.send(&["-l", &c.to_string()]);
        std::thread::sleep(Duration::from_millis(80));
    }
    let screen = tmux.wait_for("[y,a,n,e,v,?]");
    assert!(!screen.contains("approved"), "{screen}");
    // After a pause, the next key is the answer.
    std::thread::sleep(Duration::from_millis(900));
    tmux.send(&["n"]);
    tmux.wait_for("AFTER-THE-DECLINE");
    tmux.wait_for(&format!("› {message}"));
    tmux.send(&["Enter"]);
    tmux.wait_for("ANSWER-TO-WHAT-WAS-TYPED");
    let screen = tmux.screen();
    assert!(screen.contains("[y,a,n,e,v,?] n"), "{screen}");
    assert!(!ws.project().join("a.txt").exists(), "{screen}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{screen}");
    assert_eq!(last_user_text(&requests[2].body), message);
}

#[test]
fn queued_commands_run_on_their_own_and_a_partial_line_is_kept() {
    let ws = initialized();
    let server = TestServer::start(vec![
        slow_answer(),
        text_reply("ANSWER-FROM-SONNET"),
        text_reply("ANSWER-TO-THE-REST"),
    ]);
    let Some(tmux) = Tmux::start(&ws, &chat_line(&ws, &server, "")) else {
        return;
    };
    wait_for_prompt(&tmux);
    say(&tmux, "count");
    tmux.wait_for("word3 ");
    say(&tmux, "/model anthropic/claude-sonnet-4-5");
    tmux.wait_for("queued: /model anthropic/claude-sonnet-4-5");
    say(&tmux, "then this");
    tmux.wait_for("queued: then this");
    tmux.send(&["-l", "and the rest"]);
    tmux.wait_for("next› and the rest");
    tmux.wait_for("model: anthropic/claude-sonnet-4-5 from the next message on");
    tmux.wait_for("ANSWER-FROM-SONNET");
    // What was typed and not sent is in the line.
    tmux.wait_for("› and the rest");
    tmux.send(&["Enter"]);
    tmux.wait_for("ANSWER-TO-THE-REST");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(last_user_text(&requests[1].body), "then this");
    assert_eq!(last_user_text(&requests[2].body), "and the rest");
    let body: serde_json::Value = serde_json::from_slice(&requests[1].body).unwrap();
    assert_eq!(body["model"], "claude-sonnet-4-5");
}

#[test]
fn a_turn_stopped_with_ctrl_z_and_continued_still_reads_what_is_typed_ahead() {
    let ws = initialized();
    let server = TestServer::start(vec![slow_answer(), text_reply("ANSWER-AFTER-FG")]);
    let Some(tmux) = Tmux::in_shell(&ws, &chat_line(&ws, &server, "")) else {
        return;
    };
    wait_for_prompt(&tmux);
    say(&tmux, "count");
    tmux.wait_for("word3 ");
    tmux.send(&["C-z"]);
    tmux.wait_for("Stopped");
    tmux.send(&["-l", "fg"]);
    tmux.send(&["Enter"]);
    std::thread::sleep(Duration::from_millis(300));
    // Keys one by one and no echo again: the line shows as typed ahead.
    tmux.send(&["-l", "after fg"]);
    tmux.wait_for("next› after fg");
    tmux.send(&["Enter"]);
    tmux.wait_for("queued: after fg");
    tmux.wait_for("ANSWER-AFTER-FG");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(last_user_text(&requests[1].body), "after fg");
}

#[test]
fn a_misspelled_model_is_said_before_the_session_starts() {
    let ws = initialized();
    let server = TestServer::start(vec![]);
    let line = chat_line(&ws, &server, "--model anthropic/claude-sonet-4-5");
    let Some(tmux) = Tmux::start(&ws, &line) else {
        return;
    };
    let screen = tmux.wait_for("STTY");
    assert_eq!(
        shown(&screen)
            .lines()
            .take_while(|l| !l.starts_with("STTY"))
            .collect::<Vec<_>>()
            .join("\n"),
        "error: --model anthropic/claude-sonet-4-5: `anthropic/claude-sonet-4-5` is not a model jp knows (did you mean anthropic/claude-sonnet-4-5?); a model jp does not list yet works once your config names it: `[providers.llm.anthropic.models.\"claude-sonet-4-5\"]`\nEXIT=2"
    );
    tmux.assert_restored(&screen);
    assert!(server.requests().is_empty());
}
