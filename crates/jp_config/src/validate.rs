//! Checks on the merged config that types alone cannot express: model ids,
//! ranges, the `'*'` tool entry, tool definitions, and every tool's
//! policies (RFD D25, architecture decisions 2-4).

mod conversation;
mod mcp_servers;
mod model;
mod parameters;
mod policies;

use model::{check_model, list};
pub use model::{resolve_model_id, unknown_model};

use std::collections::{BTreeMap, HashSet};

use jp_policy::{Compiled, Policy, PolicyField, PolicySpec, RuleOrigin};

use crate::app::AppConfig;
use crate::diagnostic::{Diagnostic, key_with_indices};
use crate::path::ConfigPath;
use crate::providers::{BUILT_IN, WireApi};
use crate::tool::effective::{EffectiveSpec, PolicyOrigin, effective_policy, written_spec};
use crate::tool::wildcard::wildcard_server;
use crate::tool::{DEFAULTS_KEY, ToolConfig, ToolParameters, ToolSource};

/// Why a model id names no model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelIdError {
    /// Neither `provider/name` nor an alias.
    #[error("`{id}` is neither `provider/name` nor an alias (aliases: {aliases})")]
    NotAnId {
        /// The id as written.
        id: String,
        /// The aliases there are, listed (`none` for none).
        aliases: String,
    },
    /// A provider jp does not know.
    #[error("unknown provider `{provider}` in `{target}` (providers: {known})")]
    UnknownProvider {
        /// The provider named.
        provider: String,
        /// The id, after aliases.
        target: String,
        /// The providers there are, listed: the built-in ones, then
        /// `providers.llm.custom`'s.
        known: String,
    },
    /// Nothing after the `/`.
    #[error("`{target}` has no model name after `/`")]
    NoName {
        /// The id, after aliases.
        target: String,
    },
}

/// A problem, with the key it is about (the loader adds file and line).
#[derive(Debug, Clone)]
pub struct Problem {
    /// The key, as structural segments (array positions as numbers).
    pub path: Option<ConfigPath>,
    /// The problem.
    pub diagnostic: Diagnostic,
    /// Other keys the problem involves (the other entries of a dependency
    /// cycle). The loader adds them to the message as each layer writes
    /// them, since a merged list's index is not where a user finds an
    /// entry.
    pub related: Vec<ConfigPath>,
}

impl Problem {
    /// An error about the key at `path`.
    pub fn error(path: ConfigPath, message: impl Into<String>) -> Self {
        Self {
            diagnostic: Diagnostic::error(Some(key_with_indices(&path)), message),
            path: Some(path),
            related: Vec::new(),
        }
    }

    fn warning(path: ConfigPath, message: impl Into<String>) -> Self {
        Self {
            diagnostic: Diagnostic::warning(Some(key_with_indices(&path)), message),
            path: Some(path),
            related: Vec::new(),
        }
    }
}

fn key(path: &str) -> ConfigPath {
    ConfigPath::from_segments(path.split('.'))
}

/// Whether the parameters of MCP tools are known yet.
///
/// An MCP tool's parameters come from its server's `tools/list`, which jp
/// reads only when a query (or `jp mcp`) starts the server. Until then,
/// what depends on them (a rule's `arg`, a stateful policy's `key`, which
/// default rules apply to some tool) cannot be checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpSchemas {
    /// The servers have not been asked: MCP tools hold only what the
    /// config adds to their parameters.
    Pending,
    /// The servers' schemas are merged into the tools' parameters.
    Known,
}

/// Every problem in a merged config, errors and warnings, with the
/// parameters of MCP tools not yet known.
#[must_use]
pub fn validate(config: &AppConfig) -> Vec<Problem> {
    validate_with(config, McpSchemas::Pending)
}

/// Every problem in a merged config, with MCP tools' parameters as
/// `schemas` says.
#[must_use]
pub fn validate_with(config: &AppConfig, schemas: McpSchemas) -> Vec<Problem> {
    let mut problems = Vec::new();
    check_model(config, &mut problems);
    check_parameters(config, &mut problems);
    check_providers(config, &mut problems);
    let mut servers = Vec::new();
    mcp_servers::check_mcp_servers(config, &mut servers);
    problems.extend(
        servers
            .into_iter()
            .map(|(path, message)| Problem::error(path, message)),
    );
    check_tools(config, schemas, &mut problems);
    check_stateful(config, schemas, &mut problems);
    check_sandboxes(config, &mut problems);
    problems.extend(
        conversation::check(&config.conversation)
            .into_iter()
            .map(|(path, message)| Problem::error(path, message)),
    );
    // A default rule is checked once per tool; say each thing once.
    let mut seen = HashSet::new();
    problems.retain(|p| seen.insert(p.diagnostic.clone()));
    problems
}

/// What only the config as written can get wrong, not the config a query
/// built from it: an MCP tool given a `parameters_schema` (a query puts
/// its server's there, so a config checked mid-query has one).
#[must_use]
pub fn validate_written(config: &AppConfig) -> Vec<Problem> {
    config
        .conversation
        .tools
        .iter()
        .filter(|(_, cfg)| cfg.source.mcp_server().is_some() && cfg.parameters_schema.is_some())
        .map(|(name, _)| {
            Problem::error(
                ConfigPath::from_segments(["conversation", "tools", name, "parameters_schema"]),
                "only a local tool takes a schema; an MCP tool's comes from its server (`parameters` adds to it)",
            )
        })
        .collect()
}

/// Every `sandbox`: the variables `env` passes are names of variables.
fn check_sandboxes(config: &AppConfig, problems: &mut Vec<Problem>) {
    if config.conversation.sandbox.none {
        problems.push(Problem::error(
            key("conversation.sandbox.none"),
            "cannot be set for every tool; set `sandbox.none` on the one tool or MCP server that must run without a sandbox (each of its calls is then asked)",
        ));
    }
    let conversation = std::iter::once((
        ConfigPath::from_segments(["conversation", "sandbox"]),
        &config.conversation.sandbox,
    ));
    let tools = config.conversation.tools.iter().map(|(name, tool)| {
        (
            ConfigPath::from_segments(["conversation", "tools", name, "sandbox"]),
            &tool.sandbox,
        )
    });
    let servers = config.providers.mcp.iter().map(|(name, server)| {
        (
            ConfigPath::from_segments(["providers", "mcp", name, "sandbox"]),
            &server.sandbox,
        )
    });
    for (path, sandbox) in conversation.chain(tools).chain(servers) {
        for (index, name) in sandbox.env.iter().enumerate() {
            if !crate::sandbox::is_env_name(name) {
                problems.push(Problem::error(
                    path.join("env").join(index.to_string()),
                    format!(
                        "`{}` is not an environment variable's name (letters, digits and `_`, not starting with a digit)",
                        name.escape_debug()
                    ),
                ));
            }
        }
        let paths = (sandbox
            .write
            .iter()
            .enumerate()
            .map(|(i, p)| ("write", i, p)))
        .chain(
            sandbox
                .deny_read
                .iter()
                .enumerate()
                .map(|(i, p)| ("deny_read", i, p)),
        );
        for (list, index, path_text) in paths {
            if !(path_text.starts_with('/') || path_text.starts_with("~/")) {
                problems.push(Problem::error(
                    path.join(list).join(index.to_string()),
                    format!(
                        "`{}` must be an absolute path or start with `~/`",
                        path_text.escape_debug()
                    ),
                ));
            }
        }
    }
}

fn check_parameters(config: &AppConfig, problems: &mut Vec<Problem>) {
    let params = &config.assistant.model.parameters;
    if params.max_tokens == 0 {
        problems.push(Problem::error(
            key("assistant.model.parameters.max_tokens"),
            "must be at least 1",
        ));
    }
    let mut range = |name: &str, value: Option<f64>, max: f64| {
        if let Some(v) = value
            && (!v.is_finite() || !(0.0..=max).contains(&v))
        {
            problems.push(Problem::error(
                key("assistant.model.parameters").join(name),
                format!("must be a number from 0 to {max}, found {v}"),
            ));
        }
    };
    range("temperature", params.temperature, 2.0);
    range("top_p", params.top_p, 1.0);
}

fn check_providers(config: &AppConfig, problems: &mut Vec<Problem>) {
    let llm = &config.providers.llm;
    for (name, custom) in &llm.custom {
        let path = key("providers.llm.custom").join(name.clone());
        if BUILT_IN.contains(&name.as_str()) {
            problems.push(Problem::error(
                path.clone(),
                format!("`{name}` is a built-in provider; set providers.llm.{name} instead, or give this one a name of its own"),
            ));
        } else if name.is_empty() || name.contains(['/', ' ']) {
            problems.push(Problem::error(
                path.clone(),
                format!("{name:?} cannot name a provider: a name goes before `/` in model ids (`{name}/MODEL`), so it must be non-empty, without `/` or spaces"),
            ));
        }
        if custom.base_url.is_empty() {
            problems.push(Problem::error(
                path.clone().join("base_url"),
                "is not set: where the server is reached (`http://localhost:1234/v1` for an OpenAI-compatible server on this machine)",
            ));
            continue;
        }
        let keyless = matches!(custom.wire, WireApi::OpenaiChat | WireApi::Ollama);
        if custom.api_key_env.is_none() && !keyless && custom.wire != WireApi::Scripted {
            problems.push(Problem::error(
                path.clone().join("api_key_env"),
                "a provider speaking this wire API needs an API key: name the environment variable that holds it",
            ));
        }
        if custom.wire == WireApi::Scripted {
            problems.push(Problem::error(
                path.join("wire"),
                "`scripted` is jp's own offline provider, not a wire API a server speaks (openai_chat, openai_responses, anthropic, ollama, google)",
            ));
        }
    }
    for endpoint in llm.endpoints() {
        if endpoint.wire == WireApi::Scripted || endpoint.base_url.is_empty() {
            // Not set: said above.
            continue;
        }
        let place = if BUILT_IN.contains(&endpoint.name) {
            key("providers.llm").join(endpoint.name)
        } else {
            key("providers.llm.custom").join(endpoint.name)
        };
        let url = endpoint.base_url;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            problems.push(Problem::error(
                place.clone().join("base_url"),
                format!("`{url}` is not an http:// or https:// URL"),
            ));
        }
        let models = endpoint
            .models
            .map(crate::models::check)
            .unwrap_or_default();
        for problem in models {
            let mut path = place.clone().join("models").join(problem.model);
            for segment in problem.field.split('.') {
                path = path.join(segment);
            }
            problems.push(Problem::error(path, problem.message));
        }
    }
}

/// Issues already reported for the `'*'` rules on their own: the field,
/// the rule and the message.
type Reported = HashSet<(&'static str, Option<usize>, String)>;

/// For each default rule (field and index): how many tools it applied to.
type DefaultRuleUses = BTreeMap<(&'static str, usize), usize>;

/// Whether the policies of tool `cfg` can be checked now: not those of an
/// MCP tool before its server's schema is known.
fn schema_known(cfg: &ToolConfig, schemas: McpSchemas) -> bool {
    schemas == McpSchemas::Known || cfg.source.mcp_server().is_none()
}

fn check_tools(config: &AppConfig, schemas: McpSchemas, problems: &mut Vec<Problem>) {
    let tools = &config.conversation.tools;
    for (name, tool) in tools {
        check_tool_entry(name, tool, problems);
    }
    if let Some(defaults) = tools.get(DEFAULTS_KEY) {
        check_defaults_entry(defaults, problems);
    }

    let (reported, default_keys) = check_default_policies(config, problems);

    let mut default_rule_uses = DefaultRuleUses::new();
    let mut checked_tools = 0usize;
    for (name, cfg) in tools {
        if name == DEFAULTS_KEY {
            continue;
        }
        // A wildcard's policies are checked on the tools it adds, once the
        // server's tools are known.
        if check_tool(config, name, cfg, problems)
            && schema_known(cfg, schemas)
            && wildcard_server(name).is_none()
        {
            checked_tools += 1;
            check_tool_policies(config, name, &reported, &mut default_rule_uses, problems);
        }
    }

    // A default rule may be meant for an MCP tool's parameter, which is
    // not known yet.
    let pending = tools
        .values()
        .any(|cfg| cfg.is_defined() && !schema_known(cfg, schemas));
    if checked_tools > 0 && !pending {
        check_unused_default_rules(config, &default_keys, default_rule_uses, problems);
    }
}

/// Any entry of `conversation.tools`, `'*'` included: its name, and the
/// limits that must be at least 1.
fn check_tool_entry(name: &str, tool: &ToolConfig, problems: &mut Vec<Problem>) {
    let base = ConfigPath::from_segments(["conversation", "tools", name]);
    let valid_name = name.len() <= 64
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if let Some(server) = wildcard_server(name) {
        check_wildcard_entry(name, server, tool, problems);
    } else if name != DEFAULTS_KEY && !valid_name {
        problems.push(Problem::error(
            base.clone(),
            "a tool name may hold only letters, digits, `_` and `-`, at most 64 of them (providers refuse other names)",
        ));
    }
    for (field, value) in [
        ("timeout_secs", tool.timeout_secs),
        ("max_output_bytes", tool.max_output_bytes),
        ("max_argument_bytes", tool.max_argument_bytes),
    ] {
        if value == Some(0) {
            problems.push(Problem::error(base.join(field), "must be at least 1"));
        }
    }
}

/// A wildcard entry (`'git.*'`) stands for every tool of the server it
/// names, so it names that server as its `source`, and sets nothing that
/// is one tool's own.
fn check_wildcard_entry(name: &str, server: &str, tool: &ToolConfig, problems: &mut Vec<Problem>) {
    let base = ConfigPath::from_segments(["conversation", "tools", name]);
    if tool.source.mcp_server() != Some(server) {
        problems.push(Problem::error(
            base.join("source"),
            format!(
                "`'{name}'` stands for every tool of MCP server `{server}`, so its source is `mcp.{server}` (set `source = \"mcp.{server}\"`)"
            ),
        ));
    }
    let own = [
        ("tool", tool.tool.is_some()),
        ("command", tool.command.is_some()),
        ("summary", tool.summary.is_some()),
        ("description", tool.description.is_some()),
        ("parameters", !tool.parameters.is_empty()),
        ("options", !tool.options.is_empty()),
        (
            "access",
            tool.access != crate::access::AccessConfig::default(),
        ),
    ];
    for (field, set) in own {
        if set {
            problems.push(Problem::error(
                base.join(field),
                format!(
                    "cannot be set for all of a server's tools; give the tool an entry of its own (`source = \"mcp.{server}\"`, `tool = \"NAME\"`) and set it there"
                ),
            ));
        }
    }
}

/// The `'*'` rules on their own (no parameters: every rule with an `arg`
/// is skipped), so their structural problems are reported once, and even
/// when no tool is configured. Per-tool checks add what depends on each
/// tool's parameters. Returns what was reported, and the key each
/// field's defaults are written at.
fn check_default_policies(
    config: &AppConfig,
    problems: &mut Vec<Problem>,
) -> (Reported, BTreeMap<&'static str, ConfigPath>) {
    let mut reported = Reported::new();
    let mut default_keys = BTreeMap::new();
    for field in [PolicyField::Run, PolicyField::Result] {
        let Some(spec) = written_spec(config, DEFAULTS_KEY, field) else {
            continue;
        };
        if let Some(key) = spec.origin.key() {
            default_keys.insert(field.as_str(), key.clone());
        }
        let compiled = Policy::compile(
            &spec.spec,
            field,
            RuleOrigin::Defaults,
            &ToolParameters::new(),
        );
        for issue in compiled.errors.iter().chain(&compiled.warnings) {
            reported.insert((field.as_str(), issue.rule, issue.message.clone()));
        }
        push_issues(problems, &spec, &compiled, "", &HashSet::new());
    }
    (reported, default_keys)
}

/// A tool's definition: that it is one, its command, parameters and
/// grants. Returns whether the tool is defined (its policies are checked
/// only then).
fn check_tool(
    config: &AppConfig,
    name: &str,
    cfg: &ToolConfig,
    problems: &mut Vec<Problem>,
) -> bool {
    let base = ConfigPath::from_segments(["conversation", "tools", name]);
    check_tool_source(config, &base, cfg, problems);
    if !cfg.is_defined() {
        // Unless it may be the settings of a tool an MCP wildcard entry
        // offers (a server's tools are known only once it runs, and
        // `jp config` starts none): those apply once the query knows them.
        let wildcard = config
            .conversation
            .tools
            .iter()
            .any(|(name, tool)| wildcard_server(name).is_some() && tool.enable);
        if !wildcard {
            problems.push(Problem::warning(
                base,
                "has no `command` or `parameters`, so no tool by this name is defined; its settings are unused",
            ));
        }
        return false;
    }
    if cfg.source == ToolSource::Local && cfg.command.as_ref().is_none_or(|c| c.argv().is_empty()) {
        problems.push(Problem::error(
            base.join("command"),
            "a local tool needs a `command` to run",
        ));
    }
    match &cfg.parameters_schema {
        // The parameters are the schema's (and what the config adds to
        // them), which the schema's validator checks.
        Some(schema) => parameters::check_parameters_schema(&base, cfg, schema, problems),
        None => {
            for (param, p) in &cfg.parameters {
                parameters::check_parameter(
                    &base.join("parameters").join(param.clone()),
                    p,
                    problems,
                );
            }
        }
    }
    check_grants(name, &base, &cfg.access, problems);
    true
}

/// An MCP tool names a configured server and has no `command`; only an
/// MCP tool has a `tool`.
fn check_tool_source(
    config: &AppConfig,
    base: &ConfigPath,
    cfg: &ToolConfig,
    problems: &mut Vec<Problem>,
) {
    let Some(server) = cfg.source.mcp_server() else {
        if cfg.tool.is_some() {
            problems.push(Problem::error(
                base.join("tool"),
                format!(
                    "only an MCP tool (`source = \"mcp.NAME\"`) has a `tool`; this one's source is `{}`",
                    cfg.source
                ),
            ));
        }
        return;
    };
    if !config.providers.mcp.contains_key(server) {
        problems.push(Problem::error(
            base.join("source"),
            format!(
                "names the MCP server `{server}`, which is not configured: add `[providers.mcp.{server}]` with its `command` or `url` (servers: {})",
                list(config.providers.mcp.keys())
            ),
        ));
    }
    if cfg.command.is_some() {
        problems.push(Problem::error(
            base.join("command"),
            format!(
                "an MCP tool runs on its server (`providers.mcp.{server}.command`), not on a `command` of its own"
            ),
        ));
    }
    if cfg.tool.as_deref() == Some("") {
        problems.push(Problem::error(
            base.join("tool"),
            "must name the server's tool, or be left out to use the name the tool is configured under",
        ));
    }
    if !cfg.sandbox.is_empty() {
        problems.push(Problem::error(
            base.join("sandbox"),
            format!(
                "an MCP tool runs in its server's process: set `providers.mcp.{server}.sandbox` instead"
            ),
        ));
    }
}

/// A tool's effective policies against its parameters, counting which
/// default rules applied to it; issues already reported for `'*'` alone
/// are not repeated.
fn check_tool_policies(
    config: &AppConfig,
    name: &str,
    reported: &Reported,
    default_rule_uses: &mut DefaultRuleUses,
    problems: &mut Vec<Problem>,
) {
    for field in [PolicyField::Run, PolicyField::Result] {
        let Some((spec, compiled)) = effective_policy(config, name, field) else {
            continue;
        };
        if spec.origin == PolicyOrigin::BuiltIn {
            continue;
        }
        let for_tool = match spec.origin {
            PolicyOrigin::Defaults(_) => format!(" (in tool `{name}`)"),
            _ => String::new(),
        };
        let rule_count = match &spec.spec {
            PolicySpec::Rules(rules) => rules.len(),
            PolicySpec::Mode(_) => 0,
        };
        if matches!(spec.origin, PolicyOrigin::Defaults(_)) {
            for index in 0..rule_count {
                if !compiled.skipped.contains(&index) {
                    *default_rule_uses
                        .entry((field.as_str(), index))
                        .or_default() += 1;
                } else {
                    default_rule_uses
                        .entry((field.as_str(), index))
                        .or_default();
                }
            }
        }
        let skip = reported
            .iter()
            .filter(|(f, _, _)| *f == field.as_str())
            .map(|(_, rule, message)| (*rule, message.clone()))
            .collect();
        push_issues(problems, &spec, &compiled, &for_tool, &skip);
    }
}

/// A default rule that applied to no configured tool: a warning, or an
/// error for a rule stricter than unattended.
fn check_unused_default_rules(
    config: &AppConfig,
    default_keys: &BTreeMap<&'static str, ConfigPath>,
    default_rule_uses: DefaultRuleUses,
    problems: &mut Vec<Problem>,
) {
    for ((field, index), uses) in default_rule_uses {
        if let Some(key) = default_keys.get(field)
            && uses == 0
        {
            // A stricter default that applies nowhere is likely a typo in
            // `arg` that quietly leaves every call to the rules after it.
            let strict = written_spec(config, DEFAULTS_KEY, PolicyField::Run)
                .filter(|_| field == "run")
                .or_else(|| {
                    written_spec(config, DEFAULTS_KEY, PolicyField::Result)
                        .filter(|_| field == "result")
                })
                .and_then(|spec| match spec.spec {
                    PolicySpec::Rules(rules) => rules.get(index).cloned(),
                    PolicySpec::Mode(_) => None,
                })
                .and_then(|rule| rule.entries().get("mode").cloned())
                .is_some_and(|mode| mode != "unattended");
            let message = "its `arg` is a parameter of no configured tool, so it never applies";
            let path = key.join(index.to_string());
            problems.push(if strict {
                Problem::error(path, format!("{message}; a rule stricter than unattended that applies nowhere is taken for a typo"))
            } else {
                Problem::warning(path, message)
            });
        }
    }
}

/// A tool's `access.config` rules (RFD 078): paths the config has, `*`
/// only on maps, one rule per path, and `write = true` or `delete = true`
/// never where it would reach a sensitive path (architecture decision 10).
fn check_grants(
    tool: &str,
    base: &ConfigPath,
    access: &crate::access::AccessConfig,
    problems: &mut Vec<Problem>,
) {
    use crate::access::{Permission, check_path, reaches_sensitive};
    let schema = match crate::schema::config_schema() {
        Ok(schema) => schema,
        Err(error) => {
            problems.push(Problem::error(base.join("access"), error.to_string()));
            return;
        }
    };
    let mut seen: Vec<ConfigPath> = Vec::new();
    for (index, grant) in access.config.iter().enumerate() {
        let at = base.join("access").join("config").join(index.to_string());
        // Quoted, `'*'` names the defaults entry of `conversation.tools`;
        // a grant path cannot tell it from the wildcard, so it is refused
        // rather than read as "every tool".
        if grant.path.contains("'*'") || grant.path.contains("\"*\"") {
            problems.push(Problem::error(
                at.join("path"),
                format!(
                    "`{}`: a grant cannot name the defaults entry `'*'` (it would read as any key); write `*` for any key",
                    grant.path
                ),
            ));
            continue;
        }
        let path = match ConfigPath::parse(&grant.path) {
            Ok(path) => path,
            Err(e) => {
                problems.push(Problem::error(at.join("path"), e.to_string()));
                continue;
            }
        };
        if let Err(message) = check_path(&path, schema) {
            problems.push(Problem::error(
                at.join("path"),
                format!("`{}`: {message}", grant.path),
            ));
            continue;
        }
        if seen.contains(&path) {
            problems.push(Problem::error(
                at.join("path"),
                format!(
                    "another rule of tool `{tool}` has the path `{}`; one rule per path",
                    grant.path
                ),
            ));
        }
        if let Some(sealed) = crate::access::sealed(&path)
            && (grant.write.granted() || grant.delete.granted())
        {
            problems.push(Problem::error(
                at.join("path"),
                format!(
                    "tool `{tool}` is granted changes to `{}`, a sandbox ({sealed}): no grant reaches a sandbox, a tool can never loosen one",
                    grant.path
                ),
            ));
        }
        for (field, granted) in [("write", grant.write), ("delete", grant.delete)] {
            if granted == Permission::Allowed
                && let Some(sensitive) = reaches_sensitive(&path)
            {
                problems.push(Problem::error(
                    at.join(field),
                    format!(
                        "tool `{tool}` grants {field} = true to `{}`, which reaches the sensitive path `{sensitive}`; use {field} = \"insecure_allow\" to acknowledge this grant",
                        grant.path
                    ),
                ));
            }
        }
        seen.push(path);
    }
}

/// `conversation.policies` (the stateful policies), each problem keyed at
/// its entry and field (the index is the merged list's; the loader turns
/// it into the index in the file the entry is in).
fn check_stateful(config: &AppConfig, schemas: McpSchemas, problems: &mut Vec<Problem>) {
    let entry = |index: usize| key("conversation.policies").join(index.to_string());
    for problem in policies::check(config, |cfg| schema_known(cfg, schemas)) {
        let mut path = entry(problem.index);
        for segment in problem.field.into_iter().flat_map(|f| f.split('.')) {
            path = path.join(segment);
        }
        let mut placed = if problem.error {
            Problem::error(path, problem.message)
        } else {
            Problem::warning(path, problem.message)
        };
        placed.related = problem.related.into_iter().map(entry).collect();
        problems.push(placed);
    }
}

/// Adds a compiled policy's errors and warnings, keyed at the rule they are
/// about, except those in `skip` (already reported for `'*'` alone).
fn push_issues(
    problems: &mut Vec<Problem>,
    spec: &EffectiveSpec,
    compiled: &Compiled,
    suffix: &str,
    skip: &HashSet<(Option<usize>, String)>,
) {
    let Some(origin_key) = spec.origin.key() else {
        return;
    };
    let is_rules = matches!(spec.spec, PolicySpec::Rules(_));
    for (issues, is_error) in [(&compiled.errors, true), (&compiled.warnings, false)] {
        for issue in issues {
            if skip.contains(&(issue.rule, issue.message.clone())) {
                continue;
            }
            let path = match issue.rule {
                Some(rule) if is_rules => origin_key.join(rule.to_string()),
                _ => origin_key.clone(),
            };
            let message = format!("{}{suffix}", issue.message);
            problems.push(if is_error {
                Problem::error(path, message)
            } else {
                Problem::warning(path, message)
            });
        }
    }
}

fn check_defaults_entry(defaults: &ToolConfig, problems: &mut Vec<Problem>) {
    let base = ConfigPath::from_segments(["conversation", "tools", DEFAULTS_KEY]);
    let mut not_here = |field: &str| {
        problems.push(Problem::error(
            base.join(field),
            "cannot be set for all tools; `'*'` takes only enable, policy, run, result, style, timeout_secs, max_output_bytes and max_argument_bytes",
        ));
    };
    if defaults.source != ToolSource::Local {
        not_here("source");
    }
    if defaults.command.is_some() {
        not_here("command");
    }
    if defaults.summary.is_some() {
        not_here("summary");
    }
    if defaults.description.is_some() {
        not_here("description");
    }
    if !defaults.parameters.is_empty() {
        not_here("parameters");
    }
    if defaults.parameters_schema.is_some() {
        not_here("parameters_schema");
    }
    if !defaults.options.is_empty() {
        not_here("options");
    }
    if defaults.access != crate::access::AccessConfig::default() {
        not_here("access");
    }
    if !defaults.sandbox.is_empty() {
        problems.push(Problem::error(
            base.join("sandbox"),
            "cannot be set for all tools here; `conversation.sandbox` is every tool's (and every MCP server's)",
        ));
    }
}
