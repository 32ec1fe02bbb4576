//! The [`ToolRenderer`]: a tool call shown while its arguments stream.
//!
//! A pure state machine: it is fed the call's start and its
//! [`ToolCallArgumentProgress`], and returns the lines that are complete,
//! which the shell prints as they come. Each argument shows the moment it
//! is known: a short value on one line once complete (`path: "src/lib.rs"`),
//! a long or multi-line string as text, row by row as it arrives, under a
//! gutter, capped at `max_lines` screen rows with a tail that counts the
//! rest ([`TextBlock`]). The `old` and `new` texts of `fs_modify_file`
//! patterns show as a diff (`-` and `+`). All the lines of one call's
//! arguments are capped too (`call_lines`), so a thousand array items do
//! not fill the screen: the values past it are counted (`… N more
//! values`). Only the unfinished row of a string is kept, so memory is
//! bounded by the terminal's width, not by the argument.
//!
//! [`result_lines`] is the other half: what the user sees of a call's
//! result once it ran. [`wrap`] fits both to a terminal's width.
//! [`full_arguments`] is what `v` at a prompt shows: every argument in
//! full.

mod full;
mod line;
mod text;

use jp_tools::DefaultTool;
use std::collections::HashMap;

#[cfg(test)]
use jp_conversation::ToolCallArgumentProgress;
use jp_conversation::{
    EmptyKind, FragmentRef, Leaf as FragmentLeaf, PathSegment, ProgressRef, ToolCallRequest,
    ToolCallResponse,
};

pub use full::full_arguments;
pub use line::{Line, wrap, wrap_words};
use text::TextBlock;

use jp_term::printer::{Style, cut, sanitize};

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
    /// The most screen rows shown of one long string.
    pub max_lines: usize,
    /// The most lines shown of one call's arguments in all.
    pub call_lines: usize,
    /// The terminal's width; longer lines wrap.
    pub width: usize,
}

/// Strings up to this long, without a newline, show on one line.
pub(crate) const SHORT: usize = 60;

/// The string leaf being received.
struct Text {
    /// Its display path (`content`, `patterns[0].old`).
    path: String,
    /// Whether it is a top-level argument.
    path_is_top: bool,
    /// While it is short (one line of at most [`SHORT`] characters so
    /// far): all of it.
    short: String,
    /// Whether it streams as text (long or multi-line).
    long: bool,
    /// Its rows, once long and shown (not when the call's lines ran out
    /// before it).
    block: Option<TextBlock>,
    /// `- `, `+ ` (a diff) or the gutter.
    prefix: &'static str,
    style: Style,
}

/// One call in flight.
struct Call {
    name: String,
    /// Which of jp's default tools it runs, if one: a call of
    /// `fs_modify_file` shows its replacements as `-` and `+` lines.
    runs: Option<DefaultTool>,
    /// Its number among the calls of this response, from 1.
    number: usize,
    /// Top-level arguments seen so far, each with its value for a summary
    /// once complete.
    arguments: Vec<(String, Option<String>)>,
    text: Option<Text>,
    /// How many more lines its arguments may show.
    lines_left: usize,
    /// Values not shown because `lines_left` ran out.
    hidden_values: usize,
}

impl Call {
    /// Shows `line`, a value or a string's first line, if the call has
    /// lines left; counts it otherwise.
    fn show_value(&mut self, line: Line, width: usize, out: &mut Vec<Line>) {
        if self.lines_left == 0 {
            self.hidden_values += 1;
            return;
        }
        let rows = wrap(vec![line], width);
        self.lines_left = self.lines_left.saturating_sub(rows.len());
        out.extend(rows);
    }

    /// Feeds `piece` to the shown string `block`, spending the call's
    /// lines on its rows.
    fn feed(lines_left: &mut usize, block: &mut TextBlock, piece: &str, out: &mut Vec<Line>) {
        let before = block.rows();
        block.push(piece, out);
        *lines_left = lines_left.saturating_sub(block.rows() - before);
    }

    /// Ends the string being received: its last rows and tail, or, for a
    /// short one, its one line.
    fn end_text(&mut self, text: Text, width: usize, out: &mut Vec<Line>) {
        match text.block {
            Some(mut block) => {
                let before = block.rows();
                block.end(out);
                self.lines_left = self.lines_left.saturating_sub(block.rows() - before);
            }
            None if text.long => {}
            None => {
                let value = quote(&text.short);
                let line = Line {
                    style: Style::Dim,
                    text: format!("  {}: {}", sanitize(&text.path), sanitize(&value)),
                };
                self.show_value(line, width, out);
            }
        }
    }

    /// The string being received is long: its header, and its rows so
    /// far; or, when the call has no lines left, it is counted.
    fn start_block(&mut self, max_lines: usize, width: usize, out: &mut Vec<Line>) {
        let Some(text) = &mut self.text else {
            return;
        };
        text.long = true;
        let short = std::mem::take(&mut text.short);
        let (path, prefix, style) = (text.path.clone(), text.prefix, text.style);
        let hidden = self.hidden_values;
        self.show_value(
            Line {
                style: Style::Dim,
                text: format!("  {}:", sanitize(&path)),
            },
            width,
            out,
        );
        if self.hidden_values > hidden {
            return;
        }
        let mut block = TextBlock::new(prefix, style, width, max_lines.min(self.lines_left));
        Self::feed(&mut self.lines_left, &mut block, &short, out);
        if let Some(text) = &mut self.text {
            text.block = Some(block);
        }
    }
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
    pub fn start(&mut self, id: &str, name: &str, runs: Option<DefaultTool>) -> Vec<Line> {
        self.started += 1;
        self.calls.insert(
            id.to_owned(),
            Call {
                name: name.to_owned(),
                runs,
                number: self.started,
                arguments: Vec::new(),
                text: None,
                lines_left: self.options.call_lines,
                hidden_values: 0,
            },
        );
        self.last = Some(id.to_owned());
        self.wrap(vec![Line {
            style: Style::Header,
            text: format!("Calling tool {}", sanitize(name)),
        }])
    }

    /// A fragment of a call's arguments arrived: the lines now complete.
    #[cfg(test)]
    pub fn progress(&mut self, progress: &ToolCallArgumentProgress) -> Vec<Line> {
        self.progress_ref(progress.view())
    }

    /// [`progress`](Self::progress) for a borrowed fragment; nothing of it
    /// is kept but what the display needs (issue 14).
    pub fn progress_ref(&mut self, progress: ProgressRef<'_>) -> Vec<Line> {
        let RenderOptions {
            format,
            show_arguments: show,
            max_lines,
            width,
            ..
        } = self.options;
        let switched = self.last.as_deref() != Some(progress.tool_call_id);
        let Some(call) = self.calls.get_mut(progress.tool_call_id) else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        let (top, leaf, path, in_pattern) = walk(progress.fragment, format);
        if let Some(top) = &top
            && call.arguments.last().is_none_or(|(key, _)| key != top)
        {
            call.arguments.push((top.clone(), None));
        }
        match leaf {
            Leaf::Text(piece) => {
                let diff = call.runs == Some(DefaultTool::ModifyFile) && in_pattern.is_some();
                let text = call.text.get_or_insert_with(|| {
                    let (prefix, style) = match in_pattern {
                        Some("old") if diff => ("  - ", Style::Bad),
                        Some("new") if diff => ("  + ", Style::Good),
                        _ => ("  │ ", Style::Dim),
                    };
                    Text {
                        path_is_top: path_is_top(progress.fragment),
                        path: path.clone(),
                        short: String::new(),
                        long: false,
                        block: None,
                        prefix,
                        style,
                    }
                });
                if text.long {
                    if let Some(block) = &mut text.block {
                        Call::feed(&mut call.lines_left, block, piece, &mut lines);
                    }
                } else {
                    text.short.push_str(piece);
                    if text.short.contains('\n') || text.short.chars().count() > SHORT {
                        if show {
                            call.start_block(max_lines, width, &mut lines);
                        } else {
                            text.long = true;
                            text.short.clear();
                        }
                    }
                }
            }
            Leaf::Value(value) => {
                if path_is_top(progress.fragment) {
                    finish_argument(call, &top, cut(&value, 40));
                }
                // The root itself (`{}`) has no line.
                if show && top.is_some() {
                    let line = Line {
                        style: Style::Dim,
                        text: format!("  {}: {}", sanitize(&path), sanitize(&value)),
                    };
                    call.show_value(line, width, &mut lines);
                }
            }
            Leaf::Done => {
                if let Some(text) = call.text.take() {
                    let summary = if text.long {
                        "\"…\"".to_owned()
                    } else {
                        cut(&quote(&text.short), 40)
                    };
                    let is_top = text.path_is_top;
                    if show {
                        call.end_text(text, width, &mut lines);
                    }
                    if is_top {
                        finish_argument(call, &top, summary);
                    }
                } else if progress.fragment.completes_argument().is_some()
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
        self.last = Some(progress.tool_call_id.to_owned());
        self.wrap(marker.into_iter().chain(lines).collect())
    }

    /// The call's arguments are complete, or ended early: what is still
    /// pending, the values the call's cap left out, and a line saying why
    /// a call cannot run.
    pub fn finish(&mut self, call: &ToolCallRequest) -> Vec<Line> {
        let mut lines = Vec::new();
        let RenderOptions {
            show_arguments,
            max_lines,
            width,
            ..
        } = self.options;
        if let Some(mut state) = self.calls.remove(&call.id)
            && show_arguments
        {
            // A string cut off: what arrived of it shows as text.
            if state
                .text
                .as_ref()
                .is_some_and(|t| !t.long && !t.short.is_empty())
            {
                state.start_block(max_lines, width, &mut lines);
            }
            if let Some(text) = state.text.take()
                && text.long
            {
                state.end_text(text, width, &mut lines);
            }
            match state.hidden_values {
                0 => {}
                1 => lines.push(Line {
                    style: Style::Dim,
                    text: "  … 1 more value".to_owned(),
                }),
                n => lines.push(Line {
                    style: Style::Dim,
                    text: format!("  … {n} more values"),
                }),
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
                let more = lines.len() - max_lines;
                let word = if more == 1 { "line" } else { "lines" };
                out.push(line(Style::Dim, format!("    … {more} more {word}")));
            }
        }
    }
    out
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
fn path_is_top(fragment: FragmentRef<'_>) -> bool {
    fragment.depth() == 1 && matches!(fragment.path().first(), Some(PathSegment::Key(_)))
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
    fragment: FragmentRef<'_>,
    format: CallFormat,
) -> (Option<String>, Leaf<'_>, String, Option<&str>) {
    let mut path = String::new();
    let mut top = None;
    let mut keys: Vec<&str> = Vec::new();
    let mut depth = 0;
    for segment in fragment.path().iter() {
        match segment {
            PathSegment::Key(key) => {
                if top.is_none() {
                    top = Some(key.to_owned());
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
                // Only the first three keys matter (`patterns`, an item,
                // `old` or `new`): a deep path costs no more.
                if keys.len() <= 3 {
                    keys.push(key);
                }
            }
            PathSegment::Index(index) => {
                match format {
                    CallFormat::FunctionCall => path.push_str(&format!("[{index}]")),
                    CallFormat::Json => path.push_str(&format!("/{index}")),
                }
                if keys.len() <= 3 {
                    keys.push("[]");
                }
            }
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
    let leaf = match fragment.leaf() {
        FragmentLeaf::String(text) => Leaf::Text(text),
        FragmentLeaf::Scalar(scalar) => {
            Leaf::Value(serde_json::Value::from(scalar.clone()).to_string())
        }
        FragmentLeaf::Empty(kind) => Leaf::Value(match kind {
            EmptyKind::String => "\"\"".to_owned(),
            EmptyKind::Array => "[]".to_owned(),
            EmptyKind::Object => "{}".to_owned(),
        }),
        FragmentLeaf::Done if depth > 0 => Leaf::Done,
        FragmentLeaf::Done => Leaf::Inside,
    };
    (top, leaf, path, in_pattern)
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
