//! Property (issue 9): an `unattended` decision on a `path` argument implies
//! that the path, resolved the way a tool that resolves paths itself would
//! (every symlink followed, no 40-link limit, like Python's `realpath`), is
//! inside the workspace. The oracle below is written independently of the
//! engine's resolver.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashSet, VecDeque};
use std::ffi::OsString;
use std::os::unix::fs::symlink;
use std::path::{Component, Path, PathBuf};

use jp_config::policy::{Mode, Policy, PolicyField, PolicySpec, RuleOrigin};
use jp_config::tool::ToolParameters;
use proptest::prelude::*;
use serde_json::json;

/// Policies whose first rule is `unattended` on `/path`.
const POLICIES: [&str; 5] = [
    r#"{ arg = "/path", prefix = "src/", mode = "unattended" }"#,
    r#"{ arg = "/path", prefix = ".", mode = "unattended" }"#,
    r#"{ arg = "/path", pattern = "\\.rs$", mode = "unattended" }"#,
    r#"{ arg = "/path", pattern = "x", mode = "unattended" }"#,
    r#"{ arg = "/path", enum = ["src/x.rs", "a/x.rs", "."], mode = "unattended" }"#,
];

fn compile(rule: &str) -> Policy {
    #[derive(serde::Deserialize)]
    struct Holder {
        run: PolicySpec,
    }
    let params: ToolParameters =
        toml::from_str(r#"path = { type = "path", required = true }"#).unwrap();
    let holder: Holder = toml::from_str(&format!("run = [{rule}, {{ mode = \"ask\" }}]")).unwrap();
    let compiled = Policy::compile(&holder.run, PolicyField::Run, RuleOrigin::Tool, &params);
    compiled.policy.expect("the policy compiles")
}

/// Where `path` (absolute) leads when every symlink is followed without a
/// limit; `None` when the links loop.
fn oracle(path: &Path) -> Option<PathBuf> {
    let mut pending: VecDeque<OsString> = path
        .components()
        .filter(|c| !matches!(c, Component::RootDir))
        .map(|c| c.as_os_str().to_owned())
        .collect();
    let mut out = PathBuf::from("/");
    let mut seen = HashSet::new();
    while let Some(name) = pending.pop_front() {
        if name == "." {
            continue;
        }
        if name == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&name);
        match std::fs::read_link(&next) {
            Ok(target) => {
                if !seen.insert((next.clone(), pending.clone())) {
                    return None;
                }
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                let parts: Vec<OsString> = target
                    .components()
                    .filter(|c| !matches!(c, Component::RootDir))
                    .map(|c| c.as_os_str().to_owned())
                    .collect();
                for part in parts.into_iter().rev() {
                    pending.push_front(part);
                }
            }
            Err(_) => out = next,
        }
    }
    Some(out)
}

/// A link: which directory it is in, its name, its target.
#[derive(Debug, Clone)]
struct Link {
    dir: &'static str,
    name: &'static str,
    target: &'static str,
}

fn links() -> impl Strategy<Value = Vec<Link>> {
    let dirs = prop::sample::select(vec![".", "src", "a", "a/b"]);
    let names = prop::sample::select(vec!["l0", "l1", "l2", "l3"]);
    let targets = prop::sample::select(vec![
        "..", "../..", "../../..", ".", "src", "a/b", "l0", "l1", "l2", "l3/x", "OUT", "OUT/d",
        "../l1", "b",
    ]);
    prop::collection::vec(
        (dirs, names, targets).prop_map(|(dir, name, target)| Link { dir, name, target }),
        0..8,
    )
}

fn paths() -> impl Strategy<Value = String> {
    let part = prop::sample::select(vec![
        "src", "a", "b", "l0", "l1", "l2", "l3", "ch", "..", ".", "x.rs", "new", "d",
    ]);
    (
        prop::sample::select(vec!["", "", "", "WS/", "OUT/"]),
        prop::collection::vec(part, 1..6),
    )
        .prop_map(|(start, parts)| format!("{start}{}", parts.join("/")))
}

/// Builds the tree; returns the canonical workspace root.
fn build(ws: &Path, out: &Path, links: &[Link], chain: Option<(usize, bool)>) -> PathBuf {
    for dir in ["src", "a/b"] {
        std::fs::create_dir_all(ws.join(dir)).unwrap();
    }
    std::fs::create_dir_all(out.join("d")).unwrap();
    let out_text = out.display().to_string();
    for link in links {
        let target = link.target.replace("OUT", &out_text);
        // A name already taken (by a link or a directory) is skipped.
        let _ = symlink(target, ws.join(link.dir).join(link.name));
    }
    if let Some((length, leads_out)) = chain {
        std::fs::create_dir_all(ws.join("chain")).unwrap();
        for i in 0..length {
            symlink(format!("c{}", i + 1), ws.join(format!("chain/c{i}"))).unwrap();
        }
        let end = if leads_out {
            out.to_path_buf()
        } else {
            ws.join("src")
        };
        symlink(end, ws.join(format!("chain/c{length}"))).unwrap();
        symlink("../chain/c0", ws.join("src/ch")).unwrap();
    }
    std::fs::canonicalize(ws).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn unattended_implies_the_resolved_path_is_inside(
        links in links(),
        chain in prop::option::of((30usize..50, any::<bool>())),
        path in paths(),
    ) {
        let ws = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let root = build(ws.path(), out.path(), &links, chain);
        let value = path
            .replace("WS", &root.display().to_string())
            .replace("OUT", &out.path().display().to_string());
        for rule in POLICIES {
            let decision = compile(rule).evaluate(&json!({ "path": value }), ws.path());
            if decision.mode == Mode::Unattended {
                let resolved = oracle(&root.join(&value));
                prop_assert!(
                    resolved.as_ref().is_some_and(|p| p.starts_with(&root)),
                    "{rule} approved {value:?}, which resolves to {resolved:?}, outside {}",
                    root.display()
                );
            }
        }
    }
}

#[test]
fn the_issue_reproductions() {
    let ws = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let src = compile(POLICIES[0]);
    let decide =
        |policy: &Policy, path: &str| policy.evaluate(&json!({ "path": path }), ws.path()).mode;

    // 45 links to outside, then a loop: never unattended.
    build(ws.path(), out.path(), &[], Some((45, true)));
    assert_eq!(decide(&src, "src/ch/pwned.txt"), Mode::Ask);
    symlink("b", ws.path().join("src/a")).unwrap();
    symlink("a", ws.path().join("src/b")).unwrap();
    assert_eq!(decide(&src, "src/a/x"), Mode::Ask);
    // An unattended pattern does not reach outside.
    assert_eq!(decide(&compile(POLICIES[2]), "../../etc/x.rs"), Mode::Ask);
    assert_eq!(decide(&compile(POLICIES[2]), "src/x.rs"), Mode::Unattended);

    // 40 links that stay inside: src/ch -> c0 .. c38 -> src.
    let ws = tempfile::tempdir().unwrap();
    build(ws.path(), out.path(), &[], Some((38, false)));
    let decision = src.evaluate(&json!({ "path": "src/ch/y.rs" }), ws.path());
    assert_eq!(decision.mode, Mode::Unattended);
}
