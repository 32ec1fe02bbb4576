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
use jp_term::printer::{Style, sanitize};

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
    // Lines end at `\n` only: a lone CR is part of its line (shown as
    // `\u{d}`), as everywhere else jp shows text, so the line numbers are
    // the file's as an editor counts them. (similar's own line diff also
    // ends a line at a lone CR.)
    let (old_lines, new_lines) = (lines(before), lines(after));
    let diff = TextDiff::configure()
        .timeout(TIMEOUT)
        .diff_slices(&old_lines, &new_lines);
    let groups = diff.grouped_ops(CONTEXT);
    if groups.is_empty() {
        return vec![line(Style::Dim, format!("  no change to {shown}"))];
    }
    // Numbers are read off the changes: similar gives a deleted run's
    // place in the new file (and an inserted run's in the old) as it
    // pleases, so the ops' own ranges can name other lines.
    let last = groups
        .iter()
        .flatten()
        .flat_map(|op| diff.iter_changes(op))
        .map(|change| {
            let after = |index: Option<usize>| index.map_or(0, |i| i + 1);
            after(change.old_index()).max(after(change.new_index()))
        })
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
        if group.is_empty() {
            continue;
        }
        let changes: Vec<_> = group.iter().flat_map(|op| diff.iter_changes(op)).collect();
        let span = |index: fn(&similar::Change<&str>) -> Option<usize>| {
            let mut indexes = changes.iter().filter_map(index);
            let first = indexes.next();
            let last = indexes.next_back().or(first);
            // A hunk with no line of a side is an empty file's.
            first
                .zip(last)
                .map_or(0..0, |(first, last)| first..last + 1)
        };
        let old = span(|change| change.old_index());
        let new = span(|change| change.new_index());
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
                let ended = value.ends_with('\n');
                // A CRLF ending is the line's end; any other CR is shown.
                let text = value
                    .strip_suffix("\r\n")
                    .or_else(|| value.strip_suffix('\n'))
                    .unwrap_or(value);
                out.push(line(
                    style,
                    format!(
                        "  {} {} {sign} {}",
                        number(change.old_index()),
                        number(change.new_index()),
                        sanitize(text)
                    ),
                ));
                if !ended {
                    out.push(line(Style::Dim, "  \\ no newline at end of file".into()));
                }
            }
        }
    }
    out
}

/// `text`'s lines, each with its `\n` (the last may have none).
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
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
