//! Checks of `conversation.policies` (the stateful policies) against the
//! whole config: each kind's fields, the tools named and what they match,
//! dependency cycles across entries, key pointers and `when` conditions.

use std::collections::{BTreeMap, BTreeSet};

use jp_policy::ParamType;
use jp_policy::matcher::json_equal;
use jp_policy::pointer::{key_target, quote};
use jp_policy::stateful::ToolPattern;

use crate::app::{AppConfig, resolved_json};
use crate::path::ConfigPath;
use crate::schema::{config_schema, enum_values, json_type, value_types};
use crate::stateful::{StatefulKind, StatefulPolicyConfig, ToolRole, WhenConfig};
use crate::tool::{DEFAULTS_KEY, ToolConfig, offered};

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

/// Dependency edges (dependent -> prerequisite) over configured tools,
/// with the entry each edge comes from.
type Edges = BTreeMap<String, BTreeMap<String, usize>>;

/// The configured tools, by name.
type Tools<'a> = [(&'a String, &'a ToolConfig)];

/// Every problem with `config.conversation.policies`; a key is checked
/// only in the tools whose parameters are `known` (an MCP tool's are not
/// until its server is asked).
#[must_use]
pub fn check(config: &AppConfig, known: impl Fn(&ToolConfig) -> bool) -> Vec<EntryProblem> {
    let mut problems = Vec::new();
    let tools: Vec<(&String, &ToolConfig)> = offered(&config.conversation.tools).collect();
    let resolved = resolved_json(config);
    let mut edges = Edges::new();

    for (index, entry) in config.conversation.policies.iter().enumerate() {
        let mut found = Found {
            index,
            problems: &mut problems,
        };
        let complete = check_fields(entry, &mut found);
        let (dependents, prerequisites) = governed_tools(entry, &tools, &mut found);
        check_both_roles(entry, &dependents, &prerequisites, &mut found);
        // `read_before_write` is no hard dependency (a new file needs no
        // read), so it closes no cycle.
        if complete && entry.kind != StatefulKind::ReadBeforeWrite {
            add_edges(&mut edges, index, &dependents, &prerequisites);
        }
        if let Some(key) = entry.key_pointer() {
            let governed: BTreeSet<&String> = dependents
                .union(&prerequisites)
                .filter(|name| config.conversation.tools.get(*name).is_some_and(&known))
                .collect();
            check_key(entry, key, &tools, &governed, &mut found);
        }
        if let Some(when) = &entry.when {
            check_when(when, &resolved, &mut found);
        }
    }

    problems.extend(cycle_problems(&edges));
    problems
}

/// The problems found in one entry.
struct Found<'a> {
    index: usize,
    problems: &'a mut Vec<EntryProblem>,
}

impl Found<'_> {
    fn push(&mut self, field: Option<&'static str>, error: bool, message: String) {
        self.problems.push(EntryProblem {
            index: self.index,
            field,
            error,
            message,
            related: Vec::new(),
        });
    }
}

/// The fields the entry's kind needs and those it has no use for.
/// Returns whether every field it needs is set.
fn check_fields(entry: &StatefulPolicyConfig, found: &mut Found<'_>) -> bool {
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
            found.push(
                Some(field),
                true,
                format!("a `{kind}` policy needs `{field}`"),
            );
        }
    }
    for field in forbidden {
        if set(field) {
            found.push(
                Some(field),
                true,
                format!("a `{kind}` policy has no `{field}` (see `kind`)"),
            );
        }
    }
    complete
}

/// The configured tools the entry holds back (dependents) and those that
/// satisfy it (prerequisites), reporting each name or glob that is
/// malformed, is `'*'`, or matches no tool.
fn governed_tools(
    entry: &StatefulPolicyConfig,
    tools: &Tools<'_>,
    found: &mut Found<'_>,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut governed: BTreeMap<ToolRole, BTreeSet<String>> = BTreeMap::new();
    for (field, role, names) in entry.tool_lists() {
        for name in names {
            let pattern = match ToolPattern::parse(name) {
                Ok(pattern) => pattern,
                Err(bad) => {
                    found.push(Some(field), true, bad.to_string());
                    continue;
                }
            };
            if name == DEFAULTS_KEY {
                found.push(
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
                found.push(Some(field), false, matches_nothing(name, &pattern, role));
            }
            governed.entry(role).or_default().extend(matched);
        }
    }
    let dependents = governed.remove(&ToolRole::Dependent).unwrap_or_default();
    let prerequisites = governed.remove(&ToolRole::Prerequisite).unwrap_or_default();
    (dependents, prerequisites)
}

/// The warning for a name or glob that matches no configured tool.
fn matches_nothing(name: &str, pattern: &ToolPattern, role: ToolRole) -> String {
    match (pattern.is_glob(), role) {
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
    }
}

/// A tool both held back and satisfying the entry would have to succeed
/// before it could run.
fn check_both_roles(
    entry: &StatefulPolicyConfig,
    dependents: &BTreeSet<String>,
    prerequisites: &BTreeSet<String>,
    found: &mut Found<'_>,
) {
    for tool in dependents.intersection(prerequisites) {
        let (a, b) = match entry.kind {
            StatefulKind::ReadBeforeWrite => ("write_tools", "read_tools"),
            _ => ("tool", "dependencies"),
        };
        found.push(
            Some(b),
            true,
            format!(
                "`{tool}` is in both `{a}` and `{b}`: it would have to succeed before it could run (a dependency cycle)"
            ),
        );
    }
}

/// The entry's dependency edges, each dependent to each prerequisite that
/// is not itself a dependent.
fn add_edges(
    edges: &mut Edges,
    index: usize,
    dependents: &BTreeSet<String>,
    prerequisites: &BTreeSet<String>,
) {
    for dependent in dependents {
        for prerequisite in prerequisites.difference(dependents) {
            edges
                .entry(dependent.clone())
                .or_default()
                .entry(prerequisite.clone())
                .or_insert(index);
        }
    }
}

/// The key must name one scalar parameter of every governed tool, of one
/// type (a path and a string never make the same key), and a path for
/// `read_before_write`, which is about files.
fn check_key(
    entry: &StatefulPolicyConfig,
    key: &str,
    tools: &Tools<'_>,
    governed: &BTreeSet<&String>,
    found: &mut Found<'_>,
) {
    let mut types: BTreeMap<&'static str, Vec<&str>> = BTreeMap::new();
    for tool in governed {
        let Some((_, cfg)) = tools.iter().find(|(name, _)| name == tool) else {
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
            found.push(
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
        found.push(
            Some("key"),
            true,
            format!(
                "{} must be a `path` parameter of every read and write tool ({})",
                quote(key),
                described(&types)
            ),
        );
    } else if types.len() > 1 {
        found.push(
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

/// `when.path` must be a config key, and `when.equals` a value it can
/// hold.
fn check_when(when: &WhenConfig, resolved: &serde_json::Value, found: &mut Found<'_>) {
    match ConfigPath::parse(&when.path) {
        Ok(path) => match path.lookup(resolved) {
            Some(value) => {
                if let Some(message) = equals_mismatch(when, &path, value) {
                    found.push(Some("when.equals"), true, message);
                }
            }
            None => found.push(
                Some("when"),
                true,
                format!("`when.path` {} is not a config key", quote(&when.path)),
            ),
        },
        Err(e) => found.push(
            Some("when"),
            true,
            format!("`when.path` {}: {e}", quote(&when.path)),
        ),
    }
}

/// A problem for each dependency cycle across entries.
fn cycle_problems(edges: &Edges) -> Vec<EntryProblem> {
    let mut problems = Vec::new();
    for cycle in cycles(edges) {
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
    let schema = config_schema().ok();
    let mut types = schema
        .and_then(|schema| value_types(path, schema))
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
    let allowed = schema.and_then(|schema| enum_values(path, schema))?;
    if allowed.iter().any(|v| json_equal(v, &when.equals)) {
        return None;
    }
    let shown = jp_policy::listing::cut_list(allowed.iter().map(ToString::to_string));
    Some(format!(
        "`when.equals` {} is not a value {} can have ({shown}), so the condition could never hold and the policy would never apply",
        when.equals,
        quote(&when.path),
    ))
}

/// Each dependency cycle found, as the tools around it (the first repeated
/// at the end).
fn cycles(edges: &Edges) -> Vec<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        edges: &Edges,
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
#[path = "policies_tests.rs"]
mod tests;
