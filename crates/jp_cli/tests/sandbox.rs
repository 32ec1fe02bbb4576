//! The sandbox of every process jp starts (issue 36), through the real
//! `jp` binary: what of jp's environment a local tool, the default tools'
//! `jp tool ...` children and an MCP server over stdio get.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::mcp::{unattended, workspace};
use common::providers::{Item, anthropic, text_reply, tool_reply};
use common::query::{initialized, query_command, responses, stored};
use jp_test_server::{Reply, TestServer};

const MODEL: &str = "anthropic/claude-haiku-4-5";

/// Variables in jp's environment besides the test harness's own: a
/// provider key is there already (`ANTHROPIC_API_KEY`).
const MORE_ENV: [(&str, &str); 5] = [
    ("FOO", "bar"),
    ("GITHUB_TOKEN", "ghp_secret"),
    ("DB_PASSWORD", "hunter2"),
    ("LC_ALL", "C"),
    ("EDITOR", "vi"),
];

/// A local tool that answers with the sorted names of its environment.
fn env_tool(name: &str, sandbox_env: &str) -> String {
    let script = r#"cat >/dev/null; printf '{"type":"success","content":"%s"}' "$(env | cut -d= -f1 | LC_ALL=C sort | tr '\n' ' ')""#;
    format!(
        "[conversation.tools.{name}]\ncommand = [\"sh\", \"-c\", {}]\npolicy.run = \"unattended\"\nsandbox.env = [{sandbox_env}]\n",
        serde_json::Value::String(script.to_owned())
    )
}

fn run(ws: &common::Workspace, server: &TestServer, extra: &[&str]) {
    let mut command = query_command(ws, server, MODEL, extra, "go");
    command.envs(MORE_ENV);
    let run = ws.run_of(command.output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn a_local_tool_gets_the_allowlist_and_what_its_sandbox_names_never_a_key() {
    let ws = initialized();
    ws.write(
        "project/.jp/tools.toml",
        &format!(
            "[conversation.sandbox]\nenv = [\"FOO\"]\n\n{}{}",
            env_tool("plain", ""),
            env_tool("github", "\"GITHUB_TOKEN\"")
        ),
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Tool("toolu_1", "plain", "{}"),
                Item::Tool("toolu_2", "github", "{}"),
            ],
            "tool_use",
            false,
        )),
        text_reply("Done."),
    ]);
    run(&ws, &server, &["--cfg", "@.jp/tools.toml"]);
    assert_eq!(
        responses(&stored(&ws)),
        [
            (
                "success".to_owned(),
                "FOO HOME JP_TOOL_RUN_ID LC_ALL PATH PWD TMPDIR ".to_owned()
            ),
            (
                "success".to_owned(),
                "FOO GITHUB_TOKEN HOME JP_TOOL_RUN_ID LC_ALL PATH PWD TMPDIR ".to_owned()
            ),
        ]
    );
}

#[test]
fn a_program_run_command_starts_gets_what_its_tool_got() {
    let ws = initialized();
    let script = r"env | cut -d= -f1 | LC_ALL=C sort | tr '\n' ' '";
    let arguments = serde_json::json!({"program": "sh", "args": ["-c", script]});
    let server = TestServer::start(vec![
        tool_reply("toolu_1", "run_command", &arguments.to_string()),
        text_reply("Done."),
    ]);
    run(
        &ws,
        &server,
        &[
            "--cfg",
            "conversation.tools.run_command.policy.run=unattended",
        ],
    );
    let quoted = serde_json::Value::String(script.to_owned());
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "success".to_owned(),
            format!(
                "`sh -c {quoted}` exited with status 0\noutput (stdout and stderr interleaved):\nHOME JP_TOOL_RUN_ID LC_ALL PATH PWD TMPDIR "
            )
        )]
    );
}

#[test]
fn an_mcp_server_gets_the_allowlist_and_what_its_sandbox_names() {
    let ws = workspace("", &unattended("read"));
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!("{config}\n[providers.mcp.test.sandbox]\nenv = [\"DB_PASSWORD\"]\n"),
    );
    let server = TestServer::start(vec![
        tool_reply("toolu_1", "read", r#"{"path": "/proc/self/environ"}"#),
        text_reply("Done."),
    ]);
    run(&ws, &server, &[]);
    let got = responses(&stored(&ws));
    let mut names: Vec<&str> = got[0]
        .1
        .split('\0')
        .filter_map(|pair| pair.split_once('=').map(|(name, _)| name))
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "DB_PASSWORD",
            "HOME",
            "JP_TOOL_RUN_ID",
            "LC_ALL",
            "PATH",
            "TMPDIR"
        ]
    );
}

/// A grant on a sandbox is refused when the config loads, `insecure_allow`
/// or not, and so is a name in `sandbox.env` that names no variable.
#[test]
fn a_grant_on_a_sandbox_and_a_bad_name_are_config_errors() {
    let ws = common::Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        "[conversation.sandbox]
env = [\"OK_NAME\", \"NOT=A NAME\"]

[conversation.tools.tidy]
command = \"true\"

[[conversation.tools.tidy.access.config]]
path = \"conversation.tools.tidy.sandbox\"
write = \"insecure_allow\"
",
    );
    assert_eq!(
        ws.jp(&["config", "validate"]),
        common::Run {
            code: 1,
            stdout: "\
error: .jp/config.toml:8: conversation.tools.tidy.access.config[0].path: tool `tidy` is granted changes to `conversation.tools.tidy.sandbox`, a sandbox (conversation.tools.*.sandbox): no grant reaches a sandbox, a tool can never loosen one
error: .jp/config.toml:2: conversation.sandbox.env[1]: `NOT=A NAME` is not an environment variable's name (letters, digits and `_`, not starting with a digit)
"
            .into(),
            stderr: String::new(),
        }
    );
}

/// A sandbox where it would do nothing is an error, not silence: on the
/// `'*'` entry (`conversation.sandbox` is every tool's) and on an MCP
/// tool (it runs in its server's process).
#[test]
fn a_sandbox_where_it_would_do_nothing_is_a_config_error() {
    let ws = common::Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        "[conversation.tools.'*']
sandbox.env = [\"A\"]

[providers.mcp.s]
url = \"https://mcp.example.com/mcp\"

[conversation.tools.x]
source = \"mcp.s\"
sandbox.env = [\"B\"]
",
    );
    assert_eq!(
        ws.jp(&["config", "validate"]),
        common::Run {
            code: 1,
            stdout: "\
error: .jp/config.toml:2: conversation.tools.'*'.sandbox: cannot be set for all tools here; `conversation.sandbox` is every tool's (and every MCP server's)
error: .jp/config.toml:9: conversation.tools.x.sandbox: an MCP tool runs in its server's process: set `providers.mcp.s.sandbox` instead
"
            .into(),
            stderr: String::new(),
        }
    );
}

/// The process jp starts beside each tool to clean up after it (the
/// sentinel) is one a tool can read: it holds none of jp's keys either.
#[cfg(target_os = "linux")]
#[test]
fn the_sentinel_beside_a_tool_holds_none_of_jps_environment() {
    let script = r#"cat >/dev/null
names=
for try in 1 2 3 4 5 6 7 8 9 10; do
  for d in /proc/[0-9]*; do
    tr '\0' ' ' < "$d/cmdline" 2>/dev/null | grep -q 'jp-tool-sentine[l]' || continue
    names=$(tr '\0' '\n' < "$d/environ" | cut -d= -f1 | LC_ALL=C sort | tr '\n' ' ')
    break 2
  done
  sleep 0.2
done
printf '{"type":"success","content":"%s"}' "$names""#;
    let ws = initialized();
    let ws_tools = format!(
        "[conversation.tools.peek]\ncommand = [\"sh\", \"-c\", {}]\npolicy.run = \"unattended\"\n",
        serde_json::Value::String(script.to_owned())
    );
    ws.write("project/.jp/tools.toml", &ws_tools);
    let server = TestServer::start(vec![
        tool_reply("toolu_1", "peek", "{}"),
        text_reply("Done."),
    ]);
    // The kernel sandbox keeps a tool from reading another process's
    // environment at all (the first run). With it off (a debug build's
    // switch) the tool reads the sentinel's: PATH alone (the second).
    run(&ws, &server, &["--cfg", "@.jp/tools.toml"]);
    assert_eq!(
        responses(&stored(&ws)),
        [("success".to_owned(), String::new())]
    );
    if cfg!(debug_assertions) {
        let ws = initialized();
        ws.write("project/.jp/tools.toml", &ws_tools);
        let server = TestServer::start(vec![
            tool_reply("toolu_1", "peek", "{}"),
            text_reply("Done."),
        ]);
        let mut command = query_command(&ws, &server, MODEL, &["--cfg", "@.jp/tools.toml"], "go");
        command.envs(MORE_ENV).env("JP_TEST_SANDBOX", "off");
        let run = ws.run_of(command.output().unwrap());
        assert_eq!(run.code, 0, "{run:?}");
        assert_eq!(
            responses(&stored(&ws)),
            [("success".to_owned(), "PATH ".to_owned())]
        );
    }
}

/// A cloned repository whose tool would get a token from your environment
/// says so where it is held, before you trust it.
#[test]
fn an_untrusted_workspace_says_what_of_your_environment_a_tool_would_get() {
    let ws = common::Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        "[conversation.tools.deploy]
command = \"./deploy.sh\"
sandbox.env = [\"GITHUB_TOKEN\"]
",
    );
    let mut command = ws.command(&["config", "get", "conversation.tools"], &[]);
    command.env_remove("JP_TRUST_WORKSPACE");
    let run = ws.run_of(command.output().unwrap());
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            0,
            "{}\n",
            "\
note: this workspace is not trusted, so jp leaves out what its config would run or decide:
note:   .jp/config.toml:1: conversation.tools.deploy
note: review them, then run `jp trust` to apply them (JP_TRUST_WORKSPACE=1 trusts it for one run)
"
        )
    );
    let mut status = ws.command(&["trust", "--status"], &[]);
    status.env_remove("JP_TRUST_WORKSPACE");
    let run = ws.run_of(status.output().unwrap());
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str()),
        (
            "\
this workspace is not trusted, so jp leaves out what its config would run or decide:
  .jp/config.toml:1: conversation.tools.deploy
      runs: ./deploy.sh
      gets from your environment: GITHUB_TOKEN
      unattended: no call (every call: ask) (jp's default)
      not a tool jp init writes
`jp trust` applies them
",
            ""
        )
    );
}

/// A path in `write` or `deny_read` that is neither absolute nor under
/// `~/` is an error, and so is `none` for every tool at once.
#[test]
fn relative_sandbox_paths_and_a_conversation_wide_none_are_config_errors() {
    let ws = common::Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        "[conversation.sandbox]
write = [\"/opt/cache\", \"build\"]
deny_read = [\"~/clients\", \"../secrets\"]
none = true
",
    );
    assert_eq!(
        ws.jp(&["config", "validate"]),
        common::Run {
            code: 1,
            stdout: "\
error: .jp/config.toml:4: conversation.sandbox.none: cannot be set for every tool; set `sandbox.none` on the one tool or MCP server that must run without a sandbox (each of its calls is then asked)
error: .jp/config.toml:2: conversation.sandbox.write[1]: `build` must be an absolute path or start with `~/`
error: .jp/config.toml:3: conversation.sandbox.deny_read[1]: `../secrets` must be an absolute path or start with `~/`
"
            .into(),
            stderr: String::new(),
        }
    );
}
