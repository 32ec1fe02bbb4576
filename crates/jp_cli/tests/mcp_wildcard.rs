//! `[conversation.tools.'SERVER.*']`: every tool of an MCP server under one
//! entry and one policy, through the real `jp` binary against
//! `jp-mcp-test-server` (issue 24).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Workspace;
use common::mcp::{assert_gone, server_pid, workspace};
use common::providers::{text_reply as text, tool_reply as tool};
use common::query::{hide_ids, query_command};
use jp_test_server::TestServer;

const MODEL: &str = "anthropic/claude-haiku-4-5";
const HEADER: &str = "── jp (anthropic/claude-haiku-4-5) ──\n";

/// Every tool of the server unattended; `fail` asked, by an entry of its
/// own; `save` left out.
const WILDCARD: &str = r#"[conversation.tools.'test.*']
source = "mcp.test"
policy.run = "unattended"

[conversation.tools.fail]
source = "mcp.test"
policy.run = "ask"

[conversation.tools.save_file]
source = "mcp.test"
tool = "save"
enable = false
"#;

fn query(ws: &Workspace, server: &TestServer) -> common::Run {
    let output = query_command(ws, server, MODEL, &[], "use the tools")
        .output()
        .unwrap();
    ws.run_of(output)
}

#[test]
fn a_wildcard_offers_every_tool_under_its_server_name_with_its_policy() {
    let ws = workspace("", WILDCARD);
    let server = TestServer::start(vec![
        tool("toolu_1", "echo", r#"{"text": "hi"}"#),
        tool("toolu_2", "fail", "{}"),
        text("Done."),
    ]);
    let run = query(&ws, &server);
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "{HEADER}Calling tool echo(text: \"hi\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             echo success: echo: hi\n\
             {HEADER}Calling tool fail()\n  \
             fail: declined: policy.run is \"ask\", so jp must ask, and no terminal is available; \
             run jp in a terminal to answer, or add a rule for calls like this one in a policy.run list \
             that ends with {{ mode = \"ask\" }} in conversation.tools.fail (`jp policy check fail` tries it)\n  \
             stopped the stream before fail's arguments\n\
             {HEADER}tokens: 3 responses · 30 in · 85 out · $0.0005 · stream stopped before fail's arguments; \
             they were never generated · context 1% of 200k\n"
        )
    );
    // The model is offered each tool by the server's name, but not `save`
    // (its own entry is off) nor the wildcard itself.
    let requests = server.wait_for(1, std::time::Duration::from_secs(10));
    let mut offered: Vec<String> = requests[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        // jp's default tools are offered too; this is about the server's.
        .filter(|name| !name.starts_with("fs_") && name != "run_command")
        .collect();
    offered.sort();
    assert_eq!(
        offered,
        [
            "crash", "echo", "fail", "garbage", "hang", "huge", "picture", "read"
        ]
    );
    assert_gone(&ws);
}

#[test]
fn a_wildcard_tool_declined_names_the_wildcard_entry_to_change() {
    let tools = "[conversation.tools.'test.*']\nsource = \"mcp.test\"\npolicy.run = \"ask\"\n";
    let ws = workspace("", tools);
    let server = TestServer::start(vec![
        tool("toolu_1", "echo", r#"{"text": "hi"}"#),
        text("Ok."),
    ]);
    let run = query(&ws, &server);
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "{HEADER}Calling tool echo()\n  \
             echo: declined: policy.run is \"ask\", so jp must ask, and no terminal is available; \
             run jp in a terminal to answer, or add a rule for calls like this one in a policy.run list \
             that ends with {{ mode = \"ask\" }} in conversation.tools.'test.*' (`jp policy check echo` tries it)\n  \
             stopped the stream before echo's arguments\n\
             {HEADER}tokens: 2 responses · 20 in · 43 out · $0.0002 · stream stopped before echo's arguments; \
             they were never generated · context 1% of 200k\n"
        )
    );
}

#[test]
fn a_server_tool_named_like_another_tool_is_a_config_error_naming_both() {
    let tools = format!(
        "{WILDCARD}\n[conversation.tools.echo]\ncommand = [\"sh\", \"-c\", \"true\"]\nparameters.text = {{ type = \"string\" }}\n"
    );
    let ws = workspace("", &tools);
    let server = TestServer::start(vec![text("unused")]);
    let run = query(&ws, &server);
    assert_eq!(run.code, 1, "{run:?}");
    let entry = ws.config_line("[conversation.tools.'test.*']");
    assert_eq!(
        hide_ids(&run.stderr),
        format!(
            "error: the config does not fit the MCP servers' tools:\n\
             error: .jp/config.toml:{entry}: conversation.tools.'test.*': MCP server `test`'s tool `echo` has the name of conversation.tools.echo, \
             a local tool; give it an entry of its own under another name: `[conversation.tools.test_echo]` with \
             `source = \"mcp.test\"` and `tool = \"echo\"` (`enable = false` leaves it out)\n\
             the conversation keeps what arrived; `jp query` continues it (conversation <id>)\n"
        )
    );
    assert!(server.requests().is_empty(), "the provider was asked");

    // The fix the message gives: the server's `echo` under another name.
    let fixed = format!(
        "{tools}\n[conversation.tools.test_echo]\nsource = \"mcp.test\"\ntool = \"echo\"\npolicy.run = \"unattended\"\n"
    );
    ws.write(
        "project/.jp/config.toml",
        &ws.read("project/.jp/config.toml").replace(&tools, &fixed),
    );
    let server = TestServer::start(vec![
        tool("toolu_1", "test_echo", r#"{"text": "hi"}"#),
        text("Ok."),
    ]);
    let fixed_run = query(&ws, &server);
    assert_eq!(fixed_run.code, 0, "{fixed_run:?}");
    assert!(
        fixed_run.stderr.contains("  test_echo success: echo: hi\n"),
        "{fixed_run:?}"
    );
}

#[test]
fn a_wildcard_entry_names_its_server_and_sets_nothing_of_one_tool() {
    let ws = workspace(
        "",
        "[conversation.tools.'git.*']\nsource = \"mcp.test\"\ntool = \"echo\"\n\
         parameters.text = { type = \"path\" }\npolicy.run = \"ask\"\n",
    );
    let run = ws.jp(&["config", "validate"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        server_pid(&ws).is_none(),
        "`jp config validate` started the server"
    );
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("'git.*'"))
        .collect();
    // The entry's line in the config, below what jp init wrote.
    let entry = ws
        .read("project/.jp/config.toml")
        .lines()
        .position(|l| l == "[conversation.tools.'git.*']")
        .unwrap()
        + 1;
    assert_eq!(
        lines,
        [
            format!(
                "error: .jp/config.toml:{}: conversation.tools.'git.*'.source: `'git.*'` stands for every tool of MCP server `git`, so its source is `mcp.git` (set `source = \"mcp.git\"`)",
                entry + 1
            ),
            format!(
                "error: .jp/config.toml:{}: conversation.tools.'git.*'.tool: cannot be set for all of a server's tools; give the tool an entry of its own (`source = \"mcp.git\"`, `tool = \"NAME\"`) and set it there",
                entry + 2
            ),
            format!(
                "error: .jp/config.toml:{}: conversation.tools.'git.*'.parameters: cannot be set for all of a server's tools; give the tool an entry of its own (`source = \"mcp.git\"`, `tool = \"NAME\"`) and set it there",
                entry + 3
            ),
        ]
    );
}

#[test]
fn mcp_ls_shows_which_tools_the_wildcard_offers() {
    let ws = workspace("", WILDCARD);
    let run = ws.jp(&["mcp", "ls"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert_eq!(
        run.stdout,
        "test: started, 9 tools\n  \
         echo     Says the text back. (conversation.tools.'test.*')\n  \
         save     Writes a file. (conversation.tools.save_file, disabled)\n  \
         read     Reads a file. (conversation.tools.'test.*')\n  \
         fail     Fails. (conversation.tools.fail)\n  \
         crash    Exits mid-call. (conversation.tools.'test.*')\n  \
         hang     Never answers. (conversation.tools.'test.*')\n  \
         garbage  Writes lines that are not JSON. (conversation.tools.'test.*')\n  \
         huge     Answers with many bytes. (conversation.tools.'test.*')\n  \
         picture  An image. (conversation.tools.'test.*')\n"
    );
}

/// `save_file` and `read_file`, the server's `save` and `read`, under a
/// `read_before_write` policy that names them.
const READ_BEFORE_WRITE: &str = r#"[conversation.tools.save_file]
source = "mcp.test"
tool = "save"
parameters.path = { type = "path" }
policy.run = "unattended"

[conversation.tools.read_file]
source = "mcp.test"
tool = "read"
parameters.path = { type = "path" }
policy.run = "unattended"

[[conversation.policies]]
kind = "read_before_write"
read_tools = ["read_file"]
write_tools = ["save_file"]
"#;

#[test]
fn read_before_write_governs_mcp_tools_across_calls() {
    let ws = workspace("", READ_BEFORE_WRITE);
    ws.write("project/notes.txt", "draft\n");
    let save = r#"{"path": "notes.txt", "content": "final\n"}"#;
    let server = TestServer::start(vec![
        tool("toolu_1", "save_file", save),
        tool("toolu_2", "read_file", r#"{"path": "notes.txt"}"#),
        tool("toolu_3", "save_file", save),
        text("Done."),
    ]);
    let run = query(&ws, &server);
    assert_eq!(run.code, 5, "{run:?}");
    let denied = "`notes.txt` already exists and has not been read in this conversation; \
                  read it with `read_file` first, then call `save_file` again.";
    assert_eq!(
        run.stderr,
        format!(
            "{HEADER}Calling tool save_file(path: \"notes.txt\", content: \"final\\n\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             save_file: denied by read_before_write: {denied}\n\
             {HEADER}Calling tool read_file(path: \"notes.txt\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             read_file success: draft\n\
             {HEADER}Calling tool save_file(path: \"notes.txt\", content: \"final\\n\")\n  \
             unattended (policy.run is \"unattended\")\n  \
             save_file success: saved 6 bytes to notes.txt\n\
             {HEADER}tokens: 4 responses · 40 in · 168 out · $0.0009 · context 1% of 200k\n"
        )
    );
    assert_eq!(ws.read("project/notes.txt"), "final\n");
    assert_gone(&ws);
}

/// A tool a wildcard offers over a limit is told the key to raise, its
/// own; and that key can be set, alone, for that tool: it once made the
/// config refuse to load (issue 34).
#[test]
fn a_wildcard_tools_limit_names_its_own_key_which_can_be_set() {
    let wildcard =
        "[conversation.tools.'test.*']\nsource = \"mcp.test\"\npolicy.run = \"unattended\"\n";
    let call = |settings: &str, bytes: usize| {
        let ws = workspace("", &format!("{wildcard}\n{settings}"));
        let server = TestServer::start(vec![
            tool("toolu_1", "huge", &format!(r#"{{"bytes": {bytes}}}"#)),
            text("Ok."),
        ]);
        let run = query(&ws, &server);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(!run.stderr.contains("warning"), "{}", run.stderr);
        assert_gone(&ws);
        let (status, content) = common::query::responses(&common::query::stored(&ws))
            .pop()
            .unwrap();
        if status == "success" {
            assert_eq!(content.len(), bytes);
            return status;
        }
        format!("{status}: {content}")
    };
    let over = |bytes: usize, limit: usize, key: &str| {
        format!(
            "error: MCP server `test` answered the call to `huge` with a result of {bytes} bytes, more than the {limit} this tool may return ({key})"
        )
    };
    // Over the default: the message names the tool's own key.
    assert_eq!(
        call("", 1_100_000),
        over(
            1_100_000,
            1_048_576,
            "conversation.tools.huge.max_output_bytes"
        )
    );
    // That key, alone, sets the tool's limit over the wildcard's and the
    // `'*'` entry's (the wildcard's policy still applies: it ran unasked),
    // higher or lower.
    let defaults = "[conversation.tools.'*']\nmax_output_bytes = 1000\n";
    assert_eq!(
        call(
            &format!("{defaults}\n[conversation.tools.huge]\nmax_output_bytes = 3000\n"),
            2000
        ),
        "success"
    );
    assert_eq!(
        call("[conversation.tools.huge]\nmax_output_bytes = 1000\n", 2000),
        over(2000, 1000, "conversation.tools.huge.max_output_bytes")
    );
}
