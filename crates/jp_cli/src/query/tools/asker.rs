//! The [`Asker`]: the questions put to the user about a call, while its
//! arguments stream ([`Asker::confirm_early`]) and once they are complete
//! ([`Asker::confirm`]): run, allow for the session, decline, edit, view;
//! and everything else jp shows about a call before and while it runs
//! (its arguments, the diff of its file change: [`super::preview`], a
//! config change, a result to send). It alone holds the printer.

use std::future::Future;
use std::sync::Mutex;

use jp_config::delta::Change;
use jp_conversation::{ResponseStatus, ToolCallRequest};
use jp_policy::{Decision, Mode, PolicyField};
use serde_json::{Map, Value};

use super::Judge;
use super::answers::{RetryAnswer, RunAnswer, early_choices, run_choices, with_allow, with_reach};
use super::content::{edited_text, text_argument, with_text};
use crate::query::arguments::{
    Arguments, arguments_header, arguments_page, complete, short_arguments,
};
use crate::query::decision::{Answer, Ask, Verdict, interrupted, not_run};
use crate::query::render::full_arguments;
use jp_term::printer::{Printer, Style};
use jp_term::prompt::{Answer as _, Live, LiveQuestion, PromptError, PromptTurn, Ticket};
use jp_tools::DefaultTool;

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

/// Puts calls to the user and shows what they must see about them.
pub struct Asker<'j> {
    pub(super) judge: &'j Judge<'j>,
    /// Where what the user must see before a prompt is shown.
    printer: Printer,
    /// Whether the user saw the arguments as they streamed (a terminal),
    /// so a prompt need not list them again unless asked to (`v`).
    shown_live: bool,
    /// The file changes of the current response's calls, in call order
    /// ([`super::preview`]).
    pub(super) planned: Mutex<Vec<Planned>>,
}

impl<'j> Asker<'j> {
    /// An asker about the calls `judge` decides, showing on `printer`;
    /// `shown_live` says whether the user saw each call's arguments as they
    /// streamed.
    #[must_use]
    pub fn new(judge: &'j Judge<'j>, printer: Printer, shown_live: bool) -> Self {
        Self {
            judge,
            printer,
            shown_live,
            planned: Mutex::new(Vec::new()),
        }
    }

    /// The judge of the calls this asks about.
    #[must_use]
    pub fn judge(&self) -> &'j Judge<'j> {
        self.judge
    }

    /// A line of `text` on a line of its own.
    pub(super) fn say(&self, style: Style, text: &str) {
        self.printer.finish_content();
        self.printer.chrome_line(style, text);
    }

    /// Each of `changes` to the config, a line each, under `header`.
    pub(super) fn show_changes(&self, style: Style, header: &str, changes: &[Change]) {
        self.say(style, header);
        let show = |value: &Option<Value>| {
            value
                .as_ref()
                .map_or_else(|| "(unset)".to_owned(), ToString::to_string)
        };
        for change in changes {
            self.printer.chrome_line(
                Style::Dim,
                &format!(
                    "  {}: {} → {}",
                    change.path,
                    show(&change.old),
                    show(&change.new)
                ),
            );
        }
    }

    /// The whole result `content` of a call to `name`, which the user is
    /// about to decide whether to send.
    pub(super) fn show_result(&self, name: &str, content: &str) {
        self.say(Style::Header, &format!("{name} returned:"));
        for line in content.lines() {
            self.printer.chrome_line(Style::Dim, &format!("  {line}"));
        }
    }

    /// Asks about a call whose arguments still stream (`question`: `Run
    /// CALL?` with what has arrived, and with the whole call once it is
    /// complete), when `ticket`'s turn comes: run it once
    /// complete, edit it then, or decline it now. `v` pages what `view`
    /// gives (the arguments so far; `None` when they are gone) and asks
    /// again: the prompt shows only what the cap let through. `notes` say
    /// which file a path argument opens where that is not the file it
    /// names ([`Judge::path_notes`]); they are shown first.
    #[allow(clippy::too_many_arguments, reason = "one question, all of it")]
    pub async fn confirm_early<V, F>(
        &self,
        id: &str,
        name: &str,
        question: &LiveQuestion,
        decision: Decision,
        notes: &[String],
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
        // Allowed for this session while it waited its turn (`a` at the
        // call before it): decided once complete, as the policy's own
        // early decision is.
        if self
            .judge
            .session_covers(name, decision.mode, decision.rule)
        {
            return Answer::Policy(decision);
        }
        self.show_notes(name, notes);
        let answer = loop {
            let answer = prompt
                .choose_live(question)
                .await
                .and_then(|live| Ok((RunAnswer::of(Ok(live.key))?, live.settled)));
            match answer {
                Ok((RunAnswer::View, _)) => {
                    let text = view().await.unwrap_or_else(|| {
                        format!("{name}: its arguments are no longer available to show.")
                    });
                    if let Err(PromptError::Interrupted) = prompt.page(&text).await {
                        return Answer::NotRun(interrupted(&call));
                    }
                }
                answer => break answer,
            }
        };
        match answer {
            Ok((RunAnswer::Run, _)) => Answer::Run { decision },
            Ok((RunAnswer::Allow, settled)) => {
                // The scope the prompt named once the call was complete;
                // before, only the identical call (`settle_early_allow`).
                self.judge
                    .allow_once_complete(id, name, decision.rule, &decision.reason, !settled);
                Answer::Allow { decision }
            }
            Ok((RunAnswer::Edit, _)) => Answer::Edit { decision },
            // `View` pages and asks again above.
            Ok((RunAnswer::Decline | RunAnswer::View, _)) => Answer::NotRun(not_run(
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

    /// The question of a prompt opened while a call's arguments stream
    /// (`shown`: its summary so far): `a` then allows only the identical
    /// call, as what calls like it are has not arrived; there is no `a`
    /// where `allow` is false (a call that is held: [`Judge::held`]). `reach` says
    /// where it would run ([`Judge::reach`]).
    #[must_use]
    pub fn early_question(shown: &str, reach: &str, allow: bool) -> Live {
        let choices = early_choices(None);
        let choices = if allow {
            choices
        } else {
            with_allow(choices, None)
        };
        Live {
            text: format!("Run {shown}?"),
            choices: with_reach(choices, reach),
            settled: false,
        }
    }

    /// The question of that prompt once call `name`'s `arguments` are
    /// complete: the whole call, and `a` naming the scope it allows.
    #[must_use]
    pub fn settled_question(&self, name: &str, arguments: &Map<String, Value>) -> Live {
        let allow = self
            .judge
            .allow_help(name, &Value::Object(arguments.clone()));
        Live {
            text: format!(
                "Run {name}({}){}?",
                short_arguments(arguments, 120),
                self.unsandboxed(name)
            ),
            choices: with_reach(
                match self.judge.held(name) {
                    // No session approval covers a call that is held.
                    Some(_) => with_allow(early_choices(None), None),
                    None => early_choices(Some(allow)),
                },
                &self.judge.reach(name),
            ),
            settled: true,
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
            rule,
            session,
        } = ask;
        let name = call.name.as_str();
        let declined = |content: &str, note: String| {
            not_run(&call, ResponseStatus::Declined, content.to_owned(), note)
        };
        let prompt = match ticket.wait().await {
            Ok(prompt) => prompt,
            Err(_) => return interrupted(&call),
        };
        // Allowed for this session while it waited its turn (`a` at the
        // call before it).
        if session
            && let Some(reason) = self
                .judge
                .session_allows(name, arguments.as_value(), mode, rule)
        {
            return Verdict::Run {
                tool: name.to_owned(),
                arguments,
                edited: false,
                mode,
                reason,
                approved: true,
                key: None,
            };
        }
        let mut edited = false;
        // `edit` opens the editor first; `e` at the prompt does too.
        let mut edit_now = mode == Mode::Edit;
        // The user approves what they can see: every argument, in full,
        // unless they just watched them stream (capped: `v` pages them).
        let mut show = !self.shown_live;
        loop {
            if edit_now {
                edit_now = false;
                let edit = self.edit_arguments(name, &arguments, &prompt).await;
                match edit.into_arguments(&call) {
                    Ok(new) => {
                        arguments = Arguments::new(new);
                        edited = true;
                        show = true;
                    }
                    Err(verdict) => return *verdict,
                }
            }
            if show {
                self.show_arguments(&call.id, name, &arguments);
                show = false;
            }
            let question = self.run_question(name, &arguments);
            let allow = session.then(|| self.judge.allow_help(name, arguments.as_value()));
            let choices = with_reach(run_choices(allow), &self.judge.reach(name));
            let answer = RunAnswer::of(prompt.choose(&question, &choices).await);
            match answer {
                Ok(answer @ (RunAnswer::Run | RunAnswer::Allow)) => {
                    let reason = if answer == RunAnswer::Allow {
                        self.judge.allow_for_session(
                            &call.id,
                            name,
                            rule,
                            arguments.as_value(),
                            &why,
                        )
                    } else {
                        why
                    };
                    return Verdict::Run {
                        tool: name.to_owned(),
                        arguments,
                        edited,
                        mode,
                        reason,
                        approved: true,
                        key: Some(if answer == RunAnswer::Allow { 'a' } else { 'y' }),
                    };
                }
                Ok(RunAnswer::Edit) => edit_now = true,
                // `v` pages the arguments in full, then asks again.
                Ok(RunAnswer::View) => {
                    let page = self.view_page(&call.id, name, &arguments);
                    if let Err(PromptError::Interrupted) = prompt.page(&page).await {
                        return interrupted(&call);
                    }
                }
                Ok(RunAnswer::Decline) => {
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

    /// What `v` pages at a complete call's prompt: every argument in full,
    /// and the diff of the file change the call would make.
    fn view_page(&self, call: &str, name: &str, arguments: &Map<String, Value>) -> String {
        let mut page = arguments_page(name, &complete(arguments));
        if let Some(lines) = self.file_change(call, name, arguments) {
            page.push_str(&crate::query::diff::plain(&lines));
        }
        page
    }

    /// "Run CALL?" about a call to `name` with `arguments`, after a line
    /// for each path argument that does not open the file it names (each
    /// time it is asked: after a page or an edit too).
    fn run_question(&self, name: &str, arguments: &Arguments) -> String {
        self.show_notes(name, &self.judge.path_notes(name, arguments.as_value()));
        format!(
            "Run {name}({}){}?",
            short_arguments(arguments, 120),
            self.unsandboxed(name)
        )
    }

    /// What the question about a call to `name` adds when the call would
    /// run without its kernel sandbox, or with one that lets it write
    /// outside the workspace: it is the exception, so it is said where the
    /// user answers (the sandbox itself is said by `?`), with what it
    /// means for undoing it (`jp conversation rewind`).
    fn unsandboxed(&self, name: &str) -> &'static str {
        let local = self
            .judge
            .tool(name)
            .is_some_and(|tool| matches!(tool.source, jp_config::tool::ToolSource::Local));
        if self.judge.unbounded(name).is_some() {
            " without a sandbox (jp cannot undo its changes)"
        } else if local && self.judge.undo(name).is_err() {
            " (jp cannot undo its changes)"
        } else {
            ""
        }
    }

    /// A line for each of `notes` (what a path argument opens), before a
    /// question about a call to `name`.
    fn show_notes(&self, name: &str, notes: &[String]) {
        if notes.is_empty() {
            return;
        }
        self.printer.finish_content();
        for note in notes {
            self.printer
                .chrome_line(Style::Warn, &format!("  {name}: {note}"));
        }
    }

    /// Every argument in full, strings as text, and the diff of the file
    /// change the call would make: what the user approves.
    fn show_arguments(&self, call: &str, name: &str, arguments: &Map<String, Value>) {
        self.printer.finish_content();
        self.printer
            .chrome_line(Style::Header, &arguments_header(name, &complete(arguments)));
        let change = self.file_change(call, name, arguments).unwrap_or_default();
        for line in full_arguments(arguments, None).into_iter().chain(change) {
            self.printer.chrome_line(line.style, &line.text);
        }
    }

    /// Lets the user edit the arguments until they are usable, fit the
    /// tool's parameters and are not skipped by its policy, or the user
    /// gives up. An edit that does not fit never runs: the user is told why
    /// and may edit again (`e`) or cancel (`n`). A call whose content is
    /// one long string opens that text itself ([`text_argument`]), any
    /// other its arguments as JSON; either way the edit is checked the
    /// same.
    async fn edit_arguments(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        prompt: &PromptTurn<'_>,
    ) -> Edit {
        let skip_old = self.judge.default_tool(name) == Some(DefaultTool::ModifyFile);
        let target = text_argument(arguments, skip_old);
        let (mut text, file_name) = match &target {
            Some(target) => (target.text.clone(), target.file_name.as_str()),
            None => (
                serde_json::to_string_pretty(arguments).unwrap_or_default(),
                "arguments.json",
            ),
        };
        loop {
            let problem = match prompt.edit(&text, file_name).await {
                Err(PromptError::Interrupted) => return Edit::Interrupted,
                Err(error) => return Edit::Cancelled(format!("the editor failed: {error}")),
                Ok(edited) => {
                    let value = match &target {
                        Some(target) => {
                            text = edited_text(&target.text, edited);
                            Ok(with_text(arguments, &target.pointer, text.clone()))
                        }
                        None => {
                            let value = crate::query::arguments::parse_arguments(name, &edited);
                            text = edited;
                            value
                        }
                    };
                    match value.and_then(|value| self.judge.fits(name, value)) {
                        Ok(new) => {
                            let value = Value::Object(new.clone());
                            match self.judge.evaluate(name, PolicyField::Run, &value) {
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
            let choices = RetryAnswer::choices(RetryAnswer::ALL);
            match RetryAnswer::of(prompt.choose("Edit them again?", &choices).await) {
                Ok(RetryAnswer::Edit) => {}
                Err(PromptError::Interrupted) => return Edit::Interrupted,
                Ok(RetryAnswer::Cancel) | Err(_) => {
                    return Edit::Cancelled(format!("the edited arguments cannot run: {problem}"));
                }
            }
        }
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

impl Edit {
    /// The edited arguments of `call` to put to the user, or the verdict
    /// the edit ends the call with.
    fn into_arguments(self, call: &ToolCallRequest) -> Result<Map<String, Value>, Box<Verdict>> {
        let name = &call.name;
        match self {
            Self::Done(arguments) => Ok(arguments),
            Self::Skip(reason) => Err(Box::new(not_run(
                call,
                ResponseStatus::Skipped,
                "The user's edit of the arguments is skipped by the user's policy; the call was not run.".into(),
                format!("{name}: skipped: the edited arguments are skipped by the policy ({reason})"),
            ))),
            Self::Cancelled(note) => Err(Box::new(not_run(
                call,
                ResponseStatus::Declined,
                "The user's edit of the arguments was unusable; the call was not run.".into(),
                format!("{name}: not run: {note}"),
            ))),
            Self::Interrupted => Err(Box::new(interrupted(call))),
        }
    }
}

#[cfg(test)]
#[path = "asker_tests.rs"]
mod tests;
