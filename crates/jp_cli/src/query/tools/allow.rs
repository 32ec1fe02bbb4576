//! "Allow for this session" (`a` at a call's prompt, issue 25): the user
//! approves this call and the later calls of the same tool, in this
//! conversation, that the same `policy.run` rule asks about and that the
//! approval's scope covers: what the call showed, never the whole rule
//! ([`scope`](super::scope), issue 34). The approval
//! is an event of the conversation ([`EventKind::SessionApproval`]), never
//! config; `jp conversation forget-approvals` ends every one of them.
//!
//! It never reaches further than an `unattended` rule could: a call one of
//! whose `path` arguments leaves the workspace (as written, or with links
//! followed) is still asked about, and so is a call whose policy turns
//! stricter by its start ([`Runner::recheck`](super::Runner)), and a call
//! that is held ([`Judge::held`]: no sandbox, or a change where there is
//! no workspace).
//!
//! The [`Judge`] also resolves a call's `path` arguments here, as an
//! approval's scope and the checks at a tool's start see them.

use std::sync::PoisonError;

use jp_conversation::{ApprovalScope, EventKind, SessionApproval};
use jp_policy::Workspace;
use jp_policy::path::PathValue;
use jp_policy::{Mode, PolicyField};
use serde_json::Value;

use super::judge::{Judge, Pending};
use super::scope::{self, Kind};
use jp_tools::DefaultTool;

/// How the reason of a call a session approval let run begins.
pub const SESSION_APPROVED: &str = "approved for this session";

impl Judge<'_> {
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
                    .map(jp_policy::Rule::describe)
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

    /// Which of jp's own tools `name` runs, for its approvals' scope.
    fn scope_kind(&self, name: &str) -> Kind {
        // jp's file tools: an approval at one of them covers paths in the
        // same directory ([`scope`](super::scope)).
        match self.default_tool(name) {
            Some(DefaultTool::RunCommand) => Kind::Command,
            Some(tool) if tool.is_file_tool() => Kind::Files,
            _ => Kind::Other,
        }
    }

    /// What an approval given at a call of `name` with `arguments` covers
    /// ([`scope`](super::scope)).
    pub(super) fn scope_for(&self, name: &str, arguments: &Value) -> ApprovalScope {
        let Some(map) = arguments.as_object() else {
            return ApprovalScope::Call {
                arguments: arguments.clone(),
            };
        };
        let paths = self.argument_paths(name, arguments);
        scope::scope_of(self.scope_kind(name), map, &paths)
    }

    /// `name`'s path arguments in `arguments`, resolved.
    fn argument_paths(&self, name: &str, arguments: &Value) -> Vec<PathValue> {
        self.path_forms(name, arguments)
            .into_iter()
            .map(|(_, forms)| forms)
            .collect()
    }

    /// What `a` says at the prompt of a complete call of `name` with
    /// `arguments`: the scope it would allow.
    pub(super) fn allow_help(&self, name: &str, arguments: &Value) -> String {
        let scope = scope::describe(&self.scope_for(name, arguments), name);
        format!(
            "allow {scope} for this session: run it, and, in this conversation, later calls that this covers and that the same policy rule asks about, unless a path leaves the workspace (`jp conversation forget-approvals` undoes it)"
        )
    }

    /// Records that the user allowed, for the rest of the conversation,
    /// the calls of `name` that `rule` asks about and that the scope of
    /// the call (`call_id`, with `arguments`) they answered `a` at covers.
    /// Returns the reason the call runs for (`why` the policy asked).
    pub fn allow_for_session(
        &self,
        call_id: &str,
        name: &str,
        rule: Option<usize>,
        arguments: &Value,
        why: &str,
    ) -> String {
        let scope = self.scope_for(name, arguments);
        self.allow_scope(call_id, name, rule, scope, why)
    }

    /// Records an approval of `scope`, given at call `call_id` of `name`
    /// that `rule` asked about (`why`); the reason the call runs for.
    fn allow_scope(
        &self,
        call_id: &str,
        name: &str,
        rule: Option<usize>,
        scope: ApprovalScope,
        why: &str,
    ) -> String {
        let reason = allowed_from_here(&scope::describe(&scope, name), why);
        let approval = SessionApproval {
            call_id: call_id.to_owned(),
            tool: name.to_owned(),
            rule,
            rule_text: self.rule_text(name, rule),
            scope: Some(scope),
            // Its generation and seal are added when it is recorded
            // ([`crate::ledger::Ledger::seal_approval`]).
            epoch: None,
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
        reason
    }

    /// `a` at a call (`call_id`) of `name` whose arguments still stream:
    /// recorded once it is complete
    /// ([`settle_early_allow`](Self::settle_early_allow)), with the scope
    /// of the complete call when the prompt showed it whole and named that
    /// scope, and for the identical call only when it was answered
    /// `exact`ly before (the user had not seen what calls like it are).
    pub fn allow_once_complete(
        &self,
        call_id: &str,
        name: &str,
        rule: Option<usize>,
        why: &str,
        exact: bool,
    ) {
        self.approvals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pending
            .push(Pending {
                call_id: call_id.to_owned(),
                tool: name.to_owned(),
                rule,
                why: why.to_owned(),
                exact,
            });
    }

    /// Records the approval given at call `call_id` while it streamed, now
    /// that its `arguments` are complete; the reason it runs for. `None`
    /// when no `a` was answered at it.
    pub(super) fn settle_early_allow(
        &self,
        call_id: &str,
        name: &str,
        arguments: &Value,
    ) -> Option<String> {
        let pending = {
            let mut approvals = self
                .approvals
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let at = approvals
                .pending
                .iter()
                .position(|p| p.call_id == call_id)?;
            approvals.pending.remove(at)
        };
        let scope = if pending.exact {
            ApprovalScope::Call {
                arguments: arguments.clone(),
            }
        } else {
            self.scope_for(name, arguments)
        };
        Some(self.allow_scope(call_id, name, pending.rule, scope, &pending.why))
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

    /// Why a call of `name` is held: asked every time, whatever its policy
    /// says, and covered by no session approval. It would run without the
    /// kernel's part of its sandbox ([`Self::unbounded`]), or it may change
    /// something where there is no workspace ([`crate::place::asked`]).
    /// Words that follow "but" in the reason of its decision.
    #[must_use]
    pub fn held(&self, name: &str) -> Option<String> {
        if let Some(why) = self.unbounded(name) {
            return Some(format!("it would run without a sandbox ({why})"));
        }
        crate::place::asked(crate::place::here(), self.default_tool(name)).map(str::to_owned)
    }

    /// Whether a session approval may cover a call of `name` that `rule`
    /// of its `policy.run` decided `mode` for: an `ask` by the rule the
    /// user allowed (reading as it did then). Its arguments are not looked
    /// at: whether one covers them is decided once they are complete
    /// ([`session_allows`](Self::session_allows)).
    pub fn session_covers(&self, name: &str, mode: Mode, rule: Option<usize>) -> bool {
        if mode != Mode::Ask {
            return false;
        }
        let text = self.rule_text(name, rule);
        let approvals = self
            .approvals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        approvals
            .active
            .iter()
            .any(|a| a.tool == name && a.rule == rule && a.rule_text == text)
            || approvals
                .pending
                .iter()
                .any(|p| p.tool == name && p.rule == rule)
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
        if mode != Mode::Ask || self.leaves_workspace(name, arguments) {
            return None;
        }
        let map = arguments.as_object()?;
        let text = self.rule_text(name, rule);
        let paths = self.argument_paths(name, arguments);
        let kind = self.scope_kind(name);
        let covered = self
            .approvals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .active
            .iter()
            .any(|a| {
                a.tool == name
                    && a.rule == rule
                    && a.rule_text == text
                    && a.scope.as_ref().is_some_and(|scope| {
                        scope::fits(scope, kind) && scope::covers(scope, map, &paths)
                    })
            });
        if !covered {
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

    /// Where each `path` argument of a call to `name` leads now: its JSON
    /// pointer and its target with links followed (`src/x`, `/tmp/x`, or
    /// why it cannot be resolved), in the order of the arguments.
    #[must_use]
    pub fn path_targets(&self, name: &str, arguments: &Value) -> Vec<(String, String)> {
        self.path_forms(name, arguments)
            .into_iter()
            .map(|(at, forms)| (at, forms.target()))
            .collect()
    }

    /// What the question about a call to `name` says of each `path`
    /// argument that does not open the file it names (through a link, or a
    /// `..` after one): `path "k/../notes.txt" opens /home/u/.ssh/notes.txt
    /// (a tool that removes ".." before following links opens notes.txt)`.
    /// jp's own tools open exactly the file named first.
    #[must_use]
    pub fn path_notes(&self, name: &str, arguments: &Value) -> Vec<String> {
        self.path_values(name, arguments)
            .into_iter()
            .filter_map(|(at, text, forms)| {
                let opens = forms.opens()?;
                let at = at.strip_prefix('/').unwrap_or(&at);
                Some(format!("{at} {} {opens}", Value::String(text)))
            })
            .collect()
    }

    /// [`Self::path_notes`] for a call whose arguments still stream:
    /// `known` gives each top-level argument that has arrived.
    #[must_use]
    pub fn path_notes_known(
        &self,
        name: &str,
        known: &dyn Fn(&str) -> Option<Value>,
    ) -> Vec<String> {
        let Some(tool) = self.tool(name) else {
            return Vec::new();
        };
        let arrived: serde_json::Map<String, Value> = tool
            .parameters
            .keys()
            .filter_map(|key| Some((key.clone(), known(key)?)))
            .collect();
        self.path_notes(name, &Value::Object(arrived))
    }

    /// Each `path` argument of a call to `name`: its JSON pointer and both
    /// of its forms, in the order of the arguments.
    pub(super) fn path_forms(&self, name: &str, arguments: &Value) -> Vec<(String, PathValue)> {
        self.path_values(name, arguments)
            .into_iter()
            .map(|(at, _, forms)| (at, forms))
            .collect()
    }

    /// Each `path` argument of a call to `name`: its JSON pointer, its text
    /// and its forms, in the order of the arguments.
    fn path_values(&self, name: &str, arguments: &Value) -> Vec<(String, String, PathValue)> {
        fn walk(
            param: &jp_config::tool::ToolParameterConfig,
            value: &Value,
            at: &mut Vec<String>,
            workspace: &Workspace,
            out: &mut Vec<(String, String, PathValue)>,
        ) {
            match (param.kind, value) {
                (jp_config::tool::ParamType::Path, Value::String(text)) => {
                    let Ok(forms) = jp_policy::path::resolve_path(text, workspace) else {
                        return;
                    };
                    out.push((format!("/{}", at.join("/")), text.clone(), forms));
                }
                (_, Value::Array(items)) => {
                    if let Some(item) = param.items.as_deref() {
                        for (i, element) in items.iter().enumerate() {
                            at.push(i.to_string());
                            walk(item, element, at, workspace, out);
                            at.pop();
                        }
                    }
                }
                (_, Value::Object(members)) => {
                    for (key, member) in members {
                        if let Some(param) = param.properties.get(key) {
                            at.push(key.clone());
                            walk(param, member, at, workspace, out);
                            at.pop();
                        }
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        let (Some(tool), Value::Object(members)) = (self.tool(name), arguments) else {
            return out;
        };
        for (key, member) in members {
            if let Some(param) = tool.parameters.get(key) {
                walk(
                    param,
                    member,
                    &mut vec![key.clone()],
                    &self.workspace,
                    &mut out,
                );
            }
        }
        out
    }
}

/// What the call the user answered `a` at says it ran for: that later
/// calls within `scope` that the same rule asks about run unasked, and
/// `why` the policy asked.
pub fn allowed_from_here(scope: &str, why: &str) -> String {
    format!("{SESSION_APPROVED} from this call on, for {scope} ({why})")
}

#[cfg(test)]
#[path = "allow_tests.rs"]
mod tests;
