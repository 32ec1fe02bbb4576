//! Which workspaces the user trusts ([`jp_config::trust`]), recorded in the
//! user's config directory, never in the workspace: `trust.json` beside the
//! user's `config.toml`.
//!
//! A record names the workspace's root (canonical) and the digest of what
//! its files held when the user trusted it, with those values file by file
//! in merge order, so that a later change can be shown key by key before
//! the user trusts again. A record an earlier jp made (its digest left out
//! the order of the files) matches nothing now: that workspace is asked
//! about again, saying why.
//!
//! `JP_TRUST_WORKSPACE=1` trusts the workspace for one run, whatever it
//! holds (for CI, where the repository is the one being tested);
//! `JP_TRUST_WORKSPACE=0` runs without what it holds and asks nothing.

pub mod review;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use indexmap::IndexMap;
use jp_config::trust::{Change, Held, HeldLayer, WorkspaceTrust, changes};
use serde::{Deserialize, Serialize};

/// The environment variable that trusts (`1`) or distrusts (`0`) the
/// workspace for one run.
pub const ENV: &str = "JP_TRUST_WORKSPACE";

/// Whether this process said what the workspace's config holds already.
static SAID: AtomicBool = AtomicBool::new(false);

/// The name of the records file in the user's config directory.
const FILE_NAME: &str = "trust.json";

/// The version of the records file jp writes: 2 since the digest covers
/// the merged held config and the order of the files
/// ([`jp_config::trust::DIGEST_VERSION`]).
const RECORDS_VERSION: u32 = 2;

/// What `JP_TRUST_WORKSPACE` says, if it is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Override {
    /// `1`: trust the workspace for this run.
    Trust,
    /// `0`: run without what it holds, asking nothing.
    Distrust,
}

impl Override {
    /// The override in `env`, if any. Other values are an error, so a typo
    /// never trusts.
    pub fn from_env(env: &[(String, String)]) -> Result<Option<Self>, String> {
        match env.iter().find(|(k, _)| k == ENV).map(|(_, v)| v.as_str()) {
            None => Ok(None),
            Some("1") => Ok(Some(Self::Trust)),
            Some("0") => Ok(Some(Self::Distrust)),
            Some(other) => Err(format!(
                "{ENV}={other:?} is neither 1 (trust the workspace for this run) nor 0 (run without what its config holds)"
            )),
        }
    }
}

/// One trusted workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The digest of what its files held ([`Held::digest`]).
    pub digest: String,
    /// What they held, file by file in merge order ([`Held::layers`]), to
    /// show what changed later. `None` in a record an earlier jp made
    /// (which kept the values by file, without their order, as `held`):
    /// its digest matches nothing now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<Vec<HeldLayer>>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RecordsFile {
    version: u32,
    workspaces: IndexMap<String, Record>,
}

/// The records file.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

/// A records file that does not read or write.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct StoreError {
    path: String,
    message: String,
}

impl TrustStore {
    /// The records file of the user `env` describes, beside their config
    /// file; `None` without `HOME` or `XDG_CONFIG_HOME`.
    #[must_use]
    pub fn of_user(env: &[(String, String)]) -> Option<Self> {
        let config = jp_config::load::user_config_file(env)?;
        Some(Self {
            path: config.with_file_name(FILE_NAME),
        })
    }

    fn error(&self, message: impl std::fmt::Display) -> StoreError {
        StoreError {
            path: self.path.display().to_string(),
            message: message.to_string(),
        }
    }

    fn read(&self) -> Result<RecordsFile, StoreError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| self.error(e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RecordsFile::default()),
            Err(e) => Err(self.error(e)),
        }
    }

    /// Writes the whole file anew, through a temporary file renamed over
    /// it, so a crash leaves the old records or the new, never half.
    fn write(&self, records: &RecordsFile) -> Result<(), StoreError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| self.error(e))?;
        let text = serde_json::to_string_pretty(records).map_err(|e| self.error(e))?;
        let tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| self.error(e))?;
        std::fs::write(tmp.path(), text + "\n").map_err(|e| self.error(e))?;
        tmp.persist(&self.path).map_err(|e| self.error(e.error))?;
        Ok(())
    }

    /// The record of the workspace at `root`, if the user trusted it.
    pub fn get(&self, root: &Path) -> Result<Option<Record>, StoreError> {
        Ok(self.read()?.workspaces.get(&key(root)).cloned())
    }

    /// Records that the user trusts `root` with what it holds now.
    pub fn set(&self, root: &Path, record: Record) -> Result<(), StoreError> {
        let mut records = self.read()?;
        records.version = RECORDS_VERSION;
        records.workspaces.insert(key(root), record);
        self.write(&records)
    }

    /// Forgets `root`; whether it was trusted.
    pub fn revoke(&self, root: &Path) -> Result<bool, StoreError> {
        let mut records = self.read()?;
        let was = records.workspaces.shift_remove(&key(root)).is_some();
        if was {
            self.write(&records)?;
        }
        Ok(was)
    }
}

/// A workspace's key in the records: its canonical path, so a link or a
/// `..` reaches the same record.
fn key(root: &Path) -> String {
    std::fs::canonicalize(root)
        .unwrap_or_else(|_| root.to_path_buf())
        .display()
        .to_string()
}

/// How far a load trusts the workspace at `root`: the override, else the
/// record. A records file that does not read trusts nothing, and says so.
pub fn workspace_trust(env: &[(String, String)], root: Option<&Path>) -> WorkspaceTrust {
    match Override::from_env(env) {
        Ok(Some(Override::Trust)) => return WorkspaceTrust::Trusted,
        Ok(Some(Override::Distrust)) | Err(_) => return WorkspaceTrust::Untrusted,
        Ok(None) => {}
    }
    let (Some(store), Some(root)) = (TrustStore::of_user(env), root) else {
        return WorkspaceTrust::Untrusted;
    };
    match store.get(root) {
        Ok(Some(record)) => WorkspaceTrust::Recorded(record.digest),
        Ok(None) => WorkspaceTrust::Untrusted,
        Err(e) => {
            jp_term::errln!(
                "warning: cannot read the trusted workspaces ({e}); this one is not trusted"
            );
            WorkspaceTrust::Untrusted
        }
    }
}

/// The record that trusts what `held` holds.
#[must_use]
pub fn record_of(held: &Held) -> Record {
    Record {
        digest: held.digest.clone(),
        layers: Some(held.layers.clone()),
    }
}

/// The lines that say what a workspace's files hold that did not apply:
/// each key with its file and line, or, when the user trusted an earlier
/// version, what changed since. Empty when it applied.
#[must_use]
pub fn held_lines(
    held: &Held,
    trusted: Option<&Record>,
    review: Option<&review::Review>,
) -> Vec<String> {
    if held.applied {
        return Vec::new();
    }
    let mut lines = Vec::new();
    let changed = trusted
        .and_then(|record| record.layers.as_deref())
        .map(|layers| changes(layers, &held.layers))
        .filter(|changes| !changes.is_empty());
    match (trusted, changed) {
        (Some(_), Some(changes)) => {
            lines.push(
                "this workspace's config changed since you trusted it; until you trust it again, jp leaves out what it would run or decide:".to_owned(),
            );
            for change in changes {
                let (line, shown) = match change {
                    Change::Added(key) => (format!("  added    {key}"), Some(key.key)),
                    Change::Changed(key) => (format!("  changed  {key}"), Some(key.key)),
                    Change::Removed(key) => (format!("  removed  {key}"), None),
                    Change::Order { now, was } => (
                        format!("  order    {} (was {})", now.join(", "), was.join(", ")),
                        None,
                    ),
                };
                lines.push(line);
                if let (Some(key), Some(review)) = (shown, review) {
                    lines.extend(review.details(&key));
                }
            }
            return lines;
        }
        (Some(record), None) if record.layers.is_none() => lines.push(
            "this workspace was trusted by an earlier jp, which checked less of its config than jp does now; until you trust it again, jp leaves out what it would run or decide:".to_owned(),
        ),
        (Some(_), None) => lines.push(
            "this workspace's config changed since you trusted it; until you trust it again, jp leaves out what it would run or decide:".to_owned(),
        ),
        (None, _) => lines.push(
            "this workspace is not trusted, so jp leaves out what its config would run or decide:"
                .to_owned(),
        ),
    }
    lines.extend(key_lines(held, review));
    lines
}

/// Each held key with its file and line, and below each tool and MCP
/// server what it runs ([`review::Review::details`]), once, at the file
/// whose value wins.
#[must_use]
pub fn key_lines(held: &Held, review: Option<&review::Review>) -> Vec<String> {
    let mut lines = Vec::new();
    for (index, key) in held.keys.iter().enumerate() {
        let line = key.line.map(|l| format!(":{l}")).unwrap_or_default();
        lines.push(format!("  {}{line}: {}", key.file, key.key));
        let last = !held.keys[index + 1..].iter().any(|k| k.key == key.key);
        if let (Some(review), true) = (review, last) {
            lines.extend(review.details(&key.key));
        }
    }
    lines
}

/// Says, once per process, what the workspace's config holds that did not
/// apply, and how to trust it.
pub fn notice(held: Option<&Held>, env: &[(String, String)], root: Option<&Path>) {
    let Some(held) = held.filter(|h| !h.applied) else {
        return;
    };
    if SAID.swap(true, Ordering::Relaxed) {
        return;
    }
    let trusted = recorded(env, root);
    for line in held_lines(held, trusted.as_ref(), None) {
        jp_term::errln!("note: {line}");
    }
    jp_term::errln!(
        "note: review them, then run `jp trust` to apply them ({ENV}=1 trusts it for one run)"
    );
}

/// Marks what the workspace's config holds as said (a question said it),
/// so the loads that follow do not say it again.
pub fn mark_said() {
    SAID.store(true, Ordering::Relaxed);
}

/// The user's record of `root`, if there is one and it reads.
#[must_use]
pub fn recorded(env: &[(String, String)], root: Option<&Path>) -> Option<Record> {
    TrustStore::of_user(env)?.get(root?).ok().flatten()
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
