//! Published MCP servers from npm and PyPI, run unmodified through the
//! real `jp` binary (issue 37): each is added with a wildcard entry alone
//! (`'NAME.*'`), as a new user would, and every one of its tools must be
//! usable; calls are checked against the server's whole schema.
//!
//! `.ci/mcp/install.sh` installs them, at the versions pinned beside it,
//! under `TARGET/mcp-servers` (or `JP_MCP_SERVERS_DIR`). Without them the
//! tests skip with the reason on stderr, unless `JP_REQUIRE_MCP_SERVERS`
//! is set (as `.ci/run` sets it): then they fail.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::Workspace;
use common::providers::{text_reply as text, tool_reply as tool};
use common::query::{initialized, query_command, responses, stored};
use jp_test_server::TestServer;

const MODEL: &str = "anthropic/claude-haiku-4-5";

/// Where `.ci/mcp/install.sh` put the servers; `None` (after saying why,
/// or failing when they are required) when it has not run.
fn servers_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("JP_MCP_SERVERS_DIR").map_or_else(
        || {
            let jp = PathBuf::from(env!("CARGO_BIN_EXE_jp"));
            jp.parent().unwrap().parent().unwrap().join("mcp-servers")
        },
        PathBuf::from,
    );
    let marker = ["npm/package-lock.json", "mcp2/lock.txt", "mcp1/lock.txt"];
    if marker.iter().all(|m| dir.join(m).is_file()) {
        return Some(dir);
    }
    let reason = format!(
        "the published MCP servers are not installed in {}; `.ci/mcp/install.sh DIR` installs them",
        dir.display()
    );
    assert!(
        std::env::var_os("JP_REQUIRE_MCP_SERVERS").is_none(),
        "JP_REQUIRE_MCP_SERVERS is set, but {reason}"
    );
    eprintln!("skipped: {reason}");
    None
}

/// One published server: its name in the config, its program (under the
/// install directory) and arguments (`{ws}` is the workspace's project
/// directory), and its environment.
struct Published {
    name: &'static str,
    program: &'static str,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

const PUBLISHED: &[Published] = &[
    Published {
        name: "git",
        program: "mcp2/bin/mcp-server-git",
        args: &["--repository", "{ws}"],
        env: &[],
    },
    Published {
        name: "excel",
        program: "mcp2/bin/excel-mcp-server",
        args: &["stdio", "--allow-dir", "{ws}"],
        env: &[],
    },
    Published {
        name: "time",
        program: "mcp2/bin/mcp-server-time",
        args: &["--local-timezone", "UTC"],
        env: &[],
    },
    Published {
        name: "fetch",
        program: "mcp2/bin/mcp-server-fetch",
        args: &[],
        env: &[],
    },
    Published {
        name: "thinking",
        program: "mcp1/bin/mcp-sequential-thinking",
        args: &[],
        env: &[("MCP_STORAGE_DIR", "{ws}/.thinking")],
    },
    Published {
        name: "treesitter",
        program: "mcp1/bin/mcp-server-tree-sitter",
        args: &[],
        env: &[],
    },
    Published {
        name: "everything",
        program: "npm/node_modules/.bin/mcp-server-everything",
        args: &["stdio"],
        env: &[],
    },
    Published {
        name: "sequential",
        program: "npm/node_modules/.bin/mcp-server-sequential-thinking",
        args: &[],
        env: &[],
    },
    Published {
        name: "memory",
        program: "npm/node_modules/.bin/mcp-server-memory",
        args: &[],
        env: &[("MEMORY_FILE_PATH", "{ws}/memory.jsonl")],
    },
    Published {
        name: "filesystem",
        program: "npm/node_modules/.bin/mcp-server-filesystem",
        args: &["{ws}"],
        env: &[],
    },
    Published {
        name: "notion",
        program: "npm/node_modules/.bin/notion-mcp-server",
        args: &[],
        env: &[],
    },
    Published {
        name: "tailwind",
        program: "npm/node_modules/.bin/tailwindcss-server",
        args: &[],
        env: &[],
    },
    Published {
        name: "playwright",
        program: "npm/node_modules/.bin/playwright-mcp",
        args: &["--headless"],
        env: &[],
    },
];

/// A `jp init` workspace whose project is a git repository with one
/// commit, with `servers` configured, each with only its wildcard entry
/// (unattended, so scripted calls run), and `more` config after them.
fn with_servers(dir: &std::path::Path, servers: &[&str], more: &str) -> Workspace {
    let ws = initialized();
    let project = ws.project().display().to_string();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(ws.project())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["commit", "-q", "--allow-empty", "-m", "first"]);
    let json = |s: &str| serde_json::Value::String(s.replace("{ws}", &project)).to_string();
    let mut config = ws.read("project/.jp/config.toml");
    for server in PUBLISHED.iter().filter(|p| servers.contains(&p.name)) {
        let mut command = vec![json(&dir.join(server.program).display().to_string())];
        command.extend(server.args.iter().map(|a| json(a)));
        let env: Vec<String> = server
            .env
            .iter()
            .map(|(k, v)| format!("{k} = {}", json(v)))
            .collect();
        config.push_str(&format!(
            "\n[providers.mcp.{name}]\ncommand = [{command}]\nenv = {{ {env} }}\nstartup_timeout_secs = 60\n\n\
             [conversation.tools.'{name}.*']\nsource = \"mcp.{name}\"\npolicy.run = \"unattended\"\n",
            name = server.name,
            command = command.join(", "),
            env = env.join(", "),
        ));
    }
    config.push_str(more);
    ws.write("project/.jp/config.toml", &config);
    ws
}

#[test]
fn every_tool_of_every_published_server_is_usable_with_a_wildcard_entry_alone() {
    let Some(dir) = servers_dir() else {
        return;
    };
    let names: Vec<&str> = PUBLISHED.iter().map(|p| p.name).collect();
    let ws = with_servers(&dir, &names, "");
    let run = ws.jp(&["mcp", "ls", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let listed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let mut total = 0;
    let mut usable = 0;
    let mut table = String::new();
    let mut refused = Vec::new();
    for server in listed["servers"].as_array().unwrap() {
        assert_eq!(server["state"], "started", "{server}");
        let tools = server["tools"].as_array().unwrap();
        let unusable: Vec<String> = tools
            .iter()
            .filter(|t| t.get("unusable").is_some())
            .map(|t| format!("{}: {}", t["name"], t["unusable"]))
            .collect();
        total += tools.len();
        usable += tools.len() - unusable.len();
        table.push_str(&format!(
            "  {:<12} {:>3} tools, {:>3} usable\n",
            server["name"].as_str().unwrap(),
            tools.len(),
            tools.len() - unusable.len()
        ));
        refused.extend(unusable);
    }
    eprintln!("published MCP servers: {usable} of {total} tools usable\n{table}");
    // The pinned versions' tools, all of them.
    assert_eq!(total, 186, "{table}");
    assert_eq!(refused, Vec::<String>::new());

    // A query's start takes every tool in (the servers' schemas merged
    // into the config, each compiled): nothing to say, nothing refused.
    let run = ws.jp(&["config", "validate", "--mcp"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
}

#[test]
fn git_log_runs_with_null_timestamps_and_a_bad_argument_is_refused_with_the_reason() {
    let Some(dir) = servers_dir() else {
        return;
    };
    let ws = with_servers(&dir, &["git"], "");
    let project = ws.project().display().to_string();
    let server = TestServer::start(vec![
        tool(
            "toolu_1",
            "git_log",
            &serde_json::json!({ "repo_path": project, "max_count": 1, "start_timestamp": null, "end_timestamp": null })
                .to_string(),
        ),
        tool(
            "toolu_2",
            "git_log",
            &serde_json::json!({ "repo_path": project, "max_count": "x" }).to_string(),
        ),
        text("Done."),
    ]);
    let output = query_command(&ws, &server, MODEL, &[], "show the log")
        .output()
        .unwrap();
    let run = ws.run_of(output);
    assert_eq!(run.code, 0, "{run:?}");
    let said = responses(&stored(&ws));
    assert_eq!(said[0].0, "success", "{said:?}");
    assert!(
        said[0].1.starts_with("Commit history:\nCommit: ") && said[0].1.contains("Message: first"),
        "{said:?}"
    );
    assert_eq!(
        said[1],
        (
            "refused".to_owned(),
            "The call was not run because its arguments do not fit the tool's parameters: \
             /max_count: \"x\" is not of type \"integer\"."
                .to_owned()
        )
    );
}

#[test]
fn calls_through_refs_type_lists_and_unions_are_checked_against_the_whole_schema() {
    let Some(dir) = servers_dir() else {
        return;
    };
    let ws = with_servers(&dir, &["excel", "sequential", "notion"], "");
    let book = ws.project().join("t.xlsx").display().to_string();
    let server = TestServer::start(vec![
        // excel: `style` is a `$ref` to `#/$defs/CellFormat`.
        tool(
            "toolu_1",
            "create_workbook",
            &serde_json::json!({ "path": book }).to_string(),
        ),
        tool(
            "toolu_2",
            "format_range",
            &serde_json::json!({ "path": book, "sheet": "Sheet", "range": "A1", "style": { "horizontal_alignment": "middle" } })
                .to_string(),
        ),
        // server-sequential-thinking: `["boolean", "string"]` flags.
        tool(
            "toolu_3",
            "sequentialthinking",
            r#"{"thought": "t", "nextThoughtNeeded": "false", "thoughtNumber": 1, "totalThoughts": 1}"#,
        ),
        tool(
            "toolu_4",
            "sequentialthinking",
            r#"{"thought": "t", "nextThoughtNeeded": 0, "thoughtNumber": 0, "totalThoughts": 1}"#,
        ),
        // notion: `parent` is an `anyOf` of a `$ref` and a string (a call
        // jp refuses never reaches the server, nor api.notion.com).
        tool(
            "toolu_5",
            "API-post-page",
            r#"{"parent": 5, "properties": {}}"#,
        ),
        text("Done."),
    ]);
    let output = query_command(&ws, &server, MODEL, &[], "use them")
        .output()
        .unwrap();
    let run = ws.run_of(output);
    assert_eq!(run.code, 0, "{run:?}");
    let said = responses(&stored(&ws));
    assert_eq!(said.len(), 5, "{said:?}");
    assert_eq!(said[0].0, "success", "{said:?}");
    assert!(ws.project().join("t.xlsx").is_file());
    let refusal = |reasons: &str| {
        (
            "refused".to_owned(),
            format!(
                "The call was not run because its arguments do not fit the tool's parameters: {reasons}."
            ),
        )
    };
    assert_eq!(
        said[1],
        refusal(
            "/style/horizontal_alignment: expected one of \"general\", \"left\", \"center\", \
             \"right\", \"fill\", \"justify\", found \"middle\""
        )
    );
    assert_eq!(said[2].0, "success", "{said:?}");
    // Refused as soon as the first bad value is complete (RFD D26).
    assert_eq!(
        said[3],
        refusal(
            "/nextThoughtNeeded: 0 is not of types \"boolean\", \"string\". jp stopped your \
             response after 45 B of this call's arguments"
        )
    );
    assert_eq!(said[4].0, "refused", "{said:?}");
    assert!(
        said[4].1.contains(
            "/parent: 5 is not valid under any of the schemas listed in the 'anyOf' keyword"
        ),
        "{said:?}"
    );
}
