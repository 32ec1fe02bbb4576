//! What the check sees for itself after an attempt, besides what the probe
//! says: a file outside that changed, a connection or datagram that arrived,
//! a process that outlived its run. Where there is such evidence it decides
//! the verdict; the probe's report is its detail.

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::report::{Reported, Said, Verdict};

/// How long after its run a process left behind must be gone.
pub const OUTLIVE_WAIT: Duration = Duration::from_millis(1500);

/// What to look at after an attempt.
pub enum Evidence {
    /// Only the probe's report counts.
    Report,
    /// Escaped when one of these files is not as it was before the run.
    Files(Vec<Snapshot>),
    /// Escaped when a connection waits on this listener.
    Connection(TcpListener),
    /// Escaped when a connection waits on this UNIX socket.
    UnixConnection(std::os::unix::net::UnixListener),
    /// Escaped when a datagram waits on this socket.
    Datagram(UdpSocket),
    /// Escaped when the process the probe left behind still runs after
    /// [`OUTLIVE_WAIT`], or has written its marker.
    Outlives {
        pid_file: PathBuf,
        marker: PathBuf,
        /// When the run ended (set by the check), and whether the marker
        /// was there already (a run slower than the process's second: it
        /// wrote it during the run, which a tool may).
        ended: Option<(Instant, bool)>,
    },
}

/// One file as it was before the run.
pub struct Snapshot {
    path: PathBuf,
    /// What the check prints for it: `outside/absolute`.
    shown: String,
    before: Option<Vec<u8>>,
}

impl Snapshot {
    /// `path` as it is now, shown as `shown`.
    pub fn of(path: PathBuf, shown: impl Into<String>) -> Self {
        let before = std::fs::read(&path).ok();
        Self {
            path,
            shown: shown.into(),
            before,
        }
    }

    /// How it changed, if it did.
    fn change(&self) -> Option<String> {
        let now = std::fs::read(&self.path).ok();
        let shown = &self.shown;
        match (&self.before, now) {
            (None, Some(_)) => Some(format!("{shown} was created")),
            (Some(_), None) => Some(format!("{shown} is gone")),
            (Some(before), Some(now)) if *before != now => Some(format!("{shown} was changed")),
            _ => None,
        }
    }
}

impl Evidence {
    /// When it is a process left behind, notes that its run ended now.
    pub fn run_ended(&mut self) {
        if let Self::Outlives { ended, marker, .. } = self {
            *ended = Some((Instant::now(), marker.exists()));
        }
    }

    /// The verdict on an attempt the probe reported as `reported`. A
    /// process left behind is waited for, and killed if it still runs.
    pub fn judge(&self, reported: &Reported) -> (Verdict, String) {
        let seen = match self {
            Self::Report => None,
            Self::Files(files) => Some(files.iter().find_map(Snapshot::change)),
            Self::Connection(listener) => Some(
                listener
                    .accept()
                    .ok()
                    .map(|_| "a connection arrived".to_owned()),
            ),
            Self::UnixConnection(listener) => Some(
                listener
                    .accept()
                    .ok()
                    .map(|_| "a connection arrived".to_owned()),
            ),
            Self::Datagram(socket) => Some(
                socket
                    .recv_from(&mut [0; 512])
                    .ok()
                    .map(|_| "a datagram arrived".to_owned()),
            ),
            Self::Outlives {
                pid_file,
                marker,
                ended,
            } => Some(outlived(pid_file, marker, *ended)),
        };
        let detail = reported.detail.clone();
        match (seen, &reported.said) {
            (Some(Some(escape)), _) => (Verdict::Escaped, escape),
            (_, Said::Verdict(Verdict::Skipped)) => (Verdict::Skipped, detail),
            (None, Said::Verdict(verdict)) => (*verdict, detail),
            (None, Said::Done) => (Verdict::Blocked, detail),
            (Some(None), Said::Verdict(Verdict::Blocked)) => (Verdict::Blocked, detail),
            (Some(None), _) => (Verdict::Blocked, format!("{detail}; {}", self.held())),
        }
    }

    /// Why an attempt the probe carried out did not get out.
    fn held(&self) -> &'static str {
        match self {
            Self::Files(_) => "undone after the run",
            Self::Connection(_) | Self::UnixConnection(_) | Self::Datagram(_) => "nothing arrived",
            Self::Outlives { .. } => "it was gone after the run",
            Self::Report => "",
        }
    }
}

/// Whether the process a probe left behind outlived its run: still
/// running (it is killed), or it wrote its marker.
fn outlived(pid_file: &Path, marker: &Path, ended: Option<(Instant, bool)>) -> Option<String> {
    let (ended, marked_in_run) = ended.unwrap_or((Instant::now(), false));
    std::thread::sleep(OUTLIVE_WAIT.saturating_sub(ended.elapsed()));
    let running = std::fs::read_to_string(pid_file)
        .ok()
        .and_then(|pid| pid.trim().parse::<i32>().ok())
        .and_then(rustix::process::Pid::from_raw)
        .filter(|pid| is_ours(*pid, pid_file))
        .inspect(|pid| kill(*pid));
    if running.is_some() {
        return Some("it was still running after the run (killed now)".to_owned());
    }
    (marker.exists() && !marked_in_run).then(|| "it wrote its marker after the run".to_owned())
}

/// Whether `pid` is still the process that wrote `pid_file`: its command
/// line names the file (a pid reused since is some other process).
fn is_ours(pid: rustix::process::Pid, pid_file: &Path) -> bool {
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", pid.as_raw_nonzero()));
    let wanted = pid_file.as_os_str().as_encoded_bytes();
    cmdline.is_ok_and(|line| line.split(|b| *b == 0).any(|arg| arg == wanted))
}

/// Kills what a probe left behind: its process group when it leads one
/// (the `setsid` child and its `sleep`), else the process.
fn kill(pid: rustix::process::Pid) {
    use rustix::process::{Signal, getpgid, kill_process, kill_process_group};
    if getpgid(Some(pid)).is_ok_and(|group| group == pid) {
        let _ = kill_process_group(pid, Signal::KILL);
    } else {
        let _ = kill_process(pid, Signal::KILL);
    }
}
