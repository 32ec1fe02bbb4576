//! Config changes a tool proposes (RFD 078): checked, authorized against
//! its grants, and folded into one change per cycle.
//!
//! A tool's successful outcome may carry `config` (a partial config tree of
//! values to set) and `unset` (paths to remove). [`Proposal::check`] turns
//! them into concrete leaves: the tree must deserialize as config (unknown
//! keys, wrong types and bad values are refused), model aliases are
//! resolved first (so what is authorized, shown and stored is the model
//! that will be used), and every `unset` must parse and name a config key.
//! [`Proposal::authorize`] then needs a `write` grant for every leaf set, a
//! `delete` grant for every path removed, and both for a list set where
//! lists replace (setting such a list removes what was in it).
//! [`Buffer`] holds the approved changes of one cycle and folds them, in
//! call order, into one [`Folded`] change: the last operation on a path
//! wins, and no path is both set and removed.

mod check;

use std::fmt;

use serde_json::{Map, Value};

use crate::access::{Apply, Grants, RemovalDenied};
use crate::app::is_append_key;
use crate::path::ConfigPath;

/// A path to remove: a key, or (`path["json"]`) the elements of the list
/// at a key that equal a JSON value.
#[derive(Debug, Clone, PartialEq)]
pub struct UnsetPath {
    /// The key.
    pub path: ConfigPath,
    /// The list element to remove, if only elements are removed.
    pub element: Option<Value>,
}

impl UnsetPath {
    /// Parses `a.b` or `a.b["json value"]`.
    ///
    /// # Errors
    ///
    /// What is wrong with the text.
    pub fn parse(text: &str) -> Result<Self, crate::path::ConfigPathError> {
        if text.ends_with(']') {
            // The first `[` that splits the text into a key and a JSON
            // value; a key may itself hold `[` in a quoted segment.
            for (at, _) in text.match_indices('[') {
                if let (Ok(path), Ok(element)) = (
                    ConfigPath::parse(&text[..at]),
                    serde_json::from_str::<Value>(&text[at + 1..text.len() - 1]),
                ) {
                    return Ok(Self {
                        path,
                        element: Some(element),
                    });
                }
            }
        }
        ConfigPath::parse(text).map(|path| Self {
            path,
            element: None,
        })
    }
}

impl fmt::Display for UnsetPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path)?;
        if let Some(element) = &self.element {
            write!(f, "[{element}]")?;
        }
        Ok(())
    }
}

/// Why a proposed change cannot be applied, before anyone is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Whether the change is invalid (`false`: unauthorized).
    pub invalid: bool,
    /// The paths concerned.
    pub fields: Vec<String>,
    /// What is wrong.
    pub detail: String,
}

impl Refusal {
    fn invalid(fields: Vec<String>, detail: String) -> Self {
        Self {
            invalid: true,
            fields,
            detail,
        }
    }
}

/// One change, for showing the user: the value before and after
/// (`None`: not set, or removed).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The key (with the element, for a list element removed).
    pub path: String,
    /// Its value now.
    pub old: Option<Value>,
    /// Its value after the change.
    pub new: Option<Value>,
}

/// A tool's checked config change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Proposal {
    /// Values to set, one per leaf, in the order the tool wrote them.
    pub sets: Vec<(ConfigPath, Value)>,
    /// Paths to remove.
    pub unsets: Vec<UnsetPath>,
}

impl Proposal {
    /// Whether the change changes nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty() && self.unsets.is_empty()
    }

    /// Authorizes the change against a tool's grants: `write` for every
    /// leaf set, `delete` for every path removed, and both for a list set
    /// at a key whose lists replace rather than append. Returns whether
    /// the user must be asked first (any deciding rule has
    /// `apply = "ask"`).
    ///
    /// # Errors
    ///
    /// A [`Refusal`] (not `invalid`) naming every path not granted.
    pub fn authorize(&self, grants: &Grants) -> Result<Apply, Refusal> {
        let mut refused = Vec::new();
        let mut why = Vec::new();
        let mut apply = Apply::Unattended;
        for (path, value) in &self.sets {
            let can = grants.capabilities(path);
            let replaces = value.is_array() && !appends(path);
            let removal = grants.check_removal(path);
            if !can.write {
                refused.push(path.to_string());
                why.push(format!("{path}: {}", write_refused(grants, path)));
            } else if let (true, Err(denied)) = (replaces, &removal) {
                refused.push(path.to_string());
                why.push(match removal_refused(grants, path, denied) {
                    None => format!(
                        "{path}: setting this list replaces it, which needs a delete grant too"
                    ),
                    Some(reason) => format!(
                        "{path}: setting this list replaces it, which needs delete too: {reason}"
                    ),
                });
            } else {
                apply = apply.min(can.apply);
                if let (true, Ok(asks)) = (replaces, removal) {
                    apply = apply.min(asks);
                }
            }
        }
        for unset in &self.unsets {
            match grants.check_removal(&unset.path) {
                Ok(asks) => apply = apply.min(asks),
                Err(denied) => {
                    refused.push(unset.to_string());
                    why.push(format!(
                        "{unset}: {}",
                        removal_refused(grants, &unset.path, &denied)
                            .unwrap_or_else(|| "no delete grant".into())
                    ));
                }
            }
        }
        if refused.is_empty() {
            Ok(apply)
        } else {
            Err(Refusal {
                invalid: false,
                fields: refused,
                detail: format!(
                    "the tool's access.config grants do not cover {}",
                    why.join("; ")
                ),
            })
        }
    }

    /// Each change with its value now (in `resolved`, the config as JSON)
    /// and after.
    #[must_use]
    pub fn changes(&self, resolved: &Value) -> Vec<Change> {
        let sets = self.sets.iter().map(|(path, value)| {
            let old = path.lookup(resolved).filter(|v| !v.is_null()).cloned();
            let new = if appends(path) {
                let mut list = old
                    .clone()
                    .and_then(|v| v.as_array().cloned())
                    .unwrap_or_default();
                list.extend(value.as_array().cloned().unwrap_or_default());
                Value::Array(list)
            } else {
                value.clone()
            };
            Change {
                path: path.to_string(),
                old,
                new: Some(new),
            }
        });
        let unsets = self.unsets.iter().map(|unset| Change {
            path: unset.to_string(),
            old: match &unset.element {
                None => unset
                    .path
                    .lookup(resolved)
                    .filter(|v| !v.is_null())
                    .cloned(),
                Some(element) => unset
                    .path
                    .lookup(resolved)
                    .and_then(Value::as_array)
                    .and_then(|items| items.iter().find(|item| *item == element))
                    .cloned(),
            },
            new: None,
        });
        sets.chain(unsets).collect()
    }
}

/// Why the tool may not set `path`: no grant, or a `true` grant that
/// stops short of a sensitive path.
fn write_refused(grants: &Grants, path: &ConfigPath) -> String {
    let granted = grants
        .rule_for(path)
        .is_some_and(|rule| rule.write.granted());
    if let Some(sealed) = crate::access::sealed(path) {
        return format!(
            "a sandbox ({sealed}), which no grant reaches: a tool can never loosen a sandbox"
        );
    }
    match crate::access::sensitive(path) {
        Some(sensitive) if granted => format!(
            "a sensitive path ({sensitive}), which write = true does not reach; that needs write = \"insecure_allow\""
        ),
        _ => "no write grant".into(),
    }
}

/// Why the tool may not remove `path` (which `denied` says), when there is
/// more to say than that it has no delete grant there.
fn removal_refused(grants: &Grants, path: &ConfigPath, denied: &RemovalDenied) -> Option<String> {
    if denied.sealed {
        return Some(format!(
            "it is or holds a sandbox ({}), which no grant reaches: a tool can never loosen a sandbox",
            denied.sensitive.unwrap_or("sandbox")
        ));
    }
    let rule = grants.rule_for(&denied.at)?;
    let here = denied.at == *path;
    match denied.sensitive {
        Some(sensitive) if rule.delete.granted() && here => Some(format!(
            "a sensitive path ({sensitive}), which delete = true does not reach; that needs delete = \"insecure_allow\""
        )),
        Some(sensitive) if rule.delete.granted() => Some(format!(
            "removing it removes a sensitive path below it ({sensitive}), which delete = true does not reach; that needs delete = \"insecure_allow\""
        )),
        _ if here => None,
        _ => Some(format!(
            "removing it removes what the rule for {} does not let the tool remove",
            rule.path
        )),
    }
}

/// Whether lists at `path` append across layers rather than replace.
fn appends(path: &ConfigPath) -> bool {
    is_append_key(path.segments())
}

/// The leaves of a config tree: every value that is not an object, and
/// every empty object below the root (setting `{}` replaces what a plain
/// map held, so it is a value to check and authorize like any other), with
/// its path, in the tree's order.
#[must_use]
pub fn leaves(tree: &Value) -> Vec<(ConfigPath, Value)> {
    fn walk(node: &Value, at: &mut Vec<String>, out: &mut Vec<(ConfigPath, Value)>) {
        match node {
            Value::Object(map) if !map.is_empty() || at.is_empty() => {
                for (key, child) in map {
                    at.push(key.clone());
                    walk(child, at, out);
                    at.pop();
                }
            }
            leaf => out.push((ConfigPath::from_segments(at.iter().cloned()), leaf.clone())),
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

/// The approved config changes of one cycle, by the index of the call
/// that made them. It lives in memory only: a killed jp loses it, and
/// nothing provisional reaches the conversation.
#[derive(Debug, Clone, Default)]
pub struct Buffer {
    entries: Vec<(usize, String, Proposal)>,
}

/// One cycle's changes, folded: what to set, what to remove, and the tools
/// they came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Folded {
    /// A partial config tree of the values to set.
    pub delta: Map<String, Value>,
    /// The paths to remove, written as `unset` accepts them.
    pub unsets: Vec<String>,
    /// Every path set or removed (each one is explicitly unclaimed).
    pub touched: Vec<String>,
    /// The tools whose changes these are, in call order.
    pub tools: Vec<String>,
}

impl Buffer {
    /// Adds the approved change of the call at `index`, made by `tool`.
    pub fn add(&mut self, index: usize, tool: &str, proposal: Proposal) {
        if !proposal.is_empty() {
            self.entries.push((index, tool.to_owned(), proposal));
        }
    }

    /// Drops everything (a restarted cycle proposes its changes again).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Whether nothing was approved.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Folds the entries in call order into one change; `None` when there
    /// is none. The last operation on a path wins: a removal drops what
    /// was set at or below the path earlier, a set drops an earlier removal
    /// of the same path. Replaying it removes first, then sets.
    #[must_use]
    pub fn fold(&self) -> Option<Folded> {
        if self.entries.is_empty() {
            return None;
        }
        let mut entries: Vec<&(usize, String, Proposal)> = self.entries.iter().collect();
        entries.sort_by_key(|(index, _, _)| *index);
        let mut sets: Vec<(ConfigPath, Value)> = Vec::new();
        let mut unsets: Vec<UnsetPath> = Vec::new();
        let mut tools: Vec<String> = Vec::new();
        for (_, tool, proposal) in entries {
            if !tools.contains(tool) {
                tools.push(tool.clone());
            }
            for unset in &proposal.unsets {
                if unset.element.is_none() {
                    sets.retain(|(path, _)| !path.starts_with(&unset.path));
                }
                unsets.retain(|u| u != unset);
                unsets.push(unset.clone());
            }
            for (path, value) in &proposal.sets {
                unsets.retain(|u| u.path != *path);
                let appends = appends(path);
                match sets.iter_mut().find(|(p, _)| p == path) {
                    Some((_, Value::Array(earlier))) if appends => {
                        earlier.extend(value.as_array().cloned().unwrap_or_default());
                    }
                    Some((_, earlier)) => *earlier = value.clone(),
                    None => sets.push((path.clone(), value.clone())),
                }
            }
        }
        let mut delta = Value::Object(Map::new());
        let mut touched = Vec::new();
        for (path, value) in sets {
            insert(&mut delta, path.segments(), value);
            touched.push(path.to_string());
        }
        let unsets: Vec<String> = unsets.iter().map(ToString::to_string).collect();
        touched.extend(unsets.iter().cloned());
        let Value::Object(delta) = delta else {
            return None;
        };
        Some(Folded {
            delta,
            unsets,
            touched,
            tools,
        })
    }
}

/// Sets `value` at `segments` in `tree`, making objects on the way.
pub fn insert(tree: &mut Value, segments: &[String], value: Value) {
    let Some((last, parents)) = segments.split_last() else {
        *tree = value;
        return;
    };
    let mut node = tree;
    for segment in parents {
        if !node.is_object() {
            *node = Value::Object(Map::new());
        }
        let Value::Object(map) = node else { return };
        node = map
            .entry(segment.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if !node.is_object() {
        *node = Value::Object(Map::new());
    }
    if let Value::Object(map) = node {
        map.insert(last.clone(), value);
    }
}

/// Removes `unset` from a layer's raw value: the key, or the list
/// elements equal to its element. Returns whether anything was removed.
pub fn remove(raw: &mut Value, unset: &UnsetPath) -> bool {
    let Some((last, parents)) = unset.path.segments().split_last() else {
        return false;
    };
    let mut node = raw;
    for segment in parents {
        match node.get_mut(segment.as_str()) {
            Some(next) => node = next,
            None => return false,
        }
    }
    let Value::Object(map) = node else {
        return false;
    };
    match &unset.element {
        None => map.remove(last.as_str()).is_some(),
        Some(element) => match map.get_mut(last.as_str()) {
            Some(Value::Array(items)) => {
                let before = items.len();
                items.retain(|item| item != element);
                items.len() != before
            }
            _ => false,
        },
    }
}

#[cfg(test)]
#[path = "delta_tests.rs"]
mod tests;
