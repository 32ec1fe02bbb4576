//! Tool names and globs, as `conversation.policies` entries write them
//! (`tool`, `dependencies`, `read_tools`, `write_tools`).

use crate::pointer::quote;

/// A tool name or glob, as written in `tool`, `dependencies`, `read_tools`
/// or `write_tools`.
#[derive(Debug, Clone)]
pub struct ToolPattern {
    text: String,
    glob: Option<glob::Pattern>,
}

/// A tool pattern whose glob does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{glob} is not a valid glob: {why}")]
pub struct BadGlob {
    /// The pattern, quoted as messages quote names.
    pub glob: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl ToolPattern {
    /// Parses a name or glob (`*`, `?`, `[...]`).
    ///
    /// # Errors
    ///
    /// When the glob is malformed.
    pub fn parse(text: &str) -> Result<Self, BadGlob> {
        if !text.contains(['*', '?', '[']) {
            return Ok(Self {
                text: text.to_owned(),
                glob: None,
            });
        }
        glob::Pattern::new(text)
            .map(|glob| Self {
                text: text.to_owned(),
                glob: Some(glob),
            })
            .map_err(|e| BadGlob {
                glob: quote(text),
                why: e.msg,
            })
    }

    /// Whether `tool` is this name, or matches this glob.
    #[must_use]
    pub fn matches(&self, tool: &str) -> bool {
        match &self.glob {
            Some(glob) => glob.matches(tool),
            None => self.text == tool,
        }
    }

    /// As written.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether it is a glob rather than a name.
    #[must_use]
    pub fn is_glob(&self) -> bool {
        self.glob.is_some()
    }
}
