//! A terminal for the tests: tmux, driven with send-keys and read with
//! capture-pane.
//!
//! tmux is not part of the Rust toolchain, so without it the tests that
//! need it say so and pass, unless `JP_REQUIRE_TMUX` is set (CI sets it
//! and installs tmux).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::{Duration, Instant};

use jp_test_server::TestServer;

use super::Workspace;

/// A tmux server of our own, killed on drop.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    pub fn start(ws: &Workspace, command: &str) -> Option<Self> {
        Self::start_sized(ws, command, 200)
    }

    /// A terminal `columns` wide (and 50 lines high) running `command`.
    pub fn start_sized(ws: &Workspace, command: &str, columns: u16) -> Option<Self> {
        let available = Command::new("tmux").arg("-V").output().is_ok();
        if !available {
            assert!(
                std::env::var_os("JP_REQUIRE_TMUX").is_none(),
                "tmux is required (JP_REQUIRE_TMUX is set) but not installed"
            );
            eprintln!("tmux is not installed: skipping the terminal test");
            return None;
        }
        let socket = format!("jp-test-{}-{}", std::process::id(), rand_suffix());
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "new-session",
                "-d",
                "-x",
                &columns.to_string(),
            ])
            .args(["-y", "50"])
            .arg("-c")
            .arg(ws.project())
            .arg(command)
            .status()
            .unwrap();
        assert!(status.success());
        Some(Self { socket })
    }

    pub fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-J"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen with its colours and attributes, as escape sequences.
    pub fn screen_with_escapes(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-J", "-e"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

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

    /// Waits until one line of the screen is exactly `line`.
    pub fn wait_for_line(&self, line: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if screen.lines().any(|l| l == line) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "waited for the line {line:?}; the screen shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// An interactive shell with job control (so Ctrl+Z stops a job and
    /// `fg` continues it) in which `line` (a [`query_line`] or the like,
    /// without its closing `sleep`) was typed and entered.
    pub fn in_shell(ws: &Workspace, line: &str) -> Option<Self> {
        let tmux = Self::start(
            ws,
            "env -i PATH=/usr/bin:/bin TERM=xterm PS1='$ ' bash --norc --noprofile -i",
        )?;
        tmux.wait_for("$ ");
        tmux.send(&["-l", &line.replace("; sleep 60", "")]);
        tmux.send(&["Enter"]);
        Some(tmux)
    }

    /// Whether the cursor shows (`1`) or is hidden (`0`), as tmux sees it.
    pub fn cursor_flag(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "display", "-p", "#{cursor_flag}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Checks that jp left the terminal as it found it: `stty` (printed
    /// by [`with_stty`] once jp exited) shows `icanon` and `echo`, and the
    /// cursor shows.
    pub fn assert_restored(&self, screen: &str) {
        assert!(screen.contains("STTY icanon echo"), "{screen}");
        assert_eq!(self.cursor_flag(), "1", "the cursor is hidden:\n{screen}");
    }

    /// `args` for a `tmux` command on this server (`-L SOCKET ...`).
    pub fn args<'a>(&'a self, args: &[&'a str]) -> Vec<&'a str> {
        let mut all = vec!["-L", self.socket.as_str()];
        all.extend_from_slice(args);
        all
    }

    pub fn send(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Tmux {
    /// Resizes the terminal to `columns` (the program gets SIGWINCH).
    pub fn resize(&self, columns: u16) {
        let status = Command::new("tmux")
            .args([
                "-L",
                &self.socket,
                "resize-window",
                "-x",
                &columns.to_string(),
            ])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Kills the tmux server: its terminals close (hang up) under what
    /// runs in them.
    pub fn kill(&self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.kill();
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// The shell command running `jp query` in the terminal, with a clean
/// environment, then holding the pane open to show the exit code. The
/// model comes from the environment: `--model` would be recorded in the
/// conversation (issue 21, item 4), which these tests are not about.
pub fn query_line(ws: &Workspace, server: &TestServer, message: &str) -> String {
    format!(
        "env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/xdg' JP_TRUST_WORKSPACE=1 JP_NOW_MS={now} TERM=xterm ANTHROPIC_API_KEY=test-key \
         JP_CFG_ASSISTANT__MODEL__ID=anthropic/claude-haiku-4-5 \
         '{jp}' query --cfg providers.llm.anthropic.base_url={url} '{message}'; \
         echo EXIT=$?; sleep 60",
        path = std::env::var("PATH").unwrap_or_default(),
        home = ws.root().display(),
        jp = env!("CARGO_BIN_EXE_jp"),
        url = server.url(),
        now = super::TEST_NOW_MS,
    )
}

/// The query line, then the terminal's `icanon` and `echo` flags as `stty`
/// reports them after jp exits.
pub fn with_stty(line: &str) -> String {
    line.replace(
        "echo EXIT=$?;",
        "echo EXIT=$?; echo STTY $(stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)');",
    )
}

/// The screen as a person reads it once jp has exited: each line without
/// its trailing blanks, no blank lines at the end. No spinner may be left
/// on it (a frame is a braille character): jp clears it on every path.
pub fn shown(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with(|c: char| ('\u{2800}'..='\u{28ff}').contains(&c))),
        "a spinner is left on the screen:\n{screen}"
    );
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    lines[..end].join("\n")
}

/// The lines of `screen`, as [`shown`], from the first that contains
/// `from`.
pub fn from_line(screen: &str, from: &str) -> String {
    let screen = shown(screen);
    let start = screen.find(from).expect(from);
    let start = screen[..start].rfind('\n').map_or(0, |at| at + 1);
    screen[start..].to_owned()
}

/// The processes running `program` (their first argument) with an
/// argument containing `needle` (Linux: read from `/proc`).
pub fn pids_running(program: &str, needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                let args: Vec<String> = cmdline
                    .split(|b| *b == 0)
                    .map(|arg| String::from_utf8_lossy(arg).into_owned())
                    .collect();
                args.first().is_some_and(|first| first == program)
                    && args.iter().any(|arg| arg.contains(needle))
            })
        })
        .collect()
}
