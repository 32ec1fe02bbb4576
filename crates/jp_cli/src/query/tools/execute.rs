//! Running an approved call: the [`ToolExecutor`] that starts the tool's
//! process, the check right before each start, the tool's questions and
//! config change, and its result delivered per `policy.result`.

use jp_config::access::Grants;
use jp_config::delta::Proposal;
use jp_config::tool::limits::run_limits;
use jp_config::tool::{ToolConfig, ToolSource};
use jp_conversation::{ResponseStatus, ToolCallRequest, ToolCallResponse};
use jp_llm::tool::{ToolExecutor, ToolLimits, ToolTarget};
use jp_policy::{Mode, PolicyField};
use jp_tool::{Context, Outcome, Request, ToolInfo};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{Approval, ToolCoordinator, delta};
use crate::query::decision::{Ran, Verdict};
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

impl ToolCoordinator<'_> {
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
            Err((status, content)) => {
                return Ran {
                    response: ToolCallResponse::new(&call.id, status, content),
                    stderr: String::new(),
                    note: None,
                    delta: None,
                    denial: None,
                    shown: false,
                };
            }
        };
        let limits = run_limits(&self.config.conversation.tools, &name);
        let limits = ToolLimits {
            timeout: limits.timeout,
            max_output_bytes: usize::try_from(limits.max_output_bytes).unwrap_or(usize::MAX),
            timeout_key: Some(limits.timeout_key),
            max_output_key: Some(limits.max_output_key),
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
        let mut asked = Asked::default();
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
                    };
                }
            }
            approval.runs += 1;
            let run = executor.run(&target, &request, &limits, cancel).await;
            if !run.stderr.is_empty() {
                stderr.push_str(&run.stderr);
            }
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
        let arguments = approval.arguments.as_value();
        let content = if approval.edited {
            format!(
                "(The user edited the arguments before the call ran; it ran with {arguments}.)\n{content}"
            )
        } else {
            content
        };
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
        }
    }

    /// The tool called `name` and what runs it (a command whose program is
    /// `jp` runs this jp; an MCP tool, its server's tool); otherwise what
    /// answers the call.
    fn target(&self, name: &str) -> Result<(&ToolConfig, ToolTarget), (ResponseStatus, String)> {
        let Some(tool) = self.tool(name) else {
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
                match self
                    .settle_delta(name, grants, config.as_ref(), &unset, prompts)
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
                            self.printer.chrome_line(
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
        let decision = match self.evaluate(name, PolicyField::Result, arguments) {
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
                    match prompt.edit(&content, "result.txt").await {
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
                    Ok(true) => (respond(status, content), None, mode == Mode::Ask),
                    Ok(false) => withheld(format!("{name}: result withheld by you")),
                    Err(error) => withheld(format!("{name}: result withheld: {error}")),
                }
            }
        }
    }
}
