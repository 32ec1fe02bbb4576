//! `jp conversation rewind` (issue 38): the files a turn's calls changed
//! are put back as they were (new files gone, deleted files and links
//! back, modes back), the turn is left out of what the model is sent next,
//! and a file changed since by something other than jp is named, not
//! overwritten.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use common::providers::{Item, anthropic, text_reply};
use common::query::{hide_ids, initialized, query, stored};
use jp_test_server::{Reply, TestServer};
use sha2::{Digest as _, Sha256};

const MODEL: &str = "anthropic/claude-haiku-4-5";

/// The project's tree: each entry's kind, content hash (or link target)
/// and mode, leaving out jp's conversations.
fn tree(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".jp/conversations" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let what = if meta.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                walk(root, &path, out);
                format!("dir {mode:o}")
            } else {
                let sha: String = Sha256::digest(std::fs::read(&path).unwrap())
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                format!("file {sha} {mode:o}")
            };
            out.insert(rel, what);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A workspace whose file tools run without asking, with `edit.txt`
/// (mode 640), `gone.txt`, `run.sh` and a link `link -> edit.txt`.
fn workspace() -> common::Workspace {
    let ws = initialized();
    let config = ws.read("project/.jp/config.toml");
    let config = config
        .replace(
            "[conversation.tools.fs_modify_file.policy]\nrun = \"ask\"",
            "[conversation.tools.fs_modify_file.policy]\nrun = \"unattended\"",
        )
        .replace(
            "[conversation.tools.fs_delete_file.policy]\nrun = \"ask\"",
            "[conversation.tools.fs_delete_file.policy]\nrun = \"unattended\"",
        );
    ws.write("project/.jp/config.toml", &config);
    ws.write("project/edit.txt", "one\n");
    chmod(&ws.project().join("edit.txt"), 0o640);
    ws.write("project/gone.txt", "bye\n");
    ws.write("project/keep.txt", "kept\n");
    std::os::unix::fs::symlink("edit.txt", ws.project().join("link")).unwrap();
    ws
}

/// A response making every kind of change, then one that ends the turn.
fn changing_turn() -> Vec<Reply> {
    vec![
        Reply::sse(anthropic(
            &[
                Item::Tool(
                    "toolu_1",
                    "fs_create_file",
                    r#"{"path": "src/new/made.txt", "content": "made\n"}"#,
                ),
                Item::Tool(
                    "toolu_2",
                    "fs_modify_file",
                    r#"{"path": "edit.txt", "patterns": [{"old": "one", "new": "two"}]}"#,
                ),
                Item::Tool("toolu_3", "fs_delete_file", r#"{"path": "gone.txt"}"#),
                Item::Tool("toolu_4", "fs_delete_file", r#"{"path": "link"}"#),
            ],
            "tool_use",
            false,
        )),
        text_reply("Done."),
    ]
}

#[test]
fn a_rewind_puts_the_tree_back_and_the_turn_is_not_sent_again() {
    let ws = workspace();
    let before = tree(&ws.project());
    let mut replies = changing_turn();
    replies.push(text_reply("Second answer."));
    let server = TestServer::start(replies);
    let run = query(&ws, &server, MODEL, &[], "first question");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read("project/edit.txt"), "two\n");
    assert_ne!(tree(&ws.project()), before);
    let changes: Vec<String> = stored(&ws)["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "file_change")
        .map(|e| format!("{} {} {}", e["call_id"], e["path"], e["before"]["kind"]))
        .collect();
    assert_eq!(
        changes,
        [
            r#""toolu_1" "src/new/made.txt" "absent""#,
            r#""toolu_2" "edit.txt" "file""#,
            r#""toolu_3" "gone.txt" "file""#,
            r#""toolu_4" "link" "link""#,
        ]
    );

    let rewind = ws.jp(&["conversation", "rewind", "--yes"]);
    assert_eq!(
        (
            rewind.code,
            hide_ids(&rewind.stdout),
            rewind.stderr.as_str()
        ),
        (
            0,
            "rewind turn 1 of conversation <id>:\n  \
             restore edit.txt\n  \
             recreate gone.txt\n  \
             restore link link -> edit.txt\n  \
             remove src/new/made.txt\n  \
             remove src/new/ if it is empty\n  \
             remove src/ if it is empty\n\
             rewound turn 1: restored 3 files, removed 3\n"
                .to_owned(),
            ""
        )
    );
    assert_eq!(tree(&ws.project()), before, "the tree is as it was");

    // The next request does not carry the rewound turn.
    let run = query(&ws, &server, MODEL, &[], "second question");
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    let sent = serde_json::to_string(&requests[2].json()["messages"]).unwrap();
    assert!(!sent.contains("first question"), "{sent}");
    assert!(!sent.contains("Done."), "{sent}");
    assert!(sent.contains("second question"), "{sent}");

    // `show` keeps the turn, marked.
    let shown = ws.jp(&["conversation", "show"]);
    let lines: Vec<&str> = shown
        .stdout
        .lines()
        .filter(|line| line.starts_with("── turn") || line.starts_with("rewound"))
        .collect();
    assert_eq!(
        lines,
        [
            "── turn 1 · 2026-11-30 12:00 · rewound ──",
            "rewound turn 1: restored 3 files, removed 3",
            "── turn 2 · 2026-11-30 12:00 ──",
        ]
    );
    // Nothing left to rewind but turn 2, which changed no file.
    let again = ws.jp(&["conversation", "rewind", "--yes"]);
    assert_eq!(
        hide_ids(&again.stdout),
        "rewind turn 2 of conversation <id>:\n  (no file to put back)\nrewound turn 2\n"
    );
    let none = ws.jp(&["conversation", "rewind", "--yes"]);
    assert_eq!(
        (none.code, none.stderr.as_str()),
        (2, "error: the conversation has no turn to rewind\n")
    );
}

#[test]
fn a_file_changed_since_stops_the_rewind_unless_forced() {
    let ws = workspace();
    let server = TestServer::start(changing_turn());
    let run = query(&ws, &server, MODEL, &[], "change things");
    assert_eq!(run.code, 0, "{run:?}");
    // By hand, after the turn.
    ws.write("project/edit.txt", "three\n");
    chmod(&ws.project().join("edit.txt"), 0o640);
    // A record nobody's jp sealed: never acted on.
    let log = ws
        .project()
        .join(".jp/conversations")
        .join(stored(&ws)["id"].as_str().unwrap())
        .join("events.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(
        r#"{"at_ms":1,"type":"file_change","call_id":"x","path":"keep.txt","before":{"kind":"absent"},"after":{"kind":"file","sha256":"ab","bytes":5,"mode":420}}"#,
    );
    text.push('\n');
    std::fs::write(&log, text).unwrap();
    let after_turn = tree(&ws.project());

    let refused = ws.jp(&["conversation", "rewind", "--yes"]);
    assert_eq!(
        (refused.code, hide_ids(&refused.stderr), refused.stdout.as_str()),
        (
            1,
            "error: cannot rewind turn 1 of conversation <id>: jp cannot put this file back as it was:\n  \
             edit.txt: it was changed since by something other than jp\n\
             give --force to leave it as it is now and rewind the rest\n"
                .to_owned(),
            ""
        )
    );
    assert_eq!(tree(&ws.project()), after_turn, "nothing was touched");

    let forced = ws.jp(&["conversation", "rewind", "--yes", "--force"]);
    assert_eq!(
        (forced.code, hide_ids(&forced.stdout)),
        (
            0,
            "rewind turn 1 of conversation <id>:\n  \
             recreate gone.txt\n  \
             restore link link -> edit.txt\n  \
             remove src/new/made.txt\n  \
             remove src/new/ if it is empty\n  \
             remove src/ if it is empty\n  \
             leave edit.txt as it is (it was changed since by something other than jp)\n  \
             note: 1 file change in these turns was not recorded by your jp here; jp leaves it alone\n\
             rewound turn 1: restored 2 files, removed 3, left 1 as it is (--force)\n"
                .to_owned()
        )
    );
    assert_eq!(ws.read("project/edit.txt"), "three\n");
    assert_eq!(ws.read("project/keep.txt"), "kept\n");
    assert_eq!(ws.read("project/gone.txt"), "bye\n");
}

#[test]
fn without_a_terminal_a_rewind_needs_yes() {
    let ws = workspace();
    let server = TestServer::start(changing_turn());
    assert_eq!(query(&ws, &server, MODEL, &[], "change").code, 0);
    let run = ws.jp(&["conversation", "rewind"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: no terminal to ask on; give --yes to rewind without asking\n"
    );
    assert_eq!(ws.read("project/edit.txt"), "two\n", "nothing was put back");
}

/// `jp init --sandboxed-commands`, with a project whose `.gitignore`
/// ignores `target/`; `None` when the suite runs with the kernel sandbox
/// set by `JP_TEST_SANDBOX` (these tests need it as jp sets it).
fn sandboxed_workspace() -> Option<common::Workspace> {
    if std::env::var_os("JP_TEST_SANDBOX").is_some() {
        return None;
    }
    let ws = common::Workspace::new();
    let run = ws.jp(&["init", "--yes", "--sandboxed-commands"]);
    assert_eq!(run.code, 0, "{run:?}");
    ws.write("project/.gitignore", "/target\n");
    ws.write("project/src/lib.rs", "fn a() {}\n");
    ws.write("project/build/one.o", "one");
    ws.write("project/build/sub/two.o", "two");
    ws.write("project/run.sh", "#!/bin/sh\n");
    chmod(&ws.project().join("run.sh"), 0o644);
    ws.write("project/target/out", "old build\n");
    Some(ws)
}

/// A response calling `run_command` (call `id`) with `sh -c SCRIPT`.
fn command_call(id: &str, script: &str) -> Reply {
    let arguments = serde_json::json!({"program": "sh", "args": ["-c", script]}).to_string();
    Reply::sse(anthropic(
        &[Item::Tool(id, "run_command", &arguments)],
        "tool_use",
        false,
    ))
}

/// One `run_command` call of `sh -c SCRIPT`, then the end of the turn.
fn command_turn(script: &str) -> Vec<Reply> {
    vec![command_call("toolu_1", script), text_reply("Done.")]
}

/// The tree without what `.gitignore` ignores.
fn kept_tree(root: &Path) -> BTreeMap<String, String> {
    tree(root)
        .into_iter()
        .filter(|(path, _)| !path.starts_with("target"))
        .collect()
}

#[test]
fn what_a_sandboxed_command_changed_is_put_back() {
    let Some(ws) = sandboxed_workspace() else {
        return;
    };
    let before = kept_tree(&ws.project());
    let server = TestServer::start(command_turn(
        "echo 'fn b() {}' >> src/lib.rs; rm -r build; mkdir -p new/deep; echo made > new/deep/made.txt; chmod +x run.sh; echo rebuilt > target/out",
    ));
    let run = query(&ws, &server, MODEL, &[], "change things");
    assert_eq!(run.code, 0, "{run:?}");
    let statuses: Vec<String> = stored(&ws)["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "tool_call_response")
        .map(|e| e["status"].to_string())
        .collect();
    assert_eq!(statuses, [r#""success""#], "it ran, in its sandbox");
    assert_eq!(ws.read("project/src/lib.rs"), "fn a() {}\nfn b() {}\n");

    let rewind = ws.jp(&["conversation", "rewind", "--yes"]);
    assert_eq!(
        (
            rewind.code,
            hide_ids(&rewind.stdout),
            rewind.stderr.as_str()
        ),
        (
            0,
            "rewind turn 1 of conversation <id>:\n  \
             recreate directory build/\n  \
             recreate build/one.o\n  \
             recreate directory build/sub/\n  \
             recreate build/sub/two.o\n  \
             remove new/deep/made.txt\n  \
             restore run.sh\n  \
             restore src/lib.rs\n  \
             remove new/deep/ if it is empty\n  \
             remove new/ if it is empty\n\
             rewound turn 1: restored 6 files, removed 3\n"
                .to_owned(),
            ""
        )
    );
    assert_eq!(kept_tree(&ws.project()), before, "the tree is as it was");
    // What .gitignore ignores is not kept (build output), and stays.
    assert_eq!(ws.read("project/target/out"), "rebuilt\n");
}

#[test]
fn a_command_that_may_write_outside_the_workspace_says_its_changes_are_not_kept() {
    let Some(ws) = sandboxed_workspace() else {
        return;
    };
    let elsewhere = ws.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n[conversation.tools.run_command.sandbox]\nwrite = [{:?}]\n",
            elsewhere.display().to_string()
        ),
    );
    let server = TestServer::start(command_turn("echo more >> src/lib.rs"));
    let run = query(&ws, &server, MODEL, &[], "change a thing");
    assert_eq!(run.code, 0, "{run:?}");
    let rewind = ws.jp(&["conversation", "rewind", "--yes"]);
    assert_eq!(
        (rewind.code, hide_ids(&rewind.stdout)),
        (
            0,
            "rewind turn 1 of conversation <id>:\n  \
             (no file to put back)\n  \
             note: run_command (turn 1) may have changed files jp did not keep (its sandbox lets it write outside the workspace (<tmp>/elsewhere)); they stay as they are\n\
             rewound turn 1\n"
                .to_owned()
        )
    );
    assert_eq!(ws.read("project/src/lib.rs"), "fn a() {}\nmore\n");
}

/// `jp conversation rewind` in the workspace's project on a terminal,
/// then its exit code.
fn rewind_line(ws: &common::Workspace) -> String {
    format!(
        "cd '{project}' && env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/xdg' TERM=xterm \
         '{jp}' conversation rewind; echo EXIT=$?; sleep 60",
        project = ws.project().display(),
        path = std::env::var("PATH").unwrap_or_default(),
        home = ws.root().display(),
        jp = env!("CARGO_BIN_EXE_jp"),
    )
}

#[test]
fn on_a_terminal_a_rewind_shows_what_it_will_do_and_asks() {
    let ws = workspace();
    let before = tree(&ws.project());
    let server = TestServer::start(changing_turn());
    assert_eq!(query(&ws, &server, MODEL, &[], "change").code, 0);
    let changed = tree(&ws.project());

    let Some(tmux) = common::tmux::Tmux::start_sized(&ws, &rewind_line(&ws), 120) else {
        return;
    };
    tmux.wait_for("Rewind?");
    tmux.send(&["n"]);
    let screen = hide_ids(&tmux.wait_for("EXIT="));
    assert_eq!(
        common::tmux::from_line(&screen, "rewind turn"),
        "rewind turn 1 of conversation <id>:\n  \
         restore edit.txt\n  \
         recreate gone.txt\n  \
         restore link link -> edit.txt\n  \
         remove src/new/made.txt\n  \
         remove src/new/ if it is empty\n  \
         remove src/ if it is empty\n\
         Rewind? [y,N,?] n\n\
         not rewound\n\
         EXIT=1"
    );
    assert_eq!(tree(&ws.project()), changed, "nothing was put back");
    tmux.kill();

    let Some(tmux) = common::tmux::Tmux::start_sized(&ws, &rewind_line(&ws), 120) else {
        return;
    };
    tmux.wait_for("Rewind?");
    tmux.send(&["y"]);
    let screen = tmux.wait_for("EXIT=");
    assert_eq!(
        common::tmux::from_line(&screen, "Rewind?"),
        "Rewind? [y,N,?] y\n\
         rewound turn 1: restored 3 files, removed 3\n\
         EXIT=0"
    );
    assert_eq!(tree(&ws.project()), before, "the tree is as it was");
}

/// The rewind's standard output with the conversation's id hidden, after
/// asserting it succeeded.
fn rewound(ws: &common::Workspace) -> String {
    let run = ws.jp(&["conversation", "rewind", "--yes"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    hide_ids(&run.stdout)
}

#[test]
fn what_a_gitignore_ignored_before_a_command_stays_out_whatever_the_command_does_to_it() {
    let Some(ws) = sandboxed_workspace() else {
        return;
    };
    let before = tree(&ws.project());
    let server = TestServer::start(command_turn(
        "rm .gitignore; echo changed > src/lib.rs; echo '*' > src/.gitignore",
    ));
    assert_eq!(query(&ws, &server, MODEL, &[], "x").code, 0);
    assert_eq!(
        rewound(&ws),
        "rewind turn 1 of conversation <id>:\n  \
         recreate .gitignore\n  \
         remove src/.gitignore\n  \
         restore src/lib.rs\n\
         rewound turn 1: restored 2 files, removed 1\n"
    );
    // The ignored build output the user had is neither removed nor taken.
    assert_eq!(tree(&ws.project()), before);
}

#[test]
fn a_directory_mode_a_command_changed_is_put_back() {
    let Some(ws) = sandboxed_workspace() else {
        return;
    };
    chmod(&ws.project().join("build"), 0o755);
    let before = kept_tree(&ws.project());
    let server = TestServer::start(command_turn("chmod 700 build; echo more >> src/lib.rs"));
    assert_eq!(query(&ws, &server, MODEL, &[], "x").code, 0);
    assert_eq!(
        rewound(&ws),
        "rewind turn 1 of conversation <id>:\n  \
         give build/ its mode 755 back\n  \
         restore src/lib.rs\n\
         rewound turn 1: restored 2 files\n"
    );
    assert_eq!(kept_tree(&ws.project()), before);
}

#[test]
fn a_command_cannot_take_away_what_undoes_it() {
    let Some(ws) = sandboxed_workspace() else {
        return;
    };
    let before = kept_tree(&ws.project());
    let server = TestServer::start(vec![
        command_call("toolu_1", "echo more >> src/lib.rs"),
        // Whatever it finds of jp's own in the workspace (and a planted
        // rewind of its own turn, which is not the user's).
        command_call(
            "toolu_2",
            r#"rm -rf .jp/conversations/*/blobs; for log in .jp/conversations/*/events.jsonl; do printf '{"at_ms":1,"type":"rewind","turns":[0],"reason":"user"}\n' >> "$log"; done"#,
        ),
        text_reply("Done."),
    ]);
    assert_eq!(query(&ws, &server, MODEL, &[], "x").code, 0);
    assert_eq!(
        rewound(&ws),
        "rewind turn 1 of conversation <id>:\n  \
         restore src/lib.rs\n\
         rewound turn 1: restored 1 file\n"
    );
    assert_eq!(kept_tree(&ws.project()), before);
}

#[test]
fn a_name_jp_cannot_record_makes_the_call_one_whose_changes_are_not_kept() {
    use std::os::unix::ffi::OsStrExt as _;
    let Some(ws) = sandboxed_workspace() else {
        return;
    };
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(ws.project().join(name), "precious\n").unwrap();
    let server = TestServer::start(command_turn("echo more >> src/lib.rs"));
    assert_eq!(query(&ws, &server, MODEL, &[], "x").code, 0);
    assert_eq!(
        rewound(&ws),
        "rewind turn 1 of conversation <id>:\n  \
         (no file to put back)\n  \
         note: run_command (turn 1) may have changed files jp did not keep (the workspace holds a name that is not UTF-8 (caf\u{fffd}.txt), which jp cannot record); they stay as they are\n\
         rewound turn 1\n"
    );
}

#[test]
fn a_rewind_line_the_user_did_not_record_takes_nothing_back() {
    let ws = workspace();
    let before = tree(&ws.project());
    let server = TestServer::start(changing_turn());
    assert_eq!(query(&ws, &server, MODEL, &[], "change").code, 0);
    let log = ws
        .project()
        .join(".jp/conversations")
        .join(stored(&ws)["id"].as_str().unwrap())
        .join("events.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(r#"{"at_ms":1,"type":"rewind","turns":[0],"reason":"user"}"#);
    text.push('\n');
    std::fs::write(&log, text).unwrap();
    let shown = ws.jp(&["conversation", "show"]);
    assert!(
        shown
            .stdout
            .contains("\nrewound turn 1 (not recorded by you here: ignored)\n"),
        "{}",
        shown.stdout
    );
    assert!(shown.stdout.contains("── turn 1 · 2026-11-30 12:00 ──\n"));
    assert!(rewound(&ws).ends_with("rewound turn 1: restored 3 files, removed 3\n"));
    assert_eq!(tree(&ws.project()), before);
}

#[test]
fn a_file_edited_while_the_rewind_asks_is_left_as_it_is() {
    let ws = workspace();
    let server = TestServer::start(changing_turn());
    assert_eq!(query(&ws, &server, MODEL, &[], "change").code, 0);
    let Some(tmux) = common::tmux::Tmux::start_sized(&ws, &rewind_line(&ws), 160) else {
        return;
    };
    tmux.wait_for("Rewind?");
    ws.write("project/edit.txt", "my edit, made while jp asked\n");
    chmod(&ws.project().join("edit.txt"), 0o640);
    tmux.send(&["y"]);
    let screen = tmux.wait_for("EXIT=");
    assert_eq!(
        common::tmux::from_line(&screen, "Rewind?"),
        "Rewind? [y,N,?] y\n\
         rewind of turn 1 stopped part-way; the turns are still live\n\
         error: the rewind stopped at edit.txt: it changed while the rewind was asking, so jp left it as it is; what it put back is recorded, and the turns stay live: run it again to finish\n\
         EXIT=1"
    );
    assert_eq!(
        ws.read("project/edit.txt"),
        "my edit, made while jp asked\n"
    );
}
