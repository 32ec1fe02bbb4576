//! Asking the user: a [`Prompter`] on the terminal, or none at all.
//!
//! Prompts go to the terminal itself (`/dev/tty`), never to stdout, so
//! `jp q ... > answer.md` still allows them. They need stdin to be that
//! terminal: with piped input (`... | jp q`), `--non-interactive` or no
//! terminal at all, architecture decision 6 applies: whatever would ask is
//! declined, never auto-approved.

use std::io::{BufRead as _, BufReader, IsTerminal as _, Write as _};

use jp_tool::{AnswerKind, Question};
use serde_json::Value;

/// Why a prompt got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// No terminal to ask on.
    #[error("no terminal is available")]
    Unavailable,
    /// The terminal closed or failed.
    #[error("the terminal failed: {0}")]
    Terminal(String),
}

/// A way to ask the user.
pub trait Prompter {
    /// Whether prompts can be answered at all.
    fn available(&self) -> bool;

    /// Asks a yes/no question.
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be asked or answered.
    fn confirm(&mut self, question: &str) -> Result<bool, PromptError>;

    /// Asks a tool's question; the answer is the JSON value the tool gets.
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be asked or answered.
    fn ask(&mut self, question: &Question) -> Result<Value, PromptError>;

    /// Lets the user edit `text` in their editor; returns the edited text.
    ///
    /// # Errors
    ///
    /// [`PromptError`] when no editor can run.
    fn edit(&mut self, text: &str) -> Result<String, PromptError>;
}

/// No terminal: every prompt is unavailable.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoPrompter;

impl Prompter for NoPrompter {
    fn available(&self) -> bool {
        false
    }

    fn confirm(&mut self, _: &str) -> Result<bool, PromptError> {
        Err(PromptError::Unavailable)
    }

    fn ask(&mut self, _: &Question) -> Result<Value, PromptError> {
        Err(PromptError::Unavailable)
    }

    fn edit(&mut self, _: &str) -> Result<String, PromptError> {
        Err(PromptError::Unavailable)
    }
}

/// Prompts on the controlling terminal, line by line.
pub struct TerminalPrompter {
    input: BufReader<std::fs::File>,
    output: std::fs::File,
}

impl TerminalPrompter {
    /// The terminal, if jp has one: stdin is a terminal and `/dev/tty`
    /// opens.
    #[must_use]
    pub fn open() -> Option<Self> {
        if !std::io::stdin().is_terminal() {
            return None;
        }
        let input = std::fs::File::open("/dev/tty").ok()?;
        let output = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/tty")
            .ok()?;
        Some(Self {
            input: BufReader::new(input),
            output,
        })
    }

    fn read_line(&mut self, prompt: &str) -> Result<String, PromptError> {
        let fail = |e: std::io::Error| PromptError::Terminal(e.to_string());
        // Questions carry text from tools and the model: no raw escapes.
        write!(self.output, "{}", crate::printer::sanitize(prompt)).map_err(fail)?;
        self.output.flush().map_err(fail)?;
        let mut line = String::new();
        let n = self.input.read_line(&mut line).map_err(fail)?;
        if n == 0 {
            return Err(PromptError::Terminal("end of input".into()));
        }
        Ok(line.trim_end_matches(['\n', '\r']).to_owned())
    }
}

impl Prompter for TerminalPrompter {
    fn available(&self) -> bool {
        true
    }

    fn confirm(&mut self, question: &str) -> Result<bool, PromptError> {
        loop {
            let answer = self.read_line(&format!("{question} [y,n] "))?;
            match answer.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => return Ok(true),
                "n" | "no" => return Ok(false),
                _ => {}
            }
        }
    }

    fn ask(&mut self, question: &Question) -> Result<Value, PromptError> {
        match &question.answer {
            AnswerKind::Boolean => loop {
                let hint = match question.default.as_ref().and_then(Value::as_bool) {
                    Some(true) => "[Y,n]",
                    Some(false) => "[y,N]",
                    None => "[y,n]",
                };
                let answer = self.read_line(&format!("{} {hint} ", question.text))?;
                match answer.trim().to_ascii_lowercase().as_str() {
                    "y" | "yes" => return Ok(Value::Bool(true)),
                    "n" | "no" => return Ok(Value::Bool(false)),
                    "" if question.default.is_some() => {
                        return Ok(question.default.clone().unwrap_or(Value::Null));
                    }
                    _ => {}
                }
            },
            AnswerKind::Text => {
                let answer = self.read_line(&format!("{} ", question.text))?;
                if answer.is_empty()
                    && let Some(default) = &question.default
                {
                    return Ok(default.clone());
                }
                Ok(Value::String(answer))
            }
            AnswerKind::Select { options } => loop {
                let answer =
                    self.read_line(&format!("{} ({}) ", question.text, options.join(", ")))?;
                if answer.is_empty()
                    && let Some(default) = &question.default
                {
                    return Ok(default.clone());
                }
                if options.contains(&answer) {
                    return Ok(Value::String(answer));
                }
            },
        }
    }

    fn edit(&mut self, text: &str) -> Result<String, PromptError> {
        let editor = std::env::var("VISUAL")
            .or_else(|_| std::env::var("EDITOR"))
            .unwrap_or_else(|_| "vi".into());
        let fail = |e: std::io::Error| PromptError::Terminal(e.to_string());
        let file = tempfile::Builder::new()
            .prefix("jp-edit-")
            .suffix(".json")
            .tempfile()
            .map_err(fail)?;
        std::fs::write(file.path(), text).map_err(fail)?;
        let mut words = editor.split_whitespace();
        let program = words.next().unwrap_or("vi");
        let status = std::process::Command::new(program)
            .args(words)
            .arg(file.path())
            .status()
            .map_err(|e| PromptError::Terminal(format!("cannot run the editor `{editor}`: {e}")))?;
        if !status.success() {
            return Err(PromptError::Terminal(format!(
                "the editor `{editor}` exited with {status}"
            )));
        }
        std::fs::read_to_string(file.path()).map_err(fail)
    }
}
