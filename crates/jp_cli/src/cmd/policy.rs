//! `jp policy check`: what would the query loop decide for this call, and
//! why.

use std::process::ExitCode;

use jp_config::load::Loaded;
use jp_config::tool::effective::{PolicyOrigin, effective_policy};
use jp_config::tool::wildcard::wildcard_server;
use jp_config::tool::{DEFAULTS_KEY, offered};
use jp_policy::{PolicyField, StreamingPolicyState, Workspace, ordering_warnings, top_parameter};

use super::format::Format;
use crate::ctx::{Ctx, print_load_error};
use crate::exit;
use crate::query::arguments::parse_arguments;

mod ls;
mod replay;

#[derive(Debug, clap::Subcommand)]
pub enum Policy {
    /// List the tools as they stand in the config, one line each: where
    /// each comes from, its run and result policies in short, and the
    /// stateful policies (`conversation.policies`) that govern it. An
    /// MCP server's `'NAME.*'` entry is listed as written (no server is
    /// started); tools the workspace's config sets but trust leaves out
    /// are named at the end.
    Ls,
    /// Evaluate a tool's policy against arguments, as the query loop would,
    /// and explain the decision: the mode, the rule that matched (or the
    /// implicit fallback), why each earlier rule did not match, and how
    /// soon a streamed call with these arguments would be decided.
    ///
    /// With `--args`, also say what the stateful policies
    /// (`conversation.policies`) would decide for the call now, given what
    /// ran earlier in the conversation.
    ///
    /// Without `--args`, list the policy's rules with the parameter each
    /// one waits for while a call streams, and warn when the tool declares a
    /// long parameter before one the policy needs.
    ///
    /// For an MCP tool (`source = "mcp.NAME"`, or a tool a `'NAME.*'`
    /// entry adds), this starts the MCP servers the config's tools name, as
    /// a query would, to check the arguments against the server's schema
    /// and the policy against its parameters; it stops them before it
    /// exits.
    ///
    /// Exits 0 with a decision, 1 when the config is invalid (or does not
    /// fit an MCP server's tools), 2 when the tool is unknown or the
    /// arguments do not fit it.
    Check {
        /// The tool's name.
        #[arg(add = clap_complete::ArgValueCandidates::new(super::complete::tools))]
        tool: String,
        /// The call's arguments, as a JSON object.
        #[arg(long)]
        args: Option<String>,
        /// Check `policy.result` (how the result reaches the model) instead
        /// of `policy.run`.
        #[arg(long)]
        result: bool,
        /// The conversation whose calls the stateful policies
        /// (`conversation.policies`) judge `--args` by; the active one by
        /// default.
        #[arg(long, value_name = "ID", requires = "args")]
        conversation: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Decide every tool call recorded in a conversation again, without
    /// running anything, under the config as it is and with the `--cfg`
    /// changes given (`--cfg @new.toml`, `--cfg KEY=VALUE`), and list the
    /// calls whose decision would change, then how many changed which way.
    ///
    /// "As it is" is the config a query continuing the conversation would
    /// use without the `--cfg` layers: the files, the environment, and
    /// the config changes the conversation recorded. Each call (but those
    /// of turns taken back) is decided
    /// with the arguments it ran with (the user's edit, if any), as a query
    /// decides it with no one to answer and no session approval, then by
    /// the stateful policies (`conversation.policies`) told the
    /// conversation up to that call. When a call is of an MCP tool, the
    /// config's MCP servers are started to learn their tools, as for `jp
    /// policy check`, and stopped; no tool is called.
    ///
    /// Strictness: unattended < ask < edit < not run (skip, declined by a
    /// stateful policy, refused). Exits 0 when no call would become less
    /// strict, 1 when one would (or may: arguments cut short), 2 when the
    /// replay cannot be made (no such conversation, no `--cfg`, a config
    /// that does not load).
    Replay {
        /// The conversation: its id, a unique start of it, or `last` (the
        /// one with the latest activity); the active one by default.
        #[arg(add = clap_complete::ArgValueCandidates::new(super::complete::conversations))]
        id: Option<String>,
        /// Output format (`json`: every call, decided both ways, and the
        /// counts).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

impl Policy {
    pub fn run(self, ctx: &Ctx) -> Result<ExitCode, crate::error::Error> {
        match self {
            Self::Ls => ls::run(ctx),
            Self::Replay { id, format } => Ok(replay::run(ctx, id, format)),
            Self::Check {
                tool,
                args,
                result,
                conversation,
                format,
            } => {
                let mut loaded = match ctx.load() {
                    Ok(loaded) => loaded,
                    Err(error) => {
                        print_load_error(&error);
                        return Ok(exit::INVALID_CONFIG.into());
                    }
                };
                if let Err(code) = with_mcp_schemas(ctx, &mut loaded, &tool)? {
                    return Ok(code);
                }
                let field = if result {
                    PolicyField::Result
                } else {
                    PolicyField::Run
                };
                match args {
                    Some(args) => {
                        let call = Call {
                            tool: &tool,
                            args: &args,
                            field,
                            conversation: conversation.as_deref(),
                        };
                        check(ctx, &loaded, &call, format)
                    }
                    None => describe(&loaded, &tool, field, format),
                }
            }
        }
    }
}

/// When `tool` is an MCP tool (or may be one a wildcard entry adds),
/// starts the servers the config's tools name, as a query does, to put
/// their schemas into the config ([`crate::mcp::attach`]), and stops them.
/// The exit code when the config does not fit the servers' tools (said on
/// stderr).
fn with_mcp_schemas(
    ctx: &Ctx,
    loaded: &mut Loaded,
    tool: &str,
) -> Result<Result<(), ExitCode>, crate::error::Error> {
    if !is_mcp(loaded, tool) {
        return Ok(Ok(()));
    }
    let attached = crate::mcp::attach_once(ctx, loaded)?;
    Ok(attached.map_err(|message| {
        jp_term::errln!("error: {message}");
        ExitCode::from(exit::INVALID_CONFIG)
    }))
}

/// Whether `tool` is an MCP tool in `loaded`'s config, or may be one a
/// wildcard entry adds (one the config does not name, while it has one).
fn is_mcp(loaded: &Loaded, tool: &str) -> bool {
    let tools = &loaded.config.conversation.tools;
    match tools.get(tool) {
        Some(cfg) => cfg.source.mcp_server().is_some(),
        None => offered(tools).any(|(name, _)| wildcard_server(name).is_some()),
    }
}

fn usage_error(message: &str) -> ExitCode {
    jp_term::errln!("error: {message}");
    exit::USAGE.into()
}

/// The configured tools' names, or the usage error for `tool` unknown.
fn known_tool(loaded: &Loaded, tool: &str) -> Result<(), ExitCode> {
    let known = loaded
        .config
        .conversation
        .tools
        .iter()
        .filter(|(name, cfg)| {
            *name != DEFAULTS_KEY && cfg.is_defined() && wildcard_server(name).is_none()
        })
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>();
    if known.contains(&tool) {
        return Ok(());
    }
    let list = if known.is_empty() {
        "none".to_owned()
    } else {
        known.join(", ")
    };
    Err(usage_error(&format!(
        "unknown tool `{tool}` (configured tools: {list})"
    )))
}

/// `jp policy check TOOL`: the rules, what each waits for while a call
/// streams, and parameter-order warnings.
fn describe(
    loaded: &Loaded,
    tool: &str,
    field: PolicyField,
    format: Format,
) -> Result<ExitCode, crate::error::Error> {
    if let Err(code) = known_tool(loaded, tool) {
        return Ok(code);
    }
    let Some((spec, compiled)) = effective_policy(&loaded.config, tool, field) else {
        return Ok(usage_error(&format!("unknown tool `{tool}`")));
    };
    let Some(policy) = compiled.policy else {
        return Err(crate::error::Error::PolicyDoesNotCompile {
            field: field.to_string(),
            tool: tool.to_owned(),
        });
    };
    let params = &loaded.config.conversation.tools[tool].parameters;
    let warnings = ordering_warnings(&policy, params);
    let key = spec.origin.key().map(ToString::to_string);
    let source = spec
        .origin
        .key()
        .and_then(|k| loaded.source_of(k))
        .map_or_else(|| "default".to_owned(), |layer| layer.label.clone());
    let order: Vec<&str> = params.keys().map(String::as_str).collect();
    match format {
        Format::Json => {
            let rules: Vec<_> = policy
                .rules()
                .iter()
                .map(|rule| {
                    serde_json::json!({
                        "rule": rule.index,
                        "condition": rule.describe(),
                        "mode": rule.mode.as_str(),
                        "waits_for": top_parameter(rule),
                    })
                })
                .collect();
            let out = serde_json::json!({
                "tool": tool,
                "field": field.as_str(),
                "decided_at_start": policy.unconditional_mode().map(jp_policy::Mode::as_str),
                "rules": rules,
                "parameters": order,
                "warnings": warnings,
                "policy": key,
                "source": source,
            });
            jp_term::printer::stdout_json(&serde_json::to_string_pretty(&out)?);
        }
        Format::Text => {
            match policy.unconditional_mode() {
                Some(mode) => {
                    jp_term::outln!(
                        "{tool} {field}: {mode} for every call, decided as the call starts"
                    )
                }
                None => jp_term::outln!("{tool} {field}: decided while the arguments stream"),
            }
            for rule in policy.rules() {
                let waits = top_parameter(rule)
                    .map_or_else(String::new, |top| format!(" (waits for `{top}`)"));
                jp_term::outln!(
                    "  {field}[{}] {}: {}{waits}",
                    rule.index,
                    rule.describe(),
                    rule.mode
                );
            }
            if policy.rules().last().is_some_and(|r| !r.is_catch_all()) {
                jp_term::outln!("  no rule matches: ask");
            }
            jp_term::outln!(
                "  parameters, in schema order (the order models usually send them): {}",
                order.join(", ")
            );
            if let Some(key) = &key {
                jp_term::outln!("  policy: {key} ({source})");
            }
            let stateful = crate::stateful::from_config(&loaded.config)?;
            let governing = stateful.policies_for(tool);
            if !governing.is_empty() {
                jp_term::outln!(
                    "  stateful policies (conversation.policies): {}",
                    governing.join(", ")
                );
            }
            for warning in &warnings {
                jp_term::errln!("warning: {tool}: {warning}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The top-level argument after which a streamed call with `arguments`
/// (in their order) would be decided: `Some(None)` before any argument,
/// `None` only when all of them are in.
fn decided_after(
    policy: &std::sync::Arc<jp_policy::Policy>,
    arguments: &serde_json::Value,
    workspace: &Workspace,
) -> Option<Option<String>> {
    let mut state = StreamingPolicyState::new(policy.clone());
    if state.decision().is_some() {
        return Some(None);
    }
    for (key, value) in arguments.as_object()? {
        if state.parameter_done(key, value, workspace).is_some() {
            return Some(Some(key.clone()));
        }
    }
    None
}

/// What `jp policy check TOOL --args ...` asks about.
struct Call<'a> {
    tool: &'a str,
    args: &'a str,
    field: PolicyField,
    conversation: Option<&'a str>,
}

/// What the stateful policies say about a call in a conversation.
struct Stateful {
    /// The conversation judged by, if there is one.
    conversation: Option<String>,
    /// The policies that govern the tool.
    policies: Vec<String>,
    /// `None` to allow.
    denial: Option<jp_policy::stateful::Denial>,
}

/// The stateful policies' decision for `tool` with `arguments` in the
/// conversation `id` (the active one by default; none yet is an empty
/// conversation).
fn stateful(
    loaded: &Loaded,
    root: &std::path::Path,
    id: Option<&str>,
    tool: &str,
    arguments: &serde_json::Value,
) -> Result<Stateful, crate::error::Error> {
    use jp_policy::stateful::{Call, PolicyContext, PolicyDecision, replay};

    use crate::stateful::{WorkspaceEnv, from_config};

    let store = jp_conversation::Store::new(root);
    let ledger = crate::ledger::Ledger::new(root);
    let id = id
        .map(str::to_owned)
        .or_else(|| crate::conversation::active_id(&store, &ledger));
    let events = match &id {
        Some(id) => {
            let conversation = store.load(id)?;
            crate::conversation::warn_torn(&conversation);
            // Only what this user's jp recorded here counts.
            ledger.our_events(&conversation)
        }
        None => Vec::new(),
    };
    let mut registry = from_config(&loaded.config)?;
    let workspace = Workspace::new(root);
    let env = WorkspaceEnv::new(&loaded.config, &workspace);
    let resolved = &loaded.resolved;
    let ctx = PolicyContext {
        env: &env,
        config: resolved,
        partial: false,
    };
    replay(&mut registry, &events, &ctx);
    let empty = serde_json::Map::new();
    let arguments = arguments.as_object().unwrap_or(&empty);
    let denial = match registry.check_all(&Call { tool, arguments }, &ctx) {
        PolicyDecision::Allow => None,
        PolicyDecision::Deny(denial) => Some(denial),
    };
    Ok(Stateful {
        conversation: id,
        policies: registry
            .policies_for(tool)
            .into_iter()
            .map(str::to_owned)
            .collect(),
        denial,
    })
}

/// `jp policy check TOOL --args ...`: the call's arguments checked, its
/// policy evaluated, and what was found printed in `format`.
fn check(
    ctx: &Ctx,
    loaded: &Loaded,
    call: &Call<'_>,
    format: Format,
) -> Result<ExitCode, crate::error::Error> {
    let Call {
        tool,
        args,
        field,
        conversation,
    } = *call;
    let arguments = match checked_arguments(loaded, tool, args) {
        Ok(arguments) => arguments,
        Err(code) => return Ok(code),
    };
    let Some((spec, compiled)) = effective_policy(&loaded.config, tool, field) else {
        return Ok(usage_error(&format!("unknown tool `{tool}`")));
    };
    let Some(policy) = compiled.policy else {
        // The loader already rejected configs with policy errors.
        return Err(crate::error::Error::PolicyDoesNotCompile {
            field: field.to_string(),
            tool: tool.to_owned(),
        });
    };
    let root = loaded
        .workspace_root
        .clone()
        .unwrap_or_else(|| ctx.cwd.clone());
    let workspace = Workspace::new(&root);
    let decision = policy.evaluate_in(&arguments, &workspace);
    let policy = std::sync::Arc::new(policy);
    // Only `policy.run` is decided while a call streams.
    let streamed =
        (field == PolicyField::Run).then(|| decided_after(&policy, &arguments, &workspace));

    let key = spec.origin.key().map(ToString::to_string);
    let source = spec
        .origin
        .key()
        .and_then(|k| loaded.source_of(k))
        .map_or_else(|| "default".to_owned(), |layer| layer.label.clone());
    // Stateful policies decide whether a call runs, so only for `run`.
    let stateful = if field == PolicyField::Run {
        Some(stateful(loaded, &root, conversation, tool, &arguments)?)
    } else {
        None
    };
    // What the policy says is not all: a call that would run unattended
    // without its kernel sandbox, or that may change something where there
    // is no workspace (crate::place), is asked instead.
    let held = (field == PolicyField::Run && decision.mode == jp_policy::Mode::Unattended)
        .then(|| {
            let place =
                crate::place::Place::find(&ctx.cwd, loaded.workspace_root.clone(), &ctx.env);
            crate::query::tools::judge::unbounded(&loaded.config, &root, tool)
                .map(|why| format!("it would run without a sandbox ({why})"))
                .or_else(|| crate::place::asked_of(&loaded.config, place.ok().as_ref(), tool))
        })
        .flatten();
    let found = Found {
        tool,
        field,
        policy: &policy,
        decision,
        streamed,
        key,
        source,
        stateful,
        held,
    };
    match format {
        Format::Json => found.print_json()?,
        Format::Text if spec.origin == PolicyOrigin::BuiltIn => found.print_built_in(),
        Format::Text => found.print_text(),
    }
    Ok(ExitCode::SUCCESS)
}

/// The `--args` of a check, parsed and fitted to `tool`'s parameters; or,
/// when they cannot be checked (an unknown tool, arguments that do not
/// parse or fit), the usage error, already printed.
fn checked_arguments(
    loaded: &Loaded,
    tool: &str,
    args: &str,
) -> Result<serde_json::Value, ExitCode> {
    known_tool(loaded, tool)?;
    let arguments = match parse_arguments(tool, args) {
        Ok(a) => a,
        Err(e) => return Err(usage_error(&format!("--args: {e}"))),
    };
    let Some(cfg) = loaded.config.conversation.tools.get(tool) else {
        return Err(usage_error(&format!("unknown tool `{tool}`")));
    };
    if let Err(issues) = cfg.check_arguments(&arguments) {
        for issue in &issues {
            jp_term::errln!("error: --args: {issue}");
        }
        return Err(usage_error(&format!(
            "the arguments do not fit `{tool}`'s parameters"
        )));
    }
    Ok(arguments)
}

/// What `jp policy check` found about one call, to print.
struct Found<'a> {
    tool: &'a str,
    field: PolicyField,
    /// The tool's policy for `field`.
    policy: &'a jp_policy::Policy,
    /// What it decided for the call.
    decision: jp_policy::Decision,
    /// For `run` only: when a streamed call would be decided
    /// ([`decided_after`]).
    streamed: Option<Option<Option<String>>>,
    /// The config key the policy is set at; `None` for the built-in one.
    key: Option<String>,
    /// The layer that set it (`default` when none did).
    source: String,
    /// For `run` only: what the stateful policies say.
    stateful: Option<Stateful>,
    /// Why a call the policy runs unattended is asked instead: it would
    /// run without its kernel sandbox, or it may change something where
    /// there is no workspace. Words that follow "but".
    held: Option<String>,
}

impl Found<'_> {
    /// The condition of the rule with index `rule`, as written.
    fn condition(&self, rule: usize) -> String {
        self.policy
            .rules()
            .iter()
            .find(|r| r.index == rule)
            .map_or_else(String::new, jp_policy::Rule::describe)
    }

    /// One JSON document on stdout.
    fn print_json(&self) -> Result<(), serde_json::Error> {
        let Self {
            tool,
            field,
            decision,
            streamed,
            key,
            source,
            stateful,
            ..
        } = self;
        let trace = decision
            .trace
            .iter()
            .map(|t| {
                serde_json::json!({
                    "rule": t.rule,
                    "condition": self.condition(t.rule),
                    "matched": t.matched,
                    "reason": t.reason,
                })
            })
            .collect::<Vec<_>>();
        let mut out = serde_json::json!({
            "tool": tool,
            "field": field.as_str(),
            "mode": decision.mode.as_str(),
            "rule": decision.rule,
            "reason": decision.reason,
            "policy": key,
            "source": source,
            "trace": trace,
        });
        if let Some(stateful) = stateful.as_ref().filter(|s| !s.policies.is_empty()) {
            out["stateful"] = serde_json::json!({
                "conversation": stateful.conversation,
                "policies": stateful.policies,
                "allowed": stateful.denial.is_none(),
                "policy": stateful.denial.as_ref().map(|d| &d.policy),
                "reason": stateful.denial.as_ref().map(|d| &d.reason),
            });
        }
        if let Some(why) = &self.held {
            out["asked_instead"] = serde_json::json!(why);
        }
        if let Some(streamed) = &streamed {
            out["streaming"] = match streamed {
                Some(None) => serde_json::json!({ "decided": "at start" }),
                Some(Some(key)) => serde_json::json!({ "decided": "after", "argument": key }),
                None => serde_json::json!({ "decided": "at the end" }),
            };
        }
        jp_term::printer::stdout_json(&serde_json::to_string_pretty(&out)?);
        Ok(())
    }

    /// For people, when no policy is configured and the built-in default
    /// decided.
    fn print_built_in(&self) {
        let Self {
            tool,
            field,
            decision,
            ..
        } = self;
        jp_term::outln!("{tool} {field}: {}", decision.mode);
        jp_term::outln!(
            "  no {field} is configured for {tool} or '*'; the built-in default is {}",
            decision.mode
        );
        if let Some(stateful) = &self.stateful {
            print_stateful(tool, stateful);
        }
    }

    /// For people: the decision, each rule tried, and where the policy is
    /// set.
    fn print_text(&self) {
        let Self {
            tool,
            field,
            decision,
            streamed,
            key,
            source,
            stateful,
            ..
        } = self;
        let streamed_text = streamed.as_ref().map(|streamed| match streamed {
            Some(None) => "decided as the call starts".to_owned(),
            Some(Some(key)) => format!("decided once `{key}` is complete"),
            None => "decided only when all arguments are in".to_owned(),
        });
        jp_term::outln!("{tool} {field}: {}", decision.mode);
        for t in &decision.trace {
            let verdict = if t.matched { "matches" } else { "no match" };
            let condition = self.condition(t.rule);
            if condition == t.reason {
                jp_term::outln!("  {field}[{}] {condition}: {verdict}", t.rule);
            } else {
                jp_term::outln!("  {field}[{}] {condition}: {verdict}: {}", t.rule, t.reason);
            }
        }
        if decision.rule.is_none() {
            jp_term::outln!("  {}", decision.reason);
        }
        if let Some(why) = &self.held {
            jp_term::outln!("  but {why}: jp asks instead");
        }
        if let Some(text) = &streamed_text {
            jp_term::outln!("  while streaming: {text}");
        }
        if let Some(key) = &key {
            jp_term::outln!("  policy: {key} ({source})");
        }
        if let Some(stateful) = &stateful {
            print_stateful(tool, stateful);
        }
    }
}

fn print_stateful(tool: &str, stateful: &Stateful) {
    if stateful.policies.is_empty() {
        return;
    }
    let within = stateful.conversation.as_ref().map_or_else(
        || "in a new conversation".to_owned(),
        |id| format!("in conversation {id}"),
    );
    match &stateful.denial {
        None => jp_term::outln!(
            "  stateful policies ({}): allow {within}",
            stateful.policies.join(", ")
        ),
        Some(denial) => jp_term::outln!(
            "  stateful policies: {} denies {tool} {within}: {}",
            denial.policy,
            denial.reason
        ),
    }
}
