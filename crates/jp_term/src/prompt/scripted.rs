//! [`ScriptedPrompter`]: answers from a script, for tests of the code that
//! asks.

use jp_tool::Question;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::prompter::{Choice, PromptError, Prompter};

/// A prompter that answers from a script, for tests of the code that asks.
#[derive(Debug, Default)]
pub struct ScriptedPrompter {
    /// Keys [`Prompter::choose`] returns, in order; `None` is Ctrl+C.
    pub keys: std::collections::VecDeque<Option<char>>,
    /// Texts [`Prompter::edit`] returns, in order.
    pub edits: std::collections::VecDeque<String>,
    /// Answers [`Prompter::ask`] returns, in order.
    pub answers: std::collections::VecDeque<Value>,
    /// Every question asked, with its keys: `Run x? [y,a,n,e,v]`; shared, so
    /// a test can read it after handing the prompter over.
    pub asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// Every tool question [`Prompter::ask`] got, whole (its kind, options
    /// and default included); shared like `asked`.
    pub questions: std::sync::Arc<std::sync::Mutex<Vec<Question>>>,
    /// The text each [`Prompter::edit`] opened the editor on; shared like
    /// `asked`.
    pub opened: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// The name of the file each [`Prompter::edit`] opened; shared like
    /// `asked`.
    pub opened_files: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// The text each [`Prompter::page`] showed; shared like `asked`.
    pub paged: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

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

    fn edit(&mut self, text: &str, file_name: &str) -> Result<String, PromptError> {
        self.opened
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(text.to_owned());
        self.opened_files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(file_name.to_owned());
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
