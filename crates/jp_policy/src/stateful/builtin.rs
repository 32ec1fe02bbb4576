//! The built-in stateful policies: [`Sequential`] (a tool needs others to
//! have succeeded first), [`Keyed`] (the same per argument value, and
//! `read_before_write` as its file-system form) and [`Conditional`] (a
//! policy enforced only while a config value holds).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::pattern::ToolPattern;
use super::policy::{Call, PolicyContext, PolicyDecision, ToolPolicy};

fn any_matches(patterns: &[ToolPattern], tool: &str) -> bool {
    patterns.iter().any(|p| p.matches(tool))
}

fn names(patterns: &[ToolPattern]) -> Vec<&str> {
    patterns.iter().map(ToolPattern::as_str).collect()
}

/// "a", "a or b", "a, b or c".
fn either(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => format!("`{one}`"),
        [rest @ .., last] => format!(
            "{} or `{last}`",
            rest.iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "the registry API of the Tool Policy Specification; jp itself rebuilds state by replaying the conversation, and tests use it"
    )
)]
fn set_state(state: &Value, field: &str) -> Result<BTreeSet<String>, String> {
    let items = state
        .get(field)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("expected {{\"{field}\": [...]}}"))?;
    items
        .iter()
        .map(|item| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("`{field}` holds {item}, not a string"))
        })
        .collect()
}

/// `tool` runs only after each of `dependencies` has succeeded at least once
/// in the conversation.
#[derive(Debug, Clone)]
pub struct Sequential {
    name: String,
    tool: ToolPattern,
    dependencies: Vec<ToolPattern>,
    /// The tools that succeeded and are one of `dependencies`.
    succeeded: BTreeSet<String>,
}

impl Sequential {
    /// The policy `name`: `tool` needs every one of `dependencies` (names or
    /// globs; a glob is satisfied by any tool it matches) first.
    #[must_use]
    pub fn new(name: impl Into<String>, tool: ToolPattern, dependencies: Vec<ToolPattern>) -> Self {
        Self {
            name: name.into(),
            tool,
            dependencies,
            succeeded: BTreeSet::new(),
        }
    }
}

impl ToolPolicy for Sequential {
    fn name(&self) -> &str {
        &self.name
    }

    fn governs(&self, tool: &str) -> bool {
        self.tool.matches(tool) || any_matches(&self.dependencies, tool)
    }

    fn check(&self, call: &Call<'_>, _ctx: &PolicyContext<'_>) -> PolicyDecision {
        if !self.tool.matches(call.tool) {
            return PolicyDecision::Allow;
        }
        let missing: Vec<&str> = self
            .dependencies
            .iter()
            .filter(|dep| !self.succeeded.iter().any(|done| dep.matches(done)))
            .map(ToolPattern::as_str)
            .collect();
        if missing.is_empty() {
            return PolicyDecision::Allow;
        }
        let list = missing
            .iter()
            .map(|m| format!("`{m}`"))
            .collect::<Vec<_>>()
            .join(", ");
        PolicyDecision::deny(
            format!(
                "`{}` can run only after {list} succeeded in this conversation; run {list} first, then call `{}` again.",
                call.tool, call.tool
            ),
            json_map(json!({ "tool": call.tool, "missing": missing })),
        )
    }

    fn on_result(&mut self, call: &Call<'_>, _result: &str, _ctx: &PolicyContext<'_>) {
        if any_matches(&self.dependencies, call.tool) {
            self.succeeded.insert(call.tool.to_owned());
        }
    }

    fn snapshot(&self) -> Value {
        json!({ "succeeded": self.succeeded })
    }

    fn restore(&mut self, state: &Value) -> Result<(), String> {
        self.succeeded = set_state(state, "succeeded")?;
        Ok(())
    }
}

/// A call of one of `dependents` with key K runs only after a call of one
/// of `prerequisites` with key K succeeded. The key is the argument at
/// `pointer`.
///
/// As `read_before_write` (see [`Keyed::read_before_write`]), a key that
/// names a file that does not exist needs nothing: creating a file is not
/// overwriting one. Only a read teaches it anything, as in the
/// specification: a successful write does not prove the model knows the
/// whole file (a modification changes only part of it).
#[derive(Debug, Clone)]
pub struct Keyed {
    name: String,
    dependents: Vec<ToolPattern>,
    prerequisites: Vec<ToolPattern>,
    pointer: String,
    files: bool,
    /// Keys some prerequisite succeeded with.
    satisfied: BTreeSet<String>,
}

impl Keyed {
    /// The policy `name`: a call of `dependents` needs a call of one of
    /// `prerequisites` with the same value at `pointer` first.
    #[must_use]
    pub fn new(
        name: impl Into<String>,
        dependents: Vec<ToolPattern>,
        prerequisites: Vec<ToolPattern>,
        pointer: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            dependents,
            prerequisites,
            pointer: pointer.into(),
            files: false,
            satisfied: BTreeSet::new(),
        }
    }

    /// `read_before_write`: an existing file that one of `write_tools`
    /// would change must have been read with one of `read_tools` first.
    #[must_use]
    pub fn read_before_write(
        name: impl Into<String>,
        read_tools: Vec<ToolPattern>,
        write_tools: Vec<ToolPattern>,
        pointer: impl Into<String>,
    ) -> Self {
        Self {
            files: true,
            ..Self::new(name, write_tools, read_tools, pointer)
        }
    }

    fn value<'a>(&self, arguments: &'a Map<String, Value>) -> Option<&'a Value> {
        let pointer = jsonptr::Pointer::parse(&self.pointer).ok()?;
        let mut node = None::<&Value>;
        for (i, token) in pointer.tokens().enumerate() {
            let token = token.decoded();
            node = if i == 0 {
                arguments.get(token.as_ref())
            } else {
                node?.as_object()?.get(token.as_ref())
            };
            node?;
        }
        node
    }
}

impl ToolPolicy for Keyed {
    fn name(&self) -> &str {
        &self.name
    }

    fn governs(&self, tool: &str) -> bool {
        any_matches(&self.dependents, tool) || any_matches(&self.prerequisites, tool)
    }

    fn check(&self, call: &Call<'_>, ctx: &PolicyContext<'_>) -> PolicyDecision {
        if !any_matches(&self.dependents, call.tool) {
            return PolicyDecision::Allow;
        }
        let pointer = &self.pointer;
        let Some(value) = self.value(call.arguments) else {
            if ctx.partial {
                // It may still arrive.
                return PolicyDecision::Allow;
            }
            // Without its key, nothing says which prerequisite it needs:
            // fail closed (a write with no path is not a write to nothing).
            return PolicyDecision::deny(
                format!(
                    "`{}` was called without `{pointer}`, which jp needs to check the call against what ran before; call it again with `{pointer}`.",
                    call.tool
                ),
                json_map(json!({ "tool": call.tool, "key": pointer })),
            );
        };
        let key = match ctx.env.key(call.tool, pointer, value) {
            Ok(key) => key,
            Err(why) => {
                return PolicyDecision::deny(
                    format!("`{}` cannot be checked: {why}.", call.tool),
                    json_map(json!({ "tool": call.tool, "key": pointer })),
                );
            }
        };
        if self.satisfied.contains(&key.text) {
            return PolicyDecision::Allow;
        }
        if self.files && key.is_path && !ctx.env.file_exists(&key) {
            return PolicyDecision::Allow;
        }
        let tools = names(&self.prerequisites);
        let reason = if self.files {
            format!(
                "`{}` already exists and has not been read in this conversation; read it with {} first, then call `{}` again.",
                key.text,
                either(&tools),
                call.tool
            )
        } else {
            format!(
                "`{}` with {pointer} = `{}` can run only after {} succeeded with the same {pointer}; run it first, then call `{}` again.",
                call.tool,
                key.text,
                either(&tools),
                call.tool
            )
        };
        PolicyDecision::deny(
            reason,
            json_map(json!({ "tool": call.tool, "key": key.text, "prerequisites": tools })),
        )
    }

    fn key_parameter(&self, tool: &str) -> Option<&str> {
        if !any_matches(&self.dependents, tool) {
            return None;
        }
        // The first token of the pointer, `/path` -> `path`.
        let rest = self.pointer.strip_prefix('/')?;
        Some(rest.split('/').next().unwrap_or(rest))
    }

    fn on_result(&mut self, call: &Call<'_>, _result: &str, ctx: &PolicyContext<'_>) {
        if !any_matches(&self.prerequisites, call.tool) {
            return;
        }
        if let Some(value) = self.value(call.arguments)
            && let Ok(key) = ctx.env.key(call.tool, &self.pointer, value)
        {
            self.satisfied.insert(key.text);
        }
    }

    fn snapshot(&self) -> Value {
        json!({ "satisfied": self.satisfied })
    }

    fn restore(&mut self, state: &Value) -> Result<(), String> {
        self.satisfied = set_state(state, "satisfied")?;
        Ok(())
    }
}

/// A condition on the resolved config (as JSON): an entry's `when`, which
/// `jp_config` reads and implements this for.
pub trait ConfigCondition: Send {
    /// Whether the condition holds in `resolved`.
    fn holds(&self, resolved: &Value) -> bool;
}

/// `inner`, enforced only while `when` holds in the resolved config. Its
/// state is kept up to date either way, so switching the condition on
/// mid-conversation does not forget what was read before.
pub struct Conditional {
    inner: Box<dyn ToolPolicy>,
    when: Box<dyn ConfigCondition>,
}

impl Conditional {
    /// `inner` while `when` holds.
    #[must_use]
    pub fn new(inner: Box<dyn ToolPolicy>, when: impl ConfigCondition + 'static) -> Self {
        Self {
            inner,
            when: Box::new(when),
        }
    }
}

impl ToolPolicy for Conditional {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn governs(&self, tool: &str) -> bool {
        self.inner.governs(tool)
    }

    fn check(&self, call: &Call<'_>, ctx: &PolicyContext<'_>) -> PolicyDecision {
        if self.when.holds(ctx.config) {
            self.inner.check(call, ctx)
        } else {
            PolicyDecision::Allow
        }
    }

    fn key_parameter(&self, tool: &str) -> Option<&str> {
        self.inner.key_parameter(tool)
    }

    fn on_result(&mut self, call: &Call<'_>, result: &str, ctx: &PolicyContext<'_>) {
        self.inner.on_result(call, result, ctx);
    }

    fn snapshot(&self) -> Value {
        self.inner.snapshot()
    }

    fn restore(&mut self, state: &Value) -> Result<(), String> {
        self.inner.restore(state)
    }
}

fn json_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
