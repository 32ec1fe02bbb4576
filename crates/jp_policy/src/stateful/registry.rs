//! The [`PolicyRegistry`]: the policies of one conversation, checked in
//! registration order, the first denial being the answer.

use std::collections::HashMap;

use serde_json::Value;

use super::policy::{Call, Denial, PolicyContext, PolicyDecision, ToolPolicy};

/// The `tracing` target of the warning logged for each denial.
pub const DENIAL_LOG_TARGET: &str = "jp::stateful::denial";

/// The state of every policy of a registry, by name.
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "the registry API of the Tool Policy Specification; jp itself rebuilds state by replaying the conversation, and tests use it"
    )
)]
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot(pub(super) Vec<(String, Value)>);

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
                // (`init_logging` in `lib.rs`); `-v` or `RUST_LOG` bring it back.
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
