//! The line editor of `jp chat`: rustyline, with the session's keys, Tab
//! completion of its commands and models, and history in a file.

use std::path::PathBuf;
use std::sync::OnceLock;

use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::Validator;
use rustyline::{
    Cmd, CompletionType, ConditionalEventHandler, Config, Editor, Event, EventContext,
    EventHandler, Helper, KeyCode, KeyEvent, Modifiers, Movement, RepeatCount,
};

use super::commands;

/// The editor as the session uses it.
pub type LineEditor = Editor<LineHelper, FileHistory>;

/// Completes the session's commands, and model names after `/model`.
#[derive(Default)]
pub struct LineHelper {
    /// The model names, read from the config at the first Tab after
    /// `/model`.
    models: OnceLock<Vec<String>>,
}

impl Completer for LineHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(commands::complete(line, pos, &|| {
            self.models
                .get_or_init(crate::cmd::complete::model_names)
                .clone()
        }))
    }
}

impl Hinter for LineHelper {
    type Hint = String;
}

impl Highlighter for LineHelper {}

impl Validator for LineHelper {}

impl Helper for LineHelper {}

/// Ctrl+C clears a line that has text; on an empty line it is an
/// interrupt (the session counts them: twice leaves).
struct ClearOrInterrupt;

impl ConditionalEventHandler for ClearOrInterrupt {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext<'_>) -> Option<Cmd> {
        Some(if ctx.line().is_empty() {
            Cmd::Interrupt
        } else {
            Cmd::Kill(Movement::WholeBuffer)
        })
    }
}

/// The editor: Emacs keys, Alt+Enter and Ctrl+J for a new line in the
/// message, pasted text kept whole (bracketed paste), Tab listing what
/// fits.
pub fn editor() -> rustyline::Result<LineEditor> {
    let config = Config::builder()
        .auto_add_history(false)
        .history_ignore_dups(true)?
        .history_ignore_space(true)
        .max_history_size(2000)?
        .completion_type(CompletionType::List)
        .bracketed_paste(true)
        .build();
    let mut editor = Editor::with_config(config)?;
    editor.set_helper(Some(LineHelper::default()));
    editor.bind_sequence(
        KeyEvent(KeyCode::Enter, Modifiers::ALT),
        EventHandler::Simple(Cmd::Newline),
    );
    editor.bind_sequence(KeyEvent::ctrl('J'), EventHandler::Simple(Cmd::Newline));
    editor.bind_sequence(
        KeyEvent::ctrl('C'),
        EventHandler::Conditional(Box::new(ClearOrInterrupt)),
    );
    Ok(editor)
}

/// Where the session's history is kept: `$XDG_DATA_HOME/jp/history`, else
/// `~/.local/share/jp/history` (readable by the user alone).
pub fn history_file(env: &[(String, String)]) -> Option<PathBuf> {
    Some(crate::ctx::user_dir(env, "XDG_DATA_HOME", ".local/share")?.join("history"))
}
