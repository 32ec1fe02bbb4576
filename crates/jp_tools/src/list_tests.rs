#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_tool::Outcome;
use serde_json::{Value, json};

use crate::test_support::{Fixture, error};

fn list(f: &Fixture, arguments: Value) -> Outcome {
    f.run("fs_list_files", arguments)
}

fn sample() -> Fixture {
    let f = Fixture::new();
    f.write("Cargo.toml", "");
    f.write("src/lib.rs", "");
    f.write("src/list/mod.rs", "");
    f.write("src-old/lib.rs", "");
    f.write("README.md", "");
    f.write(".env.example", "");
    f.write(".jp/config.toml", "");
    f.write(".git/HEAD", "ref: refs/heads/main\n");
    f.write(".git/config", "");
    f.write(".gitignore", "/target/\n*.log\n");
    f.write(".jp/conversations/1/conversation.json", "{}");
    f.write("target/debug/app", "");
    f.write("src/trace.log", "");
    f
}

#[test]
fn lists_the_workspace_respecting_gitignore() {
    let f = sample();
    assert_eq!(
        list(&f, json!({})),
        Outcome::success(
            ".env.example\n.gitignore\n.jp/config.toml\nCargo.toml\nREADME.md\nsrc-old/lib.rs\nsrc/lib.rs\nsrc/list/mod.rs"
        )
    );
}

#[test]
fn nested_ignore_files_apply() {
    let f = sample();
    f.write("src/list/.gitignore", "mod.rs\n");
    assert_eq!(
        list(&f, json!({ "prefixes": ["src"] })),
        Outcome::success("src/lib.rs\nsrc/list/.gitignore")
    );
}

#[test]
fn prefixes_are_per_component() {
    let f = sample();
    assert_eq!(
        list(&f, json!({ "prefixes": ["src/"] })),
        Outcome::success("src/lib.rs\nsrc/list/mod.rs")
    );
    assert_eq!(
        list(
            &f,
            json!({ "prefixes": ["./src/list", "Cargo.toml", "src/list/mod.rs"] })
        ),
        Outcome::success("Cargo.toml\nsrc/list/mod.rs")
    );
    assert_eq!(
        list(&f, json!({ "prefixes": ["docs"] })),
        Outcome::success("no files match")
    );
    assert_eq!(list(&f, json!({ "prefixes": ["."] })), list(&f, json!({})));
}

#[test]
fn extensions_filter() {
    let f = sample();
    assert_eq!(
        list(&f, json!({ "extensions": ["rs"] })),
        Outcome::success("src-old/lib.rs\nsrc/lib.rs\nsrc/list/mod.rs")
    );
    assert_eq!(
        list(
            &f,
            json!({ "prefixes": ["src"], "extensions": [".rs", "toml"] })
        ),
        Outcome::success("src/lib.rs\nsrc/list/mod.rs")
    );
    assert_eq!(
        list(
            &f,
            json!({ "extensions": ["toml", "md"], "prefixes": null })
        ),
        Outcome::success(".jp/config.toml\nCargo.toml\nREADME.md")
    );
}

#[test]
fn an_empty_workspace() {
    let f = Fixture::new();
    assert_eq!(list(&f, json!({})), Outcome::success("no files"));
}

#[test]
fn long_listings_are_cut() {
    let f = Fixture::new();
    for i in 0..1003 {
        f.write(&format!("gen/{i:04}.txt"), "");
    }
    let Outcome::Success { content, .. } = list(&f, json!({})) else {
        panic!("expected a success");
    };
    let lines: Vec<&str> = content.lines().collect();
    assert_eq!(lines.len(), 1001);
    assert_eq!(lines[0], "gen/0000.txt");
    assert_eq!(lines[999], "gen/0999.txt");
    assert_eq!(lines[1000], "... and 3 more");
}

#[cfg(unix)]
#[test]
fn symlinks_are_listed_not_followed() {
    let f = Fixture::new();
    f.write("src/lib.rs", "");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "").unwrap();
    std::os::unix::fs::symlink(outside.path(), f.path("out")).unwrap();
    std::os::unix::fs::symlink("src/lib.rs", f.path("lib-link.rs")).unwrap();
    assert_eq!(
        list(&f, json!({})),
        Outcome::success("lib-link.rs\nsrc/lib.rs")
    );
    assert_eq!(
        list(&f, json!({ "prefixes": ["out"] })),
        error(format!(
            "refused `out`: `out` leads to `{}` through a symbolic link, outside the workspace",
            outside.path().canonicalize().unwrap().display()
        ))
    );
}
