//! A terminal for tests: a tmux server of their own, running one command,
//! its screen read with `capture-pane`.
//!
//! tmux is not part of the Rust toolchain, so without it [`Tmux::start`]
//! says so and returns `None` (the test then passes), unless
//! `JP_REQUIRE_TMUX` is set (CI sets it and installs tmux).

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of our own, killed on drop.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// A terminal `columns` wide and 50 lines high running `command` in
    /// `dir`.
    pub fn start(dir: &Path, command: &str, columns: u16) -> Option<Self> {
        if Command::new("tmux").arg("-V").output().is_err() {
            assert!(
                std::env::var_os("JP_REQUIRE_TMUX").is_none(),
                "tmux is required (JP_REQUIRE_TMUX is set) but not installed"
            );
            eprintln!("tmux is not installed: skipping the terminal test");
            return None;
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let socket = format!("jp-test-{}-{nanos}", std::process::id());
        let status = Command::new("tmux")
            .args(["-L", &socket, "new-session", "-d", "-x"])
            .arg(columns.to_string())
            .args(["-y", "50", "-c"])
            .arg(dir)
            .arg(command)
            .status()
            .unwrap();
        assert!(status.success());
        Some(Self { socket })
    }

    fn capture(&self, escapes: bool) -> String {
        let mut command = Command::new("tmux");
        command.args(["-L", &self.socket, "capture-pane", "-p"]);
        if escapes {
            command.arg("-e");
        }
        let out = command.output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen's text.
    pub fn screen(&self) -> String {
        self.capture(false)
    }

    /// The screen with its colours and attributes, as escape sequences.
    pub fn screen_with_escapes(&self) -> String {
        self.capture(true)
    }

    /// Waits (20 s at most) until the screen shows `text`; the screen then.
    pub fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "waited for {text:?}; the screen shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}
