#![allow(clippy::unwrap_used)]

use super::*;

fn row(name: &str, source: &str, run: &str, result: &str, notes: &[&str]) -> Row {
    Row {
        name: name.into(),
        source: source.into(),
        run: run.into(),
        result: result.into(),
        notes: notes.iter().map(|note| (*note).to_owned()).collect(),
    }
}

#[test]
fn the_table_is_aligned_and_names_the_withheld_tools_once() {
    let rows = [
        row("fs_read_file", "builtin", "unattended", "unattended", &[]),
        row(
            "deploy",
            "local",
            "2 rules, else ask",
            "ask",
            &["disabled", "stateful: once"],
        ),
    ];
    assert_eq!(
        lines(&rows, &["deploy".into(), "lint".into()]),
        [
            "tool          source   run                result",
            "fs_read_file  builtin  unattended         unattended",
            "deploy        local    2 rules, else ask  ask         disabled; stateful: once",
            "this workspace's config also sets deploy, lint, left out until you trust it (`jp trust`)",
        ]
    );
}

#[test]
fn no_tools() {
    assert_eq!(lines(&[], &[]), ["no tools are configured"]);
}

/// The config a trusted workspace with `toml` loads to.
fn config(toml: &str) -> AppConfig {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".jp")).unwrap();
    std::fs::write(dir.path().join(".jp/config.toml"), toml).unwrap();
    jp_config::load::load(&jp_config::load::LoadOptions {
        cwd: dir.path().to_path_buf(),
        trust: jp_config::trust::WorkspaceTrust::Trusted,
        ..jp_config::load::LoadOptions::default()
    })
    .unwrap()
    .config
}

#[test]
fn policies_in_short() {
    let config = config(
        r#"
[conversation.tools.'*']
policy.run = "skip"

[conversation.tools.save]
command = ["true"]
parameters.path = { type = "path", required = true }
policy.run = [{ arg = "/path", prefix = "src/", mode = "unattended" }, { mode = "edit" }]
policy.result = [{ arg = "/path", prefix = ".env", mode = "skip" }]

[conversation.tools.quiet]
command = ["true"]
policy.result = "ask"

[providers.mcp.git]
command = ["git-mcp-server"]

[conversation.tools.'git.*']
source = "mcp.git"
policy.run = [{ arg = "/repo_path", prefix = "src/", mode = "unattended" }, { arg = "/repo_path", prefix = "docs/", mode = "ask" }]
"#,
    );
    assert_eq!(
        short(&config, "save", PolicyField::Run),
        "1 rule, else edit"
    );
    assert_eq!(
        short(&config, "save", PolicyField::Result),
        "1 rule, else ask"
    );
    // The '*' entry's, and the built-in default.
    assert_eq!(short(&config, "quiet", PolicyField::Run), "skip");
    assert_eq!(short(&config, "quiet", PolicyField::Result), "ask");
    assert_eq!(short(&config, "nothing", PolicyField::Run), "");
    // A wildcard's rules name parameters its server's tools have, unknown
    // until it runs: counted as written, with the implicit fallback.
    assert_eq!(
        short(&config, "git.*", PolicyField::Run),
        "2 rules, else ask"
    );
    assert_eq!(
        rows(&config).unwrap().last(),
        Some(&Row {
            name: "git.*".into(),
            source: "mcp.git".into(),
            run: "2 rules, else ask".into(),
            result: "unattended".into(),
            notes: vec!["every tool of MCP server git (not started to list them)".into()],
        })
    );
}
