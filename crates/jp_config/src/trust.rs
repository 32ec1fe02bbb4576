//! Workspace trust: what a workspace's own config may set before the user
//! trusts it.
//!
//! A repository's `.jp/config.toml` (and every file it `extends`) can name
//! programs to run (tools, MCP servers), decide what runs unattended
//! (policies, `access`, `conversation.policies`) and where the
//! conversation and the API keys go (`providers`). Cloning a repository
//! must not be enough for any of that to take effect, so until the user
//! trusts the workspace only the keys in [`UNTRUSTED_KEYS`] apply from its
//! files: what the model is told and how output looks. Everything else is
//! *held*: left out of the config, and reported, with its file and line,
//! so the user can review it before trusting.
//!
//! The list is of what may apply, not of what may not: a key added to jp
//! later needs trust until it is added here (fail closed).
//!
//! Trust is recorded against a [`digest`](Held::digest) of what is held,
//! so a change to any of it (a `git pull` that edits a tool's command)
//! needs trust again, while a change to the model or the instructions
//! does not.

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::ConfigPath;
use crate::access::SENSITIVE;

/// The keys a workspace's files may set without being trusted: what the
/// model is told (system prompt, instructions, model and its parameters),
/// how old tool results are sent, and how output looks. None of them runs
/// anything, decides a call, reads a file or sends data elsewhere. A
/// [`SENSITIVE`] key below one of them is held all the same.
pub const UNTRUSTED_KEYS: [&[&str]; 5] = [
    &["assistant", "system_prompt"],
    &["assistant", "instructions"],
    &["assistant", "model"],
    &["conversation", "elide_tool_results"],
    &["style"],
];

/// How far the workspace's own config is trusted, for one load.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum WorkspaceTrust {
    /// Nothing held applies (the default: fail closed).
    #[default]
    Untrusted,
    /// Everything applies: the user trusts it for this run
    /// (`JP_TRUST_WORKSPACE=1`), or the load is the user's own (tests).
    Trusted,
    /// Trusted as it was when the user trusted it: what is held applies
    /// only while its [`Held::digest`] is this one.
    Recorded(String),
}

/// One key a workspace file sets that needs trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldKey {
    /// The file, as the config layer names it (relative to the current
    /// directory when below it).
    pub file: String,
    /// The key, dotted (`conversation.tools.deploy`).
    pub key: String,
    /// The line it is written on, when known.
    pub line: Option<usize>,
}

/// What a workspace's files set that needs trust, and whether it applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// What each file sets that needs trust: an object from the file's
    /// path (relative to the workspace root) to its held subtree.
    pub values: Value,
    /// The keys, file by file, in the order they are written.
    pub keys: Vec<HeldKey>,
    /// The SHA-256 (hex) of [`Held::values`] in a canonical form (keys
    /// sorted): what a trust record names.
    pub digest: String,
    /// Whether it applied: the workspace is trusted as it is now.
    pub applied: bool,
}

impl Held {
    /// Makes the record of `values` (see [`Held::values`]).
    #[must_use]
    pub fn new(values: Value, keys: Vec<HeldKey>, applied: bool) -> Self {
        let digest = digest(&values);
        Self {
            values,
            keys,
            digest,
            applied,
        }
    }

    /// Whether `trust` covers what is held here.
    #[must_use]
    pub fn covered_by(&self, trust: &WorkspaceTrust) -> bool {
        match trust {
            WorkspaceTrust::Untrusted => false,
            WorkspaceTrust::Trusted => true,
            WorkspaceTrust::Recorded(digest) => *digest == self.digest,
        }
    }
}

/// Splits one file's config (as JSON) into what applies untrusted and what
/// is held. Either may be an empty object. `extends` is in neither: the
/// files it names were read when the file was, each split on its own.
#[must_use]
pub fn split(raw: &Value) -> (Value, Value) {
    let mut kept = Map::new();
    let mut held = Map::new();
    if let Value::Object(map) = raw {
        for (key, value) in map.iter().filter(|(key, _)| *key != "extends") {
            split_into(&[key.as_str()], value, &mut kept, &mut held);
        }
    }
    (Value::Object(kept), Value::Object(held))
}

/// Files `value` (at `path`) under `kept` or `held`, descending into
/// objects that are above an allowed key, or allowed but holding a
/// [`SENSITIVE`] key below (`style.tool_call.show_arguments`, which would
/// hide what runs, is held though `style` is allowed).
fn split_into(
    path: &[&str],
    value: &Value,
    kept: &mut Map<String, Value>,
    held: &mut Map<String, Value>,
) {
    let Some(last) = path.last() else { return };
    let allowed = UNTRUSTED_KEYS
        .iter()
        .any(|key| key.len() <= path.len() && path.starts_with(key));
    let above_allowed = UNTRUSTED_KEYS
        .iter()
        .any(|key| key.len() > path.len() && key.starts_with(path));
    // A sensitive key at `path` or above it, and one further down.
    let sensitive_here =
        crate::access::sensitive(&ConfigPath::from_segments(path.iter().copied())).is_some();
    let sensitive_below = SENSITIVE.iter().any(|pattern| {
        let pattern: Vec<&str> = pattern.split('.').collect();
        pattern.len() > path.len() && pattern.iter().zip(path).all(|(p, s)| *p == "*" || p == s)
    });
    let descend = above_allowed || (allowed && sensitive_below);
    match value {
        _ if allowed && !sensitive_here && !sensitive_below => {
            kept.insert((*last).to_owned(), value.clone());
        }
        Value::Object(map) if descend && !sensitive_here => {
            let mut kept_child = Map::new();
            let mut held_child = Map::new();
            for (key, child) in map {
                let mut child_path = path.to_vec();
                child_path.push(key.as_str());
                split_into(&child_path, child, &mut kept_child, &mut held_child);
            }
            if !kept_child.is_empty() {
                kept.insert((*last).to_owned(), Value::Object(kept_child));
            }
            if !held_child.is_empty() {
                held.insert((*last).to_owned(), Value::Object(held_child));
            }
        }
        _ => {
            held.insert((*last).to_owned(), value.clone());
        }
    }
}

/// The keys a held subtree sets, at the level a reviewer thinks in: each
/// tool, server or provider as a whole (`conversation.tools.deploy`,
/// `providers.mcp.git`), anything else down to its values
/// (`conversation.policies`, `style.tool_call.show_arguments`).
#[must_use]
pub fn held_keys(held: &Value) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    collect_keys(held, &mut Vec::new(), &mut out);
    out
}

/// How deep [`held_keys`] names keys: a named entry (a tool, a server, a
/// provider) as a whole, anything else down to its values.
fn named_depth(path: &[String]) -> usize {
    match path.first().map(String::as_str) {
        Some("conversation") if path.get(1).is_some_and(|k| k == "tools") => 3,
        Some("providers") if path.get(1).is_some_and(|k| k == "mcp" || k == "llm") => 3,
        _ => usize::MAX,
    }
}

fn collect_keys(value: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match value {
        Value::Object(map) if !map.is_empty() && path.len() < named_depth(path) => {
            for (key, child) in map {
                path.push(key.clone());
                collect_keys(child, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

/// The SHA-256 (hex) of `value` with every object's keys sorted.
#[must_use]
pub fn digest(value: &Value) -> String {
    let canonical = canonical(value);
    let bytes = Sha256::digest(canonical.to_string().as_bytes());
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<_> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// A held key that differs between what was trusted and what is held now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Set now, not when trusted.
    Added(String),
    /// Set both times, to different values.
    Changed(String),
    /// Set when trusted, not now.
    Removed(String),
}

/// What differs between the held values the user trusted and those held
/// now (both as in [`Held::values`]), key by key at the level of
/// [`held_keys`], each prefixed with its file.
#[must_use]
pub fn changes(trusted: &Value, now: &Value) -> Vec<Change> {
    let flatten = |values: &Value| -> Vec<(String, Value)> {
        let mut out = Vec::new();
        if let Value::Object(files) = values {
            for (file, held) in files {
                for key in held_keys(held) {
                    let value = key
                        .iter()
                        .try_fold(held, |node, k| node.get(k))
                        .cloned()
                        .unwrap_or(Value::Null);
                    out.push((format!("{file}: {}", key.join(".")), canonical(&value)));
                }
            }
        }
        out
    };
    let before = flatten(trusted);
    let after = flatten(now);
    let mut out = Vec::new();
    for (key, value) in &after {
        match before.iter().find(|(k, _)| k == key) {
            None => out.push(Change::Added(key.clone())),
            Some((_, old)) if old != value => out.push(Change::Changed(key.clone())),
            Some(_) => {}
        }
    }
    for (key, _) in &before {
        if !after.iter().any(|(k, _)| k == key) {
            out.push(Change::Removed(key.clone()));
        }
    }
    out
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
