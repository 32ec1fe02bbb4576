//! Keeping a local tool's processes from outliving its run, or jp.
//!
//! A tool is a function call: once its result is recorded, nothing it
//! started should still be running (and perhaps writing files). Three
//! mechanisms, from the common case to the rare one:
//!
//! 1. **The tool's process group** (Unix). The tool starts in a group of its
//!    own; stopping a run (timeout, cancelled turn, too much output, jp's
//!    SIGINT/SIGTERM/SIGHUP, the run being dropped) kills the group while
//!    the tool is not yet reaped, so the group id is still certainly its own.
//!    This catches everything the tool started that stayed in its group.
//!    A tool that exits while something still holds its stdout or stderr
//!    open has its old group killed too (see [`Containment::kill_exited_group`]).
//!
//! 2. **The run's marker** (Linux). Every tool gets `JP_TOOL_RUN_ID=<id>`, an
//!    id unique to the run, in its environment, and its descendants inherit
//!    it. When a run ends, whichever way, jp sweeps `/proc` for processes
//!    that carry the marker, and for their descendants, and kills them. This
//!    catches what left the group (`setsid`, a double fork, a daemon) even
//!    after its parent exited and it was re-parented. A pidfd is opened
//!    before the check and the signal sent through it, so a pid reused by an
//!    unrelated process is never signalled (where pidfds are refused, the
//!    signal goes by pid right after the check). Only processes started
//!    since the tool are looked at, which keeps a sweep to reading the
//!    `stat` of each process (about 16 ms for 1000 processes on a slow
//!    machine), done off the runtime's threads. What escapes: a process that
//!    left the group *and* cleared the marker from its environment (`env
//!    -i`) *and* whose parent, a marked process, has exited; and a process
//!    jp cannot inspect (another user's, or a set-user-ID program).
//!
//!    The alternative considered was making jp a child subreaper
//!    (`PR_SET_CHILD_SUBREAPER`) and killing the orphans re-parented to it.
//!    That changes jp's process tree for every child, including an editor
//!    and whatever it detaches; it makes jp reap by pid orphans that
//!    tokio's own child tracking must not see taken from it; and it still
//!    cannot tell which of several concurrent tools an orphan came from.
//!    The marker answers that question without any of these.
//!
//! 3. **Dying with jp.** When jp itself is killed (SIGKILL, the OOM killer),
//!    or exits without ending its runs (a second Ctrl-C), none of the above
//!    can happen:
//!    - (Linux) the tool's first process gets SIGKILL from the kernel as
//!      its parent dies, through the parent-death signal (see
//!      [`die_with_jp`] for why the spawn happens on one long-lived thread);
//!    - (Unix) a *sentinel*, a tiny `/bin/sh` process in a group of its own,
//!      waits on a pipe whose only writer is jp. On a normal end jp writes a
//!      line and the sentinel exits; when jp dies the pipe closes without
//!      one, and the sentinel kills the tool's process group and (Linux)
//!      every process started since the tool that carries the run's marker,
//!      found through `/proc` with `tr` and `grep` (see [`SENTINEL_SCRIPT`]).
//!
//!    What a dead jp leaves running: on Linux, a process that left the
//!    tool's group and cleared its marker (the descendants-of-marked rule
//!    of (2) is jp's own code); elsewhere, every process that left the
//!    group. The parent-death signal is not inherited across `fork`, so it
//!    cannot do more. A cgroup would reach everything, but jp has no
//!    delegated cgroup of its own in most set-ups, and a cgroup needs
//!    someone alive to kill it, too. A PID namespace per tool would take
//!    everything along with the tool's first process, but needs privileges
//!    or an unprivileged user namespace (which distributions increasingly
//!    restrict), and changes what the tool sees (its pid is 1, `/proc` must
//!    be remounted).

#[cfg(unix)]
use std::process::Stdio;

use tokio::process::{Child, Command};

mod process;
#[cfg(target_os = "linux")]
mod spawner;
#[cfg(target_os = "linux")]
mod sweep;

pub use process::RUN_ID_VAR;
use process::kill_process_group;

/// What the sentinel runs. It ignores the terminal's signals (jp handles
/// those and stops the tool itself) and reads one line: jp's "the run is
/// over, stand down". If the pipe closes without one, jp died: it kills
/// the tool's process group (`$1`), and then, if given a marker (`$2`,
/// `JP_TOOL_RUN_ID=<id>`, on Linux), every process started since the tool
/// (`$3`, clock ticks since boot, field 22 of `/proc/<pid>/stat`) whose
/// environment holds the marker, in up to three passes for processes forked
/// meanwhile. It signals by pid right after the check, which a pid reused
/// in between could in theory defeat; jp, dead, cannot do better.
#[cfg(unix)]
const SENTINEL_SCRIPT: &str = r#"trap '' HUP INT QUIT TERM
read -r _ && exit 0
group=$1 marker=$2 since=$3
kill -s KILL -- "-$group" 2>/dev/null
[ -n "$marker" ] || exit 0
for pass in 1 2 3; do
  killed=
  for d in /proc/[0-9]*; do
    read -r stat 2>/dev/null < "$d/stat" || continue
    set -f; set -- ${stat##*) }; set +f
    [ "${20}" -ge "$since" ] 2>/dev/null || continue
    tr '\0' '\n' 2>/dev/null < "$d/environ" | grep -qxF -e "$marker" || continue
    kill -s KILL "${d#/proc/}" 2>/dev/null && killed=1
  done
  [ -n "$killed" ] || break
done
"#;

/// How long to wait for a stood-down sentinel to exit before leaving it to
/// tokio to reap.
#[cfg(unix)]
const SENTINEL_EXIT_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Starts `command` as a contained tool: in a process group of its own,
/// marked with a fresh run id, dying with jp where the platform allows.
/// Must be called from within a tokio runtime.
pub async fn spawn(mut command: Command) -> std::io::Result<(Child, Containment)> {
    let run_id = next_run_id();
    command.env(RUN_ID_VAR, &run_id).kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let child = spawn_dying_with_jp(command).await?;
    let pgid = if cfg!(unix) { child.id() } else { None };
    // Read while the tool is certainly not reaped; 0 (look at every
    // process) if it cannot be.
    #[cfg(target_os = "linux")]
    let started = pgid.and_then(sweep::stat).map_or(0, |stat| stat.start);
    #[cfg(target_os = "linux")]
    let marker = format!("{RUN_ID_VAR}={run_id}");
    // Without `/proc`, the sentinel has no way to find marked processes.
    #[cfg(all(unix, not(target_os = "linux")))]
    let (marker, started) = (String::new(), 0);
    #[cfg(unix)]
    let sentinel = pgid.and_then(|pgid| Sentinel::start(pgid, &marker, started));
    Ok((
        child,
        Containment {
            pgid,
            tool_pid: pgid,
            run_id,
            #[cfg(target_os = "linux")]
            started,
            #[cfg(unix)]
            sentinel,
            released: false,
        },
    ))
}

/// A run id unique among the processes that can be alive at once: jp's pid
/// (unique while jp lives), a counter, and the time (against a later jp
/// with a reused pid finding a marked process of an earlier one: it would
/// be a leftover, but not of its own run).
fn next_run_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}.{n}.{nanos}", std::process::id())
}

/// The processes of one tool run, to be stopped when the run ends.
pub struct Containment {
    /// The tool's process group id (its pid), while the tool is not reaped
    /// and the id therefore certainly its own.
    pgid: Option<u32>,
    /// The tool's pid (and so its group id), even after it was reaped.
    tool_pid: Option<u32>,
    /// The value of [`RUN_ID_VAR`] in the tool's environment.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    run_id: String,
    /// When the tool started (clock ticks since boot); the sweep looks at
    /// no process older.
    #[cfg(target_os = "linux")]
    started: u64,
    /// Kills the group if jp dies; stood down when the run ends.
    #[cfg(unix)]
    sentinel: Option<Sentinel>,
    /// [`Self::release`] has run.
    released: bool,
}

impl Containment {
    /// Kills the tool and everything it started, now: on Linux first every
    /// process with the run's marker and every descendant of one (found
    /// while the tree is intact, so that a child that cleared its
    /// environment is still found through its living parent), then the
    /// tool's process group (once, and not after [`Self::tool_reaped`]).
    /// Blocks for the sweep of `/proc` (milliseconds).
    pub fn kill_all(&mut self) {
        #[cfg(target_os = "linux")]
        sweep::kill_marked(&self.run_id, self.started);
        if let Some(pgid) = self.pgid.take() {
            kill_process_group(pgid);
        }
    }

    /// The tool has been reaped: its group id may be reused from now on, so
    /// it must not be signalled any more.
    pub fn tool_reaped(&mut self) {
        self.pgid = None;
    }

    /// The tool has exited (and been reaped), but something still holds its
    /// stdout or stderr open: kills the tool's old group. If the holder is
    /// in it, the group id cannot have been reused (a group id stays taken
    /// while the group has members); if it is not, the id might, in a tiny
    /// window, name a new group, which is the price of not leaving the
    /// holder running where there is no `/proc` sweep to find it by its
    /// marker (on Linux, [`Self::release`] also does that right after).
    pub fn kill_exited_group(&mut self) {
        if let Some(pgid) = self.tool_pid.take() {
            kill_process_group(pgid);
        }
    }

    /// Ends the run: kills whatever is left of it (on Linux, every process
    /// with the run's marker and their descendants; the group, if the tool
    /// was not reaped), and stands the sentinel down.
    pub async fn release(mut self) {
        if let Some(pgid) = self.pgid.take() {
            kill_process_group(pgid);
        }
        #[cfg(target_os = "linux")]
        {
            // Reading `/proc` takes milliseconds; not on a runtime thread.
            let (run_id, started) = (self.run_id.clone(), self.started);
            if let Err(e) =
                tokio::task::spawn_blocking(move || sweep::kill_marked(&run_id, started)).await
            {
                tracing::warn!("cannot look for processes a tool left behind: {e}");
            }
        }
        // Dropped before this point, `Drop` sweeps again.
        self.released = true;
        #[cfg(unix)]
        if let Some(sentinel) = self.sentinel.take() {
            sentinel.stand_down().await;
        }
    }
}

impl Drop for Containment {
    /// The run was dropped before [`Self::release`] finished: stop
    /// everything now. A sentinel still here is stood down (never just
    /// dropped: its pipe closing without a line would make it kill a group
    /// id that may no longer be the tool's) and left to tokio to reap.
    fn drop(&mut self) {
        if !self.released {
            self.kill_all();
        }
        #[cfg(unix)]
        if let Some(sentinel) = self.sentinel.take() {
            drop(sentinel.signal_stand_down());
        }
    }
}

/// Spawns on Linux with the parent-death signal set; elsewhere as is.
#[cfg(target_os = "linux")]
async fn spawn_dying_with_jp(mut command: Command) -> std::io::Result<Child> {
    let Some(spawner) = spawner::get() else {
        tracing::warn!(
            "no thread to start tools from; this tool will not be killed if jp is killed"
        );
        return command.spawn();
    };
    die_with_jp(&mut command);
    spawner.spawn(command).await
}

#[cfg(not(target_os = "linux"))]
async fn spawn_dying_with_jp(mut command: Command) -> std::io::Result<Child> {
    command.spawn()
}

/// Makes the process `command` starts get SIGKILL when the thread that
/// forks it exits.
///
/// # Which thread
///
/// `PR_SET_PDEATHSIG` fires when the *thread* that created the child exits,
/// not when jp's process does. tokio's `Command::spawn` forks on whatever
/// thread calls it: a runtime worker, which `block_in_place` can turn into
/// a blocking-pool thread that exits after 10 s idle, or the thread of a
/// runtime that is shut down while the tool is still running. Either would
/// kill a healthy tool. So every tool is forked on one dedicated thread
/// that lives as long as jp ([`spawner`]), and only a dead jp kills it.
///
/// # The race
///
/// If jp dies between the fork and the `prctl`, the signal is never sent:
/// the child is already an orphan. The child checks that its parent is
/// still jp after setting the signal, and exits instead of running the
/// tool if not.
///
/// # Why `unsafe`
///
/// Nothing in std or tokio sets the parent-death signal, and the only place
/// it can be set is the child between `fork` and `exec`, which
/// `Command::pre_exec` (an `unsafe fn`) gives. The closure only makes two
/// system calls through rustix (`prctl`, `getppid`): async-signal-safe, no
/// allocation, no locks, as `pre_exec` requires. Setting it makes std use
/// `fork`+`exec` rather than `posix_spawn`; that costs a little time per
/// tool, nothing else.
///
/// The setting survives `exec` of the tool, except of a set-user-ID or
/// set-group-ID program or one with file capabilities, which the kernel
/// clears it for; and it is not inherited by the tool's children (the
/// sentinel covers those in the tool's group).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_jp(command: &mut Command) {
    use rustix::process::{Signal, getpid, getppid, set_parent_process_death_signal};
    let jp = getpid();
    let in_child = move || -> std::io::Result<()> {
        set_parent_process_death_signal(Some(Signal::KILL))?;
        if getppid() != Some(jp) {
            // jp died before the signal was armed; do not run an orphan.
            return Err(std::io::Error::from(rustix::io::Errno::SRCH));
        }
        Ok(())
    };
    // SAFETY: `in_child` only calls prctl(2) and getppid(2) through rustix,
    // both async-signal-safe, and does not allocate (converting an `Errno`
    // into an `io::Error` stores the number), as `pre_exec` requires.
    unsafe {
        command.pre_exec(in_child);
    }
}

/// A `/bin/sh` process that kills the tool's process group if jp dies
/// (see the module docs).
#[cfg(unix)]
struct Sentinel {
    /// jp's end of the pipe; the sentinel's stdin is the other. Created
    /// close-on-exec, so no tool inherits it and it closes exactly when jp
    /// does (or writes the stand-down line).
    line: std::io::PipeWriter,
    process: Child,
}

#[cfg(unix)]
impl Sentinel {
    /// Starts a sentinel for group `pgid` and, if `marker` is not empty,
    /// the processes started at `since` or later that carry `marker`;
    /// `None` (with a warning) if it cannot be.
    fn start(pgid: u32, marker: &str, since: u64) -> Option<Self> {
        let started = std::io::pipe().and_then(|(reader, line)| {
            let mut command = Command::new("/bin/sh");
            // None of jp's environment (its keys) but where its programs
            // are: a tool may read the sentinel's.
            command
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .args(["-c", SENTINEL_SCRIPT, "jp-tool-sentinel"])
                .args([pgid.to_string(), marker.to_owned(), since.to_string()])
                .stdin(Stdio::from(reader))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                // Its own group: a Ctrl-C on the terminal is not for it.
                .process_group(0);
            command.spawn().map(|process| Self { line, process })
        });
        match started {
            Ok(sentinel) => Some(sentinel),
            Err(e) => {
                tracing::warn!(
                    "cannot start /bin/sh to watch over a tool; if jp is killed, the processes the tool started may outlive it: {e}"
                );
                None
            }
        }
    }

    /// Tells the sentinel to exit without killing anything, and returns
    /// its process (which tokio reaps when dropped).
    fn signal_stand_down(mut self) -> Child {
        use std::io::Write as _;
        // A sentinel that is already gone (EPIPE) has nothing to stand down.
        if let Err(e) = self.line.write_all(b"\n") {
            tracing::debug!("cannot stand the tool's sentinel down: {e}");
        }
        self.process
    }

    /// Stands the sentinel down and waits (briefly) for it to exit.
    async fn stand_down(self) {
        let mut process = self.signal_stand_down();
        if tokio::time::timeout(SENTINEL_EXIT_WAIT, process.wait())
            .await
            .is_err()
        {
            tracing::debug!("a tool's sentinel did not exit within {SENTINEL_EXIT_WAIT:?}");
        }
    }
}

#[cfg(test)]
#[path = "containment_tests.rs"]
mod tests;
