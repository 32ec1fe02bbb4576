//! A tool's effective policy: its own `policy.run`, the deprecated top-level
//! `run`, the `'*'` default, or the built-in default, in that order.

use jp_policy::{Compiled, Mode, Policy, PolicyField, PolicySpec, RuleOrigin};

use crate::app::AppConfig;
use crate::path::ConfigPath;
use crate::tool::DEFAULTS_KEY;
use crate::tool::wildcard::wildcard_name;

/// Where a tool's effective policy is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyOrigin {
    /// The tool's own `policy.run`/`policy.result`, or its deprecated
    /// top-level `run`/`result`; the key says which.
    Tool(ConfigPath),
    /// The `'*'` entry's policy; the key says which field.
    Defaults(ConfigPath),
    /// Nothing is configured: `run` asks, `result` is delivered.
    BuiltIn,
}

impl PolicyOrigin {
    /// The config key the policy is written at, if any.
    #[must_use]
    pub fn key(&self) -> Option<&ConfigPath> {
        match self {
            Self::Tool(key) | Self::Defaults(key) => Some(key),
            Self::BuiltIn => None,
        }
    }
}

/// The policy spec that applies to one field of one tool, before
/// compilation.
#[derive(Debug, Clone, PartialEq)]
pub struct EffectiveSpec {
    /// The spec.
    pub spec: PolicySpec,
    /// Where it is written.
    pub origin: PolicyOrigin,
}

/// The built-in mode of a field when nothing is configured: calls are asked
/// about, results are delivered.
#[must_use]
pub const fn built_in_mode(field: PolicyField) -> Mode {
    match field {
        PolicyField::Run => Mode::Ask,
        PolicyField::Result => Mode::Unattended,
    }
}

fn tool_key(tool: &str) -> ConfigPath {
    ConfigPath::from_segments(["conversation", "tools", tool])
}

/// The spec written for `field` in the entry `name` itself (`'*'` or a
/// tool), without falling back: `policy.<field>`, else the deprecated
/// top-level `<field>`. The origin is `Defaults` for `'*'`.
#[must_use]
pub fn written_spec(config: &AppConfig, name: &str, field: PolicyField) -> Option<EffectiveSpec> {
    let cfg = config.conversation.tools.get(name)?;
    let (policy, legacy) = match field {
        PolicyField::Run => (&cfg.policy.run, &cfg.run),
        PolicyField::Result => (&cfg.policy.result, &cfg.result),
    };
    // The loader folds legacy fields into `policy.*` per layer (and warns
    // where a layer has both); the fallback serves configs built in code.
    let base = tool_key(name);
    let (spec, key) = match (policy, legacy) {
        (Some(spec), _) => (spec.clone(), base.join("policy").join(field.as_str())),
        (None, Some(spec)) => (spec.clone(), base.join(field.as_str())),
        (None, None) => return None,
    };
    let origin = if name == DEFAULTS_KEY {
        PolicyOrigin::Defaults(key)
    } else {
        PolicyOrigin::Tool(key)
    };
    Some(EffectiveSpec { spec, origin })
}

/// Picks the spec that applies to `field` of `tool` (not the `'*'` entry):
/// the tool's own, else (for an MCP tool) its server's wildcard entry's
/// (`'git.*'`), else the `'*'` entry's, else the built-in mode.
#[must_use]
pub fn effective_spec(config: &AppConfig, tool: &str, field: PolicyField) -> EffectiveSpec {
    let wildcard = config
        .conversation
        .tools
        .get(tool)
        .and_then(|cfg| cfg.source.mcp_server())
        .map(wildcard_name)
        .filter(|wildcard| wildcard != tool);
    written_spec(config, tool, field)
        .or_else(|| written_spec(config, wildcard.as_deref()?, field))
        .or_else(|| written_spec(config, DEFAULTS_KEY, field))
        .unwrap_or_else(|| EffectiveSpec {
            spec: PolicySpec::Mode(built_in_mode(field)),
            origin: PolicyOrigin::BuiltIn,
        })
}

/// Compiles the effective policy of `field` for `tool` against the tool's
/// parameters. `None` when the tool is not configured.
#[must_use]
pub fn effective_policy(
    config: &AppConfig,
    tool: &str,
    field: PolicyField,
) -> Option<(EffectiveSpec, Compiled)> {
    let cfg = config.conversation.tools.get(tool)?;
    let spec = effective_spec(config, tool, field);
    let origin = match spec.origin {
        PolicyOrigin::Defaults(_) => RuleOrigin::Defaults,
        PolicyOrigin::Tool(_) | PolicyOrigin::BuiltIn => RuleOrigin::Tool,
    };
    let compiled = Policy::compile(&spec.spec, field, origin, &cfg.parameters);
    Some((spec, compiled))
}
