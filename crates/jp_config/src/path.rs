//! Structural config paths (architecture decision 9).
//!
//! A config path is a list of segments, not a dotted string: the tool name
//! `my.tool` is one segment. Written forms quote such segments:
//! `conversation.tools.'my.tool'.command`, and `'*'` names the defaults entry
//! of `conversation.tools`.

use std::fmt;

/// A path into the config tree, one map key or field name per segment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ConfigPath(Vec<String>);

/// A written config path that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid config key `{input}`: {reason}")]
pub struct ConfigPathError {
    /// The key as written.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl ConfigPath {
    /// The empty path: the root of the config.
    #[must_use]
    pub const fn root() -> Self {
        Self(Vec::new())
    }

    /// A path from its segments.
    #[must_use]
    pub fn from_segments<I, S>(segments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self(segments.into_iter().map(Into::into).collect())
    }

    /// Parses a written key: segments separated by `.`; a segment with a
    /// `.`, quote or other special character is quoted with `'...'` or
    /// `"..."` (no escapes inside quotes).
    ///
    /// # Errors
    ///
    /// When the key is empty, has an empty segment, or an unclosed quote.
    pub fn parse(input: &str) -> Result<Self, ConfigPathError> {
        let err = |reason| ConfigPathError {
            input: input.to_owned(),
            reason,
        };
        if input.is_empty() {
            return Err(err("the key is empty"));
        }
        let mut segments = Vec::new();
        let mut rest = input;
        loop {
            let (segment, after) = if let Some(quote @ ('\'' | '"')) = rest.chars().next() {
                let body = &rest[1..];
                let end = body
                    .find(quote)
                    .ok_or_else(|| err("a quote is not closed"))?;
                (&body[..end], &body[end + 1..])
            } else {
                let end = rest.find('.').unwrap_or(rest.len());
                if end == 0 {
                    return Err(err("a segment is empty"));
                }
                (&rest[..end], &rest[end..])
            };
            segments.push(segment.to_owned());
            if after.is_empty() {
                break;
            }
            rest = after
                .strip_prefix('.')
                .ok_or_else(|| err("a quoted segment must be followed by `.` or the end"))?;
            if rest.is_empty() {
                return Err(err("the key ends with `.`"));
            }
        }
        Ok(Self(segments))
    }

    /// The segments, outermost first.
    #[must_use]
    pub fn segments(&self) -> &[String] {
        &self.0
    }

    /// Whether this is the root path.
    #[must_use]
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// This path with one more segment.
    #[must_use]
    pub fn join(&self, segment: impl Into<String>) -> Self {
        let mut segments = self.0.clone();
        segments.push(segment.into());
        Self(segments)
    }

    /// Whether `self` is `other` or lies below it, segment by segment
    /// (`assistant.model` does not cover `assistant.models`).
    #[must_use]
    pub fn starts_with(&self, other: &Self) -> bool {
        self.0.starts_with(&other.0)
    }

    /// Looks the path up in a JSON value.
    #[must_use]
    pub fn lookup<'a>(&self, value: &'a serde_json::Value) -> Option<&'a serde_json::Value> {
        self.0.iter().try_fold(value, |node, segment| match node {
            serde_json::Value::Object(map) => map.get(segment),
            serde_json::Value::Array(items) => {
                segment.parse::<usize>().ok().and_then(|i| items.get(i))
            }
            _ => None,
        })
    }

    /// A JSON value with `value` at this path and nothing else.
    #[must_use]
    pub fn wrap(&self, value: serde_json::Value) -> serde_json::Value {
        self.0.iter().rev().fold(value, |inner, segment| {
            let mut map = serde_json::Map::new();
            map.insert(segment.clone(), inner);
            serde_json::Value::Object(map)
        })
    }
}

fn needs_quotes(segment: &str) -> bool {
    segment.is_empty()
        || !segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl fmt::Display for ConfigPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            if needs_quotes(segment) {
                let quote = if segment.contains('\'') { '"' } else { '\'' };
                write!(f, "{quote}{segment}{quote}")?;
            } else {
                f.write_str(segment)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "path_tests.rs"]
mod tests;
