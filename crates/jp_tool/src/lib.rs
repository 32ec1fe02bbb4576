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

use std::path::PathBuf;
use std::process::ExitCode;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
    let outcome = match read_request(std::io::stdin().lock()) {
        Ok(request) => handler(request),
        Err(message) => Outcome::error(message),
    };
    match write_outcome(std::io::stdout().lock(), &outcome) {
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
/// A message saying why the input is not a request.
pub fn read_request(mut input: impl std::io::Read) -> Result<Request, String> {
    let mut text = String::new();
    input
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the request from stdin: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("the request on stdin is not valid: {e}"))
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
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn request_wire_shape() {
        let request: Request = serde_json::from_value(json!({
            "tool": {"name": "fs_read_file", "arguments": {"path": "a.rs"}},
            "context": {"root": "/w", "action": "run"}
        }))
        .unwrap();
        assert_eq!(request.tool.name, "fs_read_file");
        assert!(request.tool.answers.is_empty());
        assert_eq!(request.context.action, Action::Run);
        assert_eq!(request.string_argument("path"), Ok("a.rs"));
        assert_eq!(
            request.string_argument("content"),
            Err(Outcome::error("missing argument `content`"))
        );
    }

    #[test]
    fn outcome_wire_shape() {
        assert_eq!(
            serde_json::to_value(Outcome::success("ok")).unwrap(),
            json!({"type": "success", "content": "ok"})
        );
        let error: Outcome =
            serde_json::from_value(json!({"type": "error", "message": "no"})).unwrap();
        assert_eq!(error, Outcome::error("no"));
        let question: Outcome = serde_json::from_value(json!({
            "type": "needs_input",
            "question": {"id": "overwrite", "text": "Overwrite a.rs?"}
        }))
        .unwrap();
        assert_eq!(
            question,
            Outcome::NeedsInput {
                question: Question {
                    id: "overwrite".into(),
                    text: "Overwrite a.rs?".into(),
                    answer: AnswerKind::Boolean,
                    default: None,
                }
            }
        );
    }

    #[test]
    fn unreadable_request_says_why() {
        let error = read_request("{}".as_bytes()).unwrap_err();
        assert_eq!(
            error,
            "the request on stdin is not valid: missing field `tool` at line 1 column 2"
        );
    }
}
