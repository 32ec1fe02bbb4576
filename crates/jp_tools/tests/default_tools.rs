//! `DEFAULT_TOOLS_TOML` is what `jp init` writes into `.jp/config.toml`:
//! it must load through jp's config loader as that file, cleanly, with the
//! parameters and policies meant.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use jp_config::load::{LoadOptions, Loaded, load};
use jp_config::tool::effective::effective_policy;
use jp_config::tool::{ParamType, ToolCommand, ToolParameters};
use jp_policy::{Mode, PolicyField};
use jp_tools::{DEFAULT_TOOLS_TOML, NAMES};

/// Loads a workspace whose `.jp/config.toml` is `DEFAULT_TOOLS_TOML`.
fn load_defaults(project: &Path) -> Loaded {
    load_text(project, DEFAULT_TOOLS_TOML)
}

/// Loads a workspace whose `.jp/config.toml` is `text`.
fn load_text(project: &Path, text: &str) -> Loaded {
    std::fs::create_dir_all(project.join(".jp")).unwrap();
    std::fs::write(project.join(".jp/config.toml"), text).unwrap();
    let options = LoadOptions {
        cwd: project.to_path_buf(),
        user_config: None,
        // The workspace's own file is what these tests are about.
        trust: jp_config::trust::WorkspaceTrust::Trusted,
        ..LoadOptions::default()
    };
    match load(&options) {
        Ok(loaded) => loaded,
        Err(e) => panic!("the default tools should load:\n{e}"),
    }
}

fn names(parameters: &ToolParameters) -> Vec<&str> {
    parameters.keys().map(String::as_str).collect()
}

#[test]
fn loads_without_errors_or_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load_defaults(dir.path());
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings, Vec::<String>::new());

    let tools = &loaded.config.conversation.tools;
    let configured: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(configured, NAMES);
    for name in NAMES {
        let tool = &tools[name];
        assert_eq!(
            tool.command,
            Some(ToolCommand::Argv(vec![
                "jp".into(),
                "tool".into(),
                name.into()
            ])),
            "{name}"
        );
        assert!(tool.enable, "{name}");
        assert!(
            tool.summary.as_deref().is_some_and(|s| !s.is_empty()),
            "{name}"
        );
        assert!(
            tool.description.as_deref().is_some_and(|s| !s.is_empty()),
            "{name}"
        );
        for field in [PolicyField::Run, PolicyField::Result] {
            let (_, compiled) = effective_policy(&loaded.config, name, field).unwrap();
            assert_eq!(compiled.errors, [], "{name} {field:?}");
            assert_eq!(compiled.warnings, [], "{name} {field:?}");
        }
    }
}

#[test]
fn parameters_are_in_the_intended_order_and_types() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load_defaults(dir.path());
    let tools = &loaded.config.conversation.tools;
    let params = |name: &str| &tools[name].parameters;

    assert_eq!(names(params("fs_read_file")), ["path"]);
    assert_eq!(names(params("fs_list_files")), ["prefixes", "extensions"]);
    assert_eq!(
        names(params("fs_grep")),
        ["pattern", "paths", "glob", "case_insensitive", "context"]
    );
    assert_eq!(names(params("fs_glob")), ["pattern", "sort"]);
    assert_eq!(names(params("fs_create_file")), ["path", "content"]);
    assert_eq!(names(params("fs_modify_file")), ["path", "patterns"]);
    assert_eq!(names(params("fs_delete_file")), ["path"]);
    assert_eq!(
        names(params("run_command")),
        ["program", "args", "cwd", "timeout_secs"]
    );

    for name in [
        "fs_read_file",
        "fs_create_file",
        "fs_modify_file",
        "fs_delete_file",
    ] {
        let path = &params(name)["path"];
        assert_eq!(path.kind, ParamType::Path, "{name}");
        assert!(path.required, "{name}");
    }
    let prefixes = &params("fs_list_files")["prefixes"];
    assert_eq!(prefixes.kind, ParamType::Array);
    assert!(!prefixes.required);
    assert_eq!(prefixes.items.as_ref().unwrap().kind, ParamType::Path);

    let grep = params("fs_grep");
    assert!(grep["pattern"].required && grep["pattern"].kind == ParamType::String);
    assert_eq!(grep["paths"].items.as_ref().unwrap().kind, ParamType::Path);
    assert_eq!(grep["glob"].kind, ParamType::String);
    assert_eq!(grep["case_insensitive"].kind, ParamType::Boolean);
    assert_eq!(grep["context"].kind, ParamType::Integer);
    assert!(
        ["paths", "glob", "case_insensitive", "context"]
            .iter()
            .all(|name| !grep[*name].required)
    );
    assert!(params("fs_glob")["pattern"].required);
    assert!(!params("fs_glob")["sort"].required);

    let patterns = &params("fs_modify_file")["patterns"];
    assert!(patterns.required);
    let item = patterns.items.as_ref().unwrap();
    assert_eq!(item.kind, ParamType::Object);
    assert_eq!(names(&item.properties), ["old", "new"]);
    assert!(
        item.properties
            .values()
            .all(|p| p.kind == ParamType::String && p.required)
    );

    // What the model sees for fs_modify_file.
    assert_eq!(
        jp_config::tool::parameters_json_schema(params("fs_modify_file")),
        serde_json::json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The file to change, relative to the workspace root."
                },
                "patterns": {
                    "type": "array",
                    "description": "The replacements, applied in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "old": {
                                "type": "string",
                                "description": "The exact text to replace; it must occur exactly once."
                            },
                            "new": { "type": "string", "description": "The text that replaces it." }
                        },
                        "required": ["old", "new"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["path", "patterns"],
            "additionalProperties": false
        })
    );
}

#[test]
fn run_policies_decide_as_intended() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load_defaults(dir.path());
    let decide = |tool: &str, args: serde_json::Value| {
        let (_, compiled) = effective_policy(&loaded.config, tool, PolicyField::Run).unwrap();
        compiled.policy.unwrap().evaluate(&args, dir.path()).mode
    };
    let path = |p: &str| serde_json::json!({ "path": p, "content": "" });

    assert_eq!(decide("fs_read_file", path("anything")), Mode::Unattended);
    assert_eq!(
        decide("fs_list_files", serde_json::json!({})),
        Mode::Unattended
    );
    assert_eq!(
        decide("fs_create_file", path("src/new.rs")),
        Mode::Unattended
    );
    assert_eq!(
        decide("fs_create_file", path("./src/a/b.rs")),
        Mode::Unattended
    );
    assert_eq!(decide("fs_create_file", path("src-old/x.rs")), Mode::Ask);
    assert_eq!(
        decide("fs_create_file", path("src/../.jp/config.toml")),
        Mode::Ask
    );
    assert_eq!(
        decide("fs_create_file", path(".git/hooks/pre-commit")),
        Mode::Ask
    );
    assert_eq!(decide("fs_create_file", path("README.md")), Mode::Ask);
    assert_eq!(decide("fs_create_file", path("../src/x.rs")), Mode::Ask);
    assert_eq!(decide("fs_modify_file", path("src/lib.rs")), Mode::Ask);
    assert_eq!(decide("fs_delete_file", path("src/lib.rs")), Mode::Ask);
}

/// Searching runs unattended, except where a `paths` entry or the glob
/// names files that may hold secrets (which are otherwise not searched).
#[test]
fn search_policies_ask_only_for_secrets_named() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load_defaults(dir.path());
    let decide = |tool: &str, args: serde_json::Value| {
        let (_, compiled) = effective_policy(&loaded.config, tool, PolicyField::Run).unwrap();
        compiled.policy.unwrap().evaluate(&args, dir.path()).mode
    };
    let grep = |args: serde_json::Value| decide("fs_grep", args);
    let glob = |pattern: &str| decide("fs_glob", serde_json::json!({ "pattern": pattern }));

    for unattended in [
        serde_json::json!({ "pattern": "fn main" }),
        serde_json::json!({ "pattern": "password", "case_insensitive": true, "context": 3 }),
        serde_json::json!({ "pattern": "x", "paths": ["src", "docs/env.md"], "glob": "*.rs" }),
        serde_json::json!({ "pattern": "x", "paths": ["src/keys.rs", "ssh"] }),
    ] {
        assert_eq!(grep(unattended.clone()), Mode::Unattended, "{unattended}");
    }
    for asks in [
        serde_json::json!({ "pattern": "x", "paths": [".env"] }),
        serde_json::json!({ "pattern": "x", "paths": ["src", "config/.env.production"] }),
        serde_json::json!({ "pattern": "x", "paths": ["src/../certs/server.pem"] }),
        serde_json::json!({ "pattern": "x", "paths": [".ssh"] }),
        serde_json::json!({ "pattern": "x", "paths": ["home/.aws/config"] }),
        serde_json::json!({ "pattern": "x", "paths": ["deploy/id_ed25519"] }),
        serde_json::json!({ "pattern": "x", "glob": "**/.env*" }),
        serde_json::json!({ "pattern": "x", "glob": "*.PEM" }),
        serde_json::json!({ "pattern": "x", "glob": "**/credentials.json" }),
        serde_json::json!({ "pattern": "x", "glob": ".ssh/*" }),
    ] {
        assert_eq!(grep(asks.clone()), Mode::Ask, "{asks}");
    }
    for unattended in ["*.rs", "src/**/*.toml", "**/*", ".github/**"] {
        assert_eq!(glob(unattended), Mode::Unattended, "{unattended}");
    }
    for asks in [
        "**/.env",
        ".env.*",
        "*.key",
        "id_rsa*",
        "**/.ssh/**",
        "secrets.yaml",
    ] {
        assert_eq!(glob(asks), Mode::Ask, "{asks}");
    }
}

#[test]
fn run_command_is_unattended_only_for_read_only_git_commands_in_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load_defaults(dir.path());
    let tools = &loaded.config.conversation.tools;
    assert_eq!(tools["run_command"].timeout_secs, Some(610));
    assert!(tools["run_command"].timeout_secs > Some(jp_tools::MAX_TIMEOUT_SECS));
    let params = &tools["run_command"].parameters;
    assert_eq!(params["program"].kind, ParamType::String);
    assert!(params["program"].required);
    assert_eq!(params["args"].kind, ParamType::Array);
    assert_eq!(
        params["args"].items.as_ref().unwrap().kind,
        ParamType::String
    );
    assert_eq!(params["cwd"].kind, ParamType::Path);
    assert_eq!(params["timeout_secs"].kind, ParamType::Integer);
    assert!(!params["args"].required && !params["cwd"].required);

    let (_, compiled) = effective_policy(&loaded.config, "run_command", PolicyField::Run).unwrap();
    let policy = compiled.policy.unwrap();
    let decide = |args: serde_json::Value| policy.evaluate(&args, dir.path()).mode;
    let git = |args: &[&str]| serde_json::json!({ "program": "git", "args": args });

    for unattended in [
        &["status"][..],
        &["status", "--short", "--branch"],
        &["diff"],
        &["diff", "--cached", "--stat"],
        &["log", "--oneline", "-20"],
        &["log", "--max-count=5", "-p"],
        &["--version"],
    ] {
        assert_eq!(decide(git(unattended)), Mode::Unattended, "{unattended:?}");
    }
    for asks in [
        &[][..],
        &["push"],
        &["push", "--force"],
        &["status", "push"],
        &["commit", "-m", "x"],
        &["-c", "core.pager=sh", "diff"],
        &["-c", "core.fsmonitor=rm", "status"],
        &["-C", "..", "status"],
        &["diff", "--output=../x"],
        &["diff", "--no-index", "/etc/passwd", "/dev/null"],
        &["diff", "src/lib.rs"],
        &["diff", "--ext-diff"],
        &["log", "main"],
        &["log", "-n", "5"],
        &["status;", "rm", "-rf", "/"],
        &["status", ""],
        &["Status"],
    ] {
        assert_eq!(decide(git(asks)), Mode::Ask, "{asks:?}");
    }
    for program in [
        "cargo",
        "sh",
        "/usr/bin/git",
        "./git",
        "gitk",
        "g",
        "gi",
        "git ",
        "Git",
        "rm",
    ] {
        assert_eq!(
            decide(serde_json::json!({ "program": program, "args": ["status"] })),
            Mode::Ask,
            "{program}"
        );
    }
    for cargo in [
        &["test"][..],
        &["check"],
        &["--version"],
        &["test", "--config", "x"],
    ] {
        assert_eq!(
            decide(serde_json::json!({ "program": "cargo", "args": cargo })),
            Mode::Ask,
            "{cargo:?}"
        );
    }
    for cwd in ["src", ".", "..", "/"] {
        assert_eq!(
            decide(serde_json::json!({ "program": "git", "args": ["status"], "cwd": cwd })),
            Mode::Ask,
            "{cwd}"
        );
    }
}

/// `jp init --sandboxed-commands`: the same tools, `run_command`
/// unattended, and `run_command_online` (the same program, with network)
/// asking.
#[test]
fn the_sandboxed_commands_variant_loads_and_differs_only_in_running_commands() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load_text(dir.path(), jp_tools::SANDBOXED_TOOLS_TOML);
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings, Vec::<String>::new());
    let tools = &loaded.config.conversation.tools;
    let configured: Vec<&str> = tools.keys().map(String::as_str).collect();
    let mut expected = NAMES.to_vec();
    expected.push("run_command_online");
    assert_eq!(configured, expected);
    let mode = |name: &str| {
        let (_, compiled) = effective_policy(&loaded.config, name, PolicyField::Run).unwrap();
        let args = serde_json::json!({"program": "cargo", "args": ["test"]});
        compiled.policy.unwrap().evaluate(&args, dir.path()).mode
    };
    assert_eq!(mode("run_command"), Mode::Unattended);
    assert_eq!(mode("run_command_online"), Mode::Ask);
    let online = &tools["run_command_online"];
    assert_eq!(online.command, tools["run_command"].command);
    assert_eq!(online.sandbox.network, Some(true));
    assert_eq!(tools["run_command"].sandbox.network, None);
    assert_eq!(
        names(&online.parameters),
        names(&tools["run_command"].parameters)
    );
}
