//! `jp sandbox probe KIND ARGS...` (hidden): one attempt of the escape
//! suite, run by `jp sandbox check` inside the sandbox as a local tool. It
//! reads its request (and ignores it), tries what `KIND` names, and answers
//! with a success whose content is its [`Reported`] line. It never prints
//! what it managed to read, only how much.
//!
//! Every path it is given is absolute (the check's scratch directory), or
//! relative to its working directory, the scratch workspace.

use std::io::Write as _;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use super::report::{Reported, errno};

/// What a successful write leaves in a file.
pub const WRITTEN: &[u8] = b"jp sandbox check: written by the probe\n";

/// How long a connection to loopback may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Serves one request: the attempt `kind` with `args`.
pub fn serve(kind: &str, args: &[String]) -> ExitCode {
    jp_tool::serve(|_request| match attempt(kind, args) {
        Ok(reported) => jp_tool::Outcome::success(reported.encode()),
        Err(problem) => jp_tool::Outcome::error(problem),
    })
}

/// Tries `kind`; an error is a probe used wrongly.
fn attempt(kind: &str, args: &[String]) -> Result<Reported, String> {
    let strs: Vec<&str> = args.iter().map(String::as_str).collect();
    Ok(match (kind, strs.as_slice()) {
        ("write", [path]) => write(Path::new(path)),
        ("hardlink", [from, to]) => hardlink(Path::new(from), Path::new(to)),
        ("rename", [from, to]) => outcome(std::fs::rename(from, to), "renamed it"),
        ("truncate", [path]) => truncate(Path::new(path)),
        ("setuid", [path]) => setuid(Path::new(path)),
        ("read", [path]) => read(Path::new(path)),
        ("open", [path]) => outcome(std::fs::File::open(path).map(drop), "opened it"),
        ("signal", [pid]) => signal(pid)?,
        ("tcp", [port]) => tcp(port)?,
        ("unix", [path]) => outcome(
            std::os::unix::net::UnixStream::connect(path).map(drop),
            "connected",
        ),
        ("udp", [port, payload]) => udp(port, payload)?,
        ("socket", [family]) => socket(family)?,
        ("program", [name, args @ ..]) => program(name, args),
        ("outlive", [how @ ("double-fork" | "setsid"), pid_file, marker]) => {
            outlive(how, pid_file, marker)
        }
        ("env", [spec]) => environment(spec)?,
        _ => return Err(format!("no probe `{kind}` taking {} arguments", args.len())),
    })
}

/// Blocked with the error, or escaped with `done`.
fn outcome(result: std::io::Result<()>, done: &str) -> Reported {
    match result {
        Ok(()) => Reported::escaped(done),
        Err(e) => Reported::blocked(errno(&e)),
    }
}

fn write(path: &Path) -> Reported {
    outcome(std::fs::write(path, WRITTEN), "wrote it")
}

/// Links `from` (outside) to `to` (inside), then writes through the link.
fn hardlink(from: &Path, to: &Path) -> Reported {
    if let Err(e) = std::fs::hard_link(from, to) {
        return Reported::blocked(format!("link: {}", errno(&e)));
    }
    let written = std::fs::OpenOptions::new()
        .append(true)
        .open(to)
        .and_then(|mut file| file.write_all(WRITTEN));
    match written {
        Ok(()) => Reported::escaped("linked it and wrote through the link"),
        Err(e) => Reported::blocked(format!("linked it, but the write: {}", errno(&e))),
    }
}

fn truncate(path: &Path) -> Reported {
    let opened = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path);
    outcome(opened.map(drop), "truncated it")
}

/// Makes `path` a set-user-ID file: a copy of nothing, mode 4755.
fn setuid(path: &Path) -> Reported {
    use std::os::unix::fs::PermissionsExt as _;
    let made = std::fs::write(path, "#!/bin/sh\n")
        .and_then(|()| std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o4755)));
    outcome(made, "made it set-user-ID")
}

/// The most bytes read of one file: enough to prove it readable.
const READ_CAP: u64 = 64 * 1024;

/// Reads a file, or lists a directory and reads what is in it (at most
/// [`READ_CAP`] of each file).
fn read(path: &Path) -> Reported {
    if !path.is_dir() {
        return match read_capped(path) {
            Ok(n) => Reported::escaped(format!("read {n} bytes")),
            Err(e) => Reported::blocked(errno(&e)),
        };
    }
    // A directory: the sandbox lets names be listed, never contents read,
    // so what counts is whether any file in it (a few levels down) opens.
    let mut listed = 0;
    let mut read = 0;
    let mut last_error = None;
    let mut dirs = vec![(path.to_owned(), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                last_error = Some(errno(&e));
                continue;
            }
        };
        for entry in entries.filter_map(Result::ok).take(READ_ENTRIES) {
            listed += 1;
            let entry = entry.path();
            if entry.is_dir() {
                if depth < 3 {
                    dirs.push((entry, depth + 1));
                }
            } else {
                match read_capped(&entry) {
                    Ok(_) => read += 1,
                    Err(e) => last_error = Some(errno(&e)),
                }
            }
        }
    }
    if read > 0 {
        Reported::escaped(format!("read {read} of its files"))
    } else {
        Reported::blocked(match last_error {
            Some(error) if listed > 0 => format!("{error}; its names are listable"),
            Some(error) => error,
            None => format!("listed {listed} entries, none a file"),
        })
    }
}

/// The most entries of one directory a read attempt looks at.
const READ_ENTRIES: usize = 200;

/// How many bytes of `path` could be read, up to [`READ_CAP`]; what was
/// read is dropped.
fn read_capped(path: &Path) -> std::io::Result<usize> {
    use std::io::Read as _;
    use std::os::unix::fs::FileTypeExt as _;
    let file = std::fs::File::open(path)?;
    // A device (a terminal) is not read: a read could wait for input
    // forever. Opening it for reading is the escape.
    if file.metadata()?.file_type().is_char_device() {
        return Ok(0);
    }
    let mut bytes = Vec::new();
    file.take(READ_CAP).read_to_end(&mut bytes)
}

/// `kill(pid, 0)`: whether it could signal the process.
fn signal(pid: &str) -> Result<Reported, String> {
    let pid = pid
        .parse::<i32>()
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .ok_or_else(|| format!("not a process id: {pid}"))?;
    Ok(match rustix::process::test_kill_process(pid) {
        Ok(()) => Reported::escaped("may signal it"),
        Err(e) => Reported::blocked(errno(&std::io::Error::from(e))),
    })
}

fn loopback(port: &str) -> Result<SocketAddr, String> {
    let port = port
        .parse::<u16>()
        .map_err(|_| format!("not a port: {port}"))?;
    Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
}

fn tcp(port: &str) -> Result<Reported, String> {
    let to = loopback(port)?;
    Ok(outcome(
        TcpStream::connect_timeout(&to, CONNECT_TIMEOUT).map(drop),
        "connected",
    ))
}

/// A datagram to loopback: `payload` is `datagram` or `dns` (a DNS query
/// for `example.com`).
fn udp(port: &str, payload: &str) -> Result<Reported, String> {
    let to = loopback(port)?;
    let bytes: &[u8] = match payload {
        "dns" => DNS_QUERY,
        _ => b"jp sandbox check",
    };
    let socket = match UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)) {
        Ok(socket) => socket,
        Err(e) => return Ok(Reported::blocked(format!("socket: {}", errno(&e)))),
    };
    Ok(match socket.send_to(bytes, to) {
        Ok(n) => Reported::done(format!("sent {n} bytes")),
        Err(e) => Reported::blocked(format!("send: {}", errno(&e))),
    })
}

/// A DNS query (id 0x6a70, recursion desired) for `example.com`, type A.
const DNS_QUERY: &[u8] = &[
    0x6a, 0x70, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 7, b'e', b'x', b'a',
    b'm', b'p', b'l', b'e', 3, b'c', b'o', b'm', 0, 0x00, 0x01, 0x00, 0x01,
];

/// A TCP or UDP socket on every address, any port: made and bound, never
/// used (nothing leaves the machine).
fn socket(family: &str) -> Result<Reported, String> {
    let any = (Ipv4Addr::UNSPECIFIED, 0);
    let made = match family {
        "tcp" => TcpListener::bind(any).map(drop),
        "udp" => UdpSocket::bind(any).map(drop),
        _ => return Err(format!("no socket kind `{family}`")),
    };
    Ok(outcome(made, "made and bound one"))
}

/// Runs `program` with `args`: escaped when it succeeds, blocked with the
/// last line of its stderr when it fails, skipped when it is not here.
fn program(program: &str, args: &[&str]) -> Reported {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output();
    match output {
        Ok(output) if output.status.success() => Reported::escaped(format!("{program} succeeded")),
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
            Reported::blocked(last.unwrap_or("it failed").trim().to_owned())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Reported::skipped(format!("no {program} here"))
        }
        Err(e) => Reported::blocked(format!("{program}: {}", errno(&e))),
    }
}

/// What a process left behind runs: its pid into `$1`, then, a second
/// later, `alive` into `$2` (if it was not killed by then).
const LINGER: &str = r#"echo $$ > "$1"; sleep 1; echo alive > "$2""#;

/// Leaves a process behind that tries to outlive the run: `double-fork`
/// (a background shell of a shell that exits, still in the run's group and
/// with its marker), or `setsid` (a new session, with an empty
/// environment: no marker either). The check looks for it afterwards.
fn outlive(how: &str, pid_file: &str, marker: &str) -> Reported {
    let mut command = match how {
        "double-fork" => {
            let mut command = Command::new("sh");
            let script = format!("sh -c '{LINGER}' sh \"$1\" \"$2\" &");
            command.args(["-c", &script, "sh", pid_file, marker]);
            command
        }
        _setsid => {
            let mut command = Command::new("setsid");
            let path = format!("PATH={}", std::env::var("PATH").unwrap_or_default());
            command.args([
                "env", "-i", &path, "sh", "-c", LINGER, "sh", pid_file, marker,
            ]);
            command
        }
    };
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    match command.spawn() {
        Ok(mut child) => {
            if how == "double-fork" {
                // The outer shell exits at once, leaving the inner one;
                // the probe exits once that one runs (has written its pid),
                // as a daemon would have started.
                let _ = child.wait();
                wait_for(Path::new(pid_file));
            }
            // A setsid child is left running: the probe exits before it,
            // once it has cleared jp's marker from its environment
            // (`env -i`), as a daemon would have.
            if how == "setsid" {
                std::thread::sleep(Duration::from_millis(300));
            }
            Reported::done("left a process behind")
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Reported::skipped("no setsid program here")
        }
        Err(e) => Reported::blocked(errno(&e)),
    }
}

/// Waits (at most two seconds) until `path` exists.
fn wait_for(path: &Path) {
    for _ in 0..200 {
        if path.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What the environment check looks for.
#[derive(serde::Deserialize, serde::Serialize)]
pub struct EnvSpec {
    /// A value jp's environment holds under credential-like names.
    pub canary: String,
    /// Names that must be absent: the providers' key variables.
    pub forbidden: Vec<String>,
    /// Names the tool's `sandbox.env` passes on purpose.
    pub named: Vec<String>,
}

/// Whether the environment holds a credential-like variable it was not
/// given on purpose, a provider's key, or the canary value.
fn environment(spec: &str) -> Result<Reported, String> {
    let spec: EnvSpec =
        serde_json::from_str(spec).map_err(|e| format!("not an environment spec: {e}"))?;
    let mut found: Vec<String> = Vec::new();
    let mut count = 0;
    for (name, value) in std::env::vars_os() {
        count += 1;
        let name = name.to_string_lossy().into_owned();
        let named = spec.named.contains(&name);
        let leaked = spec.forbidden.contains(&name)
            || (looks_secret(&name) && !named)
            || (!spec.canary.is_empty() && value.to_string_lossy().contains(&spec.canary));
        if leaked {
            found.push(name);
        }
    }
    Ok(if found.is_empty() {
        Reported::blocked(format!("none of its {count} variables is a credential"))
    } else {
        found.sort();
        Reported::escaped(format!("it holds {}", found.join(", ")))
    })
}

/// The issue's rule: `*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`. Written
/// here again on purpose, not taken from the sandbox it checks: the suite
/// must not trust the code under test to say what a credential is.
fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["_KEY", "_TOKEN", "_SECRET"]
        .iter()
        .any(|suffix| upper.ends_with(suffix))
        || upper.contains("PASSWORD")
}
