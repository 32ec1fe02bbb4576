//! How the user interrupts a turn: the signals, and the Ctrl+C menus
//! (while a response streams, while a tool runs).

use std::borrow::Cow;

use futures_util::future::LocalBoxFuture;
use tokio_util::sync::CancellationToken;

use crate::exit;
use jp_term::prompt::{Choice, PromptError};

/// How the user interrupts a turn.
pub struct Interrupts {
    /// Cancelled to interrupt the turn: it stops the stream (closing the
    /// connection) or the running tool and its process group, and the turn
    /// ends keeping what it has.
    pub cancel: CancellationToken,
    /// A Ctrl+C that asks for the menu (continue, stop and reply, abort).
    pub menu: tokio::sync::mpsc::UnboundedReceiver<()>,
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
    tokio::spawn(async move {
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
pub const STREAM_MENU: [Choice; 3] = [
    Choice {
        key: 'c',
        help: Cow::Borrowed("continue: keep receiving the response"),
    },
    Choice {
        key: 's',
        help: Cow::Borrowed("stop it here, keep what arrived, and write a reply"),
    },
    Choice {
        key: 'a',
        help: Cow::Borrowed("abort: stop here, keep what arrived, and exit (so does Ctrl+C)"),
    },
];

/// The Ctrl+C menu while a tool runs.
pub const TOOL_MENU: [Choice; 4] = [
    Choice {
        key: 'c',
        help: Cow::Borrowed("continue: let the tool run"),
    },
    Choice {
        key: 's',
        help: Cow::Borrowed("stop the tool (recorded as interrupted) and write a reply"),
    },
    Choice {
        key: 'r',
        help: Cow::Borrowed("restart the tool with the same arguments"),
    },
    Choice {
        key: 'a',
        help: Cow::Borrowed("abort: stop the tool and exit (so does Ctrl+C)"),
    },
];

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
