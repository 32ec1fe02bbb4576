//! Compaction (issue 38), through the `jp` binary: `jp conversation
//! compact` has a model summarise the older turns, the summary is sent in
//! their place while the log keeps them byte for byte, `jp query` compacts
//! by itself (once) when a request nears the window, and a first request
//! too large for the window is not left to be sent again.

#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::providers::text_reply;
use common::query::{ENV, hide_ids, initialized, query, stored};
use jp_test_server::TestServer;
use serde_json::{Value, json};

const MODEL: &str = "anthropic/claude-haiku-4-5";

/// What the summary request asks, as its last message.
const INSTRUCTION: &str = "jp is compacting this conversation: write a summary of everything above, to be sent in its place from now on. Keep what the rest of the work needs: the user's goals and requests, the decisions made and why, file paths and exact identifiers (functions, types, commands, error messages), what was changed, and the tasks and questions still open. Answer with the summary alone, as plain notes, and call no tool.";

fn add_config(ws: &common::Workspace, toml: &str) {
    let config = ws.read("project/.jp/config.toml");
    ws.write("project/.jp/config.toml", &format!("{config}\n{toml}"));
}

/// `jp conversation compact ARGS` against `server`.
fn compact(ws: &common::Workspace, server: &TestServer, args: &[&str]) -> common::Run {
    let base = format!("providers.llm.anthropic.base_url={}", server.url());
    let mut all = vec!["conversation", "compact", "--cfg", &base];
    all.extend_from_slice(args);
    let mut env = ENV.to_vec();
    env.push(("JP_CFG_ASSISTANT__MODEL__ID", MODEL));
    let output = ws.command(&all, &env).output().unwrap();
    ws.run_of(output)
}

/// The log of the only conversation.
fn log(ws: &common::Workspace) -> Vec<u8> {
    let dir = ws.project().join(".jp/conversations");
    let id = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .find(|entry| entry.path().join("events.jsonl").is_file())
        .unwrap()
        .path();
    std::fs::read(id.join("events.jsonl")).unwrap()
}

/// The texts of a recorded Anthropic request's messages, one a message.
fn texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| match &message["content"] {
            Value::String(text) => text.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            other => other.to_string(),
        })
        .collect()
}

/// The stored events of type `kind`.
fn of_type(conversation: &Value, kind: &str) -> Vec<Value> {
    conversation["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["type"] == kind)
        .cloned()
        .collect()
}

#[test]
fn compact_sends_a_summary_in_place_of_the_older_turns_and_keeps_them() {
    let ws = initialized();
    let server = TestServer::start(vec![
        text_reply("Answer one."),
        text_reply("Answer two."),
        text_reply("Summary: the user asked ALPHA; src/lib.rs is open."),
        text_reply("Answer three."),
    ]);
    assert_eq!(query(&ws, &server, MODEL, &[], "first ALPHA").code, 0);
    assert_eq!(query(&ws, &server, MODEL, &[], "second BETA").code, 0);
    let before = log(&ws);
    let run = compact(&ws, &server, &["--keep", "1"]);
    assert_eq!(
        run,
        common::Run {
            code: 0,
            stdout: "compacted turn 1 (about 6 tokens) into a 13-token summary by anthropic/claude-haiku-4-5\n".into(),
            stderr: String::new(),
        }
    );
    assert_eq!(query(&ws, &server, MODEL, &[], "third GAMMA").code, 0);
    let sent = server.wait_for(4, Duration::from_secs(5));
    // The summary request: turn 1 as it is sent, and the instruction.
    assert_eq!(
        texts(&sent[2].json()),
        ["first ALPHA", "Answer one.", INSTRUCTION]
    );
    // Turn 3 sends the summary with turn 2, and not turn 1.
    assert_eq!(
        texts(&sent[3].json()),
        [
            "[jp's summary of the earlier part of this conversation, sent in place of it:]\nSummary: the user asked ALPHA; src/lib.rs is open.\n[end of summary]\n\nsecond BETA",
            "Answer two.",
            "third GAMMA"
        ]
    );
    // The log only grew.
    let after = log(&ws);
    assert!(after.starts_with(&before), "the old lines are unchanged");
    let conversation = stored(&ws);
    let compactions = of_type(&conversation, "compaction");
    assert_eq!(
        compactions,
        [json!({
            "type": "compaction",
            "at_ms": compactions[0]["at_ms"],
            "upto": 4,
            "summary": "Summary: the user asked ALPHA; src/lib.rs is open.",
            "model": "anthropic/claude-haiku-4-5",
        })]
    );
    // Its usage is counted with the conversation's.
    assert_eq!(of_type(&conversation, "usage").len(), 4);
    let show = ws.jp(&["conversation", "show"]);
    assert_eq!(
        hide_ids(&show.stdout),
        "conversation <id> · first ALPHA\n\
         \n── turn 1 · 2026-11-30 12:00 · summarised ──\n\
         you: first ALPHA\n\
         assistant: Answer one.\n\
         \n── turn 2 · 2026-11-30 12:00 ──\n\
         you: second BETA\n\
         assistant: Answer two.\n\
         ── summary of turn 1 by anthropic/claude-haiku-4-5: sent from here on in their place ──\n  \
         Summary: the user asked ALPHA; src/lib.rs is open.\n\
         \n── turn 3 · 2026-11-30 12:00 ──\n\
         you: third GAMMA\n\
         assistant: Answer three.\n\
         \ntotal: 3 turns · 4 responses · 40 in · 168 out · $0.0009\n"
    );
}

/// A workspace whose model reads 10,000 tokens (jp's system prompt and
/// default tools are about a tenth of it).
fn small_window() -> common::Workspace {
    let ws = initialized();
    add_config(
        &ws,
        "[providers.llm.anthropic.models.claude-haiku-4-5]\ncontext_window = 10000\n",
    );
    ws
}

/// `text` with jp's estimates and shares of the window as `N`: they
/// count jp's system prompt and tools.
fn numbers(text: &str) -> String {
    let estimate = regex::Regex::new(r"(about|over) \d[\d,]*").unwrap();
    let share = regex::Regex::new(r"\d+%").unwrap();
    let text = estimate.replace_all(text, "$1 N");
    share.replace_all(&hide_ids(&text), "N%").into_owned()
}

/// A message of about `tokens` tokens by jp's estimate, starting `word`.
fn message(word: &str, tokens: usize) -> String {
    format!("{word} {}", "w ".repeat(tokens * 2))
}

#[test]
fn a_query_near_the_window_compacts_first_and_sends_the_summary() {
    let ws = small_window();
    let server = TestServer::start(vec![
        text_reply("One."),
        text_reply("Two."),
        text_reply("Turn 1 asked about ALPHA."),
        text_reply("Three."),
    ]);
    assert_eq!(
        query(&ws, &server, MODEL, &[], &message("ALPHA", 2500)).code,
        0
    );
    assert_eq!(
        query(&ws, &server, MODEL, &[], &message("BETA", 2500)).code,
        0
    );
    let run = query(&ws, &server, MODEL, &[], &message("GAMMA", 3000));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        numbers(&run.stderr),
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         the conversation is about N tokens, over N% of the 10,000-token window of anthropic/claude-haiku-4-5: compacting turn 1\n\
         compacted turn 1 (about N tokens) into a 7-token summary by anthropic/claude-haiku-4-5\n\
         tokens: 2 responses · 20 in · 84 out · $0.0004 · context N% of 10k\n"
    );
    assert_eq!(run.stdout, "Three.\n");
    let sent = server.wait_for(4, Duration::from_secs(5));
    assert_eq!(sent.len(), 4);
    assert_eq!(texts(&sent[2].json()).last().unwrap(), INSTRUCTION);
    let third = texts(&sent[3].json());
    assert_eq!(third.len(), 3, "the summary with turn 2, and turn 3");
    assert!(
        third[0].starts_with(
            "[jp's summary of the earlier part of this conversation, sent in place of it:]\nTurn 1 asked about ALPHA.\n[end of summary]\n\nBETA "
        ),
        "{}",
        &third[0][..200]
    );
    assert!(!third.iter().any(|text| text.contains("ALPHA w")));
    assert_eq!(of_type(&stored(&ws), "compaction").len(), 1);
}

#[test]
fn a_summary_too_large_itself_is_made_once_and_the_request_refused() {
    let ws = small_window();
    let huge = "s".repeat(40_000);
    let server = TestServer::start(vec![
        text_reply("One."),
        text_reply("Two."),
        text_reply(&huge),
        text_reply("never"),
    ]);
    assert_eq!(
        query(&ws, &server, MODEL, &[], &message("ALPHA", 2500)).code,
        0
    );
    assert_eq!(
        query(&ws, &server, MODEL, &[], &message("BETA", 2500)).code,
        0
    );
    let run = query(&ws, &server, MODEL, &[], &message("GAMMA", 3000));
    assert_eq!(run.code, 6, "{run:?}");
    assert_eq!(
        numbers(&run.stderr),
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         the conversation is about N tokens, over N% of the 10,000-token window of anthropic/claude-haiku-4-5: compacting turn 1\n\
         compacted turn 1 (about N tokens) into a 10,000-token summary by anthropic/claude-haiku-4-5\n\
         tokens: 10 in · 42 out · $0.0002 · context N% of 10k\n\
         error: the conversation is too large for anthropic/claude-haiku-4-5: about N tokens by jp's estimate, and the model reads at most 10,000 tokens. Ways out: a new conversation (`jp query --new`) about N; or switch to a model with a larger window (`--model`), or send old tool results as stubs (`conversation.elide_tool_results.enable = true`)\n\
         your message was not sent, and is not sent again; the conversation keeps it (`jp conversation show`, conversation <id>)\n"
    );
    std::thread::sleep(Duration::from_millis(200));
    // Turns 1 and 2, and the one summary request: nothing after it.
    assert_eq!(server.requests().len(), 3);
    let conversation = stored(&ws);
    assert_eq!(of_type(&conversation, "compaction").len(), 1);
    let rewinds = of_type(&conversation, "rewind");
    assert_eq!(rewinds.len(), 1);
    assert_eq!(rewinds[0]["reason"], "too_large");
}

/// A workspace whose model and summariser are scripts (no network).
fn scripted() -> common::Workspace {
    let ws = initialized();
    ws.write(
        "project/main.toml",
        "[[responses]]\nparts = [{ text = \"Done.\" }]\n",
    );
    ws.write(
        "project/summary.toml",
        "[[responses]]\nparts = [{ text = \"The user said hello twice.\" }]\n",
    );
    add_config(
        &ws,
        "[conversation.compaction]\nmodel = \"scripted/summary.toml\"\n",
    );
    for message in ["hello", "hello again"] {
        let run = ws.jp_with_env(&["query", message], MAIN);
        assert_eq!(run.code, 0, "{run:?}");
    }
    ws
}

const MAIN: &[(&str, &str)] = &[("JP_CFG_ASSISTANT__MODEL__ID", "scripted/main.toml")];

#[test]
fn a_configured_summariser_compacts_offline() {
    let ws = scripted();
    let run = ws.jp_with_env(&["conversation", "compact", "--keep", "1"], MAIN);
    assert_eq!(
        hide_ids(&run.stdout),
        "compacted turn 1 (about 3 tokens) into a 7-token summary by scripted/summary.toml\n",
        "{run:?}"
    );
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    let compactions = of_type(&stored(&ws), "compaction");
    assert_eq!(compactions.len(), 1);
    assert_eq!(compactions[0]["summary"], "The user said hello twice.");
    assert_eq!(compactions[0]["model"], "scripted/summary.toml");
    // Nothing older is left to summarise.
    let again = ws.jp_with_env(&["conversation", "compact", "--keep", "1"], MAIN);
    assert_eq!(
        hide_ids(&again.stdout),
        "nothing to compact in conversation <id>: 1 turn is sent whole, and the last turn is kept whole (`--keep`)\n"
    );
    assert_eq!(again.code, 0);
    // With the default of two turns kept, there was nothing to begin with.
    let ws = scripted();
    let run = ws.jp_with_env(&["conversation", "compact"], MAIN);
    assert_eq!(
        hide_ids(&run.stdout),
        "nothing to compact in conversation <id>: 2 turns are sent whole, and the last 2 turns are kept whole (`--keep`)\n"
    );
    assert!(of_type(&stored(&ws), "compaction").is_empty());
}

/// An editor that writes `text` into the file it is given.
fn editor(ws: &common::Workspace, text: &str) -> String {
    let path = ws.root().join("editor.sh");
    std::fs::write(&path, format!("#!/bin/sh\nprintf '{text}' > \"$1\"\n")).unwrap();
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).unwrap();
    path.display().to_string()
}

#[test]
fn the_summary_can_be_edited_before_it_is_recorded() {
    let ws = scripted();
    let edit = editor(&ws, "Edited by hand.\\n");
    let env = [MAIN[0], ("EDITOR", edit.as_str())];
    let run = ws.jp_with_env(&["conversation", "compact", "--keep", "1", "--edit"], &env);
    assert_eq!(
        (run.code, hide_ids(&run.stdout), run.stderr.as_str()),
        (
            0,
            "compacted turn 1 (about 3 tokens) into a 4-token summary by scripted/summary.toml, edited\n".to_owned(),
            ""
        )
    );
    let compactions = of_type(&stored(&ws), "compaction");
    assert_eq!(compactions[0]["summary"], "Edited by hand.");
    assert_eq!(compactions[0]["edited"], true);
    // An empty summary records none.
    let ws = scripted();
    let edit = editor(&ws, "");
    let env = [MAIN[0], ("EDITOR", edit.as_str())];
    let run = ws.jp_with_env(&["conversation", "compact", "--keep", "1", "--edit"], &env);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            2,
            "",
            "cancelled: the summary is empty, so no compaction was recorded\n"
        )
    );
    assert!(of_type(&stored(&ws), "compaction").is_empty());
}

#[test]
fn a_refusal_names_the_ways_out_that_fit_and_compacting_is_one() {
    let ws = small_window();
    add_config(
        &ws,
        "[conversation.compaction]\nauto = false\nmax_tokens = 1000\n",
    );
    let server = TestServer::start(vec![
        text_reply("One."),
        text_reply("Two."),
        text_reply("Three."),
        text_reply("Turns 1: ALPHA."),
        text_reply("Four."),
    ]);
    for word in ["ALPHA", "BETA", "GAMMA"] {
        assert_eq!(
            query(&ws, &server, MODEL, &[], &message(word, 2500)).code,
            0
        );
    }
    let last = message("DELTA", 1500);
    let run = query(&ws, &server, MODEL, &[], &last);
    assert_eq!(run.code, 6, "{run:?}");
    assert_eq!(
        numbers(&run.stderr),
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         error: the conversation is too large for anthropic/claude-haiku-4-5: about N tokens by jp's estimate, and the model reads at most 10,000 tokens. Ways out: `jp conversation compact` (which summarises turn 1 in at most 1,000 tokens) would make it about N; `jp conversation rewind 1` (which takes back the last turn and puts back the files it changed) about N; a new conversation (`jp query --new`) about N; or switch to a model with a larger window (`--model`), or send old tool results as stubs (`conversation.elide_tool_results.enable = true`)\n\
         your message was not sent, and is not sent again; the conversation keeps it (`jp conversation show`, conversation <id>)\n"
    );
    // Compacting keeps the two turns before the refused one.
    let run = compact(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("compacted turn 1 (about "),
        "{}",
        run.stdout
    );
    // The message sent again now fits.
    let run = query(&ws, &server, MODEL, &[], &last);
    assert_eq!(run.code, 0, "{run:?}");
    let sent = server.wait_for(5, Duration::from_secs(5));
    let texts = texts(&sent[4].json());
    assert_eq!(
        texts.len(),
        5,
        "the summary with turn 2, turn 3, and the message"
    );
    assert!(texts[0].contains("Turns 1: ALPHA.\n[end of summary]\n\nBETA "));
    assert!(texts[4].starts_with("DELTA "));
}

#[test]
fn compaction_settings_out_of_range_are_config_errors() {
    let ws = initialized();
    let line = ws.read("project/.jp/config.toml").lines().count() + 3;
    add_config(
        &ws,
        "[conversation.compaction]\nat = 1.5\nkeep_turns = 0\nmodel = \"nowhere\"\n",
    );
    let run = ws.jp(&["config", "validate"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "error: .jp/config.toml:{}: conversation.compaction.model: `nowhere` is neither `provider/name` nor an alias (aliases: haiku, sonnet, opus)\n\
             error: .jp/config.toml:{line}: conversation.compaction.at: must be more than 0 and at most 1 (a share of the model's context window), found 1.5\n\
             error: .jp/config.toml:{}: conversation.compaction.keep_turns: must be at least 1 (the current turn is always sent whole)\n",
            line + 2,
            line + 1
        )
    );
}

/// A turn refused at a later request (the model had answered in it, so it
/// is not taken back) names the ways out that fit: the turn itself can be
/// rewound (found in review: the user was left with none).
#[test]
fn a_refusal_later_in_a_turn_names_rewinding_that_turn() {
    let ws = small_window();
    add_config(
        &ws,
        "[conversation.compaction]\nauto = false\nmax_tokens = 1000\n",
    );
    ws.write("project/big.txt", &"x".repeat(24_000));
    let server = TestServer::start(vec![
        text_reply("One."),
        text_reply("Two."),
        text_reply("Three."),
        common::providers::tool_reply("toolu_1", "fs_read_file", r#"{"path": "big.txt"}"#),
        text_reply("Fine."),
    ]);
    for word in ["ALPHA", "BETA", "GAMMA"] {
        assert_eq!(
            query(&ws, &server, MODEL, &[], &message(word, 1500)).code,
            0
        );
    }
    let run = query(&ws, &server, MODEL, &[], "read big.txt");
    assert_eq!(run.code, 6, "{run:?}");
    let said = numbers(&run.stderr);
    assert!(
        said.contains(
            "`jp conversation rewind 1` (which takes back the last turn and puts back the files it changed) about N; a new conversation (`jp query --new`) about N;"
        ),
        "{said}"
    );
    // Taking the turn back works, and the next query fits.
    let rewind = ws.jp(&["conversation", "rewind", "--yes"]);
    assert_eq!(rewind.code, 0, "{rewind:?}");
    let run = query(&ws, &server, MODEL, &[], "short");
    assert_eq!(run.code, 0, "{run:?}");
    let sent = server.wait_for(5, Duration::from_secs(5));
    let texts = texts(&sent[4].json());
    assert!(
        !texts.iter().any(|text| text.contains("read big.txt")),
        "{texts:?}"
    );
}
