//! MCP tools whose schemas use what published servers send (issue 37),
//! through the real `jp` binary: `jp-mcp-test-server` with
//! `JP_MCP_TEST_SCHEMAS=1` offers tools with `anyOf [T, null]`, a type
//! list, `$defs`/`$ref`, a recursive `$ref`, a root `anyOf`, and one whose
//! `$ref` points at another document (which jp cannot use). Every call is
//! checked against the whole schema; the one unusable tool costs only
//! itself.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::Workspace;
use common::mcp::{assert_gone, workspace};
use common::providers::{text_reply as text, tool_reply as tool};
use common::query::{query_command, responses, stored};
use jp_test_server::TestServer;

const MODEL: &str = "anthropic/claude-haiku-4-5";
const HEADER: &str = "── jp (anthropic/claude-haiku-4-5) ──\n";

/// Every tool of the server through its wildcard entry, unattended.
const WILDCARD: &str =
    "[conversation.tools.'test.*']\nsource = \"mcp.test\"\npolicy.run = \"unattended\"\n";

const REMOTE_REASON: &str = "its schema refers to another document \
                             (https://example.com/x.schema.json), which jp does not fetch";

fn run(ws: &Workspace, server: &TestServer) -> common::Run {
    let output = query_command(ws, server, MODEL, &[], "use the tools")
        .output()
        .unwrap();
    ws.run_of(output)
}

#[test]
fn every_published_schema_shape_is_usable_and_checked_whole() {
    let ws = workspace("JP_MCP_TEST_SCHEMAS = \"1\"", WILDCARD);
    let server = TestServer::start(vec![
        tool(
            "toolu_1",
            "log",
            r#"{"repo_path": ".", "start_timestamp": null}"#,
        ),
        tool("toolu_2", "either", r#"{"flag": "yes"}"#),
        tool(
            "toolu_3",
            "edits",
            r#"{"edits": [{"file": "a", "line": 0}]}"#,
        ),
        tool("toolu_4", "pick", r#"{"id": 3}"#),
        tool(
            "toolu_5",
            "tree",
            r#"{"root": {"name": "a", "children": [{"name": "b"}]}}"#,
        ),
        tool("toolu_6", "log", r#"{"repo_path": ".", "max_count": "x"}"#),
        text("Done."),
    ]);
    let run = run(&ws, &server);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Done.\n");
    // The unusable tool is said once, before the turn; the rest run, and
    // the edit through a `$ref` is refused as soon as its `line` is
    // complete (RFD D26).
    assert_eq!(
        run.stderr,
        format!(
            "warning: MCP server `test`'s tool `remote`: {REMOTE_REASON}; tool remote is not offered to the model\n\
             {HEADER}Calling tool log(repo_path: \".\", start_timestamp: null)\n  \
             unattended (policy.run is \"unattended\")\n  \
             log success: log: {{\"repo_path\":\".\",\"start_timestamp\":null}}\n\
             {HEADER}Calling tool either(flag: \"yes\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             either success: either: {{\"flag\":\"yes\"}}\n\
             {HEADER}Calling tool edits(edits: [{{\"file\":\"a\",\"line\":0}}])\n  \
             edits: refused: the arguments do not fit its parameters: /edits/0/line: 0 is less than the minimum of 1\n  \
             stopped the stream after 36 B of edits's arguments\n\
             {HEADER}Calling tool pick(id: 3)\n  \
             unattended (policy.run is \"unattended\")\n  \
             pick success: pick: {{\"id\":3}}\n\
             {HEADER}Calling tool tree(root: {{\"name\":\"a\",\"children\":[{{\"name\":\"b\"}}]}})\n  \
             unattended (policy.run is \"unattended\")\n  \
             tree success: tree: {{\"root\":{{\"name\":\"a\",\"children\":[{{\"name\":\"b\"}}]}}}}\n\
             {HEADER}Calling tool log(repo_path: \".\", max_count: \"x\")\n  \
             log: refused: the arguments do not fit its parameters: /max_count: \"x\" is not of type \"integer\"\n\
             {HEADER}tokens: 7 responses · 70 in · 253 out · $0.0013 · stream stopped after 36 B of edits's arguments; the rest was never generated · context 1% of 200k\n"
        )
    );
    assert_eq!(
        responses(&stored(&ws)),
        [
            (
                "success".to_owned(),
                r#"log: {"repo_path":".","start_timestamp":null}"#.to_owned()
            ),
            ("success".to_owned(), r#"either: {"flag":"yes"}"#.to_owned()),
            (
                "refused".to_owned(),
                "The call was not run because its arguments do not fit the tool's parameters: \
                 /edits/0/line: 0 is less than the minimum of 1. jp stopped your response after \
                 36 B of this call's arguments."
                    .to_owned()
            ),
            ("success".to_owned(), r#"pick: {"id":3}"#.to_owned()),
            (
                "success".to_owned(),
                r#"tree: {"root":{"name":"a","children":[{"name":"b"}]}}"#.to_owned()
            ),
            (
                "refused".to_owned(),
                "The call was not run because its arguments do not fit the tool's parameters: \
                 /max_count: \"x\" is not of type \"integer\"."
                    .to_owned()
            ),
        ]
    );

    // The model is offered every usable tool, `log` with its schema whole
    // (closed to other members), and not `remote`.
    let requests = server.wait_for(2, Duration::from_secs(10));
    let sent = requests[0].json();
    let offered: Vec<&serde_json::Value> = sent["tools"].as_array().unwrap().iter().collect();
    let names: Vec<&str> = offered.iter().filter_map(|t| t["name"].as_str()).collect();
    for name in ["log", "either", "edits", "tree", "pick", "echo"] {
        assert!(names.contains(&name), "{name} is not offered: {names:?}");
    }
    assert!(!names.contains(&"remote"), "{names:?}");
    let log = offered.iter().find(|t| t["name"] == "log").unwrap();
    assert_eq!(
        log["input_schema"],
        serde_json::json!({
            "type": "object",
            "properties": {
                "repo_path": { "type": "string", "title": "Repo Path" },
                "max_count": { "type": "integer", "default": 10, "minimum": 1 },
                "start_timestamp": { "anyOf": [{ "type": "string" }, { "type": "null" }], "default": null }
            },
            "required": ["repo_path"],
            "title": "GitLog",
            "additionalProperties": false
        })
    );
    assert_gone(&ws);
}

#[test]
fn a_path_annotation_over_an_optional_parameter_fails_closed_on_null() {
    // `start_timestamp` made a path (for the test's sake): a path under
    // `notes/` runs unattended; `null`, no path at all, is asked (and
    // declined, with no terminal), never run unattended.
    let tools = "[conversation.tools.log]\nsource = \"mcp.test\"\n\
                 parameters.start_timestamp = { type = \"path\" }\n\
                 policy.run = [{ arg = \"/start_timestamp\", prefix = \"notes/\", mode = \"unattended\" }, { mode = \"ask\" }]\n";
    let ws = workspace("JP_MCP_TEST_SCHEMAS = \"1\"", tools);
    let server = TestServer::start(vec![
        tool(
            "toolu_1",
            "log",
            r#"{"repo_path": ".", "start_timestamp": "notes/a"}"#,
        ),
        tool(
            "toolu_2",
            "log",
            r#"{"repo_path": ".", "start_timestamp": null}"#,
        ),
        text("Done."),
    ]);
    let run = run(&ws, &server);
    assert_eq!(run.code, 5, "{run:?}");
    let said = responses(&stored(&ws));
    assert_eq!(
        said[0],
        (
            "success".to_owned(),
            r#"log: {"repo_path":".","start_timestamp":"notes/a"}"#.to_owned()
        )
    );
    // Decided as soon as the `null` arrived (RFD D26).
    assert_eq!(
        said[1],
        (
            "declined".to_owned(),
            "The call was not run: the user's policy requires confirmation and no one could \
             confirm it (jp is running without a terminal). jp stopped your response after 43 B \
             of this call's arguments."
                .to_owned()
        )
    );
}

#[test]
fn lines_that_are_not_json_before_the_handshake_are_skipped() {
    let ws = workspace(
        "JP_MCP_TEST_STDOUT_NOISE = \"3\"",
        "[conversation.tools.echo]\nsource = \"mcp.test\"\npolicy.run = \"unattended\"\n",
    );
    let server = TestServer::start(vec![
        tool("toolu_1", "echo", r#"{"text": "hi"}"#),
        text("Done."),
    ]);
    let run = run(&ws, &server);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        responses(&stored(&ws)),
        [("success".to_owned(), "echo: hi".to_owned())]
    );
}

#[test]
fn mcp_ls_tools_and_config_validate_say_which_tool_is_not_offered_and_why() {
    let ws = workspace("JP_MCP_TEST_SCHEMAS = \"1\"", WILDCARD);
    let run = ws.jp(&["mcp", "ls"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert!(
        run.stdout.contains(&format!(
            "\n  remote   Its schema is elsewhere. (conversation.tools.'test.*'; not offered: {REMOTE_REASON})\n"
        )),
        "{}",
        run.stdout
    );

    let run = ws.jp(&["mcp", "tools", "test", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let listed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let tools = listed["servers"][0]["tools"].as_array().unwrap();
    let unusable: Vec<(&str, &str)> = tools
        .iter()
        .filter_map(|t| Some((t["name"].as_str()?, t["unusable"].as_str()?)))
        .collect();
    assert_eq!(unusable, [("remote", REMOTE_REASON)]);

    // `jp config validate` starts no server; with `--mcp` it does, and
    // says the same.
    let run = ws.jp(&["config", "validate"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    let run = ws.jp(&["config", "validate", "--mcp"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "warning: MCP server `test`'s tool `remote`: {REMOTE_REASON}; tool remote is not offered to the model\n"
        )
    );
    assert!(
        run.stdout.starts_with("config is valid ("),
        "{}",
        run.stdout
    );
    assert_gone(&ws);

    // A rule on an argument the tool lacks is an error once it is known.
    let ws = workspace(
        "JP_MCP_TEST_SCHEMAS = \"1\"",
        "[conversation.tools.log]\nsource = \"mcp.test\"\n\
         policy.run = [{ arg = \"/branch\", const = \"main\", mode = \"unattended\" }]\n",
    );
    let run = ws.jp(&["config", "validate"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = ws.jp(&["config", "validate", "--mcp"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("\"arg\" \"/branch\": the tool has no parameter \"branch\""),
        "{}",
        run.stdout
    );
}

/// The request `model` is sent with every schema tool offered, the
/// provider answering `reply`.
fn first_request(model: &str, reply: jp_test_server::Reply) -> serde_json::Value {
    let ws = workspace("JP_MCP_TEST_SCHEMAS = \"1\"", WILDCARD);
    let server = TestServer::start(vec![reply]);
    let output = query_command(&ws, &server, model, &[], "hello")
        .output()
        .unwrap();
    let run = ws.run_of(output);
    assert_eq!(run.code, 0, "{run:?}");
    server.wait_for(1, Duration::from_secs(10))[0].json()
}

#[test]
fn each_provider_is_sent_its_dialect_of_the_schemas() {
    use common::providers::{Item, gemini, openai_responses};

    // Gemini reads no references: `edits`' elements are inlined, and a
    // pydantic Optional is a nullable string.
    let sent = first_request(
        "google/gemini-2.5-flash",
        jp_test_server::Reply::sse(gemini(&[Item::Text("Hi.")])),
    );
    let declarations = sent["tools"][0]["functionDeclarations"].as_array().unwrap();
    let find = |name: &str| {
        declarations
            .iter()
            .find(|d| d["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not declared"))
            .clone()
    };
    assert!(
        !sent["tools"].to_string().contains("$ref"),
        "{}",
        sent["tools"]
    );
    assert_eq!(
        find("edits")["parameters"]["properties"]["edits"]["items"]["properties"]["line"],
        serde_json::json!({ "type": "integer", "minimum": 1 })
    );
    assert_eq!(
        find("log")["parameters"]["properties"]["start_timestamp"],
        serde_json::json!({ "default": null, "type": "string", "nullable": true })
    );

    // OpenAI refuses a root `anyOf`: `pick` is one object offering both
    // members, neither required. Each branch is an open object (it takes
    // members it does not name), so either member may hold anything: the
    // model is told no more than the original says. The original still
    // decides each call.
    let sent = first_request(
        "openai/gpt-4.1",
        jp_test_server::Reply::sse(openai_responses(&[Item::Text("Hi.")])),
    );
    let pick = sent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "pick")
        .unwrap()
        .clone();
    assert_eq!(
        pick["parameters"],
        serde_json::json!({
            "type": "object",
            "properties": { "id": {}, "name": {} }
        })
    );
}

#[test]
fn a_rule_on_a_parameter_of_several_types_compares_it_whole() {
    let rule = |matcher: &str| {
        format!(
            "[conversation.tools.either]\nsource = \"mcp.test\"\n\
             policy.run = [{{ arg = \"/flag\", {matcher}, mode = \"unattended\" }}, {{ mode = \"ask\" }}]\n"
        )
    };
    let ws = workspace(
        "JP_MCP_TEST_SCHEMAS = \"1\"",
        &rule("enum = [true, \"yes\"]"),
    );
    let check = |args: &str| ws.jp(&["policy", "check", "either", "--args", args]);
    let run = check(r#"{"flag": "yes"}"#);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert_eq!(
        run.stdout,
        "either policy.run: unattended\n  \
         policy.run[0] enum [true, \"yes\"] on /flag: matches: \"yes\" is one of [true, \"yes\"]\n  \
         while streaming: decided once `flag` is complete\n  \
         policy: conversation.tools.either.policy.run (.jp/config.toml)\n"
    );
    let run = check(r#"{"flag": false}"#);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert_eq!(
        run.stdout,
        "either policy.run: ask\n  \
         policy.run[0] enum [true, \"yes\"] on /flag: no match: false is not one of [true, \"yes\"]\n  \
         policy.run[1] catch-all: matches\n  \
         while streaming: decided once `flag` is complete\n  \
         policy: conversation.tools.either.policy.run (.jp/config.toml)\n"
    );

    // A text matcher needs a text parameter.
    let ws = workspace("JP_MCP_TEST_SCHEMAS = \"1\"", &rule("prefix = \"y\""));
    let run = ws.jp(&["policy", "check", "either", "--args", r#"{"flag": "yes"}"#]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: the config does not fit the MCP servers' tools:\n\
         error: .jp/config.toml:300: conversation.tools.either.policy.run[0]: \"prefix\" does not apply \
         to /flag, a value of several possible types (a parameter of several types takes \"const\" or \"enum\")\n"
    );
}
