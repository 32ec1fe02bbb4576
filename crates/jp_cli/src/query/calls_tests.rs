//! The [`Calls`] machine on its own: inputs in, steps out, no terminal, no
//! prompt, no stream, no disk (the workspace's files are held in memory).
//! The policies are real (a workspace's config), the argument pieces come
//! from the real parser.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use jp_config::AppConfig;
use jp_config::load::config_of_toml;
use jp_conversation::{EventBuilder, EventPart, FlushedEvent, ToolCallPart};
use jp_policy::Workspace;
use jp_policy::links::Memory;

use super::*;

/// A workspace at `/w`, held in memory (no disk), whose one tool is
/// `save(path, text)` with `policy`.
struct Fixture {
    config: AppConfig,
    files: Memory,
}

impl Fixture {
    fn new(policy: &str) -> Self {
        let config = config_of_toml(&[&format!(
            "[conversation.tools.save]\n\
             command = [\"save-tool\"]\n\
             parameters.path = {{ type = \"path\", required = true }}\n\
             parameters.text = {{ type = \"string\" }}\n\
             {policy}\n"
        )])
        .unwrap();
        Self {
            config,
            files: Memory::new().with_entry("/w/.jp"),
        }
    }

    /// The workspace has `path` (absolute) as a link to `target`.
    fn link(mut self, path: &str, target: &str) -> Self {
        self.files = self.files.with_link(path, target);
        self
    }

    fn judge(&self) -> Judge<'_> {
        let root = Path::new("/w");
        let workspace = Workspace::with_links(root, Arc::new(self.files.clone()));
        Judge::in_workspace(&self.config, workspace, root)
    }
}

/// One call streaming through a real [`EventBuilder`] into [`Calls`].
struct Stream<'c, 't> {
    calls: &'c mut Calls<'t>,
    builder: EventBuilder,
    /// Every step so far, as text.
    steps: Vec<String>,
}

impl<'c, 't> Stream<'c, 't> {
    fn new(calls: &'c mut Calls<'t>) -> Self {
        Self {
            calls,
            builder: EventBuilder::new(),
            steps: Vec::new(),
        }
    }

    /// Call number 0 to `name` starts.
    fn start(&mut self, name: &str) -> &mut Self {
        let part = EventPart::ToolCall(ToolCallPart::Start {
            id: "c1".into(),
            name: name.into(),
        });
        self.builder.handle_part(0, part).unwrap();
        let known = |_: &str| None;
        let state = CallState {
            argument: &known,
            bytes: 0,
            others: (0, 0),
        };
        let steps = self.calls.handle(CallInput::Started {
            call: 0,
            id: "c1".into(),
            name: name.into(),
            state: &state,
        });
        self.record(steps);
        self
    }

    /// A chunk of call 0's arguments arrives.
    fn chunk(&mut self, text: &str) -> &mut Self {
        let part = EventPart::ToolCall(ToolCallPart::ArgumentChunk(text.into()));
        let calls = &mut *self.calls;
        let mut steps = Vec::new();
        self.builder
            .handle_part_with(0, part, |progress, view| {
                let known = |key: &str| view.argument(key);
                let state = CallState {
                    argument: &known,
                    bytes: view.argument_bytes(),
                    others: (0, 0),
                };
                steps.extend(calls.handle(CallInput::Piece {
                    call: 0,
                    progress,
                    state: &state,
                }));
            })
            .unwrap();
        self.record(steps);
        self
    }

    /// Call 0 is complete.
    fn complete(&mut self) -> &mut Self {
        let bytes = self.builder.argument_bytes(0);
        let Some(FlushedEvent::ToolCallRequest(request)) = self.builder.handle_flush(0) else {
            panic!("no call")
        };
        let steps = self.calls.handle(CallInput::Complete {
            call: 0,
            bytes,
            request: if self.calls.ended_early(0) {
                request.as_received()
            } else {
                request
            },
        });
        self.record(steps);
        self
    }

    fn input(&mut self, input: CallInput<'static>) -> &mut Self {
        let steps = self.calls.handle(input);
        self.record(steps);
        self
    }

    fn record(&mut self, steps: Vec<CallStep>) {
        for step in steps {
            let text = match step {
                CallStep::Reserve(call) => format!("reserve {call}"),
                CallStep::Release(call) => format!("release {call}"),
                CallStep::AskEarly { call, decision, .. } => {
                    format!("ask early {call} ({})", decision.reason)
                }
                CallStep::Ask { call, .. } => format!("ask {call}"),
                CallStep::Withdraw(call) => format!("withdraw {call}"),
                CallStep::Abandon(call) => format!("abandon {call}"),
                CallStep::Settled(call) => {
                    format!("settled {call}: {}", verdict(self.calls.verdict(call)))
                }
            };
            self.steps.push(text);
        }
    }

    /// The steps so far, taken.
    fn took(&mut self) -> Vec<String> {
        std::mem::take(&mut self.steps)
    }
}

fn verdict(verdict: Option<&Verdict>) -> String {
    match verdict {
        None => "none".into(),
        Some(Verdict::Run { mode, approved, .. }) => {
            format!("run {mode}{}", if *approved { ", approved" } else { "" })
        }
        Some(Verdict::NotRun { response, note }) => {
            format!("{}: {note}", response.status.as_str())
        }
    }
}

fn decision(mode: Mode) -> Decision {
    Decision {
        mode,
        rule: Some(0),
        reason: format!("policy.run[0] decided {mode}"),
        trace: Vec::new(),
    }
}

#[test]
fn an_unattended_call_gives_up_its_place_at_once_and_runs() {
    let f = Fixture::new("policy.run = \"unattended\"");
    let judge = f.judge();
    let mut calls = Calls::new(&judge, true);
    let mut s = Stream::new(&mut calls);
    s.start("save");
    assert_eq!(s.took(), ["reserve 0", "release 0"]);
    s.chunk(r#"{"path": "a.txt"}"#).complete();
    assert_eq!(
        s.took(),
        ["release 0", "settled 0: run unattended"],
        "decided at the start, checked again when complete"
    );
}

#[test]
fn a_call_to_no_such_tool_ends_as_it_starts() {
    let f = Fixture::new("");
    let judge = f.judge();
    let mut calls = Calls::new(&judge, true);
    let mut s = Stream::new(&mut calls);
    s.start("rm");
    assert_eq!(s.took(), ["reserve 0", "release 0", "abandon 0"]);
    assert!(s.calls.ended_early(0));
    s.complete();
    assert_eq!(
        s.took(),
        [
            "release 0",
            "settled 0: refused: rm: refused: no such tool is configured"
        ]
    );
}

#[test]
fn an_ask_while_streaming_is_asked_early_and_the_answer_decides() {
    let f = Fixture::new("policy.run = \"ask\"");
    let judge = f.judge();
    let mut calls = Calls::new(&judge, true);
    let mut s = Stream::new(&mut calls);
    s.start("save");
    let asked = s.took();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0], "reserve 0");
    assert!(asked[1].starts_with("ask early 0"), "{asked:?}");
    // Approved before the arguments complete: nothing to do until then.
    s.input(CallInput::Answered {
        call: 0,
        answer: Answer::Run {
            decision: decision(Mode::Ask),
        },
    });
    assert_eq!(s.took(), Vec::<String>::new());
    s.chunk(r#"{"path": "a.txt"}"#).complete();
    assert_eq!(s.took(), ["release 0", "settled 0: run ask, approved"]);
}

#[test]
fn an_answer_after_the_arguments_complete_decides_then() {
    let f = Fixture::new("policy.run = \"ask\"");
    let judge = f.judge();
    let mut calls = Calls::new(&judge, true);
    let mut s = Stream::new(&mut calls);
    s.start("save").took();
    s.chunk(r#"{"path": "a.txt"}"#).complete();
    assert_eq!(s.took(), Vec::<String>::new(), "the open question decides");
    let page = s.calls.page_source(0).map(|(name, c)| (name, c.is_some()));
    assert_eq!(page, Some(("save", true)), "`v` pages the whole call now");
    s.input(CallInput::Answered {
        call: 0,
        answer: Answer::Run {
            decision: decision(Mode::Ask),
        },
    });
    assert_eq!(s.took(), ["release 0", "settled 0: run ask, approved"]);
}

#[test]
fn a_decline_while_streaming_ends_the_call() {
    let f = Fixture::new("policy.run = \"ask\"");
    let judge = f.judge();
    let mut calls = Calls::new(&judge, true);
    let mut s = Stream::new(&mut calls);
    s.start("save").took();
    let declined = Verdict::NotRun {
        response: jp_conversation::ToolCallResponse::new(
            "c1",
            jp_conversation::ResponseStatus::Declined,
            "declined",
        ),
        note: "save: declined by you".into(),
    };
    s.input(CallInput::Answered {
        call: 0,
        answer: Answer::NotRun(declined),
    });
    assert_eq!(s.took(), ["abandon 0"]);
    assert!(s.calls.ended_early(0));
    s.complete();
    assert_eq!(
        s.took(),
        ["release 0", "settled 0: declined: save: declined by you"]
    );
}

#[test]
fn without_a_terminal_an_ask_is_declined_as_it_is_decided() {
    let f = Fixture::new("policy.run = \"ask\"");
    let judge = f.judge();
    let mut calls = Calls::new(&judge, false);
    let mut s = Stream::new(&mut calls);
    s.start("save");
    assert_eq!(s.took(), ["reserve 0", "release 0", "abandon 0"]);
    s.complete();
    let settled = s.took();
    assert_eq!(settled[0], "release 0");
    assert!(
        settled[1].starts_with("settled 0: declined: save: declined: "),
        "{settled:?}"
    );
}

#[test]
fn a_call_over_its_limit_withdraws_its_open_question() {
    let f = Fixture::new("policy.run = \"ask\"");
    let judge = f.judge();
    let mut calls = Calls::new(&judge, true);
    let mut s = Stream::new(&mut calls);
    s.start("save").took();
    s.input(CallInput::TooLarge {
        call: 0,
        tool: "save".into(),
        limit: 10,
        bytes: 12,
    });
    assert_eq!(s.took(), ["withdraw 0", "release 0"]);
    // The closed question reports back.
    s.input(CallInput::Withdrawn);
    assert!(s.calls.withdrawn());
    s.complete();
    assert_eq!(
        s.took(),
        [
            "release 0",
            "settled 0: refused: save: refused: its arguments are over the limit of 10 bytes set by \
             conversation.tools.save.max_argument_bytes"
        ]
    );
}

#[test]
fn a_rule_on_an_argument_decides_when_that_argument_arrives() {
    let f = Fixture::new(
        "policy.run = [{ arg = \"/path\", const = \"notes.txt\", mode = \"unattended\" }, { mode = \"skip\" }]",
    );
    let judge = f.judge();
    let mut calls = Calls::new(&judge, true);
    let mut s = Stream::new(&mut calls);
    s.start("save");
    assert_eq!(s.took(), ["reserve 0"], "the policy waits for /path");
    s.chunk(r#"{"text": "hello", "#);
    assert_eq!(s.took(), Vec::<String>::new());
    s.chunk(r#""path": "secret.txt"#);
    assert_eq!(s.took(), Vec::<String>::new(), "not before the value ends");
    s.chunk(r#"", "#);
    assert_eq!(s.took(), ["release 0", "abandon 0"], "skipped: ended early");
    s.complete();
    let settled = s.took();
    assert_eq!(settled[0], "release 0");
    assert!(
        settled[1].starts_with("settled 0: skipped: save: skipped"),
        "{settled:?}"
    );
}

#[test]
fn a_value_that_can_never_run_is_refused_while_it_streams() {
    let f = Fixture::new("policy.run = \"ask\"");
    let judge = f.judge();
    let mut calls = Calls::new(&judge, true);
    let mut s = Stream::new(&mut calls);
    s.start("save").took();
    s.chunk(r#"{"path": "a\u0000b"#);
    assert_eq!(s.took(), ["withdraw 0", "release 0", "abandon 0"]);
    assert!(s.calls.ended_early(0));
}

#[test]
fn a_declined_call_tells_the_model_the_stream_was_stopped() {
    let f = Fixture::new("policy.run = \"skip\"");
    let judge = f.judge();
    let mut calls = Calls::new(&judge, true);
    let mut s = Stream::new(&mut calls);
    s.start("save").took();
    s.complete().took();
    s.calls.tell_model(0, " (stopped)");
    let Some(Verdict::NotRun { response, .. }) = s.calls.take_verdict(0) else {
        panic!("not a refusal")
    };
    assert!(response.content.ends_with("it was not run. (stopped)"));
    assert!(s.calls.take_verdict(0).is_none(), "taken once");
}

#[test]
fn a_path_a_link_leads_out_of_the_workspace_is_not_let_through_by_its_name() {
    const SRC_ONLY: &str = "policy.run = [{ arg = \"/path\", prefix = \"src/\", mode = \"unattended\" }, { mode = \"skip\" }]";
    let f = Fixture::new(SRC_ONLY).link("/w/src/keys", "/home/u/.ssh");
    let judge = f.judge();
    let mut calls = Calls::new(&judge, true);
    let mut s = Stream::new(&mut calls);
    s.start("save").took();
    s.chunk(r#"{"path": "src/notes.txt"}"#).complete();
    assert_eq!(
        s.took(),
        ["release 0", "release 0", "settled 0: run unattended"]
    );

    let mut calls = Calls::new(&judge, true);
    let mut s = Stream::new(&mut calls);
    s.start("save").took();
    s.chunk(r#"{"path": "src/keys/id_ed25519"}"#);
    // Skipped as soon as its path is known, through the link: the stream
    // can stop.
    assert_eq!(s.took(), ["release 0", "abandon 0"]);
    s.complete();
    assert_eq!(
        s.took(),
        [
            "release 0",
            "settled 0: skipped: save: skipped (policy.run[1] (catch-all) matched)"
        ]
    );
}
