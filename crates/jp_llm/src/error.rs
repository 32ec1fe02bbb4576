//! What can go wrong talking to a provider.

/// A provider failure, worded for the user.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// The API key's environment variable is unset or empty.
    #[error("{provider}: the API key is missing: set the environment variable `{var}`")]
    MissingApiKey {
        /// The provider.
        provider: String,
        /// The variable jp read.
        var: String,
    },

    /// The request could not be sent or the response not received.
    #[error("{provider}: cannot reach {url}: {message}")]
    Connect {
        /// The provider.
        provider: String,
        /// The URL jp posted to.
        url: String,
        /// Why.
        message: String,
    },

    /// The provider answered with an HTTP error status.
    #[error("{provider}: HTTP {status}: {message}")]
    Http {
        /// The provider.
        provider: String,
        /// The status code.
        status: u16,
        /// The provider's error message, or the body's start.
        message: String,
    },

    /// Rate-limit or overload answers kept coming after every retry.
    #[error("{provider}: still {reason} after {attempts} attempts; try again later")]
    RetriesExhausted {
        /// The provider.
        provider: String,
        /// What kept happening (`rate limited (HTTP 429)`).
        reason: String,
        /// How many requests were sent.
        attempts: u32,
    },

    /// The provider sent an error event in the stream.
    #[error("{provider}: the provider reported an error ({kind}): {message}")]
    Api {
        /// The provider.
        provider: String,
        /// The provider's error type (`overloaded_error`, `invalid_request_error`).
        kind: String,
        /// The provider's message.
        message: String,
    },

    /// The connection dropped before the response ended.
    #[error("{provider}: the connection dropped mid-response: {message}")]
    Disconnected {
        /// The provider.
        provider: String,
        /// Why, as far as jp knows.
        message: String,
    },

    /// The provider sent something jp cannot read.
    #[error("{provider}: unreadable response: {message}")]
    Decode {
        /// The provider.
        provider: String,
        /// What was wrong and where (the event or line).
        message: String,
    },

    /// The configuration does not allow a request (an unknown provider, a
    /// bad base URL, a missing script).
    #[error("{0}")]
    Config(String),

    /// The request is larger than the model reads: by jp's estimate before
    /// sending, or by the provider's answer. The message says how large,
    /// the model's window and what to do.
    #[error("{0}")]
    TooLarge(String),
}

/// Why a script of the `scripted` provider cannot be played. Each message
/// names the script (`origin`: `demo`, or the file's path).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// The script is not TOML of a script's shape.
    #[error("script {origin}: {message}")]
    Toml {
        /// The script.
        origin: String,
        /// What the TOML reader said.
        message: String,
    },

    /// `chunk_size` is 0.
    #[error("script {origin}: chunk_size must be at least 1")]
    ChunkSize {
        /// The script.
        origin: String,
    },

    /// A part has none, or more than one, of `text`, `reasoning` and `tool`.
    #[error(
        "script {origin}: responses[{response}].parts[{part}] needs exactly one of `text`, `reasoning` and `tool`"
    )]
    PartKind {
        /// The script.
        origin: String,
        /// The response's index.
        response: usize,
        /// The part's index.
        part: usize,
    },

    /// A part that is not a tool call has `id` or `arguments`.
    #[error(
        "script {origin}: responses[{response}].parts[{part}] has `id` or `arguments` but no `tool`"
    )]
    PartWithoutTool {
        /// The script.
        origin: String,
        /// The response's index.
        response: usize,
        /// The part's index.
        part: usize,
    },

    /// A response has both `replay` and `parts`.
    #[error("script {origin}: responses[{response}] has both `replay` and `parts`")]
    ReplayAndParts {
        /// The script.
        origin: String,
        /// The response's index.
        response: usize,
    },

    /// A replay has none, or both, of `body` and `file`.
    #[error("script {origin}: responses[{response}].replay needs exactly one of `body` and `file`")]
    ReplaySource {
        /// The script.
        origin: String,
        /// The response's index.
        response: usize,
    },
}

impl From<ScriptError> for ProviderError {
    fn from(error: ScriptError) -> Self {
        Self::Config(error.to_string())
    }
}
