//! Runs every ```console example in `docs/` and README.md with the real `jp`
//! binary and compares its standard output with what the page shows, so the
//! documentation cannot drift from what jp does.
//!
//! An example is a `$ ` command line (run by bash, with the `jp` under test
//! first on `PATH`) followed by the exact standard output.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

struct Example {
    file: PathBuf,
    line: usize,
    command: String,
    stdout: String,
}

fn examples_in(file: &Path) -> Vec<Example> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut examples = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((_, line)) = lines.next() {
        if line.trim() != "```console" {
            continue;
        }
        let mut current: Option<Example> = None;
        for (number, line) in lines.by_ref() {
            if line.trim() == "```" {
                break;
            }
            if let Some(command) = line.strip_prefix("$ ") {
                examples.extend(current.take());
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
        examples.extend(current);
    }
    examples
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
    let examples: Vec<Example> = files.iter().flat_map(|f| examples_in(f)).collect();
    assert!(examples.len() >= 3, "the docs should hold console examples");
    for example in examples {
        // Commands that install or build are shown for people, not run here.
        if example.command.starts_with("cargo ") {
            continue;
        }
        let output = Command::new("bash")
            .args(["-c", &example.command])
            .env("PATH", &path)
            .current_dir(&root)
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
