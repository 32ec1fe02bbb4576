//! Running the program so that nothing it starts outlives it.
//!
//! The program runs in a session (and so a process group) of its own,
//! without a controlling terminal: it cannot read from or write to jp's
//! terminal (a prompt for a password fails at once instead of stopping the
//! program in the background until it times out), and the whole group can
//! be killed without killing this tool. When the program exits, or its time
//! is up, its group is killed, before the program is reaped (so the group
//! id is still certainly its own): a background process it left behind
//! does not keep running, or keep its output open.
//!
//! jp's own containment of the tool (see `jp_llm`'s `tool/containment.rs`)
//! still reaches the program when jp stops the tool (jp's timeout, Ctrl-C)
//! or dies: on Linux, the program gets SIGKILL when this tool dies (the
//! parent-death signal, set on the one thread that spawns it, the tool's
//! main thread), and every process it starts inherits `JP_TOOL_RUN_ID`
//! from the environment, by which jp, or its sentinel when jp was killed,
//! finds and kills them wherever they went. On other Unix systems jp's
//! containment kills the tool's process group, which the program has left:
//! there only this tool's own timeout kills the program's processes.

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};

use super::capture::Capture;

/// How long the output may stay open after the program's group was killed
/// (a process that left the group can hold it): then what was read is
/// reported, and the rest left to jp's containment.
const OUTPUT_GRACE: Duration = Duration::from_secs(1);

/// How a run ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The program exited with this status.
    Exited(i32),
    /// A signal killed the program (not this tool's timeout).
    Signal(i32),
    /// The time was up; the program and its group were killed.
    TimedOut,
}

/// What a run gave.
#[derive(Debug)]
pub(crate) struct Finished {
    pub ended: Ended,
    /// Stdout and stderr, interleaved as written.
    pub output: Capture,
    /// A process outside the program's group still held the output open
    /// [`OUTPUT_GRACE`] after the group was killed; what it writes after
    /// that is not in `output`.
    pub output_open: bool,
}

/// What to run.
pub(crate) struct Spec<'a> {
    /// The file to execute.
    pub file: &'a Path,
    /// The program as the model named it: `argv[0]` and in messages.
    pub program: &'a str,
    pub args: &'a [&'a str],
    pub cwd: &'a Path,
    /// PATH for the program, when it must differ from the tool's own.
    pub path_var: Option<std::ffi::OsString>,
    pub timeout: Duration,
}

/// Runs `spec` to its end.
///
/// # Errors
///
/// A message naming the program when it cannot be started or waited for.
pub(crate) fn run(spec: &Spec<'_>) -> Result<Finished, String> {
    let cannot = |e: std::io::Error| format!("cannot run `{}`: {e}", spec.program);
    let (reader, writer) = std::io::pipe().map_err(cannot)?;
    let mut command = Command::new(spec.file);
    std::os::unix::process::CommandExt::arg0(&mut command, spec.program);
    command
        .args(spec.args)
        .current_dir(spec.cwd)
        .stdin(Stdio::null())
        .stderr(writer.try_clone().map_err(cannot)?)
        .stdout(writer);
    if let Some(path_var) = &spec.path_var {
        command.env("PATH", path_var);
    }
    own_session(&mut command);
    let mut child = command.spawn().map_err(cannot)?;
    // The command holds this process's copies of the pipe's write end;
    // dropping it leaves only the program's, so the reader sees the end.
    drop(command);

    let output = Arc::new(Mutex::new(Capture::default()));
    let read_all = read_into(reader, Arc::clone(&output));
    let pid = Pid::from_child(&child);
    let timed_out = !exits_within(pid, spec.timeout);
    kill_program(pid);
    let status = child.wait().map_err(cannot)?;
    let output_open = read_all.recv_timeout(OUTPUT_GRACE).is_err();
    let output = std::mem::take(&mut *output.lock().unwrap_or_else(PoisonError::into_inner));
    Ok(Finished {
        ended: ended(timed_out, status),
        output,
        output_open,
    })
}

fn ended(timed_out: bool, status: ExitStatus) -> Ended {
    use std::os::unix::process::ExitStatusExt as _;
    if timed_out {
        Ended::TimedOut
    } else if let Some(code) = status.code() {
        Ended::Exited(code)
    } else {
        Ended::Signal(status.signal().unwrap_or_default())
    }
}

/// Reads `reader` to its end into `output` on a thread; the receiver hears
/// when it is done.
fn read_into(mut reader: std::io::PipeReader, output: Arc<Mutex<Capture>>) -> mpsc::Receiver<()> {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = [0_u8; 16 * 1024];
        loop {
            match reader.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => output
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(&buffer[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    eprintln!("run_command: cannot read the program's output: {e}");
                    break;
                }
            }
        }
        done.send(()).ok();
    });
    finished
}

/// Whether `pid` exits within `timeout`. It is left unreaped (`WNOWAIT`),
/// so that its process group id cannot be reused before it is killed.
fn exits_within(pid: Pid, timeout: Duration) -> bool {
    let (exited, heard) = mpsc::channel();
    std::thread::spawn(move || {
        loop {
            match rustix::process::waitid(
                WaitId::Pid(pid),
                WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
            ) {
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => {
                    // Not expected for a child of ours; the group is killed
                    // and the program reaped as if it had exited.
                    eprintln!("run_command: cannot wait for the program: {e}");
                    break;
                }
                Ok(_) => break,
            }
        }
        exited.send(()).ok();
    });
    !matches!(
        heard.recv_timeout(timeout),
        Err(mpsc::RecvTimeoutError::Timeout)
    )
}

/// Kills the program `pid` and what it started: its process group, when
/// it leads one (it made its own session); otherwise (a sandbox refused it
/// a session: it runs in this tool's group, which jp kills when the tool
/// ends) the program and its descendants, found through `/proc`.
fn kill_program(pid: Pid) {
    if rustix::process::getpgid(Some(pid)).is_ok_and(|group| group == pid) {
        kill_group(pid);
        return;
    }
    for process in tree(pid) {
        if let Err(e) = rustix::process::kill_process(process, Signal::KILL)
            && e != rustix::io::Errno::SRCH
        {
            eprintln!(
                "run_command: cannot kill process {}: {e}",
                process.as_raw_nonzero()
            );
        }
    }
}

/// `root` and its descendants, parents first, from the parent of each
/// process in `/proc/PID/stat` (`pid (comm) state ppid ...`, comm may hold
/// spaces and parentheses: the fields are counted from the last `)`).
/// Linux only; elsewhere just `root`.
fn tree(root: Pid) -> Vec<Pid> {
    let mut children: std::collections::HashMap<i32, Vec<i32>> = std::collections::HashMap::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|ppid| ppid.parse::<i32>().ok());
            if let Some(ppid) = ppid {
                children.entry(ppid).or_default().push(pid);
            }
        }
    }
    let mut found = vec![root.as_raw_nonzero().get()];
    let mut next = 0;
    while let Some(&pid) = found.get(next) {
        next += 1;
        found.extend(children.get(&pid).into_iter().flatten().copied());
    }
    found.into_iter().filter_map(Pid::from_raw).collect()
}

/// Sends SIGKILL to process group `group`.
fn kill_group(group: Pid) {
    // ESRCH (the group is already gone) is the common, harmless case.
    if let Err(e) = rustix::process::kill_process_group(group, Signal::KILL)
        && e != rustix::io::Errno::SRCH
    {
        eprintln!(
            "run_command: cannot kill process group {}: {e}",
            group.as_raw_nonzero()
        );
    }
}

/// Makes the program a session leader (and so the leader of a process
/// group of its own, without a controlling terminal) where it may, and on
/// Linux has it killed when this tool dies.
///
/// # Why `unsafe`
///
/// Neither can be set but in the child between `fork` and `exec`, which
/// `CommandExt::pre_exec` (an `unsafe fn`) gives (std's `process_group`
/// cannot leave the terminal's session). The closure only makes system
/// calls through rustix (`setsid`, `prctl`, `getppid`): async-signal-safe,
/// no allocation, no locks, as `pre_exec` requires. The parent-death signal
/// fires when the thread that forked exits: the tool's main thread, which
/// lives as long as the tool. If the tool died between the fork and the
/// `prctl`, the child sees a different parent and does not run.
#[allow(unsafe_code)]
fn own_session(command: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    #[cfg(target_os = "linux")]
    let tool = rustix::process::getpid();
    let in_child = move || -> std::io::Result<()> {
        // A sandbox refuses new sessions (a process that left its group
        // could outlive the tool): the program then stays in this tool's
        // group, and is killed with it ([`kill_program`]).
        match rustix::process::setsid() {
            Ok(_) | Err(rustix::io::Errno::PERM) => {}
            Err(errno) => return Err(errno.into()),
        }
        #[cfg(target_os = "linux")]
        {
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
            if rustix::process::getppid() != Some(tool) {
                return Err(std::io::Error::from(rustix::io::Errno::SRCH));
            }
        }
        Ok(())
    };
    // SAFETY: `in_child` only calls setsid(2), prctl(2) and getppid(2)
    // through rustix, all async-signal-safe, and does not allocate
    // (converting an `Errno` into an `io::Error` stores the number), as
    // `pre_exec` requires.
    unsafe {
        command.pre_exec(in_child);
    }
}
