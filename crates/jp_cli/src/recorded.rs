//! Config changes recorded in a conversation, and the authority behind
//! each (issue 21, items 3 and 4).
//!
//! A conversation's log can be committed to a repository and edited by
//! hand, so what it records is no authority of its own. Every recorded
//! change is authorized again whenever a conversation is read, against the
//! config as it stands without the conversation's changes:
//!
//! - a change a tool made must be within that tool's `access.config`
//!   grants, checked and authorized exactly as when the tool made it
//!   ([`Proposal::check`], [`Proposal::authorize`]); `apply = "ask"` is no
//!   obstacle, since the user was asked when it was made. A change naming
//!   several tools (one cycle's) needs every path it touches granted to
//!   one of them;
//! - the flags of a `jp query` (`--cfg`, `--model`) are recorded as the
//!   user's change ([`ConfigDelta::flags`]). Such a change may set what
//!   `--cfg` may, except the sensitive keys and the loader's keys
//!   (`extends`), and it removes nothing. A flag that sets a sensitive key
//!   (a tool's command, grants or policy, a provider's address, the
//!   stateful policies) applies to its own query only and is never
//!   recorded, so no log can carry such a value in the user's name;
//! - a change that names neither a tool nor flags has no authority at all.
//!
//! A change that does not pass is left out (the rest of the conversation
//! applies) and named once per command, by the file and line that holds
//! it.
//!
//! The decisions here are plain functions over plain data; the callers
//! load the config and print.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use jp_config::access::{Apply, ConfigGrant, Grants, Write};
use jp_config::delta::{Buffer, Proposal, insert, leaves};
use jp_config::load::{DeltaLayer, FlagAssignment, LoadError, Loaded, is_append_key};
use jp_config::{AppConfig, ConfigPath};
use jp_conversation::{ConfigDelta, Conversation, EventKind};
use serde_json::{Map, Value};

use crate::ctx::Ctx;

/// Top-level keys that steer loading rather than hold config: no flag
/// records them and no recorded change of the user's may set them.
const LOADER_KEYS: [&str; 1] = ["extends"];

/// The name of a conversation's log in its directory.
const LOG_NAME: &str = "events.jsonl";

/// A recorded config change that is not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The line of the log that holds it (1 is the header).
    pub line: usize,
    /// Who it says made it: `tool x`, `--model haiku`, or `no one`.
    pub by: String,
    /// Why it is not applied.
    pub reason: String,
}

/// A conversation's config changes after they were authorized again.
#[derive(Debug, Clone, Default)]
pub struct Authorized {
    /// The changes that apply, as config layers, oldest first.
    pub layers: Vec<DeltaLayer>,
    /// The changes left out.
    pub refused: Vec<Refused>,
}

/// What the flags of a query may record: every config section except the
/// loader's keys, with `write = true` (which never reaches a sensitive
/// key) and `delete = true` (a list a flag sets replaces the one below,
/// as with `--cfg`). Removals are refused apart from this: a flag removes
/// nothing.
#[must_use]
pub fn user_grants(schema: &Value) -> Grants {
    let sections = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| props.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default();
    let rules: Vec<ConfigGrant> = sections
        .into_iter()
        .filter(|key| !LOADER_KEYS.contains(&key.as_str()))
        .map(|path| ConfigGrant {
            path,
            read: false,
            write: Write::Allowed,
            delete: true.into(),
            apply: Apply::Unattended,
        })
        .collect();
    Grants::new(&rules)
}

/// Who a recorded change says made it, for messages.
fn made_by(delta: &ConfigDelta) -> String {
    let mut by: Vec<String> = delta.flags.clone();
    by.extend(delta.tools.iter().map(|tool| format!("tool {tool}")));
    if by.is_empty() {
        "no one".into()
    } else {
        by.join(", ")
    }
}

/// The paths a change sets or removes, one proposal each (for a change
/// that names several tools: each path needs one of them).
fn singles(proposal: &Proposal) -> Vec<(String, Proposal)> {
    let sets = proposal.sets.iter().map(|set| {
        (
            set.0.to_string(),
            Proposal {
                sets: vec![set.clone()],
                unsets: Vec::new(),
            },
        )
    });
    let unsets = proposal.unsets.iter().map(|unset| {
        (
            unset.to_string(),
            Proposal {
                sets: Vec::new(),
                unsets: vec![unset.clone()],
            },
        )
    });
    sets.chain(unsets).collect()
}

/// Authorizes one recorded change again, against `base` (the config
/// without the conversation's changes) and `schema` (the config schema).
///
/// # Errors
///
/// Why the change is not applied.
pub fn authorize(delta: &ConfigDelta, base: &AppConfig, schema: &Value) -> Result<(), String> {
    authorized_proposal(delta, base, schema).map(|_| ())
}

/// [`authorize`], giving the change as checked.
fn authorized_proposal(
    delta: &ConfigDelta,
    base: &AppConfig,
    schema: &Value,
) -> Result<Proposal, String> {
    let tree = Value::Object(delta.delta.clone());
    let set = (!delta.delta.is_empty()).then_some(&tree);
    let proposal = Proposal::check(set, &delta.unsets, base, schema)
        .map_err(|refusal| format!("it is not a valid change: {}", refusal.detail))?;
    let mut authorities: Vec<Grants> = Vec::new();
    if !delta.flags.is_empty() {
        if let Some(unset) = proposal.unsets.first() {
            return Err(format!(
                "it says it is a query's flags, and flags remove nothing, but it removes {unset}"
            ));
        }
        let user = user_grants(schema);
        if delta.tools.is_empty() {
            return proposal.authorize(&user).map(|_| proposal.clone()).map_err(|refusal| {
                format!(
                    "the flags of a query are not recorded for {} (a sensitive or loader key applies only to the query that sets it)",
                    refusal.fields.join(", ")
                )
            });
        }
        authorities.push(user);
    }
    for tool in &delta.tools {
        let grants = base
            .conversation
            .tools
            .get(tool)
            .filter(|_| tool != "*")
            .map(|config| Grants::new(&config.access.config))
            .unwrap_or_default();
        authorities.push(grants);
    }
    match authorities.as_slice() {
        [] => Err("it names no tool and is no query's flags, so nothing authorizes it".into()),
        [grants] => proposal
            .authorize(grants)
            .map(|_| proposal.clone())
            .map_err(|refusal| {
                if base.conversation.tools.contains_key(&delta.tools[0]) {
                    refusal.detail
                } else {
                    format!(
                        "the tool is not configured here, so it has no grants ({})",
                        refusal.detail
                    )
                }
            }),
        several => {
            let uncovered: Vec<String> = singles(&proposal)
                .into_iter()
                .filter(|(_, single)| !several.iter().any(|g| single.authorize(g).is_ok()))
                .map(|(path, _)| path)
                .collect();
            if uncovered.is_empty() {
                Ok(proposal)
            } else {
                Err(format!(
                    "nothing it names is granted {}",
                    uncovered.join(", ")
                ))
            }
        }
    }
}

/// The label `jp config show` gives a recorded change.
fn label(delta: &ConfigDelta, conversation: &str) -> String {
    if !delta.flags.is_empty() {
        format!(
            "conversation {conversation} (set by {})",
            delta.flags.join(" ")
        )
    } else if delta.tools.is_empty() {
        format!("conversation {conversation}")
    } else {
        format!(
            "conversation {conversation} (changed by tool {})",
            delta.tools.join(", ")
        )
    }
}

/// A recorded change as a config layer.
#[must_use]
pub fn layer(delta: &ConfigDelta, conversation: &str) -> DeltaLayer {
    DeltaLayer {
        label: label(delta, conversation),
        delta: Value::Object(delta.delta.clone()),
        unsets: delta.unsets.clone(),
    }
}

/// A conversation's config changes, each authorized again against `base`
/// (the config without them) and applied in order only if the config
/// still loads with it: the ones that apply, as layers, and the ones that
/// do not, with their line in the log. A change that loaded only on top
/// of one left out is left out too, so what applies always loads.
#[must_use]
pub fn authorized(conversation: &Conversation, base: &AppConfig, live: &[bool]) -> Authorized {
    let schema = jp_config::schema::config_schema();
    let mut out = Authorized::default();
    // The config with the changes applied so far.
    let mut current: Option<AppConfig> = None;
    for (index, event) in conversation.events.iter().enumerate() {
        let EventKind::ConfigDelta(delta) = &event.kind else {
            continue;
        };
        // Left out: a change made in a turn taken back (`live`).
        if !live.get(index).copied().unwrap_or(true) {
            continue;
        }
        // Only claims: nothing to apply, nothing to authorize.
        if delta.delta.is_empty() && delta.unsets.is_empty() {
            continue;
        }
        let verdict = match &schema {
            Ok(schema) => authorized_proposal(delta, base, schema),
            Err(e) => Err(format!("the config schema is not available: {e}")),
        }
        .and_then(|proposal| {
            proposal
                .applied(current.as_ref().unwrap_or(base))
                .map_err(|refusal| refusal.detail)
        });
        match verdict {
            Ok(next) => {
                current = Some(next);
                out.layers.push(layer(delta, &conversation.id));
            }
            Err(reason) => out.refused.push(Refused {
                // Line 1 is the header; each event is one line.
                line: index + 2,
                by: made_by(delta),
                reason,
            }),
        }
    }
    out
}

/// The log of conversation `id` of the place at `root` (a workspace, or a
/// plain directory: [`crate::place::store_at`]), for messages: relative to
/// `cwd` when it is below it.
#[must_use]
pub fn log_name(root: &Path, id: &str, cwd: &Path) -> String {
    let path = crate::place::store_at(root).root().join(id).join(LOG_NAME);
    jp_config::load::display_path(&path, cwd)
}

/// The refusals already told, so each is told once per command.
static TOLD: Mutex<BTreeSet<(String, usize)>> = Mutex::new(BTreeSet::new());

/// Tells, on stderr, about each refused change of the log `log` not told
/// before in this process.
pub fn warn(log: &str, refused: &[Refused]) {
    let mut told = TOLD.lock().unwrap_or_else(PoisonError::into_inner);
    for refusal in refused {
        if told.insert((log.to_owned(), refusal.line)) {
            jp_term::errln!(
                "warning: {log}:{}: a recorded config change (by {}) is not applied: {}; the rest of the conversation is",
                refusal.line,
                refusal.by,
                refusal.reason
            );
        }
    }
}

/// A query's flags, sorted: what is recorded in the conversation as the
/// user's change, and what applies to this query only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Flags {
    /// The change to record, if the flags set anything that may be.
    pub record: Option<ConfigDelta>,
    /// Values of sensitive keys, as assignments on top of everything for
    /// this query only, named after the flag that set them.
    pub query_only: Vec<FlagAssignment>,
}

/// Sorts the layers the flags of a query made (`(label, raw)`, in order,
/// as the loader labelled them: `--cfg k=v`, `--model x`, or a file's path
/// for `--cfg @FILE` and the files it extends). `config` is the config
/// with the flags (model aliases resolve in it); `schema` the config
/// schema.
#[must_use]
pub fn sort_flags(layers: &[(String, Value)], config: &AppConfig, schema: &Value) -> Flags {
    let grants = user_grants(schema);
    let mut flags = Flags::default();
    let mut buffer = Buffer::default();
    // The tools a flag sets a key of that stays with the query: each stays
    // whole, whichever flags set its other keys.
    let whole: BTreeSet<String> = layers
        .iter()
        .filter_map(|(_, raw)| raw.pointer("/conversation/tools")?.as_object())
        .flat_map(|tools| tools.iter())
        .filter(|(name, tool)| {
            let mut at = vec!["conversation".into(), "tools".into(), (*name).clone()];
            any_kept_back(tool, &mut at, &grants)
        })
        .map(|(name, _)| name.clone())
        .collect();
    for (index, (label, raw)) in layers.iter().enumerate() {
        let flag = if label.starts_with("--") {
            label.clone()
        } else {
            format!("--cfg @{label}")
        };
        let mut raw = raw.clone();
        if let Some(map) = raw.as_object_mut() {
            // Followed when the file loaded; never a value to keep.
            for key in LOADER_KEYS {
                map.remove(key);
            }
        }
        let mut kept = Value::Object(Map::new());
        sort_node(
            &raw,
            &mut Vec::new(),
            &Sorting {
                grants: &grants,
                whole: &whole,
                flag: &flag,
            },
            &mut kept,
            &mut flags.query_only,
        );
        if kept.as_object().is_some_and(Map::is_empty) {
            continue;
        }
        match Proposal::check(Some(&kept), &[], config, schema) {
            Ok(proposal) => buffer.add(index, &flag, proposal),
            // The load took it, so this is not expected; fail towards
            // not recording.
            Err(_) => flags
                .query_only
                .extend(
                    leaves(&kept)
                        .into_iter()
                        .map(|(path, value)| FlagAssignment {
                            flag: flag.clone(),
                            assignment: format!("{path}:={value}"),
                        }),
                ),
        }
    }
    flags.record = buffer.fold().map(|folded| ConfigDelta {
        delta: folded.delta,
        unsets: Vec::new(),
        // The explicit unclaim (RFD 078): no config file is the source of
        // these values any more.
        claims: folded
            .touched
            .iter()
            .map(|path| (path.clone(), Vec::new()))
            .collect(),
        tools: Vec::new(),
        flags: folded.tools,
    });
    flags
}

/// What [`sort_node`] sorts by.
struct Sorting<'a> {
    /// What the flags may record.
    grants: &'a Grants,
    /// The tools that stay with the query whole.
    whole: &'a BTreeSet<String>,
    /// The flag, for the assignments kept to the query.
    flag: &'a str,
}

/// Walks a flag's value: a subtree at a key the flags may not record goes
/// to `query_only` whole, everything else to `kept`. A tool is one thing:
/// when the flags set any of a tool's keys that stay with the query (its
/// command, policy, ...), the whole tool does (`whole`), so a later query is
/// never left with half a tool (a summary and a timeout, with no command).
fn sort_node(
    node: &Value,
    at: &mut Vec<String>,
    sorting: &Sorting<'_>,
    kept: &mut Value,
    query_only: &mut Vec<FlagAssignment>,
) {
    let path = ConfigPath::from_segments(at.iter().cloned());
    let a_whole_tool = at.len() == 3
        && at[0] == "conversation"
        && at[1] == "tools"
        && sorting.whole.contains(&at[2]);
    if !path.is_root() && (!sorting.grants.capabilities(&path).write || a_whole_tool) {
        query_only.push(FlagAssignment {
            flag: sorting.flag.to_owned(),
            assignment: format!("{path}:={node}"),
        });
        return;
    }
    match node {
        // `{}` below the root is a value (it empties a map).
        Value::Object(map) if !map.is_empty() || at.is_empty() => {
            for (key, child) in map {
                at.push(key.clone());
                sort_node(child, at, sorting, kept, query_only);
                at.pop();
            }
        }
        Value::Null => {}
        leaf => insert(kept, at, leaf.clone()),
    }
}

/// Whether any part of `node` (at `at`) is a key the flags may not record.
fn any_kept_back(node: &Value, at: &mut Vec<String>, grants: &Grants) -> bool {
    let path = ConfigPath::from_segments(at.iter().cloned());
    if !grants.capabilities(&path).write {
        return true;
    }
    match node {
        Value::Object(map) => map.iter().any(|(key, child)| {
            at.push(key.clone());
            let kept_back = any_kept_back(child, at, grants);
            at.pop();
            kept_back
        }),
        _ => false,
    }
}

/// What of `delta` (the flags' change) would change `current` (the config
/// the query has without it): values it already has are left out (a model
/// id compared as it resolves, so `--model sonnet` changes nothing where
/// the config says `sonnet`), and so are the elements a list that appends
/// (`assistant.instructions`) already holds, so a flag given again on every
/// query is recorded once. `None` when nothing is left.
#[must_use]
pub fn news(delta: ConfigDelta, current: &Loaded) -> Option<ConfigDelta> {
    let mut tree = Value::Object(Map::new());
    let mut touched = Vec::new();
    for (path, value) in leaves(&Value::Object(delta.delta.clone())) {
        let now = path.lookup(&current.resolved);
        let value = if is_append_key(path.segments()) {
            let held = now.and_then(Value::as_array).cloned().unwrap_or_default();
            let added: Vec<Value> = value
                .as_array()
                .into_iter()
                .flatten()
                .filter(|element| !held.contains(element))
                .cloned()
                .collect();
            if added.is_empty() {
                continue;
            }
            Value::Array(added)
        } else if now == Some(&value) || same_model(&path, now, &value, &current.config) {
            continue;
        } else {
            value
        };
        insert(&mut tree, path.segments(), value);
        touched.push(path.to_string());
    }
    let Value::Object(delta_tree) = tree else {
        return None;
    };
    (!touched.is_empty()).then(|| ConfigDelta {
        delta: delta_tree,
        claims: touched.into_iter().map(|path| (path, Vec::new())).collect(),
        ..delta
    })
}

/// Whether `value` set at `path` is the model `now` (as written, an alias
/// perhaps) resolves to in `config`.
fn same_model(path: &ConfigPath, now: Option<&Value>, value: &Value, config: &AppConfig) -> bool {
    path.segments() == ["assistant", "model", "id"]
        && now.and_then(Value::as_str).is_some_and(|id| {
            jp_config::validate::resolve_model_id(config, id)
                .is_ok_and(|(provider, name)| value.as_str() == Some(&format!("{provider}/{name}")))
        })
}

/// A label no loaded layer has, for the empty layer that marks where the
/// flags' layers begin.
const MARK: &str = "\u{0}flags";

/// Loads the config with `ctx`'s flags on top of the files (as every
/// command does), printing its warnings, and returns it with the layers the
/// flags made, `(label, raw)` in order.
///
/// # Errors
///
/// The config does not load.
pub fn load_with_flags(ctx: &Ctx) -> Result<(Loaded, Vec<(String, Value)>), LoadError> {
    // The conversation's changes come between the files and the flags, so
    // an empty one marks where the flags begin.
    let mark = DeltaLayer {
        label: MARK.into(),
        delta: serde_json::json!({ "style": {} }),
        unsets: Vec::new(),
    };
    let loaded = ctx.load_with(vec![mark])?;
    for warning in &loaded.warnings {
        jp_term::errln!("{warning}");
    }
    let flags = loaded
        .layers
        .iter()
        .skip_while(|layer| layer.label != MARK)
        .skip(1)
        .map(|layer| (layer.label.clone(), layer.raw.clone()))
        .collect();
    Ok((loaded, flags))
}

#[cfg(test)]
#[path = "recorded_tests.rs"]
mod tests;
