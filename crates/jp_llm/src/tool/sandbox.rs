//! The boundary around every process jp starts (a local tool, a default
//! tool's `jp tool ...` child, an MCP server over stdio), set on its
//! [`Command`] before it is spawned (see `docs/sandbox.md`):
//!
//! - its environment: the variables of jp's that [`DEFAULT_ENV`] names and
//!   those its `sandbox.env` names, and nothing else of jp's (no provider
//!   key, no `*_KEY`, `*_TOKEN`, `*_SECRET` or `*PASSWORD*` unless named);
//! - a private `TMPDIR`, made for the run and removed after it
//!   ([`Confinement`]);
//! - on Linux, the kernel's bound on it and every process it starts
//!   ([`kernel`]: Landlock for what it writes and reads and whom it
//!   signals, seccomp for sockets and the ways around Landlock, no
//!   capability left to `root`).
//!
//! Where the kernel cannot enforce the bound, [`unbounded`] says why: the
//! judge then asks before every call (fail closed), and an approved call
//! runs with the environment and `TMPDIR` only.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use jp_config::sandbox::{DEFAULT_DENY_READ, DEFAULT_ENV, SandboxConfig};
use tokio::process::Command;

/// What one process jp starts may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sandbox {
    /// The variables of jp's environment passed to the process besides
    /// [`DEFAULT_ENV`]'s, by exact name (`sandbox.env`).
    pub env: Vec<String>,
    /// Paths beneath which the process may write besides the workspace
    /// root and its private `TMPDIR` (`sandbox.write`).
    pub write: Vec<PathBuf>,
    /// Paths the process may not read: the defaults and `sandbox.deny_read`
    /// ([`Sandbox::from_config`]).
    pub deny_read: Vec<PathBuf>,
    /// Whether it may use the network (`sandbox.network`).
    pub network: bool,
    /// Why the process runs without the kernel's part of its sandbox (its
    /// `sandbox.none`, or a kernel that cannot enforce it); `None` when it
    /// runs with it. A call of a tool that runs so is always asked first
    /// (the judge's part, see [`Sandbox::from_config`]).
    pub unbounded: Option<String>,
}

/// What a started process's sandbox holds for as long as it runs: its
/// private temporary directory, removed (with what is in it) when this is
/// dropped.
#[derive(Debug)]
pub struct Confinement {
    _tmp: tempfile::TempDir,
}

/// Why a process cannot be started in its sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// Its private temporary directory could not be made.
    #[error("cannot make its private temporary directory: {0}")]
    Tmp(std::io::Error),
    /// The kernel's bound could not be set up for it (a path of its
    /// sandbox cannot be opened, the kernel refused the rules).
    #[error("the kernel cannot confine it ({0}); jp does not run a tool without its sandbox")]
    NotEnforceable(String),
}

/// The paths of a `sandbox.write` or `sandbox.deny_read` list: `~/`
/// stands for `home` (left out without one); the rest are absolute already
/// (config validation).
fn home_paths<S: AsRef<str>>(config: &[S], home: Option<&Path>) -> Vec<PathBuf> {
    config
        .iter()
        .map(AsRef::as_ref)
        .filter_map(|path| match (path.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => Some(home.join(rest)),
            (Some(_), None) => None,
            (None, _) => Some(PathBuf::from(path)),
        })
        .collect()
}

impl Sandbox {
    /// The sandbox a process gets from its (joined) `config`, for a user
    /// whose home is `$HOME` and whose config directory is
    /// `$XDG_CONFIG_HOME` (read from jp's environment).
    #[must_use]
    pub fn from_config(config: &SandboxConfig) -> Self {
        let var = |name| std::env::var_os(name).map(PathBuf::from);
        Self::from_config_in(
            config,
            var("HOME").as_deref(),
            var("XDG_CONFIG_HOME").as_deref(),
        )
    }

    /// [`Self::from_config`] for the given home and config directory.
    #[must_use]
    pub fn from_config_in(
        config: &SandboxConfig,
        home: Option<&Path>,
        config_home: Option<&Path>,
    ) -> Self {
        let mut deny_read = home_paths(DEFAULT_DENY_READ, home);
        if let Some(config_home) = config_home {
            deny_read.push(config_home.join("jp"));
        }
        for path in home_paths(&config.deny_read, home) {
            if !deny_read.contains(&path) {
                deny_read.push(path);
            }
        }
        Self {
            env: config.env.clone(),
            write: home_paths(&config.write, home),
            deny_read,
            network: config.network(),
            unbounded: unbounded(config),
        }
    }

    /// The environment of a process started from one whose environment
    /// is `parent`: what [`DEFAULT_ENV`] names, without anything that
    /// looks like a credential, and what [`Self::env`] names, as it is.
    pub fn environment(
        &self,
        parent: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        parent
            .into_iter()
            .filter(|(name, _)| self.passes(name))
            .collect()
    }

    /// Whether jp's variable `name` reaches the process.
    fn passes(&self, name: &OsStr) -> bool {
        // A name that is not UTF-8 is none a user could have named.
        let Some(name) = name.to_str() else {
            return false;
        };
        if self.env.iter().any(|named| named == name) {
            return true;
        }
        let by_default = DEFAULT_ENV
            .iter()
            .any(|default| match default.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => *default == name,
            });
        by_default && !looks_secret(name)
    }

    /// Gives `command` this sandbox's environment instead of jp's (set
    /// before any variable the caller adds).
    pub fn apply_env(&self, command: &mut Command) {
        command.env_clear();
        command.envs(self.environment(std::env::vars_os()));
    }

    /// Sets the whole sandbox on `command`, a process that works in the
    /// workspace `root`: its environment ([`Self::apply_env`]), a private
    /// `TMPDIR`, and (Linux) the kernel's bound on where it writes. Keep
    /// the [`Confinement`] until the process and everything it started
    /// are gone.
    ///
    /// # Errors
    ///
    /// When the temporary directory cannot be made, or the kernel cannot
    /// enforce the bound: the process must then not be started.
    pub fn apply(&self, command: &mut Command, root: &Path) -> Result<Confinement, SandboxError> {
        self.apply_env(command);
        // Its own: no other process (another run, another user) may look.
        let tmp = tempfile::Builder::new()
            .prefix("jp-tool-")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir()
            .map_err(SandboxError::Tmp)?;
        command.env("TMPDIR", tmp.path());
        #[cfg(target_os = "linux")]
        if self.unbounded.is_none() {
            kernel::confine(
                command,
                &kernel::Plan {
                    root,
                    tmp: tmp.path(),
                    write: &self.write,
                    deny_read: &self.deny_read,
                    network: self.network,
                },
            )
            .map_err(SandboxError::NotEnforceable)?;
        }
        #[cfg(not(target_os = "linux"))]
        let _ = root;
        Ok(Confinement { _tmp: tmp })
    }
}

/// Why a process with the sandbox `config` would run without the kernel's
/// part of it, if it would (a phrase: "its sandbox is `none`", "the kernel
/// cannot enforce one: ..."): its `sandbox.none`, or a kernel that cannot
/// enforce it ([`enforceable`]). A call of such a tool must be asked.
#[must_use]
pub fn unbounded(config: &SandboxConfig) -> Option<String> {
    if config.none {
        return Some("its sandbox is `none`".to_owned());
    }
    enforceable()
        .err()
        .map(|why| format!("the kernel cannot enforce one: {why}"))
}

/// [`unbounded`] for a process working in the workspace at `root`, which
/// is also unbounded when the workspace holds one of the secret places (or
/// lies inside one): the sandbox lets a tool write everywhere in its
/// workspace, so it could not keep `~/.ssh` from a tool working in `~`.
#[must_use]
pub fn unbounded_in(config: &SandboxConfig, root: &Path) -> Option<String> {
    unbounded(config).or_else(|| {
        let root = std::fs::canonicalize(root).ok()?;
        // As the path is, where it does not exist (yet: the tool could
        // make it), else where it leads.
        let real = |path: PathBuf| std::fs::canonicalize(&path).unwrap_or(path);
        let home = std::env::var_os("HOME").map(|home| real(PathBuf::from(home)));
        let secret = Sandbox::from_config(&SandboxConfig::default())
            .deny_read
            .into_iter()
            .map(real)
            .find(|path| path.starts_with(&root) || root.starts_with(path))
            // The home itself: `~/.bashrc`, `~/.ssh` made by the tool.
            .or_else(|| home.filter(|home| home.starts_with(&root)))?;
        Some(format!(
            "the workspace holds {} (or lies in it), which a sandbox working there cannot keep out of reach",
            secret.display()
        ))
    })
}

/// Whether this machine's kernel can enforce a sandbox around the
/// processes jp starts, and if not, why (asked once per jp). Where it
/// cannot, no process is started sandboxed ([`Sandbox::apply`] fails), and
/// a call that would run unattended is asked instead.
///
/// # Errors
///
/// Why not: no Landlock, or one older than Linux 6.2's; not Linux.
pub fn enforceable() -> Result<(), String> {
    #[cfg(target_os = "linux")]
    return kernel::enforceable();
    #[cfg(not(target_os = "linux"))]
    Err("jp has no kernel sandbox on this system yet (Linux only)".to_owned())
}

/// Makes this process (jp) one whose memory, and so `/proc/PID/environ`
/// with its keys, another process of the same user may not read: the
/// processes jp starts get none of its keys in their environment, and must
/// not read them from jp's either. (`root`, and a process allowed to trace,
/// still can; the kernel boundary of docs/sandbox.md is what stops those.)
/// The processes jp starts are not affected: `exec` resets it.
pub fn protect_this_process() {
    #[cfg(target_os = "linux")]
    if let Err(error) =
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
    {
        tracing::warn!(%error, "cannot keep jp's environment from its tools");
    }
    #[cfg(target_os = "linux")]
    keep_descriptors_from_tools();
}

/// Marks every file descriptor jp was started with beyond the standard
/// three close-on-exec, so that no process jp starts inherits one: a
/// descriptor opened outside the sandbox (`jp ... 7>>~/.bashrc`) would be
/// a way to write where the sandbox does not allow. jp's own descriptors
/// are close-on-exec already (Rust opens them so).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn keep_descriptors_from_tools() {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: the descriptor is only borrowed for two `fcntl` calls,
        // made at jp's start before any other thread can close it; one
        // that is closed already (the directory listing's own) makes them
        // fail with EBADF, which is ignored.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        if let Ok(flags) = rustix::io::fcntl_getfd(fd) {
            let _ = rustix::io::fcntl_setfd(fd, flags | rustix::io::FdFlags::CLOEXEC);
        }
    }
}

/// Whether a variable called `name` looks like it holds a credential.
fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["_KEY", "_TOKEN", "_SECRET"]
        .iter()
        .any(|suffix| upper.ends_with(suffix))
        || upper.contains("PASSWORD")
}

#[cfg(target_os = "linux")]
mod kernel;
#[cfg(target_os = "linux")]
mod reads;
#[cfg(target_os = "linux")]
mod seccomp;

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
