//! The check at a tool's start (issue 21): a call was decided while it
//! streamed, or approved at a question, before the calls ahead of it in
//! the response ran; those calls (or its own earlier run) may have changed
//! what its paths name. Right before each start, [`ToolCoordinator::recheck`]
//! evaluates `policy.run` again with the paths as they are then, and asks
//! again about a path the user approved that now leads elsewhere.

use jp_conversation::{ResponseStatus, ToolCallRequest};
use jp_policy::path::PathValue;
use jp_policy::stateful::Denial;
use jp_policy::{Decision, Mode, PolicyField, Workspace};
use serde_json::Value;

use super::ToolCoordinator;
use crate::query::arguments::Arguments;
use crate::query::decision::{Ask, Verdict, denied, not_run};
use jp_term::printer::Style;
use jp_term::prompt::Prompts;

/// An approved call as it is about to start: the arguments it runs with
/// and the mode they were cleared at. [`ToolCoordinator::run`] checks the
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
    /// ([`ToolCoordinator::path_targets`], taken before any call of the
    /// response ran); `None` for a call no one approved. A path that leads
    /// elsewhere by its start is put to the user again.
    pub seen: Option<Vec<(String, String)>>,
}

impl ToolCoordinator<'_> {
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
            let moved = approval.seen.as_ref().and_then(|seen| {
                let targets = self.path_targets(name, approval.arguments.as_value());
                targets.into_iter().find_map(|(at, target)| {
                    let (_, before) = seen.iter().find(|(was_at, _)| *was_at == at)?;
                    (*before != target).then(|| format!("{at} now leads to {target}, not {before}"))
                })
            });
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
                continue;
            }
            // The rules passed over say what changed (a path that now
            // resolves elsewhere).
            let passed_over = now
                .trace
                .iter()
                .filter(|rule| !rule.matched)
                .map(|rule| format!("; policy.run[{}]: {}", rule.rule, rule.reason))
                .collect::<String>();
            let changed = format!(
                "the policy's decision changed since the call was {}: {} then, {} now ({}{passed_over})",
                if approval.mode == Mode::Unattended {
                    "decided"
                } else {
                    "approved"
                },
                approval.mode,
                now.mode,
                now.reason
            );
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
                    let advice = self.narrow_advice(name, PolicyField::Run, now.rule, &|key| {
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
        self.printer.finish_content();
        self.printer
            .chrome_line(Style::Warn, &format!("  {name}: {changed}"));
        let ask = Ask {
            call: call.clone(),
            arguments: approval.arguments.clone(),
            mode: decision.mode,
            why: decision.reason,
            rule: decision.rule,
            session: false,
        };
        match self.confirm(ask, prompts.ticket()).await {
            Verdict::Run {
                arguments,
                edited,
                mode,
                ..
            } => {
                if edited && let Some(denial) = self.stateful_check(name, &arguments) {
                    let verdict = denied(&call.id, name, &denial);
                    return Err(Box::new((verdict, Some(denial))));
                }
                approval.edited |= edited;
                approval.arguments = arguments;
                approval.mode = approval.mode.max(mode);
                // Approved as they lead now.
                approval.seen = Some(self.path_targets(name, approval.arguments.as_value()));
                Ok(edited)
            }
            verdict @ Verdict::NotRun { .. } => Err(Box::new((verdict, None))),
        }
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
