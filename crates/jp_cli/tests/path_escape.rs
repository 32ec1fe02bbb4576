//! A path that cannot be resolved never runs unattended (issue 9,
//! architecture decision 3), through the real binary: `jp policy check`
//! explains it, and `jp query` against the test server does not let a
//! tool that resolves paths itself write outside the workspace.
//!
//! The tool is a Python script because Python's `os.path.realpath` follows
//! symlinks with no 40-link limit: exactly the tool the attack needs.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;

use common::providers::{Item, anthropic};
use common::query::{SAVE_TOOL, add_tools, initialized, query, responses, stored};
use common::{Run, Workspace};
use jp_test_server::{Reply, Split, TestServer};

/// `save`'s script: it resolves the path itself (links followed).
const SAVE_PY: &str = r#"import json, os, sys
request = json.load(sys.stdin)
args = request["tool"]["arguments"]
root = request["context"]["root"]
target = os.path.realpath(os.path.join(root, args["path"]))
os.makedirs(os.path.dirname(target), exist_ok=True)
with open(target, "w") as f:
    f.write(args["content"])
print(json.dumps({"type": "success", "content": "wrote " + os.path.relpath(target, root)}))
"#;

fn workspace() -> Workspace {
    let ws = initialized();
    add_tools(&ws, "save.toml", SAVE_TOOL, &[("save.py", SAVE_PY)]);
    std::fs::create_dir_all(ws.project().join("src/sub")).unwrap();
    ws
}

/// `chains/nN/c0 -> c1 -> ... -> cN -> target`, reached from `src/chN`:
/// N + 2 links in all.
fn chain(root: &Path, n: usize, target: &Path) {
    let dir = root.join(format!("chains/n{n}"));
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..n {
        symlink(format!("c{}", i + 1), dir.join(format!("c{i}"))).unwrap();
    }
    symlink(target, dir.join(format!("c{n}"))).unwrap();
    symlink(
        format!("../chains/n{n}/c0"),
        root.join(format!("src/ch{n}")),
    )
    .unwrap();
}

fn check(ws: &Workspace, path: &str) -> Run {
    let args = serde_json::json!({ "path": path, "content": "x" }).to_string();
    ws.jp(&["policy", "check", "save", "--args", &args])
}

/// One `save` call to `path`, then a closing text.
fn save_call(path: &str) -> TestServer {
    let args = serde_json::json!({ "path": path, "content": "pwned" }).to_string();
    TestServer::start(vec![
        Reply::sse(anthropic(
            &[Item::Tool("toolu_1", "save", &args)],
            "tool_use",
            false,
        ))
        .split(Split::Random { seed: 9, max: 11 }),
        Reply::sse(anthropic(&[Item::Text("ok")], "end_turn", false)),
    ])
}

fn policy_check_output(mode: &str, first: &str) -> Run {
    Run {
        code: 0,
        stdout: format!(
            "save policy.run: {mode}\n  policy.run[0] prefix \"src/\" on /path: {first}\n{}  \
             while streaming: decided once `path` is complete\n  \
             policy: conversation.tools.save.policy.run (.jp/save.toml)\n",
            if mode == "ask" {
                "  policy.run[1] catch-all: matches\n"
            } else {
                ""
            }
        ),
        stderr: String::new(),
    }
}

#[test]
fn a_chain_longer_than_forty_links_asks_and_nothing_is_written_outside() {
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    chain(&ws.project(), 45, outside.path());

    assert_eq!(
        check(&ws, "src/ch45/pwned.txt"),
        policy_check_output(
            "ask",
            "no match: \"src/ch45/pwned.txt\" is under src/, but cannot be resolved: more than \
             40 symbolic links would have to be followed"
        )
    );

    let server = save_call("src/ch45/pwned.txt");
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "save it");
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "declined".to_owned(),
            "The call was not run: the user's policy requires confirmation and no one could \
             confirm it (jp is running without a terminal). jp stopped your response after 36 B \
             of this call's arguments."
                .to_owned()
        )]
    );
    assert_eq!(
        run.stderr,
        // Declined as soon as `path` decided the policy: `content` never
        // streamed. No rule is suggested that would not run this call
        // anyway (an unresolvable path never runs unattended).
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         Calling tool save(path: \"src/ch45/pwned.txt\")\n  \
         save: declined: policy.run[1] (catch-all) matched, so jp must ask, and no terminal is \
         available; run jp in a terminal to answer, or add a rule for calls like this one before \
         policy.run[1] in conversation.tools.save (`jp policy check save` tries it)\n  \
         stopped the stream after 36 B of save's arguments\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         tokens: 2 responses · 20 in · 43 out · $0.0002 · stream stopped after 36 B of save's arguments; the rest was never generated · context 1% of 200k\n"
    );
    assert!(!outside.path().join("pwned.txt").exists());
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn a_symlink_loop_asks_and_nothing_is_written() {
    let ws = workspace();
    symlink("b", ws.project().join("src/a")).unwrap();
    symlink("a", ws.project().join("src/b")).unwrap();

    assert_eq!(
        check(&ws, "src/a/pwned.txt"),
        policy_check_output(
            "ask",
            "no match: \"src/a/pwned.txt\" is under src/, but cannot be resolved: symbolic links \
             loop at src/a"
        )
    );
    let server = save_call("src/a/pwned.txt");
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "save it");
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(responses(&stored(&ws))[0].0, "declined");
}

#[test]
fn a_chain_of_forty_links_that_stays_inside_runs_unattended() {
    let ws = workspace();
    // src/ch38 -> c0 -> ... -> c38 -> src/sub: 40 links.
    chain(&ws.project(), 38, &ws.project().join("src/sub"));

    assert_eq!(
        check(&ws, "src/ch38/a.rs"),
        policy_check_output(
            "unattended",
            "matches: \"src/ch38/a.rs\" is under src/ (resolved: src/sub/a.rs)"
        )
    );
    let server = save_call("src/ch38/a.rs");
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "save it");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        responses(&stored(&ws)),
        [("success".to_owned(), "wrote src/sub/a.rs".to_owned())]
    );
    assert_eq!(ws.read("project/src/sub/a.rs"), "pwned");
}

/// Found by an adversarial run: `/proc/self/cwd` leads to jp's directory
/// when jp resolves it and to the tool's (the workspace root) when the tool
/// does. Run from `sub/`, jp saw `src/p/src/x` as `src/x` and ran the call
/// unattended; the tool wrote `../src/x`, outside the workspace. A link
/// under /proc cannot be resolved, so the call asks.
#[cfg(target_os = "linux")]
#[test]
fn a_link_through_proc_self_cwd_is_never_unattended() {
    let ws = workspace();
    std::fs::create_dir_all(ws.project().join("sub")).unwrap();
    symlink("/proc/self/cwd/..", ws.project().join("src/p")).unwrap();

    let server = save_call("src/p/src/x");
    let output =
        common::query::query_command(&ws, &server, "anthropic/claude-haiku-4-5", &[], "save it")
            .current_dir(ws.project().join("sub"))
            .output()
            .unwrap();
    let run = ws.run_of(output);
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(responses(&stored(&ws))[0].0, "declined", "{run:?}");
    assert!(
        run.stderr.contains(
            "save: declined: policy.run[1] (catch-all) matched, so jp must ask, and no terminal \
             is available"
        ),
        "{}",
        run.stderr
    );
    assert!(!ws.root().join("src/x").exists(), "written outside");
    assert!(!ws.project().join("src/x").exists());

    let mut check = ws.command(
        &[
            "policy",
            "check",
            "save",
            "--args",
            r#"{"path": "src/p/src/x", "content": "x"}"#,
        ],
        &[],
    );
    let check = ws.run_of(
        check
            .current_dir(ws.project().join("sub"))
            .output()
            .unwrap(),
    );
    assert!(
        check.stdout.contains(
            "cannot be resolved: the way goes through /proc/self, a link under /proc that leads \
             somewhere else for each process that follows it"
        ),
        "{check:?}"
    );
}
