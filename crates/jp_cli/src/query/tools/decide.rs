//! Whether a call may run (RFD D25 `policy.run`): while its arguments
//! stream (RFD D26) and once they are complete (architecture decision 7).

use jp_config::tool::check_arguments;
use jp_conversation::{ResponseStatus, ToolCallRequest, ToolCallResponse};
use jp_policy::{Decision, Mode, PolicyField, PolicyWatch, StreamingPolicyState};
use serde_json::Value;

use super::ToolCoordinator;
use crate::query::arguments::Arguments;
use crate::query::decision::{
    Answer, Ask, Decided, Verdict, no_terminal, not_run, skipped, too_large,
};
#[cfg(test)]
use jp_term::prompt::Prompts;

impl ToolCoordinator<'_> {
    /// Decides whether `call` may run: a verdict now, or a prompt to put
    /// to the user ([`ToolCoordinator::confirm`]). Without a way to prompt
    /// (`prompts` unavailable), what would ask is declined.
    #[cfg(test)]
    pub fn decide(&self, call: &ToolCallRequest, prompts: &Prompts) -> Decided {
        self.decide_after(call, prompts.available(), None)
    }

    /// [`decide`](Self::decide) for a call about which something was
    /// decided while it streamed (`early`). The complete arguments are
    /// checked and evaluated once more (architecture decision 7): a refusal
    /// or a stricter mode wins; an approval stands only if they would still
    /// ask at most. Without anyone to ask (`can_ask` false), what would ask
    /// is declined.
    pub fn decide_after(
        &self,
        call: &ToolCallRequest,
        can_ask: bool,
        early: Option<Answer>,
    ) -> Decided {
        let name = call.name.as_str();
        // Declined, skipped or interrupted while it streamed: it ended then,
        // with only part of its arguments.
        let early = match early {
            // It answers the call as recorded, whose id may have been
            // changed since it started (a repeated id).
            Some(Answer::NotRun(Verdict::NotRun { response, note })) => {
                return Decided::Now(Verdict::NotRun {
                    response: ToolCallResponse {
                        id: call.id.clone(),
                        ..response
                    },
                    note,
                });
            }
            early => early,
        };
        let value = match self.admissible(call) {
            Ok(value) => value,
            Err(verdict) => return Decided::Now(*verdict),
        };
        let batch = match self.evaluate(name, PolicyField::Run, value) {
            Ok(decision) => decision,
            Err(error) => {
                return Decided::Now(not_run(
                    call,
                    ResponseStatus::Refused,
                    "The call was not run because jp could not evaluate its policy.".into(),
                    format!("{name}: refused: {error}"),
                ));
            }
        };
        let (decision, approved) = match early {
            None => (batch, false),
            Some(Answer::NotRun(verdict)) => return Decided::Now(verdict),
            // Decided while streaming: the stricter of then and now.
            Some(Answer::Policy(decision)) if decision.mode > batch.mode => (decision, false),
            Some(Answer::Policy(_)) => (batch, false),
            // Approved while streaming: it stands unless the complete
            // arguments call for more than a question.
            Some(Answer::Run { decision }) if batch.mode <= Mode::Ask => (decision, true),
            Some(Answer::Run { .. }) => (batch, false),
            Some(Answer::Edit { decision }) => {
                if batch.mode == Mode::Skip {
                    (batch, false)
                } else {
                    (
                        Decision {
                            mode: Mode::Edit,
                            ..decision
                        },
                        false,
                    )
                }
            }
        };
        let decision = self.with_early_allow(decision, approved, call, value);
        // An approval of this rule, in its scope, inside the workspace.
        let session = (decision.mode == Mode::Ask && !approved)
            .then(|| self.session_allows(name, value, decision.mode, decision.rule))
            .flatten();
        let rule = decision.rule;
        let why = decision.reason;
        let Some(arguments) = value.as_object() else {
            return Decided::Now(not_run(
                call,
                ResponseStatus::Refused,
                "The call was not run because its arguments are not an object.".into(),
                format!("{name}: refused: the arguments are not an object"),
            ));
        };
        match decision.mode {
            Mode::Unattended => Decided::Now(Verdict::Run {
                tool: name.to_owned(),
                arguments: Arguments::of(call),
                edited: false,
                mode: Mode::Unattended,
                reason: why,
                approved: false,
            }),
            Mode::Ask if approved => Decided::Now(Verdict::Run {
                tool: name.to_owned(),
                arguments: Arguments::of(call),
                edited: false,
                mode: Mode::Ask,
                reason: why,
                approved: true,
            }),
            Mode::Ask if let Some(reason) = session => Decided::Now(Verdict::Run {
                tool: name.to_owned(),
                arguments: Arguments::of(call),
                edited: false,
                mode: Mode::Ask,
                reason,
                approved: true,
            }),
            Mode::Skip => Decided::Now(skipped(&call.id, name, &why)),
            Mode::Ask | Mode::Edit if !can_ask => {
                let advice =
                    self.narrow_advice(name, PolicyField::Run, decision.rule, &|key: &str| {
                        arguments.get(key).cloned()
                    });
                Decided::Now(no_terminal(&call.id, name, decision.mode, &why, &advice))
            }
            mode @ (Mode::Ask | Mode::Edit) => Decided::Ask(Ask {
                call: call.clone(),
                arguments: Arguments::of(call),
                mode,
                why,
                rule,
                session: self.rule_asks(name, rule),
            }),
        }
    }

    /// `decision` for a complete `call` (with `value`) that was `approved`
    /// while it streamed: when that was `a`, the approval is recorded with
    /// the complete call's scope, and the reason says it.
    fn with_early_allow(
        &self,
        mut decision: Decision,
        approved: bool,
        call: &ToolCallRequest,
        value: &Value,
    ) -> Decision {
        if approved && let Some(reason) = self.settle_early_allow(&call.id, &call.name, value) {
            decision.reason = reason;
        }
        decision
    }

    /// The call's arguments as an object, when they are usable and fit the
    /// tool's parameters; otherwise the verdict refusing it. Borrowed, not
    /// copied: a call's arguments can be megabytes (issue 14).
    pub(super) fn admissible<'c>(
        &self,
        call: &'c ToolCallRequest,
    ) -> Result<&'c Value, Box<Verdict>> {
        let name = call.name.as_str();
        let Some(tool) = self.tool(name) else {
            return Err(Box::new(self.no_such_tool(&call.id, name)));
        };
        let arguments = match call.arguments_value() {
            Ok(arguments) => arguments,
            Err(error) => {
                return Err(Box::new(not_run(
                    call,
                    ResponseStatus::Refused,
                    format!("The call was not run because its arguments are unusable: {error}."),
                    format!("{name}: refused: {error}"),
                )));
            }
        };
        if let Err(issues) = check_arguments(&tool.parameters, arguments) {
            let list = issues
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ");
            return Err(Box::new(not_run(
                call,
                ResponseStatus::Refused,
                format!(
                    "The call was not run because its arguments do not fit the tool's parameters: {list}."
                ),
                format!("{name}: refused: the arguments do not fit its parameters: {list}"),
            )));
        }
        Ok(arguments)
    }

    /// The refusal of a call (`id`) to `name` when no tool of that name is
    /// offered: `None` when one is. Such a call can never run, so it is
    /// refused as soon as its name is known (issue 21).
    pub fn not_offered(&self, id: &str, name: &str) -> Option<Verdict> {
        self.tool(name)
            .is_none()
            .then(|| self.no_such_tool(id, name))
    }

    pub(super) fn no_such_tool(&self, id: &str, name: &str) -> Verdict {
        let available = self.available_tools();
        Verdict::NotRun {
            response: ToolCallResponse::new(
                id,
                ResponseStatus::Refused,
                format!("There is no tool named `{name}`. Available tools: {available}."),
            ),
            note: format!("{name}: refused: no such tool is configured"),
        }
    }

    /// The refusal of a call (`id`) to `name` whose arguments, as they
    /// stream, already hold a value its parameters refuse, at `path`
    /// (`leaf` is what arrived there): a complete scalar (or empty value)
    /// of the wrong type or out of range (`1e2` for an `integer`), or a
    /// piece of a string holding NUL where the parameters make it a
    /// `path`. Such a call can never run, so it is refused there, before
    /// any policy looks at it (architecture decision 3), with the message
    /// the check of the complete arguments would give. `None` otherwise,
    /// and for a value that is no parameter (refused when complete).
    pub fn refused_while_streaming(
        &self,
        id: &str,
        name: &str,
        path: jp_conversation::FragmentPath<'_>,
        leaf: jp_conversation::Leaf<'_>,
    ) -> Option<Verdict> {
        use jp_conversation::{Leaf, PathSegment};
        let value = match leaf {
            Leaf::Scalar(scalar) => Value::from(scalar.clone()),
            Leaf::Empty(kind) => kind.value(),
            Leaf::String(text) if text.contains('\0') => Value::String(text.to_owned()),
            Leaf::String(_) | Leaf::Done => return None,
        };
        let tool = self.tool(name)?;
        let mut param: Option<&jp_config::tool::ToolParameterConfig> = None;
        let mut at = Vec::new();
        for segment in path.iter() {
            param = match (param, segment) {
                (None, PathSegment::Key(key)) => tool.parameters.get(key),
                (Some(p), PathSegment::Key(key)) => p.properties.get(key),
                (Some(p), PathSegment::Index(_)) => p.items.as_deref(),
                (None, PathSegment::Index(_)) => None,
            };
            param?;
            at.push(match segment {
                PathSegment::Key(key) => key.to_owned(),
                PathSegment::Index(index) => index.to_string(),
            });
        }
        let param = param?;
        if matches!(leaf, Leaf::String(_)) && param.kind != jp_config::tool::ParamType::Path {
            // A piece of a string says nothing of its type until it is
            // whole; only a path cannot hold NUL.
            return None;
        }
        let issues = jp_config::tool::check_value_at(param, &value, at);
        if issues.is_empty() {
            return None;
        }
        let list = issues
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        Some(Verdict::NotRun {
            response: ToolCallResponse::new(
                id,
                ResponseStatus::Refused,
                format!(
                    "The call was not run because its arguments do not fit the tool's parameters: {list}."
                ),
            ),
            note: format!("{name}: refused: the arguments do not fit its parameters: {list}"),
        })
    }

    /// Starts deciding a call of `name` as its arguments stream: its
    /// policy's decision at once when the policy needs no arguments (a
    /// mode string, a first catch-all), a watch otherwise. `None` for a
    /// tool that is not offered (refused when it completes).
    pub fn watch(&self, name: &str) -> Option<Result<Decision, PolicyWatch>> {
        self.tool(name)?;
        let policy = self.policy(name, PolicyField::Run)?;
        let state = StreamingPolicyState::new(policy);
        Some(match state.decision() {
            Some(decision) => Ok(decision.clone()),
            None => Err(PolicyWatch::new(state)),
        })
    }

    /// What to do about a call (`id`, `name`) whose policy decided while
    /// its arguments stream: the decision to act on (`unattended` or `edit`
    /// kept for when the arguments are complete, `ask` to ask now), or the
    /// verdict that it will not run (`skip`; `ask` or `edit` when no one
    /// can be asked, `can_ask` false). `known` gives each top-level
    /// argument that has arrived.
    pub fn early(
        &self,
        id: &str,
        name: &str,
        decision: Decision,
        can_ask: bool,
        known: &dyn Fn(&str) -> Option<Value>,
    ) -> Result<Decision, Box<Verdict>> {
        match decision.mode {
            Mode::Skip => Err(Box::new(skipped(id, name, &decision.reason))),
            // Decision 6: without a prompt `edit` is declined like `ask`,
            // and now, so the rest of the call is not paid for; unless the
            // user allowed this rule for the session (decided once the
            // call is complete, when its paths are known).
            mode @ (Mode::Ask | Mode::Edit)
                if !can_ask && !self.session_covers(name, mode, decision.rule) =>
            {
                let advice = self.narrow_advice(name, PolicyField::Run, decision.rule, known);
                Err(Box::new(no_terminal(
                    id,
                    name,
                    mode,
                    &decision.reason,
                    &advice,
                )))
            }
            Mode::Unattended | Mode::Edit | Mode::Ask => Ok(decision),
        }
    }

    /// The verdict for a call (`id`) to `name` whose arguments grew past
    /// `limit` bytes: refused while it streamed, naming the key that sets
    /// the limit.
    #[must_use]
    pub fn too_large(&self, id: &str, name: &str, limit: usize) -> Verdict {
        let key =
            jp_config::tool::limits::argument_limit(&self.config.conversation.tools, name).key;
        too_large(id, name, limit, &key)
    }
}
