//! Files that commonly hold secrets, which `fs_grep` and `fs_glob` leave
//! out unless a call names them.
//!
//! [`PATTERNS`] are the regular expressions `fs_read_file`'s policy asks
//! about in `default_tools.toml` (a test keeps the two the same), matched
//! against a path relative to the workspace root with `/` between its
//! components; a directory is matched with a `/` after its name, so the
//! pattern for `.ssh/` applies to the directory itself.

use std::sync::LazyLock;

use regex::RegexSet;

/// The patterns of paths that may hold secrets (regular expressions,
/// matched against a path relative to the workspace root with `/` between
/// its components; a directory with a `/` after its name).
pub const PATTERNS: [&str; 5] = [
    // Environment files: .env, .env.local, .env-prod, config/.env.production,
    // .envrc, prod.env.
    r"(?i)(^|/)(\.env(rc|[._-][^/]*)?|[^/]+\.env)$",
    // Keys and certificates, Terraform variables.
    r"(?i)\.(pem|key|p12|pfx|jks|keystore|tfvars|tfstate|tfstate\.backup)$",
    // SSH keys, public ones included.
    r"(?i)(^|/)id_(rsa|dsa|ecdsa|ed25519)[^/]*$",
    // Credential files of package managers, git, databases, cloud tools and
    // web servers.
    r"(?i)(^|/)(\.npmrc|\.pypirc|\.netrc|_netrc|\.git-credentials|\.htpasswd|\.pgpass|\.vault-token|kubeconfig|service-account[^/]*\.json|credentials(\.json)?|secrets?\.(json|ya?ml|toml))$",
    // Directories of secrets.
    r"(?i)(^|/)(\.ssh|\.gnupg|\.aws|\.docker|\.kube)/",
];

/// [`PATTERNS`], compiled once.
#[expect(clippy::expect_used, reason = "constant patterns, tested")]
static SET: LazyLock<RegexSet> =
    LazyLock::new(|| RegexSet::new(PATTERNS).expect("the secret patterns are valid"));

/// Whether the file (or, with `is_dir`, the directory) at `rel` may hold
/// secrets.
pub(crate) fn is_secret(rel: &str, is_dir: bool) -> bool {
    if is_dir {
        SET.is_match(&format!("{}/", rel.trim_end_matches('/')))
    } else {
        SET.is_match(rel)
    }
}

/// Whether a path a call names (`rel`, a file or a directory) is one that
/// may hold secrets, as file or directory.
pub(crate) fn names_secret(rel: &str) -> bool {
    is_secret(rel, false) || is_secret(rel, true)
}

/// Whether `glob` names files that may hold secrets: whether the glob,
/// with each wildcard (`*`, `?`, `[...]`, `{...}`) replaced by a plain
/// letter, is such a path. `**/.env`, `*.pem` and `id_rsa*` do; `*`,
/// `*.rs` and `*.{pem,key}` do not (name such files one pattern at a
/// time).
pub(crate) fn glob_names_secret(glob: &str) -> bool {
    let mut plain = String::with_capacity(glob.len());
    let mut chars = glob.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' => plain.push('x'),
            '[' | '{' => {
                let close = if c == '[' { ']' } else { '}' };
                for inner in chars.by_ref() {
                    if inner == close {
                        break;
                    }
                }
                plain.push('x');
            }
            other => plain.push(other),
        }
    }
    let plain = plain.trim_start_matches("./");
    is_secret(plain, false)
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
