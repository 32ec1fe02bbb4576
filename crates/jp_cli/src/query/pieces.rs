//! The [`PieceReader`]: what reads each piece of a call's arguments while
//! the turn parses it ([`ReadPieces`]), borrowed from the parser, so
//! nothing is copied per fragment (issue 14). It draws the piece and hands
//! it to the [`Calls`] machine; what they give is the
//! [`Response`](super::stream::Response)'s to carry out once the turn has
//! returned.

use jp_config::AppConfig;
use jp_conversation::ProgressRef;

use super::calls::{CallInput, CallState, CallStep, Calls};
use super::render::{Line, ToolRenderer};
use super::session::{Session, hidden};
use super::turn::{ReadPieces, StreamView};

/// Reads each piece of a call's arguments as the turn parses it
/// ([`ReadPieces`]): draws it on a terminal (unless the tool's calls are
/// hidden) and hands it to the [`Calls`] machine, keeping what both give,
/// in order, for the [`Response`](super::stream::Response) to carry out once the turn's input is
/// handled. It prints nothing and runs nothing itself.
pub struct PieceReader<'r, 't> {
    calls: &'r mut Calls<'t>,
    renderer: Option<&'r mut ToolRenderer>,
    config: &'r AppConfig,
    /// What the pieces gave so far, in order.
    pub(super) read: Vec<Read>,
}

/// What a piece gave: lines to draw, steps for the shell.
pub(super) enum Read {
    /// Lines to draw below the content so far.
    Lines(Vec<Line>),
    /// What [`Calls`] asked for.
    Steps(Vec<CallStep>),
}

impl<'r, 't> PieceReader<'r, 't> {
    /// A reader into `calls`, drawing with `session`'s renderer.
    pub(super) fn new(calls: &'r mut Calls<'t>, session: &'r mut Session) -> Self {
        Self {
            calls,
            renderer: session.renderer.as_mut(),
            config: &session.config,
            read: Vec::new(),
        }
    }

    /// Reads piece `progress` of call number `call`, whose state after it
    /// is `state`.
    pub(super) fn take<'p>(
        &mut self,
        call: usize,
        progress: ProgressRef<'p>,
        state: &'p CallState<'p>,
    ) {
        tracing::trace!(?progress, "argument progress");
        if !hidden(self.config, progress.tool_name)
            && let Some(renderer) = &mut self.renderer
        {
            let lines = renderer.progress_ref(progress);
            if !lines.is_empty() {
                self.read.push(Read::Lines(lines));
            }
        }
        let steps = self.calls.handle(CallInput::Piece {
            call,
            progress,
            state,
        });
        if !steps.is_empty() {
            self.read.push(Read::Steps(steps));
        }
    }
}

impl ReadPieces for PieceReader<'_, '_> {
    fn read(&mut self, call: usize, progress: ProgressRef<'_>, view: &StreamView<'_>) {
        let known = |key: &str| view.argument(key);
        let state = CallState {
            argument: &known,
            bytes: view.argument_bytes(),
            others: view.others_streaming(),
        };
        self.take(call, progress, &state);
    }
}
