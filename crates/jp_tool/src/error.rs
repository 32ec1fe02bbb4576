//! What goes wrong reading the protocol's messages.

use serde_json::Value;

/// Why a request, a question or an outcome is not what the protocol
/// allows. The messages are written for the model and the user: a tool
/// returns a bad request's as its [`Outcome::Error`](crate::Outcome::Error),
/// and jp shows a bad outcome's.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// Stdin could not be read.
    #[error("cannot read the request from stdin: {0}")]
    ReadRequest(std::io::Error),
    /// Stdin does not hold a request.
    #[error("the request on stdin is not valid: {0}")]
    InvalidRequest(serde_json::Error),
    /// The text is not an outcome.
    #[error("{0}")]
    InvalidOutcome(serde_json::Error),
    /// A `select` question has nothing to select.
    #[error("question `{id}` is a `select` without options: it could not be answered")]
    SelectWithoutOptions {
        /// The question's id.
        id: String,
    },
    /// A question's default is not an answer of its kind.
    #[error("question `{id}` has the default {default}, which is not an answer it accepts")]
    DefaultNotAnAnswer {
        /// The question's id.
        id: String,
        /// The default it has.
        default: Value,
    },
    /// An outcome other than a success carries `config` or `unset`.
    #[error("`{field}` is allowed only on a `success` outcome, not on `{kind}`")]
    OnlySuccessChangesConfig {
        /// `config` or `unset`.
        field: &'static str,
        /// The outcome's type (`error`, `needs_input`).
        kind: &'static str,
    },
}
