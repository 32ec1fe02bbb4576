//! A change to a file shown as a unified diff: the file as it is on disk
//! against what a call would make of it, in hunks with context lines and
//! both line numbers, so the user approves the change itself rather than
//! the patterns that make it.
//!
//! ```text
//!   --- src/lib.rs
//!   +++ src/lib.rs (after fs_modify_file)
//!   @@ -1,3 +1,3 @@
//!   1 1   use std::io;
//!   2   - pub fn main() {}
//!     2 + pub fn hello() {}
//!   3 3   // end
//! ```
//!
//! Removed lines are [`Style::Bad`] (red on a colour terminal), added ones
//! [`Style::Good`] (green), the rest dim; every line is escaped like the
//! rest of what jp shows ([`sanitize`]).

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

use super::render::Line;
use crate::printer::{Style, sanitize};

/// Unchanged lines shown around each change.
pub const CONTEXT: usize = 3;

/// How long the diff may take on a large file before it settles for a
/// coarser (still correct) one.
const TIMEOUT: Duration = Duration::from_millis(500);

/// The unified diff from `before` to `after`, the text of the file shown
/// as `shown` now and once `tool` ran; `  no change to PATH` when they are
/// the same. Lines are not wrapped (see [`super::render::wrap`]).
#[must_use]
pub fn unified(shown: &str, tool: &str, before: &str, after: &str) -> Vec<Line> {
    let shown = sanitize(shown);
    let line = |style, text: String| Line { style, text };
    let diff = TextDiff::configure()
        .timeout(TIMEOUT)
        .diff_lines(before, after);
    let groups = diff.grouped_ops(CONTEXT);
    if groups.is_empty() {
        return vec![line(Style::Dim, format!("  no change to {shown}"))];
    }
    let last = groups
        .iter()
        .flatten()
        .map(|op| op.old_range().end.max(op.new_range().end))
        .max()
        .unwrap_or(0);
    let width = last.to_string().len();
    let number = |index: Option<usize>| match index {
        Some(index) => format!("{:>width$}", index + 1),
        None => " ".repeat(width),
    };
    let mut out = vec![
        line(Style::Header, format!("  --- {shown}")),
        line(Style::Header, format!("  +++ {shown} (after {tool})")),
    ];
    for group in &groups {
        let (Some(first), Some(end)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..end.old_range().end;
        let new = first.new_range().start..end.new_range().end;
        out.push(line(
            Style::Dim,
            format!("  @@ -{} +{} @@", range(&old), range(&new)),
        ));
        for op in group {
            for change in diff.iter_changes(op) {
                let (sign, style) = match change.tag() {
                    ChangeTag::Equal => (' ', Style::Dim),
                    ChangeTag::Delete => ('-', Style::Bad),
                    ChangeTag::Insert => ('+', Style::Good),
                };
                let value = change.value();
                let text = value.strip_suffix('\n').unwrap_or(value);
                let text = text.strip_suffix('\r').unwrap_or(text);
                out.push(line(
                    style,
                    format!(
                        "  {} {} {sign} {}",
                        number(change.old_index()),
                        number(change.new_index()),
                        sanitize(text)
                    ),
                ));
                if change.missing_newline() {
                    out.push(line(Style::Dim, "  \\ no newline at end of file".into()));
                }
            }
        }
    }
    out
}

/// A hunk's lines as a unified diff names them: the first line number
/// and how many lines (`3,2`); an empty range is named by the line before
/// it (`0,0` at the top).
fn range(lines: &std::ops::Range<usize>) -> String {
    if lines.is_empty() {
        format!("{},0", lines.start)
    } else {
        format!("{},{}", lines.start + 1, lines.len())
    }
}

/// `lines` cut to `max` rows, the rest counted: `… N more lines of the
/// diff (v shows it all)`. `max` of 0 is no limit.
#[must_use]
pub fn capped(mut lines: Vec<Line>, max: usize) -> Vec<Line> {
    if max == 0 || lines.len() <= max {
        return lines;
    }
    let more = lines.len() - max;
    lines.truncate(max);
    let what = if more == 1 { "line" } else { "lines" };
    lines.push(Line {
        style: Style::Dim,
        text: format!("  … {more} more {what} of the diff (v shows it all)"),
    });
    lines
}

/// `lines` as plain text, one a line, for the pager.
#[must_use]
pub fn plain(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|line| format!("{}\n", line.text))
        .collect()
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
