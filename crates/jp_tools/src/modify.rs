//! `fs_modify_file {path, patterns: [{old, new}]}`: exact text replacements.
//!
//! Each `old` must occur exactly once in the content as the patterns before
//! it left it (occurrences may overlap: `aa` occurs twice in `aaa`), so a
//! replacement never lands somewhere the model did not mean. All patterns
//! apply or none does; the file is replaced atomically and keeps its
//! permissions.

use std::fs::Metadata;
use std::path::Path;

use jp_tool::Request;
use serde_json::{Map, Value};

use crate::atomic;
use crate::text::{TextError, read_text};
use crate::workspace::{Target, Workspace};

/// One replacement.
struct Pattern<'a> {
    old: &'a str,
    new: &'a str,
}

/// What `fs_modify_file` would make of a file: its text now and once the
/// patterns apply. jp shows it as a diff before the call runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The path as the tool names it in its messages (`src/lib.rs`).
    pub shown: String,
    /// The file's text now.
    pub before: String,
    /// Its text once the patterns apply.
    pub after: String,
}

/// What `fs_modify_file` would write for `arguments` in the workspace at
/// `root`, without writing anything: the same checks (the path confined
/// to the workspace, a text file, each `old` exactly once) and the same
/// messages when they fail.
///
/// # Errors
///
/// The message the tool would answer with.
pub fn preview(root: &Path, arguments: &Map<String, Value>) -> Result<Change, String> {
    preview_over(root, arguments, &|_| None)
}

/// [`preview`], but over the text `planned` gives for the file (named as
/// the tool names it) instead of the file on disk, where it gives one:
/// the file as calls before this one would leave it.
///
/// # Errors
///
/// The message the tool would answer with, were the file that text.
pub fn preview_over(
    root: &Path,
    arguments: &Map<String, Value>,
    planned: &dyn Fn(&str) -> Option<String>,
) -> Result<Change, String> {
    let (target, patterns) = target(root, arguments)?;
    let original = match planned(&target.shown) {
        Some(text) => text,
        None => read(&target)?.0,
    };
    apply(&target.shown, original, &patterns)
}

/// The file a call names and its patterns.
fn target<'a>(
    root: &Path,
    arguments: &'a Map<String, Value>,
) -> Result<(Target, Vec<Pattern<'a>>), String> {
    let workspace = Workspace::open(root)?;
    let path = match arguments.get("path") {
        Some(Value::String(path)) => path,
        Some(_) => return Err("argument `path` must be a string".to_owned()),
        None => return Err("missing argument `path`".to_owned()),
    };
    let target = workspace.resolve(path)?;
    let patterns = patterns(arguments.get("patterns"))?;
    Ok((target, patterns))
}

/// The file's text and metadata.
fn read(target: &Target) -> Result<(String, Metadata), String> {
    let shown = &target.shown;
    read_text(target).map_err(|e| match e {
        TextError::Missing => {
            format!("cannot modify `{shown}`: no such file; use fs_create_file to create it")
        }
        e => e.message("fs_modify_file", "modify", shown),
    })
}

/// The change, the file it writes and the file's metadata.
fn plan(root: &Path, arguments: &Map<String, Value>) -> Result<(Change, Target, Metadata), String> {
    let (target, patterns) = target(root, arguments)?;
    let (original, metadata) = read(&target)?;
    let change = apply(&target.shown, original, &patterns)?;
    Ok((change, target, metadata))
}

/// `patterns` applied in order to `original`, the text of the file shown
/// as `shown`.
fn apply(shown: &str, original: String, patterns: &[Pattern<'_>]) -> Result<Change, String> {
    let mut content = original.clone();
    for (index, pattern) in patterns.iter().enumerate() {
        let count = occurrences(&content, pattern.old);
        if count != 1 {
            let after = if index == 0 {
                ""
            } else {
                " (after the patterns before it)"
            };
            let hint = if count == 0 {
                "check its spaces, indentation and line breaks against the file"
            } else {
                "include more of the surrounding text"
            };
            return Err(format!(
                "patterns[{index}].old occurs {count} times in `{shown}`{after}; it must occur exactly once ({hint}), so nothing was changed"
            ));
        }
        content = content.replacen(pattern.old, pattern.new, 1);
    }
    Ok(Change {
        shown: shown.to_owned(),
        before: original,
        after: content,
    })
}

/// Applies the patterns and writes the file.
pub(crate) fn run(request: &Request) -> Result<String, String> {
    let (change, target, metadata) = plan(&request.context.root, &request.tool.arguments)?;
    let shown = &change.shown;
    if change.after == change.before {
        return Ok(format!(
            "no change in {shown}: the patterns leave its content as it was"
        ));
    }
    // Write through a symlink (kept inside the workspace) to its target,
    // rather than replacing the link with a file.
    let real = target
        .abs
        .canonicalize()
        .map_err(|e| format!("cannot modify `{shown}`: {e}"))?;
    atomic::replace(&real, change.after.as_bytes(), metadata.permissions())
        .map_err(|e| format!("cannot modify `{shown}`: {e}"))?;
    let count = patterns(request.argument("patterns"))?.len();
    Ok(format!(
        "{} in {shown}",
        crate::words::plural(count, "change", "changes")
    ))
}

/// The `patterns` argument.
fn patterns(argument: Option<&Value>) -> Result<Vec<Pattern<'_>>, String> {
    let items = match argument {
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err("argument `patterns` must be an array of {old, new} objects".to_owned());
        }
        None => return Err("missing argument `patterns`".to_owned()),
    };
    if items.is_empty() {
        return Err("argument `patterns` is empty; give at least one {old, new} pair".to_owned());
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let member = |name: &str| item.get(name).and_then(Value::as_str);
            let (Some(old), Some(new)) = (member("old"), member("new")) else {
                return Err(format!(
                    "patterns[{index}] must be an object with the strings `old` and `new`"
                ));
            };
            if old.is_empty() {
                return Err(format!(
                    "patterns[{index}].old is empty; it must be text that occurs exactly once in the file"
                ));
            }
            Ok(Pattern { old, new })
        })
        .collect()
}

/// How many times `needle` (not empty) occurs in `haystack`, overlaps
/// included.
fn occurrences(haystack: &str, needle: &str) -> usize {
    let step = needle.chars().next().map_or(1, char::len_utf8);
    let mut count = 0;
    let mut from = 0;
    while let Some(found) = haystack.get(from..).and_then(|rest| rest.find(needle)) {
        count += 1;
        from += found + step;
    }
    count
}

#[cfg(test)]
#[path = "modify_tests.rs"]
mod tests;
