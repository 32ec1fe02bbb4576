//! The terminal's echo, off while a turn prints.
//!
//! A key typed while the answer streams is echoed by the terminal itself
//! wherever the cursor is: Ctrl+C leaves a `^C` in the middle of the text,
//! and typed-ahead letters land in it too. While [`Quiet`] lives, the
//! terminal does not echo (its `ECHO` flag is off); the keys still reach
//! jp, Ctrl+C still raises SIGINT, and every prompt draws what it reads
//! itself. The flags are put back as they were when it ends, before a
//! program of the user's own (the editor, the pager) runs
//! ([`echoing`]), and on the exits that skip destructors
//! ([`restore`], called by [`super::restore_terminal`]). A job stopped
//! and continued (Ctrl+Z, `fg`) gets echo off again
//! ([`quiet_after_each_stop`]); a job in the background leaves the
//! terminal alone.

#[cfg(unix)]
mod unix {
    use std::io::IsTerminal as _;
    use std::sync::Mutex;

    use rustix::termios::{LocalModes, OptionalActions, Termios, tcgetattr, tcsetattr};

    /// The terminal's modes from before [`Quiet::start`], while it lives.
    static SAVED: Mutex<Option<Termios>> = Mutex::new(None);

    /// Whether the [`Quiet`] that lives reads keys one by one
    /// ([`Quiet::start_keys`]) rather than only silencing echo.
    static KEYS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    /// The modes an interactive session found the terminal in
    /// ([`remember_modes`]): put back on every way out.
    static ORIGINAL: Mutex<Option<Termios>> = Mutex::new(None);

    fn saved() -> std::sync::MutexGuard<'static, Option<Termios>> {
        SAVED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Echo off while it lives.
    #[must_use = "echo comes back when it is dropped"]
    pub struct Quiet(());

    impl Quiet {
        /// Turns echo off on stdin's terminal; `None` when stdin is no
        /// terminal, its modes cannot be read or set, or echo is off
        /// already (then there is nothing to restore).
        pub fn start() -> Option<Self> {
            Self::begin(false)
        }

        /// As [`Quiet::start`], and keys reach jp as they are typed, not
        /// a line at a time (the terminal's canonical mode off too; Ctrl+C
        /// and Ctrl+Z still raise their signals): what an interactive
        /// session reads while a turn prints ([`super::super::TypeAhead`]).
        pub fn start_keys() -> Option<Self> {
            Self::begin(true)
        }

        fn begin(keys: bool) -> Option<Self> {
            let stdin = std::io::stdin();
            if !stdin.is_terminal() || !in_foreground() {
                return None;
            }
            let mut saved = saved();
            if saved.is_some() {
                return None;
            }
            let modes = tcgetattr(&stdin).ok()?;
            if !modes.local_modes.contains(LocalModes::ECHO) {
                return None;
            }
            silence(&modes, keys)?;
            KEYS.store(keys, std::sync::atomic::Ordering::Relaxed);
            *saved = Some(modes);
            Some(Self(()))
        }
    }

    impl Drop for Quiet {
        fn drop(&mut self) {
            restore();
        }
    }

    /// Sets `modes` without echo (and, with `keys`, without the
    /// terminal's own line editing: each key is read when typed).
    fn silence(modes: &Termios, keys: bool) -> Option<()> {
        tcsetattr(
            std::io::stdin(),
            OptionalActions::Now,
            &quieted(modes, keys),
        )
        .ok()
    }

    /// `modes` without echo, and with `keys` without canonical mode.
    fn quieted(modes: &Termios, keys: bool) -> Termios {
        let mut quiet = modes.clone();
        quiet.local_modes.remove(LocalModes::ECHO);
        if keys {
            quiet.local_modes.remove(LocalModes::ICANON);
            quiet.special_codes[rustix::termios::SpecialCodeIndex::VMIN] = 1;
            quiet.special_codes[rustix::termios::SpecialCodeIndex::VTIME] = 0;
        }
        quiet
    }

    /// Puts the terminal's modes back as [`Quiet::start`] found them; not
    /// from the background (a job the user moved there): that would stop
    /// jp (SIGTTOU), and the shell puts its own modes back anyway.
    ///
    /// Keys typed meanwhile and read by no prompt are dropped first: they
    /// were typed blind, and the shell would take them as a command.
    pub fn restore() {
        if let Some(modes) = saved().take()
            && in_foreground()
        {
            let _ =
                rustix::termios::tcflush(std::io::stdin(), rustix::termios::QueueSelector::IFlush);
            let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &modes);
        }
    }

    /// Turns echo off again each time jp continues after being stopped
    /// (Ctrl+Z, then `fg`): the shell put its own modes back meanwhile.
    /// Only the echo flag changes (and canonical mode, for
    /// [`Quiet::start_keys`]); a prompt's raw mode stays as it is.
    pub async fn quiet_after_each_stop() {
        use tokio::signal::unix::{SignalKind, signal};
        let cont = SignalKind::from_raw(rustix::process::Signal::CONT.as_raw());
        let Ok(mut continued) = signal(cont) else {
            return;
        };
        while continued.recv().await.is_some() {
            if saved().is_some()
                && in_foreground()
                && let Ok(modes) = tcgetattr(std::io::stdin())
            {
                let keys = KEYS.load(std::sync::atomic::Ordering::Relaxed);
                let _ = tcsetattr(
                    std::io::stdin(),
                    OptionalActions::Now,
                    &quieted(&modes, keys),
                );
            }
        }
    }

    /// Whether jp is in the terminal's foreground process group: only
    /// then may it set the terminal's modes without being stopped for it
    /// (`jp query ... &` leaves the terminal alone).
    fn in_foreground() -> bool {
        rustix::termios::tcgetpgrp(std::io::stdin())
            .is_ok_and(|group| group == rustix::process::getpgrp())
    }

    /// Runs `program` (the user's editor or pager) with the terminal as
    /// the user left it, echo included; silences it again after.
    pub fn echoing<T>(program: impl FnOnce() -> T) -> T {
        let modes = saved().clone();
        let Some(modes) = modes else {
            return program();
        };
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &modes);
        let result = program();
        // The program may have left any modes behind: take the user's
        // again, without echo.
        if saved().is_some() {
            let _ = silence(&modes, KEYS.load(std::sync::atomic::Ordering::Relaxed));
        }
        result
    }

    /// Remembers the terminal's modes as an interactive session found
    /// them, so that every way out (a panic, a signal, an error) puts them
    /// back ([`restore_original`]), whatever a line editor or a prompt
    /// left on.
    pub fn remember_modes() {
        let stdin = std::io::stdin();
        if stdin.is_terminal()
            && let Ok(modes) = tcgetattr(&stdin)
        {
            *ORIGINAL
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(modes);
        }
    }

    /// Puts back the modes [`remember_modes`] kept, if any (not from the
    /// background).
    pub fn restore_original() {
        let modes = ORIGINAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if let Some(modes) = modes
            && in_foreground()
        {
            let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &modes);
        }
    }
}

#[cfg(unix)]
pub use unix::{Quiet, echoing, quiet_after_each_stop, remember_modes, restore, restore_original};

#[cfg(not(unix))]
mod other {
    /// Echo off while it lives (on Unix; elsewhere the terminal is left as
    /// it is).
    pub struct Quiet(());

    impl Quiet {
        pub fn start() -> Option<Self> {
            None
        }

        pub fn start_keys() -> Option<Self> {
            None
        }
    }

    pub fn restore() {}

    pub fn remember_modes() {}

    pub fn restore_original() {}

    pub fn echoing<T>(program: impl FnOnce() -> T) -> T {
        program()
    }

    pub async fn quiet_after_each_stop() {}
}

#[cfg(not(unix))]
pub use other::{Quiet, echoing, quiet_after_each_stop, remember_modes, restore, restore_original};
