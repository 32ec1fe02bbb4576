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

mod echo;
pub mod external;
mod keys;
mod prompter;
mod queue;
mod terminal;
mod typeahead;

pub use echo::{Quiet, quiet_after_each_stop, remember_modes};
pub use keys::{Decoder, Key};
pub use prompter::{
    Answer, Choice, Live, LiveAnswer, LiveQuestion, NoPrompter, PromptError, Prompter,
};
pub use queue::{PromptTurn, Prompts, Ticket};
pub use terminal::{KeyReader, RawMode, TerminalPrompter, install_panic_restore, restore_terminal};
pub use typeahead::{TypeAhead, Typed};

#[cfg(any(test, feature = "test-support"))]
mod scripted;
#[cfg(any(test, feature = "test-support"))]
pub use prompter::YES_NO;
#[cfg(any(test, feature = "test-support"))]
pub use scripted::ScriptedPrompter;
