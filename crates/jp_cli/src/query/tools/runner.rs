//! The [`Runner`]: running an approved call. Right before each start of
//! the tool it checks the call once more (issue 21, [`Runner::recheck`]: a
//! call was decided while it streamed, or approved at a question, before
//! the calls ahead of it in the response ran; those calls, or its own
//! earlier run, may have changed what its paths name); then the
//! [`ToolExecutor`] starts the tool's process; the tool's questions and
//! its config change ([`super::delta`]) are settled, and its result is
//! delivered per `policy.result`.

use std::path::PathBuf;

use jp_config::access::Grants;
use jp_config::delta::Proposal;
use jp_config::tool::limits::run_limits;
use jp_config::tool::{ToolConfig, ToolSource};
use jp_conversation::{ResponseStatus, ToolCallRequest, ToolCallResponse};
use jp_llm::tool::{Sandbox, ToolExecutor, ToolLimits, ToolTarget};
use jp_policy::stateful::Denial;
use jp_policy::{Decision, Mode, PolicyField};
use jp_tool::{Context, Outcome, Request, ToolInfo};
use jp_tools::DefaultTool;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::kept::{Kept, Restored};
use super::undo::{Capture, Changes, keep};
use super::{Asker, Judge, delta};
use crate::query::arguments::Arguments;
use crate::query::decision::{Ask, Ran, Verdict, denied, not_run};
use jp_term::printer::Style;
use jp_term::prompt::{PromptError, Prompts};

/// How many times a tool may ask for input in one call.
pub const MAX_QUESTIONS: usize = 8;

/// What a call's runs asked of jp so far.
#[derive(Debug, Default)]
struct Asked {
    /// The tool's questions.
    questions: usize,
    /// Its config changes that were rejected.
    rejections: usize,
}

/// An approved call as it is about to start: the arguments it runs with
/// and the mode they were cleared at. [`Runner::run`] checks the
/// policy once more right before every start of the tool (the calls before
/// it, or its own earlier run, may have changed the files its paths name),
/// and updates this when the user edits the arguments then.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    /// The arguments the tool gets.
    pub arguments: Arguments,
    /// Whether the user edited them.
    pub edited: bool,
    /// The mode the call was cleared at: `unattended` when the policy let
    /// it run unasked, `ask` or `edit` when the user approved it. A start
    /// whose policy now says something stricter is not cleared by it.
    pub mode: Mode,
    /// How many times the tool has started for this call (a rerun after a
    /// rejected config change, a restart from the Ctrl+C menu).
    pub runs: usize,
    /// Where each `path` argument led when the user approved the call
    /// ([`Judge::path_targets`], taken before any call of the
    /// response ran); `None` for a call no one approved. A path that leads
    /// elsewhere by its start is put to the user again.
    pub seen: Option<Vec<(String, String)>>,
    /// What the check at its start said, when it changed the answer (for
    /// the record of how the call was decided).
    pub at_start: Option<AtStart>,
}

/// What the check at a call's start said, when it changed the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AtStart {
    /// The `policy.run` decision then, its mode and rule; `None` when the
    /// policy said the same and a path that leads elsewhere now asked.
    pub policy: Option<(Mode, Option<usize>)>,
    /// The key the user answered with when asked again (`y`, `a`).
    pub key: Option<char>,
}

/// Runs the calls the [`Judge`] and the user let run.
pub struct Runner<'j> {
    pub(super) judge: &'j Judge<'j>,
    pub(super) asker: &'j Asker<'j>,
    /// The jp a tool command whose program is `jp` runs.
    self_exe: Option<PathBuf>,
    /// The config as tools see it: the resolved config with the model
    /// alias resolved (`haiku` becomes `anthropic/claude-haiku-4-5`), the
    /// form a change is checked, shown and stored in.
    readable: Value,
    /// Where what a call changes is kept, as it was (`None`: nowhere).
    blobs: Option<crate::blobs::Blobs>,
}

impl<'j> Runner<'j> {
    /// A runner of the calls `asker` (and its judge) clear; a tool command
    /// whose program is `jp` runs `self_exe` (this jp).
    #[must_use]
    pub fn new(asker: &'j Asker<'j>, self_exe: Option<PathBuf>) -> Self {
        let judge = asker.judge();
        let config = judge.config;
        let mut readable = judge.stateful().resolved().clone();
        let id = &config.assistant.model.id;
        if let Ok((provider, name)) = jp_config::validate::resolve_model_id(config, id)
            && let Some(slot) = readable
                .get_mut("assistant")
                .and_then(|a| a.get_mut("model"))
                .and_then(|m| m.get_mut("id"))
        {
            *slot = Value::String(format!("{provider}/{name}"));
        }
        Self {
            judge,
            asker,
            self_exe,
            readable,
            blobs: None,
        }
    }

    /// Keeps what the calls change, as it was, in `blobs` (the
    /// conversation's), for `jp conversation rewind`.
    #[must_use]
    pub fn with_blobs(self, blobs: Option<crate::blobs::Blobs>) -> Self {
        Self { blobs, ..self }
    }

    /// The judge of the calls this runs.
    #[must_use]
    pub fn judge(&self) -> &'j Judge<'j> {
        self.judge
    }

    /// What puts questions to the user about the calls this runs.
    #[must_use]
    pub fn asker(&self) -> &'j Asker<'j> {
        self.asker
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
        let (tool, target) = match self.target(&name) {
            Ok(found) => found,
            Err((status, content)) => return unrun(&call.id, status, content),
        };
        let limits = self.limits(&name);
        let mut request = Request {
            tool: ToolInfo {
                name: name.clone(),
                // The one copy a run makes: the protocol's request owns
                // its arguments. It is dropped once the tool has run.
                arguments: approval.arguments.to_owned_map(),
                answers: Map::new(),
                options: tool.options.clone().into_iter().collect(),
            },
            context: Context::run(self.judge.root.clone()),
        };
        // The config the tool may read, as of the cycle's start (this
        // coordinator's config); nothing for a tool without read grants.
        let grants = Grants::new(&tool.access.config);
        request.context.config = grants.readable(&self.readable);
        let mut stderr = String::new();
        let mut asked = Asked::default();
        let mut keeping = self.keeping(&name, &target);
        let mut changes = Changes::default();
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
                        shown: false,
                        // What an earlier run of it changed.
                        changes,
                    };
                }
            }
            keeping.before_run(&self.judge.root, approval);
            approval.runs += 1;
            let kept = Kept::take(&self.judge.root);
            let mut run = executor.run(&target, &request, &limits, cancel).await;
            if !run.stderr.is_empty() {
                stderr.push_str(&run.stderr);
            }
            let restored = kept.restore();
            if !restored.failed.is_empty() {
                self.judge.tampered(&restored.failed.join("; "));
            }
            if restored != Restored::default() {
                run.outcome = put_back(run.outcome, &restored);
            }
            // Right after the run, before anything waits for the user: what
            // changes later is not the call's.
            changes = keeping.settle(&call.id, self.blobs.as_ref());
            let next = self
                .after_run(
                    &name,
                    run.outcome,
                    &grants,
                    &mut request,
                    &mut asked,
                    prompts,
                )
                .await;
            if let Some(done) = next {
                break done;
            }
        };
        drop(request);
        // The undo cache is free for other calls again.
        drop(keeping);
        let arguments = approval.arguments.as_value();
        let content = with_edit_note(approval.edited, arguments, content);
        let (response, note, shown) = self
            .deliver(call, &name, arguments, status, content, prompts)
            .await;
        Ran {
            response,
            stderr,
            note,
            delta,
            denial: None,
            shown,
            changes,
        }
    }

    /// How the changes of a call of tool `name` (run as `target`) are
    /// kept, for a rewind to put back (`conversation.undo`): the file a
    /// file tool of jp's changes; the workspace around a local tool whose
    /// sandbox confines its writes to it; nothing for jp's tools that
    /// change nothing and for MCP tools (a server changes what it changes
    /// when it likes, not only in a call).
    fn keeping(&self, name: &str, target: &ToolTarget) -> Keeping {
        let undo = &self.judge.config.conversation.undo;
        if !matches!(target, ToolTarget::Local { .. }) {
            return Keeping::Nothing;
        }
        let reads_only = self
            .judge
            .default_tool(name)
            .is_some_and(DefaultTool::reads_only);
        if !undo.enable {
            return if reads_only {
                Keeping::Nothing
            } else {
                Keeping::NotKept("`conversation.undo.enable` is off".into())
            };
        }
        match self.judge.default_tool(name) {
            Some(
                tool
                @ (DefaultTool::CreateFile | DefaultTool::ModifyFile | DefaultTool::DeleteFile),
            ) => Keeping::Files(tool, Capture::new(&self.judge.root, undo.max_file_bytes)),
            Some(
                DefaultTool::ReadFile
                | DefaultTool::ListFiles
                | DefaultTool::Grep
                | DefaultTool::Glob,
            ) => Keeping::Nothing,
            Some(DefaultTool::RunCommand) | None => match self.judge.undo(name) {
                Err(why) => Keeping::NotKept(why),
                Ok(()) => Keeping::Workspace(super::snapshot::Budget {
                    max_files: usize::try_from(undo.max_files).unwrap_or(usize::MAX),
                    max_bytes: undo.max_bytes,
                    max_file_bytes: undo.max_file_bytes,
                }),
            },
        }
    }

    /// The bounds of a run of tool `name`: its limits and its sandbox.
    fn limits(&self, name: &str) -> ToolLimits {
        let limits = run_limits(&self.judge.config.conversation.tools, name);
        ToolLimits {
            timeout: limits.timeout,
            max_output_bytes: usize::try_from(limits.max_output_bytes).unwrap_or(usize::MAX),
            timeout_key: Some(limits.timeout_key),
            max_output_key: Some(limits.max_output_key),
            sandbox: Sandbox::from_config(&jp_config::sandbox::for_tool(self.judge.config, name)),
        }
    }

    /// The tool called `name` and what runs it (a command whose program is
    /// `jp` runs this jp; an MCP tool, its server's tool); otherwise what
    /// answers the call.
    fn target(&self, name: &str) -> Result<(&ToolConfig, ToolTarget), (ResponseStatus, String)> {
        let Some(tool) = self.judge.tool(name) else {
            // `decide` refused it already; never run an unknown tool.
            return Err((
                ResponseStatus::Refused,
                format!("There is no tool named `{name}`."),
            ));
        };
        match (&tool.source, &tool.command) {
            (ToolSource::Builtin, _) => Err((
                ResponseStatus::Error,
                format!(
                    "`{name}` is configured as a builtin tool, and this jp has no builtin tool by that name."
                ),
            )),
            (ToolSource::Local, command) => {
                let mut argv = command.as_ref().map(|c| c.argv()).unwrap_or_default();
                if argv.first().is_some_and(|p| p == "jp")
                    && let Some(exe) = &self.self_exe
                {
                    argv[0] = exe.to_string_lossy().into_owned();
                }
                Ok((tool, ToolTarget::Local { argv }))
            }
            (ToolSource::Mcp(server), _) => Ok((
                tool,
                ToolTarget::Mcp {
                    server: server.clone(),
                    tool: tool.tool.clone().unwrap_or_else(|| name.to_owned()),
                },
            )),
        }
    }

    /// What one run of tool `name` ended with (`outcome`): the call's
    /// status, content and approved config change, or `None` to run it
    /// again (with the answer to its question, or told why its config
    /// change was rejected, in `request`).
    async fn after_run(
        &self,
        name: &str,
        outcome: Outcome,
        grants: &Grants,
        request: &mut Request,
        asked: &mut Asked,
        prompts: &Prompts,
    ) -> Option<(ResponseStatus, String, Option<Proposal>)> {
        match outcome {
            Outcome::Success {
                content,
                config,
                unset,
            } => {
                if config.is_none() && unset.is_empty() {
                    return Some((ResponseStatus::Success, content, None));
                }
                // The content waits until the change is settled: the
                // model never reads "switched to opus" for a switch that
                // did not happen.
                let review = delta::ChangeReview {
                    asker: self.asker,
                    config: self.judge.config,
                    readable: &self.readable,
                };
                match review
                    .settle(name, grants, config.as_ref(), &unset, prompts)
                    .await
                {
                    delta::Settled::Approved(proposal) => {
                        let proposal = (!proposal.is_empty()).then_some(proposal);
                        Some((ResponseStatus::Success, content, proposal))
                    }
                    delta::Settled::Rejected(rejection) => {
                        asked.rejections += 1;
                        let rejections = asked.rejections;
                        if rejections > delta::MAX_DELTA_REJECTIONS {
                            self.asker.say(
                                Style::Bad,
                                &format!("⚠ tool {name} had its config change rejected {rejections} times; the call ends here"),
                            );
                            return Some((
                                ResponseStatus::Error,
                                delta::exhausted(name, &rejection),
                                None,
                            ));
                        }
                        request.context.delta_rejection = Some(rejection);
                        None
                    }
                    delta::Settled::Interrupted => Some((
                        ResponseStatus::Error,
                        "The user interrupted jp before the tool's config change was decided; the change was not applied and the result was not kept.".into(),
                        None,
                    )),
                }
            }
            Outcome::Error { message, .. } => Some((ResponseStatus::Error, message, None)),
            Outcome::NeedsInput { question } => {
                asked.questions += 1;
                if asked.questions > MAX_QUESTIONS {
                    return Some((
                        ResponseStatus::Error,
                        format!(
                            "The tool asked more than {MAX_QUESTIONS} questions; jp stopped it."
                        ),
                        None,
                    ));
                }
                let answer = match prompts.turn().await {
                    Ok(prompt) => prompt.ask(&question).await,
                    Err(error) => Err(error),
                };
                let failed = match answer {
                    Ok(answer) => {
                        request.tool.answers.insert(question.id.clone(), answer);
                        return None;
                    }
                    Err(PromptError::Unavailable) => format!(
                        "The tool needs an answer to \"{}\" and no one could answer it (jp is running without a terminal); it did not finish.",
                        question.text
                    ),
                    Err(error) => format!(
                        "The tool needs an answer to \"{}\" and the user could not be asked ({error}); it did not finish.",
                        question.text
                    ),
                };
                Some((ResponseStatus::Error, failed, None))
            }
        }
    }

    /// Applies `policy.result`: deliver, ask, edit or withhold. The flag
    /// says the user saw the whole result at the question and sent it.
    pub(super) async fn deliver(
        &self,
        call: &ToolCallRequest,
        name: &str,
        arguments: &Value,
        status: ResponseStatus,
        content: String,
        prompts: &Prompts,
    ) -> (ToolCallResponse, Option<String>, bool) {
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
                false,
            )
        };
        let decision = match self.judge.evaluate(name, PolicyField::Result, arguments) {
            Ok(decision) => decision,
            Err(error) => return withheld(format!("{name}: result withheld: {error}")),
        };
        let why = decision.reason.clone();
        match decision.mode {
            Mode::Unattended => (respond(status, content), None, false),
            Mode::Skip => withheld(format!("{name}: result withheld ({why})")),
            mode @ (Mode::Ask | Mode::Edit) => {
                if !prompts.available() {
                    // As narrow as the advice for `policy.run`: never a
                    // blanket `unattended`, which would send every future
                    // result of the tool unseen.
                    let known = |key: &str| arguments.get(key).cloned();
                    let advice =
                        self.judge
                            .narrow_advice(name, PolicyField::Result, decision.rule, &known);
                    return withheld(format!(
                        "{name}: result withheld: policy.result is {mode} ({why}) and no terminal is available; {advice}"
                    ));
                }
                let prompt = match prompts.turn().await {
                    Ok(prompt) => prompt,
                    Err(error) => return withheld(format!("{name}: result withheld: {error}")),
                };
                let content = if mode == Mode::Edit {
                    match prompt.edit(&content, "result.txt").await {
                        Ok(edited) => edited,
                        Err(error) => return withheld(format!("{name}: result withheld: {error}")),
                    }
                } else {
                    // The user decides on what they can see: the whole result.
                    self.asker.show_result(name, &content);
                    content
                };
                match prompt
                    .confirm(&format!("Send the result of {name} to the model?"))
                    .await
                {
                    Ok(true) => (respond(status, content), None, mode == Mode::Ask),
                    Ok(false) => withheld(format!("{name}: result withheld by you")),
                    Err(error) => withheld(format!("{name}: result withheld: {error}")),
                }
            }
        }
    }

    /// Checks, right before the tool starts, that its `policy.run` still
    /// clears the call at `approval`'s mode, with paths resolved as they
    /// are now. A decision made while the call streamed, or before the
    /// calls ahead of it ran, was made on the files as they were then: a
    /// link created since can send an approved path out of the workspace.
    /// When the policy now says something stricter, that applies: `skip`
    /// does not run the call, `ask` and `edit` put it to the user with a
    /// line saying why (and decline it without a terminal). `Ok(true)` when
    /// the user edited the arguments at that question (they are in
    /// `approval`, checked again, the stateful policies too: a denial is
    /// returned with the verdict, for the record).
    pub(super) async fn recheck(
        &self,
        call: &ToolCallRequest,
        approval: &mut Approval,
        prompts: &Prompts,
    ) -> Result<bool, Box<(Verdict, Option<Denial>)>> {
        let name = call.name.as_str();
        let refuse = |verdict| Box::new((verdict, None));
        let not_started = if approval.runs > 0 {
            "The tool was not run again"
        } else {
            "The call was not run"
        };
        let mut edited = false;
        loop {
            let now = self
                .judge
                .evaluate(name, PolicyField::Run, approval.arguments.as_value())
                .map_err(|error| {
                    refuse(not_run(
                        call,
                        ResponseStatus::Refused,
                        format!("{not_started}: jp could not evaluate its policy."),
                        format!("{name}: refused: {error}"),
                    ))
                })?;
            // The user approved the paths as they led then: one that leads
            // elsewhere now, through a link made since (perhaps by a call
            // before it), is put to them again (found by adversarial runs:
            // outside the workspace, or onto .jp/config.toml). An
            // unattended call needs no such check: its rule approves only
            // paths inside, as they are now.
            let moved = self.moved_path(name, approval);
            if now.mode <= approval.mode && moved.is_none() {
                return Ok(edited);
            }
            if now.mode <= approval.mode
                && let Some(moved) = moved
            {
                let changed =
                    format!("{moved} as when the call was approved, so it is asked about again");
                if !prompts.available() {
                    return Err(refuse(not_run(
                        call,
                        ResponseStatus::Declined,
                        format!(
                            "{not_started}: a path it names leads somewhere else than when the user approved it, and no one could confirm it again (jp is running without a terminal)."
                        ),
                        format!("{name}: declined: {changed}, and no terminal is available"),
                    )));
                }
                edited |= self
                    .ask_again(call, approval, asking(moved), &changed, prompts)
                    .await?;
                approval.at_start.get_or_insert_default();
                continue;
            }
            let changed = decision_changed(approval.mode, &now);
            approval.at_start = Some(AtStart {
                policy: Some((now.mode, now.rule)),
                key: None,
            });
            match now.mode {
                Mode::Skip => {
                    return Err(refuse(not_run(
                        call,
                        ResponseStatus::Skipped,
                        format!("{not_started}: it is skipped by the user's policy."),
                        format!("{name}: skipped: {changed}"),
                    )));
                }
                mode if !prompts.available() => {
                    let arguments = &approval.arguments;
                    let advice =
                        self.judge
                            .narrow_advice(name, PolicyField::Run, now.rule, &|key| {
                                arguments.get(key).cloned()
                            });
                    let must = if mode == Mode::Edit {
                        "jp must open an editor"
                    } else {
                        "jp must ask"
                    };
                    return Err(refuse(not_run(
                        call,
                        ResponseStatus::Declined,
                        format!(
                            "{not_started}: the user's policy requires confirmation and no one could confirm it (jp is running without a terminal)."
                        ),
                        format!(
                            "{name}: declined: {changed}, so {must}, and no terminal is available; {advice}"
                        ),
                    )));
                }
                _ => {
                    edited |= self
                        .ask_again(call, approval, now, &changed, prompts)
                        .await?;
                }
            }
        }
    }

    /// The first `path` argument of a call to `name` that the user
    /// approved (`approval`) and that leads somewhere else now, through a
    /// link made since (perhaps by a call before it), said as such.
    fn moved_path(&self, name: &str, approval: &Approval) -> Option<String> {
        let seen = approval.seen.as_ref()?;
        let targets = self.judge.path_targets(name, approval.arguments.as_value());
        targets.into_iter().find_map(|(at, target)| {
            let (_, before) = seen.iter().find(|(was_at, _)| *was_at == at)?;
            (*before != target).then(|| format!("{at} now leads to {target}, not {before}"))
        })
    }

    /// Puts a call cleared earlier to the user again at its start, at
    /// `decision`'s mode, after a line saying what `changed`. When they approve,
    /// `approval` takes what they approved (the arguments, edited or not,
    /// and the mode); `Ok(true)` when they edited the arguments, which the
    /// stateful policies then check again (they allowed the ones before).
    async fn ask_again(
        &self,
        call: &ToolCallRequest,
        approval: &mut Approval,
        decision: Decision,
        changed: &str,
        prompts: &Prompts,
    ) -> Result<bool, Box<(Verdict, Option<Denial>)>> {
        let name = call.name.as_str();
        self.asker.say(Style::Warn, &format!("  {name}: {changed}"));
        let ask = Ask {
            call: call.clone(),
            arguments: approval.arguments.clone(),
            mode: decision.mode,
            why: decision.reason,
            rule: decision.rule,
            session: false,
        };
        match self.asker.confirm(ask, prompts.ticket()).await {
            Verdict::Run {
                arguments,
                edited,
                mode,
                key,
                ..
            } => {
                approval.at_start.get_or_insert_default().key = key;
                if edited && let Some(denial) = self.judge.stateful().check(name, &arguments, false)
                {
                    let verdict = denied(&call.id, name, &denial);
                    return Err(Box::new((verdict, Some(denial))));
                }
                approval.edited |= edited;
                approval.arguments = arguments;
                approval.mode = approval.mode.max(mode);
                // Approved as they lead now.
                approval.seen = Some(self.judge.path_targets(name, approval.arguments.as_value()));
                Ok(edited)
            }
            verdict @ Verdict::NotRun { .. } => Err(Box::new((verdict, None))),
        }
    }
}

/// `outcome` of a run that changed files that reach past its sandbox
/// (`restored`, put back since: [`Kept`]): an error that says so, whatever
/// the tool answered, so the model does not build on a change that did not
/// happen.
fn put_back(outcome: Outcome, restored: &Restored) -> Outcome {
    let what = match outcome {
        Outcome::Success { content, .. }
        | Outcome::Error {
            message: content, ..
        } => content,
        _ => String::new(),
    };
    let mut message = String::from(
        "The tool changed files no tool may change (jp's config changes only through a tool's access.config grants; git's config and hooks run outside any sandbox).",
    );
    if !restored.put_back.is_empty() {
        message.push_str(&format!(" jp put back {}.", restored.put_back.join(", ")));
    }
    if !restored.failed.is_empty() {
        message.push_str(&format!(
            " jp could not put back: {}. Do not run git or jp's config here before the user has looked at it; every call is now asked.",
            restored.failed.join("; ")
        ));
    }
    Outcome::error(format!("{message} What the tool said:\n{what}"))
}

/// The decision to ask again about a call whose path leads elsewhere now
/// (`why`).
fn asking(why: String) -> Decision {
    Decision {
        mode: Mode::Ask,
        rule: None,
        reason: why,
        trace: Vec::new(),
    }
}

/// What changed about a call cleared at `then` that `policy.run` decides
/// `now` at its start; the rules passed over say why (a path that now
/// resolves elsewhere).
fn decision_changed(then: Mode, now: &Decision) -> String {
    let passed_over = now
        .trace
        .iter()
        .filter(|rule| !rule.matched)
        .map(|rule| format!("; policy.run[{}]: {}", rule.rule, rule.reason))
        .collect::<String>();
    let cleared = if then == Mode::Unattended {
        "decided"
    } else {
        "approved"
    };
    format!(
        "the policy's decision changed since the call was {cleared}: {then} then, {} now ({}{passed_over})",
        now.mode, now.reason
    )
}

/// How the changes of one call are kept (see [`Runner::keeping`]).
enum Keeping {
    /// Not at all: the call changes nothing jp could keep.
    Nothing,
    /// The file a file tool of jp's changes.
    Files(DefaultTool, Capture),
    /// The workspace, to be looked at before the first run with this
    /// budget.
    Workspace(super::snapshot::Budget),
    /// The workspace as it was before the first run.
    Looked(super::snapshot::Snapshot),
    /// Not, and why.
    NotKept(String),
}

impl Keeping {
    /// Right before each run of the call (with its arguments as they are
    /// then): watch the file it will change, or look at the workspace
    /// before its first run.
    fn before_run(&mut self, root: &std::path::Path, approval: &Approval) {
        match self {
            Self::Files(tool, capture) => {
                if let Some(arguments) = approval.arguments.as_value().as_object()
                    && let Some(path) = jp_tools::changed_path(root, *tool, arguments)
                {
                    capture.watch(&path);
                }
            }
            Self::Workspace(budget) => {
                let cache = super::snapshot::cache_dir(root);
                *self = match cache {
                    None => Self::NotKept("jp has no cache directory (set HOME)".into()),
                    Some(cache) => match super::snapshot::Snapshot::take(root, &cache, *budget) {
                        Ok(snapshot) => Self::Looked(snapshot),
                        Err(why) => Self::NotKept(why),
                    },
                };
            }
            Self::Nothing | Self::Looked(_) | Self::NotKept(_) => {}
        }
    }

    /// What the call changed so far (after a run): each file, its
    /// content before kept in `blobs` (while the undo cache is still
    /// locked), or why what it changed is not kept.
    fn settle(&self, call_id: &str, blobs: Option<&crate::blobs::Blobs>) -> Changes {
        match self {
            Self::Files(_, capture) => Changes::Kept(keep(capture.finish(call_id), blobs)),
            Self::Looked(snapshot) => match snapshot.changes(call_id) {
                Ok(captured) => Changes::Kept(keep(captured, blobs)),
                Err(why) => Changes::NotKept(why),
            },
            Self::NotKept(why) => Changes::NotKept(why.clone()),
            Self::Nothing | Self::Workspace(_) => Changes::default(),
        }
    }
}

/// The result of a call that never started: `content` for the model.
fn unrun(id: &str, status: ResponseStatus, content: String) -> Ran {
    Ran {
        response: ToolCallResponse::new(id, status, content),
        stderr: String::new(),
        note: None,
        delta: None,
        denial: None,
        shown: false,
        changes: Changes::default(),
    }
}

/// A call's result, saying first when the user `edited` its arguments
/// (it ran with `arguments`).
fn with_edit_note(edited: bool, arguments: &Value, content: String) -> String {
    if edited {
        format!(
            "(The user edited the arguments before the call ran; it ran with {arguments}.)\n{content}"
        )
    } else {
        content
    }
}
