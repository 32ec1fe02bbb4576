//! Single-key assignments: `--cfg key=value`, `--cfg key:=json` and
//! `JP_CFG_*` environment variables.

use crate::app::PartialAppConfig;
use crate::path::{ConfigPath, ConfigPathError};

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
            .strip_prefix(super::ENV_PREFIX)
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
            match super::deserialize_value(&raw) {
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
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn text_falls_back_to_json_for_typed_keys() {
        let a = Assignment::parse("assistant.model.parameters.max_tokens=1024").unwrap();
        let (partial, _) = a.to_partial().unwrap();
        let tokens = partial
            .assistant
            .unwrap()
            .model
            .unwrap()
            .parameters
            .unwrap()
            .max_tokens;
        assert_eq!(tokens, Some(1024));

        // A string key keeps text that looks like a number.
        let a = Assignment::parse("assistant.model.id=123").unwrap();
        let (partial, _) = a.to_partial().unwrap();
        assert_eq!(
            partial.assistant.unwrap().model.unwrap().id.as_deref(),
            Some("123")
        );
    }

    #[test]
    fn errors_name_the_key() {
        let err = Assignment::parse("assistant.model.parameters.max_tokens=lots")
            .unwrap()
            .to_partial()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "assistant.model.parameters.max_tokens: invalid type: string \"lots\", expected u32"
        );
        let err = Assignment::parse("assistant.modle.id=x")
            .unwrap()
            .to_partial()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "assistant.modle: unknown field `modle`, expected one of `system_prompt`, `instructions`, `model`"
        );
        assert_eq!(
            Assignment::parse("style.color").unwrap_err().to_string(),
            "expected `key=value`, `key:=json` or `@file`, found `style.color`"
        );
    }

    #[test]
    fn null_is_never_a_silent_no_op() {
        let err = Assignment::parse("style.color:=null")
            .unwrap()
            .to_partial()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "style.color: null cannot be assigned; to unset a key, remove it from the file that sets it"
        );
        let err = Assignment::parse("style.color=null")
            .unwrap()
            .to_partial()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "style.color: unknown variant `null`, expected one of `auto`, `always`, `never`"
        );
    }

    #[test]
    fn quoted_keys_and_json_values() {
        let a =
            Assignment::parse("conversation.tools.'*'.policy.run:=[{\"mode\":\"ask\"}]").unwrap();
        assert_eq!(
            a.path.segments(),
            ["conversation", "tools", "*", "policy", "run"]
        );
        assert!(matches!(
            a.value,
            AssignedValue::Json(serde_json::Value::Array(_))
        ));
        let a = Assignment::parse("conversation.tools.'a=b'.enable=false").unwrap();
        assert_eq!(a.path.segments()[2], "a=b");
    }

    #[test]
    fn env_names_split_on_double_underscore() {
        let a =
            Assignment::from_env("JP_CFG_CONVERSATION__TOOLS__FS_READ_FILE__RUN", "ask").unwrap();
        assert_eq!(a.path.to_string(), "conversation.tools.fs_read_file.run");
        assert_eq!(
            Assignment::from_env("JP_CFG_A____B", "x")
                .unwrap_err()
                .to_string(),
            "`JP_CFG_A____B` does not name a config key: a segment between `__` separators is empty"
        );
    }
}
