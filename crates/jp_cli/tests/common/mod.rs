//! A temporary workspace and a way to run the real `jp` binary in it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub mod mcp;
pub mod providers;
pub mod query;
pub mod tmux;

/// A temporary directory holding a workspace (`project/.jp`) and a user
/// config directory (`xdg/jp`), isolated from the real user's config.
pub struct Workspace {
    dir: tempfile::TempDir,
}

/// The time every `jp` a test starts takes as now: 2026-11-30 12:00 UTC
/// (`JP_NOW_MS`).
pub const TEST_NOW_MS: &str = "1796040000000";

/// What one run of `jp` did.
#[derive(Debug, PartialEq, Eq)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Workspace {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project/.jp")).unwrap();
        Self { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// Writes a file relative to the temporary directory.
    pub fn write(&self, rel: &str, text: &str) -> &Self {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(rel)).unwrap()
    }

    /// The command `jp args...` in `project/` with a clean environment plus
    /// `env`, not started.
    pub fn command(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_jp"));
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("xdg"))
            // The workspaces tests write are theirs: trusted, as `jp init`
            // trusts the one it makes. tests/trust.rs removes this.
            .env("JP_TRUST_WORKSPACE", "1")
            // jp's clock is the test's, so what jp prints of a time reads
            // the same whatever day the suite runs (issue 34, item 10).
            .env("JP_NOW_MS", TEST_NOW_MS)
            // `JP_TEST_SANDBOX=off cargo test` runs the suite with the
            // kernel sandbox off (a debug build's switch), to tell which
            // failures it causes; a test's own `env` wins.
            .envs(std::env::var_os("JP_TEST_SANDBOX").map(|v| ("JP_TEST_SANDBOX", v)))
            .envs(env.iter().copied())
            // jp reads a piped stdin into the message: none here, whatever
            // the test runner's stdin is (a test that pipes sets its own).
            .stdin(std::process::Stdio::null())
            .current_dir(self.project());
        command
    }

    /// Runs `jp args...` in `project/` with a clean environment plus `env`.
    pub fn jp_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let output = self.command(args, env).output().unwrap();
        self.run_of(output)
    }

    /// The [`Run`] of a finished process, with the temp dir shown as
    /// `<tmp>`.
    pub fn run_of(&self, output: std::process::Output) -> Run {
        let clean = |bytes: Vec<u8>| {
            String::from_utf8(bytes)
                .unwrap()
                .replace(&self.dir.path().display().to_string(), "<tmp>")
        };
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: clean(output.stdout),
            stderr: clean(output.stderr),
        }
    }

    /// The 1-based line of the workspace config (`project/.jp/config.toml`)
    /// that is exactly `line`.
    pub fn config_line(&self, line: &str) -> usize {
        self.read("project/.jp/config.toml")
            .lines()
            .position(|l| l == line)
            .unwrap_or_else(|| panic!("the config has no line {line:?}"))
            + 1
    }

    pub fn jp(&self, args: &[&str]) -> Run {
        self.jp_with_env(args, &[])
    }
}

/// The definition of `fs_modify_file` used across tests: a `path` and an
/// array of patterns, each with `old`, `new` and `paths`.
pub const FS_MODIFY_FILE: &str = r#"[conversation.tools.fs_modify_file]
command = ["jp", "tool", "fs_modify_file"]
summary = "Modify a file."

[conversation.tools.fs_modify_file.parameters]
path = { type = "path", required = true, summary = "The file to modify." }
patterns = { type = "array", items = { type = "object", properties = { old = { type = "string" }, new = { type = "string" }, paths = { type = "array", items = { type = "path" } } } } }
replace_using_regex = { type = "boolean" }
start_line = { type = "integer" }
"#;

/// Runs `git ARGS` in `dir` for a test's set-up (as a committer named `t`,
/// unsigned); it must succeed. `None` when git is not installed.
#[allow(dead_code)]
pub fn git(dir: &std::path::Path, args: &[&str]) -> Option<()> {
    let status = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .status()
        .ok()?;
    assert!(status.success(), "git {args:?}");
    Some(())
}
