//! `run_command {program, args, cwd, timeout_secs}`: runs one program,
//! without a shell, and reports its exit status and output.
//!
//! `args` reach the program exactly as given: there is no shell, so no
//! pipes, redirections, globs, variables or `;`. The program runs in `cwd`
//! (inside the workspace, the root by default) with an empty stdin, stdout
//! and stderr on one pipe (so they are interleaved as written), and jp's
//! environment, except that PATH loses its relative directories (see
//! `program.rs`). It runs until it exits or `timeout_secs` pass, then its
//! process group is killed (see `process.rs`). Exit status 0 is a success;
//! any other end is an error, with the same report.

mod capture;
#[cfg(unix)]
mod process;
mod program;

use jp_tool::Request;
use serde_json::Value;

use crate::words::thousands;
use crate::workspace::Workspace;

pub use capture::MAX_OUTPUT_BYTES;

/// The timeout when the call sets none.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The longest timeout a call may set; a longer one is lowered to it.
pub const MAX_TIMEOUT_SECS: u64 = 600;

/// A call's arguments, checked.
struct Call<'a> {
    program: &'a str,
    args: Vec<&'a str>,
    cwd: Option<&'a str>,
    timeout_secs: u64,
    /// The `timeout_secs` asked for, when it was over the maximum.
    lowered_from: Option<u64>,
}

/// Runs the call: `Ok` with the report when the program exited with status
/// 0, `Err` with it otherwise, or with why it could not run.
pub(crate) fn run(request: &Request) -> Result<String, String> {
    let call = call(request)?;
    let workspace = Workspace::open(&request.context.root)?;
    let cwd = workspace.resolve(call.cwd.unwrap_or("."))?;
    match std::fs::metadata(&cwd.abs) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => {
            return Err(format!(
                "cannot run in `{}`: it is not a directory",
                cwd.shown
            ));
        }
        Err(e) => return Err(format!("cannot run in `{}`: {e}", cwd.shown)),
    }
    run_in(&call, &cwd.abs, &cwd.shown)
}

#[cfg(unix)]
fn run_in(call: &Call<'_>, cwd: &std::path::Path, shown_cwd: &str) -> Result<String, String> {
    let path_var = std::env::var_os("PATH");
    let file = program::resolve(call.program, cwd, shown_cwd, path_var.as_deref())?;
    let finished = process::run(&process::Spec {
        file: &file,
        program: call.program,
        args: &call.args,
        cwd,
        path_var: path_var.as_deref().and_then(program::absolute_path_var),
        timeout: std::time::Duration::from_secs(call.timeout_secs),
    })?;
    let report = report(call, &finished);
    if finished.ended == process::Ended::Exited(0) {
        Ok(report)
    } else {
        Err(report)
    }
}

#[cfg(not(unix))]
fn run_in(call: &Call<'_>, _cwd: &std::path::Path, _shown_cwd: &str) -> Result<String, String> {
    Err(format!(
        "cannot run `{}`: run_command runs programs on Unix systems only",
        call.program
    ))
}

/// The arguments of `request`, checked.
fn call(request: &Request) -> Result<Call<'_>, String> {
    let program = crate::arguments::string_argument(request, "program")?;
    if program.is_empty() {
        return Err("argument `program` is empty: name the program to run, such as `git`".into());
    }
    let args = crate::arguments::string_list_argument(request, "args")?;
    for (i, arg) in std::iter::once(&program).chain(&args).enumerate() {
        if arg.contains('\0') {
            let which = if i == 0 {
                "`program`".to_owned()
            } else {
                format!("`args` element {}", i - 1)
            };
            return Err(format!(
                "argument {which} contains a NUL byte, which no program can be given"
            ));
        }
    }
    let cwd = match request.argument("cwd") {
        None | Some(Value::Null) => None,
        Some(_) => Some(crate::arguments::string_argument(request, "cwd")?),
    };
    // No program or directory a person would run has a control character
    // in its name; one that does is a way to look like another (`git` and
    // a line break) to a policy or a reader.
    for (which, value) in [("program", Some(program)), ("cwd", cwd)] {
        if let Some(value) = value
            && value.chars().any(char::is_control)
        {
            return Err(format!(
                "argument `{which}` contains a control character ({}); name a program or directory without one",
                value.escape_debug()
            ));
        }
    }
    let (timeout_secs, lowered_from) = match request.argument("timeout_secs") {
        None | Some(Value::Null) => (DEFAULT_TIMEOUT_SECS, None),
        Some(value) => match value.as_u64() {
            Some(0) | None => {
                return Err(format!(
                    "argument `timeout_secs` must be a whole number of seconds from 1 to {MAX_TIMEOUT_SECS}, not {value}"
                ));
            }
            Some(secs) if secs > MAX_TIMEOUT_SECS => (MAX_TIMEOUT_SECS, Some(secs)),
            Some(secs) => (secs, None),
        },
    };
    Ok(Call {
        program,
        args,
        cwd,
        timeout_secs,
        lowered_from,
    })
}

/// What the model is told: how the program ended, then its output.
#[cfg(unix)]
fn report(call: &Call<'_>, finished: &process::Finished) -> String {
    use process::Ended;
    let shown = shown_command(call);
    let mut report = match finished.ended {
        Ended::Exited(code) => format!("`{shown}` exited with status {code}"),
        Ended::Signal(signal) => format!("`{shown}` was killed by signal {signal}"),
        Ended::TimedOut => format!(
            "`{shown}` did not finish within {} s (timeout_secs) and was killed, with the processes it started",
            call.timeout_secs
        ),
    };
    if let Some(asked) = call.lowered_from {
        report.push_str(&format!(
            " (timeout_secs {asked} was lowered to the maximum, {MAX_TIMEOUT_SECS})"
        ));
    }
    let output = &finished.output;
    if output.total() == 0 {
        report.push_str("\nno output");
    } else if output.is_cut() {
        report.push_str(&format!(
            "\noutput (stdout and stderr interleaved), {} bytes, over the cap of {} bytes: the first {} and the last {} are shown:\n",
            thousands(output.total()),
            thousands(MAX_OUTPUT_BYTES as u64),
            thousands(capture::HEAD_BYTES as u64),
            thousands(capture::TAIL_BYTES as u64),
        ));
        report.push_str(&output.text());
    } else {
        report.push_str("\noutput (stdout and stderr interleaved):\n");
        report.push_str(&output.text());
    }
    if finished.output_open {
        if !report.ends_with('\n') {
            report.push('\n');
        }
        report.push_str(
            "(a process the program started, outside its process group, still held the output open; what it wrote later is not shown)",
        );
    }
    report
}

/// The command as it ran, for messages: each argument as is when it is
/// plainly one word, quoted (with escapes) otherwise.
fn shown_command(call: &Call<'_>) -> String {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || "_-./=:@%+,^~".contains(c))
    };
    std::iter::once(&call.program)
        .chain(&call.args)
        .map(|s| {
            if plain(s) {
                (*s).to_owned()
            } else {
                format!("{s:?}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
