#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;

use jp_tool::Outcome;
use serde_json::{Value, json};

use crate::test_support::{Fixture, error};

fn grep(f: &Fixture, arguments: Value) -> Outcome {
    f.run("fs_grep", arguments)
}

const SECRETS: &str =
    "(not searched, as they may hold secrets: certs/server.pem; name one in `paths` to search it)";

fn sample() -> Fixture {
    let f = Fixture::new();
    f.write(
        "src/lib.rs",
        "fn main() {\n    let alpha = 1;\n    let beta = 2;\n}\n",
    );
    f.write("src/util.rs", "// Alpha helpers\npub fn alpha() {}\n");
    f.write("README.md", "alpha and omega\n");
    f.write(".hidden/notes.txt", "alpha hidden\n");
    f.write(".gitignore", "/target/\n*.log\n");
    f.write("target/out.txt", "alpha built\n");
    f.write("debug.log", "alpha log\n");
    f.write("data.bin", b"alpha\0binary\n");
    f.write(".env", "ALPHA_KEY=1\n");
    f.write("certs/server.pem", "alpha cert\n");
    f.write(".git/config", "alpha\n");
    f.write(".jp/conversations/1/conversation.json", "alpha\n");
    f
}

#[test]
fn finds_matching_lines_the_way_rg_does() {
    // Not the ignored, hidden, binary or secret files, nor .git or jp's
    // conversations.
    let f = sample();
    assert_eq!(
        grep(&f, json!({ "pattern": "alpha" })),
        Outcome::success(format!(
            "README.md:1:alpha and omega\nsrc/lib.rs:2:    let alpha = 1;\nsrc/util.rs:2:pub fn alpha() {{}}\n{SECRETS}"
        ))
    );
    assert_eq!(
        grep(&f, json!({ "pattern": r"let \w+ = \d" })),
        Outcome::success(format!(
            "src/lib.rs:2:    let alpha = 1;\nsrc/lib.rs:3:    let beta = 2;\n{SECRETS}"
        ))
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "omicron" })),
        Outcome::success(format!("no matches\n{SECRETS}"))
    );
    let empty = Fixture::new();
    assert_eq!(
        grep(&empty, json!({ "pattern": "x" })),
        Outcome::success("no matches")
    );
}

#[test]
fn case_insensitive() {
    let f = sample();
    assert_eq!(
        grep(
            &f,
            json!({ "pattern": "ALPHA", "case_insensitive": true, "paths": ["src"] })
        ),
        Outcome::success(
            "src/lib.rs:2:    let alpha = 1;\nsrc/util.rs:1:// Alpha helpers\nsrc/util.rs:2:pub fn alpha() {}"
        )
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "ALPHA", "paths": ["src"] })),
        Outcome::success("no matches")
    );
}

#[test]
fn context_lines() {
    let f = sample();
    assert_eq!(
        grep(
            &f,
            json!({ "pattern": "alpha", "context": 1, "glob": "*.rs" })
        ),
        Outcome::success(
            "src/lib.rs-1-fn main() {\nsrc/lib.rs:2:    let alpha = 1;\nsrc/lib.rs-3-    let beta = 2;\n--\nsrc/util.rs-1-// Alpha helpers\nsrc/util.rs:2:pub fn alpha() {}"
        )
    );
    f.write("gaps.txt", "x\n1\n2\n3\n4\nx\nx\n5\n6\n7\nx\n");
    assert_eq!(
        grep(
            &f,
            json!({ "pattern": "^x$", "context": 1, "paths": ["gaps.txt"] })
        ),
        Outcome::success(
            "gaps.txt:1:x\ngaps.txt-2-1\n--\ngaps.txt-5-4\ngaps.txt:6:x\ngaps.txt:7:x\ngaps.txt-8-5\n--\ngaps.txt-10-7\ngaps.txt:11:x"
        )
    );
    for context in [json!(11), json!(-1), json!(1.5), json!("2")] {
        assert_eq!(
            grep(&f, json!({ "pattern": "x", "context": context })),
            error("argument `context` must be an integer from 0 to 10"),
            "{context}"
        );
    }
}

#[test]
fn paths_and_globs_narrow_the_search() {
    let f = sample();
    assert_eq!(
        grep(
            &f,
            json!({ "pattern": "alpha", "paths": ["src/util.rs", "README.md"] })
        ),
        Outcome::success("README.md:1:alpha and omega\nsrc/util.rs:2:pub fn alpha() {}")
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "alpha", "glob": "src/*.rs" })),
        Outcome::success("src/lib.rs:2:    let alpha = 1;\nsrc/util.rs:2:pub fn alpha() {}")
    );
    assert_eq!(
        grep(
            &f,
            json!({ "pattern": "alpha", "glob": "*.md", "paths": ["src"] })
        ),
        Outcome::success("no matches")
    );
    // A path named is searched even when ignored or hidden, as rg does.
    assert_eq!(
        grep(
            &f,
            json!({ "pattern": "alpha", "paths": ["debug.log", ".hidden", "target"] })
        ),
        Outcome::success(
            ".hidden/notes.txt:1:alpha hidden\ndebug.log:1:alpha log\ntarget/out.txt:1:alpha built"
        )
    );
    // A glob with a hidden component walks hidden directories.
    assert_eq!(
        grep(&f, json!({ "pattern": "alpha", "glob": ".hidden/*" })),
        Outcome::success(".hidden/notes.txt:1:alpha hidden")
    );
    // The same file twice is searched once.
    assert_eq!(
        grep(
            &f,
            json!({ "pattern": "beta", "paths": ["src", "src/lib.rs", "./src"] })
        ),
        Outcome::success("src/lib.rs:3:    let beta = 2;")
    );
}

#[test]
fn secret_files_are_searched_only_when_named() {
    let f = sample();
    f.write("config/credentials.json", "alpha\n");
    f.write("more/a.key", "alpha\n");
    assert_eq!(
        grep(
            &f,
            json!({ "pattern": "alpha", "paths": ["config", "more", "certs"] })
        ),
        Outcome::success(
            "no matches\n(not searched, as they may hold secrets: certs/server.pem, config/credentials.json, more/a.key; name one in `paths` to search it)"
        )
    );
    assert_eq!(
        grep(
            &f,
            json!({ "pattern": "alpha", "paths": ["certs/server.pem", "more/a.key"] })
        ),
        Outcome::success("certs/server.pem:1:alpha cert\nmore/a.key:1:alpha")
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "(?i)alpha", "paths": [".env"] })),
        Outcome::success(".env:1:ALPHA_KEY=1")
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "alpha", "glob": "**/*.pem" })),
        Outcome::success("certs/server.pem:1:alpha cert")
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "KEY", "glob": ".env" })),
        Outcome::success(".env:1:ALPHA_KEY=1")
    );
    // A directory of secrets is left out whole, and said once.
    f.write("home/.ssh/config", "alpha\n");
    f.write("home/.ssh/id_rsa", "alpha\n");
    assert_eq!(
        grep(&f, json!({ "pattern": "alpha", "glob": "home/**" })),
        Outcome::success("no matches")
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "alpha", "glob": "home/.*/*" })),
        Outcome::success(
            "no matches\n(not searched, as they may hold secrets: home/.ssh/; name one in `paths` to search it)"
        )
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "alpha", "paths": ["home/.ssh"] })),
        Outcome::success("home/.ssh/config:1:alpha\nhome/.ssh/id_rsa:1:alpha")
    );
    for i in 0..7 {
        f.write(&format!("keys/{i}.pem"), "alpha\n");
    }
    assert_eq!(
        grep(&f, json!({ "pattern": "nothing", "paths": ["keys"] })),
        Outcome::success(
            "no matches\n(not searched, as they may hold secrets: keys/0.pem, keys/1.pem, keys/2.pem, keys/3.pem, keys/4.pem and 2 more; name one in `paths` to search it)"
        )
    );
}

#[test]
fn binary_files_are_skipped() {
    let f = Fixture::new();
    f.write("a.bin", b"alpha\0\x01\x02");
    // A NUL far into the file: the matches before it are dropped too.
    let mut late = "alpha\n".repeat(20_000).into_bytes();
    late.push(0);
    f.write("late.bin", &late);
    f.write("b.txt", "alpha\n");
    assert_eq!(
        grep(
            &f,
            json!({ "pattern": "alpha", "paths": ["a.bin", "late.bin", "b.txt"] })
        ),
        Outcome::success("b.txt:1:alpha")
    );
}

#[test]
fn long_lines_are_cut() {
    let f = Fixture::new();
    f.write(
        "min.js",
        format!("{}alpha{}\n", "é".repeat(240), "z".repeat(50)),
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "alpha" })),
        Outcome::success(format!(
            "min.js:1:{}alphazzzzz [... 45 more characters]",
            "é".repeat(240)
        ))
    );
}

#[test]
fn each_file_and_the_whole_result_are_bounded() {
    let f = Fixture::new();
    for name in ["a", "b", "c", "d", "e", "f"] {
        f.write(&format!("{name}.txt"), "hit\n".repeat(21));
    }
    let mut expected = String::new();
    for name in ["a", "b", "c", "d", "e"] {
        for line in 1..=20 {
            writeln!(expected, "{name}.txt:{line}:hit").unwrap();
        }
        writeln!(expected, "... 1 more match in {name}.txt").unwrap();
    }
    expected.push_str("... 26 more matches in 6 files; narrow with `glob` or `paths`");
    assert_eq!(
        grep(&f, json!({ "pattern": "hit" })),
        Outcome::success(expected)
    );
}

#[test]
fn context_counts_toward_the_line_bound() {
    let f = Fixture::new();
    let text: String = (1..=21)
        .map(|n| {
            if n == 11 {
                "hit\n".to_owned()
            } else {
                format!("{n}\n")
            }
        })
        .collect();
    for i in 0..20 {
        f.write(&format!("{i:02}.txt"), &text);
    }
    let mut expected = String::new();
    for i in 0..19 {
        if i > 0 {
            expected.push_str("--\n");
        }
        for n in 1..=21 {
            let (mark, line) = if n == 11 {
                (':', "hit".to_owned())
            } else {
                ('-', n.to_string())
            };
            writeln!(expected, "{i:02}.txt{mark}{n}{mark}{line}").unwrap();
        }
    }
    expected.push_str("... 1 more match in 1 file; narrow with `glob` or `paths`");
    assert_eq!(
        grep(&f, json!({ "pattern": "hit", "context": 10 })),
        Outcome::success(expected)
    );
}

#[test]
fn context_before_a_match_that_is_cut_is_left_out() {
    let f = Fixture::new();
    for name in ["a", "b", "c", "d"] {
        f.write(&format!("{name}.txt"), "hit\n".repeat(20));
    }
    f.write("e.txt", "hit\n".repeat(19));
    f.write("f.txt", "1\n2\nhit\n4\n5\n6\n7\n8\n9\nhit\n");
    let mut expected = String::new();
    for (name, count) in [("a", 20), ("b", 20), ("c", 20), ("d", 20), ("e", 19)] {
        if name != "a" {
            expected.push_str("--\n");
        }
        for line in 1..=count {
            writeln!(expected, "{name}.txt:{line}:hit").unwrap();
        }
    }
    expected.push_str("--\nf.txt-1-1\nf.txt-2-2\nf.txt:3:hit\nf.txt-4-4\nf.txt-5-5\n");
    expected.push_str("... 1 more match in 1 file; narrow with `glob` or `paths`");
    assert_eq!(
        grep(&f, json!({ "pattern": "hit", "context": 2 })),
        Outcome::success(expected)
    );
}

#[test]
fn a_bad_regex_is_named() {
    let f = sample();
    let Outcome::Error { message, .. } = grep(&f, json!({ "pattern": "let (alpha" })) else {
        panic!("expected an error");
    };
    assert_eq!(
        message,
        "invalid regex `let (alpha`: regex parse error:\n    let (alpha\n        ^\nerror: unclosed group"
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "x", "case_insensitive": "yes" })),
        error("argument `case_insensitive` must be true or false")
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "x", "glob": "src/[" })),
        error("invalid glob `src/[`: unclosed character class; missing ']'")
    );
    assert_eq!(grep(&f, json!({})), error("missing argument `pattern`"));
}

#[test]
fn paths_are_confined_to_the_workspace() {
    let f = sample();
    assert_eq!(
        grep(&f, json!({ "pattern": "x", "paths": ["src", "../other"] })),
        error(
            "refused `../other`: it leads outside the workspace (`..` goes above the workspace root)"
        )
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "x", "paths": ["/etc"] })),
        error(
            "refused `/etc`: it is an absolute path outside the workspace; use a path relative to the workspace root"
        )
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "x", "paths": [".git"] })),
        error(
            "refused `.git`: git's directory (.git) and jp's conversations (.jp/conversations) are not searched"
        )
    );
    assert_eq!(
        grep(
            &f,
            json!({ "pattern": "x", "paths": ["./.jp/conversations/1"] })
        ),
        error(
            "refused `./.jp/conversations/1`: git's directory (.git) and jp's conversations (.jp/conversations) are not searched"
        )
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "x", "paths": ["docs"] })),
        error("`docs` does not exist")
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "x", "glob": "../*.rs" })),
        error(
            "refused the glob `../*.rs`: it is matched against paths inside the workspace; write it relative to the workspace root, without `..`"
        )
    );
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_not_followed() {
    let f = Fixture::new();
    f.write("src/lib.rs", "alpha\n");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "alpha\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), f.path("out")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), f.path("link.txt")).unwrap();
    assert_eq!(
        grep(&f, json!({ "pattern": "alpha" })),
        Outcome::success("src/lib.rs:1:alpha")
    );
    // A link named in `paths` that stays inside is searched where it
    // leads.
    std::os::unix::fs::symlink("src", f.path("code")).unwrap();
    std::os::unix::fs::symlink("src/lib.rs", f.path("lib-link.rs")).unwrap();
    assert_eq!(
        grep(
            &f,
            json!({ "pattern": "alpha", "paths": ["code", "lib-link.rs"] })
        ),
        Outcome::success("src/lib.rs:1:alpha")
    );
    assert_eq!(
        grep(&f, json!({ "pattern": "alpha", "paths": ["out"] })),
        error(format!(
            "refused `out`: `out` leads to `{}` through a symbolic link, outside the workspace",
            outside.path().canonicalize().unwrap().display()
        ))
    );
}
