//! The [`ToolCoordinator`]: one query's tools, their compiled policies and
//! the stateful policies with what they know of the conversation so far.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use jp_config::AppConfig;
use jp_config::tool::effective::effective_policy;
use jp_config::tool::{ToolConfig, offered};
use jp_conversation::{
    ConversationEvent, EventKind, ResponseStatus, SessionApproval, ToolCallResponse,
};
use jp_policy::stateful::{self, Denial, PolicyContext, PolicyDecision, PolicyRegistry, Recording};
use jp_policy::{Decision, Mode, Policy, PolicyField, Workspace};
use serde_json::{Map, Value};

use crate::query::decision::{Ask, Verdict, denied};
use crate::stateful::{SetupError, WorkspaceEnv, from_config};
use jp_term::printer::Printer;

/// Each tool's compiled `policy.run` and `policy.result`; `None` for one
/// that does not compile (which the loader prevents).
type PolicyCache = HashMap<(String, PolicyField), Option<Arc<Policy>>>;

/// The change a call of the current response makes to a file, as its
/// diff was shown: what the diffs of later calls to the same file are
/// taken against, as the calls run in order.
#[derive(Debug)]
pub struct Planned {
    /// The call's id.
    pub(super) call: String,
    /// The file, as the tool names it.
    pub(super) file: String,
    /// Its text once the call ran.
    pub(super) after: String,
}

/// Decides and runs tool calls for one query.
pub struct ToolCoordinator<'a> {
    pub(super) config: &'a AppConfig,
    pub(super) workspace: Workspace,
    pub(super) root: PathBuf,
    pub(super) self_exe: Option<PathBuf>,
    /// Each tool's compiled policies, compiled when first needed.
    pub(super) policies: Mutex<PolicyCache>,
    /// Where what the user must see before a prompt is shown.
    pub(super) printer: Printer,
    /// Whether the user saw the arguments as they streamed (a terminal),
    /// so a prompt need not list them again unless asked to (`v`).
    pub(super) shown_live: bool,
    /// The stateful policies (`conversation.policies`) and what they know
    /// of the conversation so far.
    pub(super) stateful: Mutex<PolicyRegistry>,
    /// The resolved config as JSON, for the stateful policies' `when`.
    pub(super) resolved: Value,
    /// The "allow for this session" answers in force (`allow.rs`).
    pub(super) approvals: Mutex<Approvals>,
    /// The file changes of the current response's calls, in call order
    /// (`preview.rs`).
    pub(super) planned: Mutex<Vec<Planned>>,
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
            approvals: Mutex::new(Approvals::default()),
            planned: Mutex::new(Vec::new()),
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
    /// `genuine` says which recorded session approvals the user gave (see
    /// [`crate::seal`]); the others approve nothing.
    pub fn with_history(
        self,
        history: &[ConversationEvent],
        genuine: &dyn Fn(&SessionApproval) -> bool,
    ) -> Result<Self, SetupError> {
        let mut registry = from_config(self.config)?;
        let env = WorkspaceEnv::new(self.config, &self.workspace);
        let ctx = PolicyContext {
            env: &env,
            config: &self.resolved,
            partial: false,
        };
        stateful::replay(&mut registry, history, &ctx);
        Ok(Self {
            stateful: Mutex::new(registry),
            approvals: Mutex::new(Approvals::from_history(history, genuine)),
            ..self
        })
    }

    /// Says whether the user saw each call's arguments as they streamed.
    #[must_use]
    pub fn arguments_shown_live(self, shown_live: bool) -> Self {
        Self { shown_live, ..self }
    }

    pub(super) fn tool(&self, name: &str) -> Option<&'a ToolConfig> {
        offered(&self.config.conversation.tools)
            .find(|(offered, _)| offered.as_str() == name)
            .map(|(_, tool)| tool)
    }

    pub(super) fn policy(&self, tool: &str, field: PolicyField) -> Option<Arc<Policy>> {
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

    pub(super) fn stateful_check_as(
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
