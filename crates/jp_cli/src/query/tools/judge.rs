//! The [`Judge`]: whether a tool call may run (RFD D25 `policy.run`) and
//! whether its result reaches the model (`policy.result`), decided on the
//! call alone, with no terminal: while its arguments stream (RFD D26,
//! [`Judge::early`]) and once they are complete (architecture decision 7,
//! [`Judge::decide_after`]), with the stateful policies and the session
//! approvals in force ([`super::allow`]); and, for a call refused without a
//! terminal, how to let such a call run ([`Judge::narrow_advice`]). Its
//! verdicts are data: putting a question to the user is the
//! [`Asker`](super::Asker)'s, running a call the [`Runner`](super::Runner)'s.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use jp_config::AppConfig;
use jp_config::tool::effective::effective_policy;
use jp_config::tool::{ToolConfig, offered};
use jp_conversation::{
    ConversationEvent, EventKind, ResponseStatus, SessionApproval, ToolCallRequest,
    ToolCallResponse,
};
use jp_policy::stateful::Denial;
use jp_policy::{
    Decision, Mode, Policy, PolicyField, PolicyWatch, StreamingPolicyState, Workspace,
};
use jp_tools::DefaultTool;
use serde_json::{Map, Value};

use crate::query::arguments::Arguments;
use crate::query::decision::{
    Answer, Ask, Decided, Verdict, denied, no_terminal, not_run, skipped, too_large,
};
use crate::stateful::{SetupError, StatefulPolicies};
#[cfg(test)]
use jp_term::prompt::Prompts;

/// Which of jp's own default tools `tool` runs (`jp tool fs_modify_file`),
/// whatever it is called: only then does jp know what a call does with
/// its arguments.
#[must_use]
pub fn default_tool(tool: &ToolConfig) -> Option<DefaultTool> {
    match tool.command.as_ref()?.argv().as_slice() {
        [jp, sub, name] if jp == "jp" && sub == "tool" => DefaultTool::named(name),
        _ => None,
    }
}

/// Why a call of tool `name`, working in the workspace at `root`, would
/// run without the kernel's sandbox keeping what it must (its
/// `sandbox.none`, a kernel that cannot enforce it, or a workspace that
/// holds a secret place), if it would; `None` for a tool of an MCP server
/// over HTTP, which runs no process of jp's, and for a tool `config` does
/// not have.
#[must_use]
pub fn unbounded(config: &AppConfig, root: &Path, name: &str) -> Option<String> {
    let sandbox = jp_config::sandbox::of_call(config, name)?;
    jp_llm::tool::unbounded_in(&sandbox, root)
}

/// What was decided about a call while it streamed (`early`), with what
/// its complete arguments decide (`now`, architecture decision 7): the
/// decision that stands and whether the user approved it, or the verdict
/// an early answer ended the call with. A policy's early decision and
/// `now` give the stricter of the two; an approval stands unless the
/// complete arguments call for more than a question; an early `e` opens
/// the editor unless they are skipped now.
fn with_early(early: Option<Answer>, now: Decision) -> Result<(Decision, bool), Box<Verdict>> {
    Ok(match early {
        None => (now, false),
        Some(Answer::NotRun(verdict)) => return Err(Box::new(verdict)),
        Some(Answer::Policy(decision)) if decision.mode > now.mode => (decision, false),
        Some(Answer::Policy(_)) => (now, false),
        Some(Answer::Run { decision } | Answer::Allow { decision }) if now.mode <= Mode::Ask => {
            (decision, true)
        }
        Some(Answer::Run { .. } | Answer::Allow { .. }) => (now, false),
        Some(Answer::Edit { .. }) if now.mode == Mode::Skip => (now, false),
        Some(Answer::Edit { decision }) => (
            Decision {
                mode: Mode::Edit,
                ..decision
            },
            false,
        ),
    })
}

/// A tool's compiled `policy.run` or `policy.result`, compiled when first
/// needed; `None` for one that does not compile (which the loader
/// prevents).
type CompiledPolicy = OnceLock<Option<Arc<Policy>>>;

/// Decides tool calls for one query: the tools offered, their compiled
/// policies, the stateful policies and the session approvals in force.
pub struct Judge<'a> {
    pub(super) config: &'a AppConfig,
    pub(super) workspace: Workspace,
    pub(super) root: PathBuf,
    /// Each offered tool's policies, by tool and field.
    policies: HashMap<(String, PolicyField), CompiledPolicy>,
    /// The stateful policies (`conversation.policies`) and what they know
    /// of the conversation so far.
    stateful: StatefulPolicies<'a>,
    /// The "allow for this session" answers in force (`allow.rs`).
    pub(super) approvals: Mutex<Approvals>,
    /// Why no call may run unattended for the rest of this session: a
    /// tool changed the workspace's git or jp config in a way jp could not
    /// put back ([`Self::tampered`]).
    tampered: OnceLock<String>,
}

impl<'a> Judge<'a> {
    /// The judge of `config`'s tools, in the workspace at `root`, without
    /// stateful policies or session approvals ([`Self::with_history`] adds
    /// them).
    #[must_use]
    pub fn new(config: &'a AppConfig, root: &Path) -> Self {
        Self::in_workspace(config, Workspace::new(root), root)
    }

    /// [`Self::new`] in `workspace`, whose paths may be read from another
    /// file system than the disk (a [`Memory`](jp_policy::links::Memory)
    /// one, in tests); `root` is where the tools run.
    #[must_use]
    pub fn in_workspace(config: &'a AppConfig, workspace: Workspace, root: &Path) -> Self {
        let policies = offered(&config.conversation.tools)
            .flat_map(|(name, _)| {
                [PolicyField::Run, PolicyField::Result]
                    .map(|field| ((name.as_str().to_owned(), field), OnceLock::new()))
            })
            .collect();
        let resolved = jp_config::load::resolved_json(config);
        Self {
            config,
            stateful: StatefulPolicies::none(config, workspace.clone(), resolved),
            workspace,
            root: root.to_path_buf(),
            policies,
            approvals: Mutex::new(Approvals::default()),
            tampered: OnceLock::new(),
        }
    }

    /// Records that a tool changed the workspace's git or jp config in a
    /// way jp could not put back (`what`): from now on every call is asked
    /// (fail closed), as one without its sandbox is.
    pub fn tampered(&self, what: &str) {
        let _ = self.tampered.set(format!(
            "a tool changed the workspace in a way jp could not put back ({what})"
        ));
    }

    /// Sets up the stateful policies of `conversation.policies` and
    /// replays `history` (the conversation so far) into them, so they know
    /// what ran before this query; and takes the session approvals it
    /// leaves in force that `genuine` says the user gave (see
    /// [`crate::seal`]; the others approve nothing).
    ///
    /// # Errors
    ///
    /// When the policies cannot be built (the loader should have refused
    /// them): no tool may run unchecked.
    pub fn with_history(
        self,
        history: &[ConversationEvent],
        genuine: &dyn Fn(&SessionApproval) -> bool,
    ) -> Result<Self, SetupError> {
        let resolved = self.stateful.resolved().clone();
        let stateful =
            StatefulPolicies::replayed(self.config, self.workspace.clone(), resolved, history)?;
        Ok(Self {
            stateful,
            approvals: Mutex::new(Approvals::from_history(history, genuine)),
            ..self
        })
    }

    /// The stateful policies, with what they know so far.
    #[must_use]
    pub fn stateful(&self) -> &StatefulPolicies<'a> {
        &self.stateful
    }

    pub(super) fn tool(&self, name: &str) -> Option<&'a ToolConfig> {
        offered(&self.config.conversation.tools)
            .find(|(offered, _)| offered.as_str() == name)
            .map(|(_, tool)| tool)
    }

    /// Which of jp's default tools the tool called `name` runs.
    #[must_use]
    pub fn default_tool(&self, name: &str) -> Option<DefaultTool> {
        self.tool(name).and_then(default_tool)
    }

    pub(super) fn policy(&self, tool: &str, field: PolicyField) -> Option<Arc<Policy>> {
        let compile = || {
            effective_policy(self.config, tool, field)
                .and_then(|(_, c)| c.policy)
                .map(Arc::new)
        };
        match self.policies.get(&(tool.to_owned(), field)) {
            Some(compiled) => compiled.get_or_init(compile).clone(),
            // Not a tool on offer: nothing to keep it for.
            None => compile(),
        }
    }

    pub(super) fn evaluate(
        &self,
        tool: &str,
        field: PolicyField,
        args: &Value,
    ) -> Result<Decision, String> {
        let policy = self.policy(tool, field).ok_or_else(|| {
            // The loader refuses configs whose policies do not compile, so
            // this is a bug; fail closed.
            format!("the {field} policy of `{tool}` is unusable")
        })?;
        Ok(policy.evaluate_in(args, &self.workspace))
    }

    /// The workspace that `path` arguments are resolved in.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    pub(super) fn available_tools(&self) -> String {
        let names = offered(&self.config.conversation.tools)
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }

    /// The verdict for the call `ask` would put to the user, when a
    /// stateful policy will deny it whatever the user answers.
    /// An editor opening (`edit`) is not a question: the user may change
    /// the arguments into ones the policies allow, so it is left open.
    pub fn deny_instead_of_asking(&self, ask: &Ask) -> Option<(Verdict, Denial)> {
        if ask.mode != Mode::Ask {
            return None;
        }
        let denial = self.stateful.check(&ask.call.name, &ask.arguments, false)?;
        Some((denied(&ask.call.id, &ask.call.name, &denial), denial))
    }

    /// [`StatefulPolicies::check`] for a call whose arguments still
    /// stream: `known` gives each top-level argument that has arrived, and
    /// a policy denies only on what it knows.
    pub fn stateful_check_partial(
        &self,
        tool: &str,
        known: &dyn Fn(&str) -> Option<Value>,
    ) -> Option<Denial> {
        let parameters = &self.tool(tool)?.parameters;
        let arguments: Map<String, Value> = parameters
            .keys()
            .filter_map(|key| known(key).map(|value| (key.clone(), value)))
            .collect();
        self.stateful.check(tool, &arguments, true)
    }

    /// Decides whether `call` may run: a verdict now, or a prompt to put
    /// to the user ([`Asker::confirm`](super::Asker::confirm)). Without a way to prompt
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
        self.decide_noting(call, can_ask, early, &mut None)
    }

    /// [`decide_after`](Self::decide_after), noting in `policy` what
    /// `policy.run` said of the complete arguments (bounded), when it was
    /// asked: for the record of how the call was decided.
    pub fn decide_noting(
        &self,
        call: &ToolCallRequest,
        can_ask: bool,
        early: Option<Answer>,
        policy: &mut Option<Decision>,
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
        let batch = self.bounded(name, batch);
        *policy = Some(batch.clone());
        let (decision, approved) = match with_early(early, batch) {
            Ok(settled) => settled,
            Err(verdict) => return Decided::Now(*verdict),
        };
        let decision = self.with_early_allow(decision, approved, call, value);
        // An approval of this rule, in its scope, inside the workspace;
        // none for a call that is held ([`Self::held`]).
        let session = (decision.mode == Mode::Ask && !approved && self.held(name).is_none())
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
        let runs = |mode, reason, approved| {
            Decided::Now(Verdict::Run {
                tool: name.to_owned(),
                arguments: Arguments::of(call),
                edited: false,
                mode,
                reason,
                approved,
                key: None,
            })
        };
        match decision.mode {
            Mode::Unattended => runs(Mode::Unattended, why, false),
            Mode::Ask if approved => runs(Mode::Ask, why, true),
            Mode::Ask if let Some(reason) = session => runs(Mode::Ask, reason, true),
            Mode::Skip => Decided::Now(skipped(&call.id, name, &why)),
            Mode::Ask | Mode::Edit if !can_ask => {
                let advice = self.held_advice(name).unwrap_or_else(|| {
                    self.narrow_advice(name, PolicyField::Run, decision.rule, &|key: &str| {
                        arguments.get(key).cloned()
                    })
                });
                Decided::Now(no_terminal(&call.id, name, decision.mode, &why, &advice))
            }
            mode @ (Mode::Ask | Mode::Edit) => Decided::Ask(Ask {
                call: call.clone(),
                arguments: Arguments::of(call),
                mode,
                why,
                rule,
                // No session approval covers a call that is held.
                session: self.rule_asks(name, rule) && self.held(name).is_none(),
            }),
        }
    }

    /// `decision` for a call of `name`, asking instead of running
    /// unattended when the call is held ([`Self::held`]: no kernel sandbox,
    /// or a change where there is no workspace): fail closed, the one place
    /// where either turns a run into a question.
    pub(in crate::query) fn bounded(&self, name: &str, mut decision: Decision) -> Decision {
        if decision.mode == Mode::Unattended
            && let Some(why) = self.held(name)
        {
            decision.mode = Mode::Ask;
            decision.reason = format!("{}, but {why}", decision.reason);
        }
        decision
    }

    /// Why a call of `name` would run without the kernel's part of its
    /// sandbox, if it would ([`unbounded`]).
    pub fn unbounded(&self, name: &str) -> Option<String> {
        if let Some(why) = self.tampered.get() {
            return Some(why.clone());
        }
        unbounded(self.config, &self.root, name)
    }

    /// Whether jp keeps what a call of local tool `name` changes, so that
    /// `jp conversation rewind` can put it back: `Err` says why not (no
    /// sandbox, or one that lets it write outside the workspace). jp's
    /// own file tools keep what they change whatever their sandbox, and
    /// those that only read change nothing.
    ///
    /// # Errors
    ///
    /// Why the call's changes would not be kept.
    pub fn undo(&self, name: &str) -> Result<(), String> {
        if !self.config.conversation.undo.enable {
            return Err("`conversation.undo.enable` is off".into());
        }
        if self
            .default_tool(name)
            .is_some_and(|tool| tool.is_file_tool() || tool.reads_only())
        {
            return Ok(());
        }
        if self.unbounded(name).is_some() {
            return Err("it runs without a sandbox".into());
        }
        let sandbox = jp_config::sandbox::for_tool(self.config, name);
        if sandbox.write.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "its sandbox lets it write outside the workspace ({})",
                sandbox.write.join(", ")
            ))
        }
    }

    /// What lets a call of `name` that is held ([`Self::held`]) run
    /// unattended, if it is.
    fn held_advice(&self, name: &str) -> Option<String> {
        if self.unbounded(name).is_none() {
            return self.held(name).and(Some(crate::place::ASKED_ADVICE.into()));
        }
        let none = self.tool(name).is_some_and(|tool| tool.sandbox.none);
        let answer = "run jp in a terminal to answer";
        Some(if self.tampered.get().is_some() {
            format!(
                "{answer}; look at the workspace's .git and .jp before running jp or git there again"
            )
        } else if none {
            format!(
                "{answer}; only without `sandbox.none` in conversation.tools.{name} can it run unattended"
            )
        } else if jp_llm::tool::enforceable().is_err() {
            format!(
                "{answer}; a kernel with Landlock (Linux 6.2 or later) lets it run unattended (`jp sandbox check` shows what this one enforces)"
            )
        } else {
            format!(
                "{answer}; in a workspace that holds none of your secret places it can run unattended"
            )
        })
    }

    /// Where a call of `name` runs, and what it may reach there, in words
    /// for the `y` line of its prompt's help (`?`).
    pub fn reach(&self, name: &str) -> String {
        if let Some(why) = self.unbounded(name) {
            return format!(
                "WITHOUT a sandbox ({why}): it can reach whatever you can, and jp cannot undo what it changes"
            );
        }
        let Some(sandbox) = jp_config::sandbox::of_call(self.config, name) else {
            return "on its MCP server, over HTTP (no process of jp's: no sandbox of jp's)"
                .to_owned();
        };
        let also = |list: &[String]| {
            if list.is_empty() {
                String::new()
            } else {
                format!(", {}", list.join(", "))
            }
        };
        format!(
            "in its sandbox: it writes only in the workspace and its own TMPDIR{}, reads no secret place (~/.ssh, ~/.aws, ...{}), and {}",
            also(&sandbox.write),
            also(&sandbox.deny_read),
            if sandbox.network() {
                "may use the network"
            } else {
                "has no network"
            }
        )
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
        if let Err(issues) = tool.check_arguments(arguments) {
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
        let issues = tool.check_value_at(param, &value, at);
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
        let decision = self.bounded(name, decision);
        match decision.mode {
            Mode::Skip => Err(Box::new(skipped(id, name, &decision.reason))),
            // Decision 6: without a prompt `edit` is declined like `ask`,
            // and now, so the rest of the call is not paid for; unless the
            // user allowed this rule for the session (decided once the
            // call is complete, when its paths are known).
            mode @ (Mode::Ask | Mode::Edit)
                if !can_ask && !self.session_covers(name, mode, decision.rule) =>
            {
                let advice = self.held_advice(name).unwrap_or_else(|| {
                    self.narrow_advice(name, PolicyField::Run, decision.rule, known)
                });
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

    /// How to let a call like this one run (`field` is `policy.run`), or
    /// its result reach the model (`policy.result`), without a terminal,
    /// and no other: a rule on the argument that decided (or on the call's
    /// path), placed before the rule that asked (`rule`; `None` for the
    /// implicit fallback). Never a blanket `unattended` for the whole tool.
    pub(super) fn narrow_advice(
        &self,
        name: &str,
        field: PolicyField,
        rule: Option<usize>,
        known: &dyn Fn(&str) -> Option<Value>,
    ) -> String {
        let alias = self
            .policy(name, field)
            .is_some_and(|policy| policy.is_alias());
        let place = match rule {
            // `run = "ask"`: rules replace the mode string.
            Some(_) if alias => format!("in a {field} list that ends with {{ mode = \"ask\" }}"),
            Some(index) => format!("before {field}[{index}]"),
            None => format!("at the end of {field}"),
        };
        let allow = match field {
            PolicyField::Run => "allow calls like this one",
            PolicyField::Result => "send the results of calls like this one",
        };
        let deciding = rule.and_then(|index| {
            self.policy(name, field)?
                .rules()
                .iter()
                .find(|r| r.index == index)
                .and_then(|r| r.condition.clone())
        });
        // The argument the deciding rule looks at, when it is a top-level
        // one; otherwise the call's first path argument.
        let key = match &deciding {
            Some(condition) => match condition.steps() {
                [jp_policy::Step::Member(key)] => Some(key.clone()),
                _ => None,
            },
            None => self.tool(name).and_then(|tool| {
                tool.parameters
                    .iter()
                    .find(|(key, p)| {
                        p.kind == jp_config::tool::ParamType::Path && known(key).is_some()
                    })
                    .map(|(key, _)| key.clone())
            }),
        };
        let value = key
            .as_deref()
            .and_then(known)
            .filter(|v| v.is_string() || v.is_number() || v.is_boolean());
        // Suggested only when it would really let this call run: a path
        // that escapes the workspace or cannot be resolved never runs
        // unattended, whatever rule names it.
        let (key, value) = match (key, value) {
            (Some(key), Some(value)) if self.would_allow(name, field, &key, &value) => {
                (Some(key), Some(value))
            }
            _ => (None, None),
        };
        let entry = self.advice_entry(name, field);
        match (key, value) {
            (Some(key), Some(value)) => format!(
                "run jp in a terminal to answer, or {allow} with a rule {place} in {entry}: {{ arg = \"/{key}\", const = {value}, mode = \"unattended\" }}"
            ),
            _ => format!(
                "run jp in a terminal to answer, or add a rule for calls like this one {place} in {entry} (`jp policy check {name}` tries it)"
            ),
        }
    }

    /// The entry whose policy to change for tool `name`: the tool's own,
    /// or, when its policy is its MCP server's wildcard entry's
    /// (`'git.*'`), that one.
    fn advice_entry(&self, name: &str, field: PolicyField) -> String {
        let spec = jp_config::tool::effective::effective_spec(self.config, name, field);
        let wildcard = spec
            .origin
            .key()
            .and_then(|key| key.segments().get(2))
            .filter(|entry| jp_config::tool::wildcard::wildcard_server(entry).is_some());
        let entry = wildcard.map_or(name, String::as_str);
        jp_config::ConfigPath::from_segments(["conversation", "tools", entry]).to_string()
    }

    /// Whether the rule `{ arg = "/KEY", const = VALUE, mode =
    /// "unattended" }` in `field` would allow a call whose `KEY` is
    /// `value`.
    pub(super) fn would_allow(
        &self,
        name: &str,
        field: PolicyField,
        key: &str,
        value: &Value,
    ) -> bool {
        let Some(tool) = self.tool(name) else {
            return false;
        };
        let rule: indexmap::IndexMap<String, Value> = [
            ("arg".to_owned(), Value::from(format!("/{key}"))),
            ("const".to_owned(), value.clone()),
            ("mode".to_owned(), Value::from("unattended")),
        ]
        .into_iter()
        .collect();
        let spec = jp_policy::PolicySpec::Rules(vec![jp_policy::RuleSpec(rule)]);
        let compiled = Policy::compile(&spec, field, jp_policy::RuleOrigin::Tool, &tool.parameters);
        let mut arguments = Map::new();
        arguments.insert(key.to_owned(), value.clone());
        compiled.policy.is_some_and(|policy| {
            policy
                .evaluate_in(&Value::Object(arguments), &self.workspace)
                .mode
                == Mode::Unattended
        })
    }

    /// `value` as arguments that fit the tool's parameters.
    pub(super) fn fits(&self, name: &str, value: Value) -> Result<Map<String, Value>, String> {
        let Value::Object(map) = value else {
            return Err("the arguments are not an object".into());
        };
        let tool = self
            .tool(name)
            .ok_or_else(|| format!("no tool named `{name}`"))?;
        tool.check_arguments(&Value::Object(map.clone()))
            .map_err(|issues| {
                issues
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            })?;
        Ok(map)
    }
}

/// The session approvals in force, and those given in this query that the
/// conversation has not recorded yet.
#[derive(Debug, Default)]
pub struct Approvals {
    pub(super) active: Vec<SessionApproval>,
    pub(super) unrecorded: Vec<EventKind>,
    /// `a` answered at calls still streaming (`allow.rs`).
    pub(super) pending: Vec<Pending>,
}

/// An `a` answered while a call streamed, recorded once it is complete
/// (`allow.rs`).
#[derive(Debug)]
pub struct Pending {
    pub(super) call_id: String,
    pub(super) tool: String,
    pub(super) rule: Option<usize>,
    /// Why the policy asked.
    pub(super) why: String,
    /// Whether `a` was answered before the call was complete: it then
    /// covers only the identical call, as nothing the scope is made of had
    /// been seen whole.
    pub(super) exact: bool,
}

impl Approvals {
    /// The approvals `history` leaves in force: each one given (that
    /// `genuine` accepts), until a `forget-approvals`.
    #[must_use]
    pub fn from_history(
        history: &[ConversationEvent],
        genuine: &dyn Fn(&SessionApproval) -> bool,
    ) -> Self {
        let mut active = Vec::new();
        for event in history {
            match &event.kind {
                EventKind::SessionApproval(approval) if genuine(approval) => {
                    active.push(approval.clone());
                }
                EventKind::ApprovalsForgotten => active.clear(),
                _ => {}
            }
        }
        Self {
            active,
            unrecorded: Vec::new(),
            pending: Vec::new(),
        }
    }
}
