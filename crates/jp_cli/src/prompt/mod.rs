//! Asking the user: a [`Prompter`] on the terminal, or none at all.
//!
//! Prompts go to the terminal itself (`/dev/tty`), never to stdout, so
//! `jp q ... > answer.md` still allows them. They need stdin to be that
//! terminal: with piped input (`... | jp q`), `--non-interactive` or no
//! terminal at all, architecture decision 6 applies: whatever would ask is
//! declined, never auto-approved.
//!
//! Choices are one key, no Enter ([`Prompter::choose`]). Ctrl+C at a
//! prompt interrupts the turn like Ctrl+C anywhere else
//! ([`PromptError::Interrupted`]), and an interrupt from a signal while a
//! prompt waits ends the prompt the same way.
//!
//! A prompt never stops the turn: [`Prompts`] runs each one on a blocking
//! thread, one at a time in call order, while the turn keeps reading and
//! showing the provider stream; the printer draws that output above the
//! waiting prompt line.

mod queue;
mod terminal;

use jp_tool::Question;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use queue::{PromptTurn, Prompts, Ticket};
pub use terminal::{TerminalPrompter, install_panic_restore, restore_terminal};

/// Why a prompt got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// No terminal to ask on.
    #[error("no terminal is available")]
    Unavailable,
    /// The user pressed Ctrl+C, or the turn was interrupted by a signal.
    #[error("interrupted")]
    Interrupted,
    /// The terminal closed or failed.
    #[error("the terminal failed: {0}")]
    Terminal(String),
}

/// One answer of a one-key question: its key and what it does, for the
/// `?` help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The key (lowercase).
    pub key: char,
    /// What it does: `run the call`.
    pub help: &'static str,
}

/// `y`/`n` for a plain yes-or-no question.
pub const YES_NO: [Choice; 2] = [
    Choice {
        key: 'y',
        help: "yes",
    },
    Choice {
        key: 'n',
        help: "no",
    },
];

/// A way to ask the user: the terminal work of one prompt, done on a
/// blocking thread. The turn asks through [`Prompts`], which queues prompts
/// and keeps the turn running while one waits.
///
/// `stop` ends a waiting prompt with [`PromptError::Interrupted`]: the
/// turn was interrupted, or the answer is no longer needed.
pub trait Prompter: Send {
    /// Whether prompts can be answered at all.
    fn available(&self) -> bool;

    /// Ctrl+C at a prompt cancels `cancel` (the turn's interrupt).
    fn bind_interrupt(&mut self, cancel: CancellationToken) {
        let _ = cancel;
    }

    /// Asks `question` with one-key `choices` (shown as `[y,n,e,?]`; `?`
    /// is always offered and shows each choice's help); returns the key.
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be asked or answered.
    fn choose(
        &mut self,
        question: &str,
        choices: &[Choice],
        stop: &CancellationToken,
    ) -> Result<char, PromptError>;

    /// Asks a tool's question; the answer is the JSON value the tool gets.
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be asked or answered.
    fn ask(&mut self, question: &Question, stop: &CancellationToken) -> Result<Value, PromptError>;

    /// Lets the user edit `text` in their editor; returns the edited text.
    ///
    /// # Errors
    ///
    /// [`PromptError`] when no editor can run.
    fn edit(&mut self, text: &str) -> Result<String, PromptError>;

    /// Shows `text` (a call's arguments in full) in the user's pager, or
    /// prints it when there is none.
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be shown.
    fn page(&mut self, text: &str) -> Result<(), PromptError>;
}

/// No terminal: every prompt is unavailable.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoPrompter;

impl Prompter for NoPrompter {
    fn available(&self) -> bool {
        false
    }

    fn choose(
        &mut self,
        _: &str,
        _: &[Choice],
        _: &CancellationToken,
    ) -> Result<char, PromptError> {
        Err(PromptError::Unavailable)
    }

    fn ask(&mut self, _: &Question, _: &CancellationToken) -> Result<Value, PromptError> {
        Err(PromptError::Unavailable)
    }

    fn edit(&mut self, _: &str) -> Result<String, PromptError> {
        Err(PromptError::Unavailable)
    }

    fn page(&mut self, _: &str) -> Result<(), PromptError> {
        Err(PromptError::Unavailable)
    }
}

/// Runs `$VISUAL`, `$EDITOR` or `vi` on a temporary copy of `text` and
/// returns what the user saved. An empty variable counts as unset.
///
/// # Errors
///
/// When the file cannot be written or read, or the editor cannot run or
/// fails.
pub fn edit_in_editor(text: &str) -> Result<String, PromptError> {
    let editor = editor_line(std::env::var("VISUAL").ok(), std::env::var("EDITOR").ok());
    let fail = |e: std::io::Error| PromptError::Terminal(e.to_string());
    let file = tempfile::Builder::new()
        .prefix("jp-edit-")
        .suffix(".json")
        .tempfile()
        .map_err(fail)?;
    std::fs::write(file.path(), text).map_err(fail)?;
    if missing_program(&editor).is_some() {
        return Err(PromptError::Terminal(format!(
            "cannot run the editor `{editor}`: no such command"
        )));
    }
    let status = user_command(&editor)
        .arg(file.path())
        .status()
        .map_err(|e| PromptError::Terminal(format!("cannot run the editor `{editor}`: {e}")))?;
    if let Some(why) = not_run(status) {
        return Err(PromptError::Terminal(format!(
            "cannot run the editor `{editor}`: {why}"
        )));
    }
    if !status.success() {
        return Err(PromptError::Terminal(format!(
            "the editor `{editor}` exited with {status}"
        )));
    }
    std::fs::read_to_string(file.path()).map_err(fail)
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

/// Runs `pager` (a command line, like `$EDITOR`: see [`user_command`])
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
    let mut child = command
        .spawn()
        .map_err(|e| PagerFailure::NotStarted(format!("cannot run the pager `{pager}`: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write as _;
        // A pager the user quits before it read everything closes the
        // pipe: not a failure.
        let _ = stdin.write_all(text.as_bytes());
    }
    let status = child
        .wait()
        .map_err(|e| PagerFailure::Failed(format!("the pager `{pager}` failed: {e}")))?;
    if let Some(why) = not_run(status) {
        return Err(PagerFailure::NotStarted(format!(
            "cannot run the pager `{pager}`: {why}"
        )));
    }
    if status.success() {
        Ok(())
    } else {
        Err(PagerFailure::Failed(format!(
            "the pager `{pager}` exited with {status}"
        )))
    }
}

/// A prompter that answers from a script, for tests of the code that asks.
#[cfg(test)]
#[derive(Debug, Default)]
pub struct ScriptedPrompter {
    /// Keys [`Prompter::choose`] returns, in order; `None` is Ctrl+C.
    pub keys: std::collections::VecDeque<Option<char>>,
    /// Texts [`Prompter::edit`] returns, in order.
    pub edits: std::collections::VecDeque<String>,
    /// Answers [`Prompter::ask`] returns, in order.
    pub answers: std::collections::VecDeque<Value>,
    /// Every question asked, with its keys: `Run x? [y,n,e,v]`; shared, so
    /// a test can read it after handing the prompter over.
    pub asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// Every tool question [`Prompter::ask`] got, whole (its kind, options
    /// and default included); shared like `asked`.
    pub questions: std::sync::Arc<std::sync::Mutex<Vec<Question>>>,
    /// The text each [`Prompter::edit`] opened the editor on; shared like
    /// `asked`.
    pub opened: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// The text each [`Prompter::page`] showed; shared like `asked`.
    pub paged: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

#[cfg(test)]
impl Prompter for ScriptedPrompter {
    fn available(&self) -> bool {
        true
    }

    fn choose(
        &mut self,
        question: &str,
        choices: &[Choice],
        stop: &CancellationToken,
    ) -> Result<char, PromptError> {
        // Like the terminal: a prompt whose turn was interrupted ends.
        if stop.is_cancelled() {
            return Err(PromptError::Interrupted);
        }
        let keys = choices
            .iter()
            .map(|c| c.key.to_string())
            .collect::<Vec<_>>();
        self.asked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(format!("{question} [{}]", keys.join(",")));
        match self.keys.pop_front() {
            Some(Some(key)) if choices.iter().any(|c| c.key == key) => Ok(key),
            Some(Some(key)) => Err(PromptError::Terminal(format!("{key} is not offered"))),
            Some(None) => Err(PromptError::Interrupted),
            None => Err(PromptError::Terminal("the script has no more keys".into())),
        }
    }

    fn ask(&mut self, question: &Question, stop: &CancellationToken) -> Result<Value, PromptError> {
        if stop.is_cancelled() {
            return Err(PromptError::Interrupted);
        }
        self.asked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(question.text.clone());
        self.questions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(question.clone());
        self.answers
            .pop_front()
            .ok_or_else(|| PromptError::Terminal("no scripted answer".into()))
    }

    fn edit(&mut self, text: &str) -> Result<String, PromptError> {
        self.opened
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(text.to_owned());
        self.edits
            .pop_front()
            .ok_or_else(|| PromptError::Terminal("the script has no more edits".into()))
    }

    fn page(&mut self, text: &str) -> Result<(), PromptError> {
        self.paged
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(text.to_owned());
        Ok(())
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
mod user_command_tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt as _;
    use std::process::Stdio;

    use super::{not_run, user_command};

    #[test]
    fn a_quoted_program_path_with_spaces_runs_with_its_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("My Editor");
        std::fs::create_dir(&bin).unwrap();
        let program = bin.join("edit");
        std::fs::write(
            &program,
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let line = format!("'{}' --wait", program.display());
        let status = user_command(&line)
            .arg("/tmp/a file.json")
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(not_run(status), None);
        assert_eq!(
            std::fs::read_to_string(bin.join("args")).unwrap(),
            "--wait\n/tmp/a file.json\n"
        );
    }

    #[test]
    fn an_empty_editor_variable_counts_as_unset() {
        let line = |visual: Option<&str>, editor: Option<&str>| {
            super::editor_line(visual.map(str::to_owned), editor.map(str::to_owned))
        };
        assert_eq!(line(Some(""), Some("nano")), "nano");
        assert_eq!(line(Some("  "), Some(" ")), "vi");
        assert_eq!(line(None, None), "vi");
        assert_eq!(line(Some("code --wait"), Some("nano")), "code --wait");
    }

    #[test]
    fn a_plain_name_not_on_the_path_is_missing_before_anything_runs() {
        assert_eq!(
            super::missing_program("jp-test-no-such-pager -R"),
            Some("jp-test-no-such-pager")
        );
        assert_eq!(super::missing_program("sh -c true"), None);
        // A builtin is no program on the PATH, and runs all the same.
        assert_eq!(super::missing_program("exec true"), None);
        // Paths, quoting and shell syntax are left to the shell.
        assert_eq!(super::missing_program("'/opt/My Editor/edit' -w"), None);
        assert_eq!(super::missing_program("/no/such/editor"), None);
        assert_eq!(super::missing_program("$HOME/bin/edit"), None);
    }

    #[test]
    fn a_program_that_is_not_there_is_told_apart_from_one_that_failed() {
        let run = |line: &str| {
            user_command(line)
                .arg("file")
                .stderr(Stdio::null())
                .status()
                .unwrap()
        };
        assert_eq!(
            not_run(run("jp-test-no-such-editor --wait")),
            Some("no such command (the shell's exit status 127)")
        );
        let failed = run("false");
        assert!(!failed.success());
        assert_eq!(not_run(failed), None);
    }
}
