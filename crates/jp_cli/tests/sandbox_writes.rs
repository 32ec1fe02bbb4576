//! Where a process jp starts may write (issue 36 prototype: Landlock,
//! Linux), through the real `jp` binary: inside the workspace, yes;
//! outside it (an absolute path, `..`, a symlink), never, and neither may
//! the program `run_command` starts.
//!
//! `JP_TEST_SANDBOX_WRITES=off cargo test -p jp_cli --test sandbox_writes`
//! runs them with the bound off (a debug build's switch): they must fail.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::providers::{Item, anthropic, text_reply};
use common::query::{initialized, query_command, responses, stored};
use jp_test_server::{Reply, TestServer};

const MODEL: &str = "anthropic/claude-haiku-4-5";

/// A local tool that writes `x` to the path it is given (its first
/// argument) and answers `wrote`, `EACCES`, or the shell's message.
fn write_tool(name: &str, target: &str) -> String {
    let script = r#"cat >/dev/null
if out=$( (echo x > "$1") 2>&1 ); then r=wrote
else case $out in *"Permission denied"*) r=EACCES;; *) r=other;; esac; fi
printf '{"type":"success","content":"%s"}' "$r""#;
    format!(
        "[conversation.tools.{name}]\ncommand = [\"sh\", \"-c\", {}, \"sh\", {}]\npolicy.run = \"unattended\"\n",
        serde_json::Value::String(script.to_owned()),
        serde_json::Value::String(target.to_owned()),
    )
}

fn run(ws: &common::Workspace, server: &TestServer, extra: &[&str], env: &[(&str, &str)]) {
    let mut command = query_command(ws, server, MODEL, extra, "go");
    command.envs(env.iter().copied());
    let run = ws.run_of(command.output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
}

/// One call of each tool, then `Done.`.
fn calls(names: &[&str]) -> TestServer {
    let items: Vec<Item<'_>> = names
        .iter()
        .enumerate()
        .map(|(i, name)| Item::Tool(["toolu_1", "toolu_2", "toolu_3", "toolu_4"][i], name, "{}"))
        .collect();
    TestServer::start(vec![
        Reply::sse(anthropic(&items, "tool_use", false)),
        text_reply("Done."),
    ])
}

#[test]
fn a_local_tool_writes_inside_the_workspace_and_nowhere_else() {
    let ws = initialized();
    std::fs::create_dir(ws.root().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(ws.root().join("elsewhere"), ws.project().join("link")).unwrap();
    let absolute = ws.root().join("elsewhere/absolute");
    ws.write(
        "project/.jp/tools.toml",
        &[
            write_tool("inside", "sub/../inside.txt"),
            write_tool("absolute", absolute.to_str().unwrap()),
            write_tool("dotdot", "../elsewhere/dotdot"),
            write_tool("symlink", "link/through-link"),
        ]
        .concat(),
    );
    let server = calls(&["inside", "absolute", "dotdot", "symlink"]);
    std::fs::create_dir(ws.project().join("sub")).unwrap();
    run(&ws, &server, &["--cfg", "@.jp/tools.toml"], &[]);
    let answers: Vec<String> = responses(&stored(&ws)).into_iter().map(|r| r.1).collect();
    assert_eq!(answers, ["wrote", "EACCES", "EACCES", "EACCES"]);
    assert_eq!(ws.read("project/inside.txt"), "x\n");
    let left: Vec<_> = std::fs::read_dir(ws.root().join("elsewhere"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_program_run_command_starts_cannot_write_outside() {
    let ws = initialized();
    let outside = std::env::temp_dir().join(format!("jp-sandbox-writes-{}", std::process::id()));
    let _ = std::fs::remove_file(&outside);
    let script = format!("echo x > {}", outside.display());
    let arguments = serde_json::json!({"program": "sh", "args": ["-c", script]});
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[Item::Tool("toolu_1", "run_command", &arguments.to_string())],
            "tool_use",
            false,
        )),
        text_reply("Done."),
    ]);
    run(
        &ws,
        &server,
        &[
            "--cfg",
            "conversation.tools.run_command.policy.run=unattended",
        ],
        &[],
    );
    let written = outside.exists();
    let _ = std::fs::remove_file(&outside);
    let (_, content) = responses(&stored(&ws)).remove(0);
    assert!(content.contains("Permission denied"), "{content}");
    assert!(!written);
}

#[test]
fn a_tool_writes_its_private_tmpdir_which_is_gone_after_the_run() {
    let ws = initialized();
    let script = r#"cat >/dev/null; echo x > "$TMPDIR/t" && printf '{"type":"success","content":"%s"}' "$TMPDIR""#;
    ws.write(
        "project/.jp/tools.toml",
        &format!(
            "[conversation.tools.tmp]\ncommand = [\"sh\", \"-c\", {}]\npolicy.run = \"unattended\"\n",
            serde_json::Value::String(script.to_owned())
        ),
    );
    run(&ws, &calls(&["tmp"]), &["--cfg", "@.jp/tools.toml"], &[]);
    let (status, tmpdir) = responses(&stored(&ws)).remove(0);
    assert_eq!(status, "success", "{tmpdir}");
    assert!(tmpdir.contains("jp-tool-"), "{tmpdir}");
    assert!(!std::path::Path::new(&tmpdir).exists());
}

#[test]
fn sandbox_write_adds_a_path() {
    let ws = initialized();
    std::fs::create_dir(ws.root().join("cache")).unwrap();
    ws.write(
        "project/.jp/tools.toml",
        &format!(
            "{}[conversation.sandbox]\nwrite = [\"~/cache\"]\n",
            write_tool("cache", "../cache/file")
        ),
    );
    run(&ws, &calls(&["cache"]), &["--cfg", "@.jp/tools.toml"], &[]);
    assert_eq!(responses(&stored(&ws))[0].1, "wrote");
}

/// Fail closed: where the kernel cannot bound its writes, the tool does
/// not run (a debug build acts as on a kernel without Landlock).
#[test]
fn without_landlock_the_tool_does_not_run() {
    if std::env::var_os("JP_TEST_SANDBOX_WRITES").is_some() {
        return;
    }
    let ws = initialized();
    ws.write(
        "project/.jp/tools.toml",
        &write_tool("inside", "inside.txt"),
    );
    run(
        &ws,
        &calls(&["inside"]),
        &["--cfg", "@.jp/tools.toml"],
        &[("JP_TEST_SANDBOX_WRITES", "without")],
    );
    let (status, content) = responses(&stored(&ws)).remove(0);
    assert_eq!(status, "error", "{content}");
    assert!(
        content.contains("the kernel cannot confine where it writes"),
        "{content}"
    );
    assert!(!ws.project().join("inside.txt").exists());
}
