//! Wire types of jp's local tool protocol, and a small helper for Rust tool
//! authors (architecture decision 8).
//!
//! jp runs a local tool as a process. It writes one [`Request`] as JSON to
//! the tool's stdin and closes it; the tool writes one [`Outcome`] as JSON to
//! stdout and exits. Stderr is the tool's log: jp keeps it for diagnostics
//! and never shows it to the model. Nothing goes through argv, so there is no
//! size limit and no shell quoting.
//!
//! ```no_run
//! use jp_tool::{Outcome, Request};
//!
//! fn main() -> std::process::ExitCode {
//!     jp_tool::serve(|request: Request| {
//!         let Some(name) = request.tool.arguments.get("name").and_then(|v| v.as_str()) else {
//!             return Outcome::error("`name` must be a string");
//!         };
//!         Outcome::success(format!("hello, {name}"))
//!     })
//! }
//! ```

mod error;

use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use error::ProtocolError;

/// What jp sends a tool on stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The call.
    pub tool: ToolInfo,
    /// Where and why the tool runs.
    pub context: Context,
}

/// The call a [`Request`] carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// The tool's name, as configured (one program can serve several tools).
    pub name: String,
    /// The arguments the model sent: a JSON object, already checked against
    /// the tool's parameters.
    pub arguments: Map<String, Value>,
    /// Answers to questions the tool asked with [`Outcome::NeedsInput`], by
    /// question id. Empty on the first invocation.
    #[serde(default)]
    pub answers: Map<String, Value>,
    /// The tool's `options` from jp's config.
    #[serde(default)]
    pub options: Map<String, Value>,
}

/// Where and why a tool runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// The workspace root (absolute). The process also runs in it.
    pub root: PathBuf,
    /// What jp wants done.
    pub action: Action,
    /// The part of jp's config the tool may read (its `access.config`
    /// rules with `read = true`), as a tree of the config's shape, with
    /// the values as of the start of the current cycle (RFD 078). Absent
    /// for a tool that may read no config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    /// Why jp did not apply the config change the tool's previous run of
    /// this same call proposed. Present only when jp runs the tool again
    /// for that reason, with the same arguments and answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_rejection: Option<DeltaRejection>,
}

impl Context {
    /// The context of a run in the workspace at `root`, with no config.
    #[must_use]
    pub fn run(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            action: Action::Run,
            config: None,
            delta_rejection: None,
        }
    }
}

/// Why a proposed config change was not applied (RFD 078). The tool is run
/// again with this in [`Context::delta_rejection`]; it may answer without
/// a change, with a corrected one, or give up. jp runs a call at most three
/// more times for rejected changes, so a tool that changes config must be
/// safe to run again with the same arguments (idempotent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeltaRejection {
    /// The kind of rejection.
    pub reason: RejectionReason,
    /// The config paths concerned (dotted, such as `assistant.model.id`),
    /// when the reason is about particular paths.
    #[serde(default)]
    pub fields: Vec<String>,
    /// What exactly was wrong, in words.
    pub detail: String,
}

/// The kind of a [`DeltaRejection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectionReason {
    /// The change is not valid config: an unknown key, a wrong type, a bad
    /// value, an unknown model alias, or an `unset` path jp cannot parse.
    InvalidConfig,
    /// The change touches paths the tool's grants do not let it write
    /// (`write`) or remove (`delete`).
    UnauthorizedPaths,
    /// The user was asked and said no.
    UserRejected,
    /// The change needs the user's confirmation and no one could be asked
    /// (no terminal, or `--non-interactive`).
    ConfirmationUnavailable,
}

impl RejectionReason {
    /// The wire name, such as `unauthorized_paths`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidConfig => "invalid_config",
            Self::UnauthorizedPaths => "unauthorized_paths",
            Self::UserRejected => "user_rejected",
            Self::ConfirmationUnavailable => "confirmation_unavailable",
        }
    }
}

/// What jp wants a tool to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Carry out the call.
    Run,
}

/// What a tool answers on stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Outcome {
    /// The call worked; `content` goes to the model.
    Success {
        /// The result, as text for the model.
        content: String,
        /// Config values to set (RFD 078): a partial config tree, such as
        /// `{"assistant": {"model": {"id": "anthropic/claude-opus-5"}}}`.
        /// Applied only within the tool's `access.config` grants, and
        /// before `content` reaches the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        config: Option<Value>,
        /// Config paths to remove (RFD 078), dotted; `path["json"]` removes
        /// the list elements equal to that JSON value.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unset: Vec<String>,
    },
    /// The call failed; `message` goes to the model as an error result.
    Error {
        /// What went wrong, written for the model.
        message: String,
        /// Whether trying again unchanged might work (a lock, a network
        /// hiccup).
        #[serde(default)]
        transient: bool,
    },
    /// The tool needs an answer from the user before it can go on; jp asks
    /// and runs the tool again with the answer in
    /// [`ToolInfo::answers`].
    NeedsInput {
        /// What to ask.
        question: Question,
    },
}

impl Outcome {
    /// A success with `content`.
    #[must_use]
    pub fn success(content: impl Into<String>) -> Self {
        Self::Success {
            content: content.into(),
            config: None,
            unset: Vec::new(),
        }
    }

    /// A success with `content` that also proposes config changes: values
    /// to set (`config`, a partial config tree) and paths to remove.
    #[must_use]
    pub fn success_with_config(
        content: impl Into<String>,
        config: Option<Value>,
        unset: Vec<String>,
    ) -> Self {
        Self::Success {
            content: content.into(),
            config,
            unset,
        }
    }

    /// A permanent failure with `message`.
    #[must_use]
    pub fn error(message: impl Into<String>) -> Self {
        Self::Error {
            message: message.into(),
            transient: false,
        }
    }
}

/// A question a tool asks the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// The key the answer comes back under in [`ToolInfo::answers`].
    pub id: String,
    /// The question, as shown to the user.
    pub text: String,
    /// What kind of answer is expected.
    #[serde(default)]
    pub answer: AnswerKind,
    /// The answer used when the user just presses enter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
}

impl Question {
    /// Whether the question can be answered: a `select` has options, and a
    /// default is an answer of its kind (one of the options, for a
    /// `select`).
    ///
    /// # Errors
    ///
    /// What is wrong with it, naming the question.
    pub fn check(&self) -> Result<(), ProtocolError> {
        if let AnswerKind::Select { options } = &self.answer
            && options.is_empty()
        {
            return Err(ProtocolError::SelectWithoutOptions {
                id: self.id.clone(),
            });
        }
        let Some(default) = &self.default else {
            return Ok(());
        };
        let fits = match (&self.answer, default) {
            (AnswerKind::Boolean, Value::Bool(_)) | (AnswerKind::Text, Value::String(_)) => true,
            (AnswerKind::Select { options }, Value::String(choice)) => options.contains(choice),
            _ => false,
        };
        if fits {
            Ok(())
        } else {
            Err(ProtocolError::DefaultNotAnAnswer {
                id: self.id.clone(),
                default: default.clone(),
            })
        }
    }
}

/// The kind of answer a [`Question`] expects.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum AnswerKind {
    /// Yes or no: the answer is a JSON boolean.
    #[default]
    Boolean,
    /// Free text: the answer is a JSON string.
    Text,
    /// One of `options`: the answer is the chosen string.
    Select {
        /// The choices.
        options: Vec<String>,
    },
}

impl Request {
    /// The argument `name`, if present.
    #[must_use]
    pub fn argument(&self, name: &str) -> Option<&Value> {
        self.tool.arguments.get(name)
    }

    /// The string argument `name`.
    ///
    /// # Errors
    ///
    /// An [`Outcome::Error`] naming the argument when it is missing or not
    /// a string, ready to return to jp.
    // The error is the outcome a tool returns as is; boxing it would only
    // make every caller unbox it.
    #[allow(clippy::result_large_err)]
    pub fn string_argument(&self, name: &str) -> Result<&str, Outcome> {
        match self.argument(name) {
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(Outcome::error(format!(
                "argument `{name}` must be a string"
            ))),
            None => Err(Outcome::error(format!("missing argument `{name}`"))),
        }
    }
}

/// Reads a [`Request`] from stdin, calls `handler`, and writes its
/// [`Outcome`] to stdout: the whole protocol for a Rust tool.
///
/// A request that cannot be read becomes an [`Outcome::Error`] saying why,
/// so jp and the model learn what went wrong. Returns the process's exit
/// code: success whenever an outcome was written (a tool error is still a
/// protocol success), failure when stdout could not be written.
pub fn serve(handler: impl FnOnce(Request) -> Outcome) -> ExitCode {
    serve_with(handler, |output, outcome| write_outcome(output, outcome))
}

/// [`serve`], with the outcome written to stdout by `write` (which must
/// write what [`parse_outcome`] reads as that outcome).
pub fn serve_with(
    handler: impl FnOnce(Request) -> Outcome,
    write: impl FnOnce(&mut dyn std::io::Write, &Outcome) -> std::io::Result<()>,
) -> ExitCode {
    let outcome = match read_request(std::io::stdin().lock()) {
        Ok(request) => handler(request),
        Err(error) => Outcome::error(error.to_string()),
    };
    match write(&mut std::io::stdout().lock(), &outcome) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("cannot write the outcome to stdout: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Parses one request from `input`.
///
/// # Errors
///
/// Why the input is not a request.
pub fn read_request(mut input: impl std::io::Read) -> Result<Request, ProtocolError> {
    let mut text = String::new();
    input
        .read_to_string(&mut text)
        .map_err(ProtocolError::ReadRequest)?;
    serde_json::from_str(&text).map_err(ProtocolError::InvalidRequest)
}

/// Parses one outcome from a tool's stdout: [`Outcome`]'s [`FromStr`],
/// with the error as its message.
///
/// # Errors
///
/// A message saying why `text` is not an outcome (see [`Outcome`]'s
/// [`FromStr`]).
pub fn parse_outcome(text: &str) -> Result<Outcome, String> {
    text.parse().map_err(|e: ProtocolError| e.to_string())
}

impl FromStr for Outcome {
    type Err = ProtocolError;

    /// Parses one outcome from a tool's stdout.
    ///
    /// # Errors
    ///
    /// Why `text` is not an outcome. `config` and `unset` belong to a
    /// `success` only: an error or a question has not finished the call,
    /// so it cannot change config, and such an outcome is refused rather
    /// than its change silently dropped.
    fn from_str(text: &str) -> Result<Self, ProtocolError> {
        /// The fields only a success may have, looked for in other outcomes.
        #[derive(Deserialize)]
        struct Extra {
            config: Option<serde::de::IgnoredAny>,
            unset: Option<serde::de::IgnoredAny>,
        }
        let outcome: Self = serde_json::from_str(text).map_err(ProtocolError::InvalidOutcome)?;
        let kind = match &outcome {
            Self::Success { .. } => return Ok(outcome),
            Self::Error { .. } => "error",
            Self::NeedsInput { question } => {
                question.check()?;
                "needs_input"
            }
        };
        let extra: Extra = serde_json::from_str(text).map_err(ProtocolError::InvalidOutcome)?;
        for (field, present) in [
            ("config", extra.config.is_some()),
            ("unset", extra.unset.is_some()),
        ] {
            if present {
                return Err(ProtocolError::OnlySuccessChangesConfig { field, kind });
            }
        }
        Ok(outcome)
    }
}

/// Writes `outcome` as one line of JSON.
///
/// # Errors
///
/// The I/O error.
pub fn write_outcome(mut output: impl std::io::Write, outcome: &Outcome) -> std::io::Result<()> {
    serde_json::to_writer(&mut output, outcome)?;
    output.write_all(b"\n")?;
    output.flush()
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
