//! The [`Judge`], [`Asker`] and [`Runner`] end to end with a mock backend: a scripted
//! [`ToolExecutor`] instead of a tool process and a [`ScriptedPrompter`]
//! instead of the terminal. What reaches the model (the exact
//! [`ToolCallResponse`]), what the user is told (the note and the lines on
//! stderr), what the user is asked, and what the tool gets back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::time::Duration;

use jp_config::load::{LoadOptions, load};
use jp_tool::{AnswerKind, Question};
use serde_json::json;

use std::future::Future;
use std::sync::{Arc, Mutex};

use jp_config::AppConfig;
use jp_conversation::{ResponseStatus, ToolCallRequest, ToolCallResponse};
use jp_llm::tool::{ToolExecutor, ToolLimits, ToolRun, ToolTarget};
use jp_policy::{Decision, Mode};
use jp_tool::{Context, Outcome, Request, ToolInfo};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::runner::MAX_QUESTIONS;
use super::*;
use crate::query::arguments::{Arguments, arguments_page};
use crate::query::decision::{Answer, Decided, Ran, Verdict};
use jp_term::printer::{Captured, Printer};
use jp_term::prompt::{NoPrompter, Prompter, Prompts, ScriptedPrompter};

/// A tool backend that answers from a script, one [`ToolRun`] per run, and
/// records what each run was asked to do.
#[derive(Default)]
struct MockExecutor {
    runs: Mutex<VecDeque<ToolRun>>,
    /// Each run's argv and request, in order.
    got: Mutex<Vec<(Vec<String>, Request)>>,
}

impl MockExecutor {
    fn new(runs: impl IntoIterator<Item = ToolRun>) -> Self {
        Self {
            runs: Mutex::new(runs.into_iter().collect()),
            got: Mutex::default(),
        }
    }

    /// The requests the tool got, in order.
    fn requests(&self) -> Vec<Request> {
        let got = self.got.lock().unwrap();
        got.iter().map(|(_, request)| request.clone()).collect()
    }

    /// The argv of each run.
    fn argvs(&self) -> Vec<Vec<String>> {
        let got = self.got.lock().unwrap();
        got.iter().map(|(argv, _)| argv.clone()).collect()
    }
}

impl ToolExecutor for MockExecutor {
    fn run(
        &self,
        target: &ToolTarget,
        request: &Request,
        _: &ToolLimits,
        _: &CancellationToken,
    ) -> impl Future<Output = ToolRun> {
        self.got
            .lock()
            .unwrap()
            .push((target.argv().to_vec(), request.clone()));
        // A run past the script is a test bug; it shows as this error in
        // the response the test compares.
        let run =
            self.runs.lock().unwrap().pop_front().unwrap_or_else(|| {
                tool_run(Outcome::error("the mock executor has no more runs"), "")
            });
        std::future::ready(run)
    }
}

fn tool_run(outcome: Outcome, stderr: &str) -> ToolRun {
    ToolRun {
        outcome,
        stderr: stderr.to_owned(),
        duration: Duration::ZERO,
    }
}

fn success(content: &str) -> ToolRun {
    tool_run(Outcome::success(content), "")
}

fn needs(question: &Question) -> ToolRun {
    tool_run(
        Outcome::NeedsInput {
            question: question.clone(),
        },
        "",
    )
}

fn yes_no() -> Question {
    Question {
        id: "overwrite".into(),
        text: "Overwrite a.txt?".into(),
        answer: AnswerKind::Boolean,
        default: Some(json!(false)),
    }
}

fn text() -> Question {
    Question {
        id: "message".into(),
        text: "Commit message?".into(),
        answer: AnswerKind::Text,
        default: Some(json!("wip")),
    }
}

fn choice() -> Question {
    Question {
        id: "branch".into(),
        text: "Which branch?".into(),
        answer: AnswerKind::Select {
            options: vec!["main".into(), "dev".into()],
        },
        default: None,
    }
}

/// A workspace whose only tool is `save(path)`, run as `save-tool --quiet`
/// with the given `policy` lines, and a coordinator's printer whose stderr
/// is captured.
struct Fixture {
    dir: tempfile::TempDir,
    config: AppConfig,
    chrome: Captured,
}

impl Fixture {
    fn new(policy: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".jp")).unwrap();
        std::fs::write(
            dir.path().join(".jp/config.toml"),
            format!(
                "[conversation.tools.save]\n\
                 command = [\"save-tool\", \"--quiet\"]\n\
                 parameters.path = {{ type = \"path\", required = true }}\n\
                 {policy}\n"
            ),
        )
        .unwrap();
        let loaded = load(&LoadOptions {
            cwd: dir.path().to_path_buf(),
            trust: jp_config::trust::WorkspaceTrust::Trusted,
            ..LoadOptions::default()
        })
        .unwrap();
        Self {
            dir,
            config: loaded.config,
            chrome: Captured::default(),
        }
    }

    fn judge(&self) -> Judge<'_> {
        Judge::new(&self.config, self.dir.path())
    }

    /// An asker about `judge`'s calls, its chrome in [`Self::chrome`].
    fn asker<'j>(&self, judge: &'j Judge<'j>) -> Asker<'j> {
        Asker::new(judge, self.printer(), false)
    }

    /// A printer whose chrome goes to [`Self::chrome`].
    fn printer(&self) -> Printer {
        Printer::new(
            Box::new(std::io::sink()),
            false,
            Box::new(self.chrome.clone()),
            false,
        )
    }

    /// Runs `call` at `approval` through `executor`, with `judge`'s
    /// decisions and questions put through `prompts`.
    async fn run_call<E: ToolExecutor>(
        &self,
        judge: &Judge<'_>,
        call: &ToolCallRequest,
        approval: &mut Approval,
        executor: &E,
        prompts: &Prompts,
        cancel: &CancellationToken,
    ) -> Ran {
        let asker = self.asker(judge);
        Runner::new(&asker, None)
            .run(call, approval, executor, prompts, cancel)
            .await
    }

    /// Runs `save(path: "a.txt")` (unedited) through `executor`, prompting
    /// through `prompts`.
    async fn run(&self, executor: &MockExecutor, prompts: &Prompts) -> Ran {
        let judge = self.judge();
        let asker = self.asker(&judge);
        Runner::new(&asker, None)
            .run(
                &save("1", "a.txt"),
                &mut approved(arguments("a.txt"), false, Mode::Ask),
                executor,
                prompts,
                &CancellationToken::new(),
            )
            .await
    }
}

fn arguments(path: &str) -> Map<String, Value> {
    let mut arguments = Map::new();
    arguments.insert("path".into(), Value::from(path));
    arguments
}

/// A call's arguments as approved at `mode` (`edited` by the user or not).
fn approved(arguments: Map<String, Value>, edited: bool, mode: Mode) -> Approval {
    Approval {
        arguments: Arguments::new(arguments),
        edited,
        mode,
        runs: 0,
        seen: None,
        at_start: None,
    }
}

fn save(id: &str, path: &str) -> ToolCallRequest {
    ToolCallRequest::new(id, "save", arguments(path))
}

/// A scripted terminal, and the shared records of what it was asked.
struct Script {
    prompts: Prompts,
    asked: Arc<Mutex<Vec<String>>>,
    questions: Arc<Mutex<Vec<Question>>>,
    opened: Arc<Mutex<Vec<String>>>,
    paged: Arc<Mutex<Vec<String>>>,
}

impl Script {
    fn new(keys: &[Option<char>], edits: &[&str], answers: &[Value]) -> Self {
        let backend = ScriptedPrompter {
            keys: keys.iter().copied().collect(),
            edits: edits.iter().map(|e| (*e).to_owned()).collect(),
            answers: answers.iter().cloned().collect(),
            ..ScriptedPrompter::default()
        };
        Self {
            asked: Arc::clone(&backend.asked),
            questions: Arc::clone(&backend.questions),
            opened: Arc::clone(&backend.opened),
            paged: Arc::clone(&backend.paged),
            prompts: Prompts::new(Box::new(backend), CancellationToken::new()),
        }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

/// No terminal: every prompt is unavailable (decision 6).
fn no_terminal() -> Prompts {
    Prompts::new(
        Box::new(NoPrompter) as Box<dyn Prompter>,
        CancellationToken::new(),
    )
}

fn response(status: ResponseStatus, content: &str) -> ToolCallResponse {
    ToolCallResponse {
        id: "1".into(),
        status,
        content: content.into(),
        ran: None,
    }
}

/// The question an early prompt asks about `shown` (a call's summary).
fn live(shown: &str) -> jp_term::prompt::LiveQuestion {
    tokio::sync::watch::channel(Asker::early_question(shown, "in its sandbox", true)).1
}

fn ran(status: ResponseStatus, content: &str, note: Option<&str>) -> Ran {
    Ran {
        response: response(status, content),
        stderr: String::new(),
        note: note.map(str::to_owned),
        delta: None,
        denial: None,
        shown: false,
        changes: crate::query::tools::undo::Changes::default(),
    }
}

const WITHHELD: &str = "The tool ran, but the user's policy withholds its result from you.";
const SEND: &str = "Send the result of save to the model? [y,n]";

#[tokio::test]
async fn a_result_that_asks_is_sent_on_y_and_withheld_on_n() {
    let f = Fixture::new("policy.run = \"unattended\"\npolicy.result = \"ask\"");

    let script = Script::new(&[Some('y')], &[], &[]);
    let got = f
        .run(
            &MockExecutor::new([success("line 1\nline 2")]),
            &script.prompts,
        )
        .await;
    assert_eq!(
        got,
        Ran {
            shown: true,
            ..ran(ResponseStatus::Success, "line 1\nline 2", None)
        },
        "y sends the result unchanged, and it is not printed again"
    );
    assert_eq!(script.asked(), [SEND]);
    // The user decides on what they can see: the whole result, first.
    assert_eq!(f.chrome.text(), "save returned:\n  line 1\n  line 2\n");

    let script = Script::new(&[Some('n')], &[], &[]);
    let got = f
        .run(&MockExecutor::new([success("secret")]), &script.prompts)
        .await;
    assert_eq!(
        got,
        ran(
            ResponseStatus::Withheld,
            WITHHELD,
            Some("save: result withheld by you")
        )
    );
    assert_eq!(script.asked(), [SEND]);
}

#[tokio::test]
async fn an_error_result_that_asks_keeps_its_status() {
    let f = Fixture::new("policy.run = \"unattended\"\npolicy.result = \"ask\"");
    let script = Script::new(&[Some('y')], &[], &[]);
    let executor = MockExecutor::new([tool_run(Outcome::error("disk full"), "")]);
    let got = f.run(&executor, &script.prompts).await;
    assert_eq!(
        got,
        Ran {
            shown: true,
            ..ran(ResponseStatus::Error, "disk full", None)
        }
    );
    assert_eq!(f.chrome.text(), "save returned:\n  disk full\n");
}

#[tokio::test]
async fn ctrl_c_at_the_result_prompt_withholds_it() {
    let f = Fixture::new("policy.run = \"unattended\"\npolicy.result = \"ask\"");
    let script = Script::new(&[None], &[], &[]);
    let got = f
        .run(&MockExecutor::new([success("x")]), &script.prompts)
        .await;
    assert_eq!(
        got,
        ran(
            ResponseStatus::Withheld,
            WITHHELD,
            Some("save: result withheld: interrupted")
        )
    );
}

#[tokio::test]
async fn a_result_that_asks_without_a_terminal_is_withheld() {
    let f = Fixture::new("policy.run = \"unattended\"\npolicy.result = \"ask\"");
    let executor = MockExecutor::new([success("x")]);
    let got = f.run(&executor, &no_terminal()).await;
    assert_eq!(
        got,
        ran(
            ResponseStatus::Withheld,
            WITHHELD,
            Some(
                "save: result withheld: policy.result is ask (policy.result is \"ask\") and no terminal is available; run jp in a terminal to answer, or send the results of calls like this one with a rule in a policy.result list that ends with { mode = \"ask\" } in conversation.tools.save: { arg = \"/path\", const = \"a.txt\", mode = \"unattended\" }"
            )
        )
    );
    // The tool did run (once): only its result is held back.
    assert_eq!(executor.requests().len(), 1);
}

#[tokio::test]
async fn an_edited_result_is_what_the_model_gets() {
    let f = Fixture::new("policy.run = \"unattended\"\npolicy.result = \"edit\"");

    let script = Script::new(&[Some('y')], &["the edited result\n"], &[]);
    let got = f
        .run(
            &MockExecutor::new([success("the original result\n")]),
            &script.prompts,
        )
        .await;
    assert_eq!(
        got,
        ran(ResponseStatus::Success, "the edited result\n", None)
    );
    // The editor opens on what the tool returned; then the user confirms.
    assert_eq!(
        *script.opened.lock().unwrap(),
        ["the original result\n".to_owned()]
    );
    assert_eq!(script.asked(), [SEND]);

    // Edited, then not sent.
    let script = Script::new(&[Some('n')], &["edited"], &[]);
    let got = f
        .run(&MockExecutor::new([success("original")]), &script.prompts)
        .await;
    assert_eq!(
        got,
        ran(
            ResponseStatus::Withheld,
            WITHHELD,
            Some("save: result withheld by you")
        )
    );

    // An editor that fails withholds the result; nothing is asked.
    let script = Script::new(&[], &[], &[]);
    let got = f
        .run(&MockExecutor::new([success("original")]), &script.prompts)
        .await;
    assert_eq!(
        got,
        ran(
            ResponseStatus::Withheld,
            WITHHELD,
            Some("save: result withheld: the terminal failed: the script has no more edits")
        )
    );
    assert_eq!(script.asked(), Vec::<String>::new());
}

#[tokio::test]
async fn needs_input_of_each_kind_is_asked_and_the_answers_go_back_to_the_tool() {
    let f = Fixture::new("policy.run = \"unattended\"");
    let script = Script::new(&[], &[], &[json!(true), json!("fix a typo"), json!("dev")]);
    let executor = MockExecutor::new([
        tool_run(Outcome::NeedsInput { question: yes_no() }, "asking 1\n"),
        needs(&text()),
        tool_run(Outcome::NeedsInput { question: choice() }, "asking 3\n"),
        success("saved"),
    ]);
    let got = f.run(&executor, &script.prompts).await;
    assert_eq!(
        got,
        Ran {
            response: response(ResponseStatus::Success, "saved"),
            // Every run's stderr, in order.
            stderr: "asking 1\nasking 3\n".into(),
            note: None,
            delta: None,
            denial: None,
            shown: false,
            changes: crate::query::tools::undo::Changes::default(),
        }
    );
    // Each question reached the prompter whole, kind and all.
    assert_eq!(
        script.asked(),
        ["Overwrite a.txt?", "Commit message?", "Which branch?"]
    );
    assert_eq!(
        *script.questions.lock().unwrap(),
        [yes_no(), text(), choice()]
    );
    // Each run is the same call with one more answer.
    let answers: Vec<Value> = executor
        .requests()
        .into_iter()
        .map(|request| Value::Object(request.tool.answers))
        .collect();
    assert_eq!(
        answers,
        [
            json!({}),
            json!({"overwrite": true}),
            json!({"overwrite": true, "message": "fix a typo"}),
            json!({"overwrite": true, "message": "fix a typo", "branch": "dev"}),
        ]
    );
    let last = executor.requests().pop().unwrap();
    assert_eq!(
        last,
        Request {
            tool: ToolInfo {
                name: "save".into(),
                arguments: arguments("a.txt"),
                answers: json!({"overwrite": true, "message": "fix a typo", "branch": "dev"})
                    .as_object()
                    .unwrap()
                    .clone(),
                options: Map::new(),
            },
            context: Context::run(f.dir.path()),
        }
    );
    assert_eq!(
        executor.argvs(),
        vec![vec!["save-tool".to_owned(), "--quiet".to_owned()]; 4]
    );
}

#[tokio::test]
async fn needs_input_without_a_terminal_is_an_error_result() {
    let f = Fixture::new("policy.run = \"unattended\"");
    let executor = MockExecutor::new([needs(&yes_no())]);
    let got = f.run(&executor, &no_terminal()).await;
    assert_eq!(
        got,
        ran(
            ResponseStatus::Error,
            "The tool needs an answer to \"Overwrite a.txt?\" and no one could answer it (jp is running without a terminal); it did not finish.",
            None
        )
    );
    // The tool is not run again without an answer.
    assert_eq!(executor.requests().len(), 1);
}

#[tokio::test]
async fn needs_input_after_an_interrupt_is_an_error_result() {
    let f = Fixture::new("policy.run = \"unattended\"");
    let interrupt = CancellationToken::new();
    let prompts = Prompts::new(
        Box::new(ScriptedPrompter {
            answers: [json!(true)].into(),
            ..ScriptedPrompter::default()
        }),
        interrupt.clone(),
    );
    interrupt.cancel();
    let executor = MockExecutor::new([needs(&yes_no())]);
    let got = f.run(&executor, &prompts).await;
    assert_eq!(
        got,
        ran(
            ResponseStatus::Error,
            "The tool needs an answer to \"Overwrite a.txt?\" and the user could not be asked (interrupted); it did not finish.",
            None
        )
    );
    assert_eq!(executor.requests().len(), 1);
}

#[tokio::test]
async fn a_tool_that_keeps_asking_is_stopped() {
    let f = Fixture::new("policy.run = \"unattended\"");
    let answers = vec![json!(true); MAX_QUESTIONS];
    let script = Script::new(&[], &[], &answers);
    let executor = MockExecutor::new(std::iter::repeat_with(|| needs(&yes_no())).take(20));
    let got = f.run(&executor, &script.prompts).await;
    assert_eq!(
        got,
        ran(
            ResponseStatus::Error,
            "The tool asked more than 8 questions; jp stopped it.",
            None
        )
    );
    assert_eq!(script.asked().len(), MAX_QUESTIONS);
    assert_eq!(executor.requests().len(), MAX_QUESTIONS + 1);
}

#[tokio::test]
async fn a_run_with_edited_arguments_tells_the_model() {
    let f = Fixture::new("policy.run = \"unattended\"");
    let executor = MockExecutor::new([success("saved")]);
    let got = f
        .run_call(
            &f.judge(),
            &save("1", "a.txt"),
            &mut approved(arguments("b.txt"), true, Mode::Unattended),
            &executor,
            &no_terminal(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(
        got,
        ran(
            ResponseStatus::Success,
            "(The user edited the arguments before the call ran; it ran with {\"path\":\"b.txt\"}.)\nsaved",
            None
        )
    );
    // The tool gets the edited arguments, not the model's.
    assert_eq!(executor.requests()[0].tool.arguments, arguments("b.txt"));
}

#[tokio::test]
async fn three_prompts_show_in_call_order() {
    let f = Fixture::new("policy.run = \"ask\"");
    let judge = f.judge();
    let asker = f.asker(&judge);
    // Whoever asks first gets `y`, then `n`, then `y`.
    let script = Script::new(&[Some('y'), Some('n'), Some('y')], &[], &[]);
    let calls = [save("1", "a.txt"), save("2", "b.txt"), save("3", "c.txt")];
    let mut asks = Vec::new();
    for call in &calls {
        match judge.decide(call, &script.prompts) {
            Decided::Ask(ask) => asks.push(ask),
            Decided::Now(verdict) => panic!("{} did not ask: {verdict:?}", call.id),
        }
    }
    // Tickets are taken in call order, as the turn takes them when each
    // call starts (`CallTickets`).
    let mut pending = Vec::new();
    for ask in asks {
        pending.push((ask, script.prompts.ticket()));
    }
    let mut pending = pending.into_iter();
    let (first, second, third) = (
        pending.next().unwrap(),
        pending.next().unwrap(),
        pending.next().unwrap(),
    );
    // Later calls reach their prompt first: the tickets, not the order the
    // futures are polled in or get ready, decide who asks.
    let confirm = |(ask, ticket), delay| {
        let asker = &asker;
        async move {
            tokio::time::sleep(Duration::from_millis(delay)).await;
            asker.confirm(ask, ticket).await
        }
    };
    let (third, second, first) =
        tokio::join!(confirm(third, 0), confirm(second, 20), confirm(first, 40));
    assert_eq!(
        script.asked(),
        [
            "Run save(path: \"a.txt\")? [y,a,n,e,v]",
            "Run save(path: \"b.txt\")? [y,a,n,e,v]",
            "Run save(path: \"c.txt\")? [y,a,n,e,v]",
        ]
    );
    let run = |path: &str| Verdict::Run {
        tool: "save".into(),
        arguments: Arguments::new(arguments(path)),
        edited: false,
        mode: Mode::Ask,
        reason: "policy.run is \"ask\"".into(),
        approved: true,
        key: Some('y'),
    };
    assert_eq!(first, run("a.txt"));
    assert_eq!(
        second,
        Verdict::NotRun {
            response: ToolCallResponse {
                id: "2".into(),
                status: ResponseStatus::Declined,
                content: "The user declined this call; it was not run.".into(),
                ran: None,
            },
            note: "save: declined by you".into(),
        }
    );
    assert_eq!(third, run("c.txt"));
    // Each prompt's arguments show right before it, in the same order.
    assert_eq!(
        f.chrome.text(),
        "save would run with:\n  path: \"a.txt\"\n\
         save would run with:\n  path: \"b.txt\"\n\
         save would run with:\n  path: \"c.txt\"\n"
    );
}

#[tokio::test]
async fn a_result_withheld_by_a_rule_gets_advice_for_this_value_only() {
    // The rule that asked is named, and the advice is a rule for this one
    // path placed before it: never a blanket `policy.result=unattended`,
    // which would send every result of the tool unseen.
    let f = Fixture::new(
        "policy.run = \"unattended\"\n\
         policy.result = [{ arg = \"/path\", prefix = \"private/\", mode = \"ask\" }, { mode = \"unattended\" }]",
    );
    let executor = MockExecutor::new([success("x")]);
    let got = f
        .run_call(
            &f.judge(),
            &save("1", "private/notes.txt"),
            &mut approved(arguments("private/notes.txt"), false, Mode::Unattended),
            &executor,
            &no_terminal(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(
        got,
        ran(
            ResponseStatus::Withheld,
            WITHHELD,
            Some(
                "save: result withheld: policy.result is ask (policy.result[0] (prefix \"private/\" on /path) matched: \"private/notes.txt\" is under private/) and no terminal is available; run jp in a terminal to answer, or send the results of calls like this one with a rule before policy.result[0] in conversation.tools.save: { arg = \"/path\", const = \"private/notes.txt\", mode = \"unattended\" }"
            )
        )
    );
}

/// A call of `save` as streamed: `raw` is its exact argument text, so it
/// can repeat a key.
fn streamed(raw: &str) -> ToolCallRequest {
    use jp_conversation::{EventBuilder, EventPart, FlushedEvent, ToolCallPart};
    let mut builder = EventBuilder::new();
    let start = ToolCallPart::Start {
        id: "1".into(),
        name: "save".into(),
    };
    builder.handle_part(0, EventPart::ToolCall(start)).unwrap();
    let chunk = ToolCallPart::ArgumentChunk(raw.into());
    builder.handle_part(0, EventPart::ToolCall(chunk)).unwrap();
    let Some(FlushedEvent::ToolCallRequest(call)) = builder.handle_flush(0) else {
        panic!("no call")
    };
    call
}

/// A decision made while the call streamed.
fn early_decision(mode: Mode, rule: usize) -> Decision {
    Decision {
        mode,
        rule: Some(rule),
        reason: format!("policy.run[{rule}] decided early"),
        trace: Vec::new(),
    }
}

/// What [`Judge::decide_after`] decided, as text: the verdict's
/// outcome and note, or the mode it asks with.
fn after(judge: &Judge<'_>, call: &ToolCallRequest, prompts: &Prompts, early: Answer) -> String {
    match judge.decide_after(call, prompts.available(), Some(early)) {
        Decided::Now(Verdict::Run {
            arguments,
            mode,
            reason,
            approved,
            ..
        }) => format!(
            "run {} ({mode}: {reason}; approved: {approved})",
            arguments.as_value()
        ),
        Decided::Now(Verdict::NotRun { response, note }) => format!(
            "{} \"{}\" / {note}",
            response.status.as_str(),
            response.content
        ),
        Decided::Ask(ask) => format!("asks ({}: {})", ask.mode, ask.why),
    }
}

const SECRET_POLICY: &str =
    "policy.run = [{ arg = \"/path\", prefix = \"secret/\", mode = \"skip\" }, { mode = \"ask\" }]";

#[test]
fn at_flush_the_stricter_of_the_early_and_the_final_decision_wins() {
    let f = Fixture::new(SECRET_POLICY);
    let judge = f.judge();
    let script = Script::new(&[], &[], &[]);
    let skipped = "skipped \"This call was skipped by the user's policy; it was not run.\" / save: skipped (policy.run[0] (prefix \"secret/\" on /path) matched: \"secret/key\" is under secret/)";
    // The complete arguments are skipped: whatever was settled early (the
    // policy's own `unattended`, a `y` or an `e` at the early prompt), the
    // call does not run.
    let secret = save("1", "secret/key");
    for early in [
        Answer::Policy(early_decision(Mode::Unattended, 1)),
        Answer::Run {
            decision: early_decision(Mode::Ask, 1),
        },
        Answer::Edit {
            decision: early_decision(Mode::Ask, 1),
        },
    ] {
        assert_eq!(
            after(&judge, &secret, &script.prompts, early.clone()),
            skipped,
            "{early:?}"
        );
    }
    // The complete arguments ask: an early `unattended` does not run them
    // unasked; without a terminal they are declined.
    let plain = save("1", "a.txt");
    assert_eq!(
        after(
            &judge,
            &plain,
            &script.prompts,
            Answer::Policy(early_decision(Mode::Unattended, 1))
        ),
        "asks (ask: policy.run[1] (catch-all) matched)"
    );
    assert_eq!(
        after(
            &judge,
            &plain,
            &no_terminal(),
            Answer::Policy(early_decision(Mode::Unattended, 1))
        ),
        "declined \"The call was not run: the user's policy requires confirmation and no one could confirm it (jp is running without a terminal).\" / save: declined: policy.run[1] (catch-all) matched, so jp must ask, and no terminal is available; run jp in a terminal to answer, or allow calls like this one with a rule before policy.run[1] in conversation.tools.save: { arg = \"/path\", const = \"a.txt\", mode = \"unattended\" }"
    );
    // A stricter early decision stands against a milder final one; an
    // approval given early stands when the final arguments ask no more.
    assert_eq!(
        after(
            &judge,
            &plain,
            &script.prompts,
            Answer::Policy(early_decision(Mode::Skip, 0))
        ),
        "skipped \"This call was skipped by the user's policy; it was not run.\" / save: skipped (policy.run[0] decided early)"
    );
    assert_eq!(
        after(
            &judge,
            &plain,
            &script.prompts,
            Answer::Run {
                decision: early_decision(Mode::Ask, 1)
            }
        ),
        "run {\"path\":\"a.txt\"} (ask: policy.run[1] decided early; approved: true)"
    );
    assert_eq!(
        script.asked(),
        Vec::<String>::new(),
        "nothing is asked here"
    );
}

#[test]
fn arguments_that_no_longer_fit_after_an_early_approval_are_refused() {
    let f = Fixture::new(SECRET_POLICY);
    let judge = f.judge();
    let script = Script::new(&[], &[], &[]);
    // Approved on `path`; an argument the tool does not take came after.
    let call = streamed(r#"{"path": "a.txt", "mode": "0777"}"#);
    for early in [
        Answer::Run {
            decision: early_decision(Mode::Ask, 1),
        },
        Answer::Policy(early_decision(Mode::Unattended, 1)),
    ] {
        assert_eq!(
            after(&judge, &call, &script.prompts, early),
            "refused \"The call was not run because its arguments do not fit the tool's parameters: /mode: unknown parameter (expected one of \"path\").\" / save: refused: the arguments do not fit its parameters: /mode: unknown parameter (expected one of \"path\")"
        );
    }
}

#[test]
fn a_duplicate_key_after_an_early_decision_refuses_the_call() {
    let f = Fixture::new(SECRET_POLICY);
    let judge = f.judge();
    let script = Script::new(&[], &[], &[]);
    // Approved on the first `path`; a second one names another file.
    let call = streamed(r#"{"path": "a.txt", "path": "secret/key"}"#);
    for early in [
        Answer::Run {
            decision: early_decision(Mode::Ask, 1),
        },
        Answer::Policy(early_decision(Mode::Unattended, 1)),
        Answer::Edit {
            decision: early_decision(Mode::Ask, 1),
        },
    ] {
        assert_eq!(
            after(&judge, &call, &script.prompts, early),
            "refused \"The call was not run because its arguments are unusable: duplicate key `path` at /path: arguments with a repeated key are refused because its meaning is ambiguous.\" / save: refused: duplicate key `path` at /path: arguments with a repeated key are refused because its meaning is ambiguous"
        );
    }
}

/// What [`Judge::early`] does about `save(path: "a.txt")` decided
/// `mode` by `policy.run[1]` while it streams, as text.
fn early_step(judge: &Judge<'_>, mode: Mode, prompts: &Prompts) -> String {
    let known = |key: &str| arguments("a.txt").get(key).cloned();
    // Kept for when the arguments are complete, or asked now.
    match judge.early(
        "1",
        "save",
        early_decision(mode, 1),
        prompts.available(),
        &known,
    ) {
        Ok(decision) if decision.mode == Mode::Ask => format!("ask {}", decision.mode),
        Ok(decision) => format!("keep {}", decision.mode),
        Err(verdict) => match *verdict {
            Verdict::NotRun { response, note } => {
                format!("{} / {note}", response.status.as_str())
            }
            verdict => format!("not run, but {verdict:?}"),
        },
    }
}

#[test]
fn an_early_ask_or_edit_without_a_prompt_is_declined_at_once() {
    let f = Fixture::new(SECRET_POLICY);
    let judge = f.judge();
    // Decision 6: no prompt declines `edit` as it does `ask`, at the
    // moment of decision (so the stream can stop), not at Flush.
    let declined = |must: &str| {
        format!(
            "declined / save: declined: policy.run[1] decided early, so jp must {must}, and no \
             terminal is available; run jp in a terminal to answer, or allow calls like this one \
             with a rule before policy.run[1] in conversation.tools.save: {{ arg = \"/path\", \
             const = \"a.txt\", mode = \"unattended\" }}"
        )
    };
    assert_eq!(
        early_step(&judge, Mode::Edit, &no_terminal()),
        declined("open an editor")
    );
    assert_eq!(
        early_step(&judge, Mode::Ask, &no_terminal()),
        declined("ask")
    );
    // With a terminal, `edit` waits for the complete arguments and `ask`
    // asks now.
    let script = Script::new(&[], &[], &[]);
    assert_eq!(early_step(&judge, Mode::Edit, &script.prompts), "keep edit");
    assert_eq!(early_step(&judge, Mode::Ask, &script.prompts), "ask ask");
    assert_eq!(
        early_step(&judge, Mode::Unattended, &no_terminal()),
        "keep unattended"
    );
}

#[tokio::test]
async fn early_prompts_of_interleaved_calls_show_in_call_order() {
    use crate::query::tickets::CallTickets;

    let f = Fixture::new("policy.run = \"ask\"");
    let judge = f.judge();
    let asker = f.asker(&judge);
    // Whoever asks first gets `n`, then `y`.
    let script = Script::new(&[Some('n'), Some('y')], &[], &[]);
    let mut tickets = CallTickets::new(&script.prompts);
    // Both calls start, in call order; their pieces interleave, and the
    // second call's `path` completes first: it is decided, and reaches its
    // prompt, before the first.
    tickets.reserve(0);
    tickets.reserve(1);
    let decision = early_decision(Mode::Ask, 0);
    let (b, a) = (
        live("save(path: \"b.txt\", …)"),
        live("save(path: \"a.txt\", …)"),
    );
    let second = asker.confirm_early(
        "2",
        "save",
        &b,
        decision.clone(),
        &[],
        tickets.take(1),
        || async { None },
    );
    let first = async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        let ticket = tickets.take(0);
        asker
            .confirm_early("1", "save", &a, decision.clone(), &[], ticket, || async {
                None
            })
            .await
    };
    let (second, first) = tokio::join!(second, first);
    assert_eq!(
        script.asked(),
        [
            "Run save(path: \"a.txt\", …)? [y,a,n,e,v]",
            "Run save(path: \"b.txt\", …)? [y,a,n,e,v]",
        ]
    );
    assert_eq!(
        first,
        Answer::NotRun(Verdict::NotRun {
            response: ToolCallResponse::new(
                "1",
                ResponseStatus::Declined,
                "The user declined this call; it was not run."
            ),
            note: "save: declined by you".into(),
        })
    );
    assert_eq!(second, Answer::Run { decision });
}

// RFD 078: a tool's config change, between its run and its result.

const GRANTS: &str = "[[conversation.tools.save.access.config]]\n\
     path = \"assistant.model\"\n\
     read = true\n\
     write = true\n\
     apply = \"ask\"\n\
     [[conversation.tools.save.access.config]]\n\
     path = \"assistant.model.parameters\"\n\
     write = true\n\
     delete = true\n\
     apply = \"unattended\"\n";

fn proposing(config: Value, unset: &[&str]) -> ToolRun {
    tool_run(
        Outcome::success_with_config(
            "changed",
            Some(config),
            unset.iter().map(|s| (*s).to_owned()).collect(),
        ),
        "",
    )
}

#[tokio::test]
async fn a_tool_reads_its_granted_config_and_an_unattended_change_is_approved() {
    let f = Fixture::new(GRANTS);
    let executor = MockExecutor::new([proposing(
        json!({"assistant": {"model": {"parameters": {"temperature": 0.3}}}}),
        &["assistant.model.parameters.top_p"],
    )]);
    let ran = f.run(&executor, &no_terminal()).await;
    assert_eq!(ran.response, response(ResponseStatus::Success, "changed"));
    let delta = ran.delta.expect("an approved change");
    assert_eq!(delta.sets.len(), 1);
    assert_eq!(
        delta.unsets[0].to_string(),
        "assistant.model.parameters.top_p"
    );
    // The request held exactly the readable grant: assistant.model, but
    // not the parameters rule's part of it (that rule has no read).
    let requests = executor.requests();
    assert_eq!(
        serde_json::to_value(&requests[0].context.config).unwrap(),
        json!({"assistant": {"model": {"id": "anthropic/claude-sonnet-4-5"}}})
    );
    assert_eq!(requests[0].context.delta_rejection, None);
    assert_eq!(
        f.chrome.text(),
        "⟳ config change by tool save, applied when this step ends:\n  assistant.model.parameters.temperature: (unset) → 0.3\n  assistant.model.parameters.top_p: (unset) → (unset)\n"
    );
}

#[tokio::test]
async fn a_tool_without_grants_sees_no_config_and_cannot_change_any() {
    let f = Fixture::new("");
    let change = json!({"assistant": {"model": {"id": "opus"}}});
    let executor = MockExecutor::new((0..4).map(|_| proposing(change.clone(), &[])));
    let ran = f.run(&executor, &no_terminal()).await;
    let requests = executor.requests();
    assert_eq!(requests.len(), 4, "the first run and three more");
    assert_eq!(requests[0].context.config, None);
    let rejection = requests[1].context.delta_rejection.clone().unwrap();
    assert_eq!(
        rejection.reason,
        jp_tool::RejectionReason::UnauthorizedPaths
    );
    assert_eq!(rejection.fields, ["assistant.model.id"]);
    // The same arguments every time.
    assert!(
        requests
            .iter()
            .all(|r| r.tool.arguments == arguments("a.txt"))
    );
    assert_eq!(ran.delta, None);
    assert_eq!(
        ran.response,
        response(
            ResponseStatus::Error,
            "Tool `save` proposed a config change jp could not apply 4 times, so the call ends here without its result. Last reason: unauthorized_paths: the tool's access.config grants do not cover assistant.model.id: no write grant"
        )
    );
}

#[tokio::test]
async fn a_corrected_change_after_a_rejection_is_applied() {
    let f = Fixture::new(GRANTS);
    let executor = MockExecutor::new([
        proposing(json!({"assistant": {"model": {"id": "bogus"}}}), &[]),
        proposing(json!({"assistant": {"model": {"id": "opus"}}}), &[]),
    ]);
    let script = Script::new(&[Some('y')], &[], &[]);
    let ran = f.run(&executor, &script.prompts).await;
    let requests = executor.requests();
    let rejection = requests[1].context.delta_rejection.clone().unwrap();
    assert_eq!(rejection.reason, jp_tool::RejectionReason::InvalidConfig);
    assert_eq!(rejection.fields, ["assistant.model.id"]);
    assert_eq!(ran.response.status, ResponseStatus::Success);
    let delta = ran.delta.unwrap();
    assert_eq!(delta.sets[0].1, json!("anthropic/claude-opus-5"));
    assert_eq!(script.asked(), ["Apply this config change? [y,n]"]);
    assert!(
        f.chrome.text().contains(
            "⟳ tool save proposes a config change:\n  assistant.model.id: \"anthropic/claude-sonnet-4-5\" → \"anthropic/claude-opus-5\"\n"
        ),
        "{}",
        f.chrome.text()
    );
}

#[tokio::test]
async fn a_declined_or_unaskable_change_reruns_the_tool_with_the_reason() {
    let f = Fixture::new(GRANTS);
    let change = json!({"assistant": {"model": {"id": "opus"}}});
    let executor = MockExecutor::new([proposing(change.clone(), &[]), success("left alone")]);
    let script = Script::new(&[Some('n')], &[], &[]);
    let ran = f.run(&executor, &script.prompts).await;
    assert_eq!(
        executor.requests()[1]
            .context
            .delta_rejection
            .as_ref()
            .unwrap()
            .reason,
        jp_tool::RejectionReason::UserRejected
    );
    assert_eq!(
        ran.response,
        response(ResponseStatus::Success, "left alone")
    );
    assert_eq!(ran.delta, None);

    let executor = MockExecutor::new([proposing(change, &[]), success("left alone")]);
    let ran = f.run(&executor, &no_terminal()).await;
    assert_eq!(
        executor.requests()[1]
            .context
            .delta_rejection
            .as_ref()
            .unwrap()
            .reason,
        jp_tool::RejectionReason::ConfirmationUnavailable
    );
    assert_eq!(ran.delta, None);
}

#[tokio::test]
async fn v_at_an_early_prompt_pages_the_arguments_so_far_and_asks_again() {
    // The prompt shows only what the cap let through: `v` pages what the
    // turn holds of the arguments at that moment, and the answer after it
    // decides.
    let f = Fixture::new("policy.run = \"ask\"");
    let judge = f.judge();
    let asker = f.asker(&judge);
    let script = Script::new(&[Some('v'), Some('v'), Some('y')], &[], &[]);
    let decision = early_decision(Mode::Ask, 0);
    let views = std::cell::Cell::new(0);
    let view = || {
        views.set(views.get() + 1);
        let n = views.get();
        async move {
            let so_far = jp_conversation::ArgumentsSoFar {
                arguments:
                    serde_json::json!({"path": "a.txt", "content": format!("one\ntwo\nthr{n}")})
                        .as_object()
                        .unwrap()
                        .clone(),
                streaming: Some("content".into()),
                complete: false,
            };
            Some(arguments_page("save", &so_far))
        }
    };
    let answer = asker
        .confirm_early(
            "1",
            "save",
            &live("save(path: \"a.txt\", content: <streaming>)"),
            decision.clone(),
            &[],
            script.prompts.ticket(),
            view,
        )
        .await;
    assert_eq!(answer, Answer::Run { decision });
    let asked = "Run save(path: \"a.txt\", content: <streaming>)? [y,a,n,e,v]";
    assert_eq!(script.asked(), [asked, asked, asked]);
    // Each `v` pages the arguments as they were then.
    let page = |n: usize| {
        format!(
            "save, the arguments so far (more are arriving):\n  path: \"a.txt\"\n  \
             content (still streaming):\n  │ one\n  │ two\n  │ thr{n}\n"
        )
    };
    assert_eq!(*script.paged.lock().unwrap(), [page(1), page(2)]);
}

#[tokio::test]
async fn v_at_the_prompt_pages_the_arguments_in_full() {
    let f = Fixture::new("parameters.content = { type = \"string\" }\npolicy.run = \"ask\"");
    let judge = f.judge();
    let asker = Asker::new(&judge, f.printer(), true);
    let script = Script::new(&[Some('v'), Some('y')], &[], &[]);
    let mut arguments = arguments("a.txt");
    let long = "x".repeat(1000);
    arguments.insert(
        "content".into(),
        Value::from(format!("{long}\nend\u{1b}[2J")),
    );
    let call = ToolCallRequest::new("1", "save", arguments);
    let Decided::Ask(ask) = judge.decide(&call, &script.prompts) else {
        panic!("the policy asks");
    };
    let verdict = asker.confirm(ask, script.prompts.ticket()).await;
    assert!(matches!(verdict, Verdict::Run { .. }), "{verdict:?}");
    // Nothing cut, escapes escaped; not printed again (it was live).
    assert_eq!(
        *script.paged.lock().unwrap(),
        [format!(
            "save would run with:\n  path: \"a.txt\"\n  content:\n  │ {long}\n  │ end\\u{{1b}}[2J\n"
        )]
    );
    assert_eq!(f.chrome.text(), "");
}

#[tokio::test]
async fn a_tool_reads_the_model_resolved_not_its_alias() {
    let f = Fixture::new(&format!("{GRANTS}[assistant.model]\nid = \"haiku\"\n"));
    let executor = MockExecutor::new([proposing(
        json!({"assistant": {"model": {"id": "anthropic/claude-haiku-4-5"}}}),
        &[],
    )]);
    let script = Script::new(&[Some('y')], &[], &[]);
    f.run(&executor, &script.prompts).await;
    assert_eq!(
        executor.requests()[0].context.config,
        Some(json!({"assistant": {"model": {"id": "anthropic/claude-haiku-4-5"}}}))
    );
    // The same model, spelled out, is shown as no change of value.
    assert!(
        f.chrome.text().contains(
            "  assistant.model.id: \"anthropic/claude-haiku-4-5\" → \"anthropic/claude-haiku-4-5\"\n"
        ),
        "{}",
        f.chrome.text()
    );
}

/// Issue 14: a call that runs, or is put to the user, shares its arguments
/// with the conversation's request instead of copying them.
#[tokio::test]
async fn a_decided_call_shares_its_arguments_with_the_conversation() {
    let shared = |verdict_arguments: &Arguments, call: &ToolCallRequest| {
        Arc::ptr_eq(&verdict_arguments.0, &call.shared_received_arguments())
    };
    let f = Fixture::new("policy.run = \"unattended\"");
    let call = save("1", "a.txt");
    let Decided::Now(Verdict::Run { arguments, .. }) = f.judge().decide(&call, &no_terminal())
    else {
        panic!("the policy runs it");
    };
    assert!(shared(&arguments, &call));

    let f = Fixture::new("policy.run = \"ask\"");
    let script = Script::new(&[Some('y')], &[], &[]);
    let judge = f.judge();
    let asker = f.asker(&judge);
    let Decided::Ask(ask) = judge.decide(&call, &script.prompts) else {
        panic!("the policy asks");
    };
    assert!(shared(&ask.arguments, &call));
    let Verdict::Run { arguments, .. } = asker.confirm(ask, script.prompts.ticket()).await else {
        panic!("approved");
    };
    assert!(shared(&arguments, &call));
}

/// Issue 21, item 1: what a call was decided on may no longer hold when it
/// starts. A tool whose runs make a symbolic link, run between the decision
/// and the start, sends an approved path out of the workspace.
mod checked_at_the_start {
    use std::os::unix::fs::symlink;
    use std::path::{Path, PathBuf};

    use proptest::prelude::*;

    use super::*;

    /// `save(path)` under `src/` runs unattended, anything else asks.
    const SRC_ONLY: &str = "policy.run = [{ arg = \"/path\", prefix = \"src/\", mode = \"unattended\" }, { mode = \"ask\" }]";

    /// An executor that, at its `n`th run, first does the `n`th of `before`
    /// to the workspace (what a tool run between the decision and the start
    /// would do), then records where the path the tool was given resolves.
    struct Linking {
        root: PathBuf,
        before: Mutex<VecDeque<Option<(String, String)>>>,
        landed: Mutex<Vec<PathBuf>>,
    }

    impl Linking {
        fn new(root: &Path, before: Vec<Option<(String, String)>>) -> Self {
            Self {
                root: root.to_path_buf(),
                before: Mutex::new(before.into()),
                landed: Mutex::default(),
            }
        }
    }

    /// Makes `at` (under `root`) a link to `to`, replacing what is there.
    fn relink(root: &Path, at: &str, to: &str) {
        let at = root.join(at);
        if let Ok(meta) = std::fs::symlink_metadata(&at) {
            if meta.is_dir() {
                std::fs::remove_dir_all(&at).unwrap();
            } else {
                std::fs::remove_file(&at).unwrap();
            }
        }
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        symlink(to, &at).unwrap();
    }

    /// Where `path` ends up: its deepest existing ancestor resolved, and
    /// the rest appended.
    fn resolve(path: &Path) -> PathBuf {
        let mut missing = Vec::new();
        let mut at = path.to_path_buf();
        loop {
            if let Ok(real) = std::fs::canonicalize(&at) {
                return missing.iter().rev().fold(real, |p, part| p.join(part));
            }
            missing.push(at.file_name().unwrap().to_owned());
            at.pop();
        }
    }

    impl ToolExecutor for Linking {
        fn run(
            &self,
            _: &ToolTarget,
            request: &Request,
            _: &ToolLimits,
            _: &CancellationToken,
        ) -> impl Future<Output = ToolRun> {
            if let Some(Some((at, to))) = self.before.lock().unwrap().pop_front() {
                relink(&self.root, &at, &to);
            }
            let path = request.tool.arguments["path"].as_str().unwrap();
            self.landed
                .lock()
                .unwrap()
                .push(resolve(&self.root.join(path)));
            std::future::ready(success("saved"))
        }
    }

    fn run(
        f: &Fixture,
        judge: &Judge<'_>,
        executor: &Linking,
        path: &str,
        mode: Mode,
        prompts: &Prompts,
    ) -> (Ran, Approval) {
        let mut approval = approved(arguments(path), false, mode);
        let ran = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f.run_call(
                judge,
                &save("1", path),
                &mut approval,
                executor,
                prompts,
                &CancellationToken::new(),
            ));
        (ran, approval)
    }

    #[test]
    fn a_call_decided_unattended_asks_when_a_link_now_leads_out() {
        let f = Fixture::new(SRC_ONLY);
        let outside = tempfile::tempdir().unwrap();
        let judge = f.judge();
        let call = save("1", "src/link/passwd");
        // Decided while `src/link` does not exist: inside.
        let Decided::Now(Verdict::Run { mode, .. }) = judge.decide(&call, &no_terminal()) else {
            panic!("decided unattended");
        };
        assert_eq!(mode, Mode::Unattended);
        relink(f.dir.path(), "src/link", outside.path().to_str().unwrap());

        // On a terminal: asked, with a line saying why; `n` declines.
        let script = Script::new(&[Some('n')], &[], &[]);
        let executor = Linking::new(f.dir.path(), Vec::new());
        let (got, _) = run(
            &f,
            &judge,
            &executor,
            "src/link/passwd",
            mode,
            &script.prompts,
        );
        assert_eq!(
            got,
            ran(
                ResponseStatus::Declined,
                "The user declined this call; it was not run.",
                Some("save: declined by you")
            )
        );
        assert_eq!(
            script.asked(),
            ["Run save(path: \"src/link/passwd\")? [y,n,e,v]"]
        );
        let out = outside.path().to_str().unwrap();
        assert_eq!(
            f.chrome.text().replace(out, "<outside>"),
            "  save: the policy's decision changed since the call was decided: unattended then, \
             ask now (policy.run[1] (catch-all) matched; policy.run[0]: \"src/link/passwd\" is \
             under src/, but resolves to <outside>/passwd, which is not under src/)\n\
             save would run with:\n  path: \"src/link/passwd\"\n\
             \x20 save: path \"src/link/passwd\" opens <outside>/passwd\n"
        );
        assert!(executor.landed.lock().unwrap().is_empty());

        // `y` runs it: the user saw where it goes.
        let script = Script::new(&[Some('y')], &[], &[]);
        let (got, approval) = run(
            &f,
            &judge,
            &executor,
            "src/link/passwd",
            mode,
            &script.prompts,
        );
        assert_eq!(got.response.status, ResponseStatus::Success);
        assert_eq!(approval.mode, Mode::Ask);

        // Without a terminal: declined, saying why.
        let executor = Linking::new(f.dir.path(), Vec::new());
        let (got, _) = run(
            &f,
            &judge,
            &executor,
            "src/link/passwd",
            mode,
            &no_terminal(),
        );
        assert_eq!(got.response.status, ResponseStatus::Declined);
        assert_eq!(
            got.note.map(|n| n.replace(out, "<outside>")).as_deref(),
            Some(
                "save: declined: the policy's decision changed since the call was decided: \
                 unattended then, ask now (policy.run[1] (catch-all) matched; policy.run[0]: \
                 \"src/link/passwd\" is under src/, but resolves to <outside>/passwd, which is \
                 not under src/), so jp must ask, and no terminal is available; run jp in a \
                 terminal to answer, or add a rule for calls like this one before policy.run[1] \
                 in conversation.tools.save (`jp policy check save` tries it)"
            )
        );
        assert!(executor.landed.lock().unwrap().is_empty());
    }

    #[test]
    fn an_edit_at_the_start_is_what_runs_and_is_checked_again() {
        let f = Fixture::new(SRC_ONLY);
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(f.dir.path().join("src/real")).unwrap();
        relink(f.dir.path(), "src/link", outside.path().to_str().unwrap());
        // `e` at the question: the edit goes back inside `src/`, then `y`.
        let script = Script::new(
            &[Some('e'), Some('y')],
            &["{\"path\": \"src/real/a\"}"],
            &[],
        );
        let executor = Linking::new(f.dir.path(), Vec::new());
        let (got, approval) = run(
            &f,
            &f.judge(),
            &executor,
            "src/link/a",
            Mode::Unattended,
            &script.prompts,
        );
        assert_eq!(got.response.status, ResponseStatus::Success);
        assert!(approval.edited);
        assert_eq!(
            approval.arguments.as_value(),
            &json!({ "path": "src/real/a" })
        );
        // The tool ran the edited arguments, nowhere else.
        let root = std::fs::canonicalize(f.dir.path()).unwrap();
        assert_eq!(*executor.landed.lock().unwrap(), [root.join("src/real/a")]);
        assert!(
            got.response.content.starts_with(
                "(The user edited the arguments before the call ran; it ran with {\"path\":\"src/real/a\"}.)"
            ),
            "{}",
            got.response.content
        );
    }

    #[test]
    fn an_edit_at_the_start_that_a_stateful_policy_denies_is_not_run_and_says_which() {
        let f = Fixture::new(&format!(
            "{SRC_ONLY}\n\
             [[conversation.policies]]\n\
             kind = \"read_before_write\"\n\
             read_tools = [\"read\"]\n\
             write_tools = [\"save\"]\n"
        ));
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(f.dir.path().join("src/real")).unwrap();
        std::fs::write(f.dir.path().join("src/real/old.rs"), "unread").unwrap();
        relink(f.dir.path(), "src/link", outside.path().to_str().unwrap());
        let script = Script::new(
            &[Some('e'), Some('y')],
            &["{\"path\": \"src/real/old.rs\"}"],
            &[],
        );
        let executor = Linking::new(f.dir.path(), Vec::new());
        let (got, _) = run(
            &f,
            &f.judge().with_history(&[], &|_| true).unwrap(),
            &executor,
            "src/link/a",
            Mode::Unattended,
            &script.prompts,
        );
        assert_eq!(got.response.status, ResponseStatus::Denied);
        assert_eq!(
            got.denial.map(|d| d.policy),
            Some("read_before_write".to_owned())
        );
        assert!(executor.landed.lock().unwrap().is_empty());
    }

    /// Where a value refuses a call as it streams: a NUL in a string the
    /// parameters make a path, a complete scalar that does not fit its
    /// parameter, at any depth; never a string piece elsewhere or a value
    /// that is no parameter (refused when the arguments are complete).
    #[test]
    fn a_value_that_cannot_run_refuses_a_call_as_it_streams() {
        use jp_conversation::IncrementalArgParser;

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".jp")).unwrap();
        std::fs::write(
            dir.path().join(".jp/config.toml"),
            "[conversation.tools.t]\n\
             command = \"t\"\n\
             parameters.path = { type = \"path\" }\n\
             parameters.note = { type = \"string\" }\n\
             parameters.count = { type = \"integer\" }\n\
             parameters.paths = { type = \"array\", items = { type = \"path\" } }\n\
             parameters.edits = { type = \"array\", items = { type = \"object\", properties = { file = { type = \"path\" }, text = { type = \"string\" } } } }\n",
        )
        .unwrap();
        let config = load(&LoadOptions {
            cwd: dir.path().to_path_buf(),
            trust: jp_config::trust::WorkspaceTrust::Trusted,
            ..LoadOptions::default()
        })
        .unwrap()
        .config;
        let judge = Judge::new(&config, dir.path());
        // The pointer of the first string piece holding NUL that refuses
        // the call, fed to the parser in one piece.
        let refused_at = |tool: &str, arguments: &str| -> Option<String> {
            let mut parser = IncrementalArgParser::new();
            let mut found = None;
            parser
                .push_with(arguments, |fragment: jp_conversation::FragmentRef<'_>| {
                    if found.is_none()
                        && let Some(Verdict::NotRun { response, .. }) = judge
                            .refused_while_streaming("1", tool, fragment.path(), fragment.leaf())
                    {
                        assert_eq!(response.status, ResponseStatus::Refused);
                        found = Some(fragment.path().pointer().to_string());
                    }
                })
                .unwrap();
            found
        };
        let cases: [(&str, Option<&str>); 14] = [
            (r#"{"count": 1e2}"#, Some("/count")),
            (r#"{"count": -0}"#, Some("/count")),
            (r#"{"count": 18446744073709551616}"#, Some("/count")),
            (r#"{"count": "5"}"#, None),
            (r#"{"count": 5, "note": true}"#, Some("/note")),
            (r#"{"count": 5, "paths": []}"#, None),
            (r#"{"path": "a\u0000b"}"#, Some("/path")),
            (r#"{"path": "ab"}"#, None),
            (r#"{"note": "a\u0000b"}"#, None),
            (r#"{"paths": ["ok", "x\u0000"]}"#, Some("/paths/1")),
            (r#"{"edits": [{"text": "\u0000", "file": "f"}]}"#, None),
            (
                r#"{"edits": [{"file": "ok"}, {"file": "\u0000"}]}"#,
                Some("/edits/1/file"),
            ),
            // Not a parameter: refused when complete, not here.
            (r#"{"other": "\u0000"}"#, None),
            (r#"{"path": {"x": "\u0000"}}"#, None),
        ];
        for (arguments, expected) in cases {
            assert_eq!(
                refused_at("t", arguments).as_deref(),
                expected,
                "{arguments}"
            );
        }
        // A tool that is not configured has no paths.
        assert_eq!(refused_at("nope", r#"{"path": "\u0000"}"#), None);
    }

    /// Runs `save(path)` approved at a question, where the paths led as
    /// `seen`.
    fn run_approved(
        f: &Fixture,
        executor: &Linking,
        path: &str,
        seen: Vec<(String, String)>,
        prompts: &Prompts,
    ) -> Ran {
        let mut approval = approved(arguments(path), false, Mode::Ask);
        approval.seen = Some(seen);
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f.run_call(
                &f.judge(),
                &save("1", path),
                &mut approval,
                executor,
                prompts,
                &CancellationToken::new(),
            ))
    }

    /// Found by adversarial runs: a call the user approved for `README`
    /// ran, without a word, on whatever a link made since pointed `README`
    /// at, outside the workspace or onto its config (the policy asked, and
    /// still did).
    #[test]
    fn an_approved_path_that_leads_elsewhere_by_its_start_is_asked_about_again() {
        let f = Fixture::new(SRC_ONLY);
        let outside = tempfile::tempdir().unwrap();
        let out = outside.path().to_str().unwrap().to_owned();
        let seen = f.judge().path_targets("save", &json!({ "path": "README" }));
        assert_eq!(seen, [("/path".to_owned(), "README".to_owned())]);
        relink(f.dir.path(), "README", &format!("{out}/f"));
        let line = |chrome: String| chrome.replace(&out, "<outside>");

        // Without a terminal: declined, saying why.
        let executor = Linking::new(f.dir.path(), Vec::new());
        let got = run_approved(&f, &executor, "README", seen.clone(), &no_terminal());
        assert_eq!(got.response.status, ResponseStatus::Declined);
        assert_eq!(
            got.note.map(line).as_deref(),
            Some(
                "save: declined: /path now leads to <outside>/f, not README as when the call was \
                 approved, so it is asked about again, and no terminal is available"
            )
        );
        assert!(executor.landed.lock().unwrap().is_empty());

        // On a terminal: asked once more, with a line saying why; `y` runs
        // it, without a second question.
        let script = Script::new(&[Some('y')], &[], &[]);
        let got = run_approved(&f, &executor, "README", seen.clone(), &script.prompts);
        assert_eq!(got.response.status, ResponseStatus::Success);
        assert_eq!(script.asked(), ["Run save(path: \"README\")? [y,n,e,v]"]);
        assert!(
            line(f.chrome.text()).starts_with(
                "  save: /path now leads to <outside>/f, not README as when the call was \
                 approved, so it is asked about again\n"
            ),
            "{}",
            f.chrome.text()
        );
        assert_eq!(executor.landed.lock().unwrap().len(), 1);

        // Inside the workspace too: onto its config.
        relink(f.dir.path(), "README", ".jp/config.toml");
        let got = run_approved(&f, &executor, "README", seen, &no_terminal());
        assert_eq!(
            got.note.as_deref(),
            Some(
                "save: declined: /path now leads to .jp/config.toml, not README as when the call \
                 was approved, so it is asked about again, and no terminal is available"
            )
        );
    }

    /// A link that already led where it leads when the call was approved
    /// is what the user approved: no second question.
    #[test]
    fn an_approved_path_that_leads_where_it_led_is_not_asked_about_again() {
        let f = Fixture::new(SRC_ONLY);
        let outside = tempfile::tempdir().unwrap();
        relink(
            f.dir.path(),
            "README",
            &format!("{}/f", outside.path().display()),
        );
        let seen = f.judge().path_targets("save", &json!({ "path": "README" }));
        let executor = Linking::new(f.dir.path(), Vec::new());
        let got = run_approved(&f, &executor, "README", seen, &no_terminal());
        assert_eq!(got.response.status, ResponseStatus::Success);
        assert_eq!(f.chrome.text(), "");
    }

    #[test]
    fn a_skip_that_applies_by_the_start_is_not_run() {
        let f = Fixture::new(
            "policy.run = [{ arg = \"/path\", prefix = \"src/\", mode = \"unattended\" }, { mode = \"skip\" }]",
        );
        let outside = tempfile::tempdir().unwrap();
        relink(f.dir.path(), "src/link", outside.path().to_str().unwrap());
        let executor = Linking::new(f.dir.path(), Vec::new());
        let (mut got, _) = run(
            &f,
            &f.judge(),
            &executor,
            "src/link/x",
            Mode::Unattended,
            &no_terminal(),
        );
        let out = outside.path().to_str().unwrap();
        got.note = got.note.map(|n| n.replace(out, "<outside>"));
        assert_eq!(
            got,
            ran(
                ResponseStatus::Skipped,
                "The call was not run: it is skipped by the user's policy.",
                Some(
                    "save: skipped: the policy's decision changed since the call was decided: \
                     unattended then, skip now (policy.run[1] (catch-all) matched; \
                     policy.run[0]: \"src/link/x\" is under src/, but resolves to \
                     <outside>/x, which is not under src/)"
                )
            )
        );
        assert!(executor.landed.lock().unwrap().is_empty());
    }

    #[test]
    fn an_approval_at_a_prompt_holds_when_the_policy_still_asks() {
        // Asked and approved: a policy that still asks does not ask twice.
        let f = Fixture::new(SRC_ONLY);
        let executor = Linking::new(f.dir.path(), Vec::new());
        let (got, _) = run(
            &f,
            &f.judge(),
            &executor,
            "README.md",
            Mode::Ask,
            &no_terminal(),
        );
        assert_eq!(got.response.status, ResponseStatus::Success);
        assert_eq!(f.chrome.text(), "");
    }

    #[test]
    fn a_rerun_after_a_rejected_change_is_checked_again() {
        // The first run makes `src/link` lead out and proposes a change
        // the tool may not make; before it runs again, the path is checked.
        let f = Fixture::new(SRC_ONLY);
        let outside = tempfile::tempdir().unwrap();
        let out = outside.path().to_str().unwrap().to_owned();
        struct LinkThenPropose<'a>(&'a Path, String, Mutex<usize>);
        impl ToolExecutor for LinkThenPropose<'_> {
            fn run(
                &self,
                _: &ToolTarget,
                _: &Request,
                _: &ToolLimits,
                _: &CancellationToken,
            ) -> impl Future<Output = ToolRun> {
                *self.2.lock().unwrap() += 1;
                relink(self.0, "src/link", &self.1);
                std::future::ready(proposing(json!({"assistant": {"model": {"id": "x"}}}), &[]))
            }
        }
        let executor = LinkThenPropose(f.dir.path(), out, Mutex::new(0));
        let mut approval = approved(arguments("src/link/a"), false, Mode::Unattended);
        let got = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f.run_call(
                &f.judge(),
                &save("1", "src/link/a"),
                &mut approval,
                &executor,
                &no_terminal(),
                &CancellationToken::new(),
            ));
        assert_eq!(*executor.2.lock().unwrap(), 1, "not run again");
        assert_eq!(got.response.status, ResponseStatus::Declined);
        assert_eq!(
            got.response.content,
            "The tool was not run again: the user's policy requires confirmation and no one \
             could confirm it (jp is running without a terminal)."
        );
    }

    /// One step of a response: a tool run that relinks `at` to `to` (and
    /// saves inside), or a save to a path.
    #[derive(Debug, Clone)]
    enum Step {
        Relink(&'static str, &'static str),
        Save(&'static str),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (
                prop::sample::select(vec!["src/a", "src/b", "src/real/c"]),
                prop::sample::select(vec!["OUT", "../out", "real", "../src", "/"]),
            )
                .prop_map(|(at, to)| Step::Relink(at, to)),
            prop::sample::select(vec!["src/a/x", "src/b/y", "src/real/c/z", "src/real/w"])
                .prop_map(Step::Save),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Whatever links change between the calls of a response, a save
        /// decided before any of them ran (as while streaming) only ever
        /// runs, unasked, on a path inside `src/` as it is when it starts.
        #[test]
        fn no_unattended_save_lands_outside_src(steps in prop::collection::vec(step(), 1..8)) {
            let f = Fixture::new(SRC_ONLY);
            let root = std::fs::canonicalize(f.dir.path()).unwrap();
            std::fs::create_dir_all(root.join("src/real")).unwrap();
            std::fs::create_dir_all(root.join("out")).unwrap();
            let outside = tempfile::tempdir().unwrap();
            let out = outside.path().to_str().unwrap().to_owned();
            let judge = f.judge();
            // Every save is decided first, on the tree as it is now.
            let decided: Vec<Option<Mode>> = steps
                .iter()
                .map(|step| match step {
                    Step::Save(path) => match judge.decide(&save("1", path), &no_terminal()) {
                        Decided::Now(Verdict::Run { mode, .. }) => Some(mode),
                        _ => None,
                    },
                    Step::Relink(..) => None,
                })
                .collect();
            for (step, mode) in steps.iter().zip(decided) {
                match step {
                    Step::Relink(at, to) => {
                        let to = if *to == "OUT" { out.as_str() } else { to };
                        relink(&root, at, to);
                    }
                    Step::Save(path) => {
                        let Some(mode) = mode else { continue };
                        let executor = Linking::new(&root, Vec::new());
                        let (got, _) = run(&f, &judge, &executor, path, mode, &no_terminal());
                        for landed in executor.landed.lock().unwrap().iter() {
                            prop_assert!(
                                landed.starts_with(root.join("src")),
                                "{path} ran unattended and landed at {}", landed.display()
                            );
                        }
                        if got.response.status != ResponseStatus::Success {
                            prop_assert_eq!(got.response.status, ResponseStatus::Declined);
                        }
                    }
                }
            }
        }
    }
}
