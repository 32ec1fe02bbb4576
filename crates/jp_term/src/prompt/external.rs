//! The user's own programs: the editor (`$VISUAL`, `$EDITOR`) and the pager
//! (`$PAGER`), run as git and most Unix tools run them.

use super::prompter::PromptError;

/// Runs `$VISUAL`, `$EDITOR` or `vi` on a temporary copy of `text` and
/// returns what the user saved. The copy is named `file_name` (`lib.rs`,
/// `arguments.json`) in a directory of its own, so that the editor knows
/// the language from its name. An empty variable counts as unset.
///
/// # Errors
///
/// When the file cannot be written or read, or the editor cannot run or
/// fails.
pub fn edit_in_editor(text: &str, file_name: &str) -> Result<String, PromptError> {
    let fail = |e: std::io::Error| PromptError::Terminal(e.to_string());
    let dir = tempfile::Builder::new()
        .prefix("jp-edit-")
        .tempdir()
        .map_err(fail)?;
    let path = dir.path().join(file_name);
    std::fs::write(&path, text).map_err(fail)?;
    run_editor(&path).map_err(PromptError::Terminal)?;
    std::fs::read_to_string(&path).map_err(fail)
}

/// Runs the user's editor (`$VISUAL`, else `$EDITOR`, else `vi`) on
/// `path` and waits for it to close. It gets the terminal (`/dev/tty`) as
/// its stdin and stdout even when jp's are a pipe or a file (`jp query >
/// answer.md`).
///
/// # Errors
///
/// Why the editor did not run, or how it failed: it names no command, or
/// it exited with a failure.
pub fn run_editor(path: &std::path::Path) -> Result<(), String> {
    let editor = editor_line(std::env::var("VISUAL").ok(), std::env::var("EDITOR").ok());
    if missing_program(&editor).is_some() {
        return Err(format!("cannot run the editor `{editor}`: no such command"));
    }
    let mut command = user_command(&editor);
    command.arg(path);
    if let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    {
        if let Ok(input) = tty.try_clone() {
            command.stdin(input);
        }
        command.stdout(tty);
    }
    let status = super::echo::echoing(|| command.status())
        .map_err(|e| format!("cannot run the editor `{editor}`: {e}"))?;
    if let Some(why) = not_run(status) {
        return Err(format!("cannot run the editor `{editor}`: {why}"));
    }
    if !status.success() {
        return Err(format!("the editor `{editor}` {}", ended(status)));
    }
    Ok(())
}

/// The editor's command line: `$VISUAL`, else `$EDITOR`, else `vi`; an
/// empty or blank variable counts as unset (run, it would make the file
/// the command).
fn editor_line(visual: Option<String>, editor: Option<String>) -> String {
    let set = |value: Option<String>| value.filter(|v| !v.trim().is_empty());
    set(visual)
        .or_else(|| set(editor))
        .unwrap_or_else(|| "vi".into())
}

/// The pager to show a call's arguments in: `$PAGER`, or `less -R` when
/// `PAGER` is unset (or empty) and `less` is on the `PATH`; `None` when
/// there is neither.
#[must_use]
pub fn pager() -> Option<String> {
    match std::env::var("PAGER") {
        Ok(pager) if !pager.trim().is_empty() => Some(pager),
        _ => {
            let path = std::env::var_os("PATH")?;
            std::env::split_paths(&path)
                .any(|dir| dir.join("less").is_file())
                .then(|| "less -R".to_owned())
        }
    }
}

/// Why the pager did not show the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PagerFailure {
    /// It could not be started: the text was not shown.
    NotStarted(String),
    /// It ran and failed: the user may have seen the text.
    Failed(String),
}

/// Runs `pager` (a command line, like `$EDITOR`: see `user_command`)
/// with `text` on its stdin and the terminal as its output (jp's stdout
/// may be a file), and waits for it to end.
///
/// # Errors
///
/// [`PagerFailure`] when it cannot start, or exits with a failure.
pub fn run_pager(pager: &str, text: &str) -> Result<(), PagerFailure> {
    if missing_program(pager).is_some() {
        return Err(PagerFailure::NotStarted(format!(
            "cannot run the pager `{pager}`: no such command"
        )));
    }
    let mut command = user_command(pager);
    command.stdin(std::process::Stdio::piped());
    if let Ok(tty) = std::fs::OpenOptions::new().write(true).open("/dev/tty") {
        command.stdout(tty);
    }
    let status = super::echo::echoing(|| {
        let mut child = command.spawn().map_err(|e| {
            PagerFailure::NotStarted(format!("cannot run the pager `{pager}`: {e}"))
        })?;
        if let Some(mut stdin) = child.stdin.take() {
            use std::io::Write as _;
            // A pager the user quits before it read everything closes the
            // pipe: not a failure.
            let _ = stdin.write_all(text.as_bytes());
        }
        child
            .wait()
            .map_err(|e| PagerFailure::Failed(format!("the pager `{pager}` failed: {e}")))
    })?;
    if let Some(why) = not_run(status) {
        return Err(PagerFailure::NotStarted(format!(
            "cannot run the pager `{pager}`: {why}"
        )));
    }
    if status.success() {
        Ok(())
    } else {
        Err(PagerFailure::Failed(format!(
            "the pager `{pager}` {}",
            ended(status)
        )))
    }
}

/// The command that runs `command_line` (`$VISUAL`, `$EDITOR`, `$PAGER`)
/// as git and most Unix tools do: through `/bin/sh -c`, so that it may
/// quote a program whose path has spaces (`'/opt/My Editor/edit' --wait`)
/// or use the shell's syntax. Arguments added to the command follow the
/// line as `"$@"`. On systems other than Unix, the line is split at
/// whitespace.
fn user_command(command_line: &str) -> std::process::Command {
    if cfg!(unix) {
        let mut command = std::process::Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(format!("{command_line} \"$@\""))
            .arg(command_line);
        command
    } else {
        let mut words = command_line.split_whitespace();
        let mut command = std::process::Command::new(words.next().unwrap_or_default());
        command.args(words);
        command
    }
}

/// The program `command_line` names, when it is a plain name (no path, no
/// quoting or other shell syntax) that the shell knows neither as a
/// program on the `PATH` nor as a builtin (`exec vim` is fine): such a
/// command is reported without running it, where the shell would print
/// its own `not found` line on the terminal first.
fn missing_program(command_line: &str) -> Option<&str> {
    let program = command_line.split_whitespace().next()?;
    let plain = program
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'));
    if !plain || !cfg!(unix) {
        return None;
    }
    let known = std::process::Command::new("/bin/sh")
        .args(["-c", "command -v \"$1\"", "sh", program])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        // No shell to ask: let running it say what is wrong.
        .map_or(true, |status| status.success());
    (!known).then_some(program)
}

/// Why a [`user_command`] most likely did not run its program, from the
/// shell's exit status: 127 when it found no such command, 126 when it
/// could not run it (the shell says which on the terminal). A program that
/// ran and exited with one of these itself is taken for the same: a guess,
/// and the message says whose code it is.
/// How a program that failed ended: `exited with status 1`, or the
/// signal that killed it.
fn ended(status: std::process::ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => {
            #[cfg(unix)]
            if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
                return format!("was killed by signal {signal}");
            }
            "failed".to_owned()
        }
    }
}

fn not_run(status: std::process::ExitStatus) -> Option<&'static str> {
    if !cfg!(unix) {
        return None;
    }
    match status.code() {
        Some(127) => Some("no such command (the shell's exit status 127)"),
        Some(126) => Some("it cannot be run (the shell's exit status 126)"),
        _ => None,
    }
}

#[cfg(all(test, unix))]
#[path = "external_tests.rs"]
mod tests;
