//! `jp debug stream-args` through the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::process::{Command, Stdio};

/// Runs `jp` with `args`, feeding `stdin`; returns (exit code, stdout, stderr).
fn jp(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_jp"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn streams_fragments_then_the_arguments() {
    // Chunks: `{"path":"a` `.rs","cont` `ent":"fn x` `() {}\n"}`.
    let (code, stdout, stderr) = jp(
        &[
            "debug",
            "stream-args",
            "--chunk-size",
            "10",
            "--tool",
            "fs_create_file",
        ],
        r#"{"path":"a.rs","content":"fn x() {}\n"}"#,
    );
    assert_eq!(stderr, "");
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        concat!(
            "fs_create_file /path += \"a\"\n",
            "fs_create_file /path += \".rs\"\n",
            "fs_create_file /path: done\n",
            "fs_create_file /content += \"fn x\"\n",
            "fs_create_file /content += \"() {}\\n\"\n",
            "fs_create_file /content: done\n",
            "fs_create_file (root): done\n",
            "fs_create_file arguments: {\"path\":\"a.rs\",\"content\":\"fn x() {}\\n\"}\n",
        )
    );
}

#[test]
fn truncated_arguments_exit_1_and_say_where() {
    let (code, stdout, stderr) = jp(
        &["debug", "stream-args", "--chunk-size", "100"],
        r#"{"patterns":[{"old":"fn ma"#,
    );
    assert_eq!(code, 1);
    assert_eq!(stdout, "tool /patterns/0/old += \"fn ma\"\n");
    assert_eq!(
        stderr,
        "tool: unusable arguments: arguments are truncated: input ended inside a string at /patterns/0/old\n"
    );
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let (code, stdout, stderr) = jp(&["debug", "stream-args", "/nonexistent/args.json"], "");
    assert_eq!(code, 1);
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "error: cannot read /nonexistent/args.json: No such file or directory (os error 2)\n"
    );
}
