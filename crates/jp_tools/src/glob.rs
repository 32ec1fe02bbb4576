//! `fs_glob {pattern, sort?}`: the workspace's files whose path matches a
//! glob, newest first (`sort = "modified"`, the default) or by path
//! (`sort = "name"`), one per line, at most [`MAX_GLOB_ENTRIES`] of them.
//!
//! Which files are seen is [`crate::walk`]'s: ignore files honoured,
//! hidden files skipped unless the pattern names a hidden component, files
//! that may hold secrets left out unless the pattern names them.

use std::path::Path;
use std::time::SystemTime;

use jp_tool::Request;
use serde_json::Value;

use crate::walk::Scope;
use crate::workspace::Workspace;

/// The most paths one result lists; the rest are counted.
pub const MAX_GLOB_ENTRIES: usize = 500;

/// How the paths are ordered.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sort {
    /// The most recently modified first; paths in order among equals.
    Modified,
    /// By path.
    Name,
}

/// The matching paths, one per line.
pub(crate) fn run(request: &Request) -> Result<String, String> {
    let workspace = Workspace::open(&request.context.root)?;
    let pattern = crate::arguments::string_argument(request, "pattern")?;
    let sort = match request.argument("sort") {
        None | Some(Value::Null) => Sort::Modified,
        Some(Value::String(s)) if s == "modified" => Sort::Modified,
        Some(Value::String(s)) if s == "name" => Sort::Name,
        Some(_) => return Err("argument `sort` must be \"modified\" or \"name\"".into()),
    };
    let scope = Scope::new(&workspace, &[], Some(pattern))?;
    let walked = scope.walk(|| {
        |path: &Path| {
            Some(
                std::fs::symlink_metadata(path)
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH),
            )
        }
    });
    let mut found = walked.found;
    if sort == Sort::Modified {
        // Stable: paths stay in order among files modified at once.
        found.sort_by_key(|(_, modified)| std::cmp::Reverse(*modified));
    }
    let mut lines: Vec<String> = found
        .iter()
        .take(MAX_GLOB_ENTRIES)
        .map(|(path, _)| path.clone())
        .collect();
    if found.len() > MAX_GLOB_ENTRIES {
        lines.push(format!(
            "... and {} more; narrow the pattern",
            found.len() - MAX_GLOB_ENTRIES
        ));
    }
    if lines.is_empty() {
        lines.push("no files match".to_owned());
    }
    if !walked.secrets.is_empty() {
        lines.push(crate::grep::secrets_note(
            &walked.secrets,
            "listed",
            "name them in `pattern` to list them",
        ));
    }
    if walked.unreadable > 0 {
        lines.push(format!(
            "({} could not be read)",
            crate::words::plural(walked.unreadable, "entry", "entries")
        ));
    }
    Ok(lines.join("\n"))
}

#[cfg(test)]
#[path = "glob_tests.rs"]
mod tests;
