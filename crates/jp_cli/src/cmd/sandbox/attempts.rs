//! The escape suite's attempts: what each tries (the probe's `KIND ARGS`),
//! in which sandbox, and what the check looks at afterwards. The list is
//! the one docs/sandbox.md gives ("The escape suite").

use std::net::{Ipv4Addr, TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use super::evidence::{Evidence, Snapshot};
use super::probe::EnvSpec;
use super::scratch::Scratch;
use crate::error::Error;

/// Which sandbox an attempt runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// The tool's, with the scratch home as the user's home (its canaries
    /// are the secret places).
    Canary,
    /// The tool's, for the real user: the real secret places.
    Real,
}

/// One attempt.
pub struct Attempt {
    /// Its stable name: `write-absolute`.
    pub name: String,
    /// What it tries, for people.
    pub what: String,
    pub which: Which,
    /// The probe's `KIND ARGS...`, or why it is skipped without one.
    pub probe: Result<Vec<String>, String>,
    pub evidence: Evidence,
}

impl Attempt {
    fn new(name: &str, what: &str, probe: &[&str], evidence: Evidence) -> Self {
        Self {
            name: name.to_owned(),
            what: what.to_owned(),
            which: Which::Canary,
            probe: Ok(probe.iter().map(|s| (*s).to_owned()).collect()),
            evidence,
        }
    }
}

/// What the attempts aim at besides the scratch directory.
pub struct Targets<'a> {
    pub scratch: &'a Scratch,
    /// The checking jp's own process.
    pub jp_pid: u32,
    /// What the environment attempt looks for.
    pub env: EnvSpec,
    /// The real secret places (the tool's sandbox for the real user).
    pub real_deny_read: Vec<PathBuf>,
    /// The real user's home.
    pub home: Option<PathBuf>,
}

/// Every attempt, in the order they run and print.
///
/// # Errors
///
/// A loopback socket the check listens on cannot be opened.
pub fn all(targets: &Targets<'_>) -> Result<Vec<Attempt>, Error> {
    let mut all = writes(targets.scratch);
    all.extend(moves(targets.scratch));
    all.extend(namespaces(targets.scratch));
    all.extend(canary_reads(targets.scratch));
    all.extend(real_reads(targets));
    all.extend(network(targets.scratch).map_err(|source| Error::File {
        action: "listen on a loopback socket in",
        path: targets.scratch.root().to_owned(),
        source,
    })?);
    all.extend(processes(targets));
    Ok(all)
}

/// A path as a probe's argument: the scratch directory's are UTF-8
/// ([`Scratch::new`] checks), and a real place's that is not is skipped.
fn text(path: &Path) -> &str {
    path.to_str().unwrap_or_default()
}

/// The writes: each aims outside the workspace, and the file it aims at
/// must be as it was after the run.
fn writes(scratch: &Scratch) -> Vec<Attempt> {
    let out = scratch.outside();
    let files = |names: &[&str]| outside_files(scratch, names);
    let absolute = out.join("absolute");
    let proc_root = format!("/proc/self/root{}", text(&out.join("proc-root")));
    let proc_cwd = match scratch.sleeper_pid() {
        Some(pid) => format!("/proc/{pid}/cwd/proc-cwd"),
        None => String::new(),
    };
    let hard_target = out.join("hard-target");
    vec![
        Attempt::new(
            "write-absolute",
            "write outside through an absolute path",
            &["write", text(&absolute)],
            files(&["absolute"]),
        ),
        Attempt::new(
            "write-dotdot",
            "write outside through `..`",
            &["write", "../outside/dotdot"],
            files(&["dotdot"]),
        ),
        Attempt::new(
            "write-symlink",
            "write outside through a symlink in the workspace",
            &["write", "link/symlink"],
            files(&["symlink"]),
        ),
        Attempt::new(
            "write-hardlink",
            "hard-link an outside file into the workspace and write it",
            &["hardlink", text(&hard_target), "hardlink"],
            files(&["hard-target"]),
        ),
        Attempt::new(
            "write-proc-self-root",
            "write outside through /proc/self/root",
            &["write", &proc_root],
            files(&["proc-root"]),
        ),
        Attempt::new(
            "write-proc-pid-cwd",
            "write outside through /proc/PID/cwd of another process",
            &["write", &proc_cwd],
            files(&["proc-cwd"]),
        ),
    ]
}

/// `outside/NAME` for each name, as they are now.
fn outside_files(scratch: &Scratch, names: &[&str]) -> Evidence {
    let at = |name: &&str| Snapshot::of(scratch.outside().join(name), format!("outside/{name}"));
    Evidence::Files(names.iter().map(at).collect())
}

/// Moving files in and out, truncating one, and changing what a tool may
/// not change: jp's trust records and the workspace's config.
fn moves(scratch: &Scratch) -> Vec<Attempt> {
    let out = scratch.outside();
    let ws = scratch.workspace();
    let trust = scratch.home().join(".config/jp/trust.json");
    let mut renamed = outside_files(scratch, &["moved-out"]);
    if let Evidence::Files(files) = &mut renamed {
        files.push(Snapshot::of(ws.join("move-out"), "workspace/move-out"));
    }
    vec![
        Attempt::new(
            "rename-out",
            "rename a file out of the workspace",
            &["rename", "move-out", text(&out.join("moved-out"))],
            renamed,
        ),
        Attempt::new(
            "rename-in",
            "rename an outside file into the workspace",
            &["rename", text(&out.join("move-in")), "moved-in"],
            outside_files(scratch, &["move-in"]),
        ),
        Attempt::new(
            "truncate-outside",
            "truncate an outside file",
            &["truncate", text(&out.join("truncate-me"))],
            outside_files(scratch, &["truncate-me"]),
        ),
        Attempt::new(
            "write-trust-records",
            "write jp's trust records (~/.config/jp/trust.json)",
            &["write", text(&trust)],
            Evidence::Files(vec![Snapshot::of(
                trust.clone(),
                "home/.config/jp/trust.json",
            )]),
        ),
        Attempt::new(
            "write-workspace-config",
            "change the workspace's .jp/config.toml",
            &["write", ".jp/config.toml"],
            Evidence::Files(vec![Snapshot::of(
                ws.join(".jp/config.toml"),
                "workspace/.jp/config.toml",
            )]),
        ),
        Attempt::new(
            "write-setuid",
            "make a set-user-ID program in the workspace (it would run as its owner for anyone)",
            &["setuid", "suid"],
            Evidence::Report,
        ),
    ]
}

/// Getting out through a namespace of one's own (`unshare`): entering one
/// at all, and bind-mounting `outside/` into the workspace to write there.
fn namespaces(scratch: &Scratch) -> Vec<Attempt> {
    let out = scratch.outside();
    let mount = r#"mount --bind "$1" "$2" && echo x > "$2/unshare-mount""#;
    vec![
        Attempt::new(
            "unshare-namespace",
            "enter a new user and mount namespace (unshare -Um)",
            &["program", "unshare", "-Um", "true"],
            Evidence::Report,
        ),
        Attempt::new(
            "unshare-mount-write",
            "bind-mount outside into the workspace in a new namespace and write",
            &[
                "program",
                "unshare",
                "-Urm",
                "sh",
                "-c",
                mount,
                "sh",
                text(&out),
                "mnt",
            ],
            outside_files(scratch, &["unshare-mount"]),
        ),
    ]
}

/// `~/.docker/config.json` -> `docker-config-json`.
pub fn slug(place: &str) -> String {
    place
        .to_lowercase()
        .trim_start_matches("~/")
        .split(['/', '.'])
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// A read of each canary (the default secret places, in the scratch
/// home).
fn canary_reads(scratch: &Scratch) -> Vec<Attempt> {
    scratch
        .canaries()
        .iter()
        .map(|canary| {
            Attempt::new(
                &format!("read-canary-{}", slug(canary.entry)),
                &format!("read {} (a canary)", canary.entry),
                &["read", text(&canary.file)],
                Evidence::Report,
            )
        })
        .collect()
}

/// A read of each secret place of this machine's user that exists.
fn real_reads(targets: &Targets<'_>) -> Vec<Attempt> {
    targets
        .real_deny_read
        .iter()
        .map(|path| {
            let shown = match targets.home.as_deref().map(|home| path.strip_prefix(home)) {
                Some(Ok(rel)) => format!("~/{}", rel.display()),
                _ => path.display().to_string(),
            };
            let mut attempt = Attempt::new(
                &format!("read-real-{}", slug(&shown)),
                &format!("read {shown} (this machine's)"),
                &["read", text(path)],
                Evidence::Report,
            );
            attempt.which = Which::Real;
            if std::fs::symlink_metadata(path).is_err() {
                attempt.probe = Err("absent".to_owned());
            } else if path.to_str().is_none() {
                // A probe's arguments are text.
                attempt.probe = Err("its path is not UTF-8".to_owned());
            }
            attempt
        })
        .collect()
}

/// The network: loopback sockets the check opens (escaped when something
/// arrives) and sockets made but never used.
fn network(scratch: &Scratch) -> std::io::Result<Vec<Attempt>> {
    // A local daemon's socket (a terminal multiplexer's, the session
    // bus): what reaches it has the daemon run what it is sent.
    let daemon = scratch.outside().join("daemon.sock");
    let unix = UnixListener::bind(&daemon)?;
    unix.set_nonblocking(true)?;
    let tcp = || -> std::io::Result<(TcpListener, String)> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port().to_string();
        Ok((listener, port))
    };
    let udp = || -> std::io::Result<(UdpSocket, String)> {
        let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
        socket.set_nonblocking(true)?;
        let port = socket.local_addr()?.port().to_string();
        Ok((socket, port))
    };
    let (connect, connect_port) = tcp()?;
    let (bash, bash_port) = tcp()?;
    let (datagram, datagram_port) = udp()?;
    let (dns, dns_port) = udp()?;
    let bash_line = format!("echo x > /dev/tcp/127.0.0.1/{bash_port}");
    Ok(vec![
        Attempt::new(
            "net-tcp-loopback",
            "connect over TCP to a loopback listener",
            &["tcp", &connect_port],
            Evidence::Connection(connect),
        ),
        Attempt::new(
            "net-udp-loopback",
            "send a UDP datagram to a loopback socket",
            &["udp", &datagram_port, "datagram"],
            Evidence::Datagram(datagram),
        ),
        Attempt::new(
            "net-dns-loopback",
            "send a DNS query to a loopback socket",
            &["udp", &dns_port, "dns"],
            Evidence::Datagram(dns),
        ),
        Attempt::new(
            "net-tcp-socket",
            "make and bind a TCP socket (never used)",
            &["socket", "tcp"],
            Evidence::Report,
        ),
        Attempt::new(
            "net-udp-socket",
            "make and bind a UDP socket (never used)",
            &["socket", "udp"],
            Evidence::Report,
        ),
        Attempt::new(
            "net-unix-socket",
            "connect to a UNIX socket outside (a daemon's, such as tmux's)",
            &["unix", text(&daemon)],
            Evidence::UnixConnection(unix),
        ),
        Attempt::new(
            "net-bash-dev-tcp",
            "connect through bash's /dev/tcp to a loopback listener",
            &["program", "bash", "-c", &bash_line],
            Evidence::Connection(bash),
        ),
    ])
}

/// jp's own process and environment, and processes that try to outlive
/// their run.
fn processes(targets: &Targets<'_>) -> Vec<Attempt> {
    let pid = targets.jp_pid.to_string();
    let env = serde_json::to_string(&targets.env).unwrap_or_default();
    vec![
        Attempt::new(
            "env-credentials",
            "find a credential in its environment",
            &["env", &env],
            Evidence::Report,
        ),
        Attempt::new(
            "signal-jp",
            "signal jp (kill(JP_PID, 0))",
            &["signal", &pid],
            Evidence::Report,
        ),
        Attempt::new(
            "read-jp-environ",
            "read jp's environment (/proc/JP_PID/environ)",
            &["read", &format!("/proc/{pid}/environ")],
            Evidence::Report,
        ),
        Attempt::new(
            "trace-jp-mem",
            "open jp's memory (/proc/JP_PID/mem, ptrace access)",
            &["open", &format!("/proc/{pid}/mem")],
            Evidence::Report,
        ),
        outlive(
            targets.scratch,
            "double-fork",
            "leave a double-forked child running after the run",
        ),
        outlive(
            targets.scratch,
            "setsid",
            "leave a child in a new session, without jp's marker, running after the run",
        ),
    ]
}

/// A child left behind (`how`: `double-fork`, `setsid`) that must be gone
/// [`OUTLIVE_WAIT`](super::evidence::OUTLIVE_WAIT) after its run.
fn outlive(scratch: &Scratch, how: &str, what: &str) -> Attempt {
    let pid_file = scratch.workspace().join(format!("{how}.pid"));
    let marker = scratch.workspace().join(format!("{how}.alive"));
    let args = [text(&pid_file).to_owned(), text(&marker).to_owned()];
    Attempt::new(
        &format!("outlive-{how}"),
        what,
        &["outlive", how, &args[0], &args[1]],
        Evidence::Outlives {
            pid_file,
            marker,
            ended: None,
        },
    )
}
