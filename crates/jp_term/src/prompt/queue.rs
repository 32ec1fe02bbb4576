//! [`Prompts`]: the queue in front of the [`Prompter`].
//!
//! A prompt must never stop the turn: while the user thinks, the provider
//! stream keeps being read, rendered and recorded. So each prompt's
//! terminal work runs on a blocking thread, and the turn awaits its answer
//! like any other future. One prompt shows at a time: a [`Ticket`], taken
//! when a call starts (`query::tickets::CallTickets`), fixes its place in
//! line, so prompts appear in call order however their futures are polled
//! and whichever call is decided first.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use jp_tool::Question;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::prompter::{Choice, LiveAnswer, LiveQuestion, PromptError, Prompter, YES_NO};

/// The turn's prompts, one at a time, in the order their tickets were
/// taken.
pub struct Prompts {
    backend: Arc<Mutex<Box<dyn Prompter>>>,
    available: bool,
    interrupt: CancellationToken,
    line: Mutex<Line>,
    serving: tokio::sync::watch::Sender<usize>,
}

/// The queue's bookkeeping.
#[derive(Default)]
struct Line {
    /// The next ticket's number.
    next: usize,
    /// Tickets done (answered or given up) but not yet reached.
    done: BTreeSet<usize>,
    /// The ticket whose prompt may show.
    serving: usize,
}

impl Prompts {
    /// Prompts through `backend`; Ctrl+C at a prompt cancels `interrupt`,
    /// and cancelling it ends every waiting prompt.
    #[must_use]
    pub fn new(mut backend: Box<dyn Prompter>, interrupt: CancellationToken) -> Self {
        backend.bind_interrupt(interrupt.clone());
        Self {
            available: backend.available(),
            backend: Arc::new(Mutex::new(backend)),
            interrupt,
            line: Mutex::new(Line::default()),
            serving: tokio::sync::watch::Sender::new(0),
        }
    }

    /// Whether prompts can be answered at all (architecture decision 6:
    /// when not, whatever would ask is declined).
    #[must_use]
    pub fn available(&self) -> bool {
        self.available
    }

    /// A place in line, taken now.
    #[must_use]
    pub fn ticket(&self) -> Ticket<'_> {
        let mut line = self.line.lock().unwrap_or_else(PoisonError::into_inner);
        let number = line.next;
        line.next += 1;
        Ticket {
            prompts: self,
            number,
            stop: self.interrupt.child_token(),
        }
    }

    /// A place in line, and the wait for it.
    ///
    /// # Errors
    ///
    /// [`PromptError::Interrupted`] when the turn is interrupted first.
    pub async fn turn(&self) -> Result<PromptTurn<'_>, PromptError> {
        self.ticket().wait().await
    }

    /// Asks `question` at once, ahead of the queue: the Ctrl+C menu. It is
    /// never asked while another prompt shows (there, Ctrl+C is a key, not
    /// a signal). Dropping the future ends the prompt.
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be asked or answered; Ctrl+C at it
    /// interrupts the turn.
    pub async fn urgent(&self, question: &str, choices: &[Choice]) -> Result<char, PromptError> {
        let stop = self.interrupt.child_token();
        let _end = stop.clone().drop_guard();
        let (question, choices) = (question.to_owned(), choices.to_vec());
        on_backend(&self.backend, stop, move |backend, stop| {
            backend.choose(&question, &choices, stop)
        })
        .await
    }

    /// Waits until no prompt is on the terminal. A prompt whose future was
    /// dropped ends on its own thread within a poll of the key reader; an
    /// editor or pager ends when the user closes it.
    pub async fn closed(&self) {
        let backend = Arc::clone(&self.backend);
        let _ = tokio::task::spawn_blocking(move || {
            drop(backend.lock().unwrap_or_else(PoisonError::into_inner));
        })
        .await;
    }

    fn done(&self, number: usize) {
        let mut guard = self.line.lock().unwrap_or_else(PoisonError::into_inner);
        let line = &mut *guard;
        line.done.insert(number);
        while line.done.remove(&line.serving) {
            line.serving += 1;
        }
        let serving = line.serving;
        drop(guard);
        self.serving.send_replace(serving);
    }
}

/// A place in the prompt queue. Dropping it gives the place up and ends
/// its prompt if one is showing.
pub struct Ticket<'a> {
    prompts: &'a Prompts,
    number: usize,
    /// Ends this ticket's prompt: cancelled with the turn, or on drop.
    stop: CancellationToken,
}

impl<'a> Ticket<'a> {
    /// Waits until this ticket's prompt may show.
    ///
    /// # Errors
    ///
    /// [`PromptError::Interrupted`] when the turn is interrupted first.
    pub async fn wait(self) -> Result<PromptTurn<'a>, PromptError> {
        let mut serving = self.prompts.serving.subscribe();
        tokio::select! {
            // An interrupt wins over a turn that came at the same time: a
            // prompt never flashes up after the turn was interrupted.
            biased;
            () = self.stop.cancelled() => Err(PromptError::Interrupted),
            reached = serving.wait_for(|s| *s == self.number) => match reached {
                Ok(_) => Ok(PromptTurn { ticket: self }),
                Err(_) => Err(PromptError::Interrupted),
            },
        }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        self.stop.cancel();
        self.prompts.done(self.number);
    }
}

/// The terminal, for one call's prompts: nothing else prompts until it is
/// dropped.
pub struct PromptTurn<'a> {
    ticket: Ticket<'a>,
}

impl PromptTurn<'_> {
    /// Runs `f` on the backend on a blocking thread.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut dyn Prompter, &CancellationToken) -> Result<T, PromptError> + Send + 'static,
    ) -> Result<T, PromptError> {
        let stop = self.ticket.stop.clone();
        on_backend(&self.ticket.prompts.backend, stop, f).await
    }

    /// [`Prompter::choose`].
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be asked or answered.
    pub async fn choose(&self, question: &str, choices: &[Choice]) -> Result<char, PromptError> {
        let (question, choices) = (question.to_owned(), choices.to_vec());
        self.blocking(move |backend, stop| backend.choose(&question, &choices, stop))
            .await
    }

    /// [`Prompter::choose_live`].
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be asked or answered.
    pub async fn choose_live(&self, question: &LiveQuestion) -> Result<LiveAnswer, PromptError> {
        let question = question.clone();
        self.blocking(move |backend, stop| backend.choose_live(&question, stop))
            .await
    }

    /// A yes/no question.
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be asked or answered.
    pub async fn confirm(&self, question: &str) -> Result<bool, PromptError> {
        Ok(self.choose(question, &YES_NO).await? == 'y')
    }

    /// [`Prompter::ask`].
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be asked or answered.
    pub async fn ask(&self, question: &Question) -> Result<Value, PromptError> {
        let question = question.clone();
        self.blocking(move |backend, stop| backend.ask(&question, stop))
            .await
    }

    /// [`Prompter::edit`].
    ///
    /// # Errors
    ///
    /// [`PromptError`] when no editor can run.
    pub async fn edit(&self, text: &str, file_name: &str) -> Result<String, PromptError> {
        let (text, file_name) = (text.to_owned(), file_name.to_owned());
        self.blocking(move |backend, _| backend.edit(&text, &file_name))
            .await
    }

    /// [`Prompter::page`].
    ///
    /// # Errors
    ///
    /// [`PromptError`] when it cannot be shown.
    pub async fn page(&self, text: &str) -> Result<(), PromptError> {
        let text = text.to_owned();
        self.blocking(move |backend, _| backend.page(&text)).await
    }
}

/// Runs `f` on `backend` on a blocking thread; `stop` ends its prompt.
async fn on_backend<T: Send + 'static>(
    backend: &Arc<Mutex<Box<dyn Prompter>>>,
    stop: CancellationToken,
    f: impl FnOnce(&mut dyn Prompter, &CancellationToken) -> Result<T, PromptError> + Send + 'static,
) -> Result<T, PromptError> {
    let backend = Arc::clone(backend);
    let task = tokio::task::spawn_blocking(move || {
        let mut backend = backend.lock().unwrap_or_else(PoisonError::into_inner);
        f(backend.as_mut(), &stop)
    });
    task.await
        .unwrap_or_else(|e| Err(PromptError::Terminal(format!("the prompt failed: {e}"))))
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
