//! A decision still holds when the call runs (issue 21, item 1), through
//! the real binary against the test server.
//!
//! One response calls `mk`, which runs unattended and changes the tree (a
//! new link, a directory replaced by a link, a relative link that climbs
//! out), then `save` on a path under `src/`. `save` was decided unattended
//! while it streamed, when the path was still inside the workspace; by the
//! time it would start, the path leads outside. jp evaluates `policy.run`
//! again right before the start: the catch-all asks now, and without a
//! terminal that declines the call. The directory outside is left empty.
//!
//! The tools are Python scripts because `save` must resolve the path itself
//! (as most tools do) to show the attack.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::Workspace;
use common::providers::{Item, anthropic};
use common::query::{SAVE_TOOL, add_tools, initialized, query, responses, stored};
use jp_test_server::{Reply, Split, TestServer};

/// `mk`, beside `save` ([`SAVE_TOOL`]).
const MK_TOOL: &str = r#"
[conversation.tools.mk]
command = ["python3", ".jp/mk.py"]
summary = "Make a symbolic link."
parameters.at = { type = "string", required = true }
parameters.to = { type = "string", required = true }
policy.run = "unattended"
"#;

/// Writes `content` to `path`, resolving the path itself.
const SAVE_PY: &str = r#"import json, os, sys
request = json.load(sys.stdin)
args = request["tool"]["arguments"]
root = request["context"]["root"]
target = os.path.realpath(os.path.join(root, args["path"]))
os.makedirs(os.path.dirname(target), exist_ok=True)
with open(target, "w") as f:
    f.write(args["content"])
print(json.dumps({"type": "success", "content": "wrote " + target}))
"#;

/// Makes `at` a symbolic link to `to`, replacing a directory there.
const MK_PY: &str = r#"import json, os, shutil, sys
request = json.load(sys.stdin)
args = request["tool"]["arguments"]
at = os.path.join(request["context"]["root"], args["at"])
if os.path.isdir(at) and not os.path.islink(at):
    shutil.rmtree(at)
os.symlink(args["to"], at)
print(json.dumps({"type": "success", "content": "linked"}))
"#;

fn workspace() -> Workspace {
    let ws = initialized();
    add_tools(
        &ws,
        "tools.toml",
        &format!("{SAVE_TOOL}{MK_TOOL}"),
        &[("save.py", SAVE_PY), ("mk.py", MK_PY)],
    );
    std::fs::create_dir_all(ws.project().join("src")).unwrap();
    ws
}

/// One response that calls `mk(at, to)` and then `save(path)`, then a
/// closing text.
fn link_then_save(at: &str, to: &str, path: &str) -> TestServer {
    let mk = serde_json::json!({ "at": at, "to": to }).to_string();
    let save = serde_json::json!({ "path": path, "content": "pwned" }).to_string();
    TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Tool("toolu_1", "mk", &mk),
                Item::Tool("toolu_2", "save", &save),
            ],
            "tool_use",
            false,
        ))
        .split(Split::Random { seed: 21, max: 13 })
        .pace(std::time::Duration::from_millis(1)),
        Reply::sse(anthropic(&[Item::Text("ok")], "end_turn", false)),
    ])
}

/// What jp prints when `save(path)`, decided unattended after
/// `mk(at, to)` started, is declined at its start because `path` now
/// resolves to `resolved`, outside the workspace.
fn declined_at_start(at: &str, to: &str, path: &str, resolved: &str) -> String {
    format!(
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         Calling tool mk(at: \"{at}\", to: \"{to}\")\n  \
         unattended (policy.run is \"unattended\")\n\
         Calling tool save(path: \"{path}\", content: \"pwned\")\n  \
         unattended (policy.run[0] (prefix \"src/\" on /path) matched: \"{path}\" is under src/)\n  \
         mk success: linked\n  \
         save: declined: the policy's decision changed since the call was decided: unattended \
         then, ask now (policy.run[1] (catch-all) matched; policy.run[0]: \"{path}\" is under \
         src/, but resolves to {resolved}, which is not under src/), so jp must ask, and no \
         terminal is available; run jp in a terminal to answer, or add a rule for calls like \
         this one before policy.run[1] in conversation.tools.save (`jp policy check save` tries \
         it)\n  \
         save declined: The call was not run: the user's policy requires confirmation and no one \
         could confirm it (jp is running without a terminal).\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n"
    )
}

/// Runs the response `mk(at, to)`, `save(path)`; `outside` is where the
/// link leads, shown as `shown` in what jp prints.
fn run_case(ws: &Workspace, at: &str, to: &str, path: &str, outside: &Path, shown: &str) {
    let server = link_then_save(at, to, path);
    let run = query(ws, &server, "anthropic/claude-haiku-4-5", &[], "save it");
    // Declined at its start, with no terminal to ask on.
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(run.stdout, "ok\n");
    // The record says so: the mode and rule of the check at its start.
    let decisions = ws.jp(&["conversation", "decisions", "--format", "json"]);
    let rows: serde_json::Value = serde_json::from_str(&decisions.stdout).unwrap();
    let save = rows.as_array().unwrap().last().unwrap();
    assert_eq!(
        (
            &save["tool"],
            &save["mode"],
            &save["at_byte"],
            &save["by"],
            &save["how"]
        ),
        (
            &"save".into(),
            &"ask".into(),
            &serde_json::Value::Null,
            &"no_terminal".into(),
            &"at its start".into()
        ),
        "{rows}"
    );
    let file = Path::new(path).file_name().unwrap().to_str().unwrap();
    let outside_text = outside.to_str().unwrap();
    assert_eq!(
        run.stderr.replace(outside_text, "<outside>"),
        declined_at_start(
            at,
            &to.replace(outside_text, "<outside>"),
            path,
            &format!("{shown}/{file}")
        )
    );
    assert_eq!(
        responses(&stored(ws)),
        [
            ("success".to_owned(), "linked".to_owned()),
            (
                "declined".to_owned(),
                "The call was not run: the user's policy requires confirmation and no one could \
                 confirm it (jp is running without a terminal)."
                    .to_owned()
            )
        ]
    );
    assert_eq!(
        std::fs::read_dir(outside).unwrap().count(),
        0,
        "nothing is written outside the workspace"
    );
    // What `jp policy check` says afterwards is what the run did.
    let args = serde_json::json!({ "path": path, "content": "x" }).to_string();
    let check = ws.jp(&["policy", "check", "save", "--args", &args]);
    assert!(
        check.stdout.starts_with("save policy.run: ask\n"),
        "{check:?}"
    );
}

#[test]
fn a_link_made_by_an_earlier_call_of_the_response_is_checked_at_the_start() {
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    run_case(
        &ws,
        "src/link",
        outside.path().to_str().unwrap(),
        "src/link/passwd",
        outside.path(),
        "<outside>",
    );
}

#[test]
fn a_directory_replaced_by_a_link_is_checked_at_the_start() {
    let ws = workspace();
    std::fs::create_dir_all(ws.project().join("src/gen")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    run_case(
        &ws,
        "src/gen",
        outside.path().to_str().unwrap(),
        "src/gen/out.rs",
        outside.path(),
        "<outside>",
    );
}

#[test]
fn a_relative_link_that_climbs_out_is_checked_at_the_start() {
    let ws = workspace();
    // `outside` is beside `project/`: `src/up -> ../../outside`.
    std::fs::create_dir_all(ws.root().join("outside")).unwrap();
    run_case(
        &ws,
        "src/up",
        "../../outside",
        "src/up/x.rs",
        &ws.root().join("outside"),
        "<tmp>/outside",
    );
}

#[test]
fn a_link_that_stays_inside_still_runs_unattended() {
    // The check at the start does not make a call ask that still passes.
    let ws = workspace();
    std::fs::create_dir_all(ws.project().join("src/real")).unwrap();
    let server = link_then_save("src/alias", "real", "src/alias/a.rs");
    let run = query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "save it");
    assert_eq!(run.code, 0, "{run:?}");
    let got = responses(&stored(&ws));
    assert_eq!(got[0], ("success".to_owned(), "linked".to_owned()));
    assert_eq!(got[1].0, "success");
    assert_eq!(ws.read("project/src/real/a.rs"), "pwned");
}
