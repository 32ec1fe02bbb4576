//! `jp config ...` through the real binary in a temporary workspace.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{FS_MODIFY_FILE, Run, Workspace};

fn ok(stdout: &str) -> Run {
    Run {
        code: 0,
        stdout: stdout.into(),
        stderr: String::new(),
    }
}

#[test]
fn validate_reports_every_problem_with_file_line_and_key() {
    let ws = Workspace::new();
    ws.write("project/.jp/tools/fs.toml", FS_MODIFY_FILE);
    assert_eq!(
        ws.jp(&["config", "validate"]),
        ok("config is valid (default)\n")
    );

    ws.write(
        "project/.jp/config.toml",
        r#"extends = ["tools/*.toml"]

[assistant.model.parameters]
temperature = 2.5

[conversation.tools.fs_modify_file.policy]
run = [
    { arg = "/path", prefix = "src/", mode = "ask" },
    { arg = "/path", prefix = "./src/sensitive", mode = "skip" },
    { arg = "/path", pattern = "(?!x)", mode = "ask" },
    { arg = "/start_line", minimum = nan, mode = "ask" },
    { mode = "ask" },
]
"#,
    );
    let run = ws.jp(&["config", "validate"]);
    assert_eq!(
        run,
        Run {
            code: 1,
            stdout: "\
error: .jp/config.toml:4: assistant.model.parameters.temperature: must be a number from 0 to 2, found 2.5
error: .jp/config.toml:9: conversation.tools.fs_modify_file.policy.run[1]: can never match: policy.run[0] (prefix \"src/\" on /path) matches everything it matches; move it above policy.run[0] or remove it
error: .jp/config.toml:10: conversation.tools.fs_modify_file.policy.run[2]: \"pattern\" \"(?!x)\" uses look-around ((?=, (?!, (?<= or (?<!), which Rust regex syntax does not support
error: .jp/config.toml:11: conversation.tools.fs_modify_file.policy.run[3]: \"minimum\" is nan, inf or null; only finite values are allowed
"
            .into(),
            stderr: String::new(),
        }
    );
}

#[test]
fn validate_passes_with_warnings_and_names_deprecations() {
    let ws = Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        &format!("{FS_MODIFY_FILE}\n[conversation.tools.fs_modify_file.policy]\nrun = \"ask\"\n")
            .replacen("summary = ", "run = \"unattended\"\nsummary = ", 1),
    );
    assert_eq!(
        ws.jp(&["config", "validate"]),
        ok(
            "warning: .jp/config.toml:3: conversation.tools.fs_modify_file.run: deprecated and ignored because `policy.run` is also set; remove it\nconfig is valid (default, .jp/config.toml)\n"
        )
    );
}

#[test]
fn show_lists_every_value_with_its_source() {
    let ws = Workspace::new();
    ws.write("xdg/jp/config.toml", "[assistant.model]\nid = \"haiku\"\n");
    ws.write(
        "project/.jp/config.toml",
        "[assistant]\ninstructions = [\"Be brief.\"]\n\n[style]\ncolor = \"never\"\n",
    );
    let run = ws.jp_with_env(
        &[
            "config",
            "show",
            "--cfg",
            "assistant.model.parameters.max_tokens=512",
        ],
        &[("JP_CFG_STYLE__SHOW_REASONING", "true")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!(run.stdout);

    let run = ws.jp(&["config", "show", "--format", "json"]);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["config"]["assistant"]["model"]["id"], "haiku");
    assert_eq!(
        out["sources"]["assistant.model.id"],
        serde_json::json!(["<tmp>/xdg/jp/config.toml"])
    );
    assert_eq!(
        out["sources"]["style.color"],
        serde_json::json!([".jp/config.toml"])
    );
    assert_eq!(
        out["sources"]["style.show_reasoning"],
        serde_json::json!(["default"])
    );
    // A flag is named as the flag, not as the assignment it makes.
    let run = ws.jp(&["--color", "always", "config", "show", "--format", "json"]);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["config"]["style"]["color"], "always");
    assert_eq!(
        out["sources"]["style.color"],
        serde_json::json!(["--color always"])
    );
}

#[test]
fn get_prints_strings_bare_and_the_rest_as_json() {
    let ws = Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        &format!("{FS_MODIFY_FILE}\n[conversation.tools.fs_modify_file.policy]\nrun = [{{ arg = \"/path\", prefix = \"src/\", mode = \"unattended\" }}, {{ mode = \"ask\" }}]\n"),
    );
    assert_eq!(
        ws.jp(&["config", "get", "assistant.model.id"]),
        ok("anthropic/claude-sonnet-4-5\n")
    );
    assert_eq!(
        ws.jp(&["config", "get", "assistant.model.parameters.max_tokens"]),
        ok("8192\n")
    );
    assert_eq!(
        ws.jp(&[
            "config",
            "get",
            "conversation.tools.fs_modify_file.policy.run"
        ]),
        ok(
            "[\n  {\n    \"arg\": \"/path\",\n    \"prefix\": \"src/\",\n    \"mode\": \"unattended\"\n  },\n  {\n    \"mode\": \"ask\"\n  }\n]\n"
        )
    );
    let run = ws.jp(&["config", "get", "assistant.modle"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (1, "error: no config key `assistant.modle`\n")
    );
}

#[test]
fn set_edits_the_workspace_file_and_keeps_comments() {
    let ws = Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        "# Team settings.\n[assistant.model]\n# Our default model.\nid = \"anthropic/claude-sonnet-4-5\" # fast enough\n",
    );
    assert_eq!(
        ws.jp(&["config", "set", "assistant.model.id=ollama/qwen3.5:9b"]),
        ok("assistant.model.id = \"ollama/qwen3.5:9b\" in .jp/config.toml\n")
    );
    assert_eq!(
        ws.jp(&[
            "config",
            "set",
            "assistant.model.parameters.max_tokens=1024"
        ]),
        ok("assistant.model.parameters.max_tokens = 1024 in .jp/config.toml\n")
    );
    assert_eq!(
        ws.read("project/.jp/config.toml"),
        "# Team settings.\n[assistant.model]\n# Our default model.\nid = \"ollama/qwen3.5:9b\" # fast enough\n\n[assistant.model.parameters]\nmax_tokens = 1024\n"
    );
    assert_eq!(
        ws.jp(&[
            "config",
            "set",
            "conversation.tools.'*'.policy.run:=[{\"mode\":\"ask\"}]"
        ]),
        ok("conversation.tools.'*'.policy.run = [{\"mode\":\"ask\"}] in .jp/config.toml\n")
    );
    assert_eq!(
        ws.jp(&["config", "get", "conversation.tools.'*'.policy.run"])
            .stdout,
        "[\n  {\n    \"mode\": \"ask\"\n  }\n]\n"
    );
}

#[test]
fn set_refuses_a_change_that_would_break_the_config() {
    let ws = Workspace::new();
    let before = "[style]\ncolor = \"never\"\n";
    ws.write("project/.jp/config.toml", before);
    let run = ws.jp(&["config", "set", "style.color=sometimes"]);
    assert_eq!(
        run,
        Run {
            code: 1,
            stdout: String::new(),
            stderr: "error: .jp/config.toml:2: style.color: unknown variant `sometimes`, expected one of `auto`, `always`, `never`\nerror: .jp/config.toml is unchanged: the config would not be valid\n".into(),
        }
    );
    // A flag that sets the same key does not hide the file's bad value.
    let run = ws.jp(&[
        "--color",
        "always",
        "config",
        "set",
        "style.color=sometimes",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let run = ws.jp(&[
        "config",
        "set",
        "conversation.tools.'*'.policy.run:=[{\"mode\":\"ask\"},{\"mode\":\"skip\"}]",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(ws.read("project/.jp/config.toml"), before);
}

#[test]
fn set_user_creates_the_file_and_outside_a_workspace_needs_it() {
    let ws = Workspace::new();
    std::fs::remove_dir_all(ws.project().join(".jp")).unwrap();
    let run = ws.jp(&["config", "set", "style.color=never"]);
    assert_eq!(
        run,
        Run {
            code: 2,
            stdout: String::new(),
            stderr: "error: not in a workspace (no .jp directory here or above); run `jp init` at the project root, or use --user\n".into(),
        }
    );
    assert_eq!(
        ws.jp(&["config", "set", "--user", "style.color=never"]),
        ok("style.color = \"never\" in <tmp>/xdg/jp/config.toml\n")
    );
    assert_eq!(
        ws.read("xdg/jp/config.toml"),
        "[style]\ncolor = \"never\"\n"
    );
}

#[cfg(unix)]
#[test]
fn set_on_a_linked_config_edits_the_file_it_points_to_and_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let ws = Workspace::new();
    // A dotfiles checkout, linked in through two links, one relative.
    ws.write(
        "dotfiles/jp.toml",
        "# Mine.\n[assistant.model]\n# The one I like.\nid = \"anthropic/claude-sonnet-4-5\"\nalias = \"old\"\n",
    );
    let real = ws.root().join("dotfiles/jp.toml");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink(&real, ws.root().join("dotfiles/current.toml")).unwrap();
    std::fs::create_dir_all(ws.root().join("xdg/jp")).unwrap();
    std::os::unix::fs::symlink(
        "../../dotfiles/current.toml",
        ws.root().join("xdg/jp/config.toml"),
    )
    .unwrap();

    assert_eq!(
        ws.jp(&[
            "config",
            "set",
            "--user",
            "assistant.model:={\"id\":\"ollama/qwen3.5:9b\",\"parameters\":{\"max_tokens\":512}}"
        ]),
        ok(
            "assistant.model = {\"id\":\"ollama/qwen3.5:9b\",\"parameters\":{\"max_tokens\":512}} in <tmp>/xdg/jp/config.toml\n"
        )
    );
    // Both links are still links, the file they end in has the change, its
    // comments and its mode.
    for link in ["xdg/jp/config.toml", "dotfiles/current.toml"] {
        let meta = std::fs::symlink_metadata(ws.root().join(link)).unwrap();
        assert!(meta.file_type().is_symlink(), "{link} is no longer a link");
    }
    assert_eq!(
        ws.read("dotfiles/jp.toml"),
        "# Mine.\n[assistant.model]\n# The one I like.\nid = \"ollama/qwen3.5:9b\"\nparameters = { max_tokens = 512 }\n"
    );
    let mode = std::fs::metadata(&real).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let names: Vec<String> = std::fs::read_dir(ws.root().join("dotfiles"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "a temporary file was left: {names:?}");

    // A link to a file that does not exist yet: the file is created there.
    std::fs::remove_file(&real).unwrap();
    assert_eq!(
        ws.jp(&["config", "set", "--user", "style.color=never"]),
        ok("style.color = \"never\" in <tmp>/xdg/jp/config.toml\n")
    );
    assert_eq!(ws.read("dotfiles/jp.toml"), "[style]\ncolor = \"never\"\n");
    assert!(
        std::fs::symlink_metadata(ws.root().join("xdg/jp/config.toml"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn the_model_advice_jp_init_prints_works() {
    let ws = Workspace::new();
    std::fs::remove_dir_all(ws.project().join(".jp")).unwrap();
    let init = ws.jp(&["init", "--yes"]);
    assert_eq!(init.code, 0, "{init:?}");
    let advice = init
        .stdout
        .split_once("change it with `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(command, _)| command.replace("PROVIDER/NAME", "scripted/demo"))
        .unwrap();
    let args: Vec<&str> = advice.split_whitespace().collect();
    assert_eq!(args[0], "jp");
    assert_eq!(
        ws.jp(&args[1..]),
        ok("assistant.model.id = \"scripted/demo\" in .jp/config.toml\n")
    );
}

#[test]
fn schema_describes_config_files() {
    let ws = Workspace::new();
    let run = ws.jp(&["config", "schema"]);
    assert_eq!(run.code, 0);
    let schema: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(
        schema["definitions"]["Mode"]["enum"],
        serde_json::json!(["unattended", "ask", "edit", "skip"])
    );
    assert_eq!(
        schema["definitions"]["ToolParameterConfig"]["properties"]["items"]["anyOf"][0]["$ref"],
        "#/definitions/ToolParameterConfig"
    );
    // The stateful policies (`[[conversation.policies]]`): closed objects
    // with a known kind.
    assert_eq!(
        schema["definitions"]["ConversationConfig"]["properties"]["policies"]["items"]["$ref"],
        "#/definitions/StatefulPolicyConfig"
    );
    let policy = &schema["definitions"]["StatefulPolicyConfig"];
    assert_eq!(policy["additionalProperties"], false);
    let mut fields: Vec<&str> = policy["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "dependencies",
            "key",
            "kind",
            "read_tools",
            "tool",
            "when",
            "write_tools"
        ]
    );
    assert_eq!(
        schema["definitions"]["StatefulKind"]["enum"],
        serde_json::json!(["sequential", "keyed", "read_before_write"])
    );
}

#[test]
fn validate_checks_tool_names_and_limits() {
    let ws = Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        r#"[conversation.tools."bad name!"]
command = "true"

[conversation.tools.slow]
command = "sleep 1"
timeout_secs = 0

[conversation.tools.'*']
max_output_bytes = 0
"#,
    );
    assert_eq!(
        ws.jp(&["config", "validate"]),
        Run {
            code: 1,
            stdout: "\
error: .jp/config.toml:1: conversation.tools.'bad name!': a tool name may hold only letters, digits, `_` and `-`, at most 64 of them (providers refuse other names)
error: .jp/config.toml:6: conversation.tools.slow.timeout_secs: must be at least 1
error: .jp/config.toml:9: conversation.tools.'*'.max_output_bytes: must be at least 1
"
            .into(),
            stderr: String::new(),
        }
    );
}

#[test]
fn validate_checks_a_tools_own_json_schema() {
    let ws = Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        r##"[conversation.tools.remote]
command = "true"
parameters_schema = { type = "object", properties = { x = { "$ref" = "https://example.com/x.json" } } }

[conversation.tools.named]
command = "true"
parameters_schema = { type = "object", properties = { text = { type = "string" } } }
parameters.file = { type = "path" }

[conversation.tools.listed]
command = "true"
parameters_schema = ["not", "a", "schema"]

[conversation.tools.good]
command = "true"
parameters_schema = { type = "object", properties = { file = { anyOf = [{ type = "string" }, { type = "null" }] } } }
parameters.file = { type = "path" }
policy.run = [{ arg = "/file", prefix = "src/", mode = "unattended" }, { mode = "ask" }]

[providers.mcp.git]
command = ["mcp-server-git"]

[conversation.tools.git_log]
source = "mcp.git"
parameters_schema = { type = "object" }

[conversation.tools.'*']
parameters_schema = { type = "object" }
"##,
    );
    assert_eq!(
        ws.jp(&["config", "validate"]),
        Run {
            code: 1,
            stdout: "\
error: .jp/config.toml:28: conversation.tools.'*'.parameters_schema: cannot be set for all tools; `'*'` takes only enable, policy, run, result, style, timeout_secs, max_output_bytes and max_argument_bytes
error: .jp/config.toml:3: conversation.tools.remote.parameters_schema: its schema refers to another document (https://example.com/x.json), which jp does not fetch
error: .jp/config.toml:8: conversation.tools.named.parameters: names the parameter `file`, which the tool's schema does not have (it has text)
error: .jp/config.toml:12: conversation.tools.listed.parameters_schema: must be a table: a JSON Schema of the arguments object
error: .jp/config.toml:25: conversation.tools.git_log.parameters_schema: only a local tool takes a schema; an MCP tool's comes from its server (`parameters` adds to it)
"
            .into(),
            stderr: String::new(),
        }
    );
}

/// Each message names the key and what it takes, in the user's terms.
#[test]
fn config_mistakes_get_messages_in_the_users_terms() {
    let ws = Workspace::new();
    let validate = |text: &str| {
        ws.write("project/.jp/config.toml", text);
        let run = ws.jp(&["config", "validate"]);
        (run.code, run.stdout + &run.stderr)
    };
    let save = "[conversation.tools.save]\ncommand = [\"true\"]\nparameters.path = { type = \"path\", required = true }\n";

    assert_eq!(
        validate(&format!("{save}policy = \"unattended\"\n")),
        (
            1,
            "error: .jp/config.toml:4: conversation.tools.save.policy: expected a table with the \
             keys `result`, `run`, found the string \"unattended\"; a tool's policy has two \
             parts: write `policy.run = \"unattended\"` for running the tool, `policy.result = \
             \"unattended\"` for its result\n"
                .into()
        )
    );
    assert_eq!(
        validate("[style]\ncolor = 5\n"),
        (
            1,
            "error: .jp/config.toml:2: style.color: expected one of `auto`, `always`, `never`, \
             found the number 5\n"
                .into()
        )
    );
    assert_eq!(
        validate("[assistant]\nsystem_prompt = \"a\"\n\n[assistant]\nsystem_prompt = \"b\"\n"),
        (
            1,
            "error: .jp/config.toml:4: the table [assistant] is written twice (first at line 1); \
             merge the two into one\n"
                .into()
        )
    );
    assert_eq!(
        validate("extends = [\"config.toml\"]\n"),
        (
            1,
            "error: .jp/config.toml:1: extends[0]: `config.toml` is this file itself; a file \
             cannot extend itself (remove the entry)\n"
                .into()
        )
    );
    assert_eq!(
        validate(&format!(
            "{save}policy.run = [{{ mode = \"ask\" }}, {{ arg = \"/path\", prefix = \"src/\", mode = \"unattended\" }}]\n"
        )),
        (
            1,
            "error: .jp/config.toml:4: conversation.tools.save.policy.run[1]: can never match: \
             policy.run[0] (catch-all) matches every call; move the catch-all to the end or \
             remove this rule\n"
                .into()
        )
    );
    assert_eq!(
        validate(&format!(
            "{save}policy.run = [{{ arg = \"/path\", pattern = '\\.rs$', mode = \"unattended\" }}, {{ mode = \"ask\" }}]\n"
        )),
        (
            0,
            "warning: .jp/config.toml:4: conversation.tools.save.policy.run[0]: an \"unattended\" \
             pattern on a path only approves paths inside the workspace (both as written and \
             with symlinks resolved): a matching path outside it, such as ../x or /tmp/x, falls \
             through to the next rule; use prefix to say where, or an absolute prefix or const \
             to approve a place outside the workspace\nconfig is valid (default, \
             .jp/config.toml)\n"
                .into()
        )
    );
}

/// A config from a cloned repository can name a tool with an escape
/// sequence; the error quoting it must not drive the terminal.
#[test]
fn an_error_quoting_the_config_shows_its_escapes_escaped() {
    let ws = Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        "[conversation.tools.\"ec\\u001b]0;PWNED\\u0007ho\"]\ncommand = \"true\"\n",
    );
    let run = ws.jp(&["config", "show"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: .jp/config.toml:1: conversation.tools.'ec\\u{1b}]0;PWNED\\u{7}ho': a tool name may hold only letters, digits, `_` and `-`, at most 64 of them (providers refuse other names)\n"
    );
}

/// Removing is as sensitive as writing (issue 21, item 2): `delete = true`
/// where a rule reaches a sensitive path is an error like `write = true`,
/// naming the field; on an ancestor it loads (it stops short of them), and
/// `"insecure_allow"` acknowledges it. `true`/`false` still parse.
#[test]
fn validate_refuses_delete_true_where_it_reaches_a_sensitive_path() {
    let ws = Workspace::new();
    let tool = "[conversation.tools.tidy]\ncommand = \"true\"\n";
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{tool}
[[conversation.tools.tidy.access.config]]
path = \"conversation.policies\"
delete = true

[[conversation.tools.tidy.access.config]]
path = \"conversation.tools.*.style.hidden\"
write = \"insecure_allow\"
delete = true

[[conversation.tools.tidy.access.config]]
path = \"conversation.tools.*.enable\"
write = true
delete = true
"
        ),
    );
    assert_eq!(
        ws.jp(&["config", "validate"]),
        Run {
            code: 1,
            stdout: "\
error: .jp/config.toml:6: conversation.tools.tidy.access.config[0].delete: tool `tidy` grants delete = true to `conversation.policies`, which reaches the sensitive path `conversation.policies`; use delete = \"insecure_allow\" to acknowledge this grant
error: .jp/config.toml:11: conversation.tools.tidy.access.config[1].delete: tool `tidy` grants delete = true to `conversation.tools.*.style.hidden`, which reaches the sensitive path `conversation.tools.*.style.hidden`; use delete = \"insecure_allow\" to acknowledge this grant
error: .jp/config.toml:15: conversation.tools.tidy.access.config[2].write: tool `tidy` grants write = true to `conversation.tools.*.enable`, which reaches the sensitive path `conversation.tools.*.enable`; use write = \"insecure_allow\" to acknowledge this grant
error: .jp/config.toml:16: conversation.tools.tidy.access.config[2].delete: tool `tidy` grants delete = true to `conversation.tools.*.enable`, which reaches the sensitive path `conversation.tools.*.enable`; use delete = \"insecure_allow\" to acknowledge this grant
"
            .into(),
            stderr: String::new(),
        }
    );

    // On an ancestor, `true` loads; acknowledged, so do sensitive paths.
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{tool}
[[conversation.tools.tidy.access.config]]
path = \"conversation\"
write = true
delete = true
apply = \"unattended\"

[[conversation.tools.tidy.access.config]]
path = \"conversation.policies\"
delete = \"insecure_allow\"
"
        ),
    );
    assert_eq!(
        ws.jp(&["config", "validate"]),
        ok("config is valid (default, .jp/config.toml)\n")
    );
    let run = ws.jp(&["config", "get", "conversation.tools.tidy.access.config"]);
    assert_eq!(
        run,
        ok(r#"[
  {
    "path": "conversation",
    "read": false,
    "write": true,
    "delete": true,
    "apply": "unattended"
  },
  {
    "path": "conversation.policies",
    "read": false,
    "write": false,
    "delete": "insecure_allow",
    "apply": "ask"
  }
]
"#)
    );
}

/// `jp init`'s `.gitignore` keeps conversations out of the repository:
/// after a session, `git add -A` stages the config and not one transcript;
/// `git add -f` shares one on purpose, without its lock (issue 26 part 3).
#[test]
fn conversations_stay_out_of_git_unless_shared_on_purpose() {
    let ws = Workspace::new();
    std::fs::remove_dir_all(ws.project().join(".jp")).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(ws.project())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    assert_eq!(ws.jp(&["init", "--yes"]).code, 0);
    let run = ws.jp(&[
        "query",
        "--model",
        "scripted/demo",
        "add a hello() to src/lib.rs",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    git(&["add", "-A"]);
    assert_eq!(
        git(&["diff", "--cached", "--name-only"]),
        ".jp/.gitignore\n.jp/config.toml\nsrc/lib.rs\n"
    );
    let id = ws.read("project/.jp/conversations/active");
    let log = format!(".jp/conversations/{}/events.jsonl", id.trim());
    git(&["add", "-f", &log]);
    git(&["add", "-A"]);
    assert_eq!(
        git(&["diff", "--cached", "--name-only"]),
        format!(".jp/.gitignore\n.jp/config.toml\n{log}\nsrc/lib.rs\n")
    );
}

/// `jp config validate` warns about a tool whose program cannot be found
/// (on PATH, or as a path from the workspace root), and the config stays
/// valid: the tool fails when called (issue 25 part 5).
#[test]
fn validate_warns_when_a_tools_program_is_not_found() {
    let ws = Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        "[conversation.tools.reader]\ncommand = \"jp-fs read\"\nparameters.path = { type = \"path\" }\n\n\
         [conversation.tools.script]\ncommand = [\"./.jp/missing.sh\"]\nparameters.x = { type = \"string\" }\n\n\
         [conversation.tools.shell]\ncommand = [\"sh\", \"-c\", \"true\"]\nparameters.x = { type = \"string\" }\n\n\
         [conversation.tools.own]\ncommand = [\"jp\", \"tool\", \"fs_read_file\"]\nparameters.path = { type = \"path\" }\n",
    );
    let run = ws.jp(&["config", "validate"]);
    assert_eq!(
        run,
        ok(
            "warning: .jp/config.toml: conversation.tools.reader.command: the program `jp-fs` is not found on PATH, so the tool fails when it is called\n\
            warning: .jp/config.toml: conversation.tools.script.command: the program `./.jp/missing.sh` is not an executable file (relative to the workspace root), so the tool fails when it is called\n\
            config is valid (default, .jp/config.toml)\n"
        )
    );
}

/// `jp completions SHELL` prints a completion script the shell takes: bash
/// completes a subcommand from its start (issue 25 part 4).
#[test]
fn completion_scripts_complete_subcommands() {
    let ws = Workspace::new();
    let bash = ws.jp(&["completions", "bash"]);
    assert_eq!(bash.code, 0, "{bash:?}");
    let script = ws.root().join("jp.bash");
    std::fs::write(&script, &bash.stdout).unwrap();
    let completed = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && COMP_WORDS=(jp conv) COMP_CWORD=1 COMP_LINE='jp conv' COMP_POINT=7 && _jp jp conv jp && printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&completed.stdout), "conversation\n");
    for (shell, start) in [
        ("zsh", "#compdef jp\n"),
        ("fish", "# Print an optspec"),
        (
            "powershell",
            "\nusing namespace System.Management.Automation\n",
        ),
    ] {
        let run = ws.jp(&["completions", shell]);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(
            run.stdout.starts_with(start),
            "{shell}: {}",
            &run.stdout[..80]
        );
    }
}

/// `source <(COMPLETE=bash jp)` completes what only the workspace knows:
/// conversation ids (and `last`) and tool names, by running jp itself
/// (issue 25 part 4).
#[test]
fn dynamic_completion_offers_conversation_ids_and_tool_names() {
    let ws = common::query::initialized();
    let demo = ws.jp(&["query", "--model", "scripted/demo", "hi"]);
    assert_eq!(demo.code, 0, "{demo:?}");
    let id = ws.read("project/.jp/conversations/active");
    let registration = ws.jp_with_env(&[], &[("COMPLETE", "bash")]);
    assert_eq!(registration.code, 0, "{registration:?}");
    let script = ws.root().join("jp-dynamic.bash");
    std::fs::write(&script, &registration.stdout).unwrap();
    let complete = |words: &str, index: usize| {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source {} && COMP_WORDS=({words}) COMP_CWORD={index} COMP_TYPE=9 && \
                 _clap_complete_jp jp \"${{COMP_WORDS[{index}]}}\" && printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                script.display()
            ))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", ws.root())
            .env("XDG_CONFIG_HOME", ws.root().join("xdg"))
            .current_dir(ws.project())
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        complete("jp conversation use ''", 3),
        // An empty word gets the options too.
        format!("{}\nlast\n--cfg\n--verbose\n--color\n--help\n", id.trim())
    );
    assert_eq!(
        complete("jp policy check fs_", 3),
        "fs_read_file\nfs_list_files\nfs_grep\nfs_glob\nfs_create_file\nfs_modify_file\nfs_delete_file\n"
    );
    // Issue 39: `query` itself (not only its alias), and the models jp
    // knows for `--model`: aliases, the built-in table, the config's.
    assert_eq!(complete("jp qu", 1), "query\n");
    // (`chat`, the session, is the command after `query`.)
    assert!(complete("jp ''", 1).starts_with("init\nquery\nchat\nconversation\n"));
    assert_eq!(
        complete("jp query --model anthropic/claude-s", 3),
        "anthropic/claude-sonnet-4-5\nanthropic/claude-sonnet-4-0\n"
    );
    assert_eq!(complete("jp q --model so", 3), "sonnet\n");
}

/// A key the active conversation sets (its recorded `--model`) wins over
/// the config files in its next query: `config set` says so, rather than
/// seem to do nothing.
#[test]
fn set_says_when_the_active_conversation_overrides_the_key() {
    let ws = common::query::initialized();
    let demo = ws.jp(&["query", "--model", "scripted/demo", "hi"]);
    assert_eq!(demo.code, 0, "{demo:?}");
    let id = ws.read("project/.jp/conversations/active");
    let set = ws.jp(&[
        "config",
        "set",
        "assistant.model.id=anthropic/claude-haiku-4-5",
    ]);
    assert_eq!(set.code, 0, "{set:?}");
    assert_eq!(
        set.stdout,
        "assistant.model.id = \"anthropic/claude-haiku-4-5\" in .jp/config.toml\n"
    );
    assert_eq!(
        set.stderr,
        format!(
            "note: the active conversation {} sets assistant.model.id = \"scripted/demo\", which \
             its next `jp query` uses instead (`jp query --new` starts one without it)\n",
            id.trim()
        )
    );
    // A key it does not set: no note.
    let other = ws.jp(&["config", "set", "style.markdown=false"]);
    assert_eq!((other.code, other.stderr.as_str()), (0, ""), "{other:?}");
}
