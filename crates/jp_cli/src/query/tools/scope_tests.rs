//! What an approval covers, for the whole class of calls: a table of
//! approved calls and later calls, and properties over any program and
//! arguments.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_policy::Workspace;
use jp_policy::path::resolve_path;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn object(value: Value) -> Map<String, Value> {
    let Value::Object(map) = value else {
        unreachable!()
    };
    map
}

/// A workspace with `notes/`, `src/deep/` and a link `out -> /tmp`.
fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("notes")).unwrap();
    std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("/tmp", dir.path().join("notes/out")).unwrap();
    let workspace = Workspace::new(dir.path());
    (dir, workspace)
}

fn paths(workspace: &Workspace, arguments: &Map<String, Value>) -> Vec<PathValue> {
    arguments
        .get("path")
        .and_then(Value::as_str)
        .map(|p| resolve_path(p, workspace).unwrap())
        .into_iter()
        .collect()
}

/// `approved` (a call of a tool of `kind`) and whether the approval
/// covers each later call.
fn covered(kind: Kind, approved: &Value, later: &Value) -> bool {
    let (_dir, workspace) = workspace();
    let approved = object(approved.clone());
    let later = object(later.clone());
    let scope = scope_of(kind, &approved, &paths(&workspace, &approved));
    // The call itself is always covered.
    assert!(
        covers(&scope, &approved, &paths(&workspace, &approved)),
        "{scope:?}"
    );
    fits(&scope, kind) && covers(&scope, &later, &paths(&workspace, &later))
}

#[test]
fn a_command_covers_the_same_program_and_first_argument_only() {
    let cargo_test = json!({"program": "cargo", "args": ["test"]});
    let table = [
        (json!({"program": "cargo", "args": ["test", "--lib"]}), true),
        (
            json!({"program": "cargo", "args": ["test"], "timeout_secs": 5}),
            true,
        ),
        (json!({"program": "cargo", "args": ["build"]}), false),
        (json!({"program": "cargo", "args": []}), false),
        (json!({"program": "cargo"}), false),
        (
            json!({"program": "cargo", "args": ["test"], "cwd": "src"}),
            false,
        ),
        (
            json!({"program": "/usr/bin/cargo", "args": ["test"]}),
            false,
        ),
        (
            json!({"program": "sh", "args": ["-c", "cargo test > /tmp/x"]}),
            false,
        ),
        (json!({"program": "rm", "args": ["-rf", "~"]}), false),
        (json!({"program": "git", "args": ["test"]}), false),
    ];
    for (later, expected) in table {
        assert_eq!(
            covered(Kind::Command, &cargo_test, &later),
            expected,
            "{later}"
        );
    }
    // No arguments: only calls without any.
    let bare = json!({"program": "ls"});
    assert!(covered(
        Kind::Command,
        &bare,
        &json!({"program": "ls", "args": []})
    ));
    assert!(!covered(
        Kind::Command,
        &bare,
        &json!({"program": "ls", "args": ["/"]})
    ));
}

#[test]
fn programs_that_run_code_given_in_their_arguments_cover_only_the_identical_call() {
    let calls = [
        json!({"program": "sh", "args": ["-c", "echo hi"]}),
        json!({"program": "bash", "args": ["-c", "echo hi"]}),
        json!({"program": "/bin/sh", "args": ["script.sh"]}),
        json!({"program": "python3", "args": ["-c", "print(1)"]}),
        json!({"program": "python3.12", "args": ["tool.py"]}),
        json!({"program": "node", "args": ["-e", "1"]}),
        json!({"program": "env", "args": ["FOO=1", "sh"]}),
        json!({"program": "xargs", "args": ["rm"]}),
        json!({"program": "PERL.EXE", "args": ["-e", "1"]}),
        json!({"program": "sudo", "args": ["ls"]}),
        json!({"program": "find", "args": [".", "-exec", "rm", "{}", ";"]}),
        // A first argument that is an option can make a program run
        // anything (`git -c alias.x=!sh`, `cargo --config`).
        json!({"program": "git", "args": ["-c", "alias.x=!sh", "x"]}),
        json!({"program": "cargo", "args": ["--config", "x"]}),
    ];
    for call in &calls {
        let map = object(call.clone());
        let scope = scope_of(Kind::Command, &map, &[]);
        assert_eq!(
            scope,
            ApprovalScope::Call {
                arguments: call.clone()
            },
            "{call}"
        );
        // The same program with anything else in its arguments is not.
        let mut other = map.clone();
        other.insert("args".into(), json!(["-c", "rm -rf ~"]));
        assert!(!covers(&scope, &other, &[]), "{call}");
        assert!(describe(&scope, "run_command").starts_with("only this exact call"));
    }
    assert_eq!(
        describe(
            &scope_of(Kind::Command, &object(calls[0].clone()), &[]),
            "run_command"
        ),
        "only this exact call (\"sh\" runs code given in its arguments: a shell: `sh -c CODE`)"
    );
}

#[test]
fn a_file_tool_covers_its_paths_directory_as_written_and_with_links_followed() {
    let notes_a = json!({"path": "notes/a.txt", "content": "x"});
    let table = [
        (json!({"path": "notes/b.txt", "content": "other"}), true),
        (json!({"path": "notes/sub/c.txt", "content": "x"}), true),
        (
            json!({"path": "./notes/../notes/d.txt", "content": "x"}),
            true,
        ),
        (json!({"path": "src/a.txt", "content": "x"}), false),
        (json!({"path": "notesx/a.txt", "content": "x"}), false),
        (json!({"path": "a.txt", "content": "x"}), false),
        // A link in notes/ that leads out of it.
        (json!({"path": "notes/out/x.txt", "content": "x"}), false),
        (json!({"path": "../notes/a.txt", "content": "x"}), false),
        (json!({"content": "x"}), false),
    ];
    for (later, expected) in table {
        assert_eq!(covered(Kind::Files, &notes_a, &later), expected, "{later}");
    }
    // A file in the root covers itself only.
    let root_file = json!({"path": "a.txt", "content": "x"});
    assert!(covered(
        Kind::Files,
        &root_file,
        &json!({"path": "a.txt", "content": "y"})
    ));
    assert!(!covered(
        Kind::Files,
        &root_file,
        &json!({"path": "b.txt", "content": "y"})
    ));
    assert!(!covered(
        Kind::Files,
        &root_file,
        &json!({"path": "notes/a.txt", "content": "y"})
    ));
    // The root itself, or a path outside: the identical call.
    for path in [".", "../x.txt", "/etc/passwd", "notes/out/x.txt"] {
        let call = json!({"path": path});
        let (_dir, workspace) = workspace();
        let map = object(call.clone());
        assert_eq!(
            scope_of(Kind::Files, &map, &paths(&workspace, &map)),
            ApprovalScope::Call { arguments: call },
            "{path}"
        );
    }
}

#[test]
fn any_other_tool_is_covered_for_the_identical_call() {
    let call = json!({"query": "rust"});
    assert!(covered(Kind::Other, &call, &call));
    assert!(!covered(Kind::Other, &call, &json!({"query": "rust "})));
    assert!(!covered(
        Kind::Other,
        &call,
        &json!({"query": "rust", "page": 2})
    ));
}

#[test]
fn a_scope_of_another_kind_of_tool_covers_nothing() {
    let command = scope_of(
        Kind::Command,
        &object(json!({"program": "cargo", "args": ["test"]})),
        &[],
    );
    assert!(fits(&command, Kind::Command));
    assert!(!fits(&command, Kind::Files));
    assert!(!fits(&command, Kind::Other));
    let paths = ApprovalScope::Paths {
        under: vec!["notes".into()],
    };
    assert!(!fits(&paths, Kind::Other));
    assert!(!fits(&paths, Kind::Command));
}

#[test]
fn what_the_prompt_says_of_each_scope() {
    let (_dir, workspace) = workspace();
    let cases = [
        (
            Kind::Command,
            json!({"program": "cargo", "args": ["test"]}),
            "\"cargo test ...\"",
        ),
        (
            Kind::Command,
            json!({"program": "cargo", "args": ["test"], "cwd": "src"}),
            "\"cargo test ...\" in \"src\"",
        ),
        (
            Kind::Command,
            json!({"program": "ls"}),
            "\"ls\" without arguments",
        ),
        (
            Kind::Files,
            json!({"path": "notes/a.txt"}),
            "fs_create_file calls on paths at or below \"notes\"",
        ),
        (
            Kind::Files,
            json!({"path": "a.txt"}),
            "fs_create_file calls on paths at or below \"a.txt\"",
        ),
        (Kind::Other, json!({"q": 1}), "only this exact call"),
    ];
    for (kind, call, expected) in cases {
        let map = object(call);
        let scope = scope_of(kind, &map, &paths(&workspace, &map));
        assert_eq!(describe(&scope, "fs_create_file"), expected);
    }
    // Control characters in a program's name are escaped.
    let map = object(json!({"program": "ca\u{1b}]0;x\u{7}rgo", "args": ["t"]}));
    assert_eq!(
        describe(&scope_of(Kind::Command, &map, &[]), "run_command"),
        "\"ca\\u{1b}]0;x\\u{7}rgo t ...\""
    );
}

proptest! {
    /// Whatever the program and arguments: the approval covers the call
    /// itself, never another program, never another first argument, and
    /// for a program of the table (under any path, case or version)
    /// nothing but the identical call.
    #[test]
    fn a_command_approval_never_reaches_another_program_or_first_argument(
        program in "[a-zA-Z./_-]{1,12}",
        other in "[a-zA-Z./_-]{1,12}",
        args in proptest::collection::vec("[ -~]{0,8}", 0..4),
        rest in proptest::collection::vec("[ -~]{0,8}", 0..4),
        runner in proptest::sample::select(RUNS_GIVEN_CODE.iter().map(|(name, _)| *name).collect::<Vec<_>>()),
        prefix in "(/usr/bin/|\\./|)",
        version in "([0-9](\\.[0-9]{1,2})?)?",
    ) {
        let call = object(json!({"program": program, "args": args}));
        let scope = scope_of(Kind::Command, &call, &[]);
        prop_assert!(covers(&scope, &call, &[]));
        if other != program {
            let moved = object(json!({"program": other, "args": args}));
            prop_assert!(!covers(&scope, &moved, &[]));
        }
        let mut changed = rest.clone();
        changed.insert(0, format!("{}x", args.first().cloned().unwrap_or_default()));
        let later = object(json!({"program": program, "args": changed}));
        prop_assert!(!covers(&scope, &later, &[]));

        let runner = format!("{prefix}{}{version}", runner.to_uppercase());
        prop_assert!(runs_given_code(&runner).is_some(), "{}", runner);
        let call = object(json!({"program": runner, "args": args}));
        let scope = scope_of(Kind::Command, &call, &[]);
        prop_assert_eq!(&scope, &ApprovalScope::Call { arguments: Value::Object(call.clone()) });
        let mut more = args.clone();
        more.extend(rest);
        if more != args {
            let later = object(json!({"program": runner, "args": more}));
            prop_assert!(!covers(&scope, &later, &[]));
        }
    }
}
