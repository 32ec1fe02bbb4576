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
//! Trust is recorded against a [`digest`](Held::digest) of what is held
//! once the workspace's files are merged, and of which files produced it,
//! in which order, so a change to any of it (a `git pull` that edits a
//! tool's command, an `extends` list reordered so another file's value
//! wins) needs trust again, while a change to the model or the
//! instructions does not.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::ConfigPath;
use crate::access::SENSITIVE;
use crate::app::is_append_key;

/// The keys a workspace's files may set without being trusted: what the
/// model is told (system prompt, instructions, model and its parameters),
/// how old tool results and turns are sent (elided, summarised), and how
/// output looks. None of them runs
/// anything, decides a call, reads a file or sends data elsewhere. A
/// [`SENSITIVE`] key below one of them is held all the same.
pub const UNTRUSTED_KEYS: [&[&str]; 6] = [
    &["assistant", "system_prompt"],
    &["assistant", "instructions"],
    &["assistant", "model"],
    &["conversation", "elide_tool_results"],
    &["conversation", "compaction"],
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

/// What one workspace file holds: its held values ([`split`]), and the
/// file they come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldLayer {
    /// The file, relative to the workspace root (as is when outside it).
    pub file: String,
    /// What it sets that needs trust.
    pub values: Value,
}

/// What a workspace's files set that needs trust, and whether it applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// What each file holds, in the order the files are merged (weakest
    /// first, as `extends` lists them, the file that extends last); a file
    /// merged twice is here twice. Files that hold nothing are left out.
    pub layers: Vec<HeldLayer>,
    /// What is held once [`Held::layers`] are merged in order
    /// ([`merge_layers`]): the held part of the config as it takes effect.
    pub merged: Value,
    /// The keys, file by file, in the order they are written.
    pub keys: Vec<HeldKey>,
    /// The SHA-256 (hex) of the merged held config, the files that produced
    /// it and what each of them holds, in order ([`digest_of`]): what a
    /// trust record names. Reordering or repeating an `extends` entry
    /// changes it, though no file changed.
    pub digest: String,
    /// Whether it applied: the workspace is trusted as it is now.
    pub applied: bool,
}

impl Held {
    /// Makes the record of `layers` (see [`Held::layers`]).
    #[must_use]
    pub fn new(layers: Vec<HeldLayer>, keys: Vec<HeldKey>, applied: bool) -> Self {
        let merged = merge_layers(&layers);
        let digest = digest_of(&layers, &merged);
        Self {
            layers,
            merged,
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

    /// The files that produced what is held, in merge order.
    #[must_use]
    pub fn files(&self) -> Vec<&str> {
        files(&self.layers)
    }
}

/// The version of [`digest_of`]'s input. A record made with another one
/// (jp before issue 34 digested each file's values, keyed by file, without
/// their order) never matches, so such a workspace is asked about again.
pub const DIGEST_VERSION: u32 = 2;

/// The digest a trust record names: the SHA-256 (hex) of, in a canonical
/// form (keys sorted), the [`DIGEST_VERSION`], the files in merge order with
/// what each holds, and `merged` (what they hold once merged).
#[must_use]
pub fn digest_of(layers: &[HeldLayer], merged: &Value) -> String {
    let layers: Vec<Value> = layers
        .iter()
        .map(|layer| {
            Value::Array(vec![
                Value::String(layer.file.clone()),
                layer.values.clone(),
            ])
        })
        .collect();
    let mut input = Map::new();
    input.insert("version".into(), Value::from(DIGEST_VERSION));
    input.insert("layers".into(), Value::Array(layers));
    input.insert("merged".into(), merged.clone());
    digest(&Value::Object(input))
}

fn files(layers: &[HeldLayer]) -> Vec<&str> {
    layers.iter().map(|layer| layer.file.as_str()).collect()
}

/// `layers`' values merged in order, as the config's layers are: a later
/// value replaces an earlier one, tables merge key by key, and the lists
/// that append across layers ([`APPEND_KEYS`](crate::app::APPEND_KEYS)) append.
#[must_use]
pub fn merge_layers(layers: &[HeldLayer]) -> Value {
    let mut merged = Value::Object(Map::new());
    for layer in layers {
        merge_into(&mut merged, &layer.values, &mut Vec::new());
    }
    merged
}

fn merge_into(into: &mut Value, from: &Value, path: &mut Vec<String>) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) => {
            for (key, value) in from {
                path.push(key.clone());
                match into.get_mut(key) {
                    Some(existing) => merge_into(existing, value, path),
                    None => {
                        into.insert(key.clone(), value.clone());
                    }
                }
                path.pop();
            }
        }
        (Value::Array(into), Value::Array(from)) if is_append_key(path) => {
            into.extend(from.iter().cloned());
        }
        (into, from) => *into = from.clone(),
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

/// What differs between what the user trusted and what is held now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Set now, not when trusted.
    Added(ChangedKey),
    /// Set both times, to different values once merged.
    Changed(ChangedKey),
    /// Set when trusted, not now.
    Removed(ChangedKey),
    /// The files merged, or their order, differ: `now` and `was`, each in
    /// merge order.
    Order {
        /// The files now.
        now: Vec<String>,
        /// The files when trusted.
        was: Vec<String>,
    },
}

/// A held key that changed, and the files that set what changed (for a
/// changed key, the files whose values differ, the one that wins last).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedKey {
    /// The files.
    pub files: Vec<String>,
    /// The key, dotted, at the level of [`held_keys`].
    pub key: String,
}

impl std::fmt::Display for ChangedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.files.join(", "), self.key)
    }
}

/// What differs between the held layers the user trusted and those held
/// now (both as in [`Held::layers`]): each key, at the level of
/// [`held_keys`], whose merged value differs, prefixed with the files that
/// set what differs; then the files, when they or their order differ.
#[must_use]
pub fn changes(trusted: &[HeldLayer], now: &[HeldLayer]) -> Vec<Change> {
    let (old, new) = (merge_layers(trusted), merge_layers(now));
    let flatten = |merged: &Value| -> Vec<(Vec<String>, Value)> {
        held_keys(merged)
            .into_iter()
            .map(|key| {
                let value = lookup(merged, &key).cloned().unwrap_or(Value::Null);
                (key, canonical(&value))
            })
            .collect()
    };
    let before = flatten(&old);
    let after = flatten(&new);
    let named = |files: Vec<&str>, key: &[String]| ChangedKey {
        files: files.into_iter().map(str::to_owned).collect(),
        key: key.join("."),
    };
    let mut out = Vec::new();
    for (key, value) in &after {
        match before.iter().find(|(k, _)| k == key) {
            None => out.push(Change::Added(named(setters(now, key), key))),
            Some((_, was)) if was != value => {
                let mut files = Vec::new();
                for leaf in differing_leaves(was, value, key) {
                    let setter = setters(now, &leaf)
                        .last()
                        .copied()
                        .or_else(|| setters(trusted, &leaf).last().copied());
                    if let Some(file) = setter
                        && !files.contains(&file)
                    {
                        files.push(file);
                    }
                }
                out.push(Change::Changed(named(files, key)));
            }
            Some(_) => {}
        }
    }
    for (key, _) in &before {
        if !after.iter().any(|(k, _)| k == key) {
            out.push(Change::Removed(named(setters(trusted, key), key)));
        }
    }
    if files(trusted) != files(now) {
        out.push(Change::Order {
            now: files(now).into_iter().map(str::to_owned).collect(),
            was: files(trusted).into_iter().map(str::to_owned).collect(),
        });
    }
    out
}

fn lookup<'v>(value: &'v Value, key: &[String]) -> Option<&'v Value> {
    key.iter().try_fold(value, |node, k| node.get(k))
}

/// The files of `layers` that set `key` (or something below it), each
/// once, the one whose value wins last.
fn setters<'l>(layers: &'l [HeldLayer], key: &[String]) -> Vec<&'l str> {
    let mut out: Vec<&str> = Vec::new();
    for layer in layers {
        if lookup(&layer.values, key).is_some() {
            out.retain(|file| *file != layer.file);
            out.push(&layer.file);
        }
    }
    out
}

/// The paths (below `key`) of the values that differ between `was` and
/// `now`: tables are compared key by key, anything else as a whole.
fn differing_leaves(was: &Value, now: &Value, key: &[String]) -> Vec<Vec<String>> {
    match (was, now) {
        (Value::Object(was), Value::Object(now)) => {
            let mut out = Vec::new();
            let mut names: Vec<&String> = now.keys().collect();
            names.extend(was.keys().filter(|name| !now.contains_key(*name)));
            for name in names {
                let mut path = key.to_vec();
                path.push(name.clone());
                match (was.get(name), now.get(name)) {
                    (Some(a), Some(b)) if a == b => {}
                    (Some(a), Some(b)) => out.extend(differing_leaves(a, b, &path)),
                    _ => out.push(path),
                }
            }
            out
        }
        _ => vec![key.to_vec()],
    }
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
