//! The interface of a stateful policy: the [`Call`] it is shown, the
//! [`PolicyContext`] and [`PolicyEnv`] it may consult, the
//! [`PolicyDecision`] it answers, and the [`ToolPolicy`] trait itself.

use serde_json::{Map, Value};

/// A call as a policy sees it: the tool and the arguments it runs with.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The arguments (complete, or only those that arrived when
    /// [`PolicyContext::partial`] is set).
    pub arguments: &'a Map<String, Value>,
}

/// A key a keyed policy tracks, as [`PolicyEnv::key`] makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// The key's text: a path relative to the workspace (absolute outside
    /// it) for a `path` parameter, the value itself otherwise.
    pub text: String,
    /// Whether it names a file.
    pub is_path: bool,
}

/// What a policy needs from the world.
pub trait PolicyEnv {
    /// The key for the argument `value` that `tool`'s parameter at `pointer`
    /// holds. A `path` parameter is resolved the way D25 policies resolve
    /// paths (so `./a.txt`, `a.txt` and `src/../a.txt` are one key).
    ///
    /// # Errors
    ///
    /// Why `value` cannot be a key (a path that cannot be resolved, a value
    /// of the wrong type).
    fn key(&self, tool: &str, pointer: &str, value: &Value) -> Result<Key, String>;

    /// Whether the file a path key names exists.
    fn file_exists(&self, key: &Key) -> bool;
}

/// What a policy is told besides the call.
pub struct PolicyContext<'a> {
    /// Keys and files.
    pub env: &'a dyn PolicyEnv,
    /// The resolved config, as JSON (for `when` conditions).
    pub config: &'a Value,
    /// Whether the call's arguments are still streaming: a policy then
    /// denies only on what it knows (a missing key is not yet a denial).
    pub partial: bool,
}

/// A policy's answer about a call.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicyDecision {
    /// The call may run (as far as this policy is concerned).
    Allow,
    /// The call must not run.
    Deny(Denial),
}

impl PolicyDecision {
    /// A denial with a reason for the model and structured metadata.
    #[must_use]
    pub fn deny(reason: impl Into<String>, metadata: Map<String, Value>) -> Self {
        Self::Deny(Denial {
            policy: String::new(),
            reason: reason.into(),
            metadata,
        })
    }
}

/// Why a call may not run.
#[derive(Debug, Clone, PartialEq)]
pub struct Denial {
    /// The policy that denied it (filled in by the registry).
    pub policy: String,
    /// What the model is told: what to do so the call can run. Never the
    /// rule set.
    pub reason: String,
    /// Structured details for telemetry (`jp conversation show`).
    pub metadata: Map<String, Value>,
}

/// A stateful constraint on tool calls.
pub trait ToolPolicy: Send {
    /// A name, unique in its registry.
    fn name(&self) -> &str;

    /// Whether this policy has anything to say about calls of `tool`.
    fn governs(&self, tool: &str) -> bool;

    /// Whether `call` may run, given what happened so far.
    fn check(&self, call: &Call<'_>, ctx: &PolicyContext<'_>) -> PolicyDecision;

    /// The top-level argument of `tool`'s calls this policy's check
    /// depends on, if any: while it streams, the check cannot deny yet.
    fn key_parameter(&self, _tool: &str) -> Option<&str> {
        None
    }

    /// Learns from a call that ran and succeeded; never called for a call
    /// that was denied, refused, failed or did not run.
    fn on_result(&mut self, call: &Call<'_>, result: &str, ctx: &PolicyContext<'_>);

    /// The policy's state, for
    /// [`PolicyRegistry::snapshot`](super::PolicyRegistry::snapshot).
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the registry API of the Tool Policy Specification; jp itself rebuilds state by replaying the conversation, and tests use it"
        )
    )]
    fn snapshot(&self) -> Value;

    /// Puts back a state [`snapshot`](Self::snapshot) returned.
    ///
    /// # Errors
    ///
    /// When `state` is not one this policy's snapshot could return.
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the registry API of the Tool Policy Specification; jp itself rebuilds state by replaying the conversation, and tests use it"
        )
    )]
    fn restore(&mut self, state: &Value) -> Result<(), String>;
}
