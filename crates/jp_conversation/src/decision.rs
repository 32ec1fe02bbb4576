//! How jp decided one tool call, as the conversation keeps it
//! ([`EventKind::CallDecision`](crate::EventKind::CallDecision)): the rule
//! that decided, how much of the arguments had arrived by then, and who
//! settled it. Read by `jp conversation decisions` and written to the JSON
//! event stream; never sent to the model.

use serde::{Deserialize, Serialize};

/// How one call was decided. Recorded just before the call's response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallDecision {
    /// The call's id.
    pub call_id: String,
    /// Its tool.
    pub tool: String,
    /// The `policy.run` mode that applied (`unattended`, `ask`, `edit`,
    /// `skip`); `None` when jp refused the call before any policy looked
    /// at it (an unknown tool, a value that can never run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The rule that decided; `None` with a mode: no rule matched and the
    /// implicit `ask` applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleSource>,
    /// How many bytes of the arguments had arrived when it was decided;
    /// `None`: once they were complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_byte: Option<usize>,
    /// How many bytes of the arguments arrived in all.
    pub bytes: usize,
    /// Who settled it.
    pub by: DecidedBy,
    /// How, in a word or two: the user's answer (`run`, `allow for this
    /// session`, `edit`, `decline`), the stateful policy that denied it,
    /// what jp refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub how: Option<String>,
}

/// Where the rule that decided a call is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSource {
    /// The rule's index in `policy.run`, as written.
    pub index: usize,
    /// The config key of the policy (`conversation.tools.NAME.policy.run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The file (or layer: `--cfg`, an environment variable) it was read
    /// from then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Its line in that file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// Who settled a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// Its policy, without asking: `unattended`, `skip`.
    Policy,
    /// The user, at a question.
    User,
    /// An "allow for this session" approval given earlier.
    Session,
    /// Its policy asks, and no one could be asked: declined.
    NoTerminal,
    /// A stateful policy (`conversation.policies`) denied it.
    Stateful,
    /// A `before_tool` hook declined it.
    Hook,
    /// jp refused it: an unknown tool, a value that can never run,
    /// arguments over the limit, a policy that could not be evaluated.
    Jp,
    /// The user interrupted the turn before it ran.
    Interrupted,
}

impl DecidedBy {
    /// The word shown to users.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Policy => "policy",
            Self::User => "user",
            Self::Session => "session approval",
            Self::NoTerminal => "no terminal",
            Self::Stateful => "stateful policy",
            Self::Hook => "hook",
            Self::Jp => "jp",
            Self::Interrupted => "interrupted",
        }
    }
}
