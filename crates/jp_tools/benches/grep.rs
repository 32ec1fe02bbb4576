//! `fs_grep` against `rg` on the same trees and patterns (issue 40: within
//! 2× of `rg`'s time), process to process, as jp runs a tool.
//!
//! ```text
//! cargo bench -p jp_tools --bench grep
//! JP_BENCH_QUICK=1 cargo bench -p jp_tools --bench grep      # 3 runs each
//! JP_BIN=target/release/jp cargo bench -p jp_tools --bench grep  # also `jp tool fs_grep`
//! ```
//!
//! Each search is a new process given a JSON request on stdin, whose
//! outcome is read from stdout, as jp runs `jp tool fs_grep`: this bench's
//! own executable, started again to serve `fs_grep` with the same code
//! (`jp_tool::serve` around `jp_tools::run`) in the bench profile. With
//! `JP_BIN` set to a built `jp`, the real `jp tool fs_grep` is timed too
//! (its process start includes jp's larger binary). The baseline is `rg
//! --no-config --no-require-git -n --no-heading --with-filename --color
//! never [-i] -e PATTERN`, started the same way and its output read whole;
//! both honour the ignore files (also outside a git repository) and skip
//! hidden and binary files. `fs_grep` searches every file but keeps only
//! its bounded result; `rg` writes every match.
//!
//! The trees: this repository (its sources; `target/` is ignored) and a
//! generated one in a temporary directory (10,000 files of about 4 KiB in
//! 200 directories, with an ignored `build/` of 2,000 more). Each figure
//! is the median of N runs after one warm-up run. Before timing, it checks
//! that both find the same number of matching lines. Without `rg`, it
//! says so and exits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The argument that makes this executable serve `fs_grep` once.
const SERVE: &str = "--serve-fs-grep";

fn main() {
    if std::env::args().any(|a| a == SERVE) {
        let code = jp_tool::serve(|request| jp_tools::run("fs_grep", request));
        std::process::exit(if code == std::process::ExitCode::SUCCESS {
            0
        } else {
            1
        });
    }
    if Command::new("rg").arg("--version").output().is_err() {
        println!("grep bench: rg is not installed (apt-get install ripgrep); nothing measured");
        return;
    }
    let runs = if std::env::var_os("JP_BENCH_QUICK").is_some() {
        3
    } else {
        11
    };
    let jp = std::env::var_os("JP_BIN").map(PathBuf::from);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let generated = tempfile::tempdir().unwrap();
    generate(generated.path());

    println!("fs_grep against rg, median of {runs} runs (one warm-up), process to process");
    println!(
        "{:<11} {:<24} {:>8} {:>10} {:>10} {:>7}{}",
        "tree",
        "search",
        "matches",
        "rg",
        "fs_grep",
        "ratio",
        if jp.is_some() {
            "   jp tool fs_grep  ratio"
        } else {
            ""
        }
    );
    let searches: [(&str, &Path, &str, bool); 6] = [
        ("this repo", &repo, "fn main", false),
        ("this repo", &repo, r"fn \w+_(file|path)s?\(", false),
        ("this repo", &repo, "workspace", true),
        ("generated", generated.path(), "needle", false),
        ("generated", generated.path(), r"ne+dle\d{2}", false),
        ("generated", generated.path(), "NEEDLE", true),
    ];
    let mut worst: f64 = 0.0;
    for (tree, root, pattern, insensitive) in searches {
        // Both find the same matching lines (fs_grep shows the first ones
        // and counts the rest).
        let matches = rg(root, pattern, insensitive);
        assert_eq!(
            fs_grep(None, root, pattern, insensitive),
            matches,
            "fs_grep and rg found different matches for {pattern}"
        );
        let rg = median(runs, || {
            rg(root, pattern, insensitive);
        });
        let ours = median(runs, || {
            fs_grep(None, root, pattern, insensitive);
        });
        let ratio = ours.as_secs_f64() / rg.as_secs_f64();
        worst = worst.max(ratio);
        let label = format!("{pattern}{}", if insensitive { " (-i)" } else { "" });
        let mut real = String::new();
        if let Some(jp) = jp.as_deref() {
            let time = median(runs, || {
                fs_grep(Some(jp), root, pattern, insensitive);
            });
            let ratio = time.as_secs_f64() / rg.as_secs_f64();
            worst = worst.max(ratio);
            real = format!("   {:>15} {ratio:>6.2}", ms(time));
        }
        println!(
            "{tree:<11} {label:<24} {matches:>8} {:>10} {:>10} {ratio:>7.2}{real}",
            ms(rg),
            ms(ours)
        );
    }
    println!("worst ratio to rg: {worst:.2} (target: at most 2)");
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// The median time of `runs` runs of `run`, after one more to warm up.
fn median(runs: usize, mut run: impl FnMut()) -> Duration {
    run();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// `rg` over `root`, its output read whole: how many lines matched.
fn rg(root: &Path, pattern: &str, insensitive: bool) -> usize {
    let mut command = Command::new("rg");
    command.args([
        "--no-config",
        // fs_grep honours .gitignore outside a git repository too.
        "--no-require-git",
        "-n",
        "--no-heading",
        "--with-filename",
        "--color",
        "never",
    ]);
    if insensitive {
        command.arg("-i");
    }
    let out = command
        .arg("-e")
        .arg(pattern)
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.code() == Some(0), "rg failed: {out:?}");
    out.stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .count()
}

/// `fs_grep` over `root` in a process of its own: this executable, or
/// `jp tool fs_grep` when `jp` is given. How many lines matched: those
/// shown and those its last note counts.
fn fs_grep(jp: Option<&Path>, root: &Path, pattern: &str, insensitive: bool) -> usize {
    let request = serde_json::json!({
        "tool": {
            "name": "fs_grep",
            "arguments": { "pattern": pattern, "case_insensitive": insensitive },
            "answers": {},
            "options": {}
        },
        "context": { "action": "run", "root": root }
    });
    let mut command = match jp {
        Some(jp) => {
            let mut c = Command::new(jp);
            c.args(["tool", "fs_grep"]);
            c
        }
        None => {
            let mut c = Command::new(std::env::current_exe().unwrap());
            c.arg(SERVE);
            c
        }
    };
    let mut child = command
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("fs_grep wrote no outcome ({e}): {out:?}"));
    assert_eq!(outcome["type"], "success", "{outcome}");
    let content = outcome["content"].as_str().unwrap();
    let shown = content
        .lines()
        .filter(|l| !l.starts_with("... ") && !l.starts_with('(') && *l != "no matches")
        .count();
    // The last note counts every matching line not shown.
    let cut = content
        .lines()
        .find(|l| l.ends_with("; narrow with `glob` or `paths`"))
        .and_then(|l| {
            l.strip_prefix("... ")?
                .split_once(" more match")?
                .0
                .parse::<usize>()
                .ok()
        })
        .unwrap_or(0);
    shown + cut
}

/// A tree of 10,000 files of about 4 KiB in 200 directories, with
/// `needle` and `NEEDLE01`..`needle99` here and there, and an ignored
/// `build/` of 2,000 more.
fn generate(root: &Path) {
    const WORDS: [&str; 16] = [
        "alpha", "beta", "gamma", "delta", "omega", "fn", "let", "match", "struct", "impl",
        "return", "value", "index", "buffer", "stream", "token",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    std::fs::write(root.join(".gitignore"), "/build/\n").unwrap();
    let mut write_tree = |dir: &str, files: usize| {
        for i in 0..files {
            let sub = root.join(format!("{dir}/d{:03}", i % 200));
            std::fs::create_dir_all(&sub).unwrap();
            let mut text = String::with_capacity(4200);
            let mut line = 0;
            while text.len() < 4096 {
                line += 1;
                for _ in 0..8 {
                    let n = next();
                    text.push_str(WORDS[usize::try_from(n % 16).unwrap()]);
                    text.push(' ');
                }
                match next() % 500 {
                    0 => text.push_str("needle"),
                    1 => text.push_str(&format!("NEEDLE{:02}", next() % 100)),
                    2 => text.push_str(&format!("neeedle{:02}", line % 100)),
                    _ => {}
                }
                text.push('\n');
            }
            std::fs::write(sub.join(format!("f{i:05}.txt")), text).unwrap();
        }
    };
    write_tree("src", 10_000);
    write_tree("build", 2_000);
}
