//! Bounded work on hostile input through the real `jp` binary (issue 34,
//! item 8): what a repository commits (`extends` globs over link loops,
//! `extends` into `/proc`), what an MCP server sends, what a schema lists
//! and what a provider reports cannot hang jp or grow it without bound.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use common::{Run, Workspace};

/// Runs `jp args...` in the workspace, killing it after `limit`: a run
/// that does not end in time fails the test instead of hanging it.
fn jp_within(ws: &Workspace, args: &[&str], limit: Duration) -> Run {
    let mut child = ws
        .command(args, &[])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("jp {args:?} did not finish in {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    ws.run_of(child.wait_with_output().unwrap())
}

/// A committed tree of links back to their own directory: `x/a -> .` and
/// `x/b -> .`, which a walk that follows links reaches 2^depth ways.
fn link_loops(ws: &Workspace) {
    let x = ws.project().join(".jp/x");
    std::fs::create_dir_all(&x).unwrap();
    symlink(".", x.join("a")).unwrap();
    symlink(".", x.join("b")).unwrap();
}

#[test]
fn an_extends_glob_over_link_loops_ends_and_still_finds_its_files() {
    let ws = Workspace::new();
    link_loops(&ws);
    ws.write("project/.jp/x/style.toml", "[style]\ncolor = \"never\"\n");
    ws.write("project/.jp/config.toml", "extends = [\"x/**/*.toml\"]\n");
    let run = jp_within(
        &ws,
        &["config", "get", "style.color"],
        Duration::from_secs(20),
    );
    assert_eq!(
        run,
        Run {
            code: 0,
            stdout: "never\n".into(),
            stderr: String::new(),
        }
    );

    // Shell completion loads the config too: it answers at once.
    let run = jp_within(&ws, &["config", "validate"], Duration::from_secs(20));
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn an_extends_glob_that_reaches_too_many_entries_is_an_error_naming_the_bound() {
    let ws = Workspace::new();
    let many = ws.project().join(".jp/many");
    for i in 0..101 {
        let dir = many.join(format!("d{i:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for j in 0..100 {
            std::fs::write(dir.join(format!("f{j:03}.txt")), "").unwrap();
        }
    }
    ws.write(
        "project/.jp/config.toml",
        "extends = [\"many/**/*.toml\"]\n",
    );
    let run = jp_within(
        &ws,
        &["config", "get", "style.color"],
        Duration::from_secs(20),
    );
    assert_eq!(
        run,
        Run {
            code: 1,
            stdout: String::new(),
            stderr: "error: .jp/config.toml:1: extends[0]: the glob `many/**/*.toml` reaches more \
                     than 10000 entries under <tmp>/project/.jp/many (symbolic links to \
                     directories are not followed); name the files or a narrower pattern\n"
                .into(),
        }
    );
}

#[test]
fn extends_into_proc_sys_or_dev_is_refused_however_it_is_named() {
    let ws = Workspace::new();
    // A link the repository commits, a glob reaching such a link, and the
    // path itself.
    symlink("/proc/self/status", ws.project().join(".jp/status.toml")).unwrap();
    std::fs::create_dir_all(ws.project().join(".jp/g")).unwrap();
    symlink("/proc/self/environ", ws.project().join(".jp/g/env.toml")).unwrap();
    for (extends, refused) in [
        ("/proc/self/status", "/proc/self/status is under /proc"),
        (
            "/sys/kernel/uevent_seqnum",
            "/sys/kernel/uevent_seqnum is under /sys",
        ),
        (
            "status.toml",
            "<tmp>/project/.jp/status.toml is under /proc",
        ),
        ("g/*.toml", "<tmp>/project/.jp/g/env.toml is under /proc"),
    ] {
        ws.write(
            "project/.jp/config.toml",
            &format!("extends = [\"{extends}\"]\n"),
        );
        let run = jp_within(
            &ws,
            &["config", "get", "style.color"],
            Duration::from_secs(20),
        );
        assert_eq!(
            run,
            Run {
                code: 1,
                stdout: String::new(),
                stderr: format!(
                    "error: .jp/config.toml:1: extends[0]: not read: {refused}; config files \
                     are never read from /proc, /sys, /dev\n"
                ),
            },
            "extends = [{extends:?}]"
        );
    }
}

/// Runs `jp args...` in the workspace with `env`, killing it after
/// `limit`, and reads its peak resident memory (`VmHWM`, KiB) while it
/// runs.
fn jp_peak(ws: &Workspace, args: &[&str], env: &[(&str, &str)], limit: Duration) -> (Run, u64) {
    let mut child = ws
        .command(args, env)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        let hwm = std::fs::read_to_string(&status).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        });
        peak = peak.max(hwm.unwrap_or(0));
        if Instant::now() > deadline {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("jp {args:?} did not finish in {limit:?} (peak {peak} KiB)");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    (ws.run_of(child.wait_with_output().unwrap()), peak)
}

/// The most memory a `jp mcp ls` against a hostile server may take, KiB:
/// about 40 MiB is jp itself, and a `tools/list` of 16 MiB (the bound) with
/// a page of 8 MiB being read takes some 85 MiB at its peak; without the
/// bounds the same servers took 230 MiB in 20 s and 2.5 GiB in 3 s.
const PEAK_LIMIT_KIB: u64 = 150 * 1024;

/// `jp mcp ls` against a server whose `tools/list` pages without end,
/// each page `page_bytes` long: it ends with `why`, in bounded memory.
fn pages_forever(page_bytes: &str, why: &str) {
    let ws = common::mcp::workspace(
        &format!("JP_MCP_TEST_TOOLS_LIST = \"forever\", JP_MCP_TEST_PAGE_BYTES = \"{page_bytes}\""),
        "",
    );
    let (run, peak) = jp_peak(&ws, &["mcp", "ls"], &[], Duration::from_secs(60));
    assert!(peak < PEAK_LIMIT_KIB, "peak {peak} KiB: {run:?}");
    assert_eq!(
        run,
        Run {
            code: 1,
            stdout: format!("test: not started: MCP server `test` failed to start: {why}\n"),
            stderr: String::new(),
        }
    );
}

#[test]
fn a_server_that_pages_tools_list_forever_fails_its_start_at_the_page_bound() {
    pages_forever(
        "10",
        "its tools/list goes on past 100 pages, the most jp reads from a server",
    );
}

#[test]
fn a_server_with_huge_tools_list_pages_fails_its_start_in_bounded_memory() {
    pages_forever(
        "8388608",
        "its tools/list is over 16 MiB, the most jp reads from a server",
    );
}

#[test]
fn a_server_writing_stderr_without_newlines_is_kept_in_bounded_memory() {
    let ws = common::mcp::workspace(
        "JP_MCP_TEST_START = \"hang\", JP_MCP_TEST_STDERR = \"flood\"",
        "",
    );
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &config.replace(
            "[providers.mcp.test]\n",
            "[providers.mcp.test]\nstartup_timeout_secs = 3\n",
        ),
    );
    let (run, peak) = jp_peak(&ws, &["mcp", "ls"], &[], Duration::from_secs(60));
    assert!(
        peak < PEAK_LIMIT_KIB,
        "peak {peak} KiB: {}",
        &run.stdout[..run.stdout.len().min(300)]
    );
    assert_eq!((run.code, run.stderr.as_str()), (1, ""));
    assert_eq!(
        run.stdout,
        format!(
            "test: not started: MCP server `test` did not finish starting within 3 s \
             (providers.mcp.test.startup_timeout_secs); its stderr ends:\n  {}… (a line over \
             1024 bytes, cut)\n",
            "e".repeat(1024)
        )
    );
}

#[test]
fn a_value_outside_a_huge_enum_is_refused_with_the_list_cut() {
    let ws = Workspace::new();
    let values = (0..200_000)
        .map(|i| format!("\"v{i}\""))
        .collect::<Vec<_>>()
        .join(",");
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "[conversation.tools.pick]\ncommand = [\"true\"]\n\
             parameters.choice = {{ type = \"string\", required = true, enum = [{values}] }}\n"
        ),
    );
    let run = jp_within(
        &ws,
        &["policy", "check", "pick", "--args", r#"{"choice": "nope"}"#],
        Duration::from_secs(60),
    );
    assert_eq!(
        run,
        Run {
            code: 2,
            stdout: String::new(),
            stderr: "error: --args: /choice: expected one of \"v0\", \"v1\", \"v2\", \"v3\", \
                     \"v4\", \"v5\", \"v6\", \"v7\", \"v8\", \"v9\" and 199,990 more, found \
                     \"nope\"\n\
                     error: the arguments do not fit `pick`'s parameters\n"
                .into(),
        }
    );
}

/// An Anthropic stream whose `message_start` reports `input` uncached
/// input tokens and 10 read from the cache.
fn reporting(items: &[common::providers::Item<'_>], stop: &str, input: u64) -> String {
    common::providers::anthropic(items, stop, false).replacen(
        r#""usage":{"input_tokens":10,"output_tokens":1}"#,
        &format!(
            r#""usage":{{"input_tokens":{input},"cache_read_input_tokens":10,"output_tokens":1}}"#
        ),
        1,
    )
}

#[test]
fn usage_near_u64_max_is_unknown_and_totals_never_wrap() {
    use common::providers::Item;
    use jp_test_server::{Reply, TestServer};

    let ws = common::query::initialized();
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{}\n{}",
            ws.read("project/.jp/config.toml"),
            common::query::echo_tool("ok", "ok")
        ),
    );
    for (id, input) in [
        ("toolu_1", u64::MAX - 5),
        ("toolu_2", 10_000_000_000_000_000_000),
    ] {
        let first = reporting(&[Item::Tool(id, "ok", "{}")], "tool_use", input);
        assert!(first.contains(&input.to_string()), "{first}");
        let server = TestServer::start(vec![
            Reply::sse(first),
            Reply::sse(reporting(&[Item::Text("Done.")], "end_turn", input)),
        ]);
        let run = common::query::query(&ws, &server, "anthropic/claude-haiku-4-5", &[], "go");
        assert_eq!(
            run.stderr,
            "── jp (anthropic/claude-haiku-4-5) ──\n\
             Calling tool ok()\n  \
             unattended (policy.run is \"unattended\")\n  \
             ok success: ok\n\
             ── jp (anthropic/claude-haiku-4-5) ──\n\
             tokens: 2 responses · 0 in (20 cached) · 84 out · $0.0004 · context 1% of 200k\n",
            "input {input}"
        );
        assert_eq!(run.code, 0, "{run:?}");
    }
    // What was recorded: the counts as unknown, and totals that add up.
    let shown = ws.jp(&["conversation", "show"]);
    assert_eq!(
        shown.stdout.lines().last(),
        Some("total: 2 turns · 4 responses · 0 in (40 cached) · 168 out · $0.0008")
    );
    let stored = common::query::stored(&ws);
    let usage: Vec<&serde_json::Value> = stored["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["type"] == "usage")
        .collect();
    assert_eq!(usage.len(), 4);
    assert!(
        usage.iter().all(|u| u.get("input_tokens").is_none()),
        "{usage:?}"
    );
}

/// `jp args...` as a user runs it: no trust from the environment.
fn untrusted(ws: &Workspace, args: &[&str]) -> Run {
    let mut command = ws.command(args, &[]);
    command.env_remove("JP_TRUST_WORKSPACE");
    ws.run_of(command.output().unwrap())
}

#[test]
fn extends_outside_the_workspace_is_read_only_once_the_workspace_is_trusted() {
    let ws = Workspace::new();
    // Outside the workspace: a file beside it, and one reached through a
    // committed link; in the user's config directory: fine untrusted.
    ws.write("outside.toml", "[style]\ncolor = \"never\"\n");
    ws.write("xdg/jp/shared.toml", "[style]\nshow_reasoning = false\n");
    symlink(
        ws.root().join("outside.toml"),
        ws.project().join(".jp/linked.toml"),
    )
    .unwrap();
    for extends in ["../../outside.toml", "linked.toml"] {
        ws.write(
            "project/.jp/config.toml",
            &format!("extends = [\"../../xdg/jp/shared.toml\", \"{extends}\"]\n"),
        );
        let _ = untrusted(&ws, &["trust", "--revoke"]);
        let run = untrusted(&ws, &["config", "get", "style.color"]);
        assert_eq!(
            run,
            Run {
                code: 0,
                stdout: "auto\n".into(),
                stderr: "note: this workspace is not trusted, so jp leaves out what its config \
                         would run or decide:\n\
                         note:   .jp/config.toml:1: extends <tmp>/outside.toml (outside the \
                         workspace)\n\
                         note: review them, then run `jp trust` to apply them \
                         (JP_TRUST_WORKSPACE=1 trusts it for one run)\n"
                    .into(),
            },
            "{extends}"
        );
        assert_eq!(
            untrusted(&ws, &["config", "get", "style.show_reasoning"]).stdout,
            "false\n"
        );
        // Trusted for one run, then recorded: read, and the record holds.
        let run = ws.jp(&["config", "get", "style.color"]);
        assert_eq!((run.code, run.stdout.as_str()), (0, "never\n"), "{run:?}");
        let run = untrusted(&ws, &["trust"]);
        assert_eq!(run.code, 0, "{run:?}");
        for _ in 0..2 {
            let run = untrusted(&ws, &["config", "get", "style.color"]);
            assert_eq!(
                run,
                Run {
                    code: 0,
                    stdout: "never\n".into(),
                    stderr: String::new(),
                },
                "{extends}"
            );
        }
        let run = untrusted(&ws, &["trust", "--status"]);
        assert_eq!(
            run.stdout,
            "this workspace is trusted, as its config is now\n"
        );
    }
}
