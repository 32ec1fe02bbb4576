//! Finding and killing a run's processes through `/proc`.

use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;

use rustix::process::{Pid, PidfdFlags, Signal, pidfd_open, pidfd_send_signal};

/// How many times to look again for processes that were forked while
/// the previous ones were being killed.
const PASSES: usize = 8;

/// Kills every live process whose environment holds
/// `JP_TOOL_RUN_ID=run_id`, and every descendant of one.
pub(super) fn kill_marked(run_id: &str, since: u64) {
    let marker = format!("{}={run_id}", super::process::RUN_ID_VAR);
    // Killed processes stay visible (and marked) until they have
    // exited; each pass only looks for ones not signalled yet.
    let mut signalled = HashSet::new();
    for _ in 0..PASSES {
        let targets = find(marker.as_bytes(), since, &signalled);
        if targets.is_empty() {
            return;
        }
        tracing::debug!(
            count = targets.len(),
            "killing processes a tool left behind"
        );
        for (pid, target) in targets {
            if let Err(e) = target.kill() {
                tracing::debug!("cannot kill process {pid}, which a tool left behind: {e}");
            }
            signalled.insert(pid);
        }
    }
    tracing::warn!("a tool's processes kept starting new ones while they were being killed");
}

/// A process to kill: through a pidfd, or, where pidfds are not
/// available (Linux before 5.3, or a seccomp filter that refuses
/// them), by pid, checked just before.
enum Target {
    Fd(OwnedFd),
    Pid(Pid),
}

impl Target {
    fn kill(&self) -> rustix::io::Result<()> {
        match self {
            Self::Fd(pidfd) => pidfd_send_signal(pidfd, Signal::KILL),
            Self::Pid(pid) => rustix::process::kill_process(*pid, Signal::KILL),
        }
    }
}

/// The live marked processes and their descendants that are not
/// `signalled` yet. Each is checked after its pidfd was opened, so that
/// it cannot be a process that took over the pid of one that exited.
fn find(marker: &[u8], since: u64, signalled: &HashSet<u32>) -> Vec<(u32, Target)> {
    let me = std::process::id();
    let table = processes(since);
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (&pid, stat) in &table {
        children.entry(stat.ppid).or_default().push(pid);
    }
    // (pid, its expected parent if it is only a descendant)
    let mut queue: Vec<(u32, Option<u32>)> = table
        .keys()
        .filter(|&&pid| pid != me && has_marker(pid, marker))
        .map(|&pid| (pid, None))
        .collect();
    let mut seen: HashSet<u32> = queue.iter().map(|&(pid, _)| pid).collect();
    let mut found = Vec::new();
    while let Some((pid, parent)) = queue.pop() {
        if let Some(kids) = children.get(&pid) {
            for &kid in kids {
                if kid != me && seen.insert(kid) {
                    queue.push((kid, Some(pid)));
                }
            }
        }
        if signalled.contains(&pid) || table.get(&pid).is_some_and(|stat| stat.zombie) {
            continue;
        }
        let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
            continue;
        };
        let target = match pidfd_open(raw, PidfdFlags::empty()) {
            Ok(pidfd) => Target::Fd(pidfd),
            Err(rustix::io::Errno::SRCH) => continue,
            Err(_) => Target::Pid(raw),
        };
        // With the pidfd open the pid cannot be reused; check that it
        // is still the process that was found.
        let still = match parent {
            None => has_marker(pid, marker),
            Some(parent) => stat(pid).is_some_and(|stat| stat.ppid == parent),
        };
        if still {
            found.push((pid, target));
        }
    }
    found
}

/// What the sweep needs of a process.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stat {
    /// Its parent's pid.
    pub(super) ppid: u32,
    /// It has exited and waits to be reaped.
    pub(super) zombie: bool,
    /// When it started, in clock ticks since boot.
    pub(super) start: u64,
}

/// Every process that started at `since` (clock ticks since boot) or
/// later: a process started before the tool cannot carry its marker
/// nor descend from it, and skipping them spares reading most of
/// `/proc`.
fn processes(since: u64) -> HashMap<u32, Stat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    dir.filter_map(|entry| {
        let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        Some((pid, stat(pid)?))
    })
    .filter(|(_, stat)| stat.start >= since)
    .collect()
}

/// `/proc/<pid>/stat`: `pid (comm) state ppid ...`, where comm may hold
/// spaces and parentheses, so the fields are counted from the last `)`
/// (the state is field 3, the parent 4, the start time 22).
pub(super) fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    let state = *fields.first()?;
    Some(Stat {
        ppid: fields.get(1)?.parse().ok()?,
        zombie: state == "Z" || state == "X",
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Whether the environment `pid` was started with holds the entry
/// `marker` (`NAME=value`). An unreadable one (another user's process,
/// a set-user-ID program, a process that exited) does not.
fn has_marker(pid: u32, marker: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|&b| b == 0).any(|entry| entry == marker))
}
