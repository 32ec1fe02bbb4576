//! A path with a `..` after a symbolic link (issue 34, item 6), through the
//! real binary. Such a path names two files: the kernel's (the `..` goes to
//! the parent of the link's target) and a tool's that removes `..` before
//! it opens the path (as most path libraries do). jp judges both, runs the
//! call unattended only when both are inside (and match the rule), says in
//! the question which file is opened, and its own tools open exactly that
//! one.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::symlink;

use common::providers::{Item, anthropic, text_reply, tool_reply};
use common::query::{SAVE_TOOL, add_tools, initialized, query, responses, stored};
use common::tmux::{Tmux, from_line, query_line};
use common::{Run, Workspace};
use jp_test_server::{Reply, TestServer};

/// `save`'s script: the path joined to the root and normalized (`..`
/// removed), then opened, as most tools do.
const SAVE_PY: &str = r#"import json, os, sys
request = json.load(sys.stdin)
args = request["tool"]["arguments"]
root = request["context"]["root"]
target = os.path.normpath(os.path.join(root, args["path"]))
with open(target, "w") as f:
    f.write(args["content"])
print(json.dumps({"type": "success", "content": "wrote " + args["path"]}))
"#;

/// An initialized workspace with `save`, `src/c/d/` in it, and a
/// directory `outside/` next to the project.
fn workspace() -> Workspace {
    let ws = initialized();
    add_tools(&ws, "save.toml", SAVE_TOOL, &[("save.py", SAVE_PY)]);
    std::fs::create_dir_all(ws.project().join("src/c/d")).unwrap();
    std::fs::create_dir_all(ws.root().join("outside/sub")).unwrap();
    ws
}

/// The issue's first case: `src/b -> c/d` (inside), `src/a -> outside`.
/// The kernel resolves `src/b/../a/f.txt` to `src/c/a/f.txt`, under `src/`;
/// lexically it is `src/a/f.txt`, under `src/` too, but that is a link out:
/// a tool that removes `..` first writes outside. jp used to approve it
/// unattended, and the tool wrote `outside/f.txt`.
#[test]
fn a_dotdot_after_a_link_is_not_unattended_when_removing_it_first_leads_out() {
    let ws = workspace();
    symlink("c/d", ws.project().join("src/b")).unwrap();
    symlink(ws.root().join("outside"), ws.project().join("src/a")).unwrap();

    let args = serde_json::json!({ "path": "src/b/../a/f.txt", "content": "x" }).to_string();
    assert_eq!(
        ws.jp(&["policy", "check", "save", "--args", &args]),
        Run {
            code: 0,
            stdout: "save policy.run: ask\n  \
                     policy.run[0] prefix \"src/\" on /path: no match: \"src/b/../a/f.txt\" \
                     (normalized: src/a/f.txt) is under src/, but \"..\" follows a symbolic link: \
                     it opens src/c/a/f.txt, which is under src/, and a tool that removes \"..\" \
                     before following links opens <tmp>/outside/f.txt, outside the workspace, \
                     which is not under src/\n  \
                     policy.run[1] catch-all: matches\n  \
                     while streaming: decided once `path` is complete\n  \
                     policy: conversation.tools.save.policy.run (.jp/save.toml)\n"
                .to_owned(),
            stderr: String::new(),
        }
    );

    let call = serde_json::json!({ "path": "src/b/../a/f.txt", "content": "pwned" }).to_string();
    let server = TestServer::start(vec![tool_reply("toolu_1", "save", &call), text_reply("ok")]);
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "save it");
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(responses(&stored(&ws))[0].0, "declined", "{run:?}");
    assert!(
        !ws.root().join("outside/f.txt").exists(),
        "written outside the workspace"
    );
    assert!(!ws.project().join("src/c/a/f.txt").exists());
}

/// The same shape with both files inside and under `src/`: unattended, and
/// `fs_read_file` reads the file the policy named first (the kernel's),
/// not the one removing `..` first gives (it used to read `src/x.txt`).
#[test]
fn jp_tools_open_the_file_the_policy_judged() {
    let ws = workspace();
    symlink("c/d", ws.project().join("src/b")).unwrap();
    ws.write("project/src/x.txt", "lexical\n");
    ws.write("project/src/c/x.txt", "resolved\n");

    let args = r#"{"path": "src/b/../x.txt"}"#;
    let check = ws.jp(&["policy", "check", "fs_read_file", "--args", args]);
    assert!(
        check
            .stdout
            .starts_with("fs_read_file policy.run: unattended\n"),
        "{check:?}"
    );

    let server = TestServer::start(vec![
        tool_reply("toolu_1", "fs_read_file", args),
        text_reply("ok"),
    ]);
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "read it");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        responses(&stored(&ws)),
        [("success".to_owned(), "resolved\n".to_owned())]
    );
}

/// The issue's second case: `k -> ~/.ssh/sub`, so `k/../notes.txt` is
/// `~/.ssh/notes.txt` to the kernel (which the default policy asks about)
/// and the workspace's `notes.txt` once `..` is removed. jp asked about it
/// without saying which, and `fs_read_file` then read the workspace's
/// `notes.txt`. Now the question says which file is opened (and what a
/// tool that removes `..` first opens), and `fs_read_file`, which opens
/// the first, refuses it: it is outside the workspace.
#[test]
fn the_question_names_the_file_a_dotdot_after_a_link_opens() {
    let ws = workspace();
    // The tests' HOME is the temporary directory.
    std::fs::create_dir_all(ws.root().join(".ssh/sub")).unwrap();
    symlink(ws.root().join(".ssh/sub"), ws.project().join("k")).unwrap();
    ws.write("project/notes.txt", "workspace notes\n");
    ws.write(".ssh/notes.txt", "ssh notes\n");

    let call = r#"{"path": "k/../notes.txt"}"#;
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[Item::Tool("toolu_1", "fs_read_file", call)],
            "tool_use",
            false,
        )),
        text_reply("Done."),
    ]);
    let Some(tmux) = Tmux::start(&ws, &query_line(&ws, &server, "read the notes")) else {
        return;
    };
    tmux.wait_for("Run fs_read_file(path: \"k/../notes.txt\")? [y,");
    tmux.send(&["y"]);
    let screen = tmux
        .wait_for("EXIT=")
        .replace(&ws.root().display().to_string(), "<tmp>");
    assert_eq!(
        from_line(&screen, "  fs_read_file: path"),
        "  fs_read_file: path \"k/../notes.txt\" opens <tmp>/.ssh/notes.txt (a tool that \
         removes \"..\" before following links opens notes.txt)\n\
         Run fs_read_file(path: \"k/../notes.txt\")? [y,a,n,e,v,?] y\n\
         \x20 approved (ask: policy.run[4] (pattern \"{SSH}\" on /path) matched: \
         \"k/../notes.txt\" (normalized: notes.txt) does not match pattern \"{SSH}\", but \
         \"..\" follows a symbolic link: it opens <tmp>/.ssh/notes.txt, outside the workspace, \
         which matches pattern \"{SSH}\", and a tool that removes \"..\" before following \
         links opens notes.txt, which does not match pattern \"{SSH}\")\n\
         \x20 fs_read_file error: refused `k/../notes.txt`: a `..` in it follows a symbolic \
         link, so it leads to `<tmp>/.ssh/notes.txt`, outside the workspace\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         Done.\n\
         tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n\
         EXIT=0"
            .replace(
                "{SSH}",
                r"(?i)(^|/)(\\.ssh|\\.gnupg|\\.aws|\\.docker|\\.kube)/"
            )
    );
    // Neither file's content reached the model.
    let answered = responses(&stored(&ws));
    assert_eq!(answered.len(), 1);
    assert!(!answered[0].1.contains("notes\n"), "{answered:?}");
}
