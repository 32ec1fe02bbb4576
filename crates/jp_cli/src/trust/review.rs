//! What a held tool or MCP server would do once the workspace is trusted
//! (issue 34, item 2): its command or URL, which of its calls run
//! unattended, and where that differs from what `jp init` writes, so the
//! user trusts what they saw, not a list of names.
//!
//! It is read from the config as it loads with the workspace trusted (the
//! user's own config and `'*'` defaults included), and compared with
//! [`jp_tools::DEFAULT_TOOLS_TOML`] loaded the same way.

use jp_config::AppConfig;
use jp_config::tool::effective::{EffectiveSpec, PolicyOrigin, effective_spec, written_spec};
use jp_config::tool::wildcard::{wildcard_name, wildcard_server};
use jp_config::tool::{DEFAULTS_KEY, ToolConfig, ToolSource};
use jp_policy::{Mode, PolicyField, PolicySpec};
use serde_json::Value;

/// How long a policy's matcher value may be in the question before it is
/// cut (the `v` key, and `jp trust --status`, show it whole).
const SHORT_VALUE: usize = 60;

/// What the details are read from: the config loaded with the workspace
/// trusted, and what `jp init` writes.
pub struct Review {
    trusted: AppConfig,
    /// `None` if jp init's tools did not load (they do: a test checks it).
    defaults: Option<AppConfig>,
    /// Whether long matcher values are cut ([`SHORT_VALUE`]).
    short: bool,
}

impl Review {
    /// A review of `trusted` (the config with what is held applied); long
    /// matcher values cut when `short`.
    #[must_use]
    pub fn new(trusted: AppConfig, short: bool) -> Self {
        Self {
            trusted,
            defaults: jp_init_config(),
            short,
        }
    }

    /// The lines below a held key (`conversation.tools.NAME`,
    /// `providers.mcp.NAME`) that say what it runs and what of it runs
    /// unattended, each indented; none for other keys.
    #[must_use]
    pub fn details(&self, key: &str) -> Vec<String> {
        let mut lines = if let Some(name) = key.strip_prefix("conversation.tools.") {
            self.tool(name)
        } else if let Some(name) = key.strip_prefix("providers.mcp.") {
            self.server(name)
        } else if key == "conversation.sandbox" {
            passed(&self.trusted.conversation.sandbox.env)
                .map(|names| {
                    format!("every tool and MCP server gets from your environment: {names}")
                })
                .into_iter()
                .collect()
        } else {
            Vec::new()
        };
        for line in &mut lines {
            line.insert_str(0, "      ");
        }
        lines
    }

    /// The full text the `v` key shows: each key's details with nothing
    /// cut, and what it is set to once trusted, as JSON; sanitized.
    #[must_use]
    pub fn full(&self, keys: &[String]) -> String {
        let whole = Self {
            trusted: self.trusted.clone(),
            defaults: self.defaults.clone(),
            short: false,
        };
        let resolved = jp_config::load::resolved_json(&self.trusted);
        let mut out = String::new();
        for key in keys {
            out.push_str(key);
            out.push('\n');
            for line in whole.details(key) {
                out.push_str(&line);
                out.push('\n');
            }
            if let Some(value) = lookup(&resolved, key) {
                let text = serde_json::to_string_pretty(value).unwrap_or_default();
                for line in text.lines() {
                    out.push_str("      ");
                    out.push_str(line);
                    out.push('\n');
                }
            }
            out.push('\n');
        }
        // What a repository wrote reaches the pager as the terminal would
        // show it: escape sequences and invisible characters escaped.
        out.lines()
            .map(|line| format!("{}\n", jp_term::printer::sanitize(line)))
            .collect()
    }

    fn tool(&self, name: &str) -> Vec<String> {
        let Some(tool) = self.trusted.conversation.tools.get(name) else {
            return Vec::new();
        };
        let default = self
            .defaults
            .as_ref()
            .and_then(|defaults| defaults.conversation.tools.get(name));
        let mut lines = Vec::new();
        let differs = |same: bool| {
            if same {
                ""
            } else {
                "   [differs from jp init]"
            }
        };
        if name == DEFAULTS_KEY {
            lines.push("the defaults of every tool".to_owned());
        } else if let Some(server) = wildcard_server(name) {
            lines.push(format!("the defaults of MCP server {server}'s tools"));
        } else {
            let runs = runs(name, tool);
            let same = default.is_some_and(|d| self::runs(name, d) == runs);
            lines.push(format!(
                "runs: {runs}{}",
                differs(same || default.is_none())
            ));
            if let Some(names) = passed(&jp_config::sandbox::tool_env(&self.trusted, name)) {
                lines.push(format!("gets from your environment: {names}"));
            }
        }
        let spec = if name == DEFAULTS_KEY || wildcard_server(name).is_some() {
            written_spec(&self.trusted, name, PolicyField::Run)
                .or_else(|| written_spec(&self.trusted, DEFAULTS_KEY, PolicyField::Run))
                .unwrap_or_else(built_in)
        } else {
            effective_spec(&self.trusted, name, PolicyField::Run)
        };
        let unattended = self.unattended(&spec);
        let same = self.defaults.as_ref().is_some_and(|defaults| {
            default.is_some() && effective_spec(defaults, name, PolicyField::Run).spec == spec.spec
        });
        lines.push(format!(
            "unattended: {unattended}{}",
            differs(same || default.is_none())
        ));
        match default {
            None => lines.push("not a tool jp init writes".to_owned()),
            Some(default) => {
                let other = other_differences(tool, default);
                if !other.is_empty() {
                    lines.push(format!("also differs from jp init: {}", other.join(", ")));
                }
            }
        }
        lines
    }

    fn server(&self, name: &str) -> Vec<String> {
        let Some(server) = self.trusted.providers.mcp.get(name) else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        match &server.url {
            Some(url) => lines.push(format!("connects to: {}", quote(url))),
            None => {
                lines.push(format!("runs: {}", argv(&server.command)));
                let servers = jp_config::sandbox::sandboxed_servers(&self.trusted);
                if let Some(names) = servers.get(name).and_then(|s| passed(&s.sandbox.env)) {
                    lines.push(format!("gets from your environment: {names}"));
                }
            }
        }
        let spec = written_spec(&self.trusted, &wildcard_name(name), PolicyField::Run)
            .or_else(|| written_spec(&self.trusted, DEFAULTS_KEY, PolicyField::Run))
            .unwrap_or_else(built_in);
        lines.push(format!(
            "unattended (its tools without a policy of their own): {}",
            self.unattended(&spec)
        ));
        lines.push("not a server jp init writes (it writes none)".to_owned());
        lines
    }

    /// Which calls `spec` runs unattended, and where it is written when
    /// not in the tool itself.
    fn unattended(&self, spec: &EffectiveSpec) -> String {
        let what = match &spec.spec {
            PolicySpec::Mode(Mode::Unattended) => "every call".to_owned(),
            PolicySpec::Mode(mode) => format!("no call (every call: {mode})"),
            PolicySpec::Rules(rules) => {
                let count = rules.len();
                let unattended: Vec<String> = rules
                    .iter()
                    .enumerate()
                    .filter(|(_, rule)| {
                        rule.entries().get("mode").and_then(Value::as_str)
                            == Some(Mode::Unattended.as_str())
                    })
                    .map(|(index, rule)| {
                        format!(
                            "rule {index} of {count}: {}",
                            self.condition(index, rule.entries())
                        )
                    })
                    .collect();
                if unattended.is_empty() {
                    "no call (no rule is unattended)".to_owned()
                } else {
                    unattended.join("; ")
                }
            }
        };
        match &spec.origin {
            PolicyOrigin::Tool(_) => what,
            PolicyOrigin::Defaults(key) => format!("{what} (from {key})"),
            PolicyOrigin::BuiltIn => format!("{what} (jp's default)"),
        }
    }

    /// A rule's condition, as written: `/path prefix "src/"`, or what a
    /// catch-all matches.
    fn condition(&self, index: usize, entries: &indexmap::IndexMap<String, Value>) -> String {
        let mut parts = Vec::new();
        if let Some(arg) = entries.get("arg") {
            parts.push(self.value(arg, true));
        }
        for (key, value) in entries {
            if key != "arg" && key != "mode" {
                parts.push(format!("{key} {}", self.value(value, false)));
            }
        }
        match (parts.is_empty(), index) {
            (false, _) => parts.join(" "),
            (true, 0) => "every call".to_owned(),
            (true, _) => "any call no rule before it matches".to_owned(),
        }
    }

    /// A matcher's value (a string quoted unless `bare`), cut when long
    /// and the review is short: `"^(status|diff…" (255 characters)`.
    fn value(&self, value: &Value, bare: bool) -> String {
        let text = match value {
            Value::String(text) => text.clone(),
            other => return other.to_string(),
        };
        let count = text.chars().count();
        let cut = self.short && count > SHORT_VALUE;
        let shown = if cut {
            text.chars().take(SHORT_VALUE).chain(['…']).collect()
        } else {
            text
        };
        let shown = if bare {
            shown
        } else {
            Value::String(shown).to_string()
        };
        if cut {
            format!("{shown} ({count} characters)")
        } else {
            shown
        }
    }
}

fn built_in() -> EffectiveSpec {
    EffectiveSpec {
        spec: PolicySpec::Mode(jp_config::tool::effective::built_in_mode(PolicyField::Run)),
        origin: PolicyOrigin::BuiltIn,
    }
}

/// What a tool runs: its command, the MCP tool it is, or jp itself.
fn runs(name: &str, tool: &ToolConfig) -> String {
    match &tool.source {
        ToolSource::Local => tool.command.as_ref().map_or_else(
            || "nothing of its own (no command)".to_owned(),
            |command| argv(&command.argv()),
        ),
        ToolSource::Builtin => format!("jp's built-in {}", quote(name)),
        ToolSource::Mcp(server) => format!(
            "tool {} of MCP server {}",
            quote(tool.tool.as_deref().unwrap_or(name)),
            quote(server)
        ),
    }
}

/// The fields of a tool other than its command and `run` policy that
/// differ from jp init's, by name.
#[allow(
    clippy::collapsible_match,
    reason = "`policy` is never compared as a whole: its `run` has a line of its own"
)]
fn other_differences(tool: &ToolConfig, default: &ToolConfig) -> Vec<String> {
    let (Ok(Value::Object(now)), Ok(Value::Object(init))) =
        (serde_json::to_value(tool), serde_json::to_value(default))
    else {
        return vec!["(cannot compare)".to_owned()];
    };
    let mut out = Vec::new();
    for (field, value) in &now {
        match field.as_str() {
            "command" | "run" => {}
            "policy" => {
                if value.get("result") != init.get("policy").and_then(|p| p.get("result")) {
                    out.push("policy.result".to_owned());
                }
            }
            _ if init.get(field) != Some(value) => out.push(field.clone()),
            _ => {}
        }
    }
    out
}

/// A program and its arguments, each word bare when it is plain and
/// quoted (with escapes) when it is not, so `sh -c "curl x | sh"` reads as
/// what runs.
#[must_use]
pub fn argv(words: &[String]) -> String {
    if words.is_empty() {
        return "nothing (no command)".to_owned();
    }
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// The variables a sandbox passes from your environment, quoted where
/// they need it; `None` for none.
fn passed(env: &[String]) -> Option<String> {
    (!env.is_empty()).then(|| {
        env.iter()
            .map(|name| quote(name))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("{word:?}")
    }
}

fn lookup<'v>(value: &'v Value, key: &str) -> Option<&'v Value> {
    // Only the first two segments can hold no dot: a tool's or a server's
    // name (the rest) may.
    let mut parts = key.splitn(3, '.');
    let (a, b) = (parts.next()?, parts.next());
    let mut node = value.get(a)?;
    if let Some(b) = b {
        node = node.get(b)?;
    }
    match parts.next() {
        Some(rest)
            if matches!(
                (a, b),
                ("conversation", Some("tools")) | ("providers", Some("mcp" | "llm"))
            ) =>
        {
            node.get(rest)
        }
        Some(rest) => rest.split('.').try_fold(node, |n, k| n.get(k)),
        None => Some(node),
    }
}

/// The config `jp init` writes (its tools), on the built-in defaults.
fn jp_init_config() -> Option<AppConfig> {
    jp_config::load::config_of_toml(&[jp_tools::DEFAULT_TOOLS_TOML]).ok()
}

#[cfg(test)]
#[path = "review_tests.rs"]
mod tests;
