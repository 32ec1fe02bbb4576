//! Which of jp's variables a sandboxed process gets.

#![allow(clippy::unwrap_used)]

use super::*;

fn names(sandbox: &Sandbox, parent: &[&str]) -> Vec<String> {
    sandbox
        .environment(
            parent
                .iter()
                .map(|name| (OsString::from(name), OsString::from("v"))),
        )
        .into_iter()
        .map(|(name, _)| name.into_string().unwrap())
        .collect()
}

#[test]
fn only_the_default_list_passes_and_nothing_that_looks_like_a_credential() {
    let parent = [
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "LC_SECRET_TOKEN",
        "TERM",
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "SSH_AUTH_SOCK",
        "EDITOR",
        "CARGO_HOME",
    ];
    assert_eq!(
        names(&Sandbox::default(), &parent),
        ["PATH", "HOME", "LANG", "LC_ALL", "TERM"]
    );
}

#[test]
fn a_named_variable_passes_even_one_that_looks_like_a_credential() {
    let sandbox = Sandbox {
        env: vec!["CARGO_HOME".into(), "GITHUB_TOKEN".into()],
        ..Sandbox::default()
    };
    let parent = [
        "PATH",
        "GITHUB_TOKEN",
        "GITHUB_TOKEN_2",
        "CARGO_HOME",
        "cargo_home",
    ];
    assert_eq!(
        names(&sandbox, &parent),
        ["PATH", "GITHUB_TOKEN", "CARGO_HOME"]
    );
}

#[cfg(unix)]
#[test]
fn a_name_that_is_not_utf8_never_passes() {
    use std::os::unix::ffi::OsStringExt as _;
    let odd = OsString::from_vec(vec![b'P', b'A', b'T', 0xff]);
    let got = Sandbox::default().environment([(odd, OsString::from("x"))]);
    assert!(got.is_empty());
}
