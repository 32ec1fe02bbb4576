//! [`ParserLimits`]: what bounds the parser's memory and work.

/// Limits that bound the parser's memory and work on hostile input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParserLimits {
    /// Deepest allowed nesting of arrays and objects (the root container is
    /// depth 1).
    pub max_depth: usize,
    /// Longest allowed object key, in bytes of decoded UTF-8.
    pub max_key_len: usize,
    /// Largest allowed input, in bytes over all pushes.
    pub max_size: usize,
}

impl ParserLimits {
    /// Default nesting depth: 128 nested arrays and objects (serde_json stops
    /// at 127).
    pub const DEFAULT_MAX_DEPTH: usize = 128;
    /// Default key length: far beyond any parameter name. Kept small because
    /// every owned fragment ([`IncrementalArgParser::push`](crate::IncrementalArgParser::push)) repeats the
    /// keys of its path.
    pub const DEFAULT_MAX_KEY_LEN: usize = 256;
    /// Default input size: room for a large file's content and then some.
    pub const DEFAULT_MAX_SIZE: usize = 64 * 1024 * 1024;
}

impl Default for ParserLimits {
    fn default() -> Self {
        Self {
            max_depth: Self::DEFAULT_MAX_DEPTH,
            max_key_len: Self::DEFAULT_MAX_KEY_LEN,
            max_size: Self::DEFAULT_MAX_SIZE,
        }
    }
}
