//! Where a process jp starts may write, enforced by the kernel (Landlock,
//! Linux; prototype of issue 36).
//!
//! The ruleset is built in jp before the fork (opening each allowed path,
//! which allocates) and only applied in the child, between fork and exec
//! ([`confine`]). It handles writes only: reads, execution and the network
//! are not bounded by it. A process under it, and every process it starts
//! (the bound is inherited and cannot be lifted), may write, create,
//! remove, rename, link and truncate only beneath:
//!
//! - the workspace root (the tool works there);
//! - its private `TMPDIR` (made by jp for the run, removed after);
//! - [`DEVICES`] and [`SHARED`] (see there why each);
//! - the paths of `sandbox.write`.
//!
//! A file opened before the bound (its stdin, stdout and stderr: jp's
//! pipes) is not affected.

use std::io;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetError, RulesetStatus, path_beneath_rules,
};
use tokio::process::Command;

/// The kernel must give at least this ABI (Linux 6.2): it bounds renames
/// and links across directories (`Refer`, ABI 2) and truncation (ABI 3),
/// without which a file outside could still be emptied or moved in and
/// out of the tree.
const REQUIRED: ABI = ABI::V3;

/// What is also bounded where the kernel has it (Linux 6.10): `ioctl` on
/// device files opened for writing.
const WANTED: ABI = ABI::V5;

/// Device files a program writes without meaning anything outside it:
/// `/dev/null` (`> /dev/null` is everywhere), `/dev/zero` and `/dev/full`
/// (sinks and test devices), `/dev/random` and `/dev/urandom` (writing
/// only stirs the entropy pool; some programs open them read-write).
///
/// Not `/dev/tty` nor `/dev/pts/*`: a tool's standard streams are jp's
/// pipes, and a tool that wrote to the user's terminal behind jp's back
/// could draw over jp's own screens (a forged prompt). A program that opens
/// the terminal read-write (a password prompt) fails, as it could not be
/// answered anyway: a tool has no terminal input.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Directories shared memory lives in: POSIX shared memory and semaphores
/// (`shm_open`, `sem_open`: Python's `multiprocessing` locks, for one) are
/// files under `/dev/shm`, a memory file system emptied at boot.
const SHARED: &[&str] = &["/dev/shm"];

/// The variable that, in a debug build only, forces the bound `off`
/// (to check that the tests fail without it) or makes jp act as on a
/// kernel `without` Landlock.
const FORCE_VAR: &str = "JP_TEST_SANDBOX_WRITES";

/// Makes the process `command` starts (working in `root`, with `tmp` as
/// its `TMPDIR`) write only where the module docs say.
///
/// # Errors
///
/// Why not, when the kernel has no Landlock or one older than
/// [`REQUIRED`]: the caller must then not start the process (fail closed).
pub(super) fn confine(
    command: &mut Command,
    root: &Path,
    tmp: &Path,
    extra: &[PathBuf],
) -> Result<(), String> {
    match forced().as_deref() {
        Some("off") => return Ok(()),
        Some("without") => {
            return Err("Landlock is not available (forced by JP_TEST_SANDBOX_WRITES)".into());
        }
        _ => {}
    }
    let ruleset = ruleset(root, tmp, extra).map_err(|e| format!("Landlock: {e}"))?;
    restrict_in_child(command, ruleset);
    Ok(())
}

/// [`FORCE_VAR`], in a debug build.
fn forced() -> Option<String> {
    if cfg!(debug_assertions) {
        std::env::var(FORCE_VAR).ok()
    } else {
        None
    }
}

/// The ruleset, created in the kernel (a file descriptor, close-on-exec)
/// with its rules: everything that needs to allocate or open a path is
/// done here, in jp, before the fork.
fn ruleset(root: &Path, tmp: &Path, extra: &[PathBuf]) -> Result<RulesetCreated, String> {
    let open = |path: &Path| PathFd::new(path).map_err(|e| format!("{}: {e}", path.display()));
    let (root, tmp) = (open(root)?, open(tmp)?);
    build(root, tmp, extra).map_err(|e| e.to_string())
}

fn build(root: PathFd, tmp: PathFd, extra: &[PathBuf]) -> Result<RulesetCreated, RulesetError> {
    let handled = AccessFs::from_write(WANTED);
    let devices = handled & AccessFs::from_file(WANTED);
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_write(REQUIRED))?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(handled)?
        .create()?
        .add_rule(PathBeneath::new(root, handled))?
        .add_rule(PathBeneath::new(tmp, handled))?
        .add_rules(path_beneath_rules(DEVICES, devices))?
        .add_rules(path_beneath_rules(SHARED, handled))?
        // A `sandbox.write` path that does not exist is left out (it could
        // not be created either: its parent is not writable).
        .add_rules(path_beneath_rules(extra, handled))
}

/// Applies `ruleset` to the process `command` starts, after the fork and
/// before the exec.
///
/// # Why this is safe after a fork in a threaded process
///
/// Only the forking thread exists in the child, and any lock another of
/// jp's threads held (the allocator's, tracing's) stays held forever: the
/// closure must not allocate nor take a lock. It does not:
/// - the ruleset was built and its paths opened in jp ([`ruleset`]); the
///   closure owns it, and taking it out of its `Option` moves bytes on the
///   child's copy of the closure (jp's copy keeps its own, so the command
///   could be spawned again);
/// - `restrict_self` makes two system calls, `prctl(PR_SET_NO_NEW_PRIVS)`
///   and `landlock_restrict_self`, and builds its status in place; its
///   errors hold an `io::Error` from `errno`, which does not allocate;
/// - dropping the ruleset closes its descriptor (`close`); the errors
///   returned are made from a raw errno.
///
/// `no_new_privs` is required by Landlock for a process without
/// `CAP_SYS_ADMIN`, and it means a set-user-ID program (sudo) the tool
/// runs gets no more rights than the tool.
#[allow(unsafe_code)]
fn restrict_in_child(command: &mut Command, ruleset: RulesetCreated) {
    let mut ruleset = Some(ruleset);
    let in_child = move || -> io::Result<()> {
        let Some(ruleset) = ruleset.take() else {
            return Err(io::Error::from(rustix::io::Errno::INVAL));
        };
        match ruleset.restrict_self() {
            Ok(status)
                if matches!(
                    status.ruleset,
                    RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced
                ) =>
            {
                Ok(())
            }
            // Never exec without the bound.
            Ok(_) => Err(io::Error::from(rustix::io::Errno::NOSYS)),
            Err(_) => Err(io::Error::from(rustix::io::Errno::PERM)),
        }
    };
    // SAFETY: see the doc comment: `in_child` makes only async-signal-safe
    // system calls (prctl, landlock_restrict_self, close) and neither
    // allocates nor locks, as `pre_exec` requires.
    unsafe {
        command.pre_exec(in_child);
    }
}
