//! The editor in `jp query`, on a real terminal (tmux) through the real
//! binary: the message written in `$EDITOR` (no message, or `-e`), an
//! empty one cancelling, an editor that fails; `e` at a prompt opening a
//! file's text itself; and a change to a file shown as a diff.
//!
//! The editors are shell scripts that stand in for a person: each writes
//! known text, and one shows the file on the terminal and takes a line
//! typed there, as an editor would.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::Workspace;
use common::providers::{text_reply, tool_reply};
use common::query::{initialized, query, stored};
use common::tmux::{Tmux, shown};
use jp_test_server::TestServer;

const MODEL: &str = "anthropic/claude-haiku-4-5";

/// The shell command running `jp ARGS` (a `query` and its arguments,
/// shell-quoted) in the terminal with a clean environment plus `env`
/// (`NAME='value' ...`), then printing the exit code and holding the pane
/// open.
fn jp_line(ws: &Workspace, server: &TestServer, env: &str, args: &str) -> String {
    format!(
        "env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/xdg' JP_TRUST_WORKSPACE=1 TERM=xterm \
         ANTHROPIC_API_KEY=test-key JP_CFG_ASSISTANT__MODEL__ID={MODEL} {env} \
         '{jp}' query --cfg providers.llm.anthropic.base_url={url} {args}; \
         echo EXIT=$?; sleep 60",
        path = std::env::var("PATH").unwrap_or_default(),
        home = ws.root().display(),
        jp = env!("CARGO_BIN_EXE_jp"),
        url = server.url(),
    )
}

/// `EDITOR='sh .jp/NAME'` for an editor script written to `.jp/NAME`.
fn editor(ws: &Workspace, name: &str, script: &str) -> String {
    ws.write(&format!("project/.jp/{name}"), script);
    format!(
        "EDITOR='sh {}'",
        ws.project().join(".jp").join(name).display()
    )
}

/// An editor that shows the file on the terminal, reads one line typed
/// there and puts it at the top of the file, as a person would type it.
const TYPING_EDITOR: &str = "#!/bin/sh\ncat \"$1\"\nIFS= read -r line\n\
    { printf '%s\\n' \"$line\"; cat \"$1\"; } > \"$1.new\" && mv \"$1.new\" \"$1\"\n";

/// The text of the last user message of request number `n` (from 1).
fn sent_message(server: &TestServer, n: usize) -> String {
    let sent = server.wait_for(n, Duration::from_secs(5))[n - 1].json();
    let messages = sent["messages"].as_array().unwrap();
    let last = &messages[messages.len() - 1]["content"];
    last.as_str()
        .map(str::to_owned)
        .or_else(|| last[0]["text"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no text in {sent}"))
}

/// How many events the active conversation holds, or 0 without one.
fn events(ws: &Workspace) -> usize {
    let run = ws.jp(&["conversation", "show", "--format", "json"]);
    if run.code != 0 {
        return 0;
    }
    stored(ws)["events"].as_array().map_or(0, Vec::len)
}

/// The `text` blocks of `docs/terminal.md` that follow `heading`, up to
/// the next heading of its level.
fn doc_blocks(heading: &str) -> Vec<String> {
    let docs = include_str!("../../../docs/terminal.md");
    let section = docs
        .split_once(heading)
        .map_or("", |(_, rest)| rest.split("\n## ").next().unwrap_or(""));
    section
        .split("```text\n")
        .skip(1)
        .filter_map(|block| block.split_once("\n```").map(|(text, _)| text.to_owned()))
        .collect()
}

/// A workspace with one exchange in its conversation: `rename main to
/// hello`, answered by a change to `src/lib.rs` and a line of text. The
/// server then answers the next request with `answer`.
fn with_an_exchange(answer: &str) -> (Workspace, TestServer) {
    let ws = initialized();
    ws.write("project/src/lib.rs", "pub fn main() {}\n");
    let server = TestServer::start(vec![
        tool_reply(
            "toolu_1",
            "fs_modify_file",
            r#"{"path": "src/lib.rs", "patterns": [{"old": "main", "new": "hello"}]}"#,
        ),
        text_reply("Renamed `main` to `hello`."),
        text_reply(answer),
    ]);
    let run = query(
        &ws,
        &server,
        MODEL,
        &[
            "--cfg",
            "conversation.tools.fs_modify_file.policy.run=unattended",
        ],
        "rename main to hello",
    );
    assert_eq!(run.code, 0, "{run:?}");
    (ws, server)
}

#[test]
fn no_message_on_a_terminal_opens_the_editor_on_the_last_exchange_and_sends_what_was_written() {
    let (ws, server) = with_an_exchange("`main` is now `hello`, in `src/lib.rs`.");
    let env = editor(&ws, "editor.sh", TYPING_EDITOR);
    // The command line as a shell would have shown it, for the docs.
    let line = format!("echo '$ jp query'; {}", jp_line(&ws, &server, &env, ""));
    let Some(tmux) = Tmux::start_sized(&ws, &line, 90) else {
        return;
    };
    tmux.wait_for("# assistant: Renamed `main` to `hello`.");
    tmux.send(&["-l", "Explain the change in one line."]);
    tmux.send(&["Enter"]);
    let screen = shown(&tmux.wait_for("EXIT="));
    // The message is what was written above the marker, trimmed.
    assert_eq!(sent_message(&server, 3), "Explain the change in one line.");
    let docs = doc_blocks("## The prompt from the editor");
    let capture = docs.first().map_or("", |block| block.trim_end());
    assert_eq!(screen, capture, "the screen:\n{screen}");
}

#[test]
fn an_empty_message_cancels_and_records_nothing() {
    let (ws, server) = with_an_exchange("unused");
    let before = events(&ws);
    // An editor that saves the file as it was.
    let env = editor(&ws, "editor.sh", "#!/bin/sh\ntrue\n");
    let Some(tmux) = Tmux::start_sized(&ws, &jp_line(&ws, &server, &env, ""), 90) else {
        return;
    };
    let screen = shown(&tmux.wait_for("EXIT="));
    assert_eq!(
        screen,
        "cancelled: the message is empty, so nothing was sent\nEXIT=2"
    );
    assert_eq!(server.requests().len(), 2);
    assert_eq!(events(&ws), before);
}

#[test]
fn edit_opens_the_editor_filled_with_the_message() {
    let (ws, server) = with_an_exchange("Briefly: `hello` replaced `main`.");
    // It adds to the first line, where the message is.
    let env = editor(
        &ws,
        "editor.sh",
        "#!/bin/sh\ncp \"$1\" .jp/opened.md\nsed -i '1s/$/ briefly/' \"$1\"\n",
    );
    let line = jp_line(&ws, &server, &env, "-e 'explain the change'");
    let Some(tmux) = Tmux::start_sized(&ws, &line, 90) else {
        return;
    };
    let screen = shown(&tmux.wait_for("EXIT="));
    assert_eq!(
        screen,
        "you: explain the change briefly\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         Briefly: hello replaced main.\n\
         tokens: 10 in · 42 out · $0.0002 · context 1% of 200k\n\
         EXIT=0"
    );
    assert_eq!(sent_message(&server, 3), "explain the change briefly");
    let opened = ws.read("project/.jp/opened.md");
    assert!(
        opened.starts_with(
            "explain the change\n\n# -------- >8 -------- write above this line -------- >8 --------\n"
        ),
        "{opened}"
    );
}

#[test]
fn an_editor_that_fails_sends_nothing_and_keeps_what_was_written() {
    let (ws, server) = with_an_exchange("unused");
    let before = events(&ws);
    let env = editor(
        &ws,
        "fails.sh",
        "#!/bin/sh\nsed -i '1s/^/a long message/' \"$1\"\nexit 3\n",
    );
    let Some(tmux) = Tmux::start_sized(&ws, &jp_line(&ws, &server, &env, ""), 200) else {
        return;
    };
    let screen = shown(&tmux.wait_for("EXIT="));
    let script = ws.project().join(".jp/fails.sh");
    let lines: Vec<&str> = screen.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "error: the editor `sh {}` exited with status 3; nothing was sent",
            script.display()
        ),
        "{screen}"
    );
    assert_kept(lines[1], "a long message\n", &screen);
    assert_eq!(lines[2..], ["EXIT=1"], "{screen}");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(events(&ws), before);

    // One that is not there at all.
    let line = jp_line(&ws, &server, "EDITOR=jp-test-no-such-editor", "");
    let Some(tmux) = Tmux::start_sized(&ws, &line, 200) else {
        return;
    };
    assert_eq!(
        shown(&tmux.wait_for("EXIT=")),
        "error: cannot run the editor `jp-test-no-such-editor`: no such command; nothing was sent\n\
         EXIT=1"
    );
    assert_eq!(events(&ws), before);
}

#[test]
fn without_a_terminal_no_message_is_a_clear_error_and_edit_is_refused() {
    let ws = initialized();
    let run = ws.jp(&["query", "--model", "scripted/demo"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: no message: give it as an argument (`jp query \"...\"`) or on stdin (`echo ... | jp query`); on a terminal, `jp query` alone opens your editor to write it\n"
    );
    for args in [&["query", "-e", "hi"][..], &["query", "--edit"]] {
        let run = ws.jp(args);
        assert_eq!(run.code, 2, "{run:?}");
        assert_eq!(
            run.stderr,
            "error: --edit opens your editor, which needs a terminal, and stdin is not one; give the message as an argument or on stdin\n"
        );
    }
    // A pipe is still read, and no editor opens.
    let mut command = ws.command(
        &["query", "--model", "scripted/.jp/hi.toml"],
        &[("EDITOR", "false")],
    );
    ws.write(
        "project/.jp/hi.toml",
        "[[responses]]\nparts = [{ text = \"Hi.\" }]\n",
    );
    command.stdin(std::process::Stdio::piped());
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        child.stdin.take().unwrap().write_all(b"hello\n").unwrap();
    }
    let run = ws.run_of(child.wait_with_output().unwrap());
    assert_eq!((run.code, run.stdout.as_str()), (0, "Hi.\n"), "{run:?}");
    assert_eq!(ws.jp(&["conversation", "ls"]).code, 0);
    assert!(events(&ws) > 0);
}

#[test]
fn e_on_a_files_content_opens_the_text_itself_in_the_editor() {
    let ws = initialized();
    let server = TestServer::start(vec![
        tool_reply(
            "toolu_1",
            "fs_create_file",
            r##"{"path": "docs/notes.md", "content": "# Notes\n\nfrom the model\n"}"##,
        ),
        text_reply("Written."),
    ]);
    // It keeps what it opened, and changes the text.
    let env = editor(
        &ws,
        "editor.sh",
        "#!/bin/sh\nbasename \"$1\" > .jp/opened-name\ncp \"$1\" .jp/opened\n\
         sed -i 's/from the model/from the user/' \"$1\"\n",
    );
    let Some(tmux) = Tmux::start_sized(&ws, &jp_line(&ws, &server, &env, "'write notes'"), 120)
    else {
        return;
    };
    // `docs/` is outside `src/`: jp's default policy asks.
    // The prompt opens once the path is known, and names the whole call
    // once it is complete.
    tmux.wait_for(
        "Run fs_create_file(path: \"docs/notes.md\", content: \"# Notes\\n\\nfrom the model\\n\")? \
         [y,a,n,e,v,?]",
    );
    tmux.send(&["e"]);
    let screen = tmux.wait_for("fs_create_file would run with:");
    assert_eq!(ws.read("project/.jp/opened-name"), "notes.md\n");
    assert_eq!(ws.read("project/.jp/opened"), "# Notes\n\nfrom the model\n");
    let screen = shown(&screen);
    let asked = screen
        .split_once("fs_create_file would run with:\n")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("{screen}"));
    assert_eq!(
        asked,
        "  path: \"docs/notes.md\"\n  content:\n  │ # Notes\n  │\n  │ from the user\n\
         Run fs_create_file(path: \"docs/notes.md\", content: \"# Notes\\n\\nfrom the user\\n\")? [y,a,n,e,v,?]"
    );
    tmux.send(&["y"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert_eq!(
        ws.read("project/docs/notes.md"),
        "# Notes\n\nfrom the user\n"
    );
}

/// A file with a function to change.
const LIB: &str = "//! Greetings.\n\n/// Says hello.\npub fn main() {\n    println!(\"hello\");\n}\n\n#[cfg(test)]\nmod tests {}\n";

#[test]
fn a_change_to_a_file_shows_as_a_diff_and_e_edits_its_new_text() {
    let ws = initialized();
    ws.write("project/src/lib.rs", LIB);
    let call = serde_json::json!({
        "path": "src/lib.rs",
        "patterns": [{
            "old": "pub fn main() {\n    println!(\"hello\");\n}",
            "new": "pub fn greet(name: &str) {\n    println!(\"hello, {name}\");\n}",
        }],
    });
    let server = TestServer::start(vec![
        tool_reply("toolu_1", "fs_modify_file", &call.to_string()),
        text_reply("`greet` takes a name now."),
    ]);
    let env = editor(
        &ws,
        "editor.sh",
        "#!/bin/sh\nbasename \"$1\" > .jp/opened-name\nsed -i 's/hello, /hi, /' \"$1\"\n",
    );
    let line = format!(
        "echo '$ jp query \"greet by name\"'; {}",
        jp_line(&ws, &server, &env, "'greet by name'")
    );
    let Some(tmux) = Tmux::start_sized(&ws, &line, 90) else {
        return;
    };
    // The prompt opened on `fs_modify_file(<streaming>)`; once the call is
    // complete it names the whole call.
    let screen = shown(&tmux.wait_for("#[cfg(test)]\nRun fs_modify_file(path: "));
    let docs = doc_blocks("## A change to a file");
    let capture = docs.first().map_or("", |block| block.trim_end());
    assert_eq!(screen, capture, "the screen:\n{screen}");
    // `e`: the new text opens as Rust, and the diff shows the edit.
    tmux.send(&["e"]);
    // The edited call's diff, then its prompt (the second below a diff).
    tmux.wait_for("    5 +     println!(\"hi, {name}\");");
    let prompted = "#[cfg(test)]\nRun fs_modify_file(path: ";
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while tmux.screen().matches(prompted).count() < 2 {
        assert!(std::time::Instant::now() < deadline, "{}", tmux.screen());
        std::thread::sleep(Duration::from_millis(50));
    }
    let screen = shown(&tmux.screen());
    assert_eq!(ws.read("project/.jp/opened-name"), "lib.rs\n");
    let diff = screen
        .split_once("  --- src/lib.rs\n")
        .and_then(|(_, rest)| rest.rsplit_once("  --- src/lib.rs\n"))
        .map(|(_, last)| last)
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        diff.starts_with(
            "  +++ src/lib.rs (after fs_modify_file)\n  @@ -1,8 +1,8 @@\n  1 1   //! Greetings.\n"
        ) && diff.contains("\n    5 +     println!(\"hi, {name}\");\n"),
        "{screen}"
    );
    tmux.send(&["y"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert_eq!(
        ws.read("project/src/lib.rs"),
        LIB.replace(
            "pub fn main() {\n    println!(\"hello\");",
            "pub fn greet(name: &str) {\n    println!(\"hi, {name}\");"
        )
    );
}

#[test]
fn a_diff_is_escaped_and_coloured_only_on_a_colour_terminal() {
    let run = |no_color: bool| {
        let ws = initialized();
        ws.write("project/src/lib.rs", "pub fn main() {}\n");
        let server = TestServer::start(vec![
            tool_reply(
                "toolu_1",
                "fs_modify_file",
                r#"{"path": "src/lib.rs", "patterns": [{"old": "main", "new": "x\u001b]0;owned\u0007"}]}"#,
            ),
            text_reply("Done."),
        ]);
        let env = if no_color { "NO_COLOR=1" } else { "" };
        let tmux = Tmux::start_sized(&ws, &jp_line(&ws, &server, env, "'rename'"), 90)?;
        // The prompt opens as the call starts; the diff, and the whole call
        // in the prompt, once it is complete.
        let screen = tmux.wait_for("() {}\nRun fs_modify_file(path: ");
        Some((shown(&screen), tmux.screen_with_escapes()))
    };
    let Some((screen, escapes)) = run(false) else {
        return;
    };
    let diff = "  --- src/lib.rs\n  +++ src/lib.rs (after fs_modify_file)\n  @@ -1,1 +1,1 @@\n  \
                1   - pub fn main() {}\n    1 + pub fn x\\u{1b}]0;owned\\u{7}() {}\n\
                Run fs_modify_file(path: \"src/lib.rs\", patterns: [{\"old\":\"main\",\"new\":\"x\\… \
                [y,a,n,e,v,?]";
    assert!(screen.ends_with(diff), "{screen}");
    // Removed lines red, added ones green (tmux writes its own sequence
    // for each change of colour).
    let line = |text: &str| {
        escapes
            .lines()
            .find(|line| line.ends_with(text))
            .unwrap_or_else(|| panic!("{escapes:?}"))
            .to_owned()
    };
    assert!(
        line("  1   - pub fn main() {}").contains("\x1b[31m")
            && line("    1 + pub fn x\\u{1b}]0;owned\\u{7}() {}").starts_with("\x1b[32m"),
        "{escapes:?}"
    );
    let (plain, escapes) = run(true).unwrap();
    assert!(plain.ends_with(diff), "{plain}");
    assert!(!escapes.contains('\x1b'), "{escapes:?}");
}

#[test]
fn ctrl_c_in_the_editor_is_the_editors_and_jp_keeps_what_was_written() {
    let (ws, server) = with_an_exchange("unused");
    let before = events(&ws);
    // An editor that Ctrl+C ends (a shell script, not in raw mode).
    let env = editor(
        &ws,
        "slow.sh",
        "#!/bin/sh\nsed -i '1s/^/half a thought/' \"$1\"\necho EDITING\nsleep 30\n",
    );
    let Some(tmux) = Tmux::start_sized(&ws, &jp_line(&ws, &server, &env, ""), 200) else {
        return;
    };
    tmux.wait_for("EDITING");
    tmux.send(&["C-c"]);
    let screen = shown(&tmux.wait_for("EXIT="));
    let lines: Vec<&str> = screen.lines().collect();
    // jp outlived the signal, and says how the editor ended (after the
    // terminal's echo of the key, `^C`).
    assert_eq!(lines[0], "EDITING", "{screen}");
    let error = lines[1].trim_start_matches("^C");
    assert!(
        error.starts_with("error: the editor `sh ")
            && error.ends_with("; nothing was sent")
            && (error.contains("was killed by signal 2")
                || error.contains("exited with status 130")),
        "{screen}"
    );
    assert_kept(lines[2], "half a thought\n", &screen);
    assert_eq!(lines[3..], ["EXIT=1"], "{screen}");
    assert_eq!(events(&ws), before);
}

/// `line` says where what the user wrote is kept, a file that starts with
/// `start`; removes it (and its directory).
fn assert_kept(line: &str, start: &str, screen: &str) {
    let kept = line
        .strip_prefix("what you wrote is kept in ")
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        std::fs::read_to_string(kept).unwrap().starts_with(start),
        "{kept}"
    );
    std::fs::remove_dir_all(std::path::Path::new(kept).parent().unwrap()).unwrap();
}
