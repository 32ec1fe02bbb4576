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
}
