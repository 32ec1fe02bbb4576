//! The escape suite's scratch directory: a fresh temporary directory that
//! holds everything the attempts aim at, so that the suite never writes into
//! the user's workspace or home.
//!
//! ```text
//! <tmp>/workspace/.jp/config.toml   the workspace the probe runs in
//! <tmp>/workspace/link -> <tmp>/outside
//! <tmp>/outside/                     where no write may land
//! <tmp>/home/.ssh/id_ed25519 ...     a canary at every default secret place
//! ```
//!
//! Dropping it kills the process it started (a `sleep` working in
//! `outside/`) and removes the directory.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use jp_config::sandbox::DEFAULT_DENY_READ;

use crate::error::Error;

/// What the workspace's `.jp/config.toml` holds; a run must leave it so.
pub const WORKSPACE_CONFIG: &str = "# jp sandbox check: a tool may not change this file\n";

/// What each canary file holds.
pub const CANARY: &str = "jp sandbox check: a canary secret\n";

/// Files an attempt moves, truncates or links: each made in `outside/`
/// (or the workspace) before the attempts run.
pub const OUTSIDE_FILES: &[&str] = &["hard-target", "move-in", "truncate-me"];

/// The scratch directory, and the process working in `outside/`.
pub struct Scratch {
    dir: tempfile::TempDir,
    sleeper: Option<Child>,
    canaries: Vec<Canary>,
}

/// A canary at one default secret place.
pub struct Canary {
    /// The place, as the default list names it: `~/.ssh`.
    pub entry: &'static str,
    /// The file that holds the canary (the place itself, or a file in it).
    pub file: PathBuf,
}

impl Scratch {
    /// Makes it, with everything in place.
    ///
    /// # Errors
    ///
    /// A file or directory that cannot be made, or a `sleep` that cannot be
    /// started.
    pub fn new() -> Result<Self, Error> {
        let dir = tempfile::Builder::new()
            .prefix("jp-sandbox-check-")
            .tempdir()
            .map_err(|source| Error::File {
                action: "create",
                path: std::env::temp_dir(),
                source,
            })?;
        // Its paths are the probes' arguments: text.
        if dir.path().to_str().is_none() {
            return Err(Error::File {
                action: "use",
                path: dir.path().to_owned(),
                source: std::io::Error::other("its path is not UTF-8; set TMPDIR to one that is"),
            });
        }
        let mut scratch = Self {
            dir,
            sleeper: None,
            canaries: Vec::new(),
        };
        scratch.lay_out()?;
        scratch.sleeper = Some(sleeper(&scratch.outside())?);
        Ok(scratch)
    }

    fn lay_out(&mut self) -> Result<(), Error> {
        let ws = self.workspace();
        for dir in [ws.join(".jp"), ws.join("mnt"), self.outside()] {
            create_dir(&dir)?;
        }
        write(&ws.join(".jp/config.toml"), WORKSPACE_CONFIG)?;
        write(&ws.join("move-out"), CANARY)?;
        for name in OUTSIDE_FILES {
            write(&self.outside().join(name), CANARY)?;
        }
        let link = ws.join("link");
        std::os::unix::fs::symlink(self.outside(), &link).map_err(|source| Error::File {
            action: "create",
            path: link,
            source,
        })?;
        // The home's places (the terminals are this machine's: see the
        // real reads).
        for entry in DEFAULT_DENY_READ.iter().filter(|e| e.starts_with("~/")) {
            let file = canary_file(&self.home(), entry);
            if let Some(parent) = file.parent() {
                create_dir(parent)?;
            }
            write(&file, CANARY)?;
            self.canaries.push(Canary { entry, file });
        }
        Ok(())
    }

    /// The scratch directory.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The workspace the probe runs in.
    pub fn workspace(&self) -> PathBuf {
        self.root().join("workspace")
    }

    /// Where no write may land.
    pub fn outside(&self) -> PathBuf {
        self.root().join("outside")
    }

    /// The fake home with the canaries.
    pub fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    /// The canaries, one for each default secret place, in the list's order.
    pub fn canaries(&self) -> &[Canary] {
        &self.canaries
    }

    /// The process working in `outside/`.
    pub fn sleeper_pid(&self) -> Option<u32> {
        self.sleeper.as_ref().map(Child::id)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(mut sleeper) = self.sleeper.take() {
            let _ = sleeper.kill();
            let _ = sleeper.wait();
        }
    }
}

/// The file of a canary for `entry` (`~/.ssh`) in `home`: the place itself
/// when it names a file (`~/.netrc`, `~/.docker/config.json`), else a file
/// in the directory it names.
pub fn canary_file(home: &Path, entry: &str) -> PathBuf {
    let rel = entry.strip_prefix("~/").unwrap_or(entry);
    let place = home.join(rel);
    let last = rel.rsplit('/').next().unwrap_or(rel);
    let is_file = Path::new(last).extension().is_some()
        || [
            ".netrc",
            ".git-credentials",
            ".npmrc",
            ".pypirc",
            "credentials",
        ]
        .contains(&last);
    if is_file {
        return place;
    }
    let name = match last {
        ".ssh" => "id_ed25519",
        ".aws" => "credentials",
        ".kube" | ".docker" => "config",
        "jp" => "trust.json",
        "gh" => "hosts.yml",
        _ => "canary",
    };
    place.join(name)
}

/// A `sleep` working in `dir`, outside any sandbox: its
/// `/proc/PID/cwd` is a way into `dir`.
fn sleeper(dir: &Path) -> Result<Child, Error> {
    Command::new("sleep")
        .arg("60")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| Error::File {
            action: "start `sleep` in",
            path: dir.to_owned(),
            source,
        })
}

fn create_dir(path: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(path).map_err(|source| Error::File {
        action: "create",
        path: path.to_owned(),
        source,
    })
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|source| Error::File {
        action: "write",
        path: path.to_owned(),
        source,
    })
}
