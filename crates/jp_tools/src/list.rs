//! `fs_list_files {prefixes?, extensions?}`: the workspace's files.
//!
//! The walk honours `.gitignore` (also outside a git repository), `.ignore`
//! and git's exclude files, includes hidden files, and never enters `.git`
//! or jp's conversation store (`.jp/conversations`).
//! Symbolic links are listed, not followed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jp_tool::Request;

use crate::workspace::{Workspace, show};

/// The most paths one listing returns; the rest are counted.
pub const MAX_LIST_ENTRIES: usize = 1000;

/// Relative paths, sorted, one per line.
pub(crate) fn run(request: &Request) -> Result<String, String> {
    let workspace = Workspace::open(&request.context.root)?;
    let prefixes = crate::string_list_argument(request, "prefixes")?
        .into_iter()
        .map(|raw| workspace.resolve(raw).map(|target| target.rel))
        .collect::<Result<Vec<_>, _>>()?;
    let extensions: Vec<String> = crate::string_list_argument(request, "extensions")?
        .into_iter()
        .map(|ext| format!(".{}", ext.trim_start_matches('.')))
        .collect();

    let (files, unreadable) = walk(workspace.root(), prefixes.clone());
    let files: Vec<&String> = files
        .iter()
        .filter(|path| {
            extensions.is_empty() || extensions.iter().any(|ext| path.ends_with(ext.as_str()))
        })
        .collect();

    let mut lines: Vec<String> = files
        .iter()
        .take(MAX_LIST_ENTRIES)
        .map(|path| (*path).clone())
        .collect();
    if files.len() > MAX_LIST_ENTRIES {
        lines.push(format!("... and {} more", files.len() - MAX_LIST_ENTRIES));
    }
    if lines.is_empty() {
        lines.push(if prefixes.is_empty() && extensions.is_empty() {
            "no files".to_owned()
        } else {
            "no files match".to_owned()
        });
    }
    if unreadable > 0 {
        lines.push(format!(
            "({} could not be read)",
            crate::plural(unreadable, "entry", "entries")
        ));
    }
    Ok(lines.join("\n"))
}

/// The files under `root` that are under one of `prefixes` (all when there
/// are none), as sorted relative paths, and how many entries could not be
/// read.
fn walk(root: &Path, prefixes: Vec<PathBuf>) -> (BTreeSet<String>, usize) {
    let prefixes = Arc::new(prefixes);
    let keep = {
        let root = root.to_path_buf();
        let prefixes = Arc::clone(&prefixes);
        move |entry: &ignore::DirEntry| {
            if entry.file_name() == ".git" {
                return false;
            }
            let Ok(rel) = entry.path().strip_prefix(&root) else {
                return false;
            };
            // jp's own conversation store is not part of the project.
            if rel == Path::new(".jp/conversations") {
                return false;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            prefixes.is_empty()
                || prefixes
                    .iter()
                    .any(|p| rel.starts_with(p) || (is_dir && p.starts_with(rel)))
        }
    };
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(keep)
        .build();

    let mut files = BTreeSet::new();
    let mut unreadable = 0;
    for entry in walker {
        let Ok(entry) = entry else {
            unreadable += 1;
            continue;
        };
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        let is_file = file_type.is_file() || (file_type.is_symlink() && entry.path().is_file());
        if !is_file {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        if prefixes.is_empty() || prefixes.iter().any(|p| rel.starts_with(p)) {
            files.insert(show(rel));
        }
    }
    (files, unreadable)
}

#[cfg(test)]
mod tests {
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
}
