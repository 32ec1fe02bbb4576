//! The prompts a scripted session of 20 commands asks (issue 36), through
//! the real `jp` binary: with the policy `jp init` writes by default
//! (commands ask, but for a few read-only git commands) and with the one it
//! writes for `--sandboxed-commands` (every command runs in its sandbox
//! unattended; one that needs the network goes through
//! `run_command_online`, which asks). Without a terminal a call that would
//! ask is declined, so the declined calls are the prompts a user would
//! have answered. The counts are printed and asserted exactly. (Each call is a response of
//! its own: a call declined while it streams stops its response, D26.)

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Workspace;
use common::providers::{Item, anthropic, text_reply};
use common::query::{query_command, responses, stored};
use jp_test_server::{Reply, TestServer};

/// The session: what a model runs while it fixes a bug in a small
/// repository. The last two need the network.
const COMMANDS: [(&str, &[&str]); 20] = [
    ("git", &["status"]),
    ("git", &["log", "--oneline", "-5"]),
    ("ls", &["-la"]),
    ("cat", &["README.md"]),
    ("grep", &["-rn", "TODO", "src"]),
    ("find", &[".", "-name", "*.rs"]),
    ("wc", &["-l", "src/lib.rs"]),
    ("head", &["-3", "src/lib.rs"]),
    ("python3", &["-c", "print(6 * 7)"]),
    ("sh", &["-c", "echo 'fn fixed() {}' >> src/lib.rs"]),
    ("git", &["diff"]),
    ("mkdir", &["-p", "build"]),
    ("sh", &["-c", "cat src/*.rs > build/all.rs"]),
    ("sort", &["build/all.rs"]),
    ("rm", &["-r", "build"]),
    ("git", &["add", "src/lib.rs"]),
    (
        "git",
        &[
            "-c",
            "user.name=jp",
            "-c",
            "user.email=jp@example.com",
            "commit",
            "-qm",
            "Fix",
        ],
    ),
    ("git", &["log", "--oneline", "-1"]),
    ("git", &["fetch", "origin"]),
    ("curl", &["-sS", "https://example.com/"]),
];

/// A repository with a README and a source file, `jp init` with `init`.
fn workspace(init: &[&str]) -> Workspace {
    let ws = Workspace::new();
    let mut args = vec!["init", "--yes"];
    args.extend_from_slice(init);
    let run = ws.jp(&args);
    assert_eq!(run.code, 0, "{run:?}");
    ws.write("project/README.md", "# demo\n");
    ws.write("project/src/lib.rs", "// TODO: fix\nfn broken() {}\n");
    for git in [
        &["init", "-q"][..],
        &["add", "."],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "start",
        ],
    ] {
        let status = std::process::Command::new("git")
            .args(git)
            .current_dir(ws.project())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    }
    ws
}

/// Runs the session with each command through `tool_of(index)`; the
/// statuses of the calls, in order.
fn session(ws: &Workspace, tool_of: impl Fn(usize) -> &'static str) -> Vec<String> {
    let ids: Vec<String> = (0..COMMANDS.len())
        .map(|i| format!("toolu_{i:02}"))
        .collect();
    let arguments: Vec<String> = COMMANDS
        .iter()
        .map(|(program, args)| serde_json::json!({"program": program, "args": args}).to_string())
        .collect();
    // One call per response, as a model that reads each result before
    // its next command: a declined call does not stop the ones after it.
    let mut replies: Vec<Reply> = (0..COMMANDS.len())
        .map(|i| {
            Reply::sse(anthropic(
                &[Item::Tool(&ids[i], tool_of(i), &arguments[i])],
                "tool_use",
                false,
            ))
        })
        .collect();
    replies.push(text_reply("Done."));
    let server = TestServer::start(replies);
    let run = ws.run_of(
        query_command(
            ws,
            &server,
            "anthropic/claude-haiku-4-5",
            &[],
            "fix the bug",
        )
        .output()
        .unwrap(),
    );
    assert_eq!(run.code, 5, "{run:?}");
    responses(&stored(ws))
        .into_iter()
        .map(|(status, _)| status)
        .collect()
}

fn asked(statuses: &[String]) -> usize {
    statuses.iter().filter(|s| *s == "declined").count()
}

#[test]
fn sandboxed_commands_ask_for_the_two_that_need_the_network_the_default_for_16() {
    let default = session(&workspace(&[]), |_| "run_command");
    let sandboxed = session(&workspace(&["--sandboxed-commands"]), |i| {
        if i >= 18 {
            "run_command_online"
        } else {
            "run_command"
        }
    });
    println!("| policy (jp init) | commands | prompts |");
    println!("| --- | --- | --- |");
    println!("| default | 20 | {} |", asked(&default));
    println!("| --sandboxed-commands | 20 | {} |", asked(&sandboxed));
    assert_eq!(asked(&default), 16, "{default:?}");
    assert_eq!(asked(&sandboxed), 2, "{sandboxed:?}");
    // What did not ask ran, each to success: the sandbox did not get in
    // the way of the offline work.
    let ran: Vec<&String> = sandboxed[..18].iter().collect();
    assert!(ran.iter().all(|s| *s == "success"), "{sandboxed:?}");
}
