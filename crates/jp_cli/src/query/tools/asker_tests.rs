//! The run prompt with a scripted prompter: what the user's keys and edits
//! do to a call that asks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;

use tokio_util::sync::CancellationToken;

use super::*;
use crate::query::decision::Decided;
use crate::query::tools::fixture::{quiet_printer, workspace};
use jp_term::prompt::{Prompts, ScriptedPrompter};

const CONFIG: &str = r#"
[conversation.tools.save]
command = ["true"]
parameters.path = { type = "path", required = true }
policy.run = [{ arg = "/path", prefix = "secret/", mode = "skip" }, { mode = "ask" }]

[conversation.tools.write]
command = ["true"]
parameters.path = { type = "path", required = true }
parameters.content = { type = "string", required = true }
policy.run = [{ arg = "/content", pattern = "TOKEN", mode = "skip" }, { mode = "ask" }]

[conversation.tools.fs_modify_file]
command = ["jp", "tool", "fs_modify_file"]
parameters.path = { type = "path", required = true }
parameters.patterns = { type = "array", required = true, items = { type = "object", properties = { old = { type = "string", required = true }, new = { type = "string", required = true } } } }
policy.run = "ask"
"#;

/// What one prompt did: the verdict, the questions asked, and the text
/// and file name of each edit opened.
struct Prompted {
    verdict: Verdict,
    asked: Vec<String>,
    opened: Vec<(String, String)>,
}

/// Decides `tool(arguments)` with these keys and edits.
fn decide_call(tool: &str, arguments: Value, keys: &[Option<char>], edits: &[&str]) -> Prompted {
    let (dir, config) = workspace(CONFIG);
    let printer = quiet_printer();
    let judge = Judge::new(&config, dir.path());
    let asker = Asker::new(&judge, printer, false);
    let backend = ScriptedPrompter {
        keys: keys.iter().copied().collect(),
        edits: edits
            .iter()
            .map(|e| (*e).to_owned())
            .collect::<VecDeque<_>>(),
        ..ScriptedPrompter::default()
    };
    let (asked, opened, files) = (
        backend.asked.clone(),
        backend.opened.clone(),
        backend.opened_files.clone(),
    );
    let prompts = Prompts::new(Box::new(backend), CancellationToken::new());
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    let call = ToolCallRequest::new("1", tool, arguments);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let verdict = runtime.block_on(async {
        match judge.decide(&call, &prompts) {
            Decided::Now(verdict) => verdict,
            Decided::Ask(ask) => asker.confirm(ask, prompts.ticket()).await,
        }
    });
    let opened = opened.lock().unwrap().clone();
    let files = files.lock().unwrap().clone();
    Prompted {
        verdict,
        asked: asked.lock().unwrap().clone(),
        opened: opened.into_iter().zip(files).collect(),
    }
}

/// The verdict for `save(path)` with these keys and edits, and the
/// questions asked.
fn decide(keys: &[Option<char>], edits: &[&str]) -> (Verdict, Vec<String>) {
    let decided = decide_call("save", serde_json::json!({"path": "a.txt"}), keys, edits);
    (decided.verdict, decided.asked)
}

fn outcome(verdict: &Verdict) -> (String, String) {
    match verdict {
        Verdict::Run { arguments, .. } => ("run".into(), arguments.as_value().to_string()),
        Verdict::NotRun { response, .. } => {
            (format!("{:?}", response.status), response.content.clone())
        }
    }
}

const RUN: &str = "Run save(path: \"a.txt\")? [y,a,n,e,v]";

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
    assert_eq!(asked, [RUN, "Run save(path: \"b.txt\")? [y,a,n,e,v]"]);

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

#[test]
fn e_on_a_files_content_opens_the_text_itself_and_the_edit_replaces_it() {
    let call = serde_json::json!({"path": "src/notes.md", "content": "# Notes\nfrom the model\n"});
    let decided = decide_call(
        "write",
        call.clone(),
        &[Some('e'), Some('y')],
        &["# Notes\nfrom the user\n"],
    );
    assert_eq!(
        decided.opened,
        [(
            "# Notes\nfrom the model\n".to_owned(),
            "notes.md".to_owned()
        )]
    );
    assert_eq!(
        outcome(&decided.verdict),
        (
            "run".into(),
            r##"{"path":"src/notes.md","content":"# Notes\nfrom the user\n"}"##.into()
        )
    );
    assert!(matches!(decided.verdict, Verdict::Run { edited: true, .. }));
    // The edit is decided again: the policy skips content with a token.
    let decided = decide_call("write", call, &[Some('e')], &["TOKEN=1\n"]);
    assert_eq!(outcome(&decided.verdict).0, "Skipped");
    // A short value opens the JSON, as before.
    let decided = decide_call(
        "write",
        serde_json::json!({"path": "a.txt", "content": "short"}),
        &[Some('e'), Some('n')],
        &["{\"path\": \"a.txt\", \"content\": \"short\"}"],
    );
    assert_eq!(
        decided.opened,
        [(
            "{\n  \"path\": \"a.txt\",\n  \"content\": \"short\"\n}".to_owned(),
            "arguments.json".to_owned()
        )]
    );
}

#[test]
fn e_on_a_single_replacement_opens_its_new_text_and_keeps_it_without_a_final_newline() {
    let call = serde_json::json!({
        "path": "src/lib.rs",
        "patterns": [{"old": "fn main() {\n}", "new": "fn hello() {\n    greet();\n}"}]
    });
    let decided = decide_call(
        "fs_modify_file",
        call,
        &[Some('e'), Some('y')],
        // An editor ends the file with a newline the text did not have.
        &["fn hello() {\n    wave();\n}\n"],
    );
    assert_eq!(
        decided.opened,
        [(
            "fn hello() {\n    greet();\n}".to_owned(),
            "lib.rs".to_owned()
        )]
    );
    assert_eq!(
        outcome(&decided.verdict),
        (
            "run".into(),
            r#"{"path":"src/lib.rs","patterns":[{"old":"fn main() {\n}","new":"fn hello() {\n    wave();\n}"}]}"#.into()
        )
    );
}

/// An early prompt asks its question as it is when the prompt shows, and
/// again after `v`: the whole call once its arguments are complete.
#[test]
fn an_early_prompt_asks_the_latest_text_of_its_question() {
    let (dir, config) = workspace(CONFIG);
    let printer = quiet_printer();
    let judge = Judge::new(&config, dir.path());
    let asker = Asker::new(&judge, printer, false);
    let backend = ScriptedPrompter {
        keys: [Some('v'), Some('y')].into_iter().collect(),
        ..ScriptedPrompter::default()
    };
    let asked = backend.asked.clone();
    let prompts = Prompts::new(Box::new(backend), CancellationToken::new());
    let (question, live) = tokio::sync::watch::channel(Asker::early_question(
        "save(<streaming>)",
        "in its sandbox",
        true,
    ));
    let decision = jp_policy::Decision {
        mode: Mode::Ask,
        rule: Some(1),
        reason: "policy.run[1] (catch-all) matched".into(),
        trace: Vec::new(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let answer = runtime.block_on(asker.confirm_early(
        "1",
        "save",
        &live,
        decision.clone(),
        &[],
        prompts.ticket(),
        || {
            // The arguments complete while the pager shows them.
            let Value::Object(arguments) = serde_json::json!({"path": "a.txt"}) else {
                unreachable!()
            };
            question.send_replace(asker.settled_question("save", &arguments));
            async { Some("save: the arguments".to_owned()) }
        },
    ));
    assert_eq!(answer, crate::query::decision::Answer::Run { decision });
    assert_eq!(
        *asked.lock().unwrap(),
        [
            "Run save(<streaming>)? [y,a,n,e,v]",
            "Run save(path: \"a.txt\")? [y,a,n,e,v]"
        ]
    );
}
