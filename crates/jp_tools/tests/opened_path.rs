//! Property (issue 34, item 6): over random trees of symbolic links and
//! paths full of `..`, the file `fs_read_file` opens is the one jp's policy
//! judged and the question to the user names, and the kernel agrees.
//!
//! Every file in a tree holds its own canonical path, so a read tells which
//! file was opened. The kernel is the oracle: reading the path as written,
//! from the workspace root, opens the file the kernel resolves. For each
//! case:
//!
//! - when `fs_read_file` reads a file, that file is inside the workspace,
//!   it is the file the kernel reads for the path as written (where the
//!   kernel reads one: it stops at a missing directory before a `..`), and
//!   it is the file the question names: the one `PathValue::opens` says,
//!   or, when it says nothing, the path as written;
//! - when the policy finds the path inside the workspace (the condition for
//!   `unattended`), both the kernel's file and the file a tool opens after
//!   removing `..` (`os.path.normpath`, then open) are inside it.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use jp_policy::path::{Workspace, normalize_lexically, resolve_path};
use jp_tool::{Context, Outcome, Request, ToolInfo};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value};

/// Directories of the workspace `ws` and of `out`, next to it.
const WS_DIRS: [&str; 3] = ["a/b", "c/d", "e"];
const OUT_DIRS: [&str; 2] = ["sub/deeper", "other"];
/// Where a file `f` is, holding its own canonical path.
const FILES: [&str; 11] = [
    "ws/f",
    "ws/a/f",
    "ws/a/b/f",
    "ws/c/f",
    "ws/c/d/f",
    "ws/e/f",
    "out/f",
    "out/sub/f",
    "out/sub/deeper/f",
    "out/other/f",
    "f",
];

#[derive(Debug, Clone, Copy)]
struct Link {
    /// Its directory, under the temporary base (`ws/...` or `out/...`).
    dir: &'static str,
    name: &'static str,
    /// Relative, or (starting with `/`) absolute under the base.
    target: &'static str,
}

/// Links every tree has (besides random ones): one inside to a deeper
/// directory, one out, one up to the base, so that `k/../x/f` (a `..`
/// after a link inside, then a link out) comes up often.
const FIXED_LINKS: [Link; 3] = [
    Link {
        dir: "ws",
        name: "k",
        target: "c/d",
    },
    Link {
        dir: "ws",
        name: "x",
        target: "../out/sub",
    },
    Link {
        dir: "ws/c",
        name: "u",
        target: "..",
    },
];

#[derive(Debug, Clone)]
struct Case {
    links: Vec<Link>,
    /// When set, the path starts through one of the links in the
    /// workspace (`c/l0/...`), so that the `..` after it are many.
    through: Option<prop::sample::Index>,
    parts: Vec<&'static str>,
}

impl Case {
    /// The path argument, ending in the file name `f`.
    fn path(&self) -> String {
        let inside: Vec<&Link> = FIXED_LINKS
            .iter()
            .chain(&self.links)
            .filter(|link| link.dir.starts_with("ws"))
            .collect();
        let mut parts: Vec<&str> = Vec::new();
        if let Some(index) = self.through {
            let link = inside[index.index(inside.len())];
            if let Some(dir) = link.dir.strip_prefix("ws/") {
                parts.push(dir);
            }
            parts.push(link.name);
        }
        parts.extend(&self.parts);
        parts.push("f");
        parts.join("/")
    }
}

fn cases() -> impl Strategy<Value = Case> {
    // Most links at the root, where the paths start.
    let dirs = prop::sample::select(vec![
        "ws", "ws", "ws", "ws/a", "ws/c", "ws/c/d", "out", "out/sub",
    ]);
    let names = prop::sample::select(vec!["l0", "l1", "l2"]);
    let targets = prop::sample::select(vec![
        "..",
        "../..",
        "../../..",
        ".",
        "b",
        "d",
        "c/d",
        "a/b",
        "sub",
        "sub/deeper",
        "../out/sub",
        "../../out/sub/deeper",
        "../ws/c",
        "l0",
        "l1",
        "missing",
        "/ws/c/d",
        "/ws/a",
        "/ws",
        "/out/sub",
        "/out/sub/deeper",
        "/out",
    ]);
    let link = (dirs, names, targets).prop_map(|(dir, name, target)| Link { dir, name, target });
    let name = prop::sample::select(vec![
        "a", "b", "c", "d", "e", "k", "x", "u", "l0", "l1", "l2", "sub", ".",
    ]);
    let part = prop_oneof![3 => Just(".."), 4 => name];
    let after = prop::sample::select(vec!["x", "x", "k", "u", "l0", "l1", "l2", "a", "c", "d"]);
    (
        prop::collection::vec(link, 1..8),
        prop::option::weighted(0.8, any::<prop::sample::Index>()),
        prop_oneof![
            prop::collection::vec(part, 0..6),
            // `..` right after the link the path goes through, then names.
            (1..3usize, prop::collection::vec(after, 0..3)).prop_map(|(up, names)| {
                let mut parts = vec![".."; up];
                parts.extend(names);
                parts
            }),
        ],
    )
        .prop_map(|(links, through, parts)| Case {
            links,
            through,
            parts,
        })
}

struct Tree {
    _dir: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
}

fn tree(links: &[Link]) -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    for d in WS_DIRS {
        std::fs::create_dir_all(base.join("ws").join(d)).unwrap();
    }
    for d in OUT_DIRS {
        std::fs::create_dir_all(base.join("out").join(d)).unwrap();
    }
    for f in FILES {
        let path = base.join(f);
        std::fs::write(&path, path.display().to_string()).unwrap();
    }
    for link in FIXED_LINKS.iter().chain(links) {
        let target = match link.target.strip_prefix('/') {
            Some(under) => base.join(under),
            None => PathBuf::from(link.target),
        };
        // A name already taken keeps what it was.
        let _ = symlink(target, base.join(link.dir).join(link.name));
    }
    let ws = base.join("ws");
    Tree {
        _dir: dir,
        base,
        ws,
    }
}

fn read_file(root: &Path, path: &str) -> Outcome {
    let mut arguments = Map::new();
    arguments.insert("path".into(), Value::String(path.into()));
    jp_tools::run(
        "fs_read_file",
        Request {
            tool: ToolInfo {
                name: "fs_read_file".into(),
                arguments,
                answers: Map::new(),
                options: Map::new(),
            },
            context: Context::run(root),
        },
    )
}

/// What the kernel reads at `path`, if anything.
fn kernel_reads(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

static READS: AtomicUsize = AtomicUsize::new(0);
static AMBIGUOUS_READS: AtomicUsize = AtomicUsize::new(0);
static INSIDE: AtomicUsize = AtomicUsize::new(0);
static AMBIGUOUS_INSIDE: AtomicUsize = AtomicUsize::new(0);

fn check(case: &Case) -> Result<(), TestCaseError> {
    let tree = tree(&case.links);
    let raw = case.path();
    let forms = resolve_path(&raw, &Workspace::new(&tree.ws)).unwrap();
    let written = tree.ws.join(&raw);
    let kernel = kernel_reads(&written);
    let normalized = kernel_reads(&normalize_lexically(&written));

    if let Outcome::Success { content, .. } = read_file(&tree.ws, &raw) {
        READS.fetch_add(1, Ordering::Relaxed);
        if forms.is_ambiguous() {
            AMBIGUOUS_READS.fetch_add(1, Ordering::Relaxed);
        }
        prop_assert!(
            Path::new(&content).starts_with(&tree.ws),
            "fs_read_file read {content} for {raw:?}, outside {}; links: {:?}",
            tree.ws.display(),
            case.links
        );
        // The kernel gives up at a missing directory before a `..`
        // (`a/missing/../f`), which jp resolves as `a/f`, like the policy.
        if let Some(kernel) = &kernel {
            prop_assert_eq!(
                &content,
                kernel,
                "fs_read_file and the kernel open different files for {:?}; links: {:?}",
                raw,
                case.links
            );
        }
        // The file the question names.
        let named = match forms.opens() {
            None => forms.lexical.absolute().to_path_buf(),
            Some(text) => {
                let resolved = forms.resolved.as_ref().unwrap();
                prop_assert!(
                    text.starts_with(&format!("opens {}", resolved.text())),
                    "{text}"
                );
                resolved.absolute().to_path_buf()
            }
        };
        prop_assert_eq!(
            kernel_reads(&named),
            Some(content.clone()),
            "the question about {:?} names {} ({:?}), but fs_read_file read {}; links: {:?}",
            raw,
            named.display(),
            forms.opens(),
            content,
            case.links
        );
    }

    if forms.is_inside() {
        INSIDE.fetch_add(1, Ordering::Relaxed);
        if forms.is_ambiguous() {
            AMBIGUOUS_INSIDE.fetch_add(1, Ordering::Relaxed);
        }
        for (how, read) in [("as written", &kernel), ("with `..` removed", &normalized)] {
            if let Some(read) = read {
                prop_assert!(
                    Path::new(read).starts_with(&tree.ws),
                    "the policy finds {raw:?} inside, but {how} it opens {read}; links: {:?}",
                    case.links
                );
            }
        }
    }
    let _ = &tree.base;
    Ok(())
}

#[test]
fn the_file_opened_is_the_file_judged_and_named() {
    let count = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(512);
    let mut runner = TestRunner::new(Config {
        cases: count,
        failure_persistence: None,
        ..Config::default()
    });
    if let Err(failure) = runner.run(&cases(), |case| check(&case)) {
        panic!("{failure}");
    }
    let reads = READS.load(Ordering::Relaxed);
    let ambiguous_reads = AMBIGUOUS_READS.load(Ordering::Relaxed);
    let inside = INSIDE.load(Ordering::Relaxed);
    let ambiguous_inside = AMBIGUOUS_INSIDE.load(Ordering::Relaxed);
    eprintln!(
        "{reads} reads ({ambiguous_reads} with a `..` after a link); {inside} paths inside \
         ({ambiguous_inside} with a `..` after a link)"
    );
    // Not vacuous.
    assert!(ambiguous_reads > 0);
    assert!(ambiguous_inside > 0);
}
