//! The repository's state for the default system prompt: the current
//! branch, whether the working tree has changes, and the last commit's
//! subject, taken once per jp process (a snapshot: the prompt stays the
//! same for every request jp makes, so the provider's prompt cache holds).
//!
//! It comes from `git` itself, run like a tool jp starts: inside the
//! default sandbox (no network, writes only in the workspace, none of the
//! user's secrets, a clean environment), with no optional locks (it writes
//! no index), no fsmonitor, and a deadline. Where the kernel cannot
//! enforce that sandbox for this workspace ([`jp_llm::tool::unbounded_in`])
//! git is not run and the prompt says nothing about the repository: a
//! repository's own config can make `git status` run programs.
//!
//! What git says is bounded and escaped before it reaches the prompt: a
//! branch name or a subject is one line of at most a few hundred
//! characters, quoted, with control characters and quotes escaped.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use jp_config::sandbox::SandboxConfig;

/// How long each git command may take before the state is left out.
const DEADLINE: Duration = Duration::from_secs(1);

/// The most bytes of git's output read.
const MAX_OUTPUT: u64 = 256 * 1024;

/// The most characters of a branch name or a subject shown.
const MAX_CHARS: usize = 200;

/// What the prompt says about the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoState {
    /// `main`, or `None` for a detached HEAD.
    pub branch: Option<String>,
    /// The commit HEAD is at, abbreviated, for a detached HEAD.
    pub detached_at: Option<String>,
    /// How many paths have changes (staged, unstaged or untracked).
    pub changed: usize,
    /// The last commit's subject; `None` before the first commit.
    pub subject: Option<String>,
}

impl RepoState {
    /// The paragraph of the default system prompt.
    #[must_use]
    pub fn describe(&self) -> String {
        let branch = match (&self.branch, &self.detached_at) {
            (Some(name), _) => quoted(name),
            (None, Some(commit)) => format!("none (detached at {})", quoted(commit)),
            (None, None) => "none (detached)".to_owned(),
        };
        let tree = match self.changed {
            0 => "clean".to_owned(),
            1 => "1 path changed or untracked".to_owned(),
            n => format!("{n} paths changed or untracked"),
        };
        let subject = self
            .subject
            .as_deref()
            .map_or_else(|| "none yet".to_owned(), quoted);
        format!(
            "The workspace is a git repository. When this session started:\n\
             - Branch: {branch}\n\
             - Working tree: {tree}\n\
             - Last commit: {subject}"
        )
    }
}

/// `text` cut to [`MAX_CHARS`] and quoted, with quotes, backslashes and
/// control characters escaped, so that it stays one line of the prompt.
fn quoted(text: &str) -> String {
    let mut cut: String = text.chars().take(MAX_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    format!("{:?}", cut)
}

/// The repository state at `root`, taken once per process and root.
/// `None` when `root` is not in a git repository, git is not installed or
/// too slow, or it could not run sandboxed.
#[must_use]
pub fn snapshot(root: &Path) -> Option<RepoState> {
    static TAKEN: Mutex<Option<HashMap<PathBuf, Option<RepoState>>>> = Mutex::new(None);
    let mut taken = TAKEN.lock().unwrap_or_else(PoisonError::into_inner);
    taken
        .get_or_insert_with(HashMap::new)
        .entry(root.to_path_buf())
        .or_insert_with(|| take(root))
        .clone()
}

/// Whether `root` is in a git repository jp should describe: a `.git` in
/// it or in a directory above it, but not one in the user's home when the
/// workspace is below it (a repository of dotfiles is not the project's,
/// and `git status` there would walk the whole home).
fn in_repository(root: &Path, home: Option<&Path>) -> bool {
    root.ancestors()
        .find(|dir| dir.join(".git").exists())
        .is_some_and(|repo| repo == root || home.is_none_or(|home| repo != home))
}

/// Asks git, now.
fn take(root: &Path) -> Option<RepoState> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let home = home.and_then(|home| home.canonicalize().ok());
    if !in_repository(root, home.as_deref()) {
        return None;
    }
    if jp_llm::tool::unbounded_in(&SandboxConfig::default(), root).is_some() {
        tracing::debug!("the repository's state is left out: git could not run sandboxed");
        return None;
    }
    // As around every call of a tool: what a repository's filter driver
    // would leave in the workspace's guarded files (git's hooks, jp's
    // config) is put back.
    let kept = crate::query::tools::kept::Kept::take(root);
    // The two run side by side: the last commit's subject is asked for
    // whether or not there is one (before the first, git says no).
    let (status, subject) = std::thread::scope(|scope| {
        let subject = scope.spawn(|| git(root, &["log", "-1", "--format=%s"]));
        let status = git(
            root,
            &[
                "status",
                "--porcelain=v2",
                "--branch",
                "--untracked-files=normal",
                "--ignore-submodules=all",
            ],
        );
        (status, subject.join().ok().flatten())
    });
    let restored = kept.restore();
    if !restored.put_back.is_empty() || !restored.failed.is_empty() {
        tracing::warn!(
            put_back = ?restored.put_back,
            failed = ?restored.failed,
            "git changed guarded files while jp read the repository's state"
        );
        return None;
    }
    let mut state = parse_status(&status?)?;
    if state.subject.is_some() {
        state.subject = subject.map(|out| out.trim_end_matches('\n').to_owned());
    }
    Some(state)
}

/// What `git status --porcelain=v2 --branch` says: the branch, a
/// detached HEAD's commit, how many paths changed, and (as `Some("")`)
/// whether there is a commit at all. `None` when it is not that output.
fn parse_status(output: &str) -> Option<RepoState> {
    let mut state = RepoState {
        branch: None,
        detached_at: None,
        changed: 0,
        subject: None,
    };
    let mut headed = false;
    for line in output.lines() {
        if let Some(head) = line.strip_prefix("# branch.head ") {
            headed = true;
            if head != "(detached)" {
                state.branch = Some(head.to_owned());
            }
        } else if let Some(oid) = line.strip_prefix("# branch.oid ") {
            if oid != "(initial)" {
                state.subject = Some(String::new());
                state.detached_at = Some(oid.chars().take(12).collect());
            }
        } else if !line.starts_with('#') && !line.is_empty() {
            state.changed += 1;
        }
    }
    if state.branch.is_some() {
        state.detached_at = None;
    }
    headed.then_some(state)
}

/// What `git ARGS` writes to stdout in `root`, sandboxed, when it exits
/// with 0 within the deadline.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let mut command = tokio::process::Command::new("git");
    command
        .args(["-c", "core.fsmonitor=false", "--no-optional-locks"])
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let sandbox = jp_llm::tool::Sandbox::from_config(&SandboxConfig::default());
    let _confinement = sandbox.apply(&mut command, root).ok()?;
    let mut command = command.into_std();
    // Its own process group, so that whatever it starts (a filter driver)
    // ends with it.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().ok()?;
    let group = rustix::process::Pid::from_child(&child);
    let mut stdout = child.stdout.take()?;
    let (sender, read) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let result = (&mut stdout).take(MAX_OUTPUT).read_to_end(&mut out);
        // Whatever is beyond the bound is drained, so git is not blocked.
        let _ = std::io::copy(&mut stdout, &mut std::io::sink());
        let _ = sender.send(result.ok().map(|_| out));
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < DEADLINE => {
                std::thread::sleep(Duration::from_millis(2));
            }
            _ => {
                tracing::debug!(
                    ?args,
                    "git took too long; the repository's state is left out"
                );
                break None;
            }
        }
    };
    // Nothing it started outlives it (the group's leader may be gone, and
    // the group with it: then there is nothing to kill).
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    let _ = child.kill();
    let _ = child.wait();
    let status = status?;
    // A process that left the group and holds the pipe open keeps the
    // reader waiting: it is not waited for.
    let out = read.recv_timeout(Duration::from_millis(200)).ok()??;
    status
        .success()
        .then(|| String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
#[path = "repo_tests.rs"]
mod tests;
