//! "Allow for this session": which later calls an approval covers, and
//! what the conversation's history leaves in force.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_conversation::ToolCallRequest;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::query::decision::{Decided, Verdict};
use crate::query::tools::fixture::{quiet_printer, workspace};
use crate::query::tools::judge::Approvals;
use crate::query::tools::{Asker, Judge};
use jp_conversation::ConversationEvent;
use jp_term::prompt::{Prompts, ScriptedPrompter};

const CONFIG: &str = r#"
[conversation.tools.save]
command = ["true"]
parameters.path = { type = "path", required = true }
policy.run = [{ arg = "/path", pattern = "\\.env$", mode = "ask" }, { mode = "ask" }]

[conversation.tools.other]
command = ["true"]
parameters.path = { type = "path", required = true }
policy.run = "ask"
"#;

/// An approval given at `tool(path: "notes.txt")`: `save` is no tool of
/// jp's, so it covers that identical call.
fn approval(tool: &str, rule: Option<usize>, rule_text: &str) -> ConversationEvent {
    ConversationEvent::now(EventKind::SessionApproval(SessionApproval {
        call_id: "c1".into(),
        tool: tool.into(),
        rule,
        rule_text: rule_text.into(),
        scope: Some(ApprovalScope::Call {
            arguments: json!({"path": "notes.txt"}),
        }),
        epoch: None,
        seal: None,
    }))
}

/// What deciding `tool(path)` gives, with `history` before it and no one
/// to ask: the verdict's mode and reason, or the note of a decline.
fn decided(history: &[ConversationEvent], tool: &str, path: &str) -> String {
    let (dir, config) = workspace(CONFIG);
    let judge = Judge::new(&config, dir.path())
        .with_history(history, &|_| true)
        .unwrap();
    let prompts = Prompts::new(
        Box::new(ScriptedPrompter::default()),
        CancellationToken::new(),
    );
    let Value::Object(arguments) = json!({ "path": path }) else {
        unreachable!()
    };
    let call = ToolCallRequest::new("c2", tool, arguments);
    match judge.decide(&call, &prompts) {
        Decided::Now(Verdict::Run { mode, reason, .. }) => format!("run: {mode}: {reason}"),
        Decided::Now(Verdict::NotRun { note, .. }) => format!("not run: {note}"),
        Decided::Ask(ask) => format!("ask: {}", ask.why),
    }
}

#[test]
fn an_approval_covers_later_calls_of_the_same_tool_and_rule() {
    let history = [approval("save", Some(1), "catch-all")];
    assert_eq!(
        decided(&history, "save", "notes.txt"),
        "run: ask: approved for this session (policy.run[1] matched)"
    );
    // Another rule of the same tool.
    assert_eq!(
        decided(&history, "save", "a/.env"),
        r#"ask: policy.run[0] (pattern "\\.env$" on /path) matched: "a/.env" matches pattern "\\.env$""#
    );
    // Another tool.
    assert_eq!(
        decided(&history, "other", "notes.txt"),
        "ask: policy.run is \"ask\""
    );
}

#[test]
fn an_approval_covers_only_its_scope() {
    // `save` is no tool of jp's: the identical call only.
    let history = [approval("save", Some(1), "catch-all")];
    assert_eq!(
        decided(&history, "save", "more.txt"),
        "ask: policy.run[1] (catch-all) matched"
    );
    // Recorded without a scope (by a jp before scopes): nothing.
    let EventKind::SessionApproval(mut old) = history[0].kind.clone() else {
        unreachable!()
    };
    old.scope = None;
    let history = [ConversationEvent::now(EventKind::SessionApproval(
        old.clone(),
    ))];
    assert_eq!(
        decided(&history, "save", "notes.txt"),
        "ask: policy.run[1] (catch-all) matched"
    );
    // A scope only jp's file tools have, on a tool that is not one.
    old.scope = Some(ApprovalScope::Paths {
        under: vec![".".into(), "notes.txt".into()],
    });
    let history = [ConversationEvent::now(EventKind::SessionApproval(old))];
    assert_eq!(
        decided(&history, "save", "notes.txt"),
        "ask: policy.run[1] (catch-all) matched"
    );
}

#[test]
fn a_call_whose_path_leaves_the_workspace_is_still_asked() {
    let history = [approval("save", Some(1), "catch-all")];
    assert_eq!(
        decided(&history, "save", "../notes.txt"),
        "ask: policy.run[1] (catch-all) matched"
    );
    assert_eq!(
        decided(&history, "save", "/etc/notes.txt"),
        "ask: policy.run[1] (catch-all) matched"
    );
}

#[test]
fn a_rule_that_reads_differently_now_is_not_covered() {
    // policy.run[1] was another rule when the user allowed it.
    let history = [approval("save", Some(1), "prefix \"src/\" on /path")];
    assert_eq!(
        decided(&history, "save", "notes.txt"),
        "ask: policy.run[1] (catch-all) matched"
    );
}

#[test]
fn forget_approvals_ends_the_ones_before_it_only() {
    let forgotten = ConversationEvent::now(EventKind::ApprovalsForgotten);
    let history = [approval("save", Some(1), "catch-all"), forgotten.clone()];
    assert_eq!(
        decided(&history, "save", "notes.txt"),
        "ask: policy.run[1] (catch-all) matched"
    );
    let history = [
        approval("save", Some(1), "catch-all"),
        forgotten,
        approval("save", Some(1), "catch-all"),
    ];
    assert_eq!(
        decided(&history, "save", "notes.txt"),
        "run: ask: approved for this session (policy.run[1] matched)"
    );
}

#[test]
fn a_at_the_prompt_runs_the_call_and_records_the_approval_once() {
    let (dir, config) = workspace(CONFIG);
    let judge = Judge::new(&config, dir.path());
    let asker = Asker::new(&judge, quiet_printer(), false);
    let backend = ScriptedPrompter {
        keys: [Some('a')].into_iter().collect(),
        ..ScriptedPrompter::default()
    };
    let asked = backend.asked.clone();
    let prompts = Prompts::new(Box::new(backend), CancellationToken::new());
    let Value::Object(arguments) = json!({ "path": "notes.txt" }) else {
        unreachable!()
    };
    let call = ToolCallRequest::new("c1", "save", arguments);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let verdict = runtime.block_on(async {
        match judge.decide(&call, &prompts) {
            Decided::Ask(ask) => asker.confirm(ask, prompts.ticket()).await,
            Decided::Now(verdict) => verdict,
        }
    });
    assert!(
        matches!(verdict, Verdict::Run { approved: true, .. }),
        "{verdict:?}"
    );
    assert_eq!(
        *asked.lock().unwrap(),
        ["Run save(path: \"notes.txt\")? [y,a,n,e,v]"]
    );
    assert_eq!(
        judge.take_unrecorded(),
        [EventKind::SessionApproval(SessionApproval {
            call_id: "c1".into(),
            tool: "save".into(),
            rule: Some(1),
            rule_text: "catch-all".into(),
            scope: Some(ApprovalScope::Call {
                arguments: json!({"path": "notes.txt"})
            }),
            epoch: None,
            seal: None,
        })]
    );
    assert_eq!(judge.take_unrecorded(), []);
    // The identical call is covered at once; `save` is no tool of jp's,
    // so another path is not (issue 34: what the user saw, not the rule).
    let call = |path: &str| {
        let Value::Object(arguments) = json!({ "path": path }) else {
            unreachable!()
        };
        ToolCallRequest::new("c2", "save", arguments)
    };
    assert!(matches!(
        judge.decide(&call("notes.txt"), &prompts),
        Decided::Now(Verdict::Run { approved: true, .. })
    ));
    assert!(matches!(
        judge.decide(&call("more.txt"), &prompts),
        Decided::Ask(_)
    ));
}

#[test]
fn an_old_log_without_approvals_reads_as_before() {
    let line = r#"{"at_ms":1,"type":"turn_start"}"#;
    let event: ConversationEvent = serde_json::from_str(line).unwrap();
    assert!(
        Approvals::from_history(&[event], &|_| true)
            .active
            .is_empty()
    );
    let line = r#"{"at_ms":2,"type":"approvals_forgotten"}"#;
    let event: ConversationEvent = serde_json::from_str(line).unwrap();
    assert_eq!(event.kind, EventKind::ApprovalsForgotten);
    assert_eq!(serde_json::to_string(&event).unwrap(), line);
}

/// `a` at a prompt opened while `run_command`'s arguments stream: what
/// the approval covers, and what it said, by the state of the question
/// answered. Before the call is complete, the user has not seen what calls
/// like it are, so it covers only the identical call (`?` says so); once
/// the prompt shows the whole call, `a` names its scope and covers that
/// (issue 34, item 3).
#[test]
fn a_at_an_early_prompt_covers_what_the_prompt_showed() {
    let arguments = json!({"program": "cargo", "args": ["test"]});
    let Value::Object(map) = arguments.clone() else {
        unreachable!()
    };
    let exact = ApprovalScope::Call {
        arguments: arguments.clone(),
    };
    let command = ApprovalScope::Command {
        program: "cargo".into(),
        first: Some("test".into()),
        cwd: None,
    };
    let cases = [
        (
            false,
            exact,
            "only this exact call",
            "allow only this exact call for this session, once its arguments are complete: ",
        ),
        (
            true,
            command,
            "\"cargo test ...\"",
            "allow \"cargo test ...\" for this session: ",
        ),
    ];
    for (settled, scope, described, help) in cases {
        let (dir, config) = workspace(COMMANDS);
        let judge = Judge::new(&config, dir.path());
        let asker = Asker::new(&judge, quiet_printer(), false);
        let backend = ScriptedPrompter {
            keys: [Some('a')].into_iter().collect(),
            ..ScriptedPrompter::default()
        };
        let prompts = Prompts::new(Box::new(backend), CancellationToken::new());
        let decision = jp_policy::Decision {
            mode: Mode::Ask,
            rule: Some(0),
            reason: "policy.run[0] (catch-all) matched".into(),
            trace: Vec::new(),
        };
        let question = if settled {
            asker.settled_question("run_command", &map)
        } else {
            Asker::early_question(
                "run_command(program: \"cargo\", <streaming>)",
                "in its sandbox",
                true,
            )
        };
        let a = question.choices.iter().find(|c| c.key == 'a').unwrap();
        assert!(a.help.starts_with(help), "{settled}: {}", a.help);
        let live = tokio::sync::watch::channel(question).1;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let answer = runtime.block_on(asker.confirm_early(
            "c1",
            "run_command",
            &live,
            decision.clone(),
            &[],
            prompts.ticket(),
            || async { None },
        ));
        // It runs as decided, allowed for the session; the approval is
        // recorded once complete.
        assert_eq!(
            answer,
            crate::query::decision::Answer::Allow {
                decision: decision.clone()
            }
        );
        assert!(judge.session_covers("run_command", Mode::Ask, Some(0)));
        assert!(!judge.session_covers("run_command", Mode::Ask, Some(1)));
        assert_eq!(judge.take_unrecorded(), []);
        let call = ToolCallRequest::new("c1", "run_command", map.clone());
        let early = Some(crate::query::decision::Answer::Run { decision });
        match judge.decide_after(&call, true, early) {
            Decided::Now(Verdict::Run {
                approved: true,
                reason,
                ..
            }) => assert_eq!(
                reason,
                format!(
                    "approved for this session from this call on, for {described} (policy.run[0] (catch-all) matched)"
                )
            ),
            other => panic!("{other:?}"),
        }
        let recorded = judge.take_unrecorded();
        let [EventKind::SessionApproval(approval)] = recorded.as_slice() else {
            panic!("{recorded:?}")
        };
        assert_eq!(approval.scope, Some(scope), "{settled}");
    }
}

#[test]
fn without_a_terminal_an_approval_still_runs_what_it_covers_and_nothing_else() {
    let (dir, config) = workspace(CONFIG);
    let history = [approval("save", Some(1), "catch-all")];
    let judge = Judge::new(&config, dir.path())
        .with_history(&history, &|_| true)
        .unwrap();
    let call = |path: &str| {
        let Value::Object(arguments) = json!({ "path": path }) else {
            unreachable!()
        };
        ToolCallRequest::new("c2", "save", arguments)
    };
    let decision = jp_policy::Decision {
        mode: Mode::Ask,
        rule: Some(1),
        reason: "policy.run[1] (catch-all) matched".into(),
        trace: Vec::new(),
    };
    // While it streams: kept for when it is complete, not declined.
    assert!(
        judge
            .early("c2", "save", decision.clone(), false, &|_| None)
            .is_ok()
    );
    let early = Some(crate::query::decision::Answer::Policy(decision));
    assert!(matches!(
        judge.decide_after(&call("notes.txt"), false, early.clone()),
        Decided::Now(Verdict::Run { approved: true, .. })
    ));
    // A path out of the workspace is declined, as any ask without a
    // terminal is.
    assert!(matches!(
        judge.decide_after(&call("../notes.txt"), false, early),
        Decided::Now(Verdict::NotRun { .. })
    ));
}

const COMMANDS: &str = r#"
[conversation.tools.run_command]
command = ["jp", "tool", "run_command"]
parameters.program = { type = "string", required = true }
parameters.args = { type = "array", items = { type = "string" } }
parameters.cwd = { type = "path" }
policy.run = [{ mode = "ask" }]
"#;

#[test]
fn the_help_of_a_names_the_scope_it_would_allow() {
    let (dir, config) = workspace(COMMANDS);
    let judge = Judge::new(&config, dir.path());
    assert_eq!(
        judge.allow_help(
            "run_command",
            &json!({"program": "cargo", "args": ["test"]})
        ),
        "allow \"cargo test ...\" for this session: run it, and, in this conversation, later calls that this covers and that the same policy rule asks about, unless a path leaves the workspace (`jp conversation forget-approvals` undoes it)"
    );
    assert!(
        judge
            .allow_help("run_command", &json!({"program": "sh", "args": ["-c", "x"]}))
            .starts_with(
                "allow only this exact call (\"sh\" runs code given in its arguments: a shell: `sh -c CODE`) for this session: "
            )
    );
}
