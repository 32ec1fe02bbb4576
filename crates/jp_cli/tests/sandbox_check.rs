//! `jp sandbox check`, the escape suite (issue 36), through the real `jp`
//! binary: the list of attempts, which the sandbox blocks today, that the
//! suite leaves nothing behind, and that it fails (exit 1) when the
//! sandbox is off.
//!
//! Every attempt is blocked (as `root` too, which CI runs as).

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use jp_config::sandbox::DEFAULT_DENY_READ;
use serde_json::Value;

/// The attempts before the reads, with today's result.
const WRITES: &[(&str, &str)] = &[
    ("write-absolute", "blocked"),
    ("write-dotdot", "blocked"),
    ("write-symlink", "blocked"),
    ("write-hardlink", "blocked"),
    ("write-proc-self-root", "blocked"),
    ("write-proc-pid-cwd", "blocked"),
    ("rename-out", "blocked"),
    ("rename-in", "blocked"),
    ("truncate-outside", "blocked"),
    ("write-trust-records", "blocked"),
    // Put back by jp after the run (kept.rs), as around every call.
    ("write-workspace-config", "blocked"),
    ("write-setuid", "blocked"),
    ("unshare-namespace", "blocked"),
    ("unshare-mount-write", "blocked"),
];

/// The attempts after the reads, with today's result.
const REST: &[(&str, &str)] = &[
    ("net-tcp-loopback", "blocked"),
    ("net-udp-loopback", "blocked"),
    ("net-dns-loopback", "blocked"),
    ("net-tcp-socket", "blocked"),
    ("net-udp-socket", "blocked"),
    ("net-unix-socket", "blocked"),
    ("net-bash-dev-tcp", "blocked"),
    ("env-credentials", "blocked"),
    ("signal-jp", "blocked"),
    // jp is not dumpable; a process of `root`'s (CI runs as root) loses
    // the capabilities that would override that.
    ("read-jp-environ", "blocked"),
    ("trace-jp-mem", "blocked"),
    ("outlive-double-fork", "blocked"),
    ("outlive-setsid", "blocked"),
];

/// The write attempts that must escape with the sandbox off.
const ESCAPE_WITHOUT_SANDBOX: &[&str] = &[
    "write-absolute",
    "write-dotdot",
    "write-symlink",
    "write-hardlink",
    "write-proc-self-root",
    "write-proc-pid-cwd",
    "rename-out",
    "rename-in",
    "truncate-outside",
    "write-trust-records",
];

/// `~/.docker/config.json` -> `docker-config-json`, as the suite names it.
fn slug(place: &str) -> String {
    place
        .to_lowercase()
        .trim_start_matches("~/")
        .split(['/', '.'])
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// Every attempt's name and its result today, in order. The home the
/// harness gives jp is the temporary directory, where no secret place
/// exists: each real read is skipped.
fn expected() -> Vec<(String, String)> {
    let own = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(n, r)| ((*n).to_owned(), (*r).to_owned()))
            .collect()
    };
    let home = DEFAULT_DENY_READ.iter().filter(|p| p.starts_with("~/"));
    let mut all = own(WRITES);
    all.extend(
        home.clone()
            .map(|p| (format!("read-canary-{}", slug(p)), "blocked".to_owned())),
    );
    // This machine's: none in the harness's home; the terminals are.
    all.extend(DEFAULT_DENY_READ.iter().map(|p| {
        let result = if p.starts_with("~/") {
            "skipped"
        } else {
            "blocked"
        };
        (format!("read-real-{}", slug(p)), result.to_owned())
    }));
    // `$XDG_CONFIG_HOME/jp` (the harness's `<tmp>/xdg/jp`).
    all.push(("read-real-xdg-jp".to_owned(), "skipped".to_owned()));
    all.extend(own(REST));
    all
}

/// `jp sandbox check ARGS...` in a fresh workspace, with `TMPDIR` in it
/// and the sandbox switches of the test run passed through; the run and
/// the workspace.
fn check(args: &[&str], env: &[(&str, &str)]) -> (common::Run, common::Workspace) {
    let ws = common::Workspace::new();
    std::fs::create_dir(ws.root().join("tmp")).unwrap();
    let tmp = ws.root().join("tmp");
    let mut command = ws.command(&[&["sandbox", "check"], args].concat(), env);
    command.env("TMPDIR", &tmp);
    let run = ws.run_of(command.output().unwrap());
    (run, ws)
}

fn attempts(run: &common::Run) -> Vec<Value> {
    let document: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    document["attempts"].as_array().unwrap().clone()
}

/// Processes whose working directory is beneath `dir`.
fn processes_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            cwd.starts_with(dir)
                .then(|| entry.file_name().to_string_lossy().into_owned())
        })
        .collect()
}

#[test]
fn the_suite_lists_every_attempt_and_the_sandbox_blocks_what_it_enforces() {
    let (run, ws) = check(&["--format", "json"], &[]);
    let attempts = attempts(&run);
    let got: Vec<(String, String)> = attempts
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_owned(),
                a["result"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(got, expected(), "{}", run.stdout);
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    let count = |result: &str| got.iter().filter(|(_, r)| r == result).count();
    assert_eq!(document["blocked"], count("blocked"));
    assert_eq!(document["escaped"], count("escaped"));
    assert_eq!(document["skipped"], count("skipped"));
    assert_eq!(count("escaped"), 0);
    assert_eq!(run.code, 0, "{run:?}");

    let detail = |name: &str| {
        let attempt = attempts.iter().find(|a| a["name"] == name).unwrap();
        attempt["detail"].as_str().unwrap().to_owned()
    };
    assert_eq!(detail("write-absolute"), "Permission denied");
    assert_eq!(detail("write-proc-pid-cwd"), "Permission denied");
    assert_eq!(detail("write-hardlink"), "link: Invalid cross-device link");
    assert_eq!(detail("read-real-ssh"), "absent");
    assert!(
        detail("env-credentials").starts_with("none of its "),
        "{}",
        detail("env-credentials")
    );
    // Nothing of the scratch directory is left, and no process in it.
    let left: Vec<_> = std::fs::read_dir(ws.root().join("tmp")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(processes_in(ws.root()), Vec::<String>::new());
}

#[test]
fn the_text_output_has_a_line_per_attempt_and_a_summary() {
    let (run, _ws) = check(&[], &[]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let expected = expected();
    assert_eq!(lines.len(), expected.len() + 1, "{}", run.stdout);
    for (line, (name, result)) in lines.iter().zip(&expected) {
        let label = if result == "escaped" {
            "ESCAPED"
        } else {
            result.as_str()
        };
        assert!(line.starts_with(&format!("{label}  ")), "{name}: {line}");
    }
    let first = lines[0];
    assert_eq!(
        first.trim_end(),
        format!(
            "blocked  {:<width$}  (Permission denied)",
            "write outside through an absolute path",
            width = first.find("  (").unwrap() - "blocked  ".len()
        )
    );
    let count = |result: &str| expected.iter().filter(|(_, r)| r == result).count();
    assert_eq!(
        lines[expected.len()],
        format!(
            "{} attempts: {} blocked, {} escaped, {} skipped",
            expected.len(),
            count("blocked"),
            count("escaped"),
            count("skipped")
        )
    );
}

#[test]
fn without_the_sandbox_the_writes_escape_and_the_suite_fails() {
    if !cfg!(debug_assertions) {
        return; // The switch exists in a debug build only.
    }
    let off = [("JP_TEST_SANDBOX", "off")];
    let (run, _ws) = check(&["--format", "json"], &off);
    assert_eq!(run.code, 1, "{run:?}");
    let attempts = attempts(&run);
    for name in ESCAPE_WITHOUT_SANDBOX {
        let attempt = attempts.iter().find(|a| a["name"] == *name).unwrap();
        assert_eq!(attempt["result"], "escaped", "{attempt}");
    }
}

#[test]
fn where_no_tool_may_start_the_suite_cannot_run_and_says_why() {
    if !cfg!(debug_assertions) {
        return; // The switch exists in a debug build only.
    }
    let without = [("JP_TEST_SANDBOX", "without")];
    let (run, ws) = check(&[], &without);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error: the escape suite cannot run: the kernel cannot enforce a sandbox here (Landlock is not \
         available (forced by JP_TEST_SANDBOX)); every tool call is asked instead\n"
    );
    let left: Vec<_> = std::fs::read_dir(ws.root().join("tmp")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(processes_in(ws.root()), Vec::<String>::new());
}

#[test]
fn a_tool_that_is_not_configured_is_an_error() {
    let (run, _ws) = check(&["--tool", "nope"], &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: the escape suite cannot run: no tool `nope` is configured (`conversation.tools.nope`)\n"
    );
}
