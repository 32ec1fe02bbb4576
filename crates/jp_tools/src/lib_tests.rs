#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;
use crate::test_support::Fixture;

#[test]
fn unknown_tools_are_errors() {
    let f = Fixture::new();
    assert_eq!(
        run("fs_move_file", f.request(json!({}))),
        Outcome::error(
            "unknown tool `fs_move_file`; jp's default tools are fs_read_file, fs_list_files, fs_grep, fs_glob, fs_create_file, fs_modify_file, fs_delete_file, run_command"
        )
    );
}

#[test]
fn a_missing_root_is_an_error() {
    let f = Fixture::new();
    let mut request = f.request(json!({ "path": "a.txt" }));
    let missing = f.root().join("gone");
    request.context.root.clone_from(&missing);
    assert_eq!(
        run("fs_read_file", request),
        Outcome::error(format!(
            "cannot open the workspace root `{}`: No such file or directory (os error 2)",
            missing.display()
        ))
    );
}

#[test]
fn arguments_are_checked() {
    let f = Fixture::new();
    assert_eq!(
        run("fs_read_file", f.request(json!({}))),
        Outcome::error("missing argument `path`")
    );
    assert_eq!(
        run("fs_read_file", f.request(json!({ "path": 3 }))),
        Outcome::error("argument `path` must be a string")
    );
    assert_eq!(
        run("fs_list_files", f.request(json!({ "prefixes": "src" }))),
        Outcome::error("argument `prefixes` must be an array of strings")
    );
    assert_eq!(
        run(
            "fs_list_files",
            f.request(json!({ "extensions": ["rs", 1] }))
        ),
        Outcome::error("argument `extensions` must be an array of strings")
    );
}

#[test]
fn every_tool_refuses_paths_outside_the_workspace() {
    let f = Fixture::new();
    let args = |path: &str| json!({ "path": path, "content": "x", "patterns": [{ "old": "a", "new": "b" }] });
    for name in [
        "fs_read_file",
        "fs_create_file",
        "fs_modify_file",
        "fs_delete_file",
    ] {
        assert_eq!(
            run(name, f.request(args("../x"))),
            Outcome::error(
                "refused `../x`: it leads outside the workspace (`..` goes above the workspace root)"
            ),
            "{name}"
        );
        assert_eq!(
            run(name, f.request(args("/etc/passwd"))),
            Outcome::error(
                "refused `/etc/passwd`: it is an absolute path outside the workspace; use a path relative to the workspace root"
            ),
            "{name}"
        );
    }
    assert_eq!(
        run(
            "fs_list_files",
            f.request(json!({ "prefixes": ["src", "../other"] }))
        ),
        Outcome::error(
            "refused `../other`: it leads outside the workspace (`..` goes above the workspace root)"
        )
    );
}

#[test]
fn secret_paths_are_fs_read_files_patterns() {
    for secret in [
        ".env",
        "config/.env.production",
        "a/b.pem",
        "id_rsa.pub",
        ".ssh/config",
    ] {
        assert!(looks_secret(secret), "{secret}");
    }
    for plain in ["src/env.rs", ".envoy/x.yaml", "keys.rs", "ssh/config"] {
        assert!(!looks_secret(plain), "{plain}");
    }
    assert_eq!(SECRET_PATTERNS.len(), 5);
}
