//! What asking is: the [`Prompter`] trait, the one-key [`Choice`]s it
//! offers, why a prompt got no answer ([`PromptError`]), and
//! [`NoPrompter`] for when there is no terminal.

use std::borrow::Cow;

use jp_tool::Question;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The key (lowercase).
    pub key: char,
    /// What it does: `run the call`.
    pub help: Cow<'static, str>,
}

/// The answers to one kind of question, as an enum: the keys a prompt
/// offers, what `?` says of each and what the asker does with each all come
/// from it, so every key offered is one the asker's `match` handles (a key
/// added to a table without a `match` arm once declined a call silently).
pub trait Answer: Copy + Eq + Sized + 'static {
    /// Every answer, in the order the keys show.
    const ALL: &'static [Self];

    /// Its key (lowercase).
    fn key(self) -> char;

    /// What it does, for `?`.
    fn help(self) -> Cow<'static, str>;

    /// `answers` as a prompt's choices.
    #[must_use]
    fn choices(answers: &[Self]) -> Vec<Choice> {
        answers
            .iter()
            .map(|answer| Choice {
                key: answer.key(),
                help: answer.help(),
            })
            .collect()
    }

    /// The answer whose key a prompt returned.
    ///
    /// # Errors
    ///
    /// The prompt's error, or [`PromptError::Terminal`] for a key that is
    /// no answer (a prompter returns only keys it offered).
    fn of(key: Result<char, PromptError>) -> Result<Self, PromptError> {
        let key = key?;
        Self::ALL
            .iter()
            .copied()
            .find(|answer| answer.key() == key)
            .ok_or_else(|| PromptError::Terminal(format!("`{key}` is not an answer offered")))
    }
}

/// A question that may change while it is asked (a call's, while its
/// arguments stream): the latest value is the question.
pub type LiveQuestion = tokio::sync::watch::Receiver<Live>;

/// One state of a [`LiveQuestion`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Live {
    /// The question: `Run fs_create_file(<streaming>)?`.
    pub text: String,
    /// Its answers; what `?` says of them may change with the question
    /// (`a` names the scope it allows once a call is complete).
    pub choices: Vec<Choice>,
    /// Whether this is the question's last state.
    pub settled: bool,
}

/// The answer to a [`LiveQuestion`]: the key, and whether the question
/// was settled when it was answered (what the user saw).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveAnswer {
    /// The key pressed.
    pub key: char,
    /// Whether the question answered was [`Live::settled`].
    pub settled: bool,
}

/// `y`/`n` for a plain yes-or-no question.
pub const YES_NO: [Choice; 2] = [
    Choice {
        key: 'y',
        help: Cow::Borrowed("yes"),
    },
    Choice {
        key: 'n',
        help: Cow::Borrowed("no"),
    },
];

/// A way to ask the user: the terminal work of one prompt, done on a
/// blocking thread. The turn asks through [`Prompts`](super::Prompts),
/// which queues prompts and keeps the turn running while one waits.
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

    /// [`choose`](Self::choose) for a question that may change while it
    /// waits: `question` holds its latest state, and a terminal redraws
    /// the prompt line when it changes (a call's summary once its
    /// arguments are complete) and shows the latest help at `?`. Elsewhere
    /// it is asked as it is now. The answer says which state was answered.
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be asked or answered.
    fn choose_live(
        &mut self,
        question: &LiveQuestion,
        stop: &CancellationToken,
    ) -> Result<LiveAnswer, PromptError> {
        let now = question.borrow().clone();
        let key = self.choose(&now.text, &now.choices, stop)?;
        Ok(LiveAnswer {
            key,
            settled: now.settled,
        })
    }

    /// Asks a tool's question; the answer is the JSON value the tool gets.
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be asked or answered.
    fn ask(&mut self, question: &Question, stop: &CancellationToken) -> Result<Value, PromptError>;

    /// Lets the user edit `text` in their editor, in a file named
    /// `file_name` (`lib.rs`, `arguments.json`: its extension tells the
    /// editor the language); returns the edited text.
    ///
    /// # Errors
    ///
    /// [`PromptError`] when no editor can run.
    fn edit(&mut self, text: &str, file_name: &str) -> Result<String, PromptError>;

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

    fn edit(&mut self, _: &str, _: &str) -> Result<String, PromptError> {
        Err(PromptError::Unavailable)
    }

    fn page(&mut self, _: &str) -> Result<(), PromptError> {
        Err(PromptError::Unavailable)
    }
}

#[cfg(test)]
#[path = "prompter_tests.rs"]
mod tests;
