//! `fs_grep {pattern, paths?, glob?, case_insensitive?, context?}`: the
//! lines of the workspace's files that match a regular expression, found
//! the way `rg` finds them (ripgrep's own regex engine, searcher and walk;
//! see [`crate::walk`] for which files are searched).
//!
//! The result is written for a model: `path:line:text` for a matching line
//! and `path-line-text` for a context line, files in path order, `--`
//! between groups of lines that do not touch when there is context. It is
//! bounded: lines are cut at [`MAX_LINE_CHARS`] characters, each file shows
//! at most [`MAX_FILE_MATCHES`] matching lines and the whole result at
//! most [`MAX_MATCHES`] matching lines and [`MAX_LINES`] lines; a note says
//! what was cut and how to narrow the search. Files that may hold secrets
//! are not searched unless named, and the result says which were left out.
//! Binary files (a NUL byte) are skipped.

use std::fmt::Write as _;
use std::path::Path;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use jp_tool::Request;
use serde_json::Value;

use crate::walk::Scope;
use crate::workspace::Workspace;

/// The most context lines before and after each match.
pub const MAX_CONTEXT: u64 = 10;
/// The most matching lines one file shows.
pub const MAX_FILE_MATCHES: usize = 20;
/// The most matching lines a result shows.
pub const MAX_MATCHES: usize = 100;
/// The most lines (matching and context, not `--`) a result shows.
pub const MAX_LINES: usize = 400;
/// The most characters of a line a result shows.
pub const MAX_LINE_CHARS: usize = 250;
/// The most secret files the result names as left out.
const MAX_SECRETS_NAMED: usize = 5;

/// The note about `secrets`, the paths a walk left out: "(not {done}, as
/// they may hold secrets: .env, id_rsa; {how})".
pub(crate) fn secrets_note(
    secrets: &std::collections::BTreeSet<String>,
    done: &str,
    how: &str,
) -> String {
    let named: Vec<&str> = secrets
        .iter()
        .take(MAX_SECRETS_NAMED)
        .map(String::as_str)
        .collect();
    let more = secrets.len() - named.len();
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "(not {done}, as they may hold secrets: {}{more}; {how})",
        named.join(", ")
    )
}

/// The matches, formatted.
pub(crate) fn run(request: &Request) -> Result<String, String> {
    let workspace = Workspace::open(&request.context.root)?;
    let pattern = crate::arguments::string_argument(request, "pattern")?;
    let paths = crate::arguments::string_list_argument(request, "paths")?;
    let glob = optional_string(request, "glob")?;
    let case_insensitive = match request.argument("case_insensitive") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("argument `case_insensitive` must be true or false".into()),
    };
    let context = match request.argument("context") {
        None | Some(Value::Null) => 0,
        Some(value) => value
            .as_u64()
            .filter(|n| *n <= MAX_CONTEXT)
            .ok_or_else(|| {
                format!("argument `context` must be an integer from 0 to {MAX_CONTEXT}")
            })?,
    };
    // Checked by the regex crate first: grep-regex's error shows the
    // pattern as it rewrote it.
    regex::Regex::new(pattern).map_err(|e| format!("invalid regex `{pattern}`: {e}"))?;
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(case_insensitive)
        .line_terminator(Some(b'\n'))
        .build(pattern)
        .map_err(|e| format!("invalid regex `{pattern}`: {e}"))?;
    let scope = Scope::new(&workspace, &paths, glob)?;
    Ok(search(&scope, &matcher, context))
}

/// The optional string argument `name`.
fn optional_string<'a>(request: &'a Request, name: &str) -> Result<Option<&'a str>, String> {
    match request.argument(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("argument `{name}` must be a string")),
    }
}

/// One line of a file's result.
struct Line {
    number: u64,
    is_match: bool,
    text: String,
}

/// What a search of one file found.
#[derive(Default)]
struct FileHits {
    /// The lines kept: the first [`MAX_FILE_MATCHES`] matching lines and
    /// their context.
    lines: Vec<Line>,
    /// Every matching line of the file.
    matches: usize,
    kept: usize,
    binary: bool,
    /// It could not be read (it went away, or no permission).
    unreadable: bool,
}

impl Sink for FileHits {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let first = found.line_number().unwrap_or(0);
        for (number, text) in (first..).zip(found.lines()) {
            self.matches += 1;
            if self.kept < MAX_FILE_MATCHES {
                self.kept += 1;
                self.lines.push(Line {
                    number,
                    is_match: true,
                    text: shorten(text),
                });
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        // Before a match that is kept, or after one that was.
        let keep = match context.kind() {
            SinkContextKind::Before => self.kept < MAX_FILE_MATCHES,
            SinkContextKind::After | SinkContextKind::Other => {
                self.kept > 0 && self.kept == self.matches
            }
        };
        if keep {
            self.lines.push(Line {
                number: context.line_number().unwrap_or(0),
                is_match: false,
                text: shorten(context.bytes()),
            });
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// `line` without its line break, lossily decoded, cut at
/// [`MAX_LINE_CHARS`] characters with a note of how many more there were.
fn shorten(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    let total = text.chars().count();
    if total <= MAX_LINE_CHARS {
        return text.into_owned();
    }
    let kept: String = text.chars().take(MAX_LINE_CHARS).collect();
    format!("{kept} [... {} more characters]", total - MAX_LINE_CHARS)
}

/// Searches every file in `scope` and formats what matched.
fn search(scope: &Scope, matcher: &RegexMatcher, context: u64) -> String {
    let walked = scope.walk(|| {
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::quit(0))
            .before_context(usize::try_from(context).unwrap_or(0))
            .after_context(usize::try_from(context).unwrap_or(0))
            .build();
        move |path: &Path| {
            let mut hits = FileHits::default();
            if searcher.search_path(matcher, path, &mut hits).is_err() {
                return Some(FileHits {
                    unreadable: true,
                    ..FileHits::default()
                });
            }
            (hits.matches > 0 && !hits.binary).then_some(hits)
        }
    });
    let mut out = Output::new(context > 0);
    let mut unreadable = walked.unreadable;
    for (path, hits) in &walked.found {
        if hits.unreadable {
            unreadable += 1;
        } else {
            out.file(path, hits, context);
        }
    }
    let mut text = out.lines.join("\n");
    let mut notes = Vec::new();
    if out.cut_matches > 0 {
        notes.push(format!(
            "... {} in {}; narrow with `glob` or `paths`",
            crate::words::plural(out.cut_matches, "more match", "more matches"),
            crate::words::plural(out.cut_files, "file", "files"),
        ));
    }
    if out.lines.is_empty() {
        text.push_str("no matches");
    }
    if !walked.secrets.is_empty() {
        notes.push(secrets_note(
            &walked.secrets,
            "searched",
            "name one in `paths` to search it",
        ));
    }
    if unreadable > 0 {
        notes.push(format!(
            "({} could not be read)",
            crate::words::plural(unreadable, "entry", "entries")
        ));
    }
    for note in notes {
        text.push('\n');
        text.push_str(&note);
    }
    text
}

/// The result's lines as they are written, within the bounds.
struct Output {
    lines: Vec<String>,
    separate: bool,
    /// Matching and context lines written (not `--` or notes).
    written: usize,
    shown_matches: usize,
    /// Matching lines not shown, and the files they are in.
    cut_matches: usize,
    cut_files: usize,
}

impl Output {
    fn new(separate: bool) -> Self {
        Self {
            lines: Vec::new(),
            separate,
            written: 0,
            shown_matches: 0,
            cut_matches: 0,
            cut_files: 0,
        }
    }

    /// Adds `hits` of the file at `path`: its lines until a bound is
    /// reached, then a note when only its own bound cut it.
    fn file(&mut self, path: &str, hits: &FileHits, context: u64) {
        // (line number, whether it is a match, the line as written)
        let mut written: Vec<(u64, bool, String)> = Vec::new();
        let mut shown = 0;
        let mut room = MAX_LINES.saturating_sub(self.written);
        for line in &hits.lines {
            if room == 0 || (line.is_match && self.shown_matches == MAX_MATCHES) {
                break;
            }
            if line.is_match {
                self.shown_matches += 1;
                shown += 1;
            }
            room -= 1;
            self.written += 1;
            let mark = if line.is_match { ':' } else { '-' };
            let mut text = String::new();
            let _ = write!(text, "{path}{mark}{}{mark}{}", line.number, line.text);
            written.push((line.number, line.is_match, text));
        }
        // When a bound cut the file, the context lines after the last match
        // shown that lead to the next match belong to what was cut.
        if shown < hits.kept {
            let keep_to = written
                .iter()
                .rev()
                .find(|(_, is_match, _)| *is_match)
                .map(|(number, ..)| number + context);
            match keep_to {
                Some(keep_to) => written.retain(|(number, ..)| *number <= keep_to),
                None => written.clear(),
            }
        }
        let mut previous: Option<u64> = None;
        for (number, _, text) in written {
            let touches = previous.is_some_and(|p| p + 1 == number);
            let first_ever = previous.is_none() && self.lines.is_empty();
            if self.separate && !touches && !first_ever {
                self.lines.push("--".to_owned());
            }
            self.lines.push(text);
            previous = Some(number);
        }
        let cut = hits.matches - shown;
        if cut > 0 {
            if shown == MAX_FILE_MATCHES {
                self.lines.push(format!(
                    "... {} in {path}",
                    crate::words::plural(cut, "more match", "more matches")
                ));
            }
            self.cut_matches += cut;
            self.cut_files += 1;
        }
    }
}

#[cfg(test)]
#[path = "grep_tests.rs"]
mod tests;
