//! The [`ToolRenderer`]: a tool call shown while its arguments stream.
//!
//! A pure state machine: it is fed the call's start and its
//! [`ToolCallArgumentProgress`], and returns the lines that are complete,
//! which the shell prints as they come. Each argument shows the moment it
//! is known: a short value on one line once complete (`path: "src/lib.rs"`),
//! a long or multi-line string as text, line by line as it arrives, under a
//! gutter, capped at `max_lines` with a "… N more lines" tail. The `old` and
//! `new` texts of `fs_modify_file` patterns show as a diff (`-` and `+`).
//! Only the current line of a string is kept, so memory is bounded by the
//! cap, not by the argument.
//!
//! [`result_lines`] is the other half: what the user sees of a call's
//! result once it ran. [`wrap`] fits both to a terminal's width.

use std::collections::HashMap;

use jp_conversation::{
    EmptyKind, StreamFragment, ToolCallArgumentProgress, ToolCallRequest, ToolCallResponse,
};

use crate::printer::{Style, cut, sanitize};

/// The two `style.tool_call.format`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFormat {
    /// `path: "src/lib.rs"`, `patterns[0].old:`.
    FunctionCall,
    /// `"path": "src/lib.rs"`, `/patterns/0/old:` (JSON keys and values).
    Json,
}

/// How calls are rendered.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    /// The layout.
    pub format: CallFormat,
    /// Whether arguments show at all (the header always does).
    pub show_arguments: bool,
    /// The most lines shown of one long string.
    pub max_lines: usize,
    /// The terminal's width; longer lines wrap.
    pub width: usize,
}

/// A line to print, without its newline; its text is safe for a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// How it is styled.
    pub style: Style,
    /// The text.
    pub text: String,
}

/// Strings up to this long, without a newline, show on one line.
const SHORT: usize = 60;

/// The string leaf being received.
struct Text {
    /// Its display path (`content`, `patterns[0].old`).
    path: String,
    /// Whether it is a top-level argument.
    path_is_top: bool,
    /// What arrived and is not shown yet: while short, all of it; once
    /// long, the unfinished line.
    pending: String,
    /// Whether it streams as text (long or multi-line).
    long: bool,
    /// Lines shown and lines counted past the cap.
    shown: usize,
    hidden: usize,
    /// `- `, `+ ` (a diff) or the gutter.
    prefix: &'static str,
    style: Style,
}

/// One call in flight.
struct Call {
    name: String,
    /// Its number among the calls of this response, from 1.
    number: usize,
    /// Top-level arguments seen so far, each with its value for a summary
    /// once complete.
    arguments: Vec<(String, Option<String>)>,
    text: Option<Text>,
}

/// Renders the tool calls of a response.
pub struct ToolRenderer {
    options: RenderOptions,
    calls: HashMap<String, Call>,
    started: usize,
    /// The call whose lines were shown last (interleaved calls get a
    /// marker line when it changes).
    last: Option<String>,
}

impl ToolRenderer {
    /// A renderer with `options`.
    #[must_use]
    pub fn new(options: RenderOptions) -> Self {
        Self {
            options,
            calls: HashMap::new(),
            started: 0,
            last: None,
        }
    }

    /// A call began: its header.
    pub fn start(&mut self, id: &str, name: &str) -> Vec<Line> {
        self.started += 1;
        self.calls.insert(
            id.to_owned(),
            Call {
                name: name.to_owned(),
                number: self.started,
                arguments: Vec::new(),
                text: None,
            },
        );
        self.last = Some(id.to_owned());
        self.wrap(vec![Line {
            style: Style::Header,
            text: format!("Calling tool {}", sanitize(name)),
        }])
    }

    /// A fragment of a call's arguments arrived: the lines now complete.
    pub fn progress(&mut self, progress: &ToolCallArgumentProgress) -> Vec<Line> {
        let (format, show, max_lines) = (
            self.options.format,
            self.options.show_arguments,
            self.options.max_lines,
        );
        let switched = self.last.as_deref() != Some(progress.tool_call_id.as_str());
        let Some(call) = self.calls.get_mut(&progress.tool_call_id) else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        let (top, leaf, path, in_pattern) = walk(&progress.fragment, format);
        if let Some(top) = &top
            && call.arguments.last().is_none_or(|(key, _)| key != top)
        {
            call.arguments.push((top.clone(), None));
        }
        match leaf {
            Leaf::Text(piece) => {
                let diff = call.name == "fs_modify_file" && in_pattern.is_some();
                let text = call.text.get_or_insert_with(|| {
                    let (prefix, style) = match in_pattern {
                        Some("old") if diff => ("  - ", Style::Bad),
                        Some("new") if diff => ("  + ", Style::Good),
                        _ => ("  │ ", Style::Dim),
                    };
                    Text {
                        path_is_top: path_is_top(&progress.fragment),
                        path: path.clone(),
                        pending: String::new(),
                        long: false,
                        shown: 0,
                        hidden: 0,
                        prefix,
                        style,
                    }
                });
                text.pending.push_str(piece);
                if !text.long
                    && (text.pending.contains('\n') || text.pending.chars().count() > SHORT)
                {
                    text.long = true;
                    if show {
                        lines.push(Line {
                            style: Style::Dim,
                            text: format!("  {}:", sanitize(&text.path)),
                        });
                    }
                }
                if text.long {
                    while let Some(end) = text.pending.find('\n') {
                        let line: String = text.pending.drain(..=end).collect();
                        push_text_line(
                            text,
                            line.trim_end_matches('\n'),
                            max_lines,
                            show,
                            &mut lines,
                        );
                    }
                }
            }
            Leaf::Value(value) => {
                if path_is_top(&progress.fragment) {
                    finish_argument(call, &top, cut(&value, 40));
                }
                // The root itself (`{}`) has no line.
                if show && top.is_some() {
                    lines.push(Line {
                        style: Style::Dim,
                        text: format!("  {}: {}", sanitize(&path), sanitize(&value)),
                    });
                }
            }
            Leaf::Done => {
                if let Some(mut text) = call.text.take() {
                    if text.long {
                        let rest = std::mem::take(&mut text.pending);
                        if !rest.is_empty() {
                            push_text_line(&mut text, &rest, max_lines, show, &mut lines);
                        }
                        if text.hidden > 0 && show {
                            lines.push(Line {
                                style: Style::Dim,
                                text: format!("{}… {} more lines", text.prefix, text.hidden),
                            });
                        }
                    } else if show {
                        let value = quote(&text.pending);
                        lines.push(Line {
                            style: Style::Dim,
                            text: format!("  {}: {}", sanitize(&text.path), sanitize(&value)),
                        });
                    }
                    if text.path_is_top {
                        let shown = if text.long {
                            "\"…\"".to_owned()
                        } else {
                            cut(&quote(&text.pending), 40)
                        };
                        finish_argument(call, &top, shown);
                    }
                } else if progress_completes_top(&progress.fragment)
                    && call
                        .arguments
                        .last()
                        .is_some_and(|(_, value)| value.is_none())
                {
                    // A container (a scalar has its value already).
                    finish_argument(call, &top, "…".to_owned());
                }
            }
            Leaf::Inside => {}
        }
        if lines.is_empty() {
            return lines;
        }
        let marker = switched.then(|| Line {
            style: Style::Header,
            text: format!("  [{} #{}]", sanitize(&call.name), call.number),
        });
        self.last = Some(progress.tool_call_id.clone());
        self.wrap(marker.into_iter().chain(lines).collect())
    }

    /// The call's arguments are complete, or ended early: what is still
    /// pending, and a line saying why a call cannot run.
    pub fn finish(&mut self, call: &ToolCallRequest) -> Vec<Line> {
        let mut lines = Vec::new();
        if let Some(mut state) = self.calls.remove(&call.id)
            && let Some(mut text) = state.text.take()
            && self.options.show_arguments
        {
            let rest = std::mem::take(&mut text.pending);
            if !rest.is_empty() {
                if !text.long {
                    lines.push(Line {
                        style: Style::Dim,
                        text: format!("  {}:", sanitize(&text.path)),
                    });
                }
                push_text_line(&mut text, &rest, self.options.max_lines, true, &mut lines);
            }
        }
        if let Some(error) = call.error() {
            lines.push(Line {
                style: Style::Bad,
                text: format!("  {}", sanitize(&error.to_string())),
            });
        }
        self.wrap(lines)
    }

    /// One line for a prompt about a call that may be partly streamed (the
    /// streaming policy of RFD D26, next, prompts at that moment):
    /// the arguments known so far, and `<streaming>` for those still
    /// arriving. A real value is JSON (a string is quoted), so the unquoted
    /// placeholder cannot be one.
    #[must_use]
    pub fn summary(&self, id: &str) -> Option<String> {
        let call = self.calls.get(id)?;
        let parts: Vec<String> = call
            .arguments
            .iter()
            .map(|(key, value)| match value {
                Some(value) => format!("{}: {}", sanitize(key), sanitize(value)),
                None => format!("{}: <streaming>", sanitize(key)),
            })
            .collect();
        Some(parts.join(", "))
    }

    /// The call as a prompt shows it while its arguments stream, in the
    /// configured format: `NAME(path: "a", content: <streaming>)` or
    /// `NAME {"path": "a", "content": <streaming>}`, with a final `…` when
    /// the last argument shown is complete (more may follow). Neither
    /// `<streaming>` nor `…` is JSON, so they cannot be read as a value (or,
    /// in the JSON form, as a key); a call with no argument yet is
    /// `NAME(<streaming>)`.
    #[must_use]
    pub fn prompt_summary(&self, id: &str) -> Option<String> {
        let call = self.calls.get(id)?;
        let name = sanitize(&call.name);
        if call.arguments.is_empty() {
            return Some(format!("{name}(<streaming>)"));
        }
        // The last argument is complete, so more may follow: `…` says so.
        let more = if call
            .arguments
            .last()
            .is_some_and(|(_, value)| value.is_some())
        {
            ", …"
        } else {
            ""
        };
        Some(match self.options.format {
            CallFormat::FunctionCall => format!("{name}({}{more})", self.summary(id)?),
            CallFormat::Json => {
                let parts: Vec<String> = call
                    .arguments
                    .iter()
                    .map(|(key, value)| {
                        let quoted = serde_json::Value::from(key.as_str()).to_string();
                        let key = sanitize(&quoted);
                        match value {
                            Some(value) => format!("{key}: {}", sanitize(value)),
                            None => format!("{key}: <streaming>"),
                        }
                    })
                    .collect();
                format!("{name} {{{}{more}}}", parts.join(", "))
            }
        })
    }

    /// Wraps lines wider than the terminal (see [`wrap`]).
    fn wrap(&self, lines: Vec<Line>) -> Vec<Line> {
        wrap(lines, self.options.width)
    }

    /// The terminal's width the lines are wrapped to.
    #[must_use]
    pub fn width(&self) -> usize {
        self.options.width
    }
}

/// Wraps lines wider than `width` characters (at least 8): a line is cut
/// into pieces that fit, and each continuation starts with the line's
/// indent (its leading spaces), unless the indent takes more than half the
/// width. Nothing is dropped: the pieces, indents aside, join back into the
/// line.
#[must_use]
pub fn wrap(lines: Vec<Line>, width: usize) -> Vec<Line> {
    let width = width.max(8);
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let chars: Vec<char> = line.text.chars().collect();
        if chars.len() <= width {
            out.push(line);
            continue;
        }
        let indent: String = chars.iter().take_while(|c| **c == ' ').collect();
        let indent = if indent.len() * 2 > width {
            String::new()
        } else {
            indent
        };
        let room = (width - indent.len()).max(1);
        let mut rest = &chars[..];
        let mut first = true;
        while !rest.is_empty() {
            let take = if first {
                width.min(rest.len())
            } else {
                room.min(rest.len())
            };
            let piece: String = rest[..take].iter().collect();
            out.push(Line {
                style: line.style,
                text: if first {
                    piece
                } else {
                    format!("{indent}{piece}")
                },
            });
            rest = &rest[take..];
            first = false;
        }
    }
    out
}

/// The most characters shown of one line of a tool result; the rest is
/// cut with `…`. On a terminal, what is shown is then wrapped to its width
/// with [`wrap`]; in a log it stays one line.
pub const RESULT_LINE_CHARS: usize = 200;

/// What the user sees of a call's result, in a terminal and in a log
/// alike: `note` (what happened to the result, when it did not simply go
/// to the model), then the status with the content. A one-line content
/// shares the status line; a longer one shows its first `max_lines` lines
/// under it and counts the rest (`… N more lines`); an empty content, or a
/// `max_lines` of 0, shows the status alone. A failed call's status line is
/// [`Style::Bad`]. Each line is cut at [`RESULT_LINE_CHARS`] characters,
/// and not wrapped: on a terminal the shell passes the lines through
/// [`wrap`]. A `hidden` tool (`style.hidden`) shows only the note.
#[must_use]
pub fn result_lines(
    name: &str,
    response: &ToolCallResponse,
    note: Option<&str>,
    max_lines: usize,
    hidden: bool,
) -> Vec<Line> {
    let line = |style, text: String| Line {
        style,
        text: sanitize(&text).into_owned(),
    };
    let mut out = Vec::new();
    if let Some(note) = note {
        out.push(line(Style::Warn, format!("  {note}")));
    }
    if hidden {
        return out;
    }
    let style = if response.is_error() {
        Style::Bad
    } else {
        Style::Good
    };
    let lines: Vec<&str> = response.content.lines().collect();
    let status = response.status.as_str();
    match lines.as_slice() {
        [] => out.push(line(style, format!("  {name}: {status}"))),
        _ if max_lines == 0 => out.push(line(style, format!("  {name}: {status}"))),
        [only] => out.push(line(
            style,
            format!("  {name} {status}: {}", cut(only, RESULT_LINE_CHARS)),
        )),
        _ => {
            out.push(line(style, format!("  {name} {status}:")));
            for text in lines.iter().take(max_lines) {
                out.push(line(
                    Style::Dim,
                    format!("    {}", cut(text, RESULT_LINE_CHARS)),
                ));
            }
            if lines.len() > max_lines {
                out.push(line(
                    Style::Dim,
                    format!("    … {} more lines", lines.len() - max_lines),
                ));
            }
        }
    }
    out
}

fn push_text_line(
    text: &mut Text,
    line: &str,
    max_lines: usize,
    show: bool,
    lines: &mut Vec<Line>,
) {
    if text.shown >= max_lines {
        text.hidden += 1;
        return;
    }
    text.shown += 1;
    if show {
        lines.push(Line {
            style: text.style,
            text: format!("{}{}", text.prefix, sanitize(line)),
        });
    }
}

/// A complete short string, quoted and escaped as JSON.
fn quote(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

/// Records the summary value of the top-level argument `top`.
fn finish_argument(call: &mut Call, top: &Option<String>, shown: String) {
    if let Some(top) = top
        && let Some(slot) = call.arguments.iter_mut().rev().find(|(key, _)| key == top)
    {
        slot.1 = Some(shown);
    }
}

/// Whether the fragment's leaf is a top-level argument itself.
fn path_is_top(fragment: &StreamFragment) -> bool {
    matches!(fragment, StreamFragment::ObjectEntry { value, .. }
        if !matches!(**value, StreamFragment::ObjectEntry { .. } | StreamFragment::ArrayItem { .. }))
}

/// What a fragment's leaf is.
enum Leaf<'a> {
    Text(&'a str),
    Value(String),
    Done,
    /// A `Done` that closes a container, not a leaf.
    Inside,
}

/// The fragment's top-level key, its leaf, the leaf's display path, and
/// the key inside a `patterns[i]` item it is under (for the diff).
fn walk(
    fragment: &StreamFragment,
    format: CallFormat,
) -> (Option<String>, Leaf<'_>, String, Option<&str>) {
    let mut path = String::new();
    let mut top = None;
    let mut keys: Vec<&str> = Vec::new();
    let mut depth = 0;
    let mut at = fragment;
    loop {
        match at {
            StreamFragment::ObjectEntry { key, value } => {
                if top.is_none() {
                    top = Some(key.clone());
                }
                match format {
                    CallFormat::FunctionCall if path.is_empty() => path.push_str(key),
                    CallFormat::FunctionCall => {
                        path.push('.');
                        path.push_str(key);
                    }
                    CallFormat::Json => {
                        path.push('/');
                        path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    }
                }
                keys.push(key);
                at = value;
            }
            StreamFragment::ArrayItem { index, value } => {
                match format {
                    CallFormat::FunctionCall => path.push_str(&format!("[{index}]")),
                    CallFormat::Json => path.push_str(&format!("/{index}")),
                }
                keys.push("[]");
                at = value;
            }
            _ => break,
        }
        depth += 1;
    }
    let path = match format {
        CallFormat::Json if depth == 1 => {
            serde_json::Value::String(top.clone().unwrap_or_default()).to_string()
        }
        _ => path,
    };
    // `patterns`, an item, then `old` or `new`.
    let in_pattern = match keys.as_slice() {
        ["patterns", "[]", last] if matches!(*last, "old" | "new") => Some(*last),
        _ => None,
    };
    let leaf = match at {
        StreamFragment::String(text) => Leaf::Text(text),
        StreamFragment::Scalar(scalar) => {
            Leaf::Value(serde_json::Value::from(scalar.clone()).to_string())
        }
        StreamFragment::Empty(kind) => Leaf::Value(match kind {
            EmptyKind::String => "\"\"".to_owned(),
            EmptyKind::Array => "[]".to_owned(),
            EmptyKind::Object => "{}".to_owned(),
        }),
        StreamFragment::Done if depth > 0 => Leaf::Done,
        _ => Leaf::Inside,
    };
    (top, leaf, path, in_pattern)
}

/// Whether the fragment is the `Done` of a top-level argument.
fn progress_completes_top(fragment: &StreamFragment) -> bool {
    matches!(fragment, StreamFragment::ObjectEntry { value, .. } if matches!(**value, StreamFragment::Done))
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
