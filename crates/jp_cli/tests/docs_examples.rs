//! Runs every ```console example in `docs/` and README.md with the real `jp`
//! binary and compares its standard output with what the page shows, so the
//! documentation cannot drift from what jp does.
//!
//! An example is a `$ ` command line (run by bash, with the `jp` under test
//! first on `PATH`) followed by the exact standard output.
//!
//! Each page runs in its own empty temporary directory, with `HOME` in
//! another (a workspace that holds the home is one the sandbox cannot
//! protect: every call there asks) and `XDG_CONFIG_HOME` in a third, so
//! no user config leaks in, and
//! with `JP_TRUST_WORKSPACE=1`: the config a page writes is trusted, as
//! the pages say it must be (docs/config.md, "Workspace trust"). A fenced block
//! opened as ```` ```toml file=.jp/config.toml ```` writes that file (relative
//! to the page's directory) before the examples that follow it run, so a page
//! shows the config it talks about and the test uses exactly that config.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

struct Example {
    file: PathBuf,
    line: usize,
    command: String,
    stdout: String,
}

/// What a page does, in order: write a file, or run an example.
enum Step {
    Write { path: String, text: String },
    Run(Example),
}

fn steps_in(file: &Path) -> Vec<Step> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut steps = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((_, line)) = lines.next() {
        if let Some(path) = line.trim().strip_prefix("```").and_then(|info| {
            info.split_whitespace()
                .find_map(|w| w.strip_prefix("file="))
        }) {
            let mut body = String::new();
            for (_, line) in lines.by_ref() {
                if line.trim() == "```" {
                    break;
                }
                body.push_str(line);
                body.push('\n');
            }
            steps.push(Step::Write {
                path: path.to_owned(),
                text: body,
            });
            continue;
        }
        if line.trim() != "```console" {
            continue;
        }
        let mut current: Option<Example> = None;
        for (number, line) in lines.by_ref() {
            if line.trim() == "```" {
                break;
            }
            if let Some(command) = line.strip_prefix("$ ") {
                steps.extend(current.take().map(Step::Run));
                current = Some(Example {
                    file: file.to_owned(),
                    line: number + 1,
                    command: command.to_owned(),
                    stdout: String::new(),
                });
            } else if let Some(example) = current.as_mut() {
                example.stdout.push_str(line);
                example.stdout.push('\n');
            }
        }
        steps.extend(current.map(Step::Run));
    }
    steps
}

#[test]
fn documented_console_examples_print_what_the_docs_say() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files.sort();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_jp")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let pages: Vec<Vec<Step>> = files.iter().map(|f| steps_in(f)).collect();
    let count = pages
        .iter()
        .flatten()
        .filter(|s| matches!(s, Step::Run(_)))
        .count();
    assert!(count >= 3, "the docs should hold console examples");
    for steps in pages {
        let dir = tempfile::tempdir().unwrap();
        // The user's config (and the trusted workspaces it records) lives
        // outside the workspace, as it does for a real user.
        let config_home = tempfile::tempdir().unwrap();
        let home_dir = tempfile::tempdir().unwrap();
        let home = home_dir.path();
        for step in steps {
            let example = match step {
                Step::Write { path, text } => {
                    let target = dir.path().join(&path);
                    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                    std::fs::write(&target, text).unwrap();
                    continue;
                }
                Step::Run(example) => example,
            };
            // Commands that install or build are shown for people, not run here.
            if example.command.starts_with("cargo ") {
                continue;
            }
            let output = Command::new("bash")
                .args(["-c", &example.command])
                .env_clear()
                .env("PATH", &path)
                .env("HOME", home)
                .env("XDG_CONFIG_HOME", config_home.path())
                // The pages write their config by hand and say once that
                // it needs `jp trust`; the examples show what follows.
                .env("JP_TRUST_WORKSPACE", "1")
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8(output.stdout).unwrap(),
                example.stdout,
                "{}:{}: `{}` (stderr: {})",
                example.file.display(),
                example.line,
                example.command,
                String::from_utf8_lossy(&output.stderr),
            );
        }
    }
}
