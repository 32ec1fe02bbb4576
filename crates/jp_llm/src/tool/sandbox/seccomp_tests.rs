//! The seccomp filters, proven on real processes: each test starts a real
//! program under the filters (applied between fork and exec, as jp does)
//! and checks what it could and could not do; where the outcome without
//! the filters is the same on every machine, it runs that too, so a test
//! fails if the filters stop refusing what they should.
//!
//! The programs (python3, bash, sh, unshare) must be installed: a test
//! without one fails, it does not skip.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Output, Stdio};

use super::*;

/// What a test's program runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Under {
    /// The filters of a process without network.
    NoNetwork,
    /// The filters of a process with network.
    Network,
    /// No filters: the control.
    Nothing,
}

/// Runs `program` with `args` under `under`, and waits for it.
#[allow(unsafe_code)]
fn run(under: Under, program: &str, args: &[&str]) -> Output {
    let mut command = Command::new(program);
    // Messages in English, whatever the machine's locale.
    command.args(args).env("LC_ALL", "C").stdin(Stdio::null());
    let network = match under {
        Under::NoNetwork => Some(false),
        Under::Network => Some(true),
        Under::Nothing => None,
    };
    if let Some(network) = network {
        let filters = filters(network).expect("the filters build");
        // SAFETY: `apply_in_child` makes only async-signal-safe system
        // calls and neither allocates nor locks (see its docs).
        unsafe {
            command.pre_exec(move || filters.apply_in_child());
        }
    }
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (the test needs it installed): {e}"))
}

/// Runs python3 `script` with `args` under `under`: its exit code and
/// its standard output, trimmed.
/// What every script may use: `attempt(f)` calls `f` and says `ok` or
/// the errno's name.
const ATTEMPT: &str = "
import errno
def attempt(f):
    try:
        f()
        return 'ok'
    except OSError as e:
        return errno.errorcode[e.errno]
";

fn python(under: Under, script: &str, args: &[&str]) -> (Option<i32>, String) {
    let script = format!("{ATTEMPT}{script}");
    let mut all = vec!["-c", script.as_str()];
    all.extend_from_slice(args);
    let output = run(under, "python3", &all);
    let stdout = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.trim().is_empty(),
        "python3 under {under:?} wrote to stderr: {stderr}"
    );
    (output.status.code(), stdout)
}

/// A python3 script that makes the system call numbered by its first
/// argument with the rest as arguments (`0x` numbers allowed), and prints
/// `ok` or the name of its errno.
const SYSCALL: &str = "
import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
args = [ctypes.c_long(int(a, 0)) for a in sys.argv[1:]]
result = libc.syscall(*args)
print('ok' if result >= 0 else errno.errorcode[ctypes.get_errno()])
";

/// The outcome of system call `number` with `args` under `under`: `ok` or
/// its errno's name.
fn syscall(under: Under, number: libc::c_long, args: &[u64]) -> String {
    let mut all = vec![number.to_string()];
    all.extend(args.iter().map(|arg| format!("{arg:#x}")));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let (code, stdout) = python(under, SYSCALL, &all);
    assert_eq!(code, Some(0), "the syscall script failed: {stdout}");
    stdout
}

/// A python3 script that connects over TCP to the loopback port of its
/// argument and sends a byte: prints `sent`, or the errno's name and
/// exits 3.
const TCP_CONNECT: &str = "
import errno, socket, sys
try:
    s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5)
    s.sendall(b'x')
    print('sent')
except OSError as e:
    print(errno.errorcode[e.errno])
    sys.exit(3)
";

#[test]
fn without_network_a_tcp_connect_to_a_loopback_listener_is_refused_and_never_arrives() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let outcome = python(Under::NoNetwork, TCP_CONNECT, &[&port]);
    assert_eq!(outcome, (Some(3), "EACCES".to_owned()));
    listener.set_nonblocking(true).unwrap();
    let accepted = listener.accept().map(|_| ()).map_err(|e| e.kind());
    assert_eq!(accepted, Err(ErrorKind::WouldBlock));
}

#[test]
fn with_network_the_same_tcp_connect_arrives() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let outcome = python(Under::Network, TCP_CONNECT, &[&port]);
    assert_eq!(outcome, (Some(0), "sent".to_owned()));
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_ok(), "the connection did not arrive");
}

/// A python3 script that sends `x` over UDP to the loopback port of its
/// argument: prints `sent`, or the errno's name and exits 3.
const UDP_SEND: &str = "
import errno, socket, sys
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b'x', ('127.0.0.1', int(sys.argv[1])))
    print('sent')
except OSError as e:
    print(errno.errorcode[e.errno])
    sys.exit(3)
";

/// What a UDP socket the test opened received (nothing, or the byte).
fn received(socket: &UdpSocket) -> Result<Vec<u8>, ErrorKind> {
    socket.set_nonblocking(true).unwrap();
    let mut buffer = [0u8; 16];
    socket
        .recv(&mut buffer)
        .map(|n| buffer[..n].to_vec())
        .map_err(|e| e.kind())
}

#[test]
fn a_udp_datagram_to_loopback_is_sent_only_with_network() {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port().to_string();

    let outcome = python(Under::NoNetwork, UDP_SEND, &[&port]);
    assert_eq!(outcome, (Some(3), "EACCES".to_owned()));
    assert_eq!(received(&socket), Err(ErrorKind::WouldBlock));

    let outcome = python(Under::Network, UDP_SEND, &[&port]);
    assert_eq!(outcome, (Some(0), "sent".to_owned()));
    assert_eq!(received(&socket), Ok(b"x".to_vec()));
}

#[test]
fn without_network_bash_cannot_open_dev_tcp() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!("echo x > /dev/tcp/127.0.0.1/{port}");

    let output = run(Under::NoNetwork, "bash", &["-c", &script]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Permission denied"), "stderr: {stderr}");
    listener.set_nonblocking(true).unwrap();
    let accepted = listener.accept().map(|_| ()).map_err(|e| e.kind());
    assert_eq!(accepted, Err(ErrorKind::WouldBlock));

    let output = run(Under::Network, "bash", &["-c", &script]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(listener.accept().is_ok(), "the connection did not arrive");
}

#[test]
fn without_network_unix_sockets_still_work() {
    let script = "
import socket
a, b = socket.socketpair()
a.sendall(b'ping')
print(b.recv(4).decode())
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
print(s.family.name)
";
    let outcome = python(Under::NoNetwork, script, &[]);
    assert_eq!(outcome, (Some(0), "ping\nAF_UNIX".to_owned()));
}

#[test]
fn without_network_netlink_sockets_can_still_be_made() {
    let script = "
import socket
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 0))
print(s.family.name)
";
    let outcome = python(Under::NoNetwork, script, &[]);
    assert_eq!(outcome, (Some(0), "AF_NETLINK".to_owned()));
}

/// A python3 script that connects to the UNIX socket at its argument and
/// sends a datagram to it by address: prints what each gave
/// ([`ATTEMPT`]).
const UNIX_PATH: &str = "
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
print(attempt(lambda: s.connect(sys.argv[1] + '.stream')), attempt(lambda: d.sendto(b'x', sys.argv[1] + '.dgram')))
";

/// A local daemon's socket (a terminal multiplexer's, the session bus)
/// runs what it is sent outside the sandbox: without network a process
/// neither connects to a UNIX socket's path nor sends to one.
#[test]
fn without_network_no_unix_socket_path_is_reached() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("daemon");
    let stream = std::os::unix::net::UnixListener::bind(base.with_extension("stream")).unwrap();
    stream.set_nonblocking(true).unwrap();
    let datagram = std::os::unix::net::UnixDatagram::bind(base.with_extension("dgram")).unwrap();
    datagram.set_nonblocking(true).unwrap();
    let arg = base.to_str().unwrap();
    assert_eq!(
        python(Under::NoNetwork, UNIX_PATH, &[arg]),
        (Some(0), "EACCES EACCES".to_owned())
    );
    assert!(stream.accept().is_err());
    assert!(datagram.recv(&mut [0; 4]).is_err());
    assert_eq!(
        python(Under::Network, UNIX_PATH, &[arg]),
        (Some(0), "ok ok".to_owned())
    );
    assert!(stream.accept().is_ok());
}

#[test]
fn without_network_no_socket_of_another_family_is_made() {
    let datagram = u64::from(libc::SOCK_DGRAM.cast_unsigned());
    let families = [
        libc::AF_INET,
        libc::AF_INET6,
        libc::AF_PACKET,
        libc::AF_VSOCK,
    ];
    for family in families {
        let args = [u64::from(family.cast_unsigned()), datagram, 0];
        assert_eq!(
            syscall(Under::NoNetwork, libc::SYS_socket, &args),
            "EACCES",
            "family {family}"
        );
    }
    // Without the filters a UDP socket is made on every machine.
    let inet = [u64::from(libc::AF_INET.cast_unsigned()), datagram, 0];
    assert_eq!(syscall(Under::Nothing, libc::SYS_socket, &inet), "ok");
    assert_eq!(syscall(Under::Network, libc::SYS_socket, &inet), "ok");
}

#[test]
fn without_network_a_socketpair_of_another_family_is_refused() {
    let inet = u64::from(libc::AF_INET.cast_unsigned());
    let stream = u64::from(libc::SOCK_STREAM.cast_unsigned());
    // Without the filters the null pointer for the pair gives EFAULT
    // (the kernel writes the descriptors' slots before making sockets).
    let args = [inet, stream, 0, 0];
    assert_eq!(
        syscall(Under::NoNetwork, libc::SYS_socketpair, &args),
        "EACCES"
    );
    assert_eq!(
        syscall(Under::Nothing, libc::SYS_socketpair, &args),
        "EFAULT"
    );
}

/// A python3 script that leaves its process group by `setsid` (or
/// `setpgid` with `pgid` as its argument): prints `ok`, or the errno's
/// name.
const LEAVE_GROUP: &str = "
import errno, os, sys
try:
    os.setsid() if sys.argv[1] == 'setsid' else os.setpgid(0, 0)
    print('ok')
except OSError as e:
    print(errno.errorcode[e.errno])
";

#[test]
fn setsid_and_setpgid_are_refused_with_eperm() {
    for call in ["setsid", "setpgid"] {
        let outcome = python(Under::NoNetwork, LEAVE_GROUP, &[call]);
        assert_eq!(outcome, (Some(0), "EPERM".to_owned()), "{call}");
        let outcome = python(Under::Network, LEAVE_GROUP, &[call]);
        assert_eq!(outcome, (Some(0), "EPERM".to_owned()), "{call}");
        let outcome = python(Under::Nothing, LEAVE_GROUP, &[call]);
        assert_eq!(
            outcome,
            (Some(0), "ok".to_owned()),
            "{call} without filters"
        );
    }
}

#[test]
fn unshare_u_fails() {
    let output = run(Under::Network, "unshare", &["-U", "true"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unshare failed: Operation not permitted"),
        "stderr: {stderr}"
    );
}

#[test]
fn unshare_and_setns_are_refused_even_when_harmless() {
    // unshare(0) changes nothing and setns(-1, 0) names no namespace:
    // without the filters they give `ok` and EBADF on every machine.
    let bad_fd = u64::MAX;
    assert_eq!(syscall(Under::Network, libc::SYS_unshare, &[0]), "EPERM");
    assert_eq!(syscall(Under::Nothing, libc::SYS_unshare, &[0]), "ok");
    assert_eq!(
        syscall(Under::Network, libc::SYS_setns, &[bad_fd, 0]),
        "EPERM"
    );
    assert_eq!(
        syscall(Under::Nothing, libc::SYS_setns, &[bad_fd, 0]),
        "EBADF"
    );
}

#[test]
fn clone_with_any_namespace_flag_is_refused_and_without_one_is_not() {
    // CLONE_THREAD without CLONE_SIGHAND is invalid: the kernel answers
    // EINVAL before it creates anything, so no process is ever made, and
    // EPERM can only come from the filter.
    let thread = u64::from(libc::CLONE_THREAD.cast_unsigned());
    assert_eq!(
        syscall(Under::Network, libc::SYS_clone, &[thread]),
        "EINVAL"
    );
    for flag in NAMESPACE_FLAGS {
        let flags = thread | u64::from(flag.cast_unsigned());
        assert_eq!(
            syscall(Under::Network, libc::SYS_clone, &[flags]),
            "EPERM",
            "flag {flag:#x}"
        );
        assert_eq!(
            syscall(Under::Nothing, libc::SYS_clone, &[flags]),
            "EINVAL",
            "flag {flag:#x} without filters"
        );
    }
}

#[test]
fn io_uring_setup_and_clone3_look_absent() {
    // Without the filters the null pointers give EFAULT and EINVAL.
    let setup = libc::SYS_io_uring_setup;
    assert_eq!(syscall(Under::Network, setup, &[1, 0]), "ENOSYS");
    assert_eq!(syscall(Under::Nothing, setup, &[1, 0]), "EFAULT");
    assert_eq!(syscall(Under::Network, libc::SYS_clone3, &[0, 0]), "ENOSYS");
    assert_eq!(syscall(Under::Nothing, libc::SYS_clone3, &[0, 0]), "EINVAL");
}

#[test]
fn the_kernel_keyring_is_refused() {
    // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, no create):
    // a thread has no keyring of its own until one is made.
    let thread_keyring = (-1i64).cast_unsigned();
    let args = [0, thread_keyring, 0];
    assert_eq!(syscall(Under::Network, libc::SYS_keyctl, &args), "EPERM");
    assert_eq!(syscall(Under::Nothing, libc::SYS_keyctl, &args), "ENOKEY");
    // Null type names: EFAULT without the filters.
    for call in [libc::SYS_add_key, libc::SYS_request_key] {
        assert_eq!(syscall(Under::Network, call, &[0, 0, 0, 0, 0]), "EPERM");
        assert_eq!(syscall(Under::Nothing, call, &[0, 0, 0, 0, 0]), "EFAULT");
    }
}

#[test]
fn mount_calls_are_refused() {
    // No control: whether these fail without the filters depends on
    // privileges (Landlock refuses them to a sandboxed process anyway).
    for call in [libc::SYS_mount, libc::SYS_umount2, libc::SYS_fsopen] {
        assert_eq!(syscall(Under::Network, call, &[0, 0, 0, 0, 0]), "EPERM");
    }
}

/// A python3 script that makes a new pseudo-terminal its controlling
/// terminal where it can (a new session) and pushes a character into its
/// input with `TIOCSTI`: prints `ok` or the errno's name.
const TIOCSTI: &str = "
import errno, fcntl, os, pty, termios
master, slave = pty.openpty()
try:
    os.setsid()
except OSError:
    pass
fd = os.open(os.ttyname(slave), os.O_RDONLY)
try:
    fcntl.ioctl(fd, termios.TIOCSTI, b'x')
    print('ok')
except OSError as e:
    print(errno.errorcode[e.errno])
";

#[test]
fn pushing_input_into_a_terminal_is_refused() {
    let outcome = python(Under::Network, TIOCSTI, &[]);
    assert_eq!(outcome, (Some(0), "EPERM".to_owned()));
    // Without the filters, on its own controlling terminal: `ok`, or EIO
    // where the kernel refuses TIOCSTI (dev.tty.legacy_tiocsti = 0).
    let (code, control) = python(Under::Nothing, TIOCSTI, &[]);
    assert_eq!(code, Some(0));
    assert!(["ok", "EIO"].contains(&control.as_str()), "{control}");
}

#[test]
fn ordinary_programs_still_work() {
    let script = "
import os, subprocess, threading
pid = os.fork()
if pid == 0:
    os._exit(7)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
seen = []
t = threading.Thread(target=lambda: seen.append('thread'))
t.start(); t.join()
print(seen[0])
print(subprocess.run(['echo', 'child'], capture_output=True, text=True).stdout.strip())
";
    let outcome = python(Under::NoNetwork, script, &[]);
    assert_eq!(outcome, (Some(0), "7\nthread\nchild".to_owned()));

    let output = run(
        Under::NoNetwork,
        "sh",
        &["-c", "echo piped | cat; true | cat"],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "piped\n");
}

/// How many seccomp filters a shell started under `under` reports
/// (`Seccomp_filters` of `/proc/self/status`), and whether its mode is
/// filtering (2).
fn installed(under: Under) -> (usize, bool) {
    let output = run(under, "sh", &["-c", "grep Seccomp /proc/self/status"]);
    let status = String::from_utf8_lossy(&output.stdout);
    let count = status
        .lines()
        .find_map(|line| line.strip_prefix("Seccomp_filters:"))
        .and_then(|count| count.trim().parse().ok())
        .unwrap_or_else(|| panic!("no Seccomp_filters in {status}"));
    (count, status.contains("Seccomp:\t2\n"))
}

#[test]
fn the_filters_are_installed_and_inherited() {
    // The test itself may run under filters of its own (a container's).
    let (before, _) = installed(Under::Nothing);
    // One program per answer: EACCES (sockets) only without network.
    assert_eq!(installed(Under::NoNetwork), (before + 3, true));
    assert_eq!(installed(Under::Network), (before + 2, true));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn each_call_is_named_under_its_x32_number_too() {
    let rules = with_x32(escapes().unwrap());
    for call in [libc::SYS_keyctl, libc::SYS_clone, libc::SYS_unshare] {
        assert_eq!(rules.get(&(call | X32_SYSCALL_BIT)), rules.get(&call));
    }
    assert_eq!(rules.get(&X32_IOCTL), rules.get(&libc::SYS_ioctl));
    let sockets = with_x32(sockets().unwrap());
    assert!(sockets.contains_key(&(libc::SYS_socket | X32_SYSCALL_BIT)));
}

#[test]
#[allow(unsafe_code)]
fn a_process_group_the_spawner_sets_is_set_before_the_filters() {
    // jp starts each tool in a process group of its own (containment.rs,
    // `process_group(0)`): std calls setpgid in the child before any
    // `pre_exec` closure, so the filters do not refuse it.
    let mut command = Command::new("sh");
    command
        .args(["-c", "cut -d' ' -f1,5 /proc/$$/stat"])
        .process_group(0)
        .stdin(Stdio::null());
    let filters = filters(false).unwrap();
    // SAFETY: as in `run`.
    unsafe {
        command.pre_exec(move || filters.apply_in_child());
    }
    let output = command.output().expect("sh runs");
    assert!(output.status.success(), "{output:?}");
    let ids: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_eq!(ids[0], ids[1], "the shell leads its own group");
}

/// A python3 script that makes files in its argument's directory with and
/// without the set-user-ID and set-group-ID bits: prints each outcome.
const SPECIAL_MODES: &str = "
import os, sys
d = sys.argv[1]
open(d + '/plain', 'w').close()
print(
    attempt(lambda: os.chmod(d + '/plain', 0o755)),
    attempt(lambda: os.chmod(d + '/plain', 0o4755)),
    attempt(lambda: os.chmod(d + '/plain', 0o2755)),
    attempt(lambda: os.close(os.open(d + '/made', os.O_CREAT | os.O_WRONLY, 0o4755))),
    attempt(lambda: os.mknod(d + '/node', 0o2644)),
)
";

/// A set-user-ID file made by a tool would run with its owner's rights
/// for whoever runs it later, outside the sandbox.
#[test]
fn no_set_user_id_or_group_id_file_is_made() {
    for (under, expected) in [
        (Under::NoNetwork, "ok EPERM EPERM EPERM EPERM"),
        (Under::Nothing, "ok ok ok ok ok"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let outcome = python(under, SPECIAL_MODES, &[dir.path().to_str().unwrap()]);
        assert_eq!(outcome, (Some(0), expected.to_owned()), "{under:?}");
    }
}
