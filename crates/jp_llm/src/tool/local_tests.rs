//! Real processes (small `sh` scripts in a temporary directory) through
//! [`run_local`].

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tool::sandbox::Sandbox;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jp_tool::{AnswerKind, Context, Outcome, Question, Request, ToolInfo};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::*;

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `body` to a script and returns the argv that runs it.
    fn script(&self, body: &str) -> Vec<String> {
        let path = self.root().join("tool.sh");
        std::fs::write(&path, body).unwrap();
        vec!["sh".into(), path.display().to_string()]
    }

    fn request(&self, arguments: Value) -> Request {
        request_in(self.root().to_path_buf(), arguments)
    }

    async fn run(&self, body: &str) -> ToolRun {
        self.run_with(body, json!({}), &ToolLimits::default()).await
    }

    async fn run_with(&self, body: &str, arguments: Value, limits: &ToolLimits) -> ToolRun {
        let argv = self.script(body);
        run_local(
            &argv,
            &self.request(arguments),
            limits,
            &CancellationToken::new(),
        )
        .await
    }

    /// The pid a script wrote to `pid` (waits up to 5 s for it).
    async fn pid_file(&self) -> u32 {
        let path = self.root().join("pid");
        let started = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(&path)
                && let Ok(pid) = text.trim().parse()
            {
                return pid;
            }
            assert!(started.elapsed() < Duration::from_secs(5), "no pid file");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn request_in(root: PathBuf, arguments: Value) -> Request {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    Request {
        tool: ToolInfo {
            name: "t".into(),
            arguments,
            answers: Map::new(),
            options: Map::new(),
        },
        context: Context::run(root),
    }
}

fn error(message: &str) -> Outcome {
    Outcome::error(message)
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet), waiting
/// up to 5 s for it to go.
#[cfg(target_os = "linux")]
async fn gone(pid: u32) -> bool {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            // The state follows the parenthesized command name.
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|s| s.trim_start().starts_with('Z')) =>
            {
                return true;
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    false
}

const SUCCESS: &str = r#"{"type":"success","content":"hi"}"#;

#[tokio::test]
async fn success_outcome_passes_through() {
    let f = Fixture::new();
    let run = f
        .run(&format!("cat >/dev/null\nprintf '%s\\n' '{SUCCESS}'\n"))
        .await;
    assert_eq!(run.outcome, Outcome::success("hi"));
    assert_eq!(run.stderr, "");
}

#[tokio::test]
async fn error_outcome_passes_through_with_its_transient_flag() {
    let f = Fixture::new();
    let run = f
        .run(r#"printf '%s' '{"type":"error","message":"the index is locked","transient":true}'"#)
        .await;
    assert_eq!(
        run.outcome,
        Outcome::Error {
            message: "the index is locked".into(),
            transient: true
        }
    );
}

#[tokio::test]
async fn needs_input_passes_through() {
    let f = Fixture::new();
    let run = f
        .run(r#"printf '%s' '{"type":"needs_input","question":{"id":"overwrite","text":"Overwrite a.rs?","answer":{"type":"select","options":["yes","no"]},"default":"no"}}'"#)
        .await;
    assert_eq!(
        run.outcome,
        Outcome::NeedsInput {
            question: Question {
                id: "overwrite".into(),
                text: "Overwrite a.rs?".into(),
                answer: AnswerKind::Select {
                    options: vec!["yes".into(), "no".into()]
                },
                default: Some(json!("no")),
            }
        }
    );
}

#[tokio::test]
async fn garbage_on_stdout_is_an_error_with_an_excerpt() {
    let f = Fixture::new();
    let run = f.run("echo 'not json'\n").await;
    assert_eq!(
        run.outcome,
        error(
            "tool `t` wrote something other than an outcome to stdout: expected ident at line 1 column 2; it starts with `not json\\n`"
        )
    );

    let run = f.run(r#"printf '%s' '{"type":"bogus"}'"#).await;
    assert_eq!(
        run.outcome,
        error(
            "tool `t` wrote something other than an outcome to stdout: unknown variant `bogus`, expected one of `success`, `error`, `needs_input` at line 1 column 15; it starts with `{\"type\":\"bogus\"}`"
        )
    );
}

#[tokio::test]
async fn two_outcomes_are_garbage() {
    let f = Fixture::new();
    let run = f
        .run(&format!("echo '{SUCCESS}'\necho '{SUCCESS}'\n"))
        .await;
    assert_eq!(
        run.outcome,
        error(
            "tool `t` wrote something other than an outcome to stdout: trailing characters at line 2 column 1; it starts with `{\"type\":\"success\",\"content\":\"hi\"}\\n{\"type\":\"success\",\"content`…"
        )
    );
}

#[tokio::test]
async fn long_garbage_is_cut_in_the_message() {
    let f = Fixture::new();
    let run = f.run("printf 'x%.0s' $(seq 1 500)\n").await;
    let expected = format!(
        "tool `t` wrote something other than an outcome to stdout: expected value at line 1 column 1; it starts with `{}`…",
        "x".repeat(60)
    );
    assert_eq!(run.outcome, error(&expected));
}

#[tokio::test]
async fn empty_stdout_is_an_error() {
    let f = Fixture::new();
    let run = f.run("cat >/dev/null\n").await;
    assert_eq!(
        run.outcome,
        error("tool `t` exited without writing an outcome to stdout")
    );

    let run = f.run("echo '  '\necho 'no config found' >&2\n").await;
    assert_eq!(
        run.outcome,
        error(
            "tool `t` exited without writing an outcome to stdout; its stderr ends with:\nno config found"
        )
    );
}

#[tokio::test]
async fn a_crash_names_the_signal_and_quotes_stderr() {
    let f = Fixture::new();
    let run = f.run("echo 'about to crash' >&2\nkill -9 $$\n").await;
    assert_eq!(
        run.outcome,
        error("tool `t` was killed by signal 9 (SIGKILL); its stderr ends with:\nabout to crash")
    );
    assert_eq!(run.stderr, "about to crash\n");
}

#[tokio::test]
async fn a_non_zero_exit_names_the_code_and_quotes_stderr() {
    let f = Fixture::new();
    let run = f.run("echo line1 >&2\necho line2 >&2\nexit 3\n").await;
    assert_eq!(
        run.outcome,
        error("tool `t` exited with code 3; its stderr ends with:\nline1\nline2")
    );

    let run = f.run("exit 3\n").await;
    assert_eq!(run.outcome, error("tool `t` exited with code 3"));
}

#[tokio::test]
async fn a_non_zero_exit_keeps_the_tools_error_message() {
    let f = Fixture::new();
    let run = f
        .run("printf '%s' '{\"type\":\"error\",\"message\":\"`path` is missing\"}'\nexit 2\n")
        .await;
    assert_eq!(
        run.outcome,
        error("tool `t` exited with code 2: `path` is missing")
    );
}

#[tokio::test]
async fn a_non_zero_exit_discards_a_success_outcome() {
    let f = Fixture::new();
    let run = f
        .run(&format!("echo '{SUCCESS}'\necho 'half done' >&2\nexit 1\n"))
        .await;
    assert_eq!(
        run.outcome,
        error(
            "tool `t` exited with code 1, so the outcome it wrote was discarded; its stderr ends with:\nhalf done"
        )
    );
}

#[tokio::test]
async fn only_the_last_stderr_lines_are_quoted() {
    let f = Fixture::new();
    let run = f
        .run("for i in $(seq 1 25); do echo \"log $i\" >&2; done\nexit 1\n")
        .await;
    let lines: Vec<String> = (16..=25).map(|i| format!("log {i}")).collect();
    assert_eq!(
        run.outcome,
        error(&format!(
            "tool `t` exited with code 1; its stderr ends with:\n{}",
            lines.join("\n")
        ))
    );
    // The run keeps all of it.
    assert_eq!(run.stderr.lines().count(), 25);
}

#[tokio::test]
async fn oversized_output_is_stopped() {
    let f = Fixture::new();
    let started = Instant::now();
    let run = f.run("yes | head -c 2000000\n").await;
    assert_eq!(
        run.outcome,
        error("tool `t` wrote more than 1 MiB to stdout, its output limit; it was stopped")
    );
    assert!(started.elapsed() < Duration::from_secs(10));

    let limits = ToolLimits {
        max_output_bytes: 2000,
        ..ToolLimits::default()
    };
    let run = f.run_with("yes | head -c 2001\n", json!({}), &limits).await;
    assert_eq!(
        run.outcome,
        error("tool `t` wrote more than 2000 bytes to stdout, its output limit; it was stopped")
    );
}

#[tokio::test]
async fn the_limits_messages_name_the_keys_that_set_them() {
    let f = Fixture::new();
    let limits = ToolLimits {
        timeout: Duration::from_millis(200),
        max_output_bytes: 2000,
        timeout_key: Some("conversation.tools.t.timeout_secs".into()),
        max_output_key: Some("conversation.tools.'*'.max_output_bytes".into()),
        sandbox: Sandbox::default(),
    };
    let run = f.run_with("yes | head -c 2001\n", json!({}), &limits).await;
    assert_eq!(
        run.outcome,
        error(
            "tool `t` wrote more than 2000 bytes to stdout, its output limit (conversation.tools.'*'.max_output_bytes); it was stopped"
        )
    );
    let run = f.run_with("sleep 30\n", json!({}), &limits).await;
    assert_eq!(
        run.outcome,
        Outcome::Error {
            message: "tool `t` did not finish within 200 ms (conversation.tools.t.timeout_secs); it was stopped".into(),
            transient: true,
        }
    );
}

#[tokio::test]
async fn output_at_the_limit_is_accepted() {
    let f = Fixture::new();
    let limits = ToolLimits {
        max_output_bytes: SUCCESS.len(),
        ..ToolLimits::default()
    };
    let run = f
        .run_with(&format!("printf '%s' '{SUCCESS}'\n"), json!({}), &limits)
        .await;
    assert_eq!(run.outcome, Outcome::success("hi"));
}

#[tokio::test]
async fn a_timeout_kills_the_tool_and_its_children() {
    let f = Fixture::new();
    let limits = ToolLimits {
        timeout: Duration::from_millis(200),
        ..ToolLimits::default()
    };
    let started = Instant::now();
    let run = f
        .run_with("sleep 30 &\necho $! > pid\nwait\n", json!({}), &limits)
        .await;
    assert_eq!(
        run.outcome,
        Outcome::Error {
            message: "tool `t` did not finish within 200 ms; it was stopped".into(),
            transient: true,
        }
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(run.duration < Duration::from_secs(5));
    #[cfg(target_os = "linux")]
    {
        let child = f.pid_file().await;
        assert!(gone(child).await, "the tool's child {child} survived");
    }
}

#[tokio::test]
async fn a_plain_sleep_times_out_quickly() {
    let f = Fixture::new();
    let limits = ToolLimits {
        timeout: Duration::from_millis(200),
        ..ToolLimits::default()
    };
    let started = Instant::now();
    let run = f.run_with("sleep 30\n", json!({}), &limits).await;
    assert_eq!(
        run.outcome,
        Outcome::Error {
            message: "tool `t` did not finish within 200 ms; it was stopped".into(),
            transient: true,
        }
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn cancellation_kills_the_tool() {
    let f = Fixture::new();
    let argv = f.script("echo $$ > pid\nsleep 30\n");
    let request = f.request(json!({}));
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    let limits = ToolLimits::default();
    let started = Instant::now();
    let (run, pid) = tokio::join!(run_local(&argv, &request, &limits, &cancel), async {
        let pid = f.pid_file().await;
        canceller.cancel();
        pid
    });
    assert_eq!(run.outcome, error("tool `t` was cancelled; it was stopped"));
    assert!(started.elapsed() < Duration::from_secs(5));
    #[cfg(target_os = "linux")]
    assert!(gone(pid).await);
    #[cfg(not(target_os = "linux"))]
    let _ = pid;

    let run = run_local(&argv, &request, &limits, &cancel).await;
    assert_eq!(
        run.outcome,
        error("tool `t` was cancelled before it started")
    );
}

#[tokio::test]
async fn dropping_the_run_kills_the_tool_and_its_children() {
    let f = Fixture::new();
    let argv = f.script("sleep 30 &\necho $! > pid\nwait\n");
    let request = f.request(json!({}));
    let task = tokio::spawn(async move {
        run_local(
            &argv,
            &request,
            &ToolLimits::default(),
            &CancellationToken::new(),
        )
        .await
    });
    let child = f.pid_file().await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    #[cfg(target_os = "linux")]
    assert!(gone(child).await, "the tool's child {child} survived");
    #[cfg(not(target_os = "linux"))]
    let _ = child;
}

#[tokio::test]
async fn a_tool_that_ignores_stdin_still_answers() {
    let f = Fixture::new();
    // Far more than a pipe buffer, so writing the request hits a closed pipe.
    let big = "x".repeat(1024 * 1024);
    let run = f
        .run_with(
            &format!("printf '%s' '{SUCCESS}'\n"),
            json!({ "content": big }),
            &ToolLimits::default(),
        )
        .await;
    assert_eq!(run.outcome, Outcome::success("hi"));
}

#[tokio::test]
async fn a_big_request_arrives_intact_on_stdin() {
    let f = Fixture::new();
    let big: String = (0..5 * 1024 * 1024)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let arguments = json!({ "content": big });
    let expected = serde_json::to_vec(&f.request(arguments.clone())).unwrap();
    let run = f
        .run_with(
            "n=$(wc -c | tr -d ' ')\nprintf '{\"type\":\"success\",\"content\":\"%s\"}' \"$n\"\n",
            arguments,
            &ToolLimits::default(),
        )
        .await;
    assert_eq!(run.outcome, Outcome::success(expected.len().to_string()));
}

#[tokio::test]
async fn the_request_on_stdin_is_the_request() {
    let f = Fixture::new();
    let run = f
        .run_with(
            "cat > request.json\nprintf '%s' '{\"type\":\"success\",\"content\":\"\"}'\n",
            json!({ "path": "src/lib.rs" }),
            &ToolLimits::default(),
        )
        .await;
    assert_eq!(run.outcome, Outcome::success(""));
    let written: Request =
        serde_json::from_slice(&std::fs::read(f.root().join("request.json")).unwrap()).unwrap();
    assert_eq!(written, f.request(json!({ "path": "src/lib.rs" })));
}

#[tokio::test]
async fn stderr_is_captured_on_success() {
    let f = Fixture::new();
    let run = f
        .run(&format!(
            "echo 'reading config' >&2\nprintf '%s' '{SUCCESS}'\necho done >&2\n"
        ))
        .await;
    assert_eq!(run.outcome, Outcome::success("hi"));
    assert_eq!(run.stderr, "reading config\ndone\n");
}

// A tool may write bytes that are not UTF-8 (it passes on a Latin-1 or a
// binary file). Each such byte becomes U+FFFD, on stdout and stderr alike:
// the outcome still gets through, garbage is still an error that quotes
// what came, and nothing panics.

#[tokio::test]
async fn an_outcome_with_bytes_that_are_not_utf8_keeps_the_rest() {
    let f = Fixture::new();
    // "café" in Latin-1: before, the whole outcome was discarded for it.
    let run = f
        .run("cat >/dev/null\nprintf '{\"type\":\"success\",\"content\":\"caf\\351\"}'\n")
        .await;
    assert_eq!(run.outcome, Outcome::success("caf\u{fffd}"));

    let run = f
        .run("cat >/dev/null\nprintf '{\"type\":\"error\",\"message\":\"no \\377\\376 here\"}'\nexit 1\n")
        .await;
    assert_eq!(
        run.outcome,
        error("tool `t` exited with code 1: no \u{fffd}\u{fffd} here")
    );
}

#[tokio::test]
async fn binary_stdout_is_an_error_with_a_lossy_excerpt() {
    let f = Fixture::new();
    let run = f.run("cat >/dev/null\nprintf '\\377\\376oops'\n").await;
    assert_eq!(
        run.outcome,
        error(
            "tool `t` wrote something other than an outcome to stdout: expected value at line 1 column 1; it starts with `\u{fffd}\u{fffd}oops`"
        )
    );
}

#[tokio::test]
async fn stderr_that_is_not_utf8_is_decoded_lossily() {
    let f = Fixture::new();
    let run = f
        .run("cat >/dev/null\nprintf 'caf\\351 \\377\\n' >&2\nexit 3\n")
        .await;
    assert_eq!(
        run.outcome,
        error("tool `t` exited with code 3; its stderr ends with:\ncaf\u{fffd} \u{fffd}")
    );
    assert_eq!(run.stderr, "caf\u{fffd} \u{fffd}\n");
}

#[tokio::test]
async fn the_tool_runs_in_the_workspace_root() {
    let f = Fixture::new();
    let run = f
        .run("printf '{\"type\":\"success\",\"content\":\"%s\"}' \"$(pwd -P)\"\n")
        .await;
    let root = f.root().canonicalize().unwrap();
    assert_eq!(run.outcome, Outcome::success(root.display().to_string()));
}

#[tokio::test]
async fn a_missing_program_cannot_start() {
    let f = Fixture::new();
    let argv = vec!["jp-no-such-tool-here".to_owned()];
    let run = run_local(
        &argv,
        &f.request(json!({})),
        &ToolLimits::default(),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(
        run.outcome,
        error(
            "cannot start `jp-no-such-tool-here` for tool `t`: No such file or directory (os error 2)"
        )
    );
}

#[tokio::test]
async fn an_empty_command_is_an_error() {
    let f = Fixture::new();
    let run = run_local(
        &[],
        &f.request(json!({})),
        &ToolLimits::default(),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(
        run.outcome,
        error("tool `t` has no command to run; set `conversation.tools.t.command`")
    );
}

#[tokio::test]
async fn a_missing_root_is_an_error() {
    let f = Fixture::new();
    let missing = f.root().join("gone");
    let run = run_local(
        &["true".to_owned()],
        &request_in(missing.clone(), json!({})),
        &ToolLimits::default(),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(
        run.outcome,
        error(&format!(
            "cannot run tool `t`: its working directory `{}` is not a directory",
            missing.display()
        ))
    );
}

#[tokio::test]
async fn a_background_process_holding_stdout_does_not_stall_the_run() {
    let f = Fixture::new();
    let started = Instant::now();
    let run = f
        .run(&format!(
            "sleep 30 &\necho $! > pid\nprintf '%s' '{SUCCESS}'\n"
        ))
        .await;
    assert_eq!(run.outcome, Outcome::success("hi"));
    assert!(started.elapsed() < Duration::from_secs(5));
    #[cfg(target_os = "linux")]
    {
        let child = f.pid_file().await;
        assert!(gone(child).await, "the tool's child {child} survived");
    }
}

#[test]
fn stderr_keeps_its_end() {
    let mut buffer = TailBuffer::new(10);
    for _ in 0..10 {
        buffer.push(b"0123456789");
    }
    buffer.push(b"abc");
    assert_eq!(
        buffer.to_string_lossy(),
        "[93 earlier bytes of stderr omitted]\n3456789abc"
    );
    // A cut inside a UTF-8 sequence skips to the next character.
    let mut buffer = TailBuffer::new(4);
    buffer.push("aé€".as_bytes()); // 1 + 2 + 3 bytes
    assert_eq!(
        buffer.to_string_lossy(),
        "[3 earlier bytes of stderr omitted]\n€"
    );
    let mut buffer = TailBuffer::new(4);
    buffer.push(b"ok\n");
    assert_eq!(buffer.to_string_lossy(), "ok\n");
}

#[test]
fn limits_are_shown_in_units() {
    assert_eq!(fmt_bytes(1024 * 1024), "1 MiB");
    assert_eq!(fmt_bytes(64 * 1024), "64 KiB");
    assert_eq!(fmt_bytes(2000), "2000 bytes");
    assert_eq!(fmt_bytes(1), "1 byte");
    assert_eq!(fmt_duration(Duration::from_millis(200)), "200 ms");
    assert_eq!(fmt_duration(Duration::from_secs(60)), "60 s");
    assert_eq!(fmt_duration(Duration::from_millis(1500)), "1.5 s");
    assert_eq!(
        ToolLimits::default(),
        ToolLimits {
            timeout: Duration::from_secs(60),
            max_output_bytes: 1024 * 1024,
            timeout_key: None,
            max_output_key: None,
            sandbox: Sandbox::default(),
        }
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_timeout_kills_a_daemon_the_tool_started() {
    // `setsid` takes the child out of the tool's process group (and
    // session), so killing the group does not reach it; its marker does.
    let f = Fixture::new();
    let limits = ToolLimits {
        timeout: Duration::from_millis(300),
        ..ToolLimits::default()
    };
    let run = f
        .run_with(
            "setsid sleep 97 >/dev/null 2>&1 & echo $! > pid\nsleep 30\n",
            json!({}),
            &limits,
        )
        .await;
    assert_eq!(
        run.outcome,
        Outcome::Error {
            message: "tool `t` did not finish within 300 ms; it was stopped".into(),
            transient: true,
        }
    );
    let daemon = f.pid_file().await;
    assert!(gone(daemon).await, "the daemon {daemon} survived");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_daemon_a_finished_tool_left_behind_is_killed() {
    let f = Fixture::new();
    let run = f
        .run(&format!(
            "setsid sleep 97 >/dev/null 2>&1 & echo $! > pid\nprintf '%s' '{SUCCESS}'\n"
        ))
        .await;
    assert_eq!(run.outcome, Outcome::success("hi"));
    let daemon = f.pid_file().await;
    assert!(gone(daemon).await, "the daemon {daemon} survived");
}
