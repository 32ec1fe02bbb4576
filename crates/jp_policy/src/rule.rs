//! A compiled rule ([`Rule`]) and a problem found in a policy's rules
//! ([`PolicyIssue`]): what the compiler produces and the unreachable-rule
//! check reads.

use std::fmt;

use super::matcher::Condition;
use super::spec::{Mode, PolicyField};

/// One compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule's index as written (0-based). A mode string (`run = "ask"`)
    /// is one catch-all rule with index 0.
    pub index: usize,
    /// What the rule looks at; `None` for a catch-all.
    pub condition: Option<Condition>,
    /// The mode when this rule is the first that matches.
    pub mode: Mode,
}

impl Rule {
    /// The rule's condition as written (`prefix "src/" on /path`), or
    /// `catch-all`.
    #[must_use]
    pub fn describe(&self) -> String {
        self.condition
            .as_ref()
            .map_or_else(|| "catch-all".to_owned(), Condition::describe)
    }

    /// Whether the rule matches every call.
    #[must_use]
    pub fn is_catch_all(&self) -> bool {
        self.condition.is_none()
    }
}

/// A problem with a policy: an error makes it unusable, a warning does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyIssue {
    /// The field the policy is in.
    pub field: PolicyField,
    /// The rule's index as written (0-based), or `None` for the policy as a
    /// whole.
    pub rule: Option<usize>,
    /// What is wrong, without the location.
    pub message: String,
}

impl fmt::Display for PolicyIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rule {
            Some(i) => write!(f, "{}[{i}]: {}", self.field, self.message),
            None => write!(f, "{}: {}", self.field, self.message),
        }
    }
}

impl std::error::Error for PolicyIssue {}
