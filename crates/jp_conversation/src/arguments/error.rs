//! What can go wrong while tool-call arguments stream in.

use std::fmt;

use super::pointer::JsonPointer;

/// Why [`IncrementalArgParser`](crate::IncrementalArgParser) rejected its
/// input.
///
/// Once a parser has returned an error it keeps returning the same error;
/// fragments it emitted before stay valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgParseError {
    /// The input is not JSON.
    #[error("invalid JSON at byte {offset}: expected {expected}, found {found}")]
    Invalid {
        /// Byte offset of the offending input, counted over all pushes.
        offset: usize,
        /// What the grammar allows at that point.
        expected: &'static str,
        /// What was there instead.
        found: Found,
    },

    /// The input stopped in the middle of a value: the provider ended the
    /// stream early (for example at `max_tokens`).
    #[error("arguments are truncated: input ended {context} at {path}")]
    Truncated {
        /// Where the unfinished value lives.
        path: JsonPointer,
        /// What the parser was in the middle of.
        context: TruncatedIn,
    },

    /// A number is valid JSON but cannot be represented (such as `1e400`,
    /// which overflows a 64-bit float).
    #[error("number `{text}` at byte {offset} is out of range")]
    NumberOutOfRange {
        /// The number as written.
        text: String,
        /// Byte offset of the number's first character.
        offset: usize,
    },

    /// A configured limit was exceeded.
    #[error("{limit} limit of {max} exceeded at byte {offset}")]
    LimitExceeded {
        /// Which limit.
        limit: Limit,
        /// Its configured value.
        max: usize,
        /// Byte offset where it was exceeded.
        offset: usize,
    },

    /// `push` or `finish` was called after `finish` had succeeded.
    #[error("the parser has already finished")]
    AlreadyFinished,
}

impl ArgParseError {
    /// Whether the input was cut off rather than malformed.
    #[must_use]
    pub fn is_truncated(&self) -> bool {
        matches!(self, Self::Truncated { .. })
    }
}

/// The configurable limits of the parser; see
/// [`ParserLimits`](crate::ParserLimits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Nesting depth of arrays and objects.
    Depth,
    /// Length in bytes of one decoded object key.
    KeyLength,
    /// Total size in bytes of the input.
    Size,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Depth => "nesting depth",
            Self::KeyLength => "key length (bytes)",
            Self::Size => "argument size (bytes)",
        })
    }
}

/// What the input held where something else was expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A character (possibly the first of several that do not fit).
    Char(char),
    /// The end of the input.
    End,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Char(c) if c.is_control() || c.is_whitespace() => {
                write!(f, "U+{:04X}", u32::from(*c))
            }
            Self::Char(c) => write!(f, "{c:?}"),
            Self::End => f.write_str("end of input"),
        }
    }
}

/// Where the input ended, for [`ArgParseError::Truncated`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncatedIn {
    /// Nothing but whitespace arrived.
    NoValue,
    /// Inside a string value.
    String,
    /// Inside an object key.
    Key,
    /// Inside a number.
    Number,
    /// Inside `true`, `false` or `null`.
    Literal,
    /// Inside an array, between items.
    Array,
    /// Inside an object, between entries.
    Object,
    /// After a key and its `:`, before the value.
    BeforeValue,
}

impl fmt::Display for TruncatedIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NoValue => "before any value",
            Self::String => "inside a string",
            Self::Key => "inside an object key",
            Self::Number => "inside a number",
            Self::Literal => "inside a literal",
            Self::Array => "inside an array",
            Self::Object => "inside an object",
            Self::BeforeValue => "before a value",
        })
    }
}
