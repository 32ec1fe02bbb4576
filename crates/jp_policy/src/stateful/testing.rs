//! Test doubles for the stateful policies, for this crate's tests and
//! (with the `testing` feature) `jp_cli`'s, which build registries from
//! config: keys from a file system made of a set ([`FakeEnv`]), and a
//! registry to check calls against ([`Harness`]).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::{
    Call, Key, Keyed, PolicyContext, PolicyDecision, PolicyEnv, PolicyRegistry, ToolPattern,
    ToolPolicy,
};

/// Keys: `/path` values are normalized lexically (`./a`, `a`, `b/../a` are
/// one key); the files that exist are listed.
pub struct FakeEnv {
    /// The files that exist, as keys.
    pub files: BTreeSet<String>,
}

impl FakeEnv {
    /// The files `files` exist.
    #[must_use]
    pub fn with(files: &[&str]) -> Self {
        Self {
            files: files.iter().map(|f| (*f).to_owned()).collect(),
        }
    }
}

fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.join("/")
}

impl PolicyEnv for FakeEnv {
    fn key(&self, _tool: &str, pointer: &str, value: &Value) -> Result<Key, String> {
        match value {
            Value::String(s) if pointer == "/path" => {
                if s.contains('\0') {
                    return Err("`/path` contains NUL, which no path can hold".into());
                }
                Ok(Key {
                    text: normalize(s),
                    is_path: true,
                })
            }
            Value::String(s) => Ok(Key {
                text: s.clone(),
                is_path: false,
            }),
            other => Ok(Key {
                text: other.to_string(),
                is_path: false,
            }),
        }
    }

    fn file_exists(&self, key: &Key) -> bool {
        self.files.contains(&key.text)
    }
}

/// Tool patterns from names and globs.
#[must_use]
pub fn pats(list: &[&str]) -> Vec<ToolPattern> {
    list.iter()
        .map(|p| ToolPattern::parse(p).unwrap())
        .collect()
}

/// A JSON object's members.
#[must_use]
pub fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("not an object"),
    }
}

/// `read_before_write`: `fs_read_file` reads; `fs_modify_file` and
/// `fs_create_file` write; the key is `/path`.
#[must_use]
pub fn rbw() -> Box<dyn ToolPolicy> {
    Box::new(Keyed::read_before_write(
        "read_before_write",
        pats(&["fs_read_file"]),
        pats(&["fs_modify_file", "fs_create_file"]),
        "/path",
    ))
}

/// A registry with a [`FakeEnv`] and a resolved config.
pub struct Harness {
    /// The policies.
    pub registry: PolicyRegistry,
    /// Keys and the files that exist.
    pub env: FakeEnv,
    /// The resolved config, for `when` conditions.
    pub config: Value,
}

impl Harness {
    /// `policies`, registered in order; `files` exist; the config is
    /// `{"mode": "strict"}`.
    #[must_use]
    pub fn new(policies: Vec<Box<dyn ToolPolicy>>, files: &[&str]) -> Self {
        let mut registry = PolicyRegistry::new();
        for policy in policies {
            registry.register(policy).unwrap();
        }
        Self {
            registry,
            env: FakeEnv::with(files),
            config: json!({ "mode": "strict" }),
        }
    }

    /// The context of a check of complete arguments.
    #[must_use]
    pub fn ctx(&self) -> PolicyContext<'_> {
        PolicyContext {
            env: &self.env,
            config: &self.config,
            partial: false,
        }
    }

    /// Checks a call: `Err("POLICY: REASON")` when it is denied.
    ///
    /// # Errors
    ///
    /// When a policy denies the call.
    pub fn check(&self, tool: &str, arguments: Value) -> Result<(), String> {
        let arguments = args(arguments);
        match self.registry.check_all(
            &Call {
                tool,
                arguments: &arguments,
            },
            &self.ctx(),
        ) {
            PolicyDecision::Allow => Ok(()),
            PolicyDecision::Deny(d) => Err(format!("{}: {}", d.policy, d.reason)),
        }
    }

    /// Tells the registry that a call succeeded.
    pub fn succeed(&mut self, tool: &str, arguments: Value) {
        let arguments = args(arguments);
        let ctx = PolicyContext {
            env: &self.env,
            config: &self.config,
            partial: false,
        };
        self.registry.notify_result(
            &Call {
                tool,
                arguments: &arguments,
            },
            "ok",
            &ctx,
        );
    }
}
