//! Property (issue 9, RFD D25 architecture decision 3): when a policy
//! decides `unattended` for a `path` argument, the path is inside the
//! workspace, both written out lexically and resolved the way a tool that
//! resolves paths itself would: every symlink followed with no 40-link
//! limit, like Python's `os.path.realpath(strict=False)`; and so is the
//! file a tool opens that removes `..` first (`os.path.normpath`, then
//! `open`), which differs where a `..` follows a link (issue 34, item 6).
//!
//! The resolver here ([`realpath`]) is written independently of jp's. It
//! follows Python's `posixpath._joinrealpath`: it recurses into each link's
//! target, remembers where every link already resolved leads, and calls it a
//! loop when a link is met again while it is still being resolved. jp instead
//! walks a queue of components, remembers each link followed together with
//! the rest of the path, and stops after 40 links.
//!
//! The trees are random: links in and out of the workspace (relative ones
//! whose `..` leave it, absolute ones to the outside, to the workspace, to
//! `/`), loops, dangling links, links that lead out and back in, chains of
//! 30 to 50 links, and a workspace root that is itself reached through a
//! link. The paths are random too: relative with `.`, `..` and repeated
//! separators, through the links, absolute inside and outside.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use jp_policy::{Compiled, Mode, Policy, PolicyField, PolicySpec, RuleOrigin, ToolParameters};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;

// ---------------------------------------------------------------------------
// The independent resolver.
// ---------------------------------------------------------------------------

/// Where the absolute `path` leads when every symlink on the way is followed
/// (dangling ones too), with no limit on their number: components that do
/// not exist are kept as written, and `..` goes to the parent of what the
/// path has resolved to so far. `None` when following the links never ends.
fn realpath(path: &Path) -> Option<PathBuf> {
    assert!(path.is_absolute(), "{} is not absolute", path.display());
    let mut links = HashMap::new();
    join_realpath(PathBuf::from("/"), path.as_os_str().as_bytes(), &mut links)
}

/// Resolves `rest` from `base` (absolute, with no symlinks in it). `links`
/// maps every link met so far to where it leads, or to `None` while it is
/// still being resolved: meeting such a link again is a loop.
fn join_realpath(
    mut base: PathBuf,
    rest: &[u8],
    links: &mut HashMap<PathBuf, Option<PathBuf>>,
) -> Option<PathBuf> {
    if rest.starts_with(b"/") {
        base = PathBuf::from("/");
    }
    for name in rest.split(|&b| b == b'/') {
        match name {
            b"" | b"." => continue,
            b".." => {
                // `base` holds no symlinks: its parent is the physical one.
                base.pop();
                continue;
            }
            _ => {}
        }
        let next = base.join(OsStr::from_bytes(name));
        let is_link =
            std::fs::symlink_metadata(&next).is_ok_and(|meta| meta.file_type().is_symlink());
        if !is_link {
            // A directory, a file, or nothing yet: kept as written.
            base = next;
            continue;
        }
        match links.get(&next) {
            Some(Some(resolved)) => {
                base = resolved.clone();
                continue;
            }
            Some(None) => return None,
            None => {}
        }
        let target = std::fs::read_link(&next).ok()?;
        links.insert(next.clone(), None);
        let resolved = join_realpath(base, target.as_os_str().as_bytes(), links)?;
        links.insert(next, Some(resolved.clone()));
        base = resolved;
    }
    Some(base)
}

/// `path` (absolute) with `.`, `..` and repeated separators removed,
/// without looking at the file system.
fn lexical(path: &Path) -> PathBuf {
    assert!(path.is_absolute(), "{} is not absolute", path.display());
    let mut out = PathBuf::from("/");
    for name in path.as_os_str().as_bytes().split(|&b| b == b'/') {
        match name {
            b"" | b"." => {}
            b".." => {
                out.pop();
            }
            _ => out.push(OsStr::from_bytes(name)),
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Policies.
// ---------------------------------------------------------------------------

#[derive(serde::Deserialize)]
struct Holder {
    run: PolicySpec,
}

fn compile_rules(rules: &str) -> Compiled {
    let params: ToolParameters =
        toml::from_str(r#"path = { type = "path", required = true }"#).unwrap();
    let holder: Holder = toml::from_str(&format!("run = {rules}")).unwrap();
    Policy::compile(&holder.run, PolicyField::Run, RuleOrigin::Tool, &params)
}

/// `[rule, { mode = "ask" }]`, which must compile.
fn compile(rule: &str) -> Policy {
    let compiled = compile_rules(&format!(r#"[{rule}, {{ mode = "ask" }}]"#));
    assert!(compiled.errors.is_empty(), "{rule}: {:?}", compiled.errors);
    compiled.policy.expect("the policy compiles")
}

/// `unattended` rules on `/path` whose matchers name no absolute location,
/// so only paths inside the workspace may be approved.
///
/// `pattern = ""` and `"^"` are refused by the compiler (they would match
/// everything), so they cannot approve anything (see
/// [`an_empty_pattern_is_refused`]); `pattern = "(?s)."`, which matches
/// every path (a path is never empty), stands in for them.
const RELATIVE_RULES: [&str; 7] = [
    r#"{ arg = "/path", prefix = "src/", mode = "unattended" }"#,
    r#"{ arg = "/path", prefix = ".", mode = "unattended" }"#,
    r#"{ arg = "/path", pattern = "\\.rs$", mode = "unattended" }"#,
    r#"{ arg = "/path", pattern = "(?s).", mode = "unattended" }"#,
    r#"{ arg = "/path", pattern = "x", mode = "unattended" }"#,
    r#"{ arg = "/path", enum = ["src/x.rs", "a/x.rs", ".", "src/l0", "src/sub/y.rs", "a/b/l1/x.rs", "src/ch/y.rs"], mode = "unattended" }"#,
    r#"{ arg = "/path", const = "src/l1/new", mode = "unattended" }"#,
];

/// An `unattended` rule whose prefix is the (canonical) absolute path of
/// `root/src`: such a matcher names its location itself, so jp does not add
/// the workspace check, and the prefix alone must keep the path inside.
fn absolute_rule(root: &Path) -> String {
    let prefix = toml::Value::String(root.join("src").display().to_string());
    format!(r#"{{ arg = "/path", prefix = {prefix}, mode = "unattended" }}"#)
}

// ---------------------------------------------------------------------------
// Trees.
// ---------------------------------------------------------------------------

/// A temporary directory holding the workspace `ws`, an outside directory
/// `out` and, when asked, a link `link -> ws` through which the workspace
/// is given to jp.
struct Fixture {
    _dir: tempfile::TempDir,
    /// The workspace root as given to jp (maybe through a link).
    given: PathBuf,
    /// The workspace root, canonical.
    root: PathBuf,
    /// A directory outside the workspace, canonical.
    out: PathBuf,
}

/// `ws/{src/{x.rs,sub/y.rs},a/{x.rs,b/},f.txt}` and `out/{d/,x.rs}`.
fn fixture(root_via_link: bool) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("ws");
    let out = base.join("out");
    for d in ["src/sub", "a/b"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::create_dir_all(out.join("d")).unwrap();
    for f in ["src/x.rs", "src/sub/y.rs", "a/x.rs", "f.txt"] {
        std::fs::write(root.join(f), "").unwrap();
    }
    std::fs::write(out.join("x.rs"), "").unwrap();
    let given = if root_via_link {
        symlink("ws", base.join("link")).unwrap();
        base.join("link")
    } else {
        root.clone()
    };
    Fixture {
        _dir: dir,
        given,
        root,
        out,
    }
}

/// What a link points to.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// Written relative to the link's directory.
    Relative(&'static str),
    /// An absolute path into the workspace (canonical root joined with this).
    InRoot(&'static str),
    /// An absolute path into the outside directory.
    InOut(&'static str),
    /// An absolute path as written.
    Absolute(&'static str),
}

/// A link: where it is (`OUT` for the outside directory), its name, its
/// target.
#[derive(Debug, Clone, Copy)]
struct Link {
    dir: &'static str,
    name: &'static str,
    target: Target,
}

/// How a chain of links from `src/ch` ends.
#[derive(Debug, Clone, Copy)]
enum ChainEnd {
    /// At `src` (absolute).
    Src,
    /// At the outside directory (absolute).
    Out,
    /// Above the workspace, relatively (`../..` from `chain/`).
    Up,
    /// Back at its first link: a loop.
    Loop,
}

/// `src/ch -> ../chain/c0`, `chain/c0 -> c1`, ..., `chain/c{n-2} -> end`:
/// `links` symlinks in all from `src/ch` to `end`. Each inner link is
/// written relative or absolute.
fn chain(fx: &Fixture, links: usize, end: ChainEnd, absolute: bool) {
    assert!(links >= 2);
    let dir = fx.root.join("chain");
    std::fs::create_dir_all(&dir).unwrap();
    symlink("../chain/c0", fx.root.join("src/ch")).unwrap();
    let last = links - 2;
    for i in 0..last {
        let next = format!("c{}", i + 1);
        let target = if absolute {
            dir.join(next)
        } else {
            PathBuf::from(next)
        };
        symlink(target, dir.join(format!("c{i}"))).unwrap();
    }
    let end = match end {
        ChainEnd::Src => fx.root.join("src"),
        ChainEnd::Out => fx.out.clone(),
        ChainEnd::Up => PathBuf::from("../.."),
        ChainEnd::Loop => PathBuf::from("c0"),
    };
    symlink(end, dir.join(format!("c{last}"))).unwrap();
}

/// Creates `links` in the fixture; a name already taken is skipped.
fn add_links(fx: &Fixture, links: &[Link]) {
    for link in links {
        let target = match link.target {
            Target::Relative(t) | Target::Absolute(t) => PathBuf::from(t),
            Target::InRoot(t) => fx.root.join(t),
            Target::InOut(t) => fx.out.join(t),
        };
        let dir = if link.dir == "OUT" {
            fx.out.clone()
        } else {
            fx.root.join(link.dir)
        };
        let _ = symlink(target, dir.join(link.name));
    }
}

/// How a path argument starts.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// Relative: `src/x.rs`.
    Relative,
    /// `./src/x.rs`.
    Dot,
    /// The workspace root as given to jp: `/tmp/.tmpX/link/src/x.rs`.
    GivenRoot,
    /// The canonical workspace root: `/tmp/.tmpX/ws/src/x.rs`.
    CanonicalRoot,
    /// The canonical root after a doubled separator: `//tmp/.tmpX/ws/...`.
    DoubledRoot,
    /// The outside directory: `/tmp/.tmpX/out/x.rs`.
    Out,
    /// The file system root: `/src/x.rs`.
    Slash,
}

#[derive(Debug, Clone)]
struct Case {
    root_via_link: bool,
    links: Vec<Link>,
    chain: Option<(usize, ChainEnd, bool)>,
    start: Start,
    /// When set (and there are links), the path goes through one of the
    /// links first: `src/l0/<parts>`.
    through: Option<prop::sample::Index>,
    parts: Vec<&'static str>,
}

impl Case {
    fn path(&self, fx: &Fixture) -> String {
        let mut start = self.start;
        let mut parts: Vec<&str> = Vec::new();
        let through = (self.through)
            .filter(|_| !self.links.is_empty())
            .map(|i| self.links[i.index(self.links.len())]);
        if let Some(link) = through {
            if link.dir == "OUT" {
                start = Start::Out;
            } else {
                if matches!(start, Start::Out | Start::Slash) {
                    start = Start::Relative;
                }
                if link.dir != "." {
                    parts.push(link.dir);
                }
            }
            parts.push(link.name);
        }
        parts.extend(&self.parts);
        let rest = parts.join("/");
        let under = |p: &Path| format!("{}/{rest}", p.display());
        match start {
            Start::Relative => rest,
            Start::Dot => format!("./{rest}"),
            Start::GivenRoot => under(&fx.given),
            Start::CanonicalRoot => under(&fx.root),
            Start::DoubledRoot => format!("/{}", under(&fx.root)),
            Start::Out => under(&fx.out),
            Start::Slash => format!("/{rest}"),
        }
    }
}

fn targets() -> impl Strategy<Value = Target> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "..", "../..", "../../..", "../../../../../..", ".", "src", "a/b", "l0", "l1", "l2",
            "l3/x.rs", "../l1", "b", "x.rs", "missing", "missing/../..", "sub/../../..",
            "../out", "../../out/d", "ch", "../ws/src",
        ])
        .prop_map(Target::Relative),
        2 => prop::sample::select(vec!["", "src", "src/x.rs", "..", "a/../..", "chain/c0", "src/l1"])
            .prop_map(Target::InRoot),
        2 => prop::sample::select(vec!["", "d", "x.rs", "new", "../ws/src", "l0"])
            .prop_map(Target::InOut),
        1 => prop::sample::select(vec!["/", "/etc", "/nonexistent/x"]).prop_map(Target::Absolute),
    ]
}

fn links() -> impl Strategy<Value = Vec<Link>> {
    let dirs = prop::sample::select(vec![".", "src", "src/sub", "a", "a/b", "OUT"]);
    let names = prop::sample::select(vec!["l0", "l1", "l2", "l3"]);
    prop::collection::vec(
        (dirs, names, targets()).prop_map(|(dir, name, target)| Link { dir, name, target }),
        0..10,
    )
}

fn chains() -> impl Strategy<Value = Option<(usize, ChainEnd, bool)>> {
    let ends = prop::sample::select(vec![
        ChainEnd::Src,
        ChainEnd::Out,
        ChainEnd::Up,
        ChainEnd::Loop,
    ]);
    prop::option::of((30usize..50, ends, any::<bool>()))
}

fn cases() -> impl Strategy<Value = Case> {
    let starts = prop::sample::select(vec![
        Start::Relative,
        Start::Relative,
        Start::Relative,
        Start::Dot,
        Start::GivenRoot,
        Start::CanonicalRoot,
        Start::DoubledRoot,
        Start::Out,
        Start::Slash,
    ]);
    let part = prop_oneof![
        1 => Just(".."),
        3 => prop::sample::select(vec![
            "src", "sub", "a", "b", "l0", "l1", "l2", "l3", "ch", ".", "", "x.rs", "y.rs", "new",
            "d", "f.txt", "ws", "out", "link", "x\0y",
        ]),
    ];
    (
        any::<bool>(),
        links(),
        chains(),
        starts,
        prop::option::of(any::<prop::sample::Index>()),
        prop_oneof![
            1 => prop::collection::vec(part, 1..7),
            // A `..` right after the link gone through, then another link
            // (issue 34, item 6: `src/b/../a/f.txt`).
            1 => (
                prop::sample::select(vec!["l0", "l1", "l2", "l3", "src/l0", "src/l1"]),
                prop::sample::select(vec!["x.rs", "new", "y.rs"]),
            )
                .prop_map(|(link, name)| vec!["..", link, name]),
        ],
    )
        .prop_map(
            |(root_via_link, links, chain, start, through, parts)| Case {
                root_via_link,
                links,
                chain,
                start,
                through,
                parts,
            },
        )
}

// ---------------------------------------------------------------------------
// The property.
// ---------------------------------------------------------------------------

static DECISIONS: AtomicUsize = AtomicUsize::new(0);
static UNATTENDED: AtomicUsize = AtomicUsize::new(0);
static UNATTENDED_THROUGH_LINKS: AtomicUsize = AtomicUsize::new(0);
static UNATTENDED_ABSOLUTE: AtomicUsize = AtomicUsize::new(0);
static ORACLE_CHECKED: AtomicUsize = AtomicUsize::new(0);
static UNATTENDED_DOTDOT_AFTER_LINK: AtomicUsize = AtomicUsize::new(0);

fn check(case: &Case) -> Result<(), TestCaseError> {
    let fx = fixture(case.root_via_link);
    add_links(&fx, &case.links);
    if let Some((links, end, absolute)) = case.chain {
        chain(&fx, links, end, absolute);
    }
    let value = case.path(&fx);
    let written = fx.given.join(&value);
    let resolved = realpath(&written);
    let normal = lexical(&written);

    // The oracle agrees with the kernel wherever the kernel resolves: on
    // every prefix of the path (up to a separator) that exists.
    let bytes = written.as_os_str().as_bytes();
    let ends = bytes.iter().enumerate().filter(|(_, b)| **b == b'/');
    for end in ends.map(|(i, _)| i).chain([bytes.len()]).filter(|&i| i > 0) {
        let prefix = Path::new(OsStr::from_bytes(&bytes[..end]));
        if let Ok(canonical) = std::fs::canonicalize(prefix) {
            ORACLE_CHECKED.fetch_add(1, Ordering::Relaxed);
            prop_assert_eq!(
                realpath(prefix),
                Some(canonical),
                "the oracle disagrees with the kernel on {:?}",
                prefix
            );
        }
    }

    let mut rules: Vec<(String, bool)> = RELATIVE_RULES
        .iter()
        .map(|r| ((*r).to_owned(), false))
        .collect();
    rules.push((absolute_rule(&fx.root), true));
    for (rule, names_location) in rules {
        let decision = compile(&rule).evaluate(&json!({ "path": value }), &fx.given);
        DECISIONS.fetch_add(1, Ordering::Relaxed);
        if decision.mode != Mode::Unattended {
            continue;
        }
        UNATTENDED.fetch_add(1, Ordering::Relaxed);
        // With the root given directly, the forms differ only through links.
        if !case.root_via_link && resolved.as_ref() != Some(&normal) {
            UNATTENDED_THROUGH_LINKS.fetch_add(1, Ordering::Relaxed);
        }
        if value.starts_with('/') {
            UNATTENDED_ABSOLUTE.fetch_add(1, Ordering::Relaxed);
        }
        prop_assert!(
            resolved.as_ref().is_some_and(|p| p.starts_with(&fx.root)),
            "{rule} approved {value:?} ({}), which resolves with no link limit to {resolved:?}, \
             not inside {}\nlinks: {:?}\nchain: {:?}",
            decision.reason,
            fx.root.display(),
            case.links,
            case.chain,
        );
        // A tool that removes `..` before it opens the path (Python's
        // `os.path.normpath`, then `open`) lands here: where a `..` follows
        // a link, somewhere else than the kernel (issue 34, item 6).
        let normalized = realpath(&normal);
        if normalized != resolved {
            UNATTENDED_DOTDOT_AFTER_LINK.fetch_add(1, Ordering::Relaxed);
        }
        prop_assert!(
            normalized.as_ref().is_some_and(|p| p.starts_with(&fx.root)),
            "{rule} approved {value:?} ({}), which, with `..` removed first and then resolved, \
             leads to {normalized:?}, not inside {}\nlinks: {:?}\nchain: {:?}",
            decision.reason,
            fx.root.display(),
            case.links,
            case.chain,
        );
        // A matcher naming an absolute location may approve the canonical
        // spelling of a path inside a workspace given through a link.
        let lexically_inside = normal.starts_with(lexical(&fx.given))
            || (names_location && normal.starts_with(&fx.root));
        prop_assert!(
            lexically_inside,
            "{rule} approved {value:?} ({}), which is {} written out, not inside {}",
            decision.reason,
            normal.display(),
            fx.given.display(),
        );
    }
    Ok(())
}

#[test]
fn unattended_implies_the_path_is_inside_resolved_with_no_link_limit() {
    // 256 cases by default; PROPTEST_CASES asks for more.
    let count = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256);
    let mut runner = TestRunner::new(Config {
        cases: count,
        failure_persistence: None,
        ..Config::default()
    });
    if let Err(failure) = runner.run(&cases(), |case| check(&case)) {
        panic!("{failure}");
    }
    let decisions = DECISIONS.load(Ordering::Relaxed);
    let unattended = UNATTENDED.load(Ordering::Relaxed);
    let through_links = UNATTENDED_THROUGH_LINKS.load(Ordering::Relaxed);
    let absolute = UNATTENDED_ABSOLUTE.load(Ordering::Relaxed);
    let checked = ORACLE_CHECKED.load(Ordering::Relaxed);
    let dotdot = UNATTENDED_DOTDOT_AFTER_LINK.load(Ordering::Relaxed);
    eprintln!(
        "{decisions} decisions, {unattended} unattended ({through_links} through links, \
         {absolute} absolute, {dotdot} with a `..` after a link); oracle checked against the \
         kernel on {checked} paths"
    );
    // Not vacuous: some paths are approved, some of them through links.
    assert!(unattended > 0);
    assert!(through_links > 0);
}

// ---------------------------------------------------------------------------
// Regressions.
// ---------------------------------------------------------------------------

/// Every policy's decision for `path` in the fixture.
fn decisions(fx: &Fixture, path: &str) -> Vec<(String, Mode)> {
    let mut rules: Vec<String> = RELATIVE_RULES.iter().map(|r| (*r).to_owned()).collect();
    rules.push(absolute_rule(&fx.root));
    rules
        .into_iter()
        .map(|rule| {
            let mode = compile(&rule)
                .evaluate(&json!({ "path": path }), &fx.given)
                .mode;
            (rule, mode)
        })
        .collect()
}

fn assert_never_unattended(fx: &Fixture, path: &str) {
    for (rule, mode) in decisions(fx, path) {
        assert_ne!(mode, Mode::Unattended, "{rule} approved {path:?}");
    }
}

fn src_prefix(fx: &Fixture, path: &str) -> Mode {
    compile(RELATIVE_RULES[0])
        .evaluate(&json!({ "path": path }), &fx.given)
        .mode
}

/// Linux's ELOOP.
#[cfg(target_os = "linux")]
const ELOOP: i32 = 40;

#[test]
fn a_45_link_chain_under_src_leading_outside_is_not_unattended() {
    let fx = fixture(false);
    chain(&fx, 45, ChainEnd::Out, false);
    // The kernel gives up; a tool resolving the path itself writes outside.
    #[cfg(target_os = "linux")]
    assert_eq!(
        std::fs::metadata(fx.root.join("src/ch"))
            .unwrap_err()
            .raw_os_error(),
        Some(ELOOP)
    );
    assert_eq!(
        realpath(&fx.root.join("src/ch/pwned.txt")),
        Some(fx.out.join("pwned.txt"))
    );
    assert_eq!(src_prefix(&fx, "src/ch/pwned.txt"), Mode::Ask);
    assert_never_unattended(&fx, "src/ch/pwned.txt");
    assert_never_unattended(&fx, "src/ch/x.rs");
}

#[test]
fn a_2_link_loop_under_src_is_not_unattended() {
    let fx = fixture(false);
    symlink("b", fx.root.join("src/a")).unwrap();
    symlink("a", fx.root.join("src/b")).unwrap();
    assert_eq!(realpath(&fx.root.join("src/a/x.rs")), None);
    assert_eq!(src_prefix(&fx, "src/a/x.rs"), Mode::Ask);
    assert_never_unattended(&fx, "src/a/x.rs");
    assert_never_unattended(&fx, "src/a");
    assert_never_unattended(&fx, "src/b/../x.rs");
}

#[test]
fn a_40_link_chain_inside_is_unattended_and_41_is_not() {
    // src/ch -> ../chain/c0 -> c1 -> ... -> c38 -> <root>/src: 40 links.
    let fx = fixture(false);
    chain(&fx, 40, ChainEnd::Src, false);
    assert_eq!(
        std::fs::read_link(fx.root.join("chain/c38")).unwrap(),
        fx.root.join("src")
    );
    assert!(!fx.root.join("chain/c39").exists());
    // The kernel follows exactly these 40 links: creating through the chain
    // works.
    std::fs::write(fx.root.join("src/ch/probe"), "").unwrap();
    assert!(fx.root.join("src/probe").is_file());
    assert_eq!(
        realpath(&fx.root.join("src/ch/y.rs")),
        Some(fx.root.join("src/y.rs"))
    );
    assert_eq!(src_prefix(&fx, "src/ch/y.rs"), Mode::Unattended);

    // One more link: the kernel refuses (ELOOP) and jp cannot trust any
    // form, although the chain stays inside.
    let fx = fixture(false);
    chain(&fx, 41, ChainEnd::Src, false);
    #[cfg(target_os = "linux")]
    assert_eq!(
        std::fs::write(fx.root.join("src/ch/probe"), "")
            .unwrap_err()
            .raw_os_error(),
        Some(ELOOP)
    );
    assert_eq!(
        realpath(&fx.root.join("src/ch/y.rs")),
        Some(fx.root.join("src/y.rs"))
    );
    assert_eq!(src_prefix(&fx, "src/ch/y.rs"), Mode::Ask);
}

#[test]
fn an_unattended_pattern_does_not_reach_outside() {
    let fx = fixture(false);
    let rs = compile(RELATIVE_RULES[2]);
    let decide = |path: &str| rs.evaluate(&json!({ "path": path }), &fx.given).mode;
    assert_eq!(decide("../../etc/x.rs"), Mode::Ask);
    assert_eq!(decide("/etc/x.rs"), Mode::Ask);
    assert_eq!(
        decide(&fx.out.join("x.rs").display().to_string()),
        Mode::Ask
    );
    assert_eq!(decide("src/x.rs"), Mode::Unattended);
    // A link inside whose name matches but whose target is outside.
    symlink(fx.out.join("x.rs"), fx.root.join("src/l.rs")).unwrap();
    assert_eq!(decide("src/l.rs"), Mode::Ask);
    assert_never_unattended(&fx, "../../etc/x.rs");
}

#[test]
fn a_workspace_given_through_a_link_confines_the_same() {
    let fx = fixture(true);
    assert_ne!(fx.given, fx.root);
    assert_eq!(src_prefix(&fx, "src/x.rs"), Mode::Unattended);
    assert_eq!(
        src_prefix(&fx, &fx.given.join("src/x.rs").display().to_string()),
        Mode::Unattended
    );
    assert_never_unattended(&fx, "../ws/../out/x.rs");
    assert_never_unattended(&fx, "..");
}

#[test]
fn an_empty_pattern_is_refused() {
    for pattern in ["\"\"", "\"^\"", "\".*\""] {
        let compiled = compile_rules(&format!(
            r#"[{{ arg = "/path", pattern = {pattern}, mode = "unattended" }}, {{ mode = "ask" }}]"#
        ));
        assert!(compiled.policy.is_none(), "{pattern}");
        assert_eq!(compiled.errors.len(), 1, "{pattern}: {:?}", compiled.errors);
    }
}
