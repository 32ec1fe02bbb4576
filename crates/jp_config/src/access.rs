//! `conversation.tools.NAME.access.config`: which parts of jp's config a
//! tool may read and change (RFD 078, architecture decisions 9 and 10).
//!
//! ```toml
//! [[conversation.tools.change_model.access.config]]
//! path = "assistant.model"
//! read = true
//! write = true
//! apply = "ask"
//! ```
//!
//! A tool has no access to config unless a rule grants it. For a config
//! path, the rule whose `path` is the longest prefix of it (by segment, so
//! `assistant.model` does not cover `assistant.models`) decides, in full:
//! rules are self-contained, nothing is inherited from a shorter one. `*`
//! matches one segment, and only where the config has a map (checked at
//! load). Of two rules of one length, the one with a literal segment where
//! the other has `*` (first difference from the left) is the more
//! specific.
//!
//! Some paths are sensitive ([`SENSITIVE`]): a tool that could set or
//! remove them could widen its own access, change what runs, or hide what
//! runs. Setting one needs `write = "insecure_allow"` on the deciding rule
//! and removing one `delete = "insecure_allow"`; `true` on a rule that
//! would reach one is a config error, and a `true` grant on an ancestor
//! (say `conversation.tools`) never reaches a sensitive path below it. A
//! removal takes everything below its path with it, so it is allowed only
//! when every part of what it removes may be removed: removing
//! `conversation.tools.x` removes `conversation.tools.x.policy` too.

use std::fmt;

use schematic::{Schema, SchemaBuilder, Schematic};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::path::ConfigPath;

/// Config paths a tool may set only with `write = "insecure_allow"` and
/// remove only with `delete = "insecure_allow"` (architecture decision 10;
/// `*` is one segment). `conversation.policies` (the stateful policies)
/// and a tool's `parameters` (which its policies read) are here too:
/// changing them changes what is allowed to run; and so are a tool's
/// `enable` and `style.hidden`, which turn a tool on or hide its calls
/// from the screen, and the `style.tool_call` keys that hide or shorten
/// what a call shows; `assistant.instruction_files`, whose files' text
/// is sent to the provider; and `hooks`, which run programs around calls
/// and decide whether calls run.
pub const SENSITIVE: &[&str] = &[
    "conversation.tools.*.access",
    "conversation.tools.*.command",
    "conversation.tools.*.source",
    "conversation.tools.*.tool",
    "conversation.tools.*.run",
    "conversation.tools.*.result",
    "conversation.tools.*.policy",
    "conversation.tools.*.enable",
    "conversation.tools.*.parameters",
    "conversation.tools.*.options",
    "conversation.tools.*.style.hidden",
    "style.tool_call.show_arguments",
    "style.tool_call.argument_lines",
    "style.tool_call.call_lines",
    "conversation.policies",
    "conversation.sandbox",
    "conversation.tools.*.sandbox",
    "providers.*.*.base_url",
    "providers.*.*.api_key_env",
    "providers.llm.custom.*.base_url",
    "providers.llm.custom.*.api_key_env",
    "providers.mcp",
    "assistant.instruction_files",
    "hooks",
    "extends",
];

/// Config paths no grant reaches, not even `"insecure_allow"`: what bounds
/// the processes jp starts (their `sandbox`, see `docs/sandbox.md`). A tool
/// can never loosen a sandbox, its own or another's. They are
/// [`SENSITIVE`] too, so an untrusted workspace's are held.
pub const SEALED: &[&str] = &[
    "conversation.sandbox",
    "conversation.tools.*.sandbox",
    "providers.mcp.*.sandbox",
];

/// The sealed pattern `path` is at or under, if any.
#[must_use]
pub fn sealed(path: &ConfigPath) -> Option<&'static str> {
    SEALED
        .iter()
        .copied()
        .find(|s| prefix_matches(pattern(s).segments(), path.segments()))
}

/// A tool's access to jp's resources.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Schematic)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct AccessConfig {
    /// Rules granting access to config paths (RFD 078); none means no
    /// access.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<ConfigGrant>,
}

/// One `access.config` rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Schematic)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct ConfigGrant {
    /// The config path the rule covers, with everything below it, such as
    /// `assistant.model`; `*` stands for any one key of a map
    /// (`conversation.tools.*.enable`).
    pub path: String,
    /// The tool receives the current values in its request
    /// (`context.config`).
    #[serde(default)]
    pub read: bool,
    /// The tool may set values (`config` in its outcome): `true`, or
    /// `"insecure_allow"`, needed for sensitive paths.
    #[serde(default)]
    pub write: Write,
    /// The tool may remove values (`unset` in its outcome), and replace
    /// whole lists: `true`, or `"insecure_allow"`, needed for sensitive
    /// paths.
    #[serde(default)]
    pub delete: Delete,
    /// Whether jp asks you before applying a change: `"ask"` (the default)
    /// or `"unattended"`.
    #[serde(default)]
    pub apply: Apply,
}

/// `write` or `delete`: no, yes, or yes even where the path is sensitive.
/// Written `false`, `true` or `"insecure_allow"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    /// `false`: not granted.
    #[default]
    Denied,
    /// `true`: granted, except on sensitive paths.
    Allowed,
    /// `"insecure_allow"`: granted, sensitive paths included.
    InsecureAllow,
}

/// `write`: a [`Permission`] to set values.
pub type Write = Permission;

/// `delete`: a [`Permission`] to remove values.
pub type Delete = Permission;

impl Permission {
    /// Whether it grants anything (`true` or `"insecure_allow"`).
    #[must_use]
    pub fn granted(self) -> bool {
        self != Self::Denied
    }

    /// Whether it grants acting where the path is sensitive or not, as
    /// `sensitive` says.
    #[must_use]
    pub fn reaches(self, sensitive: bool) -> bool {
        match self {
            Self::Denied => false,
            Self::Allowed => !sensitive,
            Self::InsecureAllow => true,
        }
    }
}

impl From<bool> for Permission {
    fn from(granted: bool) -> Self {
        if granted { Self::Allowed } else { Self::Denied }
    }
}

impl Serialize for Permission {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Denied => serializer.serialize_bool(false),
            Self::Allowed => serializer.serialize_bool(true),
            Self::InsecureAllow => serializer.serialize_str("insecure_allow"),
        }
    }
}

impl<'de> Deserialize<'de> for Permission {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = Permission;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("true, false or \"insecure_allow\"")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Permission, E> {
                Ok(Permission::from(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Permission, E> {
                if v == "insecure_allow" {
                    Ok(Permission::InsecureAllow)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl Schematic for Permission {
    fn schema_name() -> Option<String> {
        Some("Permission".into())
    }

    fn build_schema(mut schema: SchemaBuilder) -> Schema {
        schema.set_description(
            "`true`, `false`, or `\"insecure_allow\"` (needed where the path is sensitive).",
        );
        schema.enumerable(schematic::schema::EnumType::new([
            schematic::schema::LiteralValue::Bool(false),
            schematic::schema::LiteralValue::Bool(true),
            schematic::schema::LiteralValue::String("insecure_allow".into()),
        ]))
    }
}

/// `apply`: whether a change is put to the user first.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Schematic,
)]
#[serde(rename_all = "snake_case")]
pub enum Apply {
    /// Ask before applying (without a terminal, the change is rejected).
    #[default]
    Ask,
    /// Apply without asking.
    Unattended,
}

/// Whether `pattern` (with `*` segments) matches the first
/// `pattern.len()` segments of `path`.
fn prefix_matches(pattern: &[String], path: &[String]) -> bool {
    pattern.len() <= path.len() && pattern.iter().zip(path).all(|(p, s)| p == "*" || p == s)
}

fn pattern(text: &str) -> ConfigPath {
    ConfigPath::from_segments(text.split('.'))
}

/// The sensitive pattern `path` is at or under, if any.
#[must_use]
pub fn sensitive(path: &ConfigPath) -> Option<&'static str> {
    SENSITIVE
        .iter()
        .copied()
        .find(|s| prefix_matches(pattern(s).segments(), path.segments()))
}

/// The most general path at or below both `a` and `b` (patterns, `*` for
/// any key), if there is one: a literal wins over `*`, the longer one
/// gives the rest.
fn meet(a: &[String], b: &[String]) -> Option<Vec<String>> {
    (0..a.len().max(b.len()))
        .map(|i| match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) if x == "*" => Some(y.clone()),
            (Some(x), Some(y)) if y == "*" || x == y => Some(x.clone()),
            (Some(_), Some(_)) | (None, None) => None,
            (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        })
        .collect()
}

/// The sensitive pattern a rule at `rule` (itself a pattern) reaches, if
/// any: one it is at or under, or one its own wildcards reach at its
/// depth or deeper. An ancestor of a sensitive path does not reach it.
#[must_use]
pub fn reaches_sensitive(rule: &ConfigPath) -> Option<&'static str> {
    SENSITIVE.iter().copied().find(|s| {
        let s = pattern(s);
        s.segments().len() <= rule.segments().len()
            && s.segments()
                .iter()
                .zip(rule.segments())
                .all(|(a, b)| a == "*" || b == "*" || a == b)
    })
}

/// A tool's grants, parsed, for deciding about concrete config paths.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    rules: Vec<(ConfigPath, ConfigGrant)>,
}

/// What a tool may do at one config path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Read its value.
    pub read: bool,
    /// Set it; `false` also when the path is sensitive and the rule does
    /// not say `"insecure_allow"`.
    pub write: bool,
    /// Unset it, with everything below it ([`Grants::removal`]); `false`
    /// also when a sensitive part of it is not granted with
    /// `"insecure_allow"`.
    pub delete: bool,
    /// Ask before applying a change.
    pub apply: Apply,
}

/// The part of a removal the tool may not remove ([`Grants::check_removal`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemovalDenied {
    /// The part, the removed path itself or a path below it (`*` where it
    /// stands for any key).
    pub at: ConfigPath,
    /// The sensitive pattern it is at or under, if any.
    pub sensitive: Option<&'static str>,
    /// Whether it is (or holds) a sealed path ([`SEALED`]), which no grant
    /// reaches.
    pub sealed: bool,
}

impl Capabilities {
    const NONE: Self = Self {
        read: false,
        write: false,
        delete: false,
        apply: Apply::Ask,
    };
}

impl Grants {
    /// The grants of `rules`. A rule whose `path` does not parse is left
    /// out (the loader refuses such configs).
    #[must_use]
    pub fn new(rules: &[ConfigGrant]) -> Self {
        Self {
            rules: rules
                .iter()
                .filter_map(|rule| {
                    ConfigPath::parse(&rule.path)
                        .ok()
                        .map(|path| (path, rule.clone()))
                })
                .collect(),
        }
    }

    /// Whether there are no rules (the tool has no config access).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rule that decides about `path`: the longest matching prefix;
    /// of equal length, a literal segment beats `*` at the first
    /// difference.
    #[must_use]
    pub fn rule_for(&self, path: &ConfigPath) -> Option<&ConfigGrant> {
        self.rules
            .iter()
            .filter(|(rule, _)| prefix_matches(rule.segments(), path.segments()))
            .max_by(|(a, _), (b, _)| {
                a.segments().len().cmp(&b.segments().len()).then_with(|| {
                    // At the first difference, the literal is the more
                    // specific (greater).
                    a.segments()
                        .iter()
                        .zip(b.segments())
                        .find(|(x, y)| x != y)
                        .map_or(std::cmp::Ordering::Equal, |(x, y)| {
                            (x != "*").cmp(&(y != "*"))
                        })
                })
            })
            .map(|(_, grant)| grant)
    }

    /// What the tool may do at `path`.
    #[must_use]
    pub fn capabilities(&self, path: &ConfigPath) -> Capabilities {
        let Some(rule) = self.rule_for(path) else {
            return Capabilities::NONE;
        };
        Capabilities {
            read: rule.read,
            write: sealed(path).is_none() && rule.write.reaches(sensitive(path).is_some()),
            delete: self.removal(path).is_some(),
            apply: rule.apply,
        }
    }

    /// Whether the tool may remove `path` with everything below it, and if
    /// so whether to ask first (`Ask` when any rule deciding about a part
    /// of what goes says so). Every part needs `delete` on the rule that
    /// decides about it, `"insecure_allow"` where the part is sensitive:
    /// removing `conversation.tools.x` removes `conversation.tools.x.policy`
    /// too, so a `true` grant on `conversation` does not allow it.
    ///
    /// The parts checked stand for every part of the removal: `path`
    /// itself, and where it meets each rule below it and each sensitive
    /// pattern (and both). Anywhere else in it, the same rule decides and
    /// the path is as sensitive as at one of those.
    #[must_use]
    pub fn removal(&self, path: &ConfigPath) -> Option<Apply> {
        self.check_removal(path).ok()
    }

    /// [`Grants::removal`], saying which part may not go.
    ///
    /// # Errors
    ///
    /// The first part of the removal that no rule lets the tool remove.
    pub fn check_removal(&self, path: &ConfigPath) -> Result<Apply, RemovalDenied> {
        let at = path.segments();
        let mut bases = vec![at.to_vec()];
        bases.extend(
            self.rules
                .iter()
                .filter(|(rule, _)| rule.segments().len() > at.len())
                .filter_map(|(rule, _)| meet(rule.segments(), at)),
        );
        let mut points = bases.clone();
        for pattern in SENSITIVE.iter().map(|s| self::pattern(s)) {
            points.extend(bases.iter().filter_map(|b| meet(pattern.segments(), b)));
        }
        // What is sealed may not go, nor what holds `conversation.sandbox`;
        // a whole tool or server may (its process goes with it).
        if let Some(sealed) = sealed(path).or_else(|| {
            SEALED
                .iter()
                .copied()
                .find(|s| !s.contains('*') && self::pattern(s).segments().starts_with(at))
        }) {
            return Err(RemovalDenied {
                at: path.clone(),
                sensitive: Some(sealed),
                sealed: true,
            });
        }
        let mut apply = Apply::Unattended;
        for point in points {
            let point = ConfigPath::from_segments(point);
            let sensitive = sensitive(&point);
            match self.rule_for(&point) {
                Some(rule) if rule.delete.reaches(sensitive.is_some()) => {
                    apply = apply.min(rule.apply);
                }
                _ => {
                    return Err(RemovalDenied {
                        at: point,
                        sensitive,
                        sealed: false,
                    });
                }
            }
        }
        Ok(apply)
    }

    /// The part of `config` (the resolved config, as JSON) the tool may
    /// read, as a tree of the same shape: what goes in its request's
    /// `context.config`. `None` when it may read nothing.
    #[must_use]
    pub fn readable(&self, config: &Value) -> Option<Value> {
        if !self.rules.iter().any(|(_, rule)| rule.read) {
            return None;
        }
        let mut at = Vec::new();
        self.readable_at(config, &mut at)
    }

    fn readable_at(&self, value: &Value, at: &mut Vec<String>) -> Option<Value> {
        // A rule below here may say otherwise, so an object is walked;
        // anything else is read as a whole.
        let deeper = self.rules.iter().any(|(rule, _)| {
            rule.segments().len() > at.len() && prefix_matches(&rule.segments()[..at.len()], at)
        });
        match value {
            Value::Object(map) if deeper => {
                let mut out = Map::new();
                for (key, child) in map {
                    at.push(key.clone());
                    if let Some(child) = self.readable_at(child, at) {
                        out.insert(key.clone(), child);
                    }
                    at.pop();
                }
                (!out.is_empty()).then_some(Value::Object(out))
            }
            _ => {
                let path = ConfigPath::from_segments(at.iter().cloned());
                self.rule_for(&path)
                    .is_some_and(|rule| rule.read)
                    .then(|| value.clone())
            }
        }
    }
}

/// Why a path names nothing in the config schema, in the user's terms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaPathError {
    /// `*` where the keys are fixed.
    #[error(
        "`*` stands for any key of a map, and {here} has fixed keys ({keys}); name the one you mean"
    )]
    WildcardOnFixedKeys {
        /// Where: `the config root` or a quoted key.
        here: String,
        /// The keys there are, sorted and listed.
        keys: String,
    },
    /// A key that is not there.
    #[error("{here} has no key `{segment}` (its keys: {keys})")]
    NoSuchKey {
        /// Where: `the config root` or a quoted key.
        here: String,
        /// The key named.
        segment: String,
        /// The keys there are, sorted and listed.
        keys: String,
    },
    /// A key below a value that has none.
    #[error("{here} is a single value; nothing is below it")]
    SingleValue {
        /// The quoted key.
        here: String,
    },
}

/// Checks a rule's path against the config schema (`schema`, as
/// `jp config schema` prints it): every segment must be a key the config
/// has, and `*` may stand only where it has a map.
///
/// # Errors
///
/// What is wrong, in the user's terms.
pub fn check_path(path: &ConfigPath, schema: &Value) -> Result<(), SchemaPathError> {
    schema_at(path, schema).map(|_| ())
}

/// The schema of the value at `path` (with `*` for any map key), as
/// [`check_path`] checks it.
///
/// # Errors
///
/// What is wrong with `path`, in the user's terms.
pub fn schema_at<'a>(path: &ConfigPath, schema: &'a Value) -> Result<&'a Value, SchemaPathError> {
    let mut node = resolve(schema, schema);
    let mut walked: Vec<&str> = Vec::new();
    for segment in path.segments() {
        let here = if walked.is_empty() {
            "the config root".to_owned()
        } else {
            format!("`{}`", walked.join("."))
        };
        if let Some(props) = node.get("properties").and_then(Value::as_object) {
            if segment == "*" {
                let mut keys: Vec<&str> = props.keys().map(String::as_str).collect();
                keys.sort_unstable();
                return Err(SchemaPathError::WildcardOnFixedKeys {
                    here,
                    keys: keys.join(", "),
                });
            }
            let Some(next) = props.get(segment) else {
                let mut keys: Vec<&str> = props.keys().map(String::as_str).collect();
                keys.sort_unstable();
                return Err(SchemaPathError::NoSuchKey {
                    here,
                    segment: segment.clone(),
                    keys: keys.join(", "),
                });
            };
            node = resolve(next, schema);
        } else if let Some(items) = node.get("additionalProperties").filter(|v| v.is_object()) {
            node = resolve(items, schema);
        } else {
            return Err(SchemaPathError::SingleValue { here });
        }
        walked.push(segment);
    }
    Ok(node)
}

/// Follows `$ref`, `allOf` and the non-null branch of `anyOf`.
fn resolve<'a>(node: &'a Value, schema: &'a Value) -> &'a Value {
    let mut node = node;
    for _ in 0..16 {
        if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
            let Some(name) = reference.strip_prefix("#/definitions/") else {
                return node;
            };
            match schema.get("definitions").and_then(|d| d.get(name)) {
                Some(next) => node = next,
                None => return node,
            }
        } else if let Some(first) = node
            .get("allOf")
            .and_then(Value::as_array)
            .and_then(|all| all.first())
        {
            node = first;
        } else if let Some(branch) = node.get("anyOf").and_then(Value::as_array).and_then(|any| {
            any.iter()
                .find(|b| b.get("type").and_then(Value::as_str) != Some("null"))
        }) {
            node = branch;
        } else {
            return node;
        }
    }
    node
}

#[cfg(test)]
#[path = "access_tests.rs"]
mod tests;
