//! Hooks through the real `jp`: a `before_tool` hook that exits 2
//! declines the call with its stderr as the reason the model reads, one
//! that fails declines it and is reported, and an `after_tool` hook's
//! output is added to the result as a note.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::providers::{Item, anthropic, text_reply};
use common::query::{echo_tool, initialized, query, responses, stored};
use jp_test_server::{Reply, TestServer};
use serde_json::Value;

fn one_call() -> TestServer {
    TestServer::start(vec![
        Reply::sse(anthropic(
            &[Item::Tool("toolu_1", "list_items", r#"{"filter": "all"}"#)],
            "tool_use",
            false,
        )),
        text_reply("Done."),
    ])
}

/// `hooks.toml` with `toml`, and the echo tool, as the query's config.
fn run_with(toml: &str) -> (common::Workspace, TestServer, common::Run) {
    let ws = initialized();
    ws.write(
        "project/.jp/hooks.toml",
        &format!(
            "{}[conversation.tools.list_items.parameters]\nfilter = {{ type = \"string\" }}\n\n{toml}",
            echo_tool("list_items", "three items")
        ),
    );
    let server = one_call();
    let run = query(
        &ws,
        &server,
        "anthropic/claude-haiku-4-5",
        &["--cfg", "@.jp/hooks.toml"],
        "list them",
    );
    (ws, server, run)
}

/// What the second request sent as the call's result.
fn sent_result(server: &TestServer) -> Value {
    let requests = server.wait_for(2, Duration::from_secs(5));
    requests[1].json()["messages"][2]["content"][0]["content"].clone()
}

#[test]
fn a_before_hook_that_exits_2_declines_the_call_with_its_reason() {
    let (ws, server, run) = run_with(
        "[[hooks.before_tool]]\n\
         command = [\"sh\", \"-c\", \"cat > hook-input.json; echo 'listing is frozen today' >&2; exit 2\"]\n\
         tools = [\"list_*\"]\n",
    );
    assert_eq!(run.code, 5, "{run:?}");
    assert!(
        run.stderr
            .contains("  list_items: declined by the hook `sh -c cat > hook-input.json; echo 'listing is frozen today' >&2; exit 2`: listing is frozen today\n"),
        "{}",
        run.stderr
    );
    assert_eq!(
        sent_result(&server),
        "The call was not run: a hook declined it: listing is frozen today"
    );
    let input: Value = serde_json::from_str(&ws.read("project/hook-input.json")).unwrap();
    assert_eq!(
        input,
        serde_json::json!({"hook": "before_tool", "id": "toolu_1", "tool": "list_items", "arguments": {"filter": "all"}})
    );
    assert_eq!(responses(&stored(&ws))[0].0, "declined");
}

#[test]
fn a_before_hook_that_fails_declines_the_call_and_is_reported() {
    let (_ws, server, run) =
        run_with("[[hooks.before_tool]]\ncommand = [\"sh\", \"-c\", \"echo oops >&2; exit 1\"]\n");
    assert_eq!(run.code, 5, "{run:?}");
    assert!(
        run.stderr.contains(
            "  list_items: declined: the hook `sh -c echo oops >&2; exit 1` failed (it exited with 1): oops; only exit 0 lets a call run, and exit 2 declines it\n"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(
        sent_result(&server),
        "The call was not run: a hook declined it: a hook that checks calls failed, so the call was not run"
    );
}

#[test]
fn an_after_hook_adds_a_note_to_the_result_and_a_passing_before_hook_changes_nothing() {
    let (_ws, server, run) = run_with(
        "[[hooks.before_tool]]\ncommand = [\"true\"]\n\n\
         [[hooks.after_tool]]\n\
         command = [\"sh\", \"-c\", \"grep -q '\\\"content\\\":\\\"three items' && echo 'lint: 0 problems'\"]\n\n\
         [[hooks.after_tool]]\ncommand = [\"sh\", \"-c\", \"exit 3\"]\ntools = [\"other\"]\n",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        sent_result(&server),
        "three items\n\nNote from a hook: lint: 0 problems"
    );
}

/// A workspace's hooks are held until the user trusts them: they would run
/// programs and decide calls. (The tests' runs set JP_TRUST_WORKSPACE=1,
/// which `--status` says it overrides.)
#[test]
fn a_workspace_s_hooks_are_held_by_trust() {
    let ws = initialized();
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{}\n[[hooks.before_tool]]\ncommand = [\"sh\", \"-c\", \"exit 2\"]\n",
            ws.read("project/.jp/config.toml")
        ),
    );
    let run = ws.jp(&["trust", "--status"]);
    assert_eq!(
        run.stdout,
        "this workspace's config changed since you trusted it; until you trust it again, jp leaves out what it would run or decide:\n  \
         added    .jp/config.toml: hooks.before_tool\n\
         `jp trust` applies them\n\
         JP_TRUST_WORKSPACE=1: trusted in full for this run\n",
        "{run:?}"
    );
}
