#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// The `pattern = '...'` values of the rules of `[conversation.tools.TOOL.policy]`
/// in the default tools, whose `arg` is `arg`.
fn policy_patterns(tool: &str, arg: &str) -> Vec<String> {
    let text = include_str!("default_tools.toml");
    let header = format!("[conversation.tools.{tool}.policy]");
    let start = text.find(&header).unwrap_or_else(|| panic!("{header}"));
    let section = &text[start + header.len()..];
    let section = &section[..section.find("\n[").unwrap_or(section.len())];
    section
        .lines()
        .filter(|line| line.contains(&format!("arg = \"{arg}\"")))
        .filter_map(|line| {
            let (_, rest) = line.split_once("pattern = '")?;
            Some(rest[..rest.find('\'')?].to_owned())
        })
        .collect()
}

#[test]
fn the_patterns_are_fs_read_files_policys() {
    assert_eq!(policy_patterns("fs_read_file", "/path"), PATTERNS);
    // fs_grep's `paths` rules: the same, a directory also without its `/`.
    let mut expected = PATTERNS.map(str::to_owned).to_vec();
    expected[4] = expected[4].replace(")/", ")(/|$)");
    assert_eq!(policy_patterns("fs_grep", "/paths"), expected);
}

#[test]
fn secret_paths() {
    for secret in [
        ".env-prod",
        ".env_local",
        "prod.env",
        "config/secrets.env",
        ".pgpass",
        ".vault-token",
        "kubeconfig",
        "deploy/service-account-prod.json",
        "infra/terraform.tfstate.backup",
        ".env",
        "config/.env.production",
        ".envrc",
        "certs/server.PEM",
        "a.key",
        "deploy/id_rsa",
        "id_ed25519.pub",
        ".npmrc",
        "sub/credentials.json",
        "secrets.yaml",
        ".ssh/config",
    ] {
        assert!(is_secret(secret, false), "{secret}");
    }
    for plain in [
        "src/env.rs",
        "environment.md",
        "src/keys.rs",
        "key.rs",
        "my.env.rs/x",
        "ssh/config",
    ] {
        assert!(!is_secret(plain, false), "{plain}");
    }
    assert!(is_secret(".ssh", true));
    assert!(is_secret("home/.aws/", true));
    assert!(!is_secret(".ssh", false));
    assert!(names_secret(".ssh"));
    assert!(names_secret("config/.env"));
    assert!(!names_secret("src"));
}

#[test]
fn globs_that_name_secrets() {
    for names in [
        ".env",
        "**/.env",
        ".env.*",
        "*.pem",
        "./certs/*.key",
        "id_rsa*",
        "**/.ssh/**",
        "**/credentials.json",
    ] {
        assert!(glob_names_secret(names), "{names}");
    }
    for not in [
        "*",
        "**/*",
        "*.rs",
        "*.{pem,key}",
        ".env*",
        "src/**",
        "*.p[e]m",
    ] {
        assert!(!glob_names_secret(not), "{not}");
    }
}

proptest::proptest! {
    /// Fail closed: a glob that lets `fs_grep` or `fs_glob` see files that
    /// may hold secrets is one their policies ask about.
    #[test]
    fn a_glob_that_names_secrets_is_asked_about(
        parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "*", "**/", "?", "/", ".", "x", "[a]", "{a,b}", "\\", ".env", "rc", "id_",
                "rsa", "ed25519", ".pem", ".key", "npmrc", "_netrc", ".ssh/", ".aws",
                "credentials", "secret", "s", ".json", ".yml", "git-credentials",
            ]),
            1..8,
        )
    ) {
        let glob: String = parts.concat();
        let asks = |tool: &str, arg: &str| {
            policy_patterns(tool, arg)
                .iter()
                .any(|p| regex::Regex::new(p).unwrap().is_match(&glob))
        };
        if glob_names_secret(&glob) {
            proptest::prop_assert!(asks("fs_grep", "/glob"), "fs_grep: {glob}");
            proptest::prop_assert!(asks("fs_glob", "/pattern"), "fs_glob: {glob}");
        }
    }
}

proptest::proptest! {
    /// Fail closed: a `paths` entry under which `fs_grep` searches files
    /// that may hold secrets is one its policy asks about.
    #[test]
    fn a_path_that_names_secrets_is_asked_about(
        parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "src", "/", ".", "x", ".env", "rc", ".local", "id_rsa", ".pub", ".pem", ".key",
                ".npmrc", "credentials", ".json", "secrets", ".toml", ".ssh", ".kube", "config",
            ]),
            1..6,
        )
    ) {
        let path: String = parts.concat();
        if names_secret(&path) {
            let asks = policy_patterns("fs_grep", "/paths")
                .iter()
                .any(|p| regex::Regex::new(p).unwrap().is_match(&path));
            proptest::prop_assert!(asks, "{path}");
        }
    }
}
