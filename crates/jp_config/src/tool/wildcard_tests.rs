#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_policy::{Mode, PolicySpec};

use super::*;
use crate::tool::ToolCommand;

fn mcp(server: &str, tool: Option<&str>) -> ToolConfig {
    ToolConfig {
        source: ToolSource::Mcp(server.to_owned()),
        tool: tool.map(str::to_owned),
        ..ToolConfig::default()
    }
}

fn servers(list: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    list.iter()
        .map(|(server, tools)| {
            (
                (*server).to_owned(),
                tools.iter().map(|t| (*t).to_owned()).collect(),
            )
        })
        .collect()
}

#[test]
fn a_wildcard_entry_names_its_server() {
    assert_eq!(wildcard_server("git.*"), Some("git"));
    assert_eq!(wildcard_server(".*"), None);
    assert_eq!(wildcard_server("git"), None);
    assert_eq!(wildcard_name("git"), "git.*");
}

#[test]
fn each_tool_gets_an_entry_named_as_the_server_names_it_unless_one_of_its_own_offers_it() {
    let mut tools = IndexMap::new();
    let mut wildcard = mcp("git", None);
    wildcard.policy.run = Some(PolicySpec::Mode(Mode::Ask));
    wildcard.timeout_secs = Some(5);
    tools.insert("git.*".to_owned(), wildcard);
    tools.insert("commit".to_owned(), mcp("git", Some("git_commit")));
    let errors = expand(
        &mut tools,
        &servers(&[("git", &["git_status", "git_commit"])]),
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        tools.keys().collect::<Vec<_>>(),
        ["git.*", "commit", "git_status"]
    );
    let status = &tools["git_status"];
    assert_eq!(status.tool.as_deref(), Some("git_status"));
    // Its limits and policy are the wildcard's, found there (so messages
    // name it); an entry of its own for the server's tool falls back to
    // them too.
    for tool in ["git_status", "commit"] {
        let limits = crate::tool::limits::run_limits(&tools, tool);
        assert_eq!(limits.timeout, std::time::Duration::from_secs(5));
        assert_eq!(
            limits.timeout_key,
            "conversation.tools.'git.*'.timeout_secs"
        );
        assert_eq!(
            limits.max_output_key,
            format!("conversation.tools.{tool}.max_output_bytes")
        );
    }
    assert_eq!(status.policy.run, None);
    assert!(status.enable);
    assert!(!tools["git.*"].enable);
}

#[test]
fn a_name_taken_by_another_tool_is_an_error_naming_both() {
    let mut tools = IndexMap::new();
    tools.insert("git.*".to_owned(), mcp("git", None));
    tools.insert("fs.*".to_owned(), mcp("fs", None));
    let local = ToolConfig {
        command: Some(ToolCommand::Line("x".to_owned())),
        ..ToolConfig::default()
    };
    tools.insert("read".to_owned(), local);
    let errors = expand(
        &mut tools,
        &servers(&[("git", &["read", "log"]), ("fs", &["log", "a.b"])]),
    );
    let errors: Vec<String> = errors
        .iter()
        .map(|(entry, message)| format!("{entry}: {message}"))
        .collect();
    assert_eq!(
        errors,
        [
            "conversation.tools.'git.*': MCP server `git`'s tool `read` has the name of conversation.tools.read, a local tool; give it an entry of its own under another name: `[conversation.tools.git_read]` with `source = \"mcp.git\"` and `tool = \"read\"` (`enable = false` leaves it out)",
            "conversation.tools.'fs.*': MCP server `fs`'s tool `log` has the name of a tool that conversation.tools.'git.*' already offers; give it an entry of its own under another name: `[conversation.tools.fs_log]` with `source = \"mcp.fs\"` and `tool = \"log\"` (`enable = false` leaves it out)",
            "conversation.tools.'fs.*': MCP server `fs`'s tool `a.b` cannot be offered under its own name (a tool name may hold only letters, digits, `_` and `-`, at most 64 of them); give it an entry of its own under another name: `[conversation.tools.fs_a_b]` with `source = \"mcp.fs\"` and `tool = \"a.b\"` (`enable = false` leaves it out)",
        ]
    );
}

#[test]
fn a_disabled_wildcard_adds_nothing() {
    let mut tools = IndexMap::new();
    let mut wildcard = mcp("git", None);
    wildcard.enable = false;
    tools.insert("git.*".to_owned(), wildcard);
    assert!(expand(&mut tools, &servers(&[("git", &["log"])])).is_empty());
    assert_eq!(tools.len(), 1);
}

/// An entry of settings alone under the name of a tool a wildcard offers
/// is that tool's own settings, over the wildcard's (issue 34: the key a
/// limit message named made the config refuse to load); an entry that
/// defines a tool still collides.
#[test]
fn an_entry_of_settings_alone_is_the_wildcard_tools_own() {
    let settings = |f: fn(&mut ToolConfig)| {
        let mut cfg = ToolConfig::default();
        f(&mut cfg);
        cfg
    };
    // (the entry, what the expanded tool then is, or the error)
    type Check = fn(&IndexMap<String, ToolConfig>);
    let table: Vec<(ToolConfig, Check)> = vec![
        (settings(|c| c.max_output_bytes = Some(10)), |tools| {
            let limits = crate::tool::limits::run_limits(tools, "status");
            assert_eq!(limits.max_output_bytes, 10);
            assert_eq!(
                limits.max_output_key,
                "conversation.tools.status.max_output_bytes"
            );
            assert_eq!(
                limits.timeout_key,
                "conversation.tools.'git.*'.timeout_secs"
            );
            assert_eq!(tools["status"].source, ToolSource::Mcp("git".into()));
            assert_eq!(tools["status"].tool.as_deref(), Some("status"));
            assert_eq!(tools["status"].policy.run, None, "the wildcard's applies");
        }),
        (
            settings(|c| c.policy.run = Some(PolicySpec::Mode(Mode::Unattended))),
            |tools| {
                assert_eq!(
                    tools["status"].policy.run,
                    Some(PolicySpec::Mode(Mode::Unattended))
                );
                let limits = crate::tool::limits::run_limits(tools, "status");
                assert_eq!(limits.timeout, std::time::Duration::from_secs(5));
            },
        ),
        (settings(|c| c.enable = false), |tools| {
            assert!(!tools["status"].enable);
        }),
        (
            settings(|c| c.summary = Some("Shows the status.".into())),
            |tools| {
                assert_eq!(
                    tools["status"].summary.as_deref(),
                    Some("Shows the status.")
                );
                assert!(tools["status"].enable);
            },
        ),
    ];
    for (entry, check) in table {
        let mut tools = IndexMap::new();
        let mut wildcard = mcp("git", None);
        wildcard.policy.run = Some(PolicySpec::Mode(Mode::Ask));
        wildcard.timeout_secs = Some(5);
        tools.insert("git.*".to_owned(), wildcard);
        tools.insert("status".to_owned(), entry);
        let errors = expand(&mut tools, &servers(&[("git", &["status", "log"])]));
        assert!(errors.is_empty(), "{errors:?}");
        check(&tools);
        assert_eq!(tools["log"].tool.as_deref(), Some("log"));
    }
    // A local tool under the name still collides.
    let mut tools = IndexMap::new();
    tools.insert("git.*".to_owned(), mcp("git", None));
    tools.insert(
        "status".to_owned(),
        settings(|c| c.command = Some(ToolCommand::Line("x".to_owned()))),
    );
    let errors = expand(&mut tools, &servers(&[("git", &["status"])]));
    assert_eq!(errors.len(), 1, "{errors:?}");
}
