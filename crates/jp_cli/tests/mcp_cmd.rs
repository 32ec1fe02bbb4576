//! `jp mcp ls` and `jp mcp tools` through the real `jp` binary, against
//! `jp-mcp-test-server` (issue 24): the servers are started to list their
//! state and tools, and stopped again; `jp config` commands never start
//! them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::mcp::{assert_gone, server_binary, server_pid, workspace};

/// The test server's tools as `jp mcp ls` lists them, with `echo` and
/// `save` configured.
const LISTED: &str = "test: started, 9 tools\n  \
echo     Says the text back. (conversation.tools.echo)\n  \
save     Writes a file. (conversation.tools.save_file, disabled)\n  \
read     Reads a file. (not configured)\n  \
fail     Fails. (not configured)\n  \
crash    Exits mid-call. (not configured)\n  \
hang     Never answers. (not configured)\n  \
garbage  Writes lines that are not JSON. (not configured)\n  \
huge     Answers with many bytes. (not configured)\n  \
picture  An image. (not configured)\n";

const TOOLS: &str = "[conversation.tools.echo]\nsource = \"mcp.test\"\n\n\
[conversation.tools.save_file]\nsource = \"mcp.test\"\ntool = \"save\"\nenable = false\n";

#[test]
fn ls_starts_each_server_and_lists_its_state_and_tools() {
    let ws = workspace("", TOOLS);
    // `jp config` commands never start a server.
    for args in [&["config", "show"][..], &["config", "validate"]] {
        let run = ws.jp(args);
        assert_eq!(run.code, 0, "{run:?}");
    }
    assert!(
        server_pid(&ws).is_none(),
        "a `jp config` command started the server"
    );

    let run = ws.jp(&["mcp", "ls"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert_eq!(run.stdout, LISTED);
    // The server was stopped before jp exited.
    assert_gone(&ws);
}

#[test]
fn ls_says_why_a_server_did_not_start_and_exits_1() {
    let ws = workspace("", TOOLS);
    let config = ws.read("project/.jp/config.toml");
    let command = serde_json::Value::String(server_binary().display().to_string());
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n[providers.mcp.broken]\ncommand = [{command}]\nenv = {{ JP_MCP_TEST_START = \"exit\" }}\n\n\
             [providers.mcp.slow]\ncommand = [{command}]\nenv = {{ JP_MCP_TEST_START = \"hang\" }}\nstartup_timeout_secs = 1\n"
        ),
    );
    let run = ws.jp(&["mcp", "ls"]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""), "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "{LISTED}broken: not started: MCP server `broken` failed to start: it exited during the handshake \
             (exit status: 2); its stderr ends:\n  refusing to start\n\
             slow: not started: MCP server `slow` did not finish starting within 1 s \
             (providers.mcp.slow.startup_timeout_secs)\n"
        )
    );

    let json = ws.jp(&["mcp", "ls", "--format", "json"]);
    assert_eq!(json.code, 1, "{json:?}");
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(json["servers"][0]["state"], "started");
    assert_eq!(
        json["servers"][0]["tools"][1],
        serde_json::json!({
            "name": "save",
            "title": null,
            "description": "Writes a file.",
            "configured_as": [{ "key": "conversation.tools.save_file", "enabled": false }],
        })
    );
    assert_eq!(json["servers"][1]["state"], "failed");
    assert_eq!(json["servers"][2]["name"], "slow");
}

#[test]
fn ls_without_servers_says_how_to_add_one() {
    let ws = common::query::initialized();
    let run = ws.jp(&["mcp", "ls"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "no MCP server is configured (add `[providers.mcp.NAME]` with its `command`, or its `url` for a server over HTTP)\n"
    );
}

#[test]
fn tools_shows_one_servers_tools_with_their_input_schemas() {
    let ws = workspace("", TOOLS);
    let run = ws.jp(&["mcp", "tools", "test"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    let empty = "  input schema: {\n    \"type\": \"object\",\n    \"properties\": {}\n  }\n";
    let expected = [
        "echo\n  Says the text back.\n  configured as conversation.tools.echo\n  input schema: {\n    \
         \"type\": \"object\",\n    \"properties\": {\n      \"text\": {\n        \"type\": \"string\",\n        \
         \"description\": \"What to say.\"\n      }\n    },\n    \"required\": [\n      \"text\"\n    ]\n  }\n"
            .to_owned(),
        "save\n  Writes a file.\n  configured as conversation.tools.save_file, disabled\n  input schema: {\n    \
         \"type\": \"object\",\n    \"properties\": {\n      \"path\": {\n        \"type\": \"string\"\n      },\n      \
         \"content\": {\n        \"type\": \"string\"\n      }\n    },\n    \"required\": [\n      \"path\",\n      \
         \"content\"\n    ]\n  }\n"
            .to_owned(),
        "read\n  Reads a file.\n  not configured\n  input schema: {\n    \"type\": \"object\",\n    \
         \"properties\": {\n      \"path\": {\n        \"type\": \"string\"\n      }\n    },\n    \"required\": [\n      \
         \"path\"\n    ]\n  }\n"
            .to_owned(),
        format!("fail\n  Fails.\n  not configured\n{empty}"),
        format!("crash\n  Exits mid-call.\n  not configured\n{empty}"),
        format!("hang\n  Never answers.\n  not configured\n{empty}"),
        format!("garbage\n  Writes lines that are not JSON.\n  not configured\n{empty}"),
        "huge\n  Answers with many bytes.\n  not configured\n  input schema: {\n    \"type\": \"object\",\n    \
         \"properties\": {\n      \"bytes\": {\n        \"type\": \"integer\"\n      }\n    },\n    \"required\": [\n      \
         \"bytes\"\n    ]\n  }\n"
            .to_owned(),
        format!("picture\n  An image.\n  not configured\n{empty}"),
    ]
    .concat();
    assert_eq!(run.stdout, expected);
    assert_gone(&ws);

    let json = ws.jp(&["mcp", "tools", "test", "--format", "json"]);
    assert_eq!(json.code, 0, "{json:?}");
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        json["servers"][0]["tools"][0]["input_schema"],
        serde_json::json!({
            "type": "object",
            "properties": { "text": { "type": "string", "description": "What to say." } },
            "required": ["text"]
        })
    );
}

#[test]
fn tools_of_an_unknown_server_is_a_usage_error_naming_the_servers() {
    let ws = workspace("", TOOLS);
    let run = ws.jp(&["mcp", "tools", "git"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error: no MCP server `git` is configured (servers: test); add `[providers.mcp.git]` with its `command` or `url`\n"
    );
    assert!(server_pid(&ws).is_none());
}

/// `say`: the server's `echo`, unattended when its text starts with "hi";
/// every other tool of the server through the wildcard, asked.
const CHECKED: &str = r#"[conversation.tools.say]
source = "mcp.test"
tool = "echo"
policy.run = [{ arg = "/text", prefix = "hi", mode = "unattended" }, { mode = "ask" }]

[conversation.tools.'test.*']
source = "mcp.test"
policy.run = "ask"
"#;

#[test]
fn policy_check_on_an_mcp_tool_starts_the_server_for_its_schema() {
    let ws = workspace("", CHECKED);
    let run = ws.jp(&[
        "policy",
        "check",
        "say",
        "--args",
        r#"{"text": "hi there"}"#,
    ]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert_eq!(
        run.stdout,
        "say policy.run: unattended\n  \
         policy.run[0] prefix \"hi\" on /text: matches: \"hi there\" starts with \"hi\"\n  \
         while streaming: decided once `text` is complete\n  \
         policy: conversation.tools.say.policy.run (.jp/config.toml)\n"
    );
    assert_gone(&ws);

    // The arguments are checked against the server's schema.
    let run = ws.jp(&["policy", "check", "say", "--args", r#"{"txt": "hi"}"#]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error: --args: /txt: unknown parameter (expected one of \"text\")\n\
         error: --args: /text: missing required parameter\n\
         error: the arguments do not fit `say`'s parameters\n"
    );
}

#[test]
fn policy_check_on_a_wildcard_tool_names_the_wildcard_entry() {
    let ws = workspace("", CHECKED);
    let run = ws.jp(&["policy", "check", "huge", "--args", r#"{"bytes": 3}"#]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert_eq!(
        run.stdout,
        "huge policy.run: ask\n  \
         policy.run[0] catch-all: matches\n  \
         while streaming: decided as the call starts\n  \
         policy: conversation.tools.'test.*'.policy.run (.jp/config.toml)\n"
    );
    // `echo` is offered as `say`, so the wildcard does not add it.
    let run = ws.jp(&["policy", "check", "echo", "--args", "{}"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: unknown tool `echo` (configured tools: fs_read_file, fs_list_files, fs_grep, fs_glob, \
         fs_create_file, fs_modify_file, fs_delete_file, run_command, say, save, read, fail, crash, hang, garbage, huge, picture)\n"
    );
}

#[test]
fn policy_check_on_a_local_tool_starts_no_server() {
    let ws = workspace("", CHECKED);
    let run = ws.jp(&[
        "policy",
        "check",
        "fs_read_file",
        "--args",
        r#"{"path": "a"}"#,
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(server_pid(&ws).is_none(), "the server was started");
}

#[test]
fn policy_check_refuses_a_rule_the_servers_schema_lacks_with_file_and_line() {
    let tools = "[conversation.tools.echo]\nsource = \"mcp.test\"\n\
                 policy.run = [{ arg = \"/txt\", const = \"x\", mode = \"unattended\" }, { mode = \"ask\" }]\n";
    let ws = workspace("", tools);
    let run = ws.jp(&["policy", "check", "echo", "--args", r#"{"text": "x"}"#]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "");
    let rule = ws.config_line(
        "policy.run = [{ arg = \"/txt\", const = \"x\", mode = \"unattended\" }, { mode = \"ask\" }]",
    );
    assert_eq!(
        run.stderr,
        format!(
            "error: the config does not fit the MCP servers' tools:\n\
             error: .jp/config.toml:{rule}: conversation.tools.echo.policy.run[0]: \"arg\" \"/txt\": \
             the tool has no parameter \"txt\" (it has /text)\n"
        )
    );
    assert_gone(&ws);
}
