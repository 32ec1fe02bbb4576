//! How the user interrupts a turn: the signals, and the Ctrl+C menus
//! (while a response streams, while a tool runs).

use std::borrow::Cow;
use std::sync::LazyLock;

use futures_util::future::LocalBoxFuture;
use tokio_util::sync::CancellationToken;

use crate::exit;
use jp_term::prompt::{Answer, Choice, PromptError};

/// How the user interrupts a turn.
pub struct Interrupts {
    /// Cancelled to interrupt the turn: it stops the stream (closing the
    /// connection) or the running tool and its process group, and the turn
    /// ends keeping what it has.
    pub cancel: CancellationToken,
    /// A Ctrl+C that asks for the menu (continue, stop and reply, abort).
    pub menu: tokio::sync::mpsc::UnboundedReceiver<()>,
    /// The task that watches the signals: stopped when the turn's
    /// `Interrupts` goes, so that in `jp chat`, whose runtime outlives the
    /// turn, no past turn's watcher takes a later signal (found in
    /// review: a second Ctrl+C in a later turn exited as if pressed twice).
    watcher: Option<tokio::task::AbortHandle>,
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        if let Some(watcher) = self.watcher.take() {
            watcher.abort();
        }
    }
}

/// Watches the signals. SIGTERM, and SIGHUP when the terminal closes,
/// interrupt the turn; so does Ctrl+C without a terminal. With one
/// (`menus`), Ctrl+C asks for the menu instead. A signal after the turn was
/// interrupted exits at once, except SIGHUP: that is the terminal going
/// away, which a waiting prompt may have seen first and interrupted the
/// turn for, not a second press; the turn ends keeping what it has.
pub fn interrupt_on_signals(menus: bool) -> Interrupts {
    let token = CancellationToken::new();
    let cancel = token.clone();
    let (ask_menu, menu) = tokio::sync::mpsc::unbounded_channel();
    let watcher = tokio::spawn(async move {
        let mut signals = Signals::new();
        loop {
            let signal = signals.next().await;
            if cancel.is_cancelled() && signal == Signal::HangUp {
                continue;
            }
            if cancel.is_cancelled() {
                jp_term::prompt::restore_terminal();
                jp_term::errln!("interrupted twice; exiting");
                std::process::exit(i32::from(exit::INTERRUPTED));
            }
            if !(menus && signal == Signal::CtrlC && ask_menu.send(()).is_ok()) {
                cancel.cancel();
            }
        }
    });
    Interrupts {
        cancel: token,
        menu,
        watcher: Some(watcher.abort_handle()),
    }
}

/// Which signal arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signal {
    CtrlC,
    HangUp,
    Other,
}

/// The signals that interrupt a turn.
struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Self {
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// Waits for the next interrupting signal.
    async fn next(&mut self) -> Signal {
        #[cfg(unix)]
        {
            async fn recv(signal: &mut Option<tokio::signal::unix::Signal>) {
                match signal {
                    Some(signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                _ = tokio::signal::ctrl_c() => Signal::CtrlC,
                () = recv(&mut self.term) => Signal::Other,
                () = recv(&mut self.hup) => Signal::HangUp,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            Signal::CtrlC
        }
    }
}

/// The Ctrl+C menu while a response streams.
pub const STREAM_MENU_QUESTION: &str =
    "Ctrl+C while the response streams (c continue, s stop and reply, a abort):";

/// The answers to [`STREAM_MENU_QUESTION`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamMenu {
    /// `c`: keep receiving the response.
    Continue,
    /// `s`: stop it here and write a reply.
    Stop,
    /// `a`: stop here and exit.
    Abort,
}

impl Answer for StreamMenu {
    const ALL: &'static [Self] = &[Self::Continue, Self::Stop, Self::Abort];

    fn key(self) -> char {
        match self {
            Self::Continue => 'c',
            Self::Stop => 's',
            Self::Abort => 'a',
        }
    }

    fn help(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Self::Continue => "continue: keep receiving the response",
            Self::Stop => "stop it here, keep what arrived, and write a reply",
            Self::Abort => "abort: stop here, keep what arrived, and exit (so does Ctrl+C)",
        })
    }
}

/// [`StreamMenu`]'s choices.
pub static STREAM_MENU: LazyLock<Vec<Choice>> =
    LazyLock::new(|| StreamMenu::choices(StreamMenu::ALL));

/// The Ctrl+C menu while a tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolMenu {
    /// `c`: let the tool run.
    Continue,
    /// `s`: stop the tool and write a reply.
    Stop,
    /// `r`: restart the tool with the same arguments.
    Restart,
    /// `a`: stop the tool and exit.
    Abort,
}

impl Answer for ToolMenu {
    const ALL: &'static [Self] = &[Self::Continue, Self::Stop, Self::Restart, Self::Abort];

    fn key(self) -> char {
        match self {
            Self::Continue => 'c',
            Self::Stop => 's',
            Self::Restart => 'r',
            Self::Abort => 'a',
        }
    }

    fn help(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Self::Continue => "continue: let the tool run",
            Self::Stop => "stop the tool (recorded as interrupted) and write a reply",
            Self::Restart => "restart the tool with the same arguments",
            Self::Abort => "abort: stop the tool and exit (so does Ctrl+C)",
        })
    }
}

/// [`ToolMenu`]'s choices.
pub static TOOL_MENU: LazyLock<Vec<Choice>> = LazyLock::new(|| ToolMenu::choices(ToolMenu::ALL));

/// Ctrl+C with a terminal: opens the menu `open` makes, or aborts the turn
/// when a menu is open already.
pub fn ctrl_c<'m, F>(
    menu: &mut Option<LocalBoxFuture<'m, Result<char, PromptError>>>,
    cancel: &CancellationToken,
    open: impl FnOnce() -> F,
) where
    F: std::future::Future<Output = Result<char, PromptError>> + 'm,
{
    if menu.is_some() {
        cancel.cancel();
    } else {
        *menu = Some(Box::pin(open()));
    }
}

/// The answer of the menu in `menu`, which must be open.
pub async fn answer(
    menu: &mut Option<LocalBoxFuture<'_, Result<char, PromptError>>>,
) -> Result<char, PromptError> {
    match menu {
        Some(menu) => menu.await,
        None => std::future::pending().await,
    }
}
