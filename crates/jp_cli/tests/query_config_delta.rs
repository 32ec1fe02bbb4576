//! Tools that change jp's config (RFD 078) through the real `jp` binary,
//! a real tool process and the recording test server: a granted change
//! applies between the cycles of one turn (the very next request uses it)
//! and stays with the conversation; a change the grants do not allow
//! reruns the tool with the reason, at most three times, and then the
//! model gets an error while the config stays as it was; a change that
//! needs confirmation is rejected without a terminal.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::providers::{Item, anthropic, text_reply as text, tool_reply as tool};
use common::query::{ENV, event_types, hide_ids, initialized, responses, stored};
use common::{Run, Workspace};
use jp_test_server::{Reply, TestServer};
use serde_json::{Value, json};

/// A workspace whose model is haiku, with a local tool `change_model` that
/// saves each request it gets under `requests/` and answers `outcome`,
/// governed by `grants`.
fn workspace(outcome: &Value, grants: &str) -> Workspace {
    workspace_with("change_model", outcome, grants)
}

/// [`workspace`] with the tool named `name`.
fn workspace_with(name: &str, outcome: &Value, grants: &str) -> Workspace {
    let ws = initialized();
    std::fs::create_dir_all(ws.project().join("requests")).unwrap();
    let dir = ws.project().join("requests").display().to_string();
    let script = format!(
        "n=$(ls '{dir}' | wc -l); cat > '{dir}/'$n.json; echo '{}'",
        outcome
    );
    on_haiku(
        &ws,
        &format!(
            "[conversation.tools.{name}]\n\
             command = [\"sh\", \"-c\", {}]\n\
             summary = \"Switch to a stronger model.\"\n\
             policy.run = \"unattended\"\n\n{grants}",
            Value::String(script)
        ),
    );
    ws
}

/// Sets the workspace's model to haiku and appends `toml` to its config.
fn on_haiku(ws: &Workspace, toml: &str) {
    let config = ws.read("project/.jp/config.toml").replace(
        "id = \"anthropic/claude-sonnet-4-5\"",
        "id = \"anthropic/claude-haiku-4-5\"",
    );
    ws.write("project/.jp/config.toml", &format!("{config}\n{toml}"));
}

/// The requests the tool got, in order.
fn tool_requests(ws: &Workspace) -> Vec<Value> {
    let mut out = Vec::new();
    while let Ok(text) =
        std::fs::read_to_string(ws.project().join(format!("requests/{}.json", out.len())))
    {
        out.push(serde_json::from_str(&text).unwrap());
    }
    out
}

fn query(ws: &Workspace, server: &TestServer, extra: &[&str]) -> Run {
    let base = format!("providers.llm.anthropic.base_url={}", server.url());
    let mut args = vec!["query", "--cfg", &base];
    args.extend_from_slice(extra);
    args.push("think harder");
    ws.run_of(ws.command(&args, &ENV).output().unwrap())
}

const TO_OPUS: &str = r#"{"type":"success","content":"switched to opus","config":{"assistant":{"model":{"id":"opus"}}}}"#;

const UNATTENDED_GRANT: &str = "[[conversation.tools.change_model.access.config]]\n\
    path = \"assistant.model.id\"\n\
    read = true\n\
    write = true\n\
    apply = \"unattended\"\n";

#[test]
fn a_granted_model_switch_applies_to_the_next_request_and_stays_with_the_conversation() {
    let ws = workspace(&serde_json::from_str(TO_OPUS).unwrap(), UNATTENDED_GRANT);
    let server = TestServer::start(vec![tool("toolu_1", "change_model", "{}"), text("Done.")]);
    let run = query(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Done.\n");
    assert_eq!(
        run.stderr,
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         Calling tool change_model()\n  \
         unattended (policy.run is \"unattended\")\n\
         ⟳ config change by tool change_model, applied when this step ends:\n  \
         assistant.model.id: \"anthropic/claude-haiku-4-5\" → \"anthropic/claude-opus-5\"\n  \
         change_model success: switched to opus\n\
         config changed by change_model: assistant.model.id\n\
         ── jp (anthropic/claude-opus-5) ──\n\
         tokens: 2 responses · 20 in · 84 out · $0.0002 for 1 of 2 responses (no price for the model of the others)\n"
    );
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests[0].json()["model"], "claude-haiku-4-5");
    assert_eq!(requests[1].json()["model"], "claude-opus-5");
    // The tool read exactly its grant, as of the cycle's start.
    let got = tool_requests(&ws);
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0]["context"]["config"],
        json!({"assistant": {"model": {"id": "anthropic/claude-haiku-4-5"}}})
    );
    assert_eq!(got[0]["context"].get("delta_rejection"), None);

    let conversation = stored(&ws);
    assert_eq!(
        event_types(&conversation),
        [
            "turn_start",
            "chat_request",
            "tool_call_request",
            "usage",
            // The request file the tool wrote (for `jp conversation
            // rewind`), committed with its response and change.
            "file_change",
            "call_decision",
            "tool_call_response",
            "config_delta",
            "assistant_message",
            "usage"
        ]
    );
    let delta = &conversation["events"][7];
    assert_eq!(
        delta["delta"],
        json!({"assistant": {"model": {"id": "anthropic/claude-opus-5"}}})
    );
    assert_eq!(delta["claims"], json!({"assistant.model.id": []}));
    assert_eq!(delta["tools"], json!(["change_model"]));

    // The config as the conversation's next query sees it, and why.
    let show = ws.jp(&["config", "get", "assistant.model.id"]);
    assert_eq!(show.stdout, "anthropic/claude-opus-5\n");
    let show = ws.jp(&["config", "show"]);
    let line = show
        .stdout
        .lines()
        .find(|l| l.starts_with("assistant.model.id"))
        .unwrap();
    assert_eq!(
        hide_ids(line),
        "assistant.model.id = \"anthropic/claude-opus-5\"  # conversation <id> (changed by tool change_model)"
    );
    let shown = ws.jp(&["conversation", "show"]);
    assert!(
        shown.stdout.contains(
            "config changed by change_model:\n  assistant.model.id = \"anthropic/claude-opus-5\"\n"
        ),
        "{}",
        shown.stdout
    );

    // The next query of the conversation uses opus from the start; a new
    // conversation does not.
    let server = TestServer::start(vec![text("Hi."), text("Hi.")]);
    assert_eq!(query(&ws, &server, &[]).code, 0);
    assert_eq!(query(&ws, &server, &["--new"]).code, 0);
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests[0].json()["model"], "claude-opus-5");
    assert_eq!(requests[1].json()["model"], "claude-haiku-4-5");
}

/// A change is checked against the config as the query built it, which
/// holds the MCP servers' schemas (issue 37): they do not make it refuse.
#[test]
fn a_change_applies_while_mcp_tools_with_schemas_are_offered() {
    let ws = workspace(&serde_json::from_str(TO_OPUS).unwrap(), UNATTENDED_GRANT);
    let config = ws.read("project/.jp/config.toml");
    let command = Value::String(common::mcp::server_binary().display().to_string());
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n[providers.mcp.test]\ncommand = [{command}]\nenv = {{ JP_MCP_TEST_SCHEMAS = \"1\" }}\n\n\
             [conversation.tools.'test.*']\nsource = \"mcp.test\"\npolicy.run = \"ask\"\n"
        ),
    );
    let server = TestServer::start(vec![tool("toolu_1", "change_model", "{}"), text("Done.")]);
    let run = query(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("config changed by change_model: assistant.model.id\n── jp (anthropic/claude-opus-5) ──\n"),
        "{}",
        run.stderr
    );
    // The tool jp cannot use is said once, not again when the change
    // makes the query take the servers' tools in again.
    assert_eq!(
        run.stderr.matches("tool remote is not offered").count(),
        1,
        "{}",
        run.stderr
    );
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests[1].json()["model"], "claude-opus-5");
    let offered = requests[1].json()["tools"].as_array().unwrap().len();
    assert!(offered > 10, "{offered} tools offered after the change");
}

#[test]
fn an_unauthorized_change_reruns_the_tool_three_times_then_the_model_gets_an_error() {
    let grant = "[[conversation.tools.change_model.access.config]]\n\
        path = \"assistant.model.parameters\"\n\
        write = true\n\
        apply = \"unattended\"\n";
    let ws = workspace(&serde_json::from_str(TO_OPUS).unwrap(), grant);
    let server = TestServer::start(vec![tool("toolu_1", "change_model", "{}"), text("Ok.")]);
    let run = query(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let got = tool_requests(&ws);
    assert_eq!(got.len(), 4, "the first run and three reruns");
    assert_eq!(got[0]["context"].get("config"), None, "no read grant");
    for rerun in &got[1..] {
        assert_eq!(
            rerun["context"]["delta_rejection"],
            json!({
                "reason": "unauthorized_paths",
                "fields": ["assistant.model.id"],
                "detail": "the tool's access.config grants do not cover assistant.model.id: no write grant"
            })
        );
        assert_eq!(rerun["tool"], got[0]["tool"], "the same arguments");
    }
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "error".to_owned(),
            "Tool `change_model` proposed a config change jp could not apply 4 times, so the call ends here without its result. Last reason: unauthorized_paths: the tool's access.config grants do not cover assistant.model.id: no write grant".to_owned()
        )]
    );
    assert!(
        run.stderr.contains(
            "⚠ tool change_model proposed a config change it has no grant for (assistant.model.id); not applied, the tool runs again\n"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(
        "⚠ tool change_model had its config change rejected 4 times; the call ends here\n"
    ));
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests[1].json()["model"], "claude-haiku-4-5");
    assert!(!event_types(&stored(&ws)).contains(&"config_delta".to_owned()));
}

#[test]
fn a_change_that_asks_is_rejected_without_a_terminal_and_the_tool_told_why() {
    let grant = UNATTENDED_GRANT.replace("unattended", "ask");
    // This tool proposes the same change every time (the shipped
    // change_model tool shows a rerun that answers without one).
    let outcome = json!({"type": "success", "content": "switched to opus", "config": {"assistant": {"model": {"id": "opus"}}}});
    let ws = workspace(&outcome, &grant);
    let server = TestServer::start(vec![tool("toolu_1", "change_model", "{}"), text("Ok.")]);
    let run = query(&ws, &server, &["--non-interactive"]);
    assert_eq!(run.code, 0, "{run:?}");
    let got = tool_requests(&ws);
    assert_eq!(got.len(), 4);
    assert_eq!(
        got[1]["context"]["delta_rejection"]["reason"],
        "confirmation_unavailable"
    );
    assert!(run.stderr.contains(
        "⚠ tool change_model proposed a config change that needs your confirmation, and no terminal is available; not applied, the tool runs again (apply = \"unattended\" on the grant applies such changes without asking)\n"
    ), "{}", run.stderr);
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests[1].json()["model"], "claude-haiku-4-5");
}

#[test]
fn a_killed_jp_leaves_a_readable_conversation_with_no_provisional_change() {
    let ws = workspace(&serde_json::from_str(TO_OPUS).unwrap(), UNATTENDED_GRANT);
    let started = ws.project().join("slow-started");
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n[conversation.tools.slow]\ncommand = [\"sh\", \"-c\", {}]\npolicy.run = \"unattended\"\n",
            Value::String(format!("echo $$ > '{}'; exec sleep 30", started.display()))
        ),
    );
    let server = TestServer::start(vec![Reply::sse(anthropic(
        &[
            Item::Tool("toolu_1", "change_model", "{}"),
            Item::Tool("toolu_2", "slow", "{}"),
        ],
        "tool_use",
        false,
    ))]);
    let base = format!("providers.llm.anthropic.base_url={}", server.url());
    let mut jp = ws
        .command(&["query", "--cfg", &base, "switch and wait"], &ENV)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the slow tool never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The change is approved (the first call is done) but the cycle is not.
    jp.kill().unwrap();
    jp.wait().unwrap();
    // The tool dies with jp (tool_containment.rs checks that through
    // /proc); nothing to clean up here.

    // The response of the call whose change was not committed is held
    // with the change (issue 21): the model never reads "switched to opus"
    // for a switch that did not happen; a call without a response reads as
    // interrupted.
    let conversation = stored(&ws);
    assert_eq!(
        event_types(&conversation),
        [
            "turn_start",
            "chat_request",
            "tool_call_request",
            "tool_call_request",
            // The response ended before jp was killed.
            "usage"
        ]
    );
    assert_eq!(
        ws.jp(&["config", "get", "assistant.model.id"]).stdout,
        "anthropic/claude-haiku-4-5\n"
    );
}

#[test]
fn a_change_that_does_not_resolve_ends_the_turn_and_stays_in_the_conversation() {
    // Switching to OpenAI is a valid change, but this jp has no OpenAI key.
    let outcome = json!({"type": "success", "content": "switched", "config": {"assistant": {"model": {"id": "openai/gpt-5"}}}});
    let ws = workspace(&outcome, UNATTENDED_GRANT);
    let server = TestServer::start(vec![tool("toolu_1", "change_model", "{}")]);
    let base = format!("providers.llm.anthropic.base_url={}", server.url());
    let run = ws.run_of(
        ws.command(&["query", "--cfg", &base, "switch"], &[common::query::KEY])
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 1, "{run:?}");
    let last = hide_ids(run.stderr.lines().rev().nth(1).unwrap());
    assert!(
        last.starts_with("error: the config a tool changed does not resolve: ")
            && last.contains("OPENAI_API_KEY")
            && last.ends_with("the change stays in the conversation (see `jp conversation show`), and a later one (a tool, or --cfg) can correct it"),
        "{}",
        run.stderr
    );
    let conversation = stored(&ws);
    assert_eq!(event_types(&conversation).last().unwrap(), "config_delta");
    assert_eq!(
        ws.jp(&["config", "get", "assistant.model.id"]).stdout,
        "openai/gpt-5\n"
    );
}

/// A file of the shipped example tool, `examples/tools/NAME`.
fn shipped(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/tools")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A workspace whose model is haiku, with the shipped `change_model` tool
/// installed as its config snippet says, and `apply` as given.
fn with_shipped_change_model(apply: &str) -> Workspace {
    let ws = initialized();
    ws.write(
        "project/.jp/tools/change_model.sh",
        &shipped("change_model.sh"),
    );
    let snippet = shipped("change_model.toml");
    assert!(
        snippet.contains("apply = \"ask\"\n"),
        "the shipped grant asks"
    );
    on_haiku(
        &ws,
        &snippet.replace("apply = \"ask\"", &format!("apply = \"{apply}\"")),
    );
    ws
}

#[test]
fn the_shipped_change_model_tool_switches_the_model_for_the_next_request() {
    let ws = with_shipped_change_model("unattended");
    let server = TestServer::start(vec![
        tool("toolu_1", "change_model", r#"{"model":"opus"}"#),
        text("Done."),
    ]);
    let run = query(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         Calling tool change_model(model: \"opus\")\n  \
         unattended (policy.run is \"unattended\")\n\
         ⟳ config change by tool change_model, applied when this step ends:\n  \
         assistant.model.id: \"anthropic/claude-haiku-4-5\" → \"anthropic/claude-opus-5\"\n  \
         change_model success: Switched from anthropic/claude-haiku-4-5 to opus.\n\
         config changed by change_model: assistant.model.id\n\
         ── jp (anthropic/claude-opus-5) ──\n\
         tokens: 2 responses · 20 in · 84 out · $0.0002 for 1 of 2 responses (no price for the model of the others)\n"
    );
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests[0].json()["model"], "claude-haiku-4-5");
    assert_eq!(requests[1].json()["model"], "claude-opus-5");
    let conversation = stored(&ws);
    assert_eq!(
        responses(&conversation),
        [(
            "success".to_owned(),
            "Switched from anthropic/claude-haiku-4-5 to opus.".to_owned()
        )]
    );
    assert_eq!(
        conversation["events"][6]["delta"],
        json!({"assistant": {"model": {"id": "anthropic/claude-opus-5"}}})
    );
}

#[test]
fn the_shipped_change_model_tool_answers_a_rejection_without_a_change() {
    // As shipped (apply = "ask"), without a terminal: the rerun tells the
    // model the switch did not happen, and nothing changes.
    let ws = with_shipped_change_model("ask");
    let server = TestServer::start(vec![
        tool("toolu_1", "change_model", r#"{"model":"opus"}"#),
        text("Ok."),
    ]);
    let run = query(&ws, &server, &["--non-interactive"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        "── jp (anthropic/claude-haiku-4-5) ──\n\
         Calling tool change_model(model: \"opus\")\n  \
         unattended (policy.run is \"unattended\")\n\
         ⚠ tool change_model proposed a config change that needs your confirmation, and no terminal is available; not applied, the tool runs again (apply = \"unattended\" on the grant applies such changes without asking)\n  \
         change_model success: The model was not switched to opus: the switch needs confirmation from the user, and no one could be asked. Carry on with the current model.\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n"
    );
    let conversation = stored(&ws);
    assert_eq!(
        responses(&conversation),
        [(
            "success".to_owned(),
            "The model was not switched to opus: the switch needs confirmation from the user, and no one could be asked. Carry on with the current model.".to_owned()
        )]
    );
    assert!(!event_types(&conversation).contains(&"config_delta".to_owned()));
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests[1].json()["model"], "claude-haiku-4-5");

    // A model jp does not know is invalid config; the rerun says so.
    let ws = with_shipped_change_model("unattended");
    let server = TestServer::start(vec![
        tool("toolu_1", "change_model", r#"{"model":"bogus"}"#),
        text("Ok."),
    ]);
    let run = query(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "success".to_owned(),
            "The model was not switched to bogus: `bogus` is not a model jp knows (neither an alias nor provider/name). Carry on with the current model.".to_owned()
        )]
    );
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests[1].json()["model"], "claude-haiku-4-5");
}

#[test]
fn the_tool_protocol_page_shows_the_shipped_change_model_tool() {
    // docs/tool-protocol.md runs the tool from its own copy; it must be the
    // shipped one, word for word.
    let page = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tool-protocol.md"),
    )
    .unwrap();
    let block = |opening: &str| {
        let start = page
            .find(opening)
            .unwrap_or_else(|| panic!("no {opening} in docs/tool-protocol.md"))
            + opening.len();
        let end = page[start..].find("```\n").unwrap();
        page[start..start + end].to_owned()
    };
    assert_eq!(
        block("```sh file=.jp/tools/change_model.sh\n"),
        shipped("change_model.sh")
    );
    assert_eq!(
        block("```toml file=.jp/tools/change_model.toml\n"),
        shipped("change_model.toml")
    );
}

#[test]
fn a_change_applies_over_the_model_flag_of_its_query() {
    // `--model` is recorded as the user's change when the turn begins
    // (issue 21, item 4), so the tool's change later in the turn applies
    // over it: the next request of this very query uses opus.
    let ws = workspace(&serde_json::from_str(TO_OPUS).unwrap(), UNATTENDED_GRANT);
    let server = TestServer::start(vec![tool("toolu_1", "change_model", "{}"), text("Done.")]);
    let run = query(&ws, &server, &["--model", "haiku"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(
            "config changed by change_model: assistant.model.id\n\
             ── jp (anthropic/claude-opus-5) ──\n"
        ),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("note:"), "{}", run.stderr);
    let requests = server.wait_for(2, Duration::from_secs(5));
    assert_eq!(requests[1].json()["model"], "claude-opus-5");
    assert_eq!(
        ws.jp(&["config", "get", "assistant.model.id"]).stdout,
        "anthropic/claude-opus-5\n"
    );
}

/// The paths of the bypass in issue 21 (item 2): the stateful policies, a
/// tool's policy, and the `enable` that keeps a tool off.
const SENSITIVE_UNSETS: [&str; 3] = [
    "conversation.policies",
    "conversation.tools.fs_modify_file.policy",
    "conversation.tools.fs_delete_file.enable",
];

/// A workspace with a stateful policy and fs_delete_file off, and a tool
/// `tidy` that removes both and fs_modify_file's policy, under a grant on
/// `conversation` whose `delete` is `delete`.
fn tidy_workspace(delete: &str) -> Workspace {
    let outcome = json!({"type": "success", "content": "tidied", "unset": SENSITIVE_UNSETS});
    let grant = format!(
        "[[conversation.tools.tidy.access.config]]\n\
         path = \"conversation\"\n\
         write = true\n\
         delete = {delete}\n\
         apply = \"unattended\"\n\n\
         [[conversation.policies]]\n\
         kind = \"read_before_write\"\n\
         read_tools = [\"fs_read_file\"]\n\
         write_tools = [\"fs_modify_file\"]\n"
    );
    let ws = workspace_with("tidy", &outcome, &grant);
    let config = ws.read("project/.jp/config.toml").replace(
        "[conversation.tools.fs_delete_file]\n",
        "[conversation.tools.fs_delete_file]\nenable = false\n",
    );
    ws.write("project/.jp/config.toml", &config);
    ws
}

#[test]
fn removing_sensitive_config_needs_insecure_allow_and_the_policies_stay_in_force() {
    // `delete = true` on `conversation` loads: it stops short of the
    // sensitive paths below it.
    let ws = tidy_workspace("true");
    assert_eq!(
        ws.jp(&["config", "validate"]).stdout,
        "config is valid (default, .jp/config.toml)\n"
    );
    let server = TestServer::start(vec![tool("toolu_1", "tidy", "{}"), text("Ok.")]);
    let run = query(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let detail = "the tool's access.config grants do not cover \
        conversation.policies: a sensitive path (conversation.policies), which delete = true does not reach; that needs delete = \"insecure_allow\"; \
        conversation.tools.fs_modify_file.policy: a sensitive path (conversation.tools.*.policy), which delete = true does not reach; that needs delete = \"insecure_allow\"; \
        conversation.tools.fs_delete_file.enable: a sensitive path (conversation.tools.*.enable), which delete = true does not reach; that needs delete = \"insecure_allow\"";
    let warning = "⚠ tool tidy proposed a config change it has no grant for (conversation.policies, conversation.tools.fs_modify_file.policy, conversation.tools.fs_delete_file.enable); not applied, the tool runs again\n";
    assert_eq!(
        run.stderr,
        format!(
            "── jp (anthropic/claude-haiku-4-5) ──\n\
             Calling tool tidy()\n  \
             unattended (policy.run is \"unattended\")\n\
             {warning}{warning}{warning}{warning}\
             ⚠ tool tidy had its config change rejected 4 times; the call ends here\n  \
             tidy error: Tool `tidy` proposed a config change jp could not apply 4 times, so the call ends here without its result. Last reason: unauthorized_paths: the tool's access.config grants do not cover conversation.p…\n\
             ── jp (anthropic/claude-haiku-4-5) ──\n\
             tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n"
        )
    );
    let conversation = stored(&ws);
    assert_eq!(
        responses(&conversation),
        [(
            "error".to_owned(),
            format!(
                "Tool `tidy` proposed a config change jp could not apply 4 times, so the call ends here without its result. Last reason: unauthorized_paths: {detail}"
            )
        )]
    );
    // The tool was told why, each time.
    let got = tool_requests(&ws);
    assert_eq!(got.len(), 4);
    for rerun in &got[1..] {
        assert_eq!(
            rerun["context"]["delta_rejection"],
            json!({"reason": "unauthorized_paths", "fields": SENSITIVE_UNSETS, "detail": detail})
        );
    }
    assert!(!event_types(&conversation).contains(&"config_delta".to_owned()));

    // Everything the tool meant to remove is still in force for the
    // conversation's next query.
    assert_eq!(
        ws.jp(&["config", "get", "conversation.tools.fs_delete_file.enable"])
            .stdout,
        "false\n"
    );
    assert_eq!(
        ws.jp(&[
            "config",
            "get",
            "conversation.tools.fs_modify_file.policy.run"
        ])
        .stdout,
        "ask\n"
    );
    assert_eq!(
        ws.jp(&["config", "get", "conversation.policies"]).stdout,
        "[\n  {\n    \"kind\": \"read_before_write\",\n    \"read_tools\": [\n      \"fs_read_file\"\n    ],\n    \"write_tools\": [\n      \"fs_modify_file\"\n    ]\n  }\n]\n"
    );
    // The stateful policy still stands between fs_modify_file and a file
    // the conversation has not read.
    ws.write("project/src/lib.rs", "fn main() {}\n");
    let check = ws.jp(&[
        "policy",
        "check",
        "fs_modify_file",
        "--args",
        r#"{"path": "src/lib.rs", "patterns": []}"#,
    ]);
    assert_eq!((check.code, check.stderr.as_str()), (0, ""));
    assert_eq!(
        hide_ids(&check.stdout),
        "fs_modify_file policy.run: ask\n  \
         policy.run[0] catch-all: matches\n  \
         while streaming: decided as the call starts\n  \
         policy: conversation.tools.fs_modify_file.policy.run (.jp/config.toml)\n  \
         stateful policies: read_before_write denies fs_modify_file in conversation <id>: `src/lib.rs` already exists and has not been read in this conversation; read it with `fs_read_file` first, then call `fs_modify_file` again.\n"
    );

    // Acknowledged with "insecure_allow", the same removal is applied, as
    // the grant says: that is what the acknowledgment is for.
    let ws = tidy_workspace("\"insecure_allow\"");
    let server = TestServer::start(vec![tool("toolu_1", "tidy", "{}"), text("Ok.")]);
    let run = query(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(tool_requests(&ws).len(), 1);
    let stored = stored(&ws);
    let change = stored["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|event| event["type"] == "config_delta")
        .unwrap();
    assert_eq!(change["unsets"], json!(SENSITIVE_UNSETS));
    assert_eq!(
        ws.jp(&["config", "get", "conversation.tools.fs_delete_file.enable"])
            .stdout,
        "true\n"
    );
}

#[test]
fn a_change_the_config_would_not_load_with_is_rejected_and_the_tool_told_why() {
    // Even a grant that acknowledges the sensitive path cannot leave a
    // tool jp cannot run: fs_read_file without its command.
    let outcome = json!({"type": "success", "content": "unset", "unset": ["conversation.tools.fs_read_file.command"]});
    let grant = "[[conversation.tools.tidy.access.config]]\n\
        path = \"conversation.tools.fs_read_file\"\n\
        write = \"insecure_allow\"\n\
        delete = \"insecure_allow\"\n\
        apply = \"unattended\"\n";
    let ws = workspace_with("tidy", &outcome, grant);
    let server = TestServer::start(vec![tool("toolu_1", "tidy", "{}"), text("Ok.")]);
    let run = query(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let detail = "with this change the config would not load: conversation.tools.fs_read_file.command: a local tool needs a `command` to run";
    let warning = format!(
        "⚠ tool tidy proposed an invalid config change ({detail}); not applied, the tool runs again\n"
    );
    assert_eq!(
        run.stderr,
        format!(
            "── jp (anthropic/claude-haiku-4-5) ──\n\
             Calling tool tidy()\n  \
             unattended (policy.run is \"unattended\")\n\
             {warning}{warning}{warning}{warning}\
             ⚠ tool tidy had its config change rejected 4 times; the call ends here\n  \
             tidy error: Tool `tidy` proposed a config change jp could not apply 4 times, so the call ends here without its result. Last reason: invalid_config: with this change the config would not load: conversation.tools.…\n\
             ── jp (anthropic/claude-haiku-4-5) ──\n\
             tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n"
        )
    );
    let got = tool_requests(&ws);
    assert_eq!(got.len(), 4);
    for rerun in &got[1..] {
        assert_eq!(
            rerun["context"]["delta_rejection"],
            json!({
                "reason": "invalid_config",
                "fields": ["conversation.tools.fs_read_file.command"],
                "detail": detail
            })
        );
    }
    let conversation = stored(&ws);
    assert_eq!(
        responses(&conversation),
        [(
            "error".to_owned(),
            format!(
                "Tool `tidy` proposed a config change jp could not apply 4 times, so the call ends here without its result. Last reason: invalid_config: {detail}"
            )
        )]
    );
    assert!(!event_types(&conversation).contains(&"config_delta".to_owned()));
    // Nothing was committed, so the conversation still loads.
    assert_eq!(
        ws.jp(&["config", "validate"]).stdout,
        "config is valid (default, .jp/config.toml)\n"
    );
    let server = TestServer::start(vec![text("Hi.")]);
    assert_eq!(query(&ws, &server, &[]).code, 0);
}

/// A tool `name` that answers `outcome` (JSON) and may change the config
/// within `grant` (TOML for one `access.config` rule), unattended.
fn proposing_tool(name: &str, outcome: &Value, grant: &str) -> String {
    format!(
        "[conversation.tools.{name}]\n\
         command = [\"sh\", \"-c\", {}]\n\
         policy.run = \"unattended\"\n\n\
         [[conversation.tools.{name}.access.config]]\n{grant}\n",
        Value::String(format!("echo '{outcome}'"))
    )
}

#[test]
fn changes_that_load_alone_but_not_together_are_not_applied_and_the_tools_told_why() {
    // `a` gives `t` a rule on /path; `b` removes the parameter `path`.
    // Each loads with the config as the cycle began; together the rule
    // names a parameter that is gone, which no config may hold.
    let ws = initialized();
    let rule = json!({"type": "success", "content": "t now asks outside src/", "config": {
        "conversation": {"tools": {"t": {"policy": {"run": [
            {"arg": "/path", "prefix": "src/", "mode": "unattended"}, {"mode": "ask"}
        ]}}}}
    }});
    let drop_path = json!({"type": "success", "content": "t takes no path now",
        "unset": ["conversation.tools.t.parameters.path"]});
    on_haiku(
        &ws,
        &format!(
            "[conversation.tools.t]\n\
             command = \"true\"\n\
             parameters.path = {{ type = \"path\" }}\n\
             policy.run = \"unattended\"\n\n{}{}",
            proposing_tool(
                "a",
                &rule,
                "path = \"conversation.tools.t.policy\"\nwrite = \"insecure_allow\"\ndelete = \"insecure_allow\"\napply = \"unattended\""
            ),
            proposing_tool(
                "b",
                &drop_path,
                "path = \"conversation.tools.t.parameters\"\ndelete = \"insecure_allow\"\napply = \"unattended\""
            ),
        ),
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Tool("toolu_1", "a", "{}"),
                Item::Tool("toolu_2", "b", "{}"),
            ],
            "tool_use",
            false,
        )),
        text("Noted."),
    ]);
    let run = query(&ws, &server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Noted.\n");
    let why = "conversation.tools.t.policy.run[0]: \"arg\" \"/path\": the tool has no \
               parameter \"path\" (it has none)";
    assert!(
        run.stderr.ends_with(&format!(
            "  b success: t takes no path now\n\
             ⚠ the config changes of this response were not applied: together they leave a \
             config that does not load: {why}\n\
             ── jp (anthropic/claude-haiku-4-5) ──\n\
             tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n"
        )),
        "{}",
        run.stderr
    );
    let conversation = stored(&ws);
    assert!(
        !event_types(&conversation).contains(&"config_delta".to_owned()),
        "nothing committed"
    );
    let dropped = format!(
        "The tool finished, but its config change was not applied: together with the other \
         config changes of this response it leaves a config that does not load ({why}). The \
         result was not kept."
    );
    assert_eq!(
        responses(&conversation),
        [
            ("error".to_owned(), dropped.clone()),
            ("error".to_owned(), dropped)
        ]
    );
    // The turn went on, with the config as it was.
    assert_eq!(server.requests().len(), 2);
    assert_eq!(
        ws.jp(&["config", "get", "conversation.tools.t.policy.run"])
            .stdout,
        "unattended\n"
    );
}
