//! Single-key assignments: `--cfg key=value`, `--cfg key:=json` and
//! `JP_CFG_*` environment variables.

use super::parse::deserialize_value;
use crate::app::PartialAppConfig;
use crate::path::{ConfigPath, ConfigPathError};

/// The prefix of environment variables that set config keys.
pub const ENV_PREFIX: &str = "JP_CFG_";

/// One key set to one value.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// The key.
    pub path: ConfigPath,
    /// The value as written.
    pub value: AssignedValue,
}

/// A value as written in an assignment.
#[derive(Debug, Clone, PartialEq)]
pub enum AssignedValue {
    /// `key=value`: a string, or, when the key does not take a string and
    /// the text is valid JSON, that JSON (`max_tokens=1024`,
    /// `show_reasoning=true`).
    Text(String),
    /// `key:=json`: exactly this JSON value.
    Json(serde_json::Value),
}

/// An assignment that cannot be parsed or does not fit its key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssignmentError {
    /// No `=` in the argument.
    #[error("expected `key=value`, `key:=json` or `@file`, found `{0}`")]
    MissingEquals(String),
    /// The key is malformed.
    #[error(transparent)]
    Path(#[from] ConfigPathError),
    /// An environment variable name that is not a key.
    #[error("`{name}` does not name a config key: {reason}")]
    EnvName {
        /// The variable's name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// `key:=` with text that is not JSON.
    #[error("{key}: the value after `:=` is not valid JSON: {error}")]
    Json {
        /// The key.
        key: String,
        /// serde_json's message.
        error: String,
    },
    /// The value does not fit the key.
    #[error("{key}: {message}")]
    Invalid {
        /// The key (deepest part known).
        key: String,
        /// What is wrong.
        message: String,
    },
}

impl Assignment {
    /// Parses `key=value` or `key:=json`. The key may quote segments
    /// (`conversation.tools.'*'.policy.run=ask`).
    ///
    /// # Errors
    ///
    /// When there is no `=`, the key is malformed, or `:=` is followed by
    /// invalid JSON.
    pub fn parse(arg: &str) -> Result<Self, AssignmentError> {
        let eq =
            find_unquoted_eq(arg).ok_or_else(|| AssignmentError::MissingEquals(arg.to_owned()))?;
        let (key, json) = match arg[..eq].strip_suffix(':') {
            Some(key) => (key, true),
            None => (&arg[..eq], false),
        };
        let path = ConfigPath::parse(key)?;
        let text = &arg[eq + 1..];
        let value = if json {
            AssignedValue::Json(
                serde_json::from_str(text).map_err(|e| AssignmentError::Json {
                    key: path.to_string(),
                    error: e.to_string(),
                })?,
            )
        } else {
            AssignedValue::Text(text.to_owned())
        };
        Ok(Self { path, value })
    }

    /// Reads `JP_CFG_<KEY>=value`: the key's segments are separated by `__`
    /// and lowercased (`JP_CFG_ASSISTANT__MODEL__ID` is
    /// `assistant.model.id`; `JP_CFG_CONVERSATION__TOOLS__FS_READ_FILE__RUN`
    /// is `conversation.tools.fs_read_file.run`).
    ///
    /// # Errors
    ///
    /// When the name has no key or an empty segment.
    pub fn from_env(name: &str, value: &str) -> Result<Self, AssignmentError> {
        let err = |reason| AssignmentError::EnvName {
            name: name.to_owned(),
            reason,
        };
        let key = name
            .strip_prefix(ENV_PREFIX)
            .ok_or_else(|| err("it does not start with JP_CFG_"))?;
        if key.is_empty() {
            return Err(err("nothing follows JP_CFG_"));
        }
        let segments = key.split("__").map(str::to_lowercase).collect::<Vec<_>>();
        if segments.iter().any(String::is_empty) {
            return Err(err("a segment between `__` separators is empty"));
        }
        Ok(Self {
            path: ConfigPath::from_segments(segments),
            value: AssignedValue::Text(value.to_owned()),
        })
    }

    /// The values this assignment may mean, in the order to try them: for
    /// `key=text`, the string, then the JSON the text parses as (when it is
    /// not a string); for `key:=json`, the JSON.
    #[must_use]
    pub fn candidates(&self) -> Vec<serde_json::Value> {
        match &self.value {
            AssignedValue::Json(value) => vec![value.clone()],
            AssignedValue::Text(text) => {
                let mut c = vec![serde_json::Value::String(text.clone())];
                if let Ok(json) = serde_json::from_str::<serde_json::Value>(text)
                    && !json.is_string()
                    && !json.is_null()
                {
                    c.push(json);
                }
                c
            }
        }
    }

    /// The partial config this assignment stands for, and its raw JSON.
    ///
    /// # Errors
    ///
    /// When the key does not exist or the value does not fit it.
    pub fn to_partial(&self) -> Result<(PartialAppConfig, serde_json::Value), AssignmentError> {
        if self.value == AssignedValue::Json(serde_json::Value::Null) {
            // A null would deserialize as "not set" and silently do nothing.
            return Err(AssignmentError::Invalid {
                key: self.path.to_string(),
                message:
                    "null cannot be assigned; to unset a key, remove it from the file that sets it"
                        .into(),
            });
        }
        let mut last = None;
        for candidate in self.candidates() {
            let raw = self.path.wrap(candidate);
            match deserialize_value(&raw) {
                Ok(partial) => return Ok((partial, raw)),
                Err(diagnostic) => last = Some(diagnostic),
            }
        }
        let diagnostic = last
            .unwrap_or_else(|| crate::diagnostic::Diagnostic::error(None, "no value to assign"));
        Err(AssignmentError::Invalid {
            key: diagnostic.key.unwrap_or_else(|| self.path.to_string()),
            message: diagnostic.message,
        })
    }
}

/// The byte offset of the first `=` outside quotes.
fn find_unquoted_eq(arg: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in arg.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '=') => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
#[path = "assign_tests.rs"]
mod tests;
