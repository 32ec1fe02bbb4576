#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, SystemTime};

use jp_tool::Outcome;
use serde_json::{Value, json};

use crate::test_support::{Fixture, error};

fn glob(f: &Fixture, arguments: Value) -> Outcome {
    f.run("fs_glob", arguments)
}

/// Sets the modification time of `rel` to `secs` after the epoch.
fn touch(f: &Fixture, rel: &str, secs: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(f.path(rel))
        .unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

fn sample() -> Fixture {
    let f = Fixture::new();
    f.write("src/lib.rs", "");
    f.write("src/util.rs", "");
    f.write("src/deep/mod.rs", "");
    f.write("build.rs", "");
    f.write("README.md", "");
    f.write(".hidden/notes.rs", "");
    f.write(".gitignore", "/target/\n*.log\n");
    f.write("target/gen.rs", "");
    f.write("debug.log", "");
    f.write(".env", "");
    f.write("certs/server.pem", "");
    f.write(".git/hooks.rs", "");
    for (rel, secs) in [
        ("src/lib.rs", 300),
        ("src/util.rs", 100),
        ("src/deep/mod.rs", 200),
        ("build.rs", 200),
        ("README.md", 50),
    ] {
        touch(&f, rel, secs);
    }
    f
}

#[test]
fn newest_first_or_by_name() {
    let f = sample();
    assert_eq!(
        glob(&f, json!({ "pattern": "*.rs" })),
        Outcome::success("src/lib.rs\nbuild.rs\nsrc/deep/mod.rs\nsrc/util.rs")
    );
    assert_eq!(
        glob(&f, json!({ "pattern": "*.rs", "sort": "modified" })),
        glob(&f, json!({ "pattern": "*.rs" }))
    );
    assert_eq!(
        glob(&f, json!({ "pattern": "*.rs", "sort": "name" })),
        Outcome::success("build.rs\nsrc/deep/mod.rs\nsrc/lib.rs\nsrc/util.rs")
    );
    assert_eq!(
        glob(&f, json!({ "pattern": "*.rs", "sort": "size" })),
        error("argument `sort` must be \"modified\" or \"name\"")
    );
}

#[test]
fn patterns_with_a_slash_match_paths_from_the_root() {
    let f = sample();
    assert_eq!(
        glob(&f, json!({ "pattern": "src/*.rs", "sort": "name" })),
        Outcome::success("src/lib.rs\nsrc/util.rs")
    );
    assert_eq!(
        glob(&f, json!({ "pattern": "./src/**/*.rs", "sort": "name" })),
        Outcome::success("src/deep/mod.rs\nsrc/lib.rs\nsrc/util.rs")
    );
    assert_eq!(
        glob(&f, json!({ "pattern": "*.{md,toml}" })),
        Outcome::success("README.md")
    );
    assert_eq!(
        glob(&f, json!({ "pattern": "docs/*" })),
        Outcome::success("no files match")
    );
}

#[test]
fn ignored_hidden_and_secret_files() {
    let f = sample();
    assert_eq!(
        glob(&f, json!({ "pattern": "*", "sort": "name" })),
        Outcome::success(
            "README.md\nbuild.rs\nsrc/deep/mod.rs\nsrc/lib.rs\nsrc/util.rs\n(not listed, as they may hold secrets: certs/server.pem; name them in `pattern` to list them)"
        )
    );
    assert_eq!(
        glob(&f, json!({ "pattern": "*.log" })),
        Outcome::success("no files match")
    );
    assert_eq!(
        glob(&f, json!({ "pattern": ".hidden/*" })),
        Outcome::success(".hidden/notes.rs")
    );
    assert_eq!(
        glob(&f, json!({ "pattern": "**/.*", "sort": "name" })),
        Outcome::success(
            ".gitignore\n(not listed, as they may hold secrets: .env; name them in `pattern` to list them)"
        )
    );
    assert_eq!(
        glob(&f, json!({ "pattern": "**/*.pem" })),
        Outcome::success("certs/server.pem")
    );
    assert_eq!(
        glob(&f, json!({ "pattern": ".env" })),
        Outcome::success(".env")
    );
}

#[test]
fn long_results_are_cut() {
    let f = Fixture::new();
    for i in 0..503 {
        f.write(&format!("gen/{i:03}.txt"), "");
    }
    let Outcome::Success { content, .. } = glob(&f, json!({ "pattern": "*.txt", "sort": "name" }))
    else {
        panic!("expected a success");
    };
    let lines: Vec<&str> = content.lines().collect();
    assert_eq!(lines.len(), 501);
    assert_eq!(lines[0], "gen/000.txt");
    assert_eq!(lines[499], "gen/499.txt");
    assert_eq!(lines[500], "... and 3 more; narrow the pattern");
}

#[test]
fn bad_patterns_are_errors() {
    let f = sample();
    assert_eq!(glob(&f, json!({})), error("missing argument `pattern`"));
    assert_eq!(
        glob(&f, json!({ "pattern": "" })),
        error("refused an empty glob: write a pattern such as `*.rs` or `src/**/*.toml`")
    );
    assert_eq!(
        glob(&f, json!({ "pattern": "/etc/*" })),
        error(
            "refused the glob `/etc/*`: it is matched against paths inside the workspace; write it relative to the workspace root, without `..`"
        )
    );
    assert_eq!(
        glob(&f, json!({ "pattern": "a{b" })),
        error(
            "invalid glob `a{b`: unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)"
        )
    );
}
