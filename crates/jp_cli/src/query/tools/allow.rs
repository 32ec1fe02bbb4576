//! "Allow for this session" (`a` at a call's prompt, issue 25): the user
//! approves this call and every later call of the same tool, in this
//! conversation, that the same `policy.run` rule asks about. The approval
//! is an event of the conversation ([`EventKind::SessionApproval`]), never
//! config; `jp conversation forget-approvals` ends every one of them.
//!
//! It never reaches further than an `unattended` rule could: a call one of
//! whose `path` arguments leaves the workspace (as written, or with links
//! followed) is still asked about, and so is a call whose policy turns
//! stricter by its start ([`ToolCoordinator::recheck`]).

use std::sync::PoisonError;

use jp_config::policy::{Mode, PolicyField};
use jp_conversation::{EventKind, SessionApproval};
use serde_json::Value;

use super::ToolCoordinator;

/// How the reason of a call a session approval let run begins.
pub const SESSION_APPROVED: &str = "approved for this session";

impl ToolCoordinator<'_> {
    /// How `decision`'s rule of `name`'s `policy.run` reads now, to tell
    /// it from a different rule at the same index after a config change.
    pub(super) fn rule_text(&self, name: &str, rule: Option<usize>) -> String {
        let Some(index) = rule else {
            return "no rule matched".to_owned();
        };
        self.policy(name, PolicyField::Run)
            .and_then(|policy| {
                policy
                    .rules()
                    .iter()
                    .find(|r| r.index == index)
                    .map(jp_config::policy::Rule::describe)
            })
            .unwrap_or_else(|| "a rule that no longer exists".to_owned())
    }

    /// Whether `rule` of `name`'s `policy.run` (`None`: the implicit
    /// fallback) decides `ask`: only such a rule can be allowed for the
    /// session (a call the user chose to edit first still can).
    pub(super) fn rule_asks(&self, name: &str, rule: Option<usize>) -> bool {
        let Some(index) = rule else {
            return true;
        };
        self.policy(name, PolicyField::Run).is_some_and(|policy| {
            policy
                .rules()
                .iter()
                .any(|r| r.index == index && r.mode == Mode::Ask)
        })
    }

    /// Records that the user allowed, for the rest of the conversation,
    /// the calls of `name` that `rule` asks about (answering `a` at call
    /// `call_id`).
    pub fn allow_for_session(&self, call_id: &str, name: &str, rule: Option<usize>) {
        let approval = SessionApproval {
            call_id: call_id.to_owned(),
            tool: name.to_owned(),
            rule,
            rule_text: self.rule_text(name, rule),
            // Sealed when it is recorded, with the conversation's id.
            seal: None,
        };
        let mut approvals = self
            .approvals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        approvals
            .unrecorded
            .push(EventKind::SessionApproval(approval.clone()));
        approvals.active.push(approval);
    }

    /// The approvals given in this query that are not recorded yet, for
    /// the conversation's log.
    pub fn take_unrecorded(&self) -> Vec<EventKind> {
        std::mem::take(
            &mut self
                .approvals
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .unrecorded,
        )
    }

    /// Whether a session approval covers a call of `name` that `rule` of
    /// its `policy.run` decided `mode` for: an `ask` by the rule the user
    /// allowed (reading as it did then). Its arguments are not looked at:
    /// see [`session_allows`](Self::session_allows).
    pub fn session_covers(&self, name: &str, mode: Mode, rule: Option<usize>) -> bool {
        if mode != Mode::Ask {
            return false;
        }
        let text = self.rule_text(name, rule);
        self.approvals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .active
            .iter()
            .any(|a| a.tool == name && a.rule == rule && a.rule_text == text)
    }

    /// Why a complete call of `name` with `arguments`, which `rule` asks
    /// about (`mode`), runs without a prompt: a session approval covers it
    /// and every `path` argument stays inside the workspace, as written
    /// and with links followed. `None` when it must be asked.
    pub(super) fn session_allows(
        &self,
        name: &str,
        arguments: &Value,
        mode: Mode,
        rule: Option<usize>,
    ) -> Option<String> {
        if !self.session_covers(name, mode, rule) || self.leaves_workspace(name, arguments) {
            return None;
        }
        let rule = rule.map_or_else(
            || "no rule of policy.run".to_owned(),
            |r| format!("policy.run[{r}]"),
        );
        Some(format!("{SESSION_APPROVED} ({rule} matched)"))
    }

    /// Whether a `path` argument of a call of `name` leads out of the
    /// workspace (or cannot be resolved).
    pub(super) fn leaves_workspace(&self, name: &str, arguments: &Value) -> bool {
        self.path_forms(name, arguments)
            .iter()
            .any(|(_, forms)| !forms.is_inside())
    }
}

#[cfg(test)]
#[path = "allow_tests.rs"]
mod tests;
