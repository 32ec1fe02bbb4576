//! Running `hooks.before_tool` and `hooks.after_tool` (see
//! [`jp_config::hooks`]) around a call that may run.
//!
//! A hook is started as a local tool is: its program (`jp` is this jp) in
//! the workspace root, in the sandbox every process jp starts gets
//! (`conversation.sandbox`), with the files jp guards (git's hooks, jp's
//! config) put back after it, killed at its timeout. It reads one JSON
//! object on stdin:
//!
//! ```json
//! {"hook": "before_tool", "id": "toolu_1", "tool": "run_command",
//!  "arguments": {"program": "git", "args": ["push"]}}
//! ```
//!
//! and, for `after_tool`, `"result": {"status": "success", "content": "..."}`
//! too. A before hook that exits 2 declines the call, its stderr the
//! reason the model sees; 0 lets it run; anything else (another code, a
//! timeout, a program that cannot start) declines it and is reported. An
//! after hook's stdout (exit 0) is added to the result as a note; any other
//! end is reported and adds nothing.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use jp_config::app::AppConfig;
use jp_config::hooks::HookConfig;
use jp_conversation::ToolCallResponse;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::tools::kept::Kept;

/// The most bytes of a hook's stdout or stderr read.
const MAX_OUTPUT: u64 = 64 * 1024;

/// The most characters of a reason or note passed on.
const MAX_CHARS: usize = 4000;

/// What the before hooks said about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Before {
    /// Every hook (if any) let it run.
    Run,
    /// A hook declined it: `reason` for the model, `note` for the user.
    Declined {
        /// Why, in the hook's words (exit 2), or what went wrong.
        reason: String,
        /// What the user sees.
        note: String,
    },
}

/// How one run of a hook ended.
#[derive(Debug)]
struct Ended {
    /// Its exit code; `None` when it was killed or never started.
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// Why it did not end by itself, if it did not.
    trouble: Option<String>,
}

impl Ended {
    /// A run that did not end by itself, for `trouble`.
    fn trouble(trouble: String) -> Self {
        Self {
            code: None,
            stdout: String::new(),
            stderr: String::new(),
            trouble: Some(trouble),
        }
    }
}

/// The hooks of `hooks` that cover `tool`.
fn covering<'a>(hooks: &'a [HookConfig], tool: &str) -> impl Iterator<Item = &'a HookConfig> {
    hooks.iter().filter(move |hook| hook.covers(tool))
}

/// Runs the `before_tool` hooks that cover a call of `tool` with
/// `arguments` (its id `id`), in the workspace at `root`.
pub async fn before(
    config: &AppConfig,
    root: &Path,
    id: &str,
    tool: &str,
    arguments: &Map<String, Value>,
) -> Before {
    let input = json!({"hook": "before_tool", "id": id, "tool": tool, "arguments": arguments});
    for hook in covering(&config.hooks.before_tool, tool) {
        let shown = shown(hook);
        let ended = run(config, root, hook, &input).await;
        match (ended.code, &ended.trouble) {
            (Some(0), None) => {}
            (Some(2), None) => {
                let reason = cut(ended.stderr.trim());
                let reason = if reason.is_empty() {
                    "a hook declined it".to_owned()
                } else {
                    reason
                };
                return Before::Declined {
                    note: format!("{tool}: declined by the hook `{shown}`: {reason}"),
                    reason,
                };
            }
            (code, trouble) => {
                let what = trouble.clone().unwrap_or_else(|| match code {
                    Some(code) => format!("it exited with {code}"),
                    None => "it was killed by a signal".to_owned(),
                });
                let stderr = cut(ended.stderr.trim());
                let said = if stderr.is_empty() {
                    String::new()
                } else {
                    format!(": {stderr}")
                };
                return Before::Declined {
                    reason: "a hook that checks calls failed, so the call was not run".to_owned(),
                    note: format!(
                        "{tool}: declined: the hook `{shown}` failed ({what}){said}; only exit 0 lets a call run, and exit 2 declines it"
                    ),
                };
            }
        }
    }
    Before::Run
}

/// Runs the `after_tool` hooks that cover a call of `tool` that ran and
/// answered `response`; the notes they add (stdout, exit 0) and what to
/// report of those that failed.
pub async fn after(
    config: &AppConfig,
    root: &Path,
    tool: &str,
    arguments: &Map<String, Value>,
    response: &ToolCallResponse,
) -> (Vec<String>, Vec<String>) {
    let input = json!({
        "hook": "after_tool",
        "id": response.id,
        "tool": tool,
        "arguments": arguments,
        "result": {"status": response.status.as_str(), "content": response.content},
    });
    let (mut notes, mut failed) = (Vec::new(), Vec::new());
    for hook in covering(&config.hooks.after_tool, tool) {
        let ended = run(config, root, hook, &input).await;
        match (ended.code, ended.trouble) {
            (Some(0), None) => {
                let note = cut(ended.stdout.trim());
                if !note.is_empty() {
                    notes.push(note);
                }
            }
            (code, trouble) => failed.push(format!(
                "the hook `{}` after {tool} failed ({}); its note is left out",
                shown(hook),
                trouble.unwrap_or_else(|| format!("exit {}", code.unwrap_or(-1)))
            )),
        }
    }
    (notes, failed)
}

/// The hook's command, for messages.
fn shown(hook: &HookConfig) -> String {
    hook.command.argv().join(" ")
}

/// `text` cut to [`MAX_CHARS`] characters.
fn cut(text: &str) -> String {
    let mut cut: String = text.chars().take(MAX_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

/// Runs `hook` with `input` on stdin, sandboxed, the guarded files put
/// back after it.
async fn run(config: &AppConfig, root: &Path, hook: &HookConfig, input: &Value) -> Ended {
    let mut argv = hook.command.argv();
    if argv.is_empty() {
        return Ended::trouble("its command is empty".to_owned());
    }
    if argv[0] == "jp"
        && let Ok(exe) = std::env::current_exe()
    {
        argv[0] = exe.to_string_lossy().into_owned();
    }
    let mut command = tokio::process::Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let sandbox = jp_llm::tool::Sandbox::from_config(&config.conversation.sandbox);
    let confinement = match sandbox.apply(&mut command, root) {
        Ok(confinement) => confinement,
        Err(e) => return Ended::trouble(e.to_string()),
    };
    let kept = Kept::take(root);
    let ended = run_confined(command, input, Duration::from_secs(hook.timeout_secs)).await;
    drop(confinement);
    let restored = kept.restore();
    if !restored.put_back.is_empty() || !restored.failed.is_empty() {
        let mut what = restored.put_back;
        what.extend(restored.failed);
        return Ended::trouble(format!("it changed {}, which jp put back", what.join(", ")));
    }
    ended
}

/// What `pipe` carries, up to [`MAX_OUTPUT`] bytes, as text.
async fn bounded(pipe: Option<impl tokio::io::AsyncRead + Unpin>) -> String {
    let mut out = Vec::new();
    if let Some(pipe) = pipe {
        let _ = pipe.take(MAX_OUTPUT).read_to_end(&mut out).await;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Starts `command`, writes `input`, and waits at most `timeout`.
async fn run_confined(
    mut command: tokio::process::Command,
    input: &Value,
    timeout: Duration,
) -> Ended {
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Ended::trouble(format!("it cannot start: {}", jp_fs::io_reason(&e))),
    };
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let bytes = input.to_string().into_bytes();
    let write = async move {
        if let Some(mut stdin) = stdin {
            // A hook that does not read its input is not an error.
            let _ = stdin.write_all(&bytes).await;
        }
    };
    let waited = tokio::time::timeout(timeout, async {
        let ((), out, err, status) =
            tokio::join!(write, bounded(stdout), bounded(stderr), child.wait());
        (out, err, status)
    })
    .await;
    match waited {
        Ok((stdout, stderr, Ok(status))) => Ended {
            code: status.code(),
            stdout,
            stderr,
            trouble: None,
        },
        Ok((stdout, stderr, Err(e))) => Ended {
            code: None,
            stdout,
            stderr,
            trouble: Some(format!("waiting for it failed: {e}")),
        },
        Err(_) => Ended::trouble(format!("it did not finish within {} s", timeout.as_secs())),
    }
}
