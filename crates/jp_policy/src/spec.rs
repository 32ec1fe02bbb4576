//! The config-file form of a policy: a [`Mode`] string or a list of rules
//! ([`PolicySpec`], [`RuleSpec`]), and the field it is written in
//! ([`PolicyField`]).

use std::fmt;

use indexmap::IndexMap;
use schematic::Schematic;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// What jp does with a tool call (`policy.run`) or its result
/// (`policy.result`).
///
/// The variants are declared in strictness order (architecture decision 5):
/// `unattended` < `ask` < `edit` < `skip`, so `Ord` picks the strictest of
/// several decisions with `max`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Schematic,
)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Run the tool (or deliver its result) without asking.
    Unattended,
    /// Ask the user first. Without a terminal to ask on, the call is declined.
    Ask,
    /// Open the arguments (or the result) in an editor first. Without a
    /// terminal, the call is declined.
    Edit,
    /// Do not run the tool (or do not deliver its result); the model is told
    /// it was skipped.
    Skip,
}

impl Mode {
    /// Every mode, in strictness order.
    pub const ALL: [Self; 4] = [Self::Unattended, Self::Ask, Self::Edit, Self::Skip];

    /// The name used in config files (`"unattended"`, `"ask"`, ...).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Unattended => "unattended",
            Self::Ask => "ask",
            Self::Edit => "edit",
            Self::Skip => "skip",
        }
    }

    /// Parses a mode name as written in config.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which policy field a rule belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyField {
    /// `policy.run`: whether to ask before running the tool.
    Run,
    /// `policy.result`: how the result reaches the model.
    Result,
}

impl PolicyField {
    /// The field's name in config (`"run"` or `"result"`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Result => "result",
        }
    }
}

impl fmt::Display for PolicyField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "policy.{}", self.as_str())
    }
}

/// `policy.run` or `policy.result` as written: a mode, or a list of rules.
///
/// A mode string is shorthand for a single catch-all rule: `run = "ask"` is
/// `run = [{ mode = "ask" }]`.
#[derive(Debug, Clone, PartialEq, Serialize, Schematic)]
#[serde(untagged)]
pub enum PolicySpec {
    /// One mode for every call: `run = "ask"`.
    Mode(Mode),
    /// Rules tried in order; the first one that matches decides.
    Rules(Vec<RuleSpec>),
}

impl<'de> Deserialize<'de> for PolicySpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SpecVisitor;

        impl<'de> Visitor<'de> for SpecVisitor {
            type Value = PolicySpec;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a mode (\"unattended\", \"ask\", \"edit\" or \"skip\") or an array of rules",
                )
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<PolicySpec, E> {
                Mode::from_name(v).map(PolicySpec::Mode).ok_or_else(|| {
                    E::custom(format!(
                        "unknown mode `{v}`, expected `unattended`, `ask`, `edit` or `skip`"
                    ))
                })
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PolicySpec, A::Error> {
                let mut rules = Vec::new();
                while let Some(rule) = seq.next_element::<RuleSpec>()? {
                    rules.push(rule);
                }
                Ok(PolicySpec::Rules(rules))
            }
        }

        deserializer.deserialize_any(SpecVisitor)
    }
}

/// One rule exactly as written in config: a table of keys to values.
///
/// The keys a rule may have are `arg` (a JSON pointer into the tool's
/// parameters), `mode`, and at most one matcher: `const`, `enum`, `pattern`,
/// `prefix`, `minimum`, `maximum`, `exclusive_minimum` or
/// `exclusive_maximum`. A rule without `arg` and matcher is a catch-all.
/// Nothing is checked while parsing; the policy compiler checks every rule
/// against the tool's parameters and names the rule in its errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RuleSpec(pub IndexMap<String, serde_json::Value>);

impl RuleSpec {
    /// The rule's keys and values, in the order written.
    #[must_use]
    pub fn entries(&self) -> &IndexMap<String, serde_json::Value> {
        &self.0
    }
}

impl Schematic for RuleSpec {
    fn schema_name() -> Option<String> {
        Some("PolicyRule".into())
    }

    fn build_schema(schema: schematic::SchemaBuilder) -> schematic::Schema {
        RuleShape::build_schema(schema)
    }
}

/// The documented shape of a rule, used only to describe rules in the JSON
/// Schema of the config file (`jp config schema`).
#[allow(dead_code, reason = "only its schema is used")]
#[derive(Deserialize, Schematic)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
struct RuleShape {
    /// A JSON pointer (RFC 6901) to the argument the rule looks at, such as
    /// `/path` or `/patterns/paths`. Where the tool's parameters have an
    /// array, the pointer goes through every element. Leave out `arg` and
    /// the matcher for a catch-all rule.
    arg: Option<String>,
    /// The mode to use when this rule is the first that matches.
    mode: Mode,
    /// Matches when the argument equals this value (numbers compare
    /// numerically: `1` equals `1.0`).
    #[serde(rename = "const")]
    constant: Option<serde_json::Value>,
    /// Matches when the argument equals one of these values.
    #[serde(rename = "enum")]
    enumeration: Option<Vec<serde_json::Value>>,
    /// For strings and paths: matches when this regular expression (Rust
    /// `regex` syntax, unanchored) finds a match in the argument.
    pattern: Option<String>,
    /// For paths: matches the path and everything below it, per component
    /// (`src/` matches `src/lib.rs` but not `src-old/x`). For strings: a
    /// plain prefix.
    prefix: Option<String>,
    /// For numbers: matches when the argument is at least this value.
    minimum: Option<f64>,
    /// For numbers: matches when the argument is at most this value.
    maximum: Option<f64>,
    /// For numbers: matches when the argument is greater than this value.
    exclusive_minimum: Option<f64>,
    /// For numbers: matches when the argument is less than this value.
    exclusive_maximum: Option<f64>,
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
