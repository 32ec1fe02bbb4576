//! The boundary around every process jp starts (a local tool, a default
//! tool's `jp tool ...` child, an MCP server over stdio), set on its
//! [`Command`] before it is spawned. What it enforces so far: the
//! environment. The process gets the variables of jp's that
//! [`DEFAULT_ENV`] names and those its `sandbox.env` names, and nothing
//! else of jp's: no provider key, no `*_KEY`, `*_TOKEN`, `*_SECRET` or
//! `*PASSWORD*` unless named (see `docs/sandbox.md`).
//!
//! Prototype (issue 36): its writes, too. The process gets a private
//! `TMPDIR`, made for the run and removed after it ([`Confinement`]), and
//! on Linux the kernel (Landlock) lets it and every process it starts
//! write only beneath the workspace root, that directory, a few devices
//! and what `sandbox.write` adds ([`writes`]). Where the kernel cannot
//! enforce that, the process is not started ([`SandboxError`]).

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
    /// root and its private `TMPDIR` (`sandbox.write`, see [`write_paths`]).
    pub write: Vec<PathBuf>,
    /// Paths the process may not read: the defaults and `sandbox.deny_read`
    /// ([`Sandbox::from_config`]).
    pub deny_read: Vec<PathBuf>,
    /// Whether it may use the network (`sandbox.network`).
    pub network: bool,
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
    /// The kernel cannot enforce where it may write.
    #[error(
        "the kernel cannot confine where it writes ({0}); jp does not run a tool without its sandbox"
    )]
    NotEnforceable(String),
}

/// The paths of a `sandbox.write` or `sandbox.deny_read` list: `~/`
/// stands for `home` (left out without one); the rest are absolute already
/// (config validation).
#[must_use]
pub fn write_paths(config: &[String], home: Option<&Path>) -> Vec<PathBuf> {
    config
        .iter()
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
        let defaults: Vec<String> = DEFAULT_DENY_READ.iter().map(|p| (*p).to_owned()).collect();
        let mut deny_read = write_paths(&defaults, home);
        if let Some(config_home) = config_home {
            deny_read.push(config_home.join("jp"));
        }
        for path in write_paths(&config.deny_read, home) {
            if !deny_read.contains(&path) {
                deny_read.push(path);
            }
        }
        Self {
            env: config.env.clone(),
            write: write_paths(&config.write, home),
            deny_read,
            network: config.network(),
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
        let tmp = tempfile::Builder::new()
            .prefix("jp-tool-")
            .tempdir()
            .map_err(SandboxError::Tmp)?;
        command.env("TMPDIR", tmp.path());
        #[cfg(target_os = "linux")]
        writes::confine(command, root, tmp.path(), &self.write)
            .map_err(SandboxError::NotEnforceable)?;
        #[cfg(not(target_os = "linux"))]
        let _ = root;
        Ok(Confinement { _tmp: tmp })
    }
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
mod writes;

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
