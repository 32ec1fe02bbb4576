//! The [`ToolCoordinator`]: whether a tool call may run (RFD D25
//! `policy.run`), running it, and how its result reaches the model
//! (`policy.result`).
//!
//! A call is decided as soon as its policy can be (RFD D26:
//! [`ToolCoordinator::early`] while its arguments stream) and checked again
//! once they are complete (at Flush, decision 7). In order, a call is
//! refused when the tool is unknown or disabled, when its arguments are
//! unusable (truncated or invalid JSON, a duplicate key: architecture
//! decisions 1 and 7), or when they do not fit the tool's parameters;
//! otherwise `policy.run` decides: `unattended` runs, `ask` and `edit`
//! prompt (and are declined when no prompt is possible, decision 6), `skip`
//! answers "skipped" without running. Before any of that, a call whose
//! arguments grow past the tool's `max_argument_bytes` is refused while
//! it streams, and the stream is stopped as for an early decline (issue 14,
//! [`too_large`]). Every call gets exactly one [`ToolCallResponse`].

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use jp_config::AppConfig;
use jp_config::access::Grants;
use jp_config::policy::{Decision, Mode, Policy, PolicyField, StreamingPolicyState, Workspace};
use jp_config::tool::effective::effective_policy;
use jp_config::tool::{ToolConfig, ToolSource, check_arguments, offered, run_limits};
use jp_conversation::{
    ConversationEvent, PolicyWatch, ResponseStatus, ToolCallRequest, ToolCallResponse,
};
use jp_llm::tool::{ToolLimits, ToolRun};
use jp_tool::{Context, Outcome, Request, ToolInfo};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::arguments::{Arguments, arguments_header, arguments_page, complete, short_arguments};
use super::early::Answer;
use super::render::full_arguments;
use crate::printer::{Printer, Style, cut};
use crate::prompt::{Choice, PromptError, PromptTurn, Prompts, Ticket};
use crate::stateful::{
    self, Denial, PolicyContext, PolicyDecision, PolicyRegistry, Recording, WorkspaceEnv,
};

/// How many times a tool may ask for input in one call.
const MAX_QUESTIONS: usize = 8;

/// Runs a local tool process. The production executor is
/// [`LocalExecutor`]; tests substitute their own.
pub trait ToolExecutor {
    /// Runs `argv` with `request` on stdin.
    fn run(
        &self,
        argv: &[String],
        request: &Request,
        limits: &ToolLimits,
        cancel: &CancellationToken,
    ) -> impl Future<Output = ToolRun>;
}

/// Runs tools as real processes (`jp_llm::tool::run_local`).
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalExecutor;

impl ToolExecutor for LocalExecutor {
    fn run(
        &self,
        argv: &[String],
        request: &Request,
        limits: &ToolLimits,
        cancel: &CancellationToken,
    ) -> impl Future<Output = ToolRun> {
        jp_llm::tool::run_local(argv, request, limits, cancel)
    }
}

/// What was decided about a call before running it.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Run it, with these (possibly user-edited) arguments.
    Run {
        /// The tool this verdict is for.
        tool: String,
        /// The arguments the tool gets.
        arguments: Arguments,
        /// Whether the user edited them.
        edited: bool,
        /// The `policy.run` decision.
        mode: Mode,
        /// Why, in the user's terms.
        reason: String,
        /// Whether the user approved it at a prompt.
        approved: bool,
    },
    /// Not run; `response` answers the model, `note` tells the user.
    NotRun {
        /// The answer for the model.
        response: ToolCallResponse,
        /// What the user sees.
        note: String,
    },
}

/// A call that ran: its response and what to show the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    /// The answer for the model.
    pub response: ToolCallResponse,
    /// The config change the tool proposed and that was approved, for the
    /// cycle's commit buffer (RFD 078); `None` when it proposed none.
    pub delta: Option<jp_config::delta::Proposal>,
    /// The tool's stderr, for diagnostics.
    pub stderr: String,
    /// What happened to the result, when it did not simply go to the model.
    pub note: Option<String>,
    /// The stateful policy that denied the call at its start (after the
    /// user edited it then), for the conversation's `policy_denied` record.
    pub denial: Option<Denial>,
}

/// Each tool's compiled `policy.run` and `policy.result`; `None` for one
/// that does not compile (which the loader prevents).
type PolicyCache = HashMap<(String, PolicyField), Option<Arc<Policy>>>;

/// Decides and runs tool calls for one query.
pub struct ToolCoordinator<'a> {
    config: &'a AppConfig,
    workspace: Workspace,
    root: PathBuf,
    self_exe: Option<PathBuf>,
    /// Each tool's compiled policies, compiled when first needed.
    policies: Mutex<PolicyCache>,
    /// Where what the user must see before a prompt is shown.
    printer: Printer,
    /// Whether the user saw the arguments as they streamed (a terminal),
    /// so a prompt need not list them again unless asked to (`v`).
    shown_live: bool,
    /// The stateful policies (`conversation.policies`) and what they know
    /// of the conversation so far.
    stateful: Mutex<PolicyRegistry>,
    /// The resolved config as JSON, for the stateful policies' `when`.
    resolved: Value,
}

impl<'a> ToolCoordinator<'a> {
    /// A coordinator for `config`, in the workspace at `root`. A tool
    /// command whose program is `jp` runs `self_exe` (this jp).
    #[must_use]
    pub fn new(
        config: &'a AppConfig,
        root: &Path,
        self_exe: Option<PathBuf>,
        printer: Printer,
    ) -> Self {
        Self {
            config,
            workspace: Workspace::new(root),
            root: root.to_path_buf(),
            self_exe,
            policies: Mutex::new(HashMap::new()),
            printer,
            shown_live: false,
            stateful: Mutex::new(PolicyRegistry::new()),
            resolved: jp_config::load::resolved_json(config),
        }
    }

    /// Sets up the stateful policies of `conversation.policies` and
    /// replays `history` (the conversation so far) into them, so they know
    /// what ran before this query.
    ///
    /// # Errors
    ///
    /// When the policies cannot be built (the loader should have refused
    /// them): no tool may run unchecked.
    pub fn with_history(self, history: &[ConversationEvent]) -> Result<Self, String> {
        let mut registry = stateful::from_config(self.config)?;
        let env = WorkspaceEnv::new(self.config, &self.workspace);
        let ctx = PolicyContext {
            env: &env,
            config: &self.resolved,
            partial: false,
        };
        stateful::replay(&mut registry, history, &ctx);
        Ok(Self {
            stateful: Mutex::new(registry),
            ..self
        })
    }

    /// What the stateful policies say about running `tool` with
    /// `arguments` now: `None` to allow, else the denial.
    pub fn stateful_check(&self, tool: &str, arguments: &Map<String, Value>) -> Option<Denial> {
        self.stateful_check_as(tool, arguments, false)
    }

    /// The verdict for the call `ask` would put to the user, when a
    /// stateful policy will deny it whatever the user answers.
    /// An editor opening (`edit`) is not a question: the user may change
    /// the arguments into ones the policies allow, so it is left open.
    pub fn deny_instead_of_asking(&self, ask: &Ask) -> Option<(Verdict, Denial)> {
        if ask.mode != Mode::Ask {
            return None;
        }
        let denial = self.stateful_check(&ask.call.name, &ask.arguments)?;
        Some((denied(&ask.call.id, &ask.call.name, &denial), denial))
    }

    /// [`stateful_check`](Self::stateful_check) for a call whose arguments
    /// still stream: `known` gives each top-level argument that has
    /// arrived, and a policy denies only on what it knows.
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
        self.stateful_check_as(tool, &arguments, true)
    }

    /// Whether a stateful policy governing `tool` checks an argument that
    /// has not arrived yet (`known` gives those that have).
    pub fn stateful_waits(&self, tool: &str, known: &dyn Fn(&str) -> Option<Value>) -> bool {
        self.stateful
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .waits_for(tool)
            .into_iter()
            .any(|key| known(key).is_none())
    }

    /// Whether a stateful policy governing `tool` checks its argument
    /// `key`.
    pub fn stateful_waits_on(&self, tool: &str, key: &str) -> bool {
        self.stateful
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .waits_for(tool)
            .contains(&key)
    }

    fn stateful_check_as(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        partial: bool,
    ) -> Option<Denial> {
        let registry = self.stateful.lock().unwrap_or_else(PoisonError::into_inner);
        if registry.is_empty() {
            return None;
        }
        let env = WorkspaceEnv::new(self.config, &self.workspace);
        let ctx = PolicyContext {
            env: &env,
            config: &self.resolved,
            partial,
        };
        match registry.check_all(&stateful::Call { tool, arguments }, &ctx) {
            PolicyDecision::Allow => None,
            PolicyDecision::Deny(denial) => Some(denial),
        }
    }

    /// Tells the stateful policies how a call that ran ended; only a
    /// success teaches them anything. Returns the keys they took from its
    /// arguments (by pointer), to be stored with the response so a replay
    /// learns exactly this.
    pub fn stateful_learn(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        response: &ToolCallResponse,
    ) -> BTreeMap<String, String> {
        let mut registry = self.stateful.lock().unwrap_or_else(PoisonError::into_inner);
        if response.status != ResponseStatus::Success || registry.is_empty() {
            return BTreeMap::new();
        }
        let live = WorkspaceEnv::new(self.config, &self.workspace);
        let env = Recording::new(&live);
        let ctx = PolicyContext {
            env: &env,
            config: &self.resolved,
            partial: false,
        };
        registry.notify_result(&stateful::Call { tool, arguments }, &response.content, &ctx);
        env.into_keys()
    }

    /// Says whether the user saw each call's arguments as they streamed.
    #[must_use]
    pub fn arguments_shown_live(self, shown_live: bool) -> Self {
        Self { shown_live, ..self }
    }

    fn tool(&self, name: &str) -> Option<&'a ToolConfig> {
        offered(&self.config.conversation.tools)
            .find(|(offered, _)| offered.as_str() == name)
            .map(|(_, tool)| tool)
    }

    fn policy(&self, tool: &str, field: PolicyField) -> Option<Arc<Policy>> {
        let config = self.config;
        self.policies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((tool.to_owned(), field))
            .or_insert_with(|| {
                effective_policy(config, tool, field)
                    .and_then(|(_, c)| c.policy)
                    .map(Arc::new)
            })
            .clone()
    }

    fn evaluate(&self, tool: &str, field: PolicyField, args: &Value) -> Result<Decision, String> {
        let policy = self.policy(tool, field).ok_or_else(|| {
            // The loader refuses configs whose policies do not compile, so
            // this is a bug; fail closed.
            format!("the {field} policy of `{tool}` is unusable")
        })?;
        Ok(policy.evaluate_in(args, &self.workspace))
    }

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
            }),
        }
    }

    /// The call's arguments as an object, when they are usable and fit the
    /// tool's parameters; otherwise the verdict refusing it. Borrowed, not
    /// copied: a call's arguments can be megabytes (issue 14).
    fn admissible<'c>(&self, call: &'c ToolCallRequest) -> Result<&'c Value, Box<Verdict>> {
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

    fn no_such_tool(&self, id: &str, name: &str) -> Verdict {
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

    /// The workspace that `path` arguments are resolved in.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
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
            // and now, so the rest of the call is not paid for.
            mode @ (Mode::Ask | Mode::Edit) if !can_ask => {
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
        let key = jp_config::tool::argument_limit(&self.config.conversation.tools, name).key;
        too_large(id, name, limit, &key)
    }

    /// Asks about a call whose arguments still stream (`shown`: the call
    /// with what has arrived), when `ticket`'s turn comes: run it once
    /// complete, edit it then, or decline it now. `v` pages what `view`
    /// gives (the arguments so far; `None` when they are gone) and asks
    /// again: the prompt shows only what the cap let through.
    pub async fn confirm_early<V, F>(
        &self,
        id: &str,
        name: &str,
        shown: &str,
        decision: Decision,
        ticket: Ticket<'_>,
        view: V,
    ) -> Answer
    where
        V: Fn() -> F,
        F: Future<Output = Option<String>>,
    {
        let call = ToolCallRequest::new(id, name, Map::new());
        let prompt = match ticket.wait().await {
            Ok(prompt) => prompt,
            Err(_) => return Answer::NotRun(interrupted(&call)),
        };
        let question = format!("Run {}?", cut(shown, 160));
        let key = loop {
            match prompt.choose(&question, &EARLY_CHOICES).await {
                Ok('v') => {
                    let text = view().await.unwrap_or_else(|| {
                        format!("{name}: its arguments are no longer available to show.")
                    });
                    if let Err(PromptError::Interrupted) = prompt.page(&text).await {
                        return Answer::NotRun(interrupted(&call));
                    }
                }
                key => break key,
            }
        };
        match key {
            Ok('y') => Answer::Run { decision },
            Ok('e') => Answer::Edit { decision },
            Ok(_) => Answer::NotRun(not_run(
                &call,
                ResponseStatus::Declined,
                "The user declined this call; it was not run.".into(),
                format!("{name}: declined by you"),
            )),
            Err(PromptError::Interrupted) => Answer::NotRun(interrupted(&call)),
            Err(error) => Answer::NotRun(not_run(
                &call,
                ResponseStatus::Declined,
                "The call was not run: the user could not be asked.".into(),
                format!("{name}: declined: {error}"),
            )),
        }
    }

    /// Puts a call whose policy asks to the user, when `ticket`'s turn
    /// comes, and returns what they decided.
    pub async fn confirm(&self, ask: Ask, ticket: Ticket<'_>) -> Verdict {
        let Ask {
            call,
            mut arguments,
            mode,
            why,
        } = ask;
        let name = call.name.as_str();
        let not_run = |status, content: &str, note: String| Verdict::NotRun {
            response: ToolCallResponse {
                id: call.id.clone(),
                status,
                content: content.to_owned(),
                ran: None,
            },
            note,
        };
        let declined =
            |content: &str, note: String| not_run(ResponseStatus::Declined, content, note);
        let prompt = match ticket.wait().await {
            Ok(prompt) => prompt,
            Err(_) => return interrupted(&call),
        };
        let mut edited = false;
        // `edit` opens the editor first; `e` at the prompt does too.
        let mut edit_now = mode == Mode::Edit;
        // The user approves what they can see: every argument, in full,
        // unless they just watched them stream (capped: `v` pages them).
        let mut show = !self.shown_live;
        loop {
            if edit_now {
                edit_now = false;
                match self.edit_arguments(name, &arguments, &prompt).await {
                    Edit::Done(new) => {
                        arguments = Arguments::new(new);
                        edited = true;
                        show = true;
                    }
                    Edit::Skip(reason) => {
                        return not_run(
                            ResponseStatus::Skipped,
                            "The user's edit of the arguments is skipped by the user's policy; the call was not run.",
                            format!(
                                "{name}: skipped: the edited arguments are skipped by the policy ({reason})"
                            ),
                        );
                    }
                    Edit::Cancelled(note) => {
                        return declined(
                            "The user's edit of the arguments was unusable; the call was not run.",
                            format!("{name}: not run: {note}"),
                        );
                    }
                    Edit::Interrupted => return interrupted(&call),
                }
            }
            if show {
                self.show_arguments(name, &arguments);
                show = false;
            }
            let question = format!("Run {name}({})?", short_arguments(&arguments, 120));
            match prompt.choose(&question, &RUN_CHOICES).await {
                Ok('y') => {
                    return Verdict::Run {
                        tool: name.to_owned(),
                        arguments,
                        edited,
                        mode,
                        reason: why,
                        approved: true,
                    };
                }
                Ok('e') => edit_now = true,
                // `v` pages the arguments in full, then asks again.
                Ok('v') => {
                    let text = arguments_page(name, &complete(&arguments));
                    if let Err(PromptError::Interrupted) = prompt.page(&text).await {
                        return interrupted(&call);
                    }
                }
                Ok(_) => {
                    return declined(
                        "The user declined this call; it was not run.",
                        format!("{name}: declined by you"),
                    );
                }
                Err(PromptError::Interrupted) => return interrupted(&call),
                Err(error) => {
                    return declined(
                        "The call was not run: the user could not be asked.",
                        format!("{name}: declined: {error}"),
                    );
                }
            }
        }
    }

    /// Every argument in full, strings as text: what the user approves.
    fn show_arguments(&self, name: &str, arguments: &Map<String, Value>) {
        self.printer.finish_content();
        self.printer
            .chrome_line(Style::Header, &arguments_header(name, &complete(arguments)));
        for line in full_arguments(arguments, None) {
            self.printer.chrome_line(line.style, &line.text);
        }
    }

    /// Lets the user edit the arguments until they are usable, fit the
    /// tool's parameters and are not skipped by its policy, or the user
    /// gives up. An edit that does not fit never runs: the user is told why
    /// and may edit again (`e`) or cancel (`n`).
    async fn edit_arguments(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        prompt: &PromptTurn<'_>,
    ) -> Edit {
        let mut text = serde_json::to_string_pretty(arguments).unwrap_or_default();
        loop {
            let problem = match prompt.edit(&text).await {
                Err(PromptError::Interrupted) => return Edit::Interrupted,
                Err(error) => return Edit::Cancelled(format!("the editor failed: {error}")),
                Ok(edited) => {
                    let checked = super::arguments::parse_arguments(name, &edited)
                        .and_then(|value| self.fits(name, value));
                    text = edited;
                    match checked {
                        Ok(new) => {
                            let value = Value::Object(new.clone());
                            match self.evaluate(name, PolicyField::Run, &value) {
                                Ok(decision) if decision.mode == Mode::Skip => {
                                    return Edit::Skip(decision.reason);
                                }
                                Ok(_) => return Edit::Done(new),
                                Err(error) => return Edit::Cancelled(error),
                            }
                        }
                        Err(problem) => problem,
                    }
                }
            };
            self.printer.chrome_line(
                Style::Warn,
                &format!("{name}: the edited arguments cannot run: {problem}"),
            );
            match prompt.choose("Edit them again?", &RETRY_CHOICES).await {
                Ok('e') => {}
                Err(PromptError::Interrupted) => return Edit::Interrupted,
                Ok(_) | Err(_) => {
                    return Edit::Cancelled(format!("the edited arguments cannot run: {problem}"));
                }
            }
        }
    }

    /// `value` as arguments that fit the tool's parameters.
    fn fits(&self, name: &str, value: Value) -> Result<Map<String, Value>, String> {
        let Value::Object(map) = value else {
            return Err("the arguments are not an object".into());
        };
        let tool = self
            .tool(name)
            .ok_or_else(|| format!("no tool named `{name}`"))?;
        check_arguments(&tool.parameters, &Value::Object(map.clone())).map_err(|issues| {
            issues
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        })?;
        Ok(map)
    }

    /// Runs an approved call and applies `policy.result` to its outcome.
    /// Right before each start of the tool (the first, and each rerun
    /// after a rejected config change), its `policy.run` is evaluated once
    /// more with paths resolved as they are then ([`Self::recheck`]): a
    /// stricter answer than the one `approval` was cleared at applies.
    pub async fn run<E: ToolExecutor>(
        &self,
        call: &ToolCallRequest,
        approval: &mut Approval,
        executor: &E,
        prompts: &Prompts,
        cancel: &CancellationToken,
    ) -> Ran {
        let name = call.name.clone();
        let respond = |status, content: String| ToolCallResponse {
            id: call.id.clone(),
            status,
            content,
            ran: None,
        };
        let Some(tool) = self.tool(&name) else {
            // `decide` refused it already; never run an unknown tool.
            return Ran {
                response: respond(
                    ResponseStatus::Refused,
                    format!("There is no tool named `{name}`."),
                ),
                stderr: String::new(),
                note: None,
                delta: None,
                denial: None,
            };
        };
        let argv = match (tool.source, &tool.command) {
            (ToolSource::Builtin, _) => {
                return Ran {
                    response: respond(
                        ResponseStatus::Error,
                        format!(
                            "`{name}` is configured as a builtin tool, and this jp has no builtin tool by that name."
                        ),
                    ),
                    stderr: String::new(),
                    note: None,
                    delta: None,
                    denial: None,
                };
            }
            (ToolSource::Local, command) => {
                let mut argv = command.as_ref().map(|c| c.argv()).unwrap_or_default();
                if argv.first().is_some_and(|p| p == "jp")
                    && let Some(exe) = &self.self_exe
                {
                    argv[0] = exe.to_string_lossy().into_owned();
                }
                argv
            }
        };
        let (timeout, max_output) = run_limits(&self.config.conversation.tools, &name);
        let limits = ToolLimits {
            timeout,
            max_output_bytes: usize::try_from(max_output).unwrap_or(usize::MAX),
        };
        let mut request = Request {
            tool: ToolInfo {
                name: name.clone(),
                // The one copy a run makes: the protocol's request owns
                // its arguments. It is dropped once the tool has run.
                arguments: approval.arguments.to_owned_map(),
                answers: Map::new(),
                options: tool.options.clone().into_iter().collect(),
            },
            context: Context::run(self.root.clone()),
        };
        // The config the tool may read, as of the cycle's start (this
        // coordinator's config); nothing for a tool without read grants.
        let grants = Grants::new(&tool.access.config);
        request.context.config = grants.readable(&self.readable_config());
        let mut stderr = String::new();
        let mut questions = 0;
        let mut rejections = 0;
        let (status, content, delta) = loop {
            // As close to the start as jp can make it: what the calls
            // before this one (or its own earlier run) did to the files
            // counts (issue 21).
            match self.recheck(call, approval, prompts).await {
                Ok(false) => {}
                Ok(true) => request.tool.arguments = approval.arguments.to_owned_map(),
                Err(refused) => {
                    drop(request);
                    let (verdict, denial) = *refused;
                    let Verdict::NotRun { response, note } = verdict else {
                        unreachable!("recheck refuses with a NotRun verdict")
                    };
                    return Ran {
                        response,
                        delta: None,
                        stderr,
                        note: Some(note),
                        denial,
                    };
                }
            }
            approval.runs += 1;
            let run = executor.run(&argv, &request, &limits, cancel).await;
            if !run.stderr.is_empty() {
                stderr.push_str(&run.stderr);
            }
            match run.outcome {
                Outcome::Success {
                    content,
                    config,
                    unset,
                } => {
                    if config.is_none() && unset.is_empty() {
                        break (ResponseStatus::Success, content, None);
                    }
                    // The content waits until the change is settled: the
                    // model never reads "switched to opus" for a switch
                    // that did not happen.
                    match self
                        .settle_delta(&name, &grants, config.as_ref(), &unset, prompts)
                        .await
                    {
                        delta::Settled::Approved(proposal) => {
                            let proposal = (!proposal.is_empty()).then_some(proposal);
                            break (ResponseStatus::Success, content, proposal);
                        }
                        delta::Settled::Rejected(rejection) => {
                            rejections += 1;
                            if rejections > delta::MAX_DELTA_REJECTIONS {
                                self.printer.chrome_line(
                                    Style::Bad,
                                    &format!("⚠ tool {name} had its config change rejected {rejections} times; the call ends here"),
                                );
                                break (
                                    ResponseStatus::Error,
                                    delta::exhausted(&name, &rejection),
                                    None,
                                );
                            }
                            request.context.delta_rejection = Some(rejection);
                        }
                        delta::Settled::Interrupted => {
                            break (
                                ResponseStatus::Error,
                                "The user interrupted jp before the tool's config change was decided; the change was not applied and the result was not kept.".into(),
                                None,
                            );
                        }
                    }
                }
                Outcome::Error { message, .. } => break (ResponseStatus::Error, message, None),
                Outcome::NeedsInput { question } => {
                    questions += 1;
                    if questions > MAX_QUESTIONS {
                        break (
                            ResponseStatus::Error,
                            format!(
                                "The tool asked more than {MAX_QUESTIONS} questions; jp stopped it."
                            ),
                            None,
                        );
                    }
                    let answer = match prompts.turn().await {
                        Ok(prompt) => prompt.ask(&question).await,
                        Err(error) => Err(error),
                    };
                    match answer {
                        Ok(answer) => {
                            request.tool.answers.insert(question.id.clone(), answer);
                        }
                        Err(PromptError::Unavailable) => {
                            break (
                                ResponseStatus::Error,
                                format!(
                                    "The tool needs an answer to \"{}\" and no one could answer it (jp is running without a terminal); it did not finish.",
                                    question.text
                                ),
                                None,
                            );
                        }
                        Err(error) => {
                            break (
                                ResponseStatus::Error,
                                format!(
                                    "The tool needs an answer to \"{}\" and the user could not be asked ({error}); it did not finish.",
                                    question.text
                                ),
                                None,
                            );
                        }
                    }
                }
            }
        };
        drop(request);
        let arguments = approval.arguments.as_value();
        let content = if approval.edited {
            format!(
                "(The user edited the arguments before the call ran; it ran with {arguments}.)\n{content}"
            )
        } else {
            content
        };
        let (response, note) = self
            .deliver(call, &name, arguments, status, content, prompts)
            .await;
        Ran {
            response,
            stderr,
            note,
            delta,
            denial: None,
        }
    }

    /// Applies `policy.result`: deliver, ask, edit or withhold.
    async fn deliver(
        &self,
        call: &ToolCallRequest,
        name: &str,
        arguments: &Value,
        status: ResponseStatus,
        content: String,
        prompts: &Prompts,
    ) -> (ToolCallResponse, Option<String>) {
        let respond = |status, content| ToolCallResponse {
            id: call.id.clone(),
            status,
            content,
            ran: None,
        };
        let withheld = |note: String| {
            (
                respond(
                    ResponseStatus::Withheld,
                    "The tool ran, but the user's policy withholds its result from you.".into(),
                ),
                Some(note),
            )
        };
        let decision = match self.evaluate(name, PolicyField::Result, arguments) {
            Ok(decision) => decision,
            Err(error) => return withheld(format!("{name}: result withheld: {error}")),
        };
        let why = decision.reason.clone();
        match decision.mode {
            Mode::Unattended => (respond(status, content), None),
            Mode::Skip => withheld(format!("{name}: result withheld ({why})")),
            mode @ (Mode::Ask | Mode::Edit) => {
                if !prompts.available() {
                    // As narrow as the advice for `policy.run`: never a
                    // blanket `unattended`, which would send every future
                    // result of the tool unseen.
                    let known = |key: &str| arguments.get(key).cloned();
                    let advice =
                        self.narrow_advice(name, PolicyField::Result, decision.rule, &known);
                    return withheld(format!(
                        "{name}: result withheld: policy.result is {mode} ({why}) and no terminal is available; {advice}"
                    ));
                }
                let prompt = match prompts.turn().await {
                    Ok(prompt) => prompt,
                    Err(error) => return withheld(format!("{name}: result withheld: {error}")),
                };
                let content = if mode == Mode::Edit {
                    match prompt.edit(&content).await {
                        Ok(edited) => edited,
                        Err(error) => return withheld(format!("{name}: result withheld: {error}")),
                    }
                } else {
                    // The user decides on what they can see: the whole result.
                    self.printer.finish_content();
                    self.printer
                        .chrome_line(Style::Header, &format!("{name} returned:"));
                    for line in content.lines() {
                        self.printer.chrome_line(Style::Dim, &format!("  {line}"));
                    }
                    content
                };
                match prompt
                    .confirm(&format!("Send the result of {name} to the model?"))
                    .await
                {
                    Ok(true) => (respond(status, content), None),
                    Ok(false) => withheld(format!("{name}: result withheld by you")),
                    Err(error) => withheld(format!("{name}: result withheld: {error}")),
                }
            }
        }
    }

    /// How to let a call like this one run (`field` is `policy.run`), or
    /// its result reach the model (`policy.result`), without a terminal,
    /// and no other: a rule on the argument that decided (or on the call's
    /// path), placed before the rule that asked (`rule`; `None` for the
    /// implicit fallback). Never a blanket `unattended` for the whole tool.
    fn narrow_advice(
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
                [jp_config::policy::Step::Member(key)] => Some(key.clone()),
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
        match (key, value) {
            (Some(key), Some(value)) => format!(
                "run jp in a terminal to answer, or {allow} with a rule {place} in conversation.tools.{name}: {{ arg = \"/{key}\", const = {value}, mode = \"unattended\" }}"
            ),
            _ => format!(
                "run jp in a terminal to answer, or add a rule for calls like this one {place} in conversation.tools.{name} (`jp policy check {name}` tries it)"
            ),
        }
    }

    /// Whether the rule `{ arg = "/KEY", const = VALUE, mode =
    /// "unattended" }` in `field` would allow a call whose `KEY` is
    /// `value`.
    fn would_allow(&self, name: &str, field: PolicyField, key: &str, value: &Value) -> bool {
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
        let spec = jp_config::policy::PolicySpec::Rules(vec![jp_config::policy::RuleSpec(rule)]);
        let compiled = Policy::compile(
            &spec,
            field,
            jp_config::policy::RuleOrigin::Tool,
            &tool.parameters,
        );
        let mut arguments = Map::new();
        arguments.insert(key.to_owned(), value.clone());
        compiled.policy.is_some_and(|policy| {
            policy
                .evaluate_in(&Value::Object(arguments), &self.workspace)
                .mode
                == Mode::Unattended
        })
    }

    fn available_tools(&self) -> String {
        let names = offered(&self.config.conversation.tools)
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }
}

/// The answers to "Run this call?".
const RUN_CHOICES: [Choice; 4] = [
    Choice {
        key: 'y',
        help: "run the call",
    },
    Choice {
        key: 'n',
        help: "decline it (the model is told)",
    },
    Choice {
        key: 'e',
        help: "edit the arguments in $VISUAL or $EDITOR first",
    },
    Choice {
        key: 'v',
        help: "view the arguments in full, in $PAGER",
    },
];

/// The answers to "Run this call?" while its arguments still stream.
const EARLY_CHOICES: [Choice; 4] = [
    Choice {
        key: 'y',
        help: "run the call once its arguments are complete",
    },
    Choice {
        key: 'n',
        help: "decline it now (the rest of it is not streamed)",
    },
    Choice {
        key: 'e',
        help: "edit the arguments in $VISUAL or $EDITOR once they are complete",
    },
    Choice {
        key: 'v',
        help: "view the arguments so far in full, in $PAGER",
    },
];

/// The answers after an edit that cannot run.
const RETRY_CHOICES: [Choice; 2] = [
    Choice {
        key: 'e',
        help: "edit again",
    },
    Choice {
        key: 'n',
        help: "cancel: the call does not run",
    },
];

/// A call whose policy asks: what [`ToolCoordinator::confirm`] puts to the
/// user.
#[derive(Debug, Clone)]
pub struct Ask {
    call: ToolCallRequest,
    arguments: Arguments,
    mode: Mode,
    why: String,
}

/// What [`ToolCoordinator::decide`] decided.
#[derive(Debug)]
pub enum Decided {
    /// The verdict, without asking.
    Now(Verdict),
    /// The user must be asked.
    Ask(Ask),
}

/// A verdict that does not run `call`.
fn not_run(
    call: &ToolCallRequest,
    status: ResponseStatus,
    content: String,
    note: String,
) -> Verdict {
    Verdict::NotRun {
        response: ToolCallResponse {
            id: call.id.clone(),
            status,
            content,
            ran: None,
        },
        note,
    }
}

/// The verdict for a call the policy skips.
/// The verdict for a call a stateful policy denied: the model is told what
/// to do so it can run (never the rule set).
pub fn denied(id: &str, name: &str, denial: &Denial) -> Verdict {
    Verdict::NotRun {
        response: ToolCallResponse::new(
            id,
            ResponseStatus::Denied,
            format!("The call was not run: {}", denial.reason),
        ),
        note: format!("{name}: denied by {}: {}", denial.policy, denial.reason),
    }
}

/// The verdict for a call whose arguments grew past `limit` bytes, the
/// limit `key` sets: refused while it streamed.
pub fn too_large(id: &str, name: &str, limit: usize, key: &str) -> Verdict {
    let why = format!("its arguments are over the limit of {limit} bytes set by {key}");
    Verdict::NotRun {
        response: ToolCallResponse::new(
            id,
            ResponseStatus::Refused,
            format!("The call was not run: {why}."),
        ),
        note: format!("{name}: refused: {why}"),
    }
}

fn skipped(id: &str, name: &str, why: &str) -> Verdict {
    Verdict::NotRun {
        response: ToolCallResponse {
            id: id.to_owned(),
            status: ResponseStatus::Skipped,
            content: "This call was skipped by the user's policy; it was not run.".into(),
            ran: None,
        },
        note: format!("{name}: skipped ({why})"),
    }
}

/// The verdict for a call whose policy asks when no one can answer
/// (decision 6).
fn no_terminal(id: &str, name: &str, mode: Mode, why: &str, advice: &str) -> Verdict {
    let must = if mode == Mode::Edit {
        "jp must open an editor"
    } else {
        "jp must ask"
    };
    Verdict::NotRun {
        response: ToolCallResponse {
            id: id.to_owned(),
            status: ResponseStatus::Declined,
            content: "The call was not run: the user's policy requires confirmation and no one could confirm it (jp is running without a terminal).".into(),
            ran: None,
        },
        note: format!("{name}: declined: {why}, so {must}, and no terminal is available; {advice}"),
    }
}

/// How editing a call's arguments ended.
enum Edit {
    /// Usable arguments that fit and that the policy does not skip.
    Done(Map<String, Value>),
    /// The policy skips the edited arguments (the reason).
    Skip(String),
    /// The user gave up, or the editor failed (why).
    Cancelled(String),
    /// Ctrl+C.
    Interrupted,
}

/// The verdict for a call whose prompt was interrupted: not run, and the
/// turn ends.
fn interrupted(call: &ToolCallRequest) -> Verdict {
    Verdict::NotRun {
        response: ToolCallResponse {
            id: call.id.clone(),
            status: ResponseStatus::Interrupted,
            content: "The call was not run: the user interrupted the turn.".into(),
            ran: None,
        },
        note: format!("{}: interrupted", call.name),
    }
}

/// The run prompt with a scripted prompter: what the user's keys and edits
/// do to a call that asks.
#[cfg(test)]
mod prompt_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::collections::VecDeque;

    use jp_config::load::{LoadOptions, load};

    use super::*;
    use crate::prompt::ScriptedPrompter;

    const CONFIG: &str = r#"
[conversation.tools.save]
command = ["true"]
parameters.path = { type = "path", required = true }
policy.run = [{ arg = "/path", prefix = "secret/", mode = "skip" }, { mode = "ask" }]
"#;

    fn config() -> (tempfile::TempDir, AppConfig) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".jp")).unwrap();
        std::fs::write(dir.path().join(".jp/config.toml"), CONFIG).unwrap();
        let loaded = load(&LoadOptions {
            cwd: dir.path().to_path_buf(),
            ..LoadOptions::default()
        })
        .unwrap();
        (dir, loaded.config)
    }

    /// The verdict for `save(path)` with these keys and edits, and the
    /// questions asked.
    fn decide(keys: &[Option<char>], edits: &[&str]) -> (Verdict, Vec<String>) {
        let (dir, config) = config();
        let printer = Printer::new(
            Box::new(std::io::sink()),
            false,
            Box::new(std::io::sink()),
            false,
        );
        let tools = ToolCoordinator::new(&config, dir.path(), None, printer);
        let backend = ScriptedPrompter {
            keys: keys.iter().copied().collect(),
            edits: edits
                .iter()
                .map(|e| (*e).to_owned())
                .collect::<VecDeque<_>>(),
            ..ScriptedPrompter::default()
        };
        let asked = backend.asked.clone();
        let prompts = Prompts::new(Box::new(backend), CancellationToken::new());
        let mut arguments = Map::new();
        arguments.insert("path".into(), Value::from("a.txt"));
        let call = ToolCallRequest::new("1", "save", arguments);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let verdict = runtime.block_on(async {
            match tools.decide(&call, &prompts) {
                Decided::Now(verdict) => verdict,
                Decided::Ask(ask) => tools.confirm(ask, prompts.ticket()).await,
            }
        });
        let asked = asked.lock().unwrap().clone();
        (verdict, asked)
    }

    fn outcome(verdict: &Verdict) -> (String, String) {
        match verdict {
            Verdict::Run { arguments, .. } => ("run".into(), arguments.as_value().to_string()),
            Verdict::NotRun { response, .. } => {
                (format!("{:?}", response.status), response.content.clone())
            }
        }
    }

    const RUN: &str = "Run save(path: \"a.txt\")? [y,n,e,v]";

    #[test]
    fn y_runs_n_declines_and_v_asks_again() {
        let (verdict, asked) = decide(&[Some('v'), Some('y')], &[]);
        assert_eq!(
            outcome(&verdict),
            ("run".into(), r#"{"path":"a.txt"}"#.into())
        );
        assert_eq!(asked, [RUN, RUN]);
        let (verdict, _) = decide(&[Some('n')], &[]);
        assert_eq!(
            outcome(&verdict),
            (
                "Declined".into(),
                "The user declined this call; it was not run.".into()
            )
        );
    }

    #[test]
    fn an_edit_is_what_runs_and_is_checked_again() {
        let (verdict, asked) = decide(&[Some('e'), Some('y')], &[r#"{"path": "b.txt"}"#]);
        assert_eq!(
            outcome(&verdict),
            ("run".into(), r#"{"path":"b.txt"}"#.into())
        );
        assert!(matches!(verdict, Verdict::Run { edited: true, .. }));
        assert_eq!(asked, [RUN, "Run save(path: \"b.txt\")? [y,n,e,v]"]);

        // An edit that breaks the schema never runs: edit again or cancel.
        let (verdict, asked) = decide(&[Some('e'), Some('n')], &[r#"{"nope": 1}"#]);
        assert_eq!(
            outcome(&verdict),
            (
                "Declined".into(),
                "The user's edit of the arguments was unusable; the call was not run.".into()
            )
        );
        assert_eq!(asked, [RUN, "Edit them again? [e,n]"]);
        let (verdict, _) = decide(
            &[Some('e'), Some('e'), Some('y')],
            &["{not json", r#"{"path": "c.txt"}"#],
        );
        assert_eq!(
            outcome(&verdict),
            ("run".into(), r#"{"path":"c.txt"}"#.into())
        );

        // An edit the policy skips is not run.
        let (verdict, _) = decide(&[Some('e')], &[r#"{"path": "secret/k"}"#]);
        assert_eq!(outcome(&verdict).0, "Skipped");
    }

    #[test]
    fn ctrl_c_at_the_prompt_interrupts() {
        let (verdict, _) = decide(&[None], &[]);
        assert_eq!(
            outcome(&verdict),
            (
                "Interrupted".into(),
                "The call was not run: the user interrupted the turn.".into()
            )
        );
    }
}

#[cfg(test)]
#[path = "tools_tests.rs"]
mod coordinator_tests;

#[path = "tools_delta.rs"]
pub mod delta;

#[path = "tools_start.rs"]
mod start;
pub use start::Approval;
