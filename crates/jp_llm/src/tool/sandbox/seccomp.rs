//! The system calls a process jp starts may not make, enforced by the
//! kernel (seccomp, Linux; issue 36).
//!
//! Landlock ([`super::kernel`]) bounds files; these filters bound what
//! Landlock does not see. Everything not named here is allowed: they are a
//! short deny list, not an allow list, so ordinary programs run unchanged.
//! A process under them, and every process it starts (filters are
//! inherited across `fork` and `exec` and cannot be removed), gets:
//!
//! - without network (`sandbox.network = false`): `EACCES` from `socket`
//!   and `socketpair` for every family but `AF_UNIX` (socket pairs many
//!   programs use) and `AF_NETLINK` (the kernel's own interface), so no
//!   TCP, UDP, DNS or raw socket, loopback included; and from `connect`
//!   and from `sendto` to an address, so no local daemon's socket either
//!   (a terminal multiplexer's or the session bus would run what it is
//!   sent, outside the sandbox);
//! - always, `ENOSYS` (the answer of a kernel without them, which programs
//!   handle by falling back) from:
//!   - `io_uring_setup`: io_uring's requests open sockets and files
//!     without the system calls a filter sees;
//!   - `clone3`: its flags are in memory, which seccomp cannot read, so a
//!     new namespace could not be refused; glibc retries with `clone`;
//! - always, `EPERM` from:
//!   - `clone` with any `CLONE_NEW*` flag, `unshare` and `setns`: a new
//!     namespace (a user namespace, first) is a way out of the sandbox;
//!   - `setsid` and `setpgid`: a process that left the tool's process
//!     group (and cleared jp's marker from its environment, and whose
//!     parent exited) would outlive the run: jp kills the group when the
//!     tool ends. (`run_command` then runs its program in the tool's group.)
//!   - `keyctl`, `add_key` and `request_key`: the kernel keyring can hold
//!     the user's secrets (Kerberos tickets, encryption keys);
//!   - `mount` and the other calls that change the mount tree: Landlock
//!     already refuses them; this holds without relying on that;
//!   - setting a file's set-user-ID or set-group-ID bit (`chmod`, and the
//!     mode of `open`, `creat` and `mknod`): such a file made by the tool
//!     would run with its owner's rights for whoever runs it later;
//!   - `ioctl` with `TIOCSTI` or `TIOCLINUX`: both put characters into a
//!     terminal's input, which the user's shell would run after jp exits.
//!     A tool can open jp's terminal for reading (reads are not bounded)
//!     and these work on a descriptor opened only for reading.
//!
//! `ptrace` stays allowed: a tool may debug its own children, and
//! Landlock already keeps a sandboxed process from tracing jp.
//!
//! A system call made through another architecture's entry (32-bit
//! `int 0x80` on x86_64) kills the process: the filters only know the
//! numbers of the native one. x86_64's x32 entry uses the native
//! architecture's tag with a flag in the number, so each call is named
//! under its x32 number too.
//!
//! seccomp needs `no_new_privs` for a process without `CAP_SYS_ADMIN`;
//! [`Filters::apply_in_child`] sets it (as Landlock does): a set-user-ID
//! program the tool runs gets no more rights than the tool.

use std::collections::BTreeMap;
use std::fmt;
use std::io;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The filters of one process, compiled to BPF in jp before the fork
/// (compiling allocates) and applied in the child ([`Filters::apply_in_child`]).
pub(super) struct Filters {
    /// One program per answer (`EACCES`, `ENOSYS`, `EPERM`): a seccompiler
    /// filter gives one action to every call it matches. The kernel runs
    /// every installed program on each call and the most restrictive
    /// answer wins; no call is named by two of them.
    programs: Vec<BpfProgram>,
}

impl fmt::Debug for Filters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lengths: Vec<usize> = self.programs.iter().map(Vec::len).collect();
        f.debug_struct("Filters")
            .field("instructions", &lengths)
            .finish()
    }
}

/// What a filter compares a system call's number and arguments with: the
/// call's number and the conditions any one of which (each a list of
/// conditions that must all hold) makes it match; none matches always.
type Rules = BTreeMap<i64, Vec<SeccompRule>>;

/// The architecture jp was built for, which the filters check each call
/// against.
#[cfg(target_arch = "x86_64")]
const ARCH: Option<TargetArch> = Some(TargetArch::x86_64);
/// The architecture jp was built for, which the filters check each call
/// against.
#[cfg(target_arch = "aarch64")]
const ARCH: Option<TargetArch> = Some(TargetArch::aarch64);
/// None: the filters are not written for this architecture (its system
/// call numbers and argument layouts were never checked), so there are
/// none and the caller must not start the process.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH: Option<TargetArch> = None;

/// The flag x86_64's x32 entry sets in a system call's number; the
/// architecture tag the filter sees is x86_64's own.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// `ioctl`'s number through the x32 entry: unlike every other call named
/// here, not the native number with [`X32_SYSCALL_BIT`] (the kernel's
/// `syscall_64.tbl` gives x32 its own entry, 514).
#[cfg(target_arch = "x86_64")]
const X32_IOCTL: i64 = X32_SYSCALL_BIT + 514;

/// The `clone` flags that make a new namespace. Not `CLONE_NEWTIME`
/// (0x80): `clone` takes the exit signal in those bits, and only `clone3`
/// and `unshare`, both refused whole, accept it.
const NAMESPACE_FLAGS: [libc::c_int; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
];

/// The socket families a process without network may still open.
const LOCAL_FAMILIES: [libc::c_int; 2] = [libc::AF_UNIX, libc::AF_NETLINK];

/// The terminal `ioctl`s that push input into a terminal.
const TERMINAL_INJECTION: [libc::Ioctl; 2] = [libc::TIOCSTI, libc::TIOCLINUX];

/// The system calls refused whole with `EPERM` (see the module docs).
const DENIED: [libc::c_long; 17] = [
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_setsid,
    libc::SYS_setpgid,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
];

/// The system calls refused whole with `ENOSYS` (see the module docs).
const ABSENT: [libc::c_long; 3] = [
    libc::SYS_io_uring_setup,
    libc::SYS_clone3,
    // Its mode is in memory too (a set-user-ID file could be made through
    // it); programs that use it fall back to `openat`.
    libc::SYS_openat2,
];

/// The filters of a process that may use the network or not.
///
/// # Errors
///
/// When jp was built for an architecture the filters are not written for,
/// or seccompiler refuses a rule: the caller must then not start the
/// process (fail closed).
pub(super) fn filters(network: bool) -> Result<Filters, String> {
    let Some(arch) = ARCH else {
        return Err(format!(
            "seccomp filters are not written for the {} architecture",
            std::env::consts::ARCH
        ));
    };
    let mut programs = Vec::with_capacity(3);
    if !network {
        programs.push(compile(
            "the socket families",
            sockets()?,
            libc::EACCES,
            arch,
        )?);
    }
    let absent = ABSENT.iter().map(|&call| (call, Vec::new())).collect();
    programs.push(compile("io_uring and clone3", absent, libc::ENOSYS, arch)?);
    programs.push(compile("the escapes", escapes()?, libc::EPERM, arch)?);
    Ok(Filters { programs })
}

/// `socket` and `socketpair` with a family other than [`LOCAL_FAMILIES`]
/// (the family is an `int`: only the argument's lower 32 bits are
/// compared, as the kernel reads only those), `connect`, and `sendto` to
/// an address.
fn sockets() -> Result<Rules, String> {
    let conditions = LOCAL_FAMILIES
        .iter()
        .map(|&family| condition(0, SeccompCmpOp::Ne, to_u64(family)))
        .collect::<Result<Vec<_>, _>>()?;
    let other_family = rule(conditions)?;
    let mut rules: Rules = [libc::SYS_socket, libc::SYS_socketpair]
        .into_iter()
        .map(|call| (call, vec![other_family.clone()]))
        .collect();
    // The local sockets left are no way out either: `connect` (to a UNIX
    // socket's path: a terminal multiplexer's, the session bus, a
    // container daemon's, each of which runs what it is sent outside the
    // sandbox) is refused whole, and so is `sendto` with an address (a
    // datagram to a path). `socketpair` and pipes are untouched.
    rules.insert(libc::SYS_connect, Vec::new());
    let addressed = SeccompCondition::new(4, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)
        .map_err(|e| format!("seccomp condition on argument 4: {e}"))?;
    rules.insert(libc::SYS_sendto, vec![rule(vec![addressed])?]);
    Ok(rules)
}

/// What is refused with `EPERM`: [`DENIED`], `clone` with any of the
/// [`NAMESPACE_FLAGS`] (a rule for each: bits set in the flags' lower 32
/// bits, the only ones `clone` reads), and `ioctl` with a
/// [`TERMINAL_INJECTION`] request (an `unsigned int`).
fn escapes() -> Result<Rules, String> {
    let mut rules: Rules = DENIED.iter().map(|&call| (call, Vec::new())).collect();
    let namespaces = NAMESPACE_FLAGS
        .iter()
        .map(|&flag| {
            let flag = to_u64(flag);
            rule(vec![condition(0, SeccompCmpOp::MaskedEq(flag), flag)?])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, namespaces);
    let injection = TERMINAL_INJECTION
        .iter()
        .map(|&request| {
            // `Ioctl` is an unsigned long with glibc and an int with musl.
            let request =
                u32::try_from(request).map_err(|e| format!("ioctl request {request:#x}: {e}"))?;
            rule(vec![condition(1, SeccompCmpOp::Eq, u64::from(request))?])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_ioctl, injection);
    // No set-user-ID or set-group-ID file: one made by a tool of `root`'s
    // (or of any user's) runs with its owner's rights for whoever runs it
    // later, outside the sandbox.
    for (call, mode) in MODE_ARGUMENT {
        let special = [libc::S_ISUID, libc::S_ISGID]
            .into_iter()
            .map(|bit| {
                let bit = u64::from(bit);
                rule(vec![condition(mode, SeccompCmpOp::MaskedEq(bit), bit)?])
            })
            .collect::<Result<Vec<_>, _>>()?;
        rules.insert(call, special);
    }
    Ok(rules)
}

/// The calls that set a file's mode, and which argument holds it.
#[cfg(target_arch = "x86_64")]
const MODE_ARGUMENT: [(libc::c_long, u8); 9] = [
    (libc::SYS_chmod, 1),
    (libc::SYS_fchmod, 1),
    (libc::SYS_fchmodat, 2),
    (libc::SYS_fchmodat2, 2),
    (libc::SYS_open, 2),
    (libc::SYS_openat, 3),
    (libc::SYS_creat, 1),
    (libc::SYS_mknod, 1),
    (libc::SYS_mknodat, 2),
];

/// The calls that set a file's mode, and which argument holds it.
#[cfg(target_arch = "aarch64")]
const MODE_ARGUMENT: [(libc::c_long, u8); 5] = [
    (libc::SYS_fchmod, 1),
    (libc::SYS_fchmodat, 2),
    (libc::SYS_fchmodat2, 2),
    (libc::SYS_openat, 3),
    (libc::SYS_mknodat, 2),
];

/// `rules` with each call also under its x32 number (x86_64 only).
#[cfg(target_arch = "x86_64")]
fn with_x32(rules: Rules) -> Rules {
    let x32 = rules
        .iter()
        .map(|(&call, matches)| {
            let number = if call == libc::SYS_ioctl {
                X32_IOCTL
            } else {
                call | X32_SYSCALL_BIT
            };
            (number, matches.clone())
        })
        .collect::<Vec<_>>();
    let mut rules = rules;
    rules.extend(x32);
    rules
}

/// `rules` as they are: only x86_64 has a second entry to name.
#[cfg(not(target_arch = "x86_64"))]
fn with_x32(rules: Rules) -> Rules {
    rules
}

/// The BPF program that answers the calls `rules` match with `errno` and
/// allows every other call; `what` names it in an error.
fn compile(
    what: &str,
    rules: Rules,
    errno: libc::c_int,
    arch: TargetArch,
) -> Result<BpfProgram, String> {
    let failed = |e: seccompiler::BackendError| format!("seccomp filter for {what}: {e}");
    let errno = u32::try_from(errno).map_err(|e| format!("seccomp errno {errno}: {e}"))?;
    let filter = SeccompFilter::new(
        with_x32(rules),
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .map_err(failed)?;
    BpfProgram::try_from(filter).map_err(failed)
}

/// A rule matching when all of `conditions` hold.
fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| format!("seccomp rule: {e}"))
}

/// A condition on the lower 32 bits of argument `index`.
fn condition(index: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value)
        .map_err(|e| format!("seccomp condition on argument {index}: {e}"))
}

/// A (non-negative) C constant as the 64-bit value a condition compares.
fn to_u64(value: libc::c_int) -> u64 {
    u64::from(value.cast_unsigned())
}

impl Filters {
    /// Installs the filters on the calling process, in the child between
    /// fork and exec.
    ///
    /// # Why this is safe after a fork in a threaded process
    ///
    /// Only the forking thread exists in the child, and a lock another of
    /// jp's threads held stays held forever, so this must not allocate nor
    /// lock. It does not: the programs were compiled in jp ([`filters`]);
    /// seccompiler's `apply_filter` makes two system calls,
    /// `prctl(PR_SET_NO_NEW_PRIVS)` and `seccomp(SECCOMP_SET_MODE_FILTER)`,
    /// with a pointer into the program, and its errors hold an `io::Error`
    /// made from `errno` (no allocation), passed on as it is.
    ///
    /// # Errors
    ///
    /// The system call's error: the child must then not exec (std's
    /// `pre_exec` reports it as the spawn's error).
    pub(super) fn apply_in_child(&self) -> io::Result<()> {
        for program in &self.programs {
            seccompiler::apply_filter(program).map_err(in_child_error)?;
        }
        Ok(())
    }
}

/// seccompiler's error as the `io::Error` of the call that failed, without
/// allocating (a raw errno for the errors that hold none).
fn in_child_error(error: seccompiler::Error) -> io::Error {
    match error {
        seccompiler::Error::Prctl(error) | seccompiler::Error::Seccomp(error) => error,
        _ => io::Error::from_raw_os_error(libc::EINVAL),
    }
}

#[cfg(test)]
#[path = "seccomp_tests.rs"]
mod tests;
