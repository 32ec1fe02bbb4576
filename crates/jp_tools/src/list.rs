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
    let prefixes = crate::arguments::string_list_argument(request, "prefixes")?
        .into_iter()
        .map(|raw| workspace.resolve(raw).map(|target| target.rel))
        .collect::<Result<Vec<_>, _>>()?;
    let extensions: Vec<String> = crate::arguments::string_list_argument(request, "extensions")?
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
            crate::words::plural(unreadable, "entry", "entries")
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
#[path = "list_tests.rs"]
mod tests;
