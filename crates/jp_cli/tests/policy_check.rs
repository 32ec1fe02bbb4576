//! `jp policy check` through the real binary in a temporary workspace: the
//! D25 examples and the adversarial cases of architecture decisions 1-4.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{FS_MODIFY_FILE, Run, Workspace};

const D25_RULES: &str = r#"
[conversation.tools.fs_modify_file.policy]
run = [
    { arg = "/path", prefix = "src/sensitive/", mode = "ask" },
    { arg = "/path", prefix = "src/", mode = "unattended" },
    { mode = "ask" },
]
result = [
    { arg = "/path", prefix = ".env", mode = "ask" },
    { mode = "unattended" },
]
"#;

fn workspace(policy: &str) -> Workspace {
    let ws = Workspace::new();
    ws.write("project/.jp/tools/fs_modify_file.toml", FS_MODIFY_FILE);
    ws.write(
        "project/.jp/config.toml",
        &format!("extends = [\"tools/*.toml\"]\n{policy}"),
    );
    ws
}

fn check(ws: &Workspace, args: &str) -> Run {
    ws.jp(&["policy", "check", "fs_modify_file", "--args", args])
}

fn mode_of(ws: &Workspace, args: &str) -> (String, serde_json::Value) {
    tool_mode(ws, "fs_modify_file", args)
}

/// `jp policy check TOOL --args ARGS --format json`: the mode, and the
/// rule that decided.
fn tool_mode(ws: &Workspace, tool: &str, args: &str) -> (String, serde_json::Value) {
    let run = ws.jp(&["policy", "check", tool, "--args", args, "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    (
        out["mode"].as_str().unwrap().to_owned(),
        out["rule"].clone(),
    )
}

#[test]
fn d25_first_match_wins_and_explains_earlier_rules() {
    let ws = workspace(D25_RULES);
    let run = check(&ws, r#"{"path":"README.md"}"#);
    assert_eq!(
        run,
        Run {
            code: 0,
            stdout: "\
fs_modify_file policy.run: ask
  policy.run[0] prefix \"src/sensitive/\" on /path: no match: \"README.md\" is not under src/sensitive/
  policy.run[1] prefix \"src/\" on /path: no match: \"README.md\" is not under src/
  policy.run[2] catch-all: matches
  while streaming: decided once `path` is complete
  policy: conversation.tools.fs_modify_file.policy.run (.jp/config.toml)
"
            .into(),
            stderr: String::new(),
        }
    );

    let run = check(&ws, r#"{"path":"src/lib.rs"}"#);
    assert_eq!(
        run.stdout,
        "\
fs_modify_file policy.run: unattended
  policy.run[0] prefix \"src/sensitive/\" on /path: no match: \"src/lib.rs\" is not under src/sensitive/
  policy.run[1] prefix \"src/\" on /path: matches: \"src/lib.rs\" is under src/
  while streaming: decided once `path` is complete
  policy: conversation.tools.fs_modify_file.policy.run (.jp/config.toml)
"
    );
    assert_eq!(
        mode_of(&ws, r#"{"path":"src/sensitive/secret.rs"}"#),
        ("ask".into(), 0.into())
    );
}

#[test]
fn json_output_names_mode_rule_and_trace() {
    let ws = workspace(D25_RULES);
    let run = ws.jp(&[
        "policy",
        "check",
        "fs_modify_file",
        "--args",
        r#"{"path":"src/lib.rs"}"#,
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        out,
        serde_json::json!({
            "tool": "fs_modify_file",
            "field": "run",
            "mode": "unattended",
            "rule": 1,
            "reason": "policy.run[1] (prefix \"src/\" on /path) matched: \"src/lib.rs\" is under src/",
            "policy": "conversation.tools.fs_modify_file.policy.run",
            "source": ".jp/config.toml",
            "trace": [
                { "rule": 0, "condition": "prefix \"src/sensitive/\" on /path", "matched": false,
                  "reason": "\"src/lib.rs\" is not under src/sensitive/" },
                { "rule": 1, "condition": "prefix \"src/\" on /path", "matched": true,
                  "reason": "\"src/lib.rs\" is under src/" },
            ],
            "streaming": { "decided": "after", "argument": "path" },
        })
    );
}

#[test]
fn result_policy_and_implicit_fallback() {
    let ws = workspace(D25_RULES);
    let run = ws.jp(&[
        "policy",
        "check",
        "fs_modify_file",
        "--result",
        "--args",
        r#"{"path":".env"}"#,
    ]);
    assert_eq!(
        run.stdout,
        "\
fs_modify_file policy.result: ask
  policy.result[0] prefix \".env\" on /path: matches: \".env\" is under .env/
  policy: conversation.tools.fs_modify_file.policy.result (.jp/config.toml)
"
    );

    // No catch-all: the implicit `ask` applies, and validation warns.
    let ws = workspace(
        "[conversation.tools.fs_modify_file.policy]\nrun = [{ arg = \"/path\", prefix = \"src/\", mode = \"unattended\" }]\n",
    );
    let run = check(&ws, r#"{"path":"docs/x.md"}"#);
    assert_eq!(
        run,
        Run {
            code: 0,
            stdout: "\
fs_modify_file policy.run: ask
  policy.run[0] prefix \"src/\" on /path: no match: \"docs/x.md\" is not under src/
  no rule of policy.run matched, so the implicit fallback \"ask\" applies
  while streaming: decided once `path` is complete
  policy: conversation.tools.fs_modify_file.policy.run (.jp/config.toml)
"
            .into(),
            stderr: "warning: .jp/config.toml:3: conversation.tools.fs_modify_file.policy.run: the last rule is not a catch-all, so a call no rule matches falls back to \"ask\"; end with a rule such as { mode = \"ask\" } to make the fallback explicit\n".into(),
        }
    );
    let (mode, rule) = mode_of(&ws, r#"{"path":"docs/x.md"}"#);
    assert_eq!((mode.as_str(), rule), ("ask", serde_json::Value::Null));
}

#[test]
fn traversal_escapes_and_absolute_paths_never_get_unattended() {
    let ws = workspace(D25_RULES);
    let root = ws.project().display().to_string();
    for (args, mode) in [
        (r#"{"path":"src/../.env"}"#.to_owned(), "ask"),
        (r#"{"path":"src\u002f..\u002f.env"}"#.to_owned(), "ask"),
        (r#"{"path":"src-old/lib.rs"}"#.to_owned(), "ask"),
        (r#"{"path":"./src//lib.rs"}"#.to_owned(), "unattended"),
        (r#"{"path":"../outside/src/lib.rs"}"#.to_owned(), "ask"),
        (format!(r#"{{"path":"{root}/src/lib.rs"}}"#), "unattended"),
        (r#"{"path":"/etc/passwd"}"#.to_owned(), "ask"),
    ] {
        assert_eq!(mode_of(&ws, &args).0, mode, "{args}");
    }
}

#[test]
fn one_bad_element_in_an_array_denies_unattended() {
    let ws = workspace(
        r#"
[conversation.tools.fs_modify_file.policy]
run = [
    { arg = "/patterns/paths", prefix = "src/", mode = "unattended" },
    { mode = "ask" },
]
"#,
    );
    let all_src =
        r#"{"path":"src/a.rs","patterns":[{"old":"a","new":"b","paths":["src/a.rs","src/b.rs"]}]}"#;
    let mixed = r#"{"path":"src/a.rs","patterns":[{"old":"a","new":"b","paths":["src/a.rs"]},{"old":"x","new":"y","paths":["../.ssh/id_rsa"]}]}"#;
    assert_eq!(mode_of(&ws, all_src), ("unattended".into(), 0.into()));
    assert_eq!(mode_of(&ws, mixed), ("ask".into(), 1.into()));
}

#[cfg(unix)]
#[test]
fn a_symlink_inside_src_pointing_outside_is_not_unattended() {
    let ws = workspace(D25_RULES);
    std::fs::create_dir_all(ws.project().join("src")).unwrap();
    std::fs::create_dir_all(ws.root().join("secrets")).unwrap();
    std::os::unix::fs::symlink(ws.root().join("secrets"), ws.project().join("src/link")).unwrap();
    assert_eq!(mode_of(&ws, r#"{"path":"src/link/key.pem"}"#).0, "ask");
    assert_eq!(mode_of(&ws, r#"{"path":"src/real.rs"}"#).0, "unattended");
}

#[test]
fn numbers_compare_numerically() {
    let ws = workspace(
        r#"
[conversation.tools.fs_modify_file.policy]
run = [
    { arg = "/start_line", const = 1.0, mode = "unattended" },
    { arg = "/start_line", minimum = 1000, mode = "skip" },
    { mode = "ask" },
]
"#,
    );
    // Decision 4: `1` equals `1.0`: a rule's `const = 1.0` matches the
    // argument 1. The argument itself must be an integer literal, so
    // `1.0` from the model is refused before any rule is tried (see
    // integer_arguments_are_refused_as_the_query_loop_refuses_them).
    assert_eq!(
        mode_of(&ws, r#"{"path":"a","start_line":1}"#),
        ("unattended".into(), 0.into())
    );
    assert_eq!(
        mode_of(&ws, r#"{"path":"a","start_line":999}"#),
        ("ask".into(), 2.into())
    );
    assert_eq!(
        mode_of(&ws, r#"{"path":"a","start_line":1000}"#),
        ("skip".into(), 1.into())
    );
}

#[test]
fn unknown_tools_and_unfit_arguments_exit_2() {
    let ws = workspace(D25_RULES);
    let run = ws.jp(&["policy", "check", "fs_delete", "--args", "{}"]);
    assert_eq!(
        run,
        Run {
            code: 2,
            stdout: String::new(),
            stderr: "error: unknown tool `fs_delete` (configured tools: fs_modify_file)\n".into(),
        }
    );
    let run = check(&ws, r#"{"path":3}"#);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            "error: --args: /path: expected a path (a string), found 3\nerror: the arguments do not fit `fs_modify_file`'s parameters\n"
        )
    );
    let run = check(&ws, r#"{"path":"src/a.rs","path":".env"}"#);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            "error: --args: duplicate key `path` at /path: arguments with a repeated key are refused because its meaning is ambiguous\n"
        )
    );
    let run = check(&ws, r#"{"path":"src/a.rs""#);
    assert_eq!(run.code, 2, "{run:?}");
    let run = check(&ws, r#"{"path":"src/a\u0000.rs"}"#);
    assert_eq!(run.code, 2, "{run:?}");
}

/// An `integer` argument is an integer literal that fits 64 bits: every
/// other way of writing a number exits 2 naming the parameter, exactly as
/// `jp query` refuses the call (docs/tools.md, "Parameters").
#[test]
fn integer_arguments_are_refused_as_the_query_loop_refuses_them() {
    let ws = workspace(D25_RULES);
    for accepted in ["0", "-7", "-9223372036854775808", "18446744073709551615"] {
        let run = check(&ws, &format!(r#"{{"path":"a","start_line":{accepted}}}"#));
        assert_eq!(run.code, 0, "{accepted}: {run:?}");
    }
    let refused = [
        ("1e2", "100.0"),
        ("100.0000000000000000001", "100.0"),
        ("-0", "-0.0"),
        ("1.0", "1.0"),
        ("18446744073709551616", "1.8446744073709552e+19"),
        ("-9223372036854775809", "-9.223372036854776e+18"),
    ];
    for (text, shown) in refused {
        let run = check(&ws, &format!(r#"{{"path":"a","start_line":{text}}}"#));
        assert_eq!(
            run,
            Run {
                code: 2,
                stdout: String::new(),
                stderr: format!(
                    "error: --args: /start_line: expected an integer, found {shown} (an integer \
                     is written as digits alone, without a fraction, an exponent or a minus \
                     zero, from -9223372036854775808 to 18446744073709551615)\nerror: the \
                     arguments do not fit `fs_modify_file`'s parameters\n"
                ),
            },
            "{text}"
        );
    }
}

#[test]
fn an_invalid_config_exits_1_and_names_the_rule() {
    let ws = workspace(
        r#"
[conversation.tools.fs_modify_file.policy]
run = [
    { arg = "/path", prefx = "src/", mode = "unattended" },
    { mode = "ask" },
]
"#,
    );
    let run = check(&ws, r#"{"path":"src/a.rs"}"#);
    assert_eq!(
        run,
        Run {
            code: 1,
            stdout: String::new(),
            stderr: "\
error: .jp/config.toml:5: conversation.tools.fs_modify_file.policy.run[0]: unknown key \"prefx\" (a rule has arg, mode and one matcher: const, enum, pattern, prefix, minimum, maximum, exclusive_minimum or exclusive_maximum)
error: .jp/config.toml:5: conversation.tools.fs_modify_file.policy.run[0]: \"arg\" without a matcher (add one of const, enum, pattern, prefix, minimum, maximum, exclusive_minimum or exclusive_maximum)
"
            .into(),
        }
    );
}

/// D25: every rule after a catch-all is a config error naming that rule,
/// whatever the modes, in a tool's policy, in the `'*'` defaults and in a
/// deprecated top-level `run`.
#[test]
fn rules_after_a_catch_all_are_errors_naming_each_rule() {
    let unreachable = |line: usize, key: &str, rule: usize| {
        format!(
            "error: .jp/config.toml:{line}: {key}[{rule}]: can never match: policy.run[0] \
             (catch-all) matches every call; move the catch-all to the end or remove this rule\n"
        )
    };
    let own = "conversation.tools.fs_modify_file.policy.run";

    let ws = workspace(
        r#"
[conversation.tools.fs_modify_file.policy]
run = [{ mode = "ask" }, { arg = "/path", prefix = "src/", mode = "unattended" }]
"#,
    );
    assert_eq!(
        ws.jp(&["config", "validate"]),
        Run {
            code: 1,
            stdout: unreachable(4, own, 1),
            stderr: String::new(),
        }
    );
    // A config with the error does not load for any command.
    assert_eq!(
        check(&ws, r#"{"path":"src/a.rs"}"#),
        Run {
            code: 1,
            stdout: String::new(),
            stderr: unreachable(4, own, 1),
        }
    );

    let ws = workspace(
        r#"
[conversation.tools.fs_modify_file.policy]
run = [
    { arg = "/path", prefix = ".env", mode = "skip" },
    { mode = "ask" },
    { arg = "/path", prefix = "src/", mode = "unattended" },
    { arg = "/path", prefix = "secret/", mode = "skip" },
]
"#,
    );
    let after_second = |line: usize, rule: usize| {
        unreachable(line, own, rule)
            .replace("policy.run[0] (catch-all)", "policy.run[1] (catch-all)")
    };
    assert_eq!(
        ws.jp(&["config", "validate"]),
        Run {
            code: 1,
            stdout: after_second(7, 2) + &after_second(8, 3),
            stderr: String::new(),
        }
    );

    let defaults = "conversation.tools.'*'.policy.run";
    let ws = workspace(
        r#"
[conversation.tools.'*'.policy]
run = [
    { mode = "ask" },
    { arg = "/path", prefix = "src/", mode = "unattended" },
    { arg = "/command", prefix = "cargo ", mode = "unattended" },
]
"#,
    );
    assert_eq!(
        ws.jp(&["config", "validate"]),
        Run {
            code: 1,
            stdout: "warning: .jp/config.toml:7: conversation.tools.'*'.policy.run[2]: its \
                     `arg` is a parameter of no configured tool, so it never applies\n"
                .to_owned()
                + &unreachable(6, defaults, 1)
                + &unreachable(7, defaults, 2),
            stderr: String::new(),
        }
    );

    let ws = workspace(
        r#"
[conversation.tools.fs_modify_file]
run = [{ mode = "ask" }, { arg = "/path", prefix = "src/", mode = "unattended" }]
"#,
    );
    assert_eq!(
        ws.jp(&["config", "validate"]),
        Run {
            code: 1,
            // The loader folds the deprecated `run` into `policy.run`.
            stdout: unreachable(3, own, 1),
            stderr: String::new(),
        }
    );
}

#[test]
fn defaults_apply_to_tools_that_have_the_argument() {
    let ws = workspace(
        r#"
[conversation.tools.'*'.policy]
run = [
    { arg = "/path", prefix = "src/", mode = "unattended" },
    { arg = "/command", prefix = "cargo ", mode = "unattended" },
    { mode = "ask" },
]
"#,
    );
    let run = ws.jp(&["config", "validate"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (
            0,
            "warning: .jp/config.toml:6: conversation.tools.'*'.policy.run[1]: its `arg` is a parameter of no configured tool, so it never applies\nconfig is valid (default, .jp/tools/fs_modify_file.toml, .jp/config.toml)\n"
        )
    );
    let run = ws.jp(&[
        "policy",
        "check",
        "fs_modify_file",
        "--args",
        r#"{"path":"src/x.rs"}"#,
    ]);
    assert_eq!(
        run.stdout,
        "\
fs_modify_file policy.run: unattended
  policy.run[0] prefix \"src/\" on /path: matches: \"src/x.rs\" is under src/
  while streaming: decided once `path` is complete
  policy: conversation.tools.'*'.policy.run (.jp/config.toml)
"
    );
}

#[test]
fn without_args_it_lists_what_each_rule_waits_for() {
    let ws = workspace(D25_RULES);
    let run = ws.jp(&["policy", "check", "fs_modify_file"]);
    assert_eq!(
        run,
        Run {
            code: 0,
            stdout: "\
fs_modify_file policy.run: decided while the arguments stream
  policy.run[0] prefix \"src/sensitive/\" on /path: ask (waits for `path`)
  policy.run[1] prefix \"src/\" on /path: unattended (waits for `path`)
  policy.run[2] catch-all: ask
  parameters, in schema order (the order models usually send them): path, patterns, replace_using_regex, start_line
  policy: conversation.tools.fs_modify_file.policy.run (.jp/config.toml)
"
            .into(),
            stderr: String::new(),
        }
    );
    let run = ws.jp(&[
        "policy",
        "check",
        "fs_modify_file",
        "--args",
        r#"{"patterns": [], "path": "src/lib.rs"}"#,
        "--format",
        "json",
    ]);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        out["streaming"],
        serde_json::json!({ "decided": "after", "argument": "path" })
    );
}

#[test]
fn jps_default_tools_declare_what_their_policies_need_first() {
    let ws = Workspace::new();
    assert_eq!(ws.jp(&["init", "--yes"]).code, 0);
    for tool in [
        "fs_read_file",
        "fs_list_files",
        "fs_create_file",
        "fs_modify_file",
        "fs_delete_file",
        "run_command",
    ] {
        let run = ws.jp(&["policy", "check", tool]);
        assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{tool}: {run:?}");
    }
    // A tool that puts `content` first is warned about.
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{}\n[conversation.tools.note]\ncommand = \"true\"\nparameters.content = {{ type = \
             \"string\" }}\nparameters.path = {{ type = \"path\" }}\npolicy.run = [{{ arg = \
             \"/path\", prefix = \"notes/\", mode = \"unattended\" }}, {{ mode = \"ask\" }}]\n",
            ws.read("project/.jp/config.toml")
        ),
    );
    let run = ws.jp(&["policy", "check", "note"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        "warning: note: `content` (string) is declared before `path`, which policy.run[0] needs: \
         models send arguments in this order, so jp must wait for all of it before deciding; \
         declare `path` first\n"
    );
}

/// `jp init`'s defaults ask before a file that commonly holds secrets is
/// read (its text would go to the provider) or a directory of them listed,
/// and `jp policy check` says which rule decides (issue 26 part 2).
#[test]
fn the_default_tools_ask_before_reading_secrets() {
    let ws = Workspace::new();
    assert_eq!(ws.jp(&["init", "--yes"]).code, 0);
    let read = |path: &str| {
        let args = serde_json::json!({ "path": path }).to_string();
        let run = ws.jp(&["policy", "check", "fs_read_file", "--args", &args]);
        assert_eq!(run.code, 0, "{run:?}");
        run.stdout.lines().next().unwrap().to_owned()
    };
    let asked = "fs_read_file policy.run: ask";
    for secret in [
        ".env",
        ".env.local",
        "config/.env.production",
        ".envrc",
        "certs/server.PEM",
        "tls.key",
        "deploy/prod.tfvars",
        "terraform.tfstate",
        "keys/id_rsa",
        "keys/id_ed25519.pub",
        ".npmrc",
        ".netrc",
        ".git-credentials",
        "app/secrets.yaml",
        "gcp/credentials.json",
        ".aws/config",
        "home/.ssh/known_hosts",
        ".env-prod",
        "deploy/prod.env",
        ".pgpass",
        "kubeconfig",
    ] {
        assert_eq!(read(secret), asked, "{secret}");
    }
    for plain in [
        "src/main.rs",
        "src/environment.rs",
        "README.md",
        "keys.rs",
        "docs/env.md",
    ] {
        assert_eq!(
            read(plain),
            "fs_read_file policy.run: unattended",
            "{plain}"
        );
    }
    let run = ws.jp(&[
        "policy",
        "check",
        "fs_read_file",
        "--args",
        r#"{"path": ".env"}"#,
    ]);
    assert_eq!(
        run.stdout,
        "fs_read_file policy.run: ask\n  \
         policy.run[0] pattern \"(?i)(^|/)(\\\\.env(rc|[._-][^/]*)?|[^/]+\\\\.env)$\" on /path: matches: \".env\" matches pattern \"(?i)(^|/)(\\\\.env(rc|[._-][^/]*)?|[^/]+\\\\.env)$\"\n  \
         while streaming: decided once `path` is complete\n  \
         policy: conversation.tools.fs_read_file.policy.run (.jp/config.toml)\n"
    );
    let list = ws.jp(&[
        "policy",
        "check",
        "fs_list_files",
        "--args",
        r#"{"prefixes": ["src", ".ssh"]}"#,
    ]);
    assert_eq!(
        list.stdout.lines().next(),
        Some("fs_list_files policy.run: ask")
    );
    let list = ws.jp(&[
        "policy",
        "check",
        "fs_list_files",
        "--args",
        r#"{"prefixes": ["src"]}"#,
    ]);
    assert_eq!(
        list.stdout.lines().next(),
        Some("fs_list_files policy.run: unattended")
    );
}

#[test]
fn the_default_run_command_policy_explains_why_git_push_asks() {
    let ws = Workspace::new();
    assert_eq!(ws.jp(&["init", "--yes"]).code, 0);
    let check = |args: &str| ws.jp(&["policy", "check", "run_command", "--args", args]);
    let program = r#"pattern "^([^g]|g[^i]|gi[^t]|git.)|^gi?$" on /program"#;
    let words = "^(status|diff|log|--version|-s|--short|-b|--branch|--porcelain|--stat|\
                 --shortstat|--numstat|--name-only|--name-status|--cached|--staged|--oneline|\
                 --graph|--decorate|--all|-p|--patch|--no-color|--no-ext-diff|-[1-9][0-9]{0,3}|\
                 --max-count=[1-9][0-9]{0,3})$";
    assert_eq!(
        check(r#"{"program":"git","args":["push"]}"#),
        Run {
            code: 0,
            stdout: format!(
                "run_command policy.run: ask\n  \
                 policy.run[0] {program}: no match: \"git\" does not match pattern \"^([^g]|g[^i]|gi[^t]|git.)|^gi?$\"\n  \
                 policy.run[1] pattern \".\" on /cwd: no match: /cwd is absent\n  \
                 policy.run[2] pattern \"{words}\" on /args: no match: \"push\" at /args/0 does not match pattern \"{words}\"\n  \
                 policy.run[3] catch-all: matches\n  \
                 while streaming: decided only when all arguments are in\n  \
                 policy: conversation.tools.run_command.policy.run (.jp/config.toml)\n"
            ),
            stderr: String::new(),
        }
    );
    assert_eq!(
        check(r#"{"program":"cargo","args":["test"]}"#),
        Run {
            code: 0,
            stdout: format!(
                "run_command policy.run: ask\n  \
                 policy.run[0] {program}: matches: \"cargo\" matches pattern \"^([^g]|g[^i]|gi[^t]|git.)|^gi?$\"\n  \
                 while streaming: decided once `program` is complete\n  \
                 policy: conversation.tools.run_command.policy.run (.jp/config.toml)\n"
            ),
            stderr: String::new(),
        }
    );
    let run = check(r#"{"program":"git","args":["status","--short"]}"#);
    assert_eq!(
        run.stdout.lines().next(),
        Some("run_command policy.run: unattended"),
        "{run:?}"
    );
    assert_eq!(
        run.stdout.lines().nth(3),
        Some(format!("  policy.run[2] pattern \"{words}\" on /args: matches: each of the 2 values of /args matches pattern \"{words}\"").as_str()),
    );
}

/// `fs_create_file` is unattended under `src/` but asks for jp's and git's
/// own directories at any depth: a `src/.git/config` can make git run
/// programs.
#[test]
fn the_default_create_rule_asks_for_git_and_jp_directories_at_any_depth() {
    let ws = Workspace::new();
    assert_eq!(ws.jp(&["init", "--yes"]).code, 0);
    let mode = |path: &str| {
        let args = serde_json::json!({ "path": path, "content": "x" }).to_string();
        let run = ws.jp(&["policy", "check", "fs_create_file", "--args", &args]);
        run.stdout.lines().next().unwrap_or_default().to_owned()
    };
    for asked in [
        "src/.git/config",
        ".git/hooks/pre-commit",
        "src/.jp/config.toml",
        ".jp/x",
    ] {
        assert_eq!(mode(asked), "fs_create_file policy.run: ask", "{asked}");
    }
    for unattended in [
        "src/a.rs",
        "src/.gitignore",
        "src/.github/ci.yml",
        "src/gitx/a",
    ] {
        assert_eq!(
            mode(unattended),
            "fs_create_file policy.run: unattended",
            "{unattended}"
        );
    }
}

/// `jp init`'s `run_command` rules: a line break in `program` or `cwd`
/// does not slip past "anything but `git`" (a `.` in a pattern matches it,
/// found by an adversarial run: `git\n/x`, a repository's own program, ran
/// unattended).
#[test]
fn a_line_break_does_not_slip_past_the_default_run_command_rules() {
    let ws = common::query::initialized();
    let mode = |args: &str| tool_mode(&ws, "run_command", args);
    assert_eq!(
        mode(r#"{"program": "git", "args": ["status"]}"#).0,
        "unattended"
    );
    assert_eq!(
        mode(r#"{"program": "git\n/x", "args": ["status"]}"#),
        ("ask".to_owned(), serde_json::json!(0))
    );
    assert_eq!(
        mode(r#"{"program": "git\n/../../../../usr/bin/sh", "args": ["-s"]}"#),
        ("ask".to_owned(), serde_json::json!(0))
    );
    assert_eq!(
        mode(r#"{"program": "git", "args": ["status"], "cwd": "\n"}"#),
        ("ask".to_owned(), serde_json::json!(1))
    );
    assert_eq!(mode(r#"{"program": "git", "args": ["status\n"]}"#).0, "ask");
}

/// `jp init`'s rules about `.git/`, `.jp/` and secrets ignore case, as a
/// case-insensitive file system does (found by an adversarial run:
/// `src/.GIT/config` was created unattended).
#[test]
fn the_default_rules_about_git_jp_and_secrets_ignore_case() {
    let ws = common::query::initialized();
    let mode = |tool: &str, args: &str| tool_mode(&ws, tool, args).0;
    let create = |path: &str| format!(r#"{{"path": "{path}", "content": "x"}}"#);
    assert_eq!(mode("fs_create_file", &create("src/a.rs")), "unattended");
    for path in ["src/.GIT/config", "src/.Jp/config.toml"] {
        assert_eq!(mode("fs_create_file", &create(path)), "ask", "{path}");
    }
    for path in ["home/.SSH/config", "keys/ID_RSA", ".NPMRC"] {
        let args = format!(r#"{{"path": "{path}"}}"#);
        assert_eq!(mode("fs_read_file", &args), "ask", "{path}");
    }
    assert_eq!(mode("fs_list_files", r#"{"prefixes": [".AWS"]}"#), "ask");
}

/// `jp policy ls`: every tool as configured, with its source, its
/// policies in short (the '*' default and a wildcard's policy where the
/// tool has none of its own) and the stateful policies that govern it; a
/// wildcard entry is listed as written, its server not started.
#[test]
fn policy_ls_lists_the_tools_and_their_policies() {
    let ws = Workspace::new();
    ws.write(
        "project/.jp/config.toml",
        r#"[providers.mcp.git]
command = ["git-mcp-server-that-is-not-installed"]

[conversation.tools.'*']
policy.result = "ask"

[conversation.tools.read]
source = "builtin"
command = ["jp", "tool", "fs_read_file"]
parameters.path = { type = "path", required = true }
policy.run = "unattended"

[conversation.tools.save]
command = ["sh", ".jp/save.sh"]
parameters.path = { type = "path", required = true }
policy.run = [{ arg = "/path", prefix = "src/", mode = "unattended" }, { arg = "/path", prefix = "docs/", mode = "edit" }, { mode = "skip" }]
policy.result = "unattended"

[conversation.tools.'git.*']
source = "mcp.git"
policy.run = "ask"

[conversation.tools.git_log]
source = "mcp.git"
tool = "log"
policy.run = "unattended"

[conversation.tools.git_push]
source = "mcp.git"
enable = false

[[conversation.policies]]
kind = "read_before_write"
read_tools = ["read"]
write_tools = ["save"]
"#,
    );
    let run = ws.jp(&["policy", "ls"]);
    assert_eq!(
        run,
        Run {
            code: 0,
            stdout: "\
tool      source   run                 result
read      builtin  unattended          ask         stateful: read_before_write
save      local    2 rules, else skip  unattended  stateful: read_before_write
git.*     mcp.git  ask                 ask         every tool of MCP server git (not started to list them)
git_log   mcp.git  unattended          ask         MCP server git's tool log
git_push  mcp.git  ask                 ask         disabled
"
            .to_owned(),
            stderr: String::new(),
        }
    );
}

/// Untrusted, the workspace's tools are left out and named once at the
/// end; the user's own tool stands with the user's policy.
#[test]
fn policy_ls_names_the_tools_trust_withholds() {
    let ws = Workspace::new();
    ws.write(
        "xdg/jp/config.toml",
        "[conversation.tools.notes]\ncommand = [\"true\"]\npolicy.run = \"unattended\"\n",
    );
    ws.write(
        "project/.jp/config.toml",
        "[conversation.tools.deploy]\ncommand = [\"sh\", \"deploy.sh\"]\n\n\
         [conversation.tools.notes]\npolicy.run = \"ask\"\n",
    );
    let mut command = ws.command(&["policy", "ls"], &[]);
    command.env_remove("JP_TRUST_WORKSPACE");
    let run = ws.run_of(command.output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "tool   source  run         result\n\
         notes  local   unattended  unattended\n\
         this workspace's config also sets deploy, notes, left out until you trust it (`jp trust`)\n"
    );
    // What did not apply is also said on stderr, as by every command.
    assert!(
        run.stderr.contains("note: this workspace is not trusted"),
        "{run:?}"
    );
    // Trusted, the workspace's tools stand.
    let run = ws.jp(&["policy", "ls"]);
    assert_eq!(
        run.stdout,
        "tool    source  run  result\n\
         notes   local   ask  unattended\n\
         deploy  local   ask  unattended\n"
    );
}
