//! Running one local tool process: the transport of architecture decision 8.
//!
//! The request goes to the tool's stdin (no argv size limit, no quoting),
//! one outcome comes back on stdout, and stderr is the tool's log. Stdin,
//! stdout and stderr are served concurrently, so a tool that answers before
//! reading its whole request, or logs a lot, cannot deadlock jp.
//!
//! # Exit status and outcome
//!
//! The exit status is trusted over stdout. A tool that exits 0 must have
//! written exactly one outcome; a tool that exits non-zero (or dies from a
//! signal) failed, whatever it wrote. When such a tool did write an error
//! outcome, its message is kept, because it is the tool's own explanation;
//! a success or needs-input outcome from a failed process is discarded,
//! since the work it reports may be half done.
//!
//! # Bytes that are not UTF-8
//!
//! Stdout and stderr are decoded lossily: a byte that is not UTF-8 becomes
//! U+FFFD, so a tool that passes on a Latin-1 or binary file still gets its
//! outcome through, and nothing it writes can fail or panic the run.
//!
//! # Stopping a tool
//!
//! A timeout, a cancelled turn, too much output, or jp dropping the run
//! kills the tool together with the processes it started; when the tool
//! exits on its own, what it left running is killed too. A tool that exits
//! while a process it started still holds its stdout or stderr open gets
//! [`EXIT_GRACE`] for those pipes to close; then that is killed and what it
//! wrote so far is used. How far "the processes it started" reaches, on
//! which platform, and what happens when jp itself is killed, is the
//! subject of the `containment` module.

use std::pin::pin;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use jp_tool::{Outcome, Request};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::containment::{self, Containment};
use super::sandbox::Sandbox;
use crate::framing::excerpt;

/// How much of a tool's stderr is kept (its end): enough for a backtrace,
/// bounded against a tool that logs without end.
pub const STDERR_TAIL_BYTES: usize = 64 * 1024;

/// How long the pipes of a tool that has exited may stay open (held by a
/// process it left behind) before its process group is killed.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// How long to wait for a killed tool to be reaped.
const REAP_WAIT: Duration = Duration::from_secs(2);

/// The most stderr lines quoted in an error message.
const STDERR_LINES_IN_MESSAGE: usize = 10;

/// The most characters of stderr quoted in an error message.
const STDERR_CHARS_IN_MESSAGE: usize = 2000;

/// Bounds on one tool run (a local tool's process, or a call on an MCP
/// server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLimits {
    /// How long the tool may run, from start to exit, before it is killed.
    pub timeout: Duration,
    /// The most bytes the tool may write to stdout; a tool that writes more
    /// is killed.
    pub max_output_bytes: usize,
    /// The config key that set `timeout`
    /// (`conversation.tools.NAME.timeout_secs`), named by the message of a
    /// run that takes too long; `None` names none.
    pub timeout_key: Option<String>,
    /// The config key that set `max_output_bytes`, as for `timeout_key`.
    pub max_output_key: Option<String>,
    /// What the tool's process may reach.
    pub sandbox: Sandbox,
}

impl Default for ToolLimits {
    /// 60 seconds and 1 MiB, set by no key.
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            max_output_bytes: 1024 * 1024,
            timeout_key: None,
            max_output_key: None,
            sandbox: Sandbox::default(),
        }
    }
}

/// ` (KEY)`, naming the key that set a limit, or nothing.
#[must_use]
pub fn limit_key(key: Option<&str>) -> String {
    key.map(|key| format!(" ({key})")).unwrap_or_default()
}

/// What one run of a local tool gave.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRun {
    /// The tool's outcome, or an [`Outcome::Error`] saying why there is
    /// none.
    pub outcome: Outcome,
    /// The end of the tool's stderr (at most [`STDERR_TAIL_BYTES`], decoded
    /// lossily as UTF-8), for logs and diagnostics; never shown to the
    /// model. Starts with a line saying how much was left out, if anything
    /// was.
    pub stderr: String,
    /// How long the run took, from start to the outcome.
    pub duration: Duration,
}

/// Runs a local tool: `argv[0]` (found through `PATH` as usual; the caller
/// has already substituted paths) with `argv[1..]`, in
/// `request.context.root`.
///
/// The request is written to the tool's stdin as JSON, which is then
/// closed; stdout (up to `limits.max_output_bytes`) and stderr (its last
/// [`STDERR_TAIL_BYTES`]) are read at the same time, and the tool must exit
/// within `limits.timeout`. Cancelling `cancel` kills the tool, and so does
/// dropping the returned future.
///
/// Never fails: every problem becomes an [`Outcome::Error`] naming the tool
/// (see the module docs for how the exit status and the outcome combine).
/// Only a timeout is `transient`.
pub async fn run_local(
    argv: &[String],
    request: &Request,
    limits: &ToolLimits,
    cancel: &CancellationToken,
) -> ToolRun {
    let started = Instant::now();
    let mut stderr = TailBuffer::new(STDERR_TAIL_BYTES);
    let outcome = run(argv, request, limits, cancel, &mut stderr).await;
    let duration = started.elapsed();
    tracing::debug!(
        tool = %request.tool.name,
        ?duration,
        error = matches!(outcome, Outcome::Error { .. }),
        "local tool finished"
    );
    ToolRun {
        outcome,
        stderr: stderr.to_string_lossy(),
        duration,
    }
}

/// Why the wait for a tool ended.
enum Stop {
    /// It exited and its pipes closed (or their grace ran out).
    Exited(ExitStatus),
    /// It wrote more than the output limit.
    Oversized,
    /// It ran past the timeout.
    TimedOut,
    /// The run was cancelled.
    Cancelled,
    /// Waiting for it failed.
    WaitFailed(std::io::Error),
}

/// Stdout went over the output limit.
struct Oversized;

async fn run(
    argv: &[String],
    request: &Request,
    limits: &ToolLimits,
    cancel: &CancellationToken,
    stderr: &mut TailBuffer,
) -> Outcome {
    let name = request.tool.name.as_str();
    let Some((program, args)) = argv.split_first() else {
        return Outcome::error(format!(
            "tool `{name}` has no command to run; set `conversation.tools.{name}.command`"
        ));
    };
    if cancel.is_cancelled() {
        return Outcome::error(format!("tool `{name}` was cancelled before it started"));
    }
    let root = &request.context.root;
    if !root.is_dir() {
        return Outcome::error(format!(
            "cannot run tool `{name}`: its working directory `{}` is not a directory",
            root.display()
        ));
    }
    let input = match serde_json::to_vec(request) {
        Ok(input) => input,
        Err(e) => {
            return Outcome::error(format!("cannot encode the request for tool `{name}`: {e}"));
        }
    };

    let mut command = Command::new(program);
    // Kept until the run is over: its private TMPDIR goes with it.
    let _confinement = match limits.sandbox.apply(&mut command, root) {
        Ok(confinement) => confinement,
        Err(e) => {
            return Outcome::error(format!("cannot start `{program}` for tool `{name}`: {e}"));
        }
    };
    command
        .args(args)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (mut child, mut containment) = match containment::spawn(command).await {
        Ok(spawned) => spawned,
        Err(e) => {
            return Outcome::error(format!("cannot start `{program}` for tool `{name}`: {e}"));
        }
    };
    // From here on, dropping this future kills the tool and everything it
    // started (`containment` and `kill_on_drop`); otherwise `release` does,
    // whichever way the run ended, before the outcome is handed on.
    let outcome = supervise(
        name,
        &mut child,
        &mut containment,
        &input,
        limits,
        cancel,
        stderr,
    )
    .await;
    containment.release().await;
    outcome
}

/// Serves a started tool's streams until it exits, times out, writes too
/// much or is cancelled, and turns that into its outcome.
async fn supervise(
    name: &str,
    child: &mut tokio::process::Child,
    group: &mut Containment,
    input: &[u8],
    limits: &ToolLimits,
    cancel: &CancellationToken,
    stderr: &mut TailBuffer,
) -> Outcome {
    let (Some(stdin), Some(stdout), Some(child_stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Outcome::error(format!(
            "cannot talk to tool `{name}`: its standard streams were not opened"
        ));
    };

    let mut output = Vec::new();
    let mut exited: Option<ExitStatus> = None;
    let stop = {
        let io = async {
            tokio::try_join!(
                async {
                    write_request(stdin, input, name).await;
                    Ok::<(), Oversized>(())
                },
                read_bounded(stdout, &mut output, limits.max_output_bytes),
                async {
                    stderr.read_from(child_stderr).await;
                    Ok(())
                },
            )
        };
        let mut io = pin!(io);
        let now = tokio::time::Instant::now();
        let deadline = now
            .checked_add(limits.timeout)
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600));
        let mut grace_until = deadline;
        let mut io_done = false;
        loop {
            if let (true, Some(status)) = (io_done, exited) {
                break Stop::Exited(status);
            }
            tokio::select! {
                biased;
                () = cancel.cancelled() => break Stop::Cancelled,
                result = &mut io, if !io_done => match result {
                    Ok(_) => io_done = true,
                    Err(Oversized) => break Stop::Oversized,
                },
                status = child.wait(), if exited.is_none() => match status {
                    Ok(status) => {
                        // Reaped: its group id may be reused from now on.
                        group.tool_reaped();
                        exited = Some(status);
                        grace_until = tokio::time::Instant::now() + EXIT_GRACE;
                    }
                    Err(e) => break Stop::WaitFailed(e),
                },
                () = tokio::time::sleep_until(grace_until), if exited.is_some() && !io_done => {
                    tracing::debug!(tool = name, "tool exited but its pipes stayed open; killing what it left behind");
                    group.kill_exited_group();
                    if let Some(status) = exited {
                        break Stop::Exited(status);
                    }
                }
                () = tokio::time::sleep_until(deadline) => break Stop::TimedOut,
            }
        }
    };

    let message = match stop {
        // Whatever the tool left running (holding its pipes or not) is
        // killed by `Containment::release`.
        Stop::Exited(status) => return interpret(name, status, &output, stderr),
        Stop::Oversized => format!(
            "tool `{name}` wrote more than {} to stdout, its output limit{}; it was stopped",
            fmt_bytes(limits.max_output_bytes),
            limit_key(limits.max_output_key.as_deref())
        ),
        Stop::TimedOut => {
            stop_child(child, group).await;
            return Outcome::Error {
                message: format!(
                    "tool `{name}` did not finish within {}{}; it was stopped",
                    fmt_duration(limits.timeout),
                    limit_key(limits.timeout_key.as_deref())
                ),
                transient: true,
            };
        }
        Stop::Cancelled => format!("tool `{name}` was cancelled; it was stopped"),
        Stop::WaitFailed(e) => format!("cannot wait for tool `{name}` to finish: {e}"),
    };
    stop_child(child, group).await;
    Outcome::error(message)
}

/// Kills a tool that has not been reaped and everything it started (before
/// reaping it, while its group id is still certainly its own), then reaps
/// it.
async fn stop_child(child: &mut tokio::process::Child, group: &mut Containment) {
    group.kill_all();
    if let Err(e) = child.start_kill() {
        tracing::debug!("cannot kill the tool process: {e}");
    }
    if tokio::time::timeout(REAP_WAIT, child.wait()).await.is_err() {
        tracing::warn!("a killed tool process was not reaped within {REAP_WAIT:?}");
    }
    group.tool_reaped();
}

/// Turns a finished tool's exit status and stdout into its outcome.
fn interpret(name: &str, status: ExitStatus, stdout: &[u8], stderr: &TailBuffer) -> Outcome {
    let parsed = parse_outcome(name, stdout);
    if status.success() {
        return match parsed {
            Ok(outcome) => outcome,
            Err(OutputProblem::Empty) => Outcome::error(format!(
                "tool `{name}` exited without writing an outcome to stdout{}",
                stderr_note(stderr)
            )),
            Err(OutputProblem::Invalid(e)) => Outcome::error(format!(
                "tool `{name}` wrote something other than an outcome to stdout: {e}; it starts with {}{}",
                excerpt(&String::from_utf8_lossy(stdout)),
                stderr_note(stderr)
            )),
        };
    }
    let how = describe_status(status);
    match parsed {
        Ok(Outcome::Error { message, .. }) => {
            Outcome::error(format!("tool `{name}` {how}: {message}"))
        }
        Ok(_) => Outcome::error(format!(
            "tool `{name}` {how}, so the outcome it wrote was discarded{}",
            stderr_note(stderr)
        )),
        Err(_) => Outcome::error(format!("tool `{name}` {how}{}", stderr_note(stderr))),
    }
}

/// Why stdout holds no outcome.
enum OutputProblem {
    /// Nothing but whitespace.
    Empty,
    /// Not an outcome; the parser's message.
    Invalid(String),
}

/// The outcome on stdout. Stdout is decoded as UTF-8 lossily, like
/// stderr: a tool that copies a Latin-1 or binary file into its content
/// would otherwise lose its whole outcome to one stray byte. Each byte that
/// is not UTF-8 becomes U+FFFD, and a warning says so.
fn parse_outcome(name: &str, stdout: &[u8]) -> Result<Outcome, OutputProblem> {
    if stdout.iter().all(u8::is_ascii_whitespace) {
        return Err(OutputProblem::Empty);
    }
    let text = String::from_utf8_lossy(stdout);
    let outcome = jp_tool::parse_outcome(&text).map_err(OutputProblem::Invalid)?;
    if matches!(text, std::borrow::Cow::Owned(_)) {
        tracing::warn!(
            tool = name,
            "the tool wrote bytes that are not UTF-8 to stdout; they were replaced with U+FFFD"
        );
    }
    Ok(outcome)
}

/// "exited with code 3", "was killed by signal 9 (SIGKILL)".
fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            return match signal_name(signal) {
                Some(signame) => format!("was killed by signal {signal} ({signame})"),
                None => format!("was killed by signal {signal}"),
            };
        }
    }
    format!("failed ({status})")
}

/// The name of a common signal (numbers shared by Linux and the BSDs).
#[cfg(unix)]
fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// `; its stderr ends with:` and the last lines of stderr, or nothing when
/// stderr is empty.
fn stderr_note(stderr: &TailBuffer) -> String {
    let text = stderr.to_string_lossy();
    let text = text.trim_end();
    if text.trim().is_empty() {
        return String::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(STDERR_LINES_IN_MESSAGE)..].join("\n");
    let chars = tail.chars().count();
    let tail = if chars > STDERR_CHARS_IN_MESSAGE {
        let skipped: String = tail.chars().skip(chars - STDERR_CHARS_IN_MESSAGE).collect();
        format!("…{skipped}")
    } else {
        tail
    };
    format!("; its stderr ends with:\n{tail}")
}

/// `1 MiB`, `64 KiB`, `2000 bytes`.
fn fmt_bytes(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else if bytes == 1 {
        "1 byte".to_owned()
    } else {
        format!("{bytes} bytes")
    }
}

/// `200 ms`, `60 s`, `1.5 s`.
fn fmt_duration(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

/// Writes the request and closes stdin. A tool may answer without reading
/// its request, so a broken pipe is not a failure (and any other write
/// error shows up as a missing or invalid outcome).
async fn write_request(mut stdin: impl AsyncWrite + Unpin, input: &[u8], name: &str) {
    if let Err(e) = stdin.write_all(input).await {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            tracing::debug!(
                tool = name,
                "the tool closed stdin before reading the whole request"
            );
        } else {
            tracing::warn!(
                tool = name,
                "cannot write the request to the tool's stdin: {e}"
            );
        }
        return;
    }
    if let Err(e) = stdin.shutdown().await {
        tracing::debug!(tool = name, "cannot close the tool's stdin: {e}");
    }
}

/// Reads `reader` to its end into `out`, failing as soon as it holds more
/// than `max` bytes. A read error ends the output like an end of file.
async fn read_bounded(
    mut reader: impl AsyncRead + Unpin,
    out: &mut Vec<u8>,
    max: usize,
) -> Result<(), Oversized> {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) => return Ok(()),
            Ok(n) => {
                if out.len().saturating_add(n) > max {
                    return Err(Oversized);
                }
                out.extend_from_slice(&chunk[..n]);
            }
            Err(e) => {
                tracing::debug!("cannot read the tool's stdout: {e}");
                return Ok(());
            }
        }
    }
}

/// The last `cap` bytes of a stream, and how many came before them.
struct TailBuffer {
    cap: usize,
    bytes: Vec<u8>,
    total: u64,
}

impl TailBuffer {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            bytes: Vec::new(),
            total: 0,
        }
    }

    fn push(&mut self, data: &[u8]) {
        self.total = self.total.saturating_add(data.len() as u64);
        self.bytes.extend_from_slice(data);
        // Trim in batches, so a chatty tool costs amortized O(1) per byte.
        if self.bytes.len() > self.cap.saturating_mul(2) {
            let excess = self.bytes.len() - self.cap;
            self.bytes.drain(..excess);
        }
    }

    /// Reads `reader` to its end (or its first error).
    async fn read_from(&mut self, mut reader: impl AsyncRead + Unpin) {
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut chunk).await {
                Ok(0) => return,
                Ok(n) => self.push(&chunk[..n]),
                Err(e) => {
                    tracing::debug!("cannot read the tool's stderr: {e}");
                    return;
                }
            }
        }
    }

    fn to_string_lossy(&self) -> String {
        let kept = &self.bytes[self.bytes.len().saturating_sub(self.cap)..];
        let omitted = self.total - kept.len() as u64;
        if omitted == 0 {
            return String::from_utf8_lossy(kept).into_owned();
        }
        // Do not start in the middle of a UTF-8 sequence.
        let start = kept
            .iter()
            .position(|b| b & 0b1100_0000 != 0b1000_0000)
            .unwrap_or(kept.len());
        let omitted = omitted + start as u64;
        format!(
            "[{omitted} earlier bytes of stderr omitted]\n{}",
            String::from_utf8_lossy(&kept[start..])
        )
    }
}

#[cfg(test)]
#[path = "local_tests.rs"]
mod tests;
