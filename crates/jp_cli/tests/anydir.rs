//! `jp` from a directory that is no workspace (issue 39), through the real
//! binary: `jp query` runs with the user's config, keeps its conversation
//! in the user's data directory and writes nothing into the directory;
//! `jp query -c` continues it and `jp conversation` works on it; a tool
//! call that may change something is asked whatever the user's config
//! says (declined without a terminal, saying why and what to do), while
//! jp's reading tools run as their policy says.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;

use common::Workspace;
use common::providers::{text_reply as text, tool_reply as tool};
use common::query::{event_types, query, responses, stored};
use common::tmux::{Tmux, query_line, shown};
use jp_test_server::TestServer;

const MODEL: &str = "anthropic/claude-haiku-4-5";

/// The header of each response.
const HEADER: &str = "── jp (anthropic/claude-haiku-4-5) ──\n";

/// The user's config: jp's file tools to read and to create, both
/// unattended.
const USER_CONFIG: &str = r#"
[conversation.tools.fs_read_file]
command = ["jp", "tool", "fs_read_file"]
summary = "Read a file."
parameters.path = { type = "path", required = true }
policy.run = "unattended"

[conversation.tools.fs_create_file]
command = ["jp", "tool", "fs_create_file"]
summary = "Create a file."
parameters.path = { type = "path", required = true }
parameters.content = { type = "string", required = true }
policy.run = "unattended"
"#;

/// A temporary HOME whose `project/` is a plain directory (no `.jp/`
/// there or above it) holding `notes.txt`, with the user's config.
fn plain() -> Workspace {
    let ws = Workspace::new();
    std::fs::remove_dir_all(ws.project().join(".jp")).unwrap();
    ws.write("xdg/jp/config.toml", USER_CONFIG);
    ws.write("project/notes.txt", "draft\n");
    ws
}

/// What is in the plain directory, sorted.
fn entries(ws: &Workspace) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(ws.project())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Where the directory's conversations are kept (`~/.local/share`, as
/// the tests' HOME has no XDG_DATA_HOME), and its digest.
fn kept(ws: &Workspace) -> (PathBuf, String) {
    let dirs = ws.root().join(".local/share/jp/directories");
    let found: Vec<_> = std::fs::read_dir(&dirs).unwrap().collect();
    assert_eq!(found.len(), 1, "{found:?}");
    let digest = found[0]
        .as_ref()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap();
    (dirs.join(&digest).join("conversations"), digest)
}

/// The line said when a query starts in the plain directory.
fn notice(digest: &str) -> String {
    format!(
        "no workspace here: conversations are kept in ~/.local/share/jp/directories/{digest}/conversations, and every tool call that may change something is asked (`jp init` makes this directory a workspace)\n"
    )
}

#[test]
fn a_query_outside_a_workspace_keeps_its_conversation_in_the_data_directory() {
    let ws = plain();
    let server = TestServer::start(vec![text("Hello."), text("Again.")]);
    let first = query(&ws, &server, MODEL, &[], "hi");
    assert_eq!(first.code, 0, "{first:?}");
    let (conversations, digest) = kept(&ws);
    assert_eq!(first.stdout, "Hello.\n");
    assert_eq!(
        first.stderr,
        format!(
            "{}{HEADER}tokens: 10 in · 42 out · $0.0002 · context 0% of 200k\n",
            notice(&digest)
        )
    );
    // Nothing in the directory: no `.jp/`.
    assert_eq!(entries(&ws), ["notes.txt"]);
    let id = std::fs::read_to_string(conversations.join("active"))
        .unwrap()
        .trim()
        .to_owned();
    assert!(conversations.join(&id).join("events.jsonl").is_file());

    // `-c` continues it; `jp conversation` works on the same store.
    let second = query(&ws, &server, MODEL, &["-c"], "again");
    assert_eq!(second.code, 0, "{second:?}");
    assert_eq!(second.stdout, "Again.\n");
    let conversation = stored(&ws);
    assert_eq!(conversation["id"], id.as_str());
    assert_eq!(
        event_types(&conversation),
        [
            "turn_start",
            "chat_request",
            "assistant_message",
            "usage",
            "turn_start",
            "chat_request",
            "assistant_message",
            "usage"
        ]
    );
    // Two days later, as `jp conversation ls` tells the age.
    let ls = || ws.jp_with_env(&["conversation", "ls"], &[("JP_NOW_MS", "1796213000000")]);
    assert_eq!(
        ls(),
        common::Run {
            code: 0,
            stdout: format!("* {id}  2 days ago    2 turns  hi\n"),
            stderr: String::new(),
        }
    );
    assert_eq!(entries(&ws), ["notes.txt"]);

    // A new one becomes the active one; `use` and `rm` work there too.
    let third = query(&ws, &server_of("New."), MODEL, &["--new"], "other");
    assert_eq!(third.code, 0, "{third:?}");
    let other = stored(&ws)["id"].as_str().unwrap().to_owned();
    assert_eq!(
        ls().stdout,
        format!(
            "  {id}  2 days ago    2 turns  hi\n\
             * {other}  2 days ago    1 turn   other\n"
        )
    );
    let used = ws.jp(&["conversation", "use", &id]);
    assert_eq!(used.code, 0, "{used:?}");
    assert_eq!(stored(&ws)["id"], id.as_str());
    let removed = ws.jp(&["conversation", "rm", &id]);
    assert_eq!(
        removed,
        common::Run {
            code: 0,
            stdout: format!("removed conversation {id}\n"),
            stderr: String::new(),
        }
    );
    assert!(!conversations.join(&id).exists());
    assert_eq!(
        ls().stdout,
        // The active one was removed: none is active now.
        format!("  {other}  2 days ago    1 turn   other\n")
    );
    assert_eq!(entries(&ws), ["notes.txt"]);
}

/// A server that answers `reply`, once.
fn server_of(reply: &str) -> TestServer {
    TestServer::start(vec![text(reply)])
}

#[test]
fn outside_a_workspace_a_change_is_asked_whatever_the_config_says_and_a_read_runs() {
    let ws = plain();
    let server = TestServer::start(vec![
        tool("toolu_1", "fs_read_file", r#"{"path": "notes.txt"}"#),
        tool(
            "toolu_2",
            "fs_create_file",
            r#"{"path": "new.txt", "content": "x"}"#,
        ),
        text("Done."),
    ]);
    let run = query(&ws, &server, MODEL, &[], "read, then write");
    assert_eq!(run.code, 5, "{run:?}");
    let (_, digest) = kept(&ws);
    assert_eq!(
        run.stderr,
        format!(
            "{}{HEADER}\
             Calling tool fs_read_file(path: \"notes.txt\")\n  \
               unattended (policy.run is \"unattended\")\n  \
               fs_read_file success: draft\n\
             {HEADER}\
             Calling tool fs_create_file()\n  \
               fs_create_file: declined: policy.run is \"unattended\", but there is no workspace here (every tool call that may change something is asked), so jp must ask, and no terminal is available; run jp in a terminal to answer, or run `jp init` to make this directory a workspace, where your policies decide\n  \
               stopped the stream before fs_create_file's arguments\n\
             {HEADER}\
             tokens: 3 responses · 30 in · 85 out · $0.0005 · stream stopped before fs_create_file's arguments; they were never generated · context 0% of 200k\n",
            notice(&digest)
        )
    );
    // The file was not written; nothing else was either.
    assert_eq!(entries(&ws), ["notes.txt"]);
    assert_eq!(
        responses(&stored(&ws)),
        [
            ("success".to_owned(), "draft\n".to_owned()),
            (
                "declined".to_owned(),
                "The call was not run: the user's policy requires confirmation and no one could confirm it (jp is running without a terminal). jp stopped your response before this call's arguments.".to_owned()
            ),
        ]
    );
}

#[test]
fn outside_a_workspace_jp_trust_still_needs_one() {
    let ws = plain();
    let run = ws.jp(&["trust"]);
    assert_eq!(
        run,
        common::Run {
            code: 2,
            stdout: String::new(),
            stderr:
                "error: no jp workspace here or above <tmp>/project; run `jp init` to create one\n"
                    .into(),
        }
    );
}

#[test]
fn outside_a_workspace_a_command_tool_is_asked_and_an_asking_policy_points_to_jp_init() {
    let ws = plain();
    // A command of the user's, unattended: jp knows nothing of what it
    // does. And fs_create_file asking by its own policy: a rule that lets
    // it run unattended would not help here, so none is suggested.
    let config = ws.read("xdg/jp/config.toml");
    ws.write(
        "xdg/jp/config.toml",
        &format!(
            "{}{}",
            config.replace(
                "parameters.content = { type = \"string\", required = true }\npolicy.run = \"unattended\"",
                "parameters.content = { type = \"string\", required = true }\npolicy.run = \"ask\""
            ),
            common::query::echo_tool("stamp", "stamped")
        ),
    );
    let server = TestServer::start(vec![
        tool("toolu_1", "stamp", "{}"),
        tool(
            "toolu_2",
            "fs_create_file",
            r#"{"path": "new.txt", "content": "x"}"#,
        ),
        text("Done."),
    ]);
    let run = query(&ws, &server, MODEL, &[], "stamp, then write");
    assert_eq!(run.code, 5, "{run:?}");
    let notes: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.contains(": declined: "))
        .map(str::trim)
        .collect();
    assert_eq!(
        notes,
        [
            "stamp: declined: policy.run is \"unattended\", but there is no workspace here (every tool call that may change something is asked), so jp must ask, and no terminal is available; run jp in a terminal to answer, or run `jp init` to make this directory a workspace, where your policies decide",
            "fs_create_file: declined: policy.run is \"ask\", so jp must ask, and no terminal is available; run jp in a terminal to answer, or run `jp init` to make this directory a workspace, where your policies decide",
        ],
        "{run:?}"
    );
    assert_eq!(entries(&ws), ["notes.txt"]);
}

#[test]
fn outside_a_workspace_a_change_is_asked_on_the_terminal_with_no_allow_for_the_session() {
    let ws = plain();
    let server = TestServer::start(vec![
        tool(
            "toolu_1",
            "fs_create_file",
            r#"{"path": "new.txt", "content": "x"}"#,
        ),
        text("Written."),
    ]);
    let Some(tmux) = Tmux::start_sized(&ws, &query_line(&ws, &server, "write"), 200) else {
        return;
    };
    let prompt = "Run fs_create_file(path: \"new.txt\", content: \"x\")? [y,n,e,v,?]";
    tmux.wait_for(prompt);
    assert!(!ws.project().join("new.txt").exists());
    tmux.send(&["y"]);
    let screen = tmux.wait_for("EXIT=");
    let (_, digest) = kept(&ws);
    assert_eq!(
        shown(&screen),
        format!(
            "{}{HEADER}\
             Calling tool fs_create_file\n  \
               path: \"new.txt\"\n  \
               content: \"x\"\n\
             {prompt} y\n  \
               approved (ask: policy.run is \"unattended\", but there is no workspace here (every tool call that may change something is asked))\n  \
               fs_create_file success: created new.txt (1 line)\n\
             {HEADER}\
             Written.\n\
             tokens: 2 responses · 20 in · 84 out · $0.0004 · context 0% of 200k\n\
             EXIT=0",
            notice(&digest)
        )
    );
    assert_eq!(ws.read("project/new.txt"), "x");
    assert_eq!(entries(&ws), ["new.txt", "notes.txt"]);
    // And `jp conversation rewind` there takes it back.
    let id = stored(&ws)["id"].as_str().unwrap().to_owned();
    let rewound = ws.jp(&["conversation", "rewind", "--yes"]);
    assert_eq!(
        rewound,
        common::Run {
            code: 0,
            stdout: format!(
                "rewind turn 1 of conversation {id}:\n  remove new.txt\nrewound turn 1: removed 1\n"
            ),
            stderr: String::new(),
        }
    );
    assert_eq!(entries(&ws), ["notes.txt"]);
}

#[test]
fn outside_a_workspace_jp_policy_check_says_a_change_is_asked() {
    let ws = plain();
    let check = |tool: &str, args: &str| ws.jp(&["policy", "check", tool, "--args", args]);
    assert_eq!(
        check("fs_create_file", r#"{"path": "new.txt", "content": "x"}"#),
        common::Run {
            code: 0,
            stdout: "fs_create_file policy.run: unattended\n  \
                       policy.run[0] catch-all: matches\n  \
                       but there is no workspace here (every tool call that may change something is asked): jp asks instead\n  \
                       while streaming: decided as the call starts\n  \
                       policy: conversation.tools.fs_create_file.policy.run (<tmp>/xdg/jp/config.toml)\n"
                .into(),
            stderr: String::new(),
        }
    );
    // A reading tool of jp's runs as its policy says.
    assert_eq!(
        check("fs_read_file", r#"{"path": "notes.txt"}"#),
        common::Run {
            code: 0,
            stdout: "fs_read_file policy.run: unattended\n  \
                       policy.run[0] catch-all: matches\n  \
                       while streaming: decided as the call starts\n  \
                       policy: conversation.tools.fs_read_file.policy.run (<tmp>/xdg/jp/config.toml)\n"
                .into(),
            stderr: String::new(),
        }
    );
}

#[test]
fn outside_a_workspace_jp_config_shows_what_the_active_conversation_recorded() {
    let ws = plain();
    let server = TestServer::start(vec![text("Hello.")]);
    let run = query(
        &ws,
        &server,
        MODEL,
        &["--model", "anthropic/claude-sonnet-4-5"],
        "hi",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let shown = ws.jp(&["config", "show"]);
    assert_eq!(shown.code, 0, "{shown:?}");
    let line: Vec<&str> = shown
        .stdout
        .lines()
        .filter(|line| line.starts_with("assistant.model.id "))
        .collect();
    let id = stored(&ws)["id"].as_str().unwrap().to_owned();
    assert_eq!(
        line,
        [format!(
            "assistant.model.id = \"anthropic/claude-sonnet-4-5\"  # conversation {id} (set by --model anthropic/claude-sonnet-4-5)"
        )],
        "{shown:?}"
    );
}
