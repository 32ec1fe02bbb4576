//! `fs_grep` and `fs_glob` through the real `jp` binary (issue 40): after
//! `jp init` they are default tools that a scripted model calls with no
//! question asked, and the model gets the bounded, formatted result; a
//! call that names a file that may hold secrets is asked about (declined
//! here, with no terminal to ask on).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Workspace;
use common::query::{responses, stored};

/// A project with sources, an ignored build directory, a hidden directory,
/// a binary file and an environment file.
fn project() -> Workspace {
    let ws = common::query::initialized();
    ws.write(
        "project/src/lib.rs",
        "pub fn alpha() -> u32 {\n    1\n}\n\npub fn beta() -> u32 {\n    alpha() + 1\n}\n",
    );
    ws.write(
        "project/src/main.rs",
        "fn main() {\n    println!(\"{}\", lib::alpha());\n}\n",
    );
    ws.write("project/README.md", "Call alpha first.\n");
    ws.write("project/.gitignore", "/target/\n");
    ws.write("project/target/debug/out.rs", "fn alpha() {}\n");
    ws.write("project/.github/ci.yml", "run: alpha\n");
    ws.write("project/.env", "ALPHA_TOKEN=s3cret\n");
    ws.write("project/certs/dev.pem", "alpha\n");
    ws
}

fn query(ws: &Workspace, script: &str) -> common::Run {
    ws.write("project/.jp/script.toml", script);
    ws.jp(&[
        "query",
        "--new",
        "--model",
        "scripted/.jp/script.toml",
        "where is alpha?",
    ])
}

#[test]
fn the_model_searches_with_no_question_asked() {
    let ws = project();
    let run = query(
        &ws,
        r#"[[responses]]
parts = [{ tool = "fs_grep", arguments = { pattern = "alpha\\(", context = 1 } }]

[[responses]]
parts = [{ tool = "fs_glob", arguments = { pattern = "*.rs", sort = "name" } }]

[[responses]]
parts = [{ text = "In src/lib.rs." }]
"#,
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "In src/lib.rs.\n");
    // What the person sees: each call, why it ran unattended, and its
    // result, bounded like any tool's.
    assert_eq!(
        run.stderr,
        "── jp (scripted/.jp/script.toml) ──\n\
         Calling tool fs_grep(pattern: \"alpha\\\\(\", context: 1)\n\
         \x20 unattended (policy.run[6] (catch-all) matched)\n\
         \x20 fs_grep success:\n\
         \x20   src/lib.rs:1:pub fn alpha() -> u32 {\n\
         \x20   src/lib.rs-2-    1\n\
         \x20   --\n\
         \x20   src/lib.rs-5-pub fn beta() -> u32 {\n\
         \x20   src/lib.rs:6:    alpha() + 1\n\
         \x20   src/lib.rs-7-}\n\
         \x20   --\n\
         \x20   src/main.rs-1-fn main() {\n\
         \x20   src/main.rs:2:    println!(\"{}\", lib::alpha());\n\
         \x20   src/main.rs-3-}\n\
         \x20   … 1 more line\n\
         ── jp (scripted/.jp/script.toml) ──\n\
         Calling tool fs_glob(pattern: \"*.rs\", sort: \"name\")\n\
         \x20 unattended (policy.run[1] (catch-all) matched)\n\
         \x20 fs_glob success:\n\
         \x20   src/lib.rs\n\
         \x20   src/main.rs\n\
         ── jp (scripted/.jp/script.toml) ──\n"
    );
    assert_eq!(
        responses(&stored(&ws)),
        [
            (
                "success".to_owned(),
                "src/lib.rs:1:pub fn alpha() -> u32 {\n\
                 src/lib.rs-2-    1\n\
                 --\n\
                 src/lib.rs-5-pub fn beta() -> u32 {\n\
                 src/lib.rs:6:    alpha() + 1\n\
                 src/lib.rs-7-}\n\
                 --\n\
                 src/main.rs-1-fn main() {\n\
                 src/main.rs:2:    println!(\"{}\", lib::alpha());\n\
                 src/main.rs-3-}\n\
                 (not searched, as they may hold secrets: certs/dev.pem; name one in `paths` to search it)"
                    .to_owned()
            ),
            (
                "success".to_owned(),
                "src/lib.rs\nsrc/main.rs".to_owned()
            ),
        ]
    );
}

#[test]
fn naming_a_secret_file_is_asked_about() {
    let ws = project();
    let run = query(
        &ws,
        r#"[[responses]]
parts = [{ tool = "fs_grep", arguments = { pattern = "TOKEN", paths = [".env"] } }]

[[responses]]
parts = [{ text = "I could not look." }]
"#,
    );
    assert_eq!(run.code, 5, "{run:?}");
    assert_eq!(run.stdout, "I could not look.\n");
    // Asked (policy.run's rule for `.env`), and with no terminal to ask
    // on, declined: the file is never read.
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "declined".to_owned(),
            "The call was not run: the user's policy requires confirmation and no one could \
             confirm it (jp is running without a terminal). jp stopped your response after 36 B \
             of this call's arguments."
                .to_owned()
        )]
    );
}
