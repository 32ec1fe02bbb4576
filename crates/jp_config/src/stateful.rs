//! `conversation.policies`: stateful tool policies (the Tool Policy
//! Specification), as written in config.
//!
//! D25 policies decide each call on its own; these decide by what happened
//! earlier in the conversation:
//!
//! ```toml
//! [[conversation.policies]]
//! kind = "read_before_write"
//! read_tools = ["fs_read_file"]
//! write_tools = ["fs_modify_file", "fs_create_file"]
//!
//! [[conversation.policies]]
//! kind = "sequential"
//! tool = "deploy"
//! dependencies = ["run_tests"]
//! ```
//!
//! This module holds the config form and its validation (kinds, fields,
//! tool names, dependency cycles, key pointers, conditions). `jp_cli` turns
//! each entry into a policy of its registry and evaluates it.

use std::collections::{BTreeMap, BTreeSet};

use schematic::Schematic;
use serde::{Deserialize, Serialize};

use crate::app::AppConfig;
use crate::path::ConfigPath;
use crate::policy::pointer::{key_target, quote};
use crate::tool::{DEFAULTS_KEY, ParamType, offered};

/// The key a `read_before_write` policy reads when it sets none.
pub const DEFAULT_PATH_KEY: &str = "/path";

/// One entry of `conversation.policies`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Schematic)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct StatefulPolicyConfig {
    /// `sequential` (a tool needs other tools to have succeeded first),
    /// `keyed` (the same, per argument value), or `read_before_write` (a
    /// file must be read before an existing one is changed).
    pub kind: StatefulKind,

    /// `sequential` and `keyed`: the tool this policy holds back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,

    /// `sequential`: every one of these tools must have succeeded before
    /// `tool` runs. `keyed`: one of them must have succeeded with the same
    /// key. Names or globs (`fs_*`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<String>,

    /// `keyed` (required) and `read_before_write` (default `"/path"`): a
    /// JSON pointer to the argument whose value is the key. A `path`
    /// parameter is resolved the way policies resolve paths, so `./a.txt`,
    /// `a.txt` and `src/../a.txt` are one key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,

    /// `read_before_write`: the tools that read a file. Names or globs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_tools: Vec<String>,

    /// `read_before_write`: the tools that change a file. Names or globs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_tools: Vec<String>,

    /// Only enforce this policy while a config value holds:
    /// `{ path = "assistant.model.id", equals = "ollama/qwen3.5:9b" }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<WhenConfig>,
}

/// The kinds of stateful policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Schematic)]
#[serde(rename_all = "snake_case")]
pub enum StatefulKind {
    /// A tool needs other tools to have succeeded first.
    Sequential,
    /// A tool needs one of some tools to have succeeded with the same key.
    Keyed,
    /// A file must be read before an existing one is written.
    ReadBeforeWrite,
}

impl StatefulKind {
    /// The name used in config files.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Sequential => "sequential",
            Self::Keyed => "keyed",
            Self::ReadBeforeWrite => "read_before_write",
        }
    }
}

/// A condition on the resolved config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Schematic)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct WhenConfig {
    /// A config key, such as `assistant.model.id`.
    pub path: String,
    /// The value it must have for the policy to apply. It must be a value
    /// the key can hold (its type, and one of its values for a key with a
    /// fixed set): one it never could would leave the policy off for good,
    /// so the config does not load.
    pub equals: serde_json::Value,
}

impl WhenConfig {
    /// Whether the condition holds in `resolved` (the config as JSON). A
    /// key that is not there does not hold.
    #[must_use]
    pub fn holds(&self, resolved: &serde_json::Value) -> bool {
        ConfigPath::parse(&self.path)
            .ok()
            .and_then(|path| path.lookup(resolved).cloned())
            .is_some_and(|value| crate::policy::matcher::json_equal(&value, &self.equals))
    }
}

/// A tool name or glob, as written in `tool`, `dependencies`, `read_tools`
/// or `write_tools`.
#[derive(Debug, Clone)]
pub struct ToolPattern {
    text: String,
    glob: Option<glob::Pattern>,
}

impl ToolPattern {
    /// Parses a name or glob (`*`, `?`, `[...]`).
    ///
    /// # Errors
    ///
    /// A message when the glob is malformed.
    pub fn parse(text: &str) -> Result<Self, String> {
        if !text.contains(['*', '?', '[']) {
            return Ok(Self {
                text: text.to_owned(),
                glob: None,
            });
        }
        glob::Pattern::new(text)
            .map(|glob| Self {
                text: text.to_owned(),
                glob: Some(glob),
            })
            .map_err(|e| format!("{} is not a valid glob: {}", quote(text), e.msg))
    }

    /// Whether `tool` is this name, or matches this glob.
    #[must_use]
    pub fn matches(&self, tool: &str) -> bool {
        match &self.glob {
            Some(glob) => glob.matches(tool),
            None => self.text == tool,
        }
    }

    /// As written.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// Which tools an entry governs, in its terms: the tools it holds back and
/// the tools that satisfy them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ToolRole {
    /// `tool`, or `write_tools`.
    Dependent,
    /// `dependencies`, or `read_tools`.
    Prerequisite,
}

impl StatefulPolicyConfig {
    /// The names or globs of the tools this entry holds back and of those
    /// that satisfy it, with the key each list is under.
    #[must_use]
    pub fn tool_lists(&self) -> [(&'static str, ToolRole, Vec<&str>); 2] {
        match self.kind {
            StatefulKind::Sequential | StatefulKind::Keyed => [
                (
                    "tool",
                    ToolRole::Dependent,
                    self.tool.iter().map(String::as_str).collect(),
                ),
                (
                    "dependencies",
                    ToolRole::Prerequisite,
                    self.dependencies.iter().map(String::as_str).collect(),
                ),
            ],
            StatefulKind::ReadBeforeWrite => [
                (
                    "write_tools",
                    ToolRole::Dependent,
                    self.write_tools.iter().map(String::as_str).collect(),
                ),
                (
                    "read_tools",
                    ToolRole::Prerequisite,
                    self.read_tools.iter().map(String::as_str).collect(),
                ),
            ],
        }
    }

    /// The key pointer this entry uses, if its kind has one.
    #[must_use]
    pub fn key_pointer(&self) -> Option<&str> {
        match self.kind {
            StatefulKind::Sequential => None,
            StatefulKind::Keyed => self.key.as_deref(),
            StatefulKind::ReadBeforeWrite => Some(self.key.as_deref().unwrap_or(DEFAULT_PATH_KEY)),
        }
    }
}

/// A problem with one entry: the key under `conversation.policies.INDEX`
/// it is about, whether it is an error, and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryProblem {
    /// The entry's index.
    pub index: usize,
    /// The field, if the problem is about one (`when.equals` for a field
    /// below one).
    pub field: Option<&'static str>,
    /// An error (the config is refused) or a warning.
    pub error: bool,
    /// What is wrong.
    pub message: String,
    /// The other entries the problem involves (a dependency cycle's).
    pub related: Vec<usize>,
}

/// Every problem with `config.conversation.policies`.
#[must_use]
pub fn check(config: &AppConfig) -> Vec<EntryProblem> {
    let mut problems = Vec::new();
    let tools: Vec<(&String, &crate::tool::ToolConfig)> =
        offered(&config.conversation.tools).collect();
    let resolved = crate::load::resolved_json(config);
    // Dependency edges (dependent -> prerequisite) over configured tools,
    // with the entry each edge comes from.
    let mut edges: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();

    for (index, entry) in config.conversation.policies.iter().enumerate() {
        let mut push = |field, error, message: String| {
            problems.push(EntryProblem {
                index,
                field,
                error,
                message,
                related: Vec::new(),
            });
        };
        let kind = entry.kind.as_str();
        let (required, forbidden): (&[&'static str], &[&'static str]) = match entry.kind {
            StatefulKind::Sequential => (
                &["tool", "dependencies"],
                &["key", "read_tools", "write_tools"],
            ),
            StatefulKind::Keyed => (
                &["tool", "dependencies", "key"],
                &["read_tools", "write_tools"],
            ),
            StatefulKind::ReadBeforeWrite => {
                (&["read_tools", "write_tools"], &["tool", "dependencies"])
            }
        };
        let set = |field: &str| match field {
            "tool" => entry.tool.is_some(),
            "dependencies" => !entry.dependencies.is_empty(),
            "key" => entry.key.is_some(),
            "read_tools" => !entry.read_tools.is_empty(),
            "write_tools" => !entry.write_tools.is_empty(),
            _ => false,
        };
        let mut complete = true;
        for field in required {
            if !set(field) {
                complete = false;
                push(
                    Some(field),
                    true,
                    format!("a `{kind}` policy needs `{field}`"),
                );
            }
        }
        for field in forbidden {
            if set(field) {
                push(
                    Some(field),
                    true,
                    format!("a `{kind}` policy has no `{field}` (see `kind`)"),
                );
            }
        }

        // Tool names and globs, and what they match.
        let mut governed: BTreeMap<ToolRole, BTreeSet<String>> = BTreeMap::new();
        for (field, role, names) in entry.tool_lists() {
            for name in names {
                let pattern = match ToolPattern::parse(name) {
                    Ok(pattern) => pattern,
                    Err(message) => {
                        push(Some(field), true, message);
                        continue;
                    }
                };
                if name == DEFAULTS_KEY {
                    push(
                        Some(field),
                        true,
                        "`'*'` is the tool defaults entry, not a tool; use a glob such as `fs_*`"
                            .into(),
                    );
                    continue;
                }
                let matched: Vec<String> = tools
                    .iter()
                    .filter(|(tool, _)| pattern.matches(tool))
                    .map(|(tool, _)| (*tool).clone())
                    .collect();
                if matched.is_empty() {
                    push(
                        Some(field),
                        false,
                        match (pattern.glob.is_some(), role) {
                            (true, ToolRole::Dependent) => format!(
                                "{} matches no configured tool (the policy never applies)",
                                quote(name)
                            ),
                            (false, ToolRole::Dependent) => format!(
                                "there is no tool {} (the policy never applies to it)",
                                quote(name)
                            ),
                            (true, ToolRole::Prerequisite) => format!(
                                "{} matches no configured tool, so nothing can satisfy it",
                                quote(name)
                            ),
                            (false, ToolRole::Prerequisite) => format!(
                                "there is no tool {}, so nothing can satisfy it",
                                quote(name)
                            ),
                        },
                    );
                }
                governed.entry(role).or_default().extend(matched);
            }
        }
        let dependents = governed.remove(&ToolRole::Dependent).unwrap_or_default();
        let prerequisites = governed.remove(&ToolRole::Prerequisite).unwrap_or_default();
        for tool in dependents.intersection(&prerequisites) {
            let (a, b) = match entry.kind {
                StatefulKind::ReadBeforeWrite => ("write_tools", "read_tools"),
                _ => ("tool", "dependencies"),
            };
            push(
                Some(b),
                true,
                format!(
                    "`{tool}` is in both `{a}` and `{b}`: it would have to succeed before it could run (a dependency cycle)"
                ),
            );
        }
        // `read_before_write` is no hard dependency (a new file needs no
        // read), so it closes no cycle.
        if complete && entry.kind != StatefulKind::ReadBeforeWrite {
            for dependent in &dependents {
                for prerequisite in prerequisites.difference(&dependents) {
                    edges
                        .entry(dependent.clone())
                        .or_default()
                        .entry(prerequisite.clone())
                        .or_insert(index);
                }
            }
        }

        // The key must name one scalar parameter of every governed tool,
        // of one type (a path and a string never make the same key), and a
        // path for `read_before_write`, which is about files.
        if let Some(key) = entry.key_pointer() {
            let mut types: BTreeMap<&'static str, Vec<&str>> = BTreeMap::new();
            for tool in dependents.union(&prerequisites) {
                let Some((_, cfg)) = tools.iter().find(|(name, _)| *name == tool) else {
                    continue;
                };
                let target = key_target(key, &cfg.parameters);
                if let Ok((_, kind)) = &target {
                    types.entry(kind.as_str()).or_default().push(tool.as_str());
                }
                if let Err(message) = target {
                    let default = if entry.key.is_none() {
                        format!("; `key` is {} unless set", quote(key))
                    } else {
                        String::new()
                    };
                    push(
                        Some("key"),
                        true,
                        format!("{message} (in tool `{tool}`{default})"),
                    );
                }
            }
            let described = |types: &BTreeMap<&str, Vec<&str>>| {
                types
                    .iter()
                    .map(|(kind, tools)| format!("{kind} in {}", tools.join(", ")))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            if entry.kind == StatefulKind::ReadBeforeWrite
                && types.keys().any(|kind| *kind != ParamType::Path.as_str())
            {
                push(
                    Some("key"),
                    true,
                    format!(
                        "{} must be a `path` parameter of every read and write tool ({})",
                        quote(key),
                        described(&types)
                    ),
                );
            } else if types.len() > 1 {
                push(
                    Some("key"),
                    true,
                    format!(
                        "{} has one type in some tools and another in others ({}), so their keys would never match",
                        quote(key),
                        described(&types)
                    ),
                );
            }
        }

        if let Some(when) = &entry.when {
            match ConfigPath::parse(&when.path) {
                Ok(path) => match path.lookup(&resolved) {
                    Some(value) => {
                        if let Some(message) = equals_mismatch(when, &path, value) {
                            push(Some("when.equals"), true, message);
                        }
                    }
                    None => push(
                        Some("when"),
                        true,
                        format!("`when.path` {} is not a config key", quote(&when.path)),
                    ),
                },
                Err(e) => push(
                    Some("when"),
                    true,
                    format!("`when.path` {}: {e}", quote(&when.path)),
                ),
            }
        }
    }

    for cycle in cycles(&edges) {
        // Each edge of the cycle comes from an entry; the problem is placed
        // at the last of them and names the others.
        let mut entries: Vec<usize> = cycle
            .windows(2)
            .filter_map(|pair| edges.get(&pair[0]).and_then(|next| next.get(&pair[1])))
            .copied()
            .collect();
        entries.sort_unstable();
        entries.dedup();
        let Some(index) = entries.pop() else {
            continue;
        };
        problems.push(EntryProblem {
            index,
            field: None,
            error: true,
            message: format!(
                "dependency cycle: {}; none of these tools could ever run",
                cycle.join(" needs ")
            ),
            related: entries,
        });
    }
    problems
}

/// Why `when.equals` could never equal the config value at `when.path`
/// (`value` now): a value of another JSON type than the key has (from the
/// schema, so an optional key that is unset now is judged by what it may
/// hold), or one an enum key cannot take. A condition that can never hold
/// turns its policy off, and a typo must not weaken a rule (architecture
/// decision 4), so this is an error.
fn equals_mismatch(
    when: &WhenConfig,
    path: &ConfigPath,
    value: &serde_json::Value,
) -> Option<String> {
    use crate::schema::json_type;
    let schema = crate::schema::config_schema().ok();
    let mut types = schema
        .and_then(|schema| crate::schema::value_types(path, schema))
        .unwrap_or_default();
    // What the key holds now is a type it has, whatever the schema says.
    types.insert(json_type(value));
    let equals = json_type(&when.equals);
    if !types.contains(equals) {
        let article = |kind: &str| {
            let a = if kind.starts_with(['a', 'o']) {
                "an"
            } else {
                "a"
            };
            format!("{a} {kind}")
        };
        let held: Vec<String> = types
            .into_iter()
            .filter(|t| *t != "null")
            .map(article)
            .collect();
        let held = if held.is_empty() {
            "nothing but null".to_owned()
        } else {
            held.join(" or ")
        };
        return Some(format!(
            "`when.equals` is {}, but {} holds {held}, so the condition could never hold and the policy would never apply",
            article(equals),
            quote(&when.path),
        ));
    }
    let allowed = schema.and_then(|schema| crate::schema::enum_values(path, schema))?;
    if allowed
        .iter()
        .any(|v| crate::policy::matcher::json_equal(v, &when.equals))
    {
        return None;
    }
    let shown: Vec<String> = allowed.iter().map(ToString::to_string).collect();
    Some(format!(
        "`when.equals` {} is not a value {} can have ({}), so the condition could never hold and the policy would never apply",
        when.equals,
        quote(&when.path),
        shown.join(", ")
    ))
}

/// Each dependency cycle found, as the tools around it (the first repeated
/// at the end).
fn cycles(edges: &BTreeMap<String, BTreeMap<String, usize>>) -> Vec<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeMap<String, usize>>,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        marks.insert(node.to_owned(), Mark::Open);
        stack.push(node.to_owned());
        for next in edges.get(node).into_iter().flat_map(BTreeMap::keys) {
            match marks.get(next.as_str()) {
                Some(Mark::Open) => {
                    let start = stack.iter().position(|n| n == next).unwrap_or(0);
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(next.clone());
                    out.push(cycle);
                }
                Some(Mark::Done) => {}
                None => visit(next, edges, marks, stack, out),
            }
        }
        stack.pop();
        marks.insert(node.to_owned(), Mark::Done);
    }
    let mut marks = BTreeMap::new();
    let mut out = Vec::new();
    for node in edges.keys() {
        if !marks.contains_key(node.as_str()) {
            visit(node, edges, &mut marks, &mut Vec::new(), &mut out);
        }
    }
    out
}

#[cfg(test)]
#[path = "stateful_tests.rs"]
mod tests;
