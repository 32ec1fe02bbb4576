//! Stateful tool policies from config: a `jp_policy` registry from
//! `conversation.policies`, the production [`PolicyEnv`] (keys from the
//! configured tools and the workspace's file system), and
//! [`StatefulPolicies`], one query's registry with what it has learnt. The
//! policies themselves are `jp_policy::stateful`'s; this is the glue that
//! needs both them and the config.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use jp_config::AppConfig;
use jp_config::stateful::{StatefulKind, StatefulPolicyConfig};
use jp_config::tool::{ParamType, offered};
use jp_conversation::{ConversationEvent, ResponseStatus, ToolCallResponse};
use jp_policy::Workspace;
use jp_policy::path::resolve_path;
use jp_policy::pointer::key_target;
use jp_policy::stateful::{
    self, BadGlob, Conditional, Denial, Key, Keyed, PolicyContext, PolicyDecision, PolicyEnv,
    PolicyRegistry, Recording, RegistryError, Sequential, ToolPattern, ToolPolicy,
};
use serde_json::{Map, Value};

/// One query's stateful policies (`conversation.policies`) and what they
/// know of the conversation so far: they check a call before it runs (and
/// while its arguments stream, on what has arrived) and learn from each
/// call that ran. Shared by the calls of a response, hence the lock.
pub struct StatefulPolicies<'a> {
    config: &'a AppConfig,
    workspace: Workspace,
    /// The resolved config as JSON, for the policies' `when`.
    resolved: Value,
    registry: Mutex<PolicyRegistry>,
}

impl<'a> StatefulPolicies<'a> {
    /// No policies: every call is allowed.
    #[must_use]
    pub fn none(config: &'a AppConfig, workspace: Workspace, resolved: Value) -> Self {
        Self {
            config,
            workspace,
            resolved,
            registry: Mutex::new(PolicyRegistry::new()),
        }
    }

    /// `config`'s policies, told `history` (the conversation so far), so
    /// they know what ran before this query.
    ///
    /// # Errors
    ///
    /// When the policies cannot be built (the loader should have refused
    /// them): no tool may run unchecked.
    pub fn replayed(
        config: &'a AppConfig,
        workspace: Workspace,
        resolved: Value,
        history: &[ConversationEvent],
    ) -> Result<Self, SetupError> {
        let mut registry = from_config(config)?;
        let env = WorkspaceEnv::new(config, &workspace);
        let ctx = PolicyContext {
            env: &env,
            config: &resolved,
            partial: false,
        };
        stateful::replay(&mut registry, history, &ctx);
        Ok(Self {
            config,
            workspace,
            resolved,
            registry: Mutex::new(registry),
        })
    }

    /// The resolved config as JSON, as the policies' `when` reads it.
    #[must_use]
    pub fn resolved(&self) -> &Value {
        &self.resolved
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, PolicyRegistry> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the policies say about running `tool` with `arguments` now
    /// (`partial`: only the arguments that have arrived of a call still
    /// streaming; a policy then denies only on what it knows): `None` to
    /// allow, else the denial.
    #[must_use]
    pub fn check(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        partial: bool,
    ) -> Option<Denial> {
        let registry = self.registry();
        if registry.is_empty() {
            return None;
        }
        let env = WorkspaceEnv::new(self.config, &self.workspace);
        let ctx = PolicyContext {
            env: &env,
            config: &self.resolved,
            partial,
        };
        match registry.check_all(&stateful::Call { tool, arguments }, &ctx) {
            PolicyDecision::Allow => None,
            PolicyDecision::Deny(denial) => Some(denial),
        }
    }

    /// Whether a policy governing `tool` checks an argument that has not
    /// arrived yet (`known` gives those that have).
    #[must_use]
    pub fn waits(&self, tool: &str, known: &dyn Fn(&str) -> Option<Value>) -> bool {
        self.registry()
            .waits_for(tool)
            .into_iter()
            .any(|key| known(key).is_none())
    }

    /// Whether a policy governing `tool` checks its argument `key`.
    #[must_use]
    pub fn waits_on(&self, tool: &str, key: &str) -> bool {
        self.registry().waits_for(tool).contains(&key)
    }

    /// Tells the policies how a call that ran ended; only a success
    /// teaches them anything. Returns the keys they took from its
    /// arguments (by pointer), to be stored with the response so a replay
    /// learns exactly this.
    pub fn learn(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        response: &ToolCallResponse,
    ) -> BTreeMap<String, String> {
        let mut registry = self.registry();
        if response.status != ResponseStatus::Success || registry.is_empty() {
            return BTreeMap::new();
        }
        let live = WorkspaceEnv::new(self.config, &self.workspace);
        let env = Recording::new(&live);
        let ctx = PolicyContext {
            env: &env,
            config: &self.resolved,
            partial: false,
        };
        registry.notify_result(&stateful::Call { tool, arguments }, &response.content, &ctx);
        env.into_keys()
    }
}

/// The registry for `config.conversation.policies`, in config order. Each
/// policy is named by its kind, with `#N` (its position) when the kind
/// occurs more than once.
///
/// # Errors
///
/// An entry the loader should have refused (a malformed
/// glob, a missing field): jp refuses to run tools rather than run them
/// unchecked.
pub fn from_config(config: &AppConfig) -> Result<PolicyRegistry, SetupError> {
    from_entries(&config.conversation.policies)
}

/// The registry for these `conversation.policies` entries.
///
/// # Errors
///
/// As [`from_config`].
pub fn from_entries(entries: &[StatefulPolicyConfig]) -> Result<PolicyRegistry, SetupError> {
    let mut registry = PolicyRegistry::new();
    for (index, entry) in entries.iter().enumerate() {
        let repeated = entries
            .iter()
            .filter(|other| other.kind == entry.kind)
            .count()
            > 1;
        let name = if repeated {
            format!("{}#{index}", entry.kind.as_str())
        } else {
            entry.kind.as_str().to_owned()
        };
        let at = |problem| SetupError { index, problem };
        let policy = build(&name, entry).map_err(at)?;
        registry
            .register(policy)
            .map_err(|e| at(Problem::Registry(e)))?;
    }
    Ok(registry)
}

/// A `conversation.policies` entry that cannot be set up (the loader
/// refuses such an entry, so this is a bug): number `index`, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("conversation.policies[{index}]: {problem}")]
pub struct SetupError {
    /// The entry's place in `conversation.policies`.
    pub index: usize,
    /// What is wrong with it.
    pub problem: Problem,
}

/// What is wrong with a `conversation.policies` entry jp cannot set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// Its kind needs a `tool`.
    #[error("it has no `tool`")]
    NoTool,
    /// Its `tool` is no name or glob.
    #[error("its `tool` is not a valid name")]
    BadTool,
    /// Its kind needs a `key`.
    #[error("it has no `key`")]
    NoKey,
    /// A tool pattern in it does not parse.
    #[error(transparent)]
    Glob(#[from] BadGlob),
    /// The registry refused it.
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

fn patterns(list: &[String]) -> Result<Vec<ToolPattern>, Problem> {
    list.iter()
        .map(|s| ToolPattern::parse(s).map_err(Problem::from))
        .collect()
}

fn build(name: &str, entry: &StatefulPolicyConfig) -> Result<Box<dyn ToolPolicy>, Problem> {
    let tool = || {
        entry
            .tool
            .as_deref()
            .ok_or(Problem::NoTool)
            .and_then(|t| ToolPattern::parse(t).map_err(|_| Problem::BadTool))
    };
    let policy: Box<dyn ToolPolicy> = match entry.kind {
        StatefulKind::Sequential => Box::new(Sequential::new(
            name,
            tool()?,
            patterns(&entry.dependencies)?,
        )),
        StatefulKind::Keyed => Box::new(Keyed::new(
            name,
            vec![tool()?],
            patterns(&entry.dependencies)?,
            entry.key_pointer().ok_or(Problem::NoKey)?,
        )),
        StatefulKind::ReadBeforeWrite => Box::new(Keyed::read_before_write(
            name,
            patterns(&entry.read_tools)?,
            patterns(&entry.write_tools)?,
            entry
                .key_pointer()
                .unwrap_or(jp_config::stateful::DEFAULT_PATH_KEY),
        )),
    };
    Ok(match &entry.when {
        Some(when) => Box::new(Conditional::new(policy, when.clone())),
        None => policy,
    })
}

/// Keys from the configured tools' parameters and the workspace's file
/// system.
pub struct WorkspaceEnv<'a> {
    config: &'a AppConfig,
    workspace: &'a Workspace,
}

impl<'a> WorkspaceEnv<'a> {
    /// Keys for `config`'s tools, paths in `workspace`.
    #[must_use]
    pub fn new(config: &'a AppConfig, workspace: &'a Workspace) -> Self {
        Self { config, workspace }
    }
}

impl PolicyEnv for WorkspaceEnv<'_> {
    fn key(&self, tool: &str, pointer: &str, value: &Value) -> Result<Key, String> {
        let kind = offered(&self.config.conversation.tools)
            .find(|(name, _)| name.as_str() == tool)
            .and_then(|(_, cfg)| key_target(pointer, &cfg.parameters).ok())
            .map(|(_, kind)| kind);
        match (kind, value) {
            (Some(ParamType::Path), Value::String(text)) => {
                let forms = resolve_path(text, self.workspace)
                    .map_err(|_| format!("`{pointer}` contains NUL, which no path can hold"))?;
                // The file the tool will reach: links followed. A path
                // that cannot be resolved cannot be tracked, so it is
                // refused rather than guessed.
                let resolved = forms.resolved.map_err(|why| {
                    format!("`{}` cannot be resolved ({why})", forms.lexical.text())
                })?;
                Ok(Key {
                    text: resolved.text(),
                    is_path: true,
                })
            }
            (_, Value::String(text)) => Ok(Key {
                text: text.clone(),
                is_path: false,
            }),
            (_, Value::Number(_) | Value::Bool(_)) => Ok(Key {
                text: value.to_string(),
                is_path: false,
            }),
            _ => Err(format!("`{pointer}` is not a single value")),
        }
    }

    fn file_exists(&self, key: &Key) -> bool {
        let path = Path::new(&key.text);
        let path = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.workspace.resolved_root().join(path)
        };
        // Only "not found" is absent: a file jp cannot inspect may exist,
        // and treating it as new would let a write through unread.
        !matches!(
            self.workspace.links().entry(&path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound
        )
    }
}

#[cfg(test)]
#[path = "stateful_tests.rs"]
mod tests;
#[cfg(test)]
#[path = "stateful/trace_tests.rs"]
mod trace_tests;
