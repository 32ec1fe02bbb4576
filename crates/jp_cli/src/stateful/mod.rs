//! Stateful tool policies (the Tool Policy Specification): rules about the
//! order of calls across a conversation, such as "read a file before
//! changing it" or "run the tests before deploying".
//!
//! A [`ToolPolicy`] looks at a call before it runs ([`ToolPolicy::check`])
//! and learns from each call that succeeded ([`ToolPolicy::on_result`]).
//! The [`PolicyRegistry`] holds the policies of a conversation: every
//! policy that governs a tool must allow a call of it, checked in
//! registration order, and the first denial is the answer (the call does
//! not run; the model gets the denial's reason).
//!
//! Everything here is pure: what needs the file system (turning a `path`
//! argument into a key, asking whether a file exists) is behind
//! [`PolicyEnv`], so the policies are tested without one. The state is not
//! stored anywhere: it is rebuilt by replaying a conversation's calls and
//! their successful responses ([`replay`]), so a resumed, forked or edited
//! conversation has the state its own events imply.

mod builtin;
mod config;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod trace_tests;

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use jp_conversation::{ConversationEvent, EventKind, ResponseStatus};
use serde_json::{Map, Value};

pub use builtin::{Conditional, Keyed, Sequential};
pub use config::{WorkspaceEnv, from_config};

/// The `tracing` target of the warning logged for each denial.
pub const DENIAL_LOG_TARGET: &str = "jp::stateful::denial";

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

    /// The policy's state, for [`PolicyRegistry::snapshot`].
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

/// The state of every policy of a registry, by name.
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "the registry API of the Tool Policy Specification; jp itself rebuilds state by replaying the conversation, and tests use it"
    )
)]
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot(Vec<(String, Value)>);

/// Why a registry refused something.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Two policies with one name.
    #[error("a policy named `{0}` is already registered")]
    Duplicate(String),
    /// A snapshot that does not fit the registry.
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the registry API of the Tool Policy Specification; jp itself rebuilds state by replaying the conversation, and tests use it"
        )
    )]
    #[error("the snapshot does not fit the policies: {0}")]
    Snapshot(String),
}

/// The policies of one conversation.
#[derive(Default)]
pub struct PolicyRegistry {
    policies: Vec<Box<dyn ToolPolicy>>,
}

impl std::fmt::Debug for PolicyRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.policies.iter().map(|p| p.name()))
            .finish()
    }
}

impl PolicyRegistry {
    /// An empty registry.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a policy after those already registered.
    ///
    /// # Errors
    ///
    /// When a policy of the same name is registered.
    pub fn register(&mut self, policy: Box<dyn ToolPolicy>) -> Result<(), RegistryError> {
        if self.policies.iter().any(|p| p.name() == policy.name()) {
            return Err(RegistryError::Duplicate(policy.name().to_owned()));
        }
        self.policies.push(policy);
        Ok(())
    }

    /// Removes the policy called `name`; whether there was one.
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the registry API of the Tool Policy Specification; jp itself rebuilds state by replaying the conversation, and tests use it"
        )
    )]
    pub fn unregister(&mut self, name: &str) -> bool {
        let before = self.policies.len();
        self.policies.retain(|p| p.name() != name);
        self.policies.len() != before
    }

    /// Whether no policy is registered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty()
    }

    /// The names of the policies that govern `tool`, in registration order.
    #[must_use]
    pub fn policies_for(&self, tool: &str) -> Vec<&str> {
        self.policies
            .iter()
            .filter(|p| p.governs(tool))
            .map(|p| p.name())
            .collect()
    }

    /// The top-level arguments of `tool`'s calls that the policies
    /// governing it check.
    #[must_use]
    pub fn waits_for(&self, tool: &str) -> Vec<&str> {
        self.policies
            .iter()
            .filter(|p| p.governs(tool))
            .filter_map(|p| p.key_parameter(tool))
            .collect()
    }

    /// Checks `call` against every policy that governs its tool, in
    /// registration order; the first denial wins.
    #[must_use]
    pub fn check_all(&self, call: &Call<'_>, ctx: &PolicyContext<'_>) -> PolicyDecision {
        for policy in self.policies.iter().filter(|p| p.governs(call.tool)) {
            let decision = policy.check(call, ctx);
            tracing::debug!(
                policy = policy.name(),
                tool = call.tool,
                allowed = matches!(decision, PolicyDecision::Allow),
                "stateful policy check"
            );
            if let PolicyDecision::Deny(denial) = decision {
                // Warn, as issue 12 asks, under its own target: the
                // terminal already shows each denial as a line of chrome,
                // so jp's default log filter leaves this target out
                // (`main.rs`); `-v` or `RUST_LOG` bring it back.
                tracing::warn!(target: DENIAL_LOG_TARGET, policy = policy.name(), tool = call.tool, reason = %denial.reason, "a stateful policy denied a tool call");
                return PolicyDecision::Deny(Denial {
                    policy: policy.name().to_owned(),
                    ..denial
                });
            }
        }
        PolicyDecision::Allow
    }

    /// Tells every policy that governs its tool that `call` succeeded.
    pub fn notify_result(&mut self, call: &Call<'_>, result: &str, ctx: &PolicyContext<'_>) {
        for policy in self.policies.iter_mut().filter(|p| p.governs(call.tool)) {
            policy.on_result(call, result, ctx);
        }
    }

    /// Every policy's state.
    #[must_use]
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the registry API of the Tool Policy Specification; jp itself rebuilds state by replaying the conversation, and tests use it"
        )
    )]
    pub fn snapshot(&self) -> Snapshot {
        Snapshot(
            self.policies
                .iter()
                .map(|p| (p.name().to_owned(), p.snapshot()))
                .collect(),
        )
    }

    /// Puts back the state of every policy from `snapshot`. A policy the
    /// snapshot does not name is left as it is.
    ///
    /// # Errors
    ///
    /// When the snapshot names a policy that is not registered or holds a
    /// state it cannot take; nothing is changed then.
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the registry API of the Tool Policy Specification; jp itself rebuilds state by replaying the conversation, and tests use it"
        )
    )]
    pub fn restore(&mut self, snapshot: &Snapshot) -> Result<(), RegistryError> {
        let states: HashMap<&str, &Value> =
            snapshot.0.iter().map(|(n, s)| (n.as_str(), s)).collect();
        if let Some(name) = states
            .keys()
            .find(|name| !self.policies.iter().any(|p| p.name() == **name))
        {
            return Err(RegistryError::Snapshot(format!("no policy named `{name}`")));
        }
        let before = self.snapshot();
        for policy in &mut self.policies {
            if let Some(state) = states.get(policy.name())
                && let Err(message) = policy.restore(state)
            {
                let name = policy.name().to_owned();
                // All or nothing: undo what was restored so far.
                for policy in &mut self.policies {
                    if let Some((_, state)) = before.0.iter().find(|(n, _)| n == policy.name()) {
                        let _ = policy.restore(state);
                    }
                }
                return Err(RegistryError::Snapshot(format!("`{name}`: {message}")));
            }
        }
        Ok(())
    }
}

/// Replays a conversation into `registry`: every call whose response says
/// it ran and succeeded is passed to [`PolicyRegistry::notify_result`],
/// with the arguments it ran with (the user's edit, when there was one)
/// and the keys recorded when it ran ([`Recording`]). A call recorded
/// without keys (by a jp before they were kept) has them resolved now
/// through `ctx.env`.
pub fn replay(
    registry: &mut PolicyRegistry,
    events: &[ConversationEvent],
    ctx: &PolicyContext<'_>,
) {
    let mut calls: HashMap<&str, (&str, &Map<String, Value>)> = HashMap::new();
    for event in events {
        match &event.kind {
            EventKind::ToolCallRequest(call) => {
                if let Ok(arguments) = call.arguments() {
                    calls.insert(call.id.as_str(), (call.name.as_str(), arguments));
                }
            }
            EventKind::ToolCallResponse(response) if response.status == ResponseStatus::Success => {
                let Some((tool, arguments)) = calls.get(response.id.as_str()) else {
                    continue;
                };
                let empty = BTreeMap::new();
                let ran = response.ran.as_ref();
                let arguments = ran.and_then(|r| r.arguments.as_ref()).unwrap_or(arguments);
                let env = Recorded {
                    keys: ran.map_or(&empty, |r| &r.keys),
                    live: ctx.env,
                };
                let replayed = PolicyContext { env: &env, ..*ctx };
                registry.notify_result(&Call { tool, arguments }, &response.content, &replayed);
            }
            _ => {}
        }
    }
}

/// Keys as they were when a call ran (by pointer), else from `live`.
struct Recorded<'a> {
    keys: &'a BTreeMap<String, String>,
    live: &'a dyn PolicyEnv,
}

impl PolicyEnv for Recorded<'_> {
    fn key(&self, tool: &str, pointer: &str, value: &Value) -> Result<Key, String> {
        match self.keys.get(pointer) {
            // Replay only learns; whether the key was a path matters only
            // to a check.
            Some(text) => Ok(Key {
                text: text.clone(),
                is_path: false,
            }),
            None => self.live.key(tool, pointer, value),
        }
    }

    fn file_exists(&self, key: &Key) -> bool {
        self.live.file_exists(key)
    }
}

/// A [`PolicyEnv`] that notes every key `inner` makes, by pointer, so what
/// a call taught the policies can be stored with its response and
/// replayed exactly.
pub struct Recording<'a> {
    inner: &'a dyn PolicyEnv,
    keys: RefCell<BTreeMap<String, String>>,
}

impl<'a> Recording<'a> {
    /// Records what `inner` answers.
    #[must_use]
    pub fn new(inner: &'a dyn PolicyEnv) -> Self {
        Self {
            inner,
            keys: RefCell::new(BTreeMap::new()),
        }
    }

    /// The keys made, by pointer.
    #[must_use]
    pub fn into_keys(self) -> BTreeMap<String, String> {
        self.keys.into_inner()
    }
}

impl PolicyEnv for Recording<'_> {
    fn key(&self, tool: &str, pointer: &str, value: &Value) -> Result<Key, String> {
        let key = self.inner.key(tool, pointer, value)?;
        self.keys
            .borrow_mut()
            .insert(pointer.to_owned(), key.text.clone());
        Ok(key)
    }

    fn file_exists(&self, key: &Key) -> bool {
        self.inner.file_exists(key)
    }
}
