//! The kernel's part of a sandbox (Linux): Landlock bounds what a process
//! jp starts, and every process it starts, may write, read, connect to
//! and signal. (The bound is inherited and cannot be lifted.)
//!
//! The ruleset is built in jp before the fork (opening each path, which
//! allocates) and only applied in the child, between fork and exec
//! ([`confine`]). Under it the process:
//!
//! - writes, creates, removes, renames, links and truncates only beneath
//!   the workspace root, its private `TMPDIR` (made by jp for the run,
//!   removed after), [`DEVICES`], [`SHARED`] and `sandbox.write`;
//! - reads no file beneath a `sandbox.deny_read` path ([`super::reads`]);
//! - without `sandbox.network`, neither connects nor binds a TCP port
//!   (Linux 6.7; the seccomp filter stops every non-local socket on any
//!   kernel);
//! - cannot signal a process outside its sandbox, jp included, nor
//!   connect to an abstract UNIX socket made outside it (Linux 6.12),
//!   nor trace one (any Landlock kernel);
//! - keeps no capability, when it is `root`'s (all are dropped from its
//!   bounding set before the exec);
//! - is under the seccomp filters of [`super::seccomp`], installed last.
//!
//! A file opened before the bound (its stdin, stdout and stderr: jp's
//! pipes) is not affected.

use std::io;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetError, RulesetStatus, Scope,
    path_beneath_rules,
};
use tokio::process::Command;

use super::seccomp::Filters;

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

/// The variable that, in a debug build only, turns the kernel's part
/// `off` (to check that the tests fail without it) or makes jp act as on a
/// kernel `without` Landlock.
const FORCE_VAR: &str = "JP_TEST_SANDBOX";

/// What one process's kernel bound is made of.
pub(super) struct Plan<'a> {
    /// The workspace root, where it works and may write.
    pub root: &'a Path,
    /// Its private temporary directory.
    pub tmp: &'a Path,
    /// `sandbox.write`.
    pub write: &'a [PathBuf],
    /// What it may not read (defaults and `sandbox.deny_read`).
    pub deny_read: &'a [PathBuf],
    /// `sandbox.network`.
    pub network: bool,
}

/// Whether this kernel can enforce a sandbox, and if not, why: the same
/// answer for every process of this jp (asked once).
pub(super) fn enforceable() -> Result<(), String> {
    static ANSWER: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    ANSWER
        .get_or_init(|| match forced().as_deref() {
            Some("off") => Ok(()),
            Some("without") => Err(without()),
            _ => probe()
                .map_err(|e| format!("Landlock: {e}"))
                .and_then(|()| super::seccomp::filters(false).map(drop)),
        })
        .clone()
}

/// Why, on a kernel forced to act as one without Landlock.
fn without() -> String {
    "Landlock is not available (forced by JP_TEST_SANDBOX)".to_owned()
}

/// Makes the process `command` starts keep to `plan` as the module docs
/// say.
///
/// # Errors
///
/// Why not, when the kernel has no Landlock or one older than
/// [`REQUIRED`], or a path of the plan cannot be opened: the caller must
/// then not start the process (fail closed).
pub(super) fn confine(command: &mut Command, plan: &Plan<'_>) -> Result<(), String> {
    match forced().as_deref() {
        Some("off") => return Ok(()),
        Some("without") => return Err(without()),
        _ => {}
    }
    let ruleset = ruleset(plan).map_err(|e| format!("Landlock: {e}"))?;
    let filters = super::seccomp::filters(plan.network)?;
    restrict_in_child(command, ruleset, filters);
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

/// Whether the kernel handles what jp needs to run a process sandboxed:
/// writes with renames, links and truncation ([`REQUIRED`]) and reads.
fn probe() -> Result<(), RulesetError> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_write(REQUIRED) | AccessFs::ReadFile)?
        .create()
        .map(drop)
}

/// The ruleset, created in the kernel (a file descriptor, close-on-exec)
/// with its rules: everything that needs to allocate or open a path is
/// done here, in jp, before the fork.
fn ruleset(plan: &Plan<'_>) -> Result<RulesetCreated, String> {
    let open = |path: &Path| PathFd::new(path).map_err(|e| format!("{}: {e}", path.display()));
    let (root, tmp) = (open(plan.root)?, open(plan.tmp)?);
    let readable = super::reads::readable(plan.deny_read, plan.root);
    build(root, tmp, plan, &readable).map_err(|e| e.to_string())
}

fn build(
    root: PathFd,
    tmp: PathFd,
    plan: &Plan<'_>,
    readable: &[PathBuf],
) -> Result<RulesetCreated, RulesetError> {
    let write = AccessFs::from_write(WANTED);
    let devices = write & AccessFs::from_file(WANTED);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_write(REQUIRED) | AccessFs::ReadFile)?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(write)?
        .scope(Scope::from_all(ABI::V6))?;
    if !plan.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4))?;
    }
    ruleset
        .create()?
        .add_rule(PathBeneath::new(root, write))?
        .add_rule(PathBeneath::new(tmp, write))?
        .add_rules(path_beneath_rules(DEVICES, devices))?
        .add_rules(path_beneath_rules(SHARED, write))?
        // A `sandbox.write` path that does not exist is left out (it could
        // not be created either: its parent is not writable).
        .add_rules(path_beneath_rules(plan.write, write))?
        // What vanished since it was listed is left out too.
        .add_rules(path_beneath_rules(readable, AccessFs::ReadFile))
}

/// Applies `ruleset` and `filters` to the process `command` starts, after
/// the fork and before the exec.
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
///   returned are made from a raw errno;
/// - dropping capabilities from the bounding set is a `prctl` each;
/// - the seccomp filters were compiled in jp too; installing them is
///   `prctl` and `seccomp` on memory the closure owns
///   ([`super::seccomp::Filters::apply_in_child`]). They go on last, so
///   nothing they refuse is needed after them.
///
/// `no_new_privs` is required by Landlock for a process without
/// `CAP_SYS_ADMIN`, and it means a set-user-ID program (sudo) the tool
/// runs gets no more rights than the tool.
#[allow(unsafe_code)]
fn restrict_in_child(command: &mut Command, ruleset: RulesetCreated, filters: Filters) {
    let mut ruleset = Some(ruleset);
    let in_child = move || -> io::Result<()> {
        // A tool run by `root` keeps none of root's capabilities: each
        // overrides something the sandbox relies on (`CAP_SYS_PTRACE`,
        // `CAP_SYS_ADMIN` and `CAP_PERFMON` reading jp's environment
        // although jp is not dumpable, `CAP_CHOWN` and `CAP_FOWNER` the
        // owner of a file outside, `CAP_NET_ADMIN` the network, ...).
        // Without them in the bounding set the program `exec` starts has
        // none. Any other user has none and may not drop them (EPERM); a
        // number past the kernel's last capability is EINVAL.
        for capability in 0..64_u32 {
            let set = rustix::thread::CapabilitySet::from_bits_retain(1 << capability);
            match rustix::thread::remove_capability_from_bounding_set(set) {
                Ok(()) | Err(rustix::io::Errno::PERM | rustix::io::Errno::INVAL) => {}
                Err(errno) => return Err(io::Error::from(errno)),
            }
        }
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
                filters.apply_in_child()
            }
            // Never exec without the bound.
            Ok(_) => Err(io::Error::from(rustix::io::Errno::NOSYS)),
            Err(_) => Err(io::Error::from(rustix::io::Errno::PERM)),
        }
    };
    // SAFETY: see the doc comment: `in_child` makes only async-signal-safe
    // system calls (prctl, landlock_restrict_self, close, seccomp) and neither
    // allocates nor locks, as `pre_exec` requires.
    unsafe {
        command.pre_exec(in_child);
    }
}
