//! A real terminal for the tests: a tmux server of our own running one
//! shell command, whose screen the tests read and whose keys they press.
//!
//! tmux is not part of the Rust toolchain, so without it [`Tmux::start`]
//! says so and returns `None` (the test passes), unless `JP_REQUIRE_TMUX`
//! is set (CI sets it and installs tmux).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::{Duration, Instant};

use super::Workspace;

/// A tmux server of our own, killed on drop.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// A terminal `columns` wide and 50 lines high running `command` in the
    /// workspace's project directory.
    pub fn start(ws: &Workspace, command: &str, columns: u16) -> Option<Self> {
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
            .arg(ws.project())
            .arg(command)
            .status()
            .unwrap();
        assert!(status.success());
        Some(Self { socket })
    }

    /// The screen as text, wrapped lines joined.
    pub fn screen(&self) -> String {
        self.capture(&[])
    }

    /// The screen with its colours and attributes, as escape sequences.
    pub fn screen_with_escapes(&self) -> String {
        self.capture(&["-e"])
    }

    fn capture(&self, extra: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-J"])
            .args(extra)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows `text`; the screen then.
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

    /// Presses `keys` (tmux `send-keys` names: `Enter`, `C-c`, text).
    pub fn send(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// The screen as a person reads it: each line without its trailing
/// blanks, and no blank lines at the end.
pub fn shown(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    lines[..end].join("\n")
}
