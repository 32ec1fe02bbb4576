#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_tool::Outcome;
use serde_json::{Value, json};

use super::occurrences;
use crate::test_support::{Fixture, error};

const LIB: &str = "pub fn main() {\n    run();\n}\n\nfn run() {}\n";

fn modify(f: &Fixture, path: &str, patterns: Value) -> Outcome {
    f.run(
        "fs_modify_file",
        json!({ "path": path, "patterns": patterns }),
    )
}

#[test]
fn replaces_each_pattern_once_in_order() {
    let f = Fixture::new();
    f.write("src/lib.rs", LIB);
    assert_eq!(
        modify(
            &f,
            "src/lib.rs",
            json!([{ "old": "fn run() {}", "new": "fn run() {\n    hello();\n}" }])
        ),
        Outcome::success("1 change in src/lib.rs")
    );
    assert_eq!(
        f.read("src/lib.rs"),
        "pub fn main() {\n    run();\n}\n\nfn run() {\n    hello();\n}\n"
    );
    // The second pattern sees the first one's result.
    assert_eq!(
        modify(
            &f,
            "./src/lib.rs",
            json!([
                { "old": "hello();", "new": "greet();" },
                { "old": "greet();\n}", "new": "greet();\n}\n\nfn greet() {}" },
            ])
        ),
        Outcome::success("2 changes in src/lib.rs")
    );
    assert_eq!(
        f.read("src/lib.rs"),
        "pub fn main() {\n    run();\n}\n\nfn run() {\n    greet();\n}\n\nfn greet() {}\n"
    );
    assert_eq!(f.tree(), ["src", "src/lib.rs"]);
}

#[test]
fn zero_or_several_matches_change_nothing() {
    let f = Fixture::new();
    f.write("src/lib.rs", LIB);
    assert_eq!(
        modify(
            &f,
            "src/lib.rs",
            json!([{ "old": "fn walk()", "new": "x" }])
        ),
        error(
            "patterns[0].old occurs 0 times in `src/lib.rs`; it must occur exactly once (check its spaces, indentation and line breaks against the file), so nothing was changed"
        )
    );
    assert_eq!(
        modify(
            &f,
            "src/lib.rs",
            json!([{ "old": "pub fn main", "new": "pub fn start" }, { "old": "run()", "new": "go()" }])
        ),
        error(
            "patterns[1].old occurs 2 times in `src/lib.rs` (after the patterns before it); it must occur exactly once (include more of the surrounding text), so nothing was changed"
        )
    );
    assert_eq!(f.read("src/lib.rs"), LIB);
    assert_eq!(f.tree(), ["src", "src/lib.rs"]);
}

#[test]
fn overlapping_occurrences_count() {
    assert_eq!(occurrences("aaa", "aa"), 2);
    assert_eq!(occurrences("abab", "ab"), 2);
    assert_eq!(occurrences("éé", "é"), 2);
    assert_eq!(occurrences("xyz", "a"), 0);
    let f = Fixture::new();
    f.write("a.txt", "aaa");
    assert_eq!(
        modify(&f, "a.txt", json!([{ "old": "aa", "new": "b" }])),
        error(
            "patterns[0].old occurs 2 times in `a.txt`; it must occur exactly once (include more of the surrounding text), so nothing was changed"
        )
    );
}

#[test]
fn a_no_op_is_not_written() {
    let f = Fixture::new();
    f.write("a.txt", "same");
    assert_eq!(
        modify(&f, "a.txt", json!([{ "old": "same", "new": "same" }])),
        Outcome::success("no change in a.txt: the patterns leave its content as it was")
    );
}

#[cfg(unix)]
#[test]
fn keeps_the_permissions() {
    use std::os::unix::fs::PermissionsExt as _;
    let f = Fixture::new();
    f.write("run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(f.path("run.sh"), std::fs::Permissions::from_mode(0o754)).unwrap();
    assert_eq!(
        modify(&f, "run.sh", json!([{ "old": "hi", "new": "hello" }])),
        Outcome::success("1 change in run.sh")
    );
    assert_eq!(f.read("run.sh"), "#!/bin/sh\necho hello\n");
    let mode = std::fs::metadata(f.path("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o754);
}

#[cfg(unix)]
#[test]
fn a_symlink_inside_the_workspace_keeps_pointing_at_the_file() {
    let f = Fixture::new();
    f.write("src/lib.rs", "old");
    std::os::unix::fs::symlink("src/lib.rs", f.path("link.rs")).unwrap();
    assert_eq!(
        modify(&f, "link.rs", json!([{ "old": "old", "new": "new" }])),
        Outcome::success("1 change in link.rs")
    );
    assert!(f.path("link.rs").is_symlink());
    assert_eq!(f.read("src/lib.rs"), "new");
}

#[test]
fn bad_patterns_and_files() {
    let f = Fixture::new();
    f.write("a.txt", "a");
    f.write("bin", b"\xff\xfe");
    assert_eq!(
        modify(&f, "a.txt", json!([])),
        error("argument `patterns` is empty; give at least one {old, new} pair")
    );
    assert_eq!(
        modify(&f, "a.txt", json!("a")),
        error("argument `patterns` must be an array of {old, new} objects")
    );
    assert_eq!(
        modify(&f, "a.txt", json!([{ "old": "a" }])),
        error("patterns[0] must be an object with the strings `old` and `new`")
    );
    assert_eq!(
        modify(&f, "a.txt", json!([{ "old": "", "new": "b" }])),
        error("patterns[0].old is empty; it must be text that occurs exactly once in the file")
    );
    assert_eq!(
        modify(&f, "b.txt", json!([{ "old": "a", "new": "b" }])),
        error("cannot modify `b.txt`: no such file; use fs_create_file to create it")
    );
    assert_eq!(
        modify(&f, "bin", json!([{ "old": "a", "new": "b" }])),
        error(
            "cannot modify `bin`: it is not UTF-8 text (an invalid byte at offset 0), and fs_modify_file handles only UTF-8"
        )
    );
    assert_eq!(f.read("a.txt"), "a");
}

#[cfg(unix)]
#[test]
fn confinement() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x"), "a").unwrap();
    std::os::unix::fs::symlink(outside.path(), f.path("ext")).unwrap();
    assert_eq!(
        modify(&f, "ext/x", json!([{ "old": "a", "new": "b" }])),
        error(format!(
            "refused `ext/x`: `ext/x` leads to `{}/x` through a symbolic link, outside the workspace",
            outside.path().canonicalize().unwrap().display()
        ))
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("x")).unwrap(),
        "a"
    );
}

#[test]
fn a_preview_is_the_change_the_tool_would_write_and_writes_nothing() {
    let f = Fixture::new();
    f.write("src/lib.rs", LIB);
    let arguments = |patterns: Value| {
        json!({ "path": "./src/lib.rs", "patterns": patterns })
            .as_object()
            .unwrap()
            .clone()
    };
    assert_eq!(
        super::preview(
            f.root(),
            &arguments(json!([{ "old": "run();", "new": "go();" }]))
        ),
        Ok(super::Change {
            shown: "src/lib.rs".into(),
            before: LIB.into(),
            after: "pub fn main() {\n    go();\n}\n\nfn run() {}\n".into(),
        })
    );
    assert_eq!(f.read("src/lib.rs"), LIB);
    // The tool's own message when it would fail.
    assert_eq!(
        super::preview(
            f.root(),
            &arguments(json!([{ "old": "fn walk()", "new": "x" }]))
        ),
        Err("patterns[0].old occurs 0 times in `src/lib.rs`; it must occur exactly once (check its spaces, indentation and line breaks against the file), so nothing was changed".into())
    );
    let outside = super::preview(
        f.root(),
        json!({ "path": "../x", "patterns": [] })
            .as_object()
            .unwrap(),
    )
    .unwrap_err();
    assert_eq!(modify(&f, "../x", json!([])), error(&outside));
}
