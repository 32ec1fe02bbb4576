//! `jp policy replay` through the real binary (issue 41): a conversation
//! made offline with the scripted provider, its calls decided again under
//! a stricter and a looser policy (the whole output and the exit code), a
//! stateful policy that judges each call by what ran before it, and the
//! usage errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Workspace;
use common::providers::{text_reply, tool_reply};
use common::query::{initialized, query_command};
use serde_json::json;

/// Turn 1 reads a file and creates one under `src/` (both unattended by
/// the default policies); turn 2 creates one outside `src/` and changes
/// one (both asked, so declined without a terminal: each in a response
/// of its own, as a decline stops the stream it is in).
const TURN_1: &str = r#"
[[responses]]
parts = [
  { tool = "fs_read_file", id = "read_1", arguments = { path = "notes.txt" } },
  { tool = "fs_create_file", id = "create_1", arguments = { path = "src/a.rs", content = "a" } },
]

[[responses]]
parts = [{ text = "Done." }]
"#;

const TURN_2: &str = r#"
[[responses]]
parts = [{ tool = "fs_create_file", id = "create_2", arguments = { path = "docs/b.md", content = "b" } }]

[[responses]]
parts = [{ tool = "fs_modify_file", id = "modify_1", arguments = { path = "notes.txt", patterns = [{ old = "draft", new = "final" }] } }]

[[responses]]
parts = [{ text = "Done." }]
"#;

fn model(script: &str) -> [(&'static str, String); 1] {
    [("JP_CFG_ASSISTANT__MODEL__ID", format!("scripted/{script}"))]
}

/// `jp query MESSAGE` with `script`; it exits with `code` (5: a policy
/// declined a call with no terminal to ask on).
fn query(ws: &Workspace, script: &str, message: &str, code: u8) {
    let [(key, value)] = model(script);
    let run = ws.jp_with_env(&["query", message], &[(key, value.as_str())]);
    assert_eq!(run.code, i32::from(code), "{run:?}");
}

/// A workspace from `jp init` with one conversation of two turns.
fn conversation() -> Workspace {
    let ws = initialized();
    ws.write("project/notes.txt", "draft\n");
    ws.write("project/turn1.toml", TURN_1);
    ws.write("project/turn2.toml", TURN_2);
    query(&ws, "turn1.toml", "start", 0);
    query(&ws, "turn2.toml", "go on", 5);
    ws
}

#[test]
fn a_stricter_policy_lists_the_calls_it_makes_stricter_and_exits_0() {
    let ws = conversation();
    let run = ws.jp(&[
        "policy",
        "replay",
        "--cfg",
        "conversation.tools.fs_create_file.policy.run=ask",
    ]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            0,
            "turn 1 · call create_1 fs_create_file(path: \"src/a.rs\", content: \"a\") : unattended → ask (policy.run is \"ask\")\n\
             4 calls re-decided: 1 stricter, 0 less strict, 3 unchanged\n",
            ""
        ),
        "{run:?}"
    );
}

#[test]
fn a_looser_policy_exits_1_and_json_gives_every_call_both_ways() {
    let ws = conversation();
    ws.write(
        "project/looser.toml",
        "[conversation.tools.fs_modify_file.policy]\nrun = \"unattended\"\n\n\
         [conversation.tools.fs_read_file.policy]\nrun = \"skip\"\n",
    );
    let run = ws.jp(&["policy", "replay", "last", "--cfg", "@looser.toml"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            1,
            "turn 1 · call read_1 fs_read_file(path: \"notes.txt\") : unattended → skip (skipped (policy.run is \"skip\"))\n\
             turn 2 · call modify_1 fs_modify_file() : ask → unattended (policy.run is \"unattended\")\n\
             4 calls re-decided: 1 stricter, 1 less strict, 2 unchanged\n",
            ""
        ),
        "{run:?}"
    );

    let run = ws.jp(&[
        "policy",
        "replay",
        "--cfg",
        "@looser.toml",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let mut out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(out["conversation"].as_str().unwrap().len() > 5, "{out}");
    out["conversation"] = json!("ID");
    assert_eq!(
        out,
        json!({
            "conversation": "ID",
            "calls": [
                {
                    "turn": 1, "id": "read_1", "tool": "fs_read_file",
                    "arguments": { "path": "notes.txt" },
                    "now": { "decision": "unattended", "reason": "policy.run[5] (catch-all) matched" },
                    "with_change": { "decision": "skip", "reason": "skipped (policy.run is \"skip\")" },
                    "change": "stricter"
                },
                {
                    "turn": 1, "id": "create_1", "tool": "fs_create_file",
                    "arguments": { "path": "src/a.rs", "content": "a" },
                    "now": { "decision": "unattended", "reason": "policy.run[2] (prefix \"src/\" on /path) matched: \"src/a.rs\" is under src/" },
                    "with_change": { "decision": "unattended", "reason": "policy.run[2] (prefix \"src/\" on /path) matched: \"src/a.rs\" is under src/" },
                    "change": "unchanged"
                },
                {
                    "turn": 2, "id": "create_2", "tool": "fs_create_file",
                    "arguments": { "path": "docs/b.md" },
                    "now": { "decision": "ask", "reason": "policy.run[3] (catch-all) matched" },
                    "with_change": { "decision": "ask", "reason": "policy.run[3] (catch-all) matched" },
                    "change": "unchanged"
                },
                {
                    "turn": 2, "id": "modify_1", "tool": "fs_modify_file",
                    "arguments": {},
                    "now": { "decision": "ask", "reason": "policy.run is \"ask\"" },
                    "with_change": { "decision": "unattended", "reason": "policy.run is \"unattended\"" },
                    "change": "less_strict"
                }
            ],
            "summary": { "calls": 4, "stricter": 1, "less_strict": 1, "as_strict": 0, "cannot_tell": 0, "unchanged": 2 }
        })
    );
}

/// A call jp stopped early was decided on the arguments that had arrived:
/// when, under the change, they no longer decide it, what it would come to
/// cannot be told, and the gate fails closed.
#[test]
fn a_call_cut_short_that_its_arguments_no_longer_decide_cannot_be_told_and_exits_1() {
    let ws = conversation();
    ws.write(
        "project/content.toml",
        "[conversation.tools.fs_create_file.policy]\n\
         run = [{ arg = \"/content\", pattern = \"TODO\", mode = \"ask\" }, { mode = \"unattended\" }]\n",
    );
    let run = ws.jp(&["policy", "replay", "--cfg", "@content.toml"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            1,
            "turn 2 · call create_2 fs_create_file(path: \"docs/b.md\") : ask → undecided (its arguments were cut short (jp stopped the stream) before they decided it)\n\
             4 calls re-decided: 0 stricter, 0 less strict, 1 cannot be told (arguments cut short), 3 unchanged\n",
            ""
        ),
        "{run:?}"
    );
}

/// `read_before_write` added by the change: the first change of
/// notes.txt, made before the file was read, would be declined; the second,
/// after the read, still runs: each call is judged by what ran before it.
#[test]
fn a_stateful_policy_judges_each_call_by_the_calls_before_it() {
    let ws = initialized();
    ws.write("project/notes.txt", "draft\n");
    ws.write(
        "project/work.toml",
        r#"
[[responses]]
parts = [
  { tool = "fs_modify_file", id = "modify_1", arguments = { path = "notes.txt", patterns = [{ old = "draft", new = "second" }] } },
  { tool = "fs_read_file", id = "read_1", arguments = { path = "notes.txt" } },
  { tool = "fs_modify_file", id = "modify_2", arguments = { path = "notes.txt", patterns = [{ old = "second", new = "final" }] } },
]

[[responses]]
parts = [{ text = "Done." }]
"#,
    );
    let config = ws.read("project/.jp/config.toml");
    let asks = "[conversation.tools.fs_modify_file.policy]\nrun = \"ask\"\n";
    assert!(config.contains(asks));
    ws.write(
        "project/.jp/config.toml",
        &config.replace(asks, &asks.replace("ask", "unattended")),
    );
    query(&ws, "work.toml", "edit the notes", 0);
    assert_eq!(ws.read("project/notes.txt"), "final\n");
    ws.write(
        "project/read-first.toml",
        "[[conversation.policies]]\nkind = \"read_before_write\"\n\
         read_tools = [\"fs_read_file\"]\nwrite_tools = [\"fs_modify_file\"]\n",
    );
    let run = ws.jp(&["policy", "replay", "--cfg", "@read-first.toml"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            0,
            "turn 1 · call modify_1 fs_modify_file(path: \"notes.txt\", patterns: [{\"old\":\"draft\",\"new\":\"second\"}]) : unattended → declined (denied by read_before_write: `notes.txt` already exists and has not been read in this conversation; read it with `fs_read_file` first, then call `fs_modify_file` again.)\n\
             3 calls re-decided: 1 stricter, 0 less strict, 2 unchanged\n",
            ""
        ),
        "{run:?}"
    );
}

/// A call of an MCP tool a wildcard entry offers: the server is started to
/// learn its tools (none is called), so the entry's policy decides it.
#[test]
fn a_call_of_an_mcp_tool_is_decided_by_its_servers_entry() {
    let ws = common::mcp::workspace(
        "",
        "[conversation.tools.'test.*']\nsource = \"mcp.test\"\npolicy.run = \"unattended\"\n",
    );
    let server = jp_test_server::TestServer::start(vec![
        tool_reply("toolu_1", "echo", r#"{"text": "hi"}"#),
        text_reply("Done."),
    ]);
    let output = query_command(&ws, &server, "anthropic/claude-haiku-4-5", &[], "echo")
        .output()
        .unwrap();
    let run = ws.run_of(output);
    assert_eq!(run.code, 0, "{run:?}");
    ws.write(
        "project/ask.toml",
        "[conversation.tools.'test.*']\npolicy.run = \"ask\"\n",
    );
    let run = ws.jp(&["policy", "replay", "--cfg", "@ask.toml"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (
            0,
            "turn 1 · call toolu_1 echo(text: \"hi\") : unattended → ask (policy.run is \"ask\")\n\
             1 call re-decided: 1 stricter, 0 less strict, 0 unchanged\n",
        ),
        "{run:?}"
    );
    common::mcp::assert_gone(&ws);
}

#[test]
fn usage_errors_exit_2_and_say_what() {
    let fresh = initialized();
    let run = fresh.jp(&["policy", "replay", "--cfg", "style.color=never"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            2,
            "",
            "error: no active conversation (`jp conversation use ID` picks one; `jp query` starts one)\n"
        )
    );
    let ws = conversation();
    let run = ws.jp(&["policy", "replay"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            2,
            "",
            "error: give the change to replay under with --cfg (`--cfg @new.toml` or `--cfg KEY=VALUE`)\n"
        )
    );
    let run = ws.jp(&["policy", "replay", "999", "--cfg", "style.color=never"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            2,
            "",
            "error: no conversation `999` (see `jp conversation ls`)\n"
        )
    );
    let run = ws.jp(&["policy", "replay", "--cfg", "@missing.toml"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            2,
            "",
            "error: --cfg @missing.toml: no such file: <tmp>/project/missing.toml\n"
        )
    );
    let run = ws.jp(&[
        "policy",
        "replay",
        "--cfg",
        "conversation.tools.fs_read_file.policy.run=bogus",
    ]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            2,
            "",
            "error: --cfg conversation.tools.fs_read_file.policy.run=bogus: conversation.tools.fs_read_file.policy.run: unknown mode `bogus`, expected `unattended`, `ask`, `edit` or `skip`\n"
        )
    );
}
