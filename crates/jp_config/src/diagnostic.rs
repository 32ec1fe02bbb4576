//! Problems found while loading or validating config, with where they are.

use std::fmt;

use crate::path::ConfigPath;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth fixing; the config still loads.
    Warning,
    /// The config does not load.
    Error,
}

/// One problem in the config: what, and where (file, line, key) as far as
/// it is known.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The layer the problem is in: a file path, `env JP_CFG_...` or
    /// `--cfg ...`. `None` when it comes from merging several layers.
    pub source: Option<String>,
    /// The 1-based line in `source`, when it is a file and the line is known.
    pub line: Option<usize>,
    /// The config key the problem is about, with array positions written
    /// as `[i]` (`conversation.tools.fs.policy.run[1]`).
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl Diagnostic {
    /// An error about `key`.
    #[must_use]
    pub fn error(key: Option<String>, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            source: None,
            line: None,
            key,
            message: message.into(),
        }
    }

    /// A warning about `key`.
    #[must_use]
    pub fn warning(key: Option<String>, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(key, message)
        }
    }

    /// Whether this is an error.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    /// `error: .jp/config.toml:12: conversation.tools.x.policy.run[1]: message`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.severity {
            Severity::Error => "error: ",
            Severity::Warning => "warning: ",
        })?;
        if let Some(source) = &self.source {
            f.write_str(source)?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            f.write_str(": ")?;
        }
        if let Some(key) = &self.key {
            write!(f, "{key}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// Writes a key with its array positions: `a.b[1].c`.
#[must_use]
pub fn key_with_indices(path: &ConfigPath) -> String {
    let mut out = String::new();
    for segment in path.segments() {
        if !out.is_empty() && segment.parse::<usize>().is_ok() {
            out.push_str(&format!("[{segment}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&ConfigPath::from_segments([segment.as_str()]).to_string());
        }
    }
    out
}
