//! Stateful tool policies from config: a `jp_policy` registry from
//! `conversation.policies`, and the production [`PolicyEnv`], keys from the
//! configured tools and the workspace's file system. The policies
//! themselves are `jp_policy::stateful`'s; this is the glue that needs both
//! them and the config.

use std::path::Path;

use jp_config::AppConfig;
use jp_config::stateful::{StatefulKind, StatefulPolicyConfig};
use jp_config::tool::{ParamType, offered};
use jp_policy::Workspace;
use jp_policy::path::resolve_path;
use jp_policy::pointer::key_target;
use jp_policy::stateful::{
    BadGlob, Conditional, Key, Keyed, PolicyEnv, PolicyRegistry, RegistryError, Sequential,
    ToolPattern, ToolPolicy,
};
use serde_json::Value;

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
            std::fs::symlink_metadata(path),
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
