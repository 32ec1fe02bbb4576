//! The repository's own `.jp/` workspace (issue 14, item 5): it loads
//! cleanly, its policies decide as its comments say, and its cargo tool
//! refuses an argument it cannot trust.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Stdio};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `jp args...` in the repository root, with no user config.
fn jp(args: &[&str]) -> (i32, String) {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_jp"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("xdg"))
        // This repository's own config is what is under test.
        .env("JP_TRUST_WORKSPACE", "1")
        .current_dir(repo())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap();
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn the_workspace_config_is_valid_without_warnings() {
    assert_eq!(
        jp(&["config", "validate"]),
        (0, "config is valid (default, .jp/config.toml)\n".to_owned())
    );
}

#[test]
fn its_policies_run_crate_edits_and_ask_about_the_build_ci_and_jp() {
    let decision = |tool: &str, path: &str| {
        let args = if tool == "fs_modify_file" {
            format!(r#"{{"path": "{path}", "patterns": []}}"#)
        } else {
            format!(r#"{{"path": "{path}", "content": ""}}"#)
        };
        let (code, out) = jp(&["policy", "check", tool, "--args", &args]);
        assert_eq!(code, 0, "{out}");
        out.lines().next().unwrap().to_owned()
    };
    for (tool, path, mode) in [
        ("fs_modify_file", "crates/jp_cli/src/main.rs", "unattended"),
        (
            "fs_create_file",
            "crates/jp_config/tests/new.rs",
            "unattended",
        ),
        ("fs_modify_file", "crates/jp_cli/Cargo.toml", "ask"),
        ("fs_modify_file", "Cargo.toml", "ask"),
        ("fs_modify_file", ".ci/run", "ask"),
        ("fs_create_file", ".jp/config.toml", "ask"),
        (
            "fs_create_file",
            "crates/jp_test_server/tests/data/providers/x.yml",
            "ask",
        ),
        ("fs_create_file", ".git/config", "skip"),
        ("fs_modify_file", "README.md", "ask"),
    ] {
        assert_eq!(
            decision(tool, path),
            format!("{tool} policy.run: {mode}"),
            "{path}"
        );
    }
    // And a file must be read before it is changed.
    let (_, out) = jp(&[
        "policy",
        "check",
        "fs_modify_file",
        "--args",
        r#"{"path": "crates/jp_cli/src/main.rs", "patterns": []}"#,
    ]);
    assert!(
        out.contains(
            "stateful policies: read_before_write denies fs_modify_file in a new conversation"
        ),
        "{out}"
    );
}

#[test]
fn the_cargo_tool_refuses_a_crate_name_it_cannot_trust() {
    let mut child = Command::new("sh")
        .args([".jp/tools/cargo.sh", "test"])
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"tool":{"name":"cargo_test","arguments":{"crate":"jp_x; rm -rf /"}},"context":{"root":".","action":"run"}}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "{\"type\":\"error\",\"message\":\"`crate` must be one of this workspace's crates, such as jp_config\"}\n"
    );
}
