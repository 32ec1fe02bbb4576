//! The assistant's text as markdown on a terminal, drawn while it streams.
//!
//! A pure, incremental renderer: [`Markdown::push`] takes the text as it
//! arrives and returns the terminal rows that can no longer change,
//! styled and escaped; [`Markdown::finish`] returns the rest when the text
//! ends or something else is about to be drawn below it (a tool call, the
//! end of the response). Nothing it returns is ever redrawn, so it costs
//! the stream no more than the time to draw each line once.
//!
//! The block structure is decided line by line, as CommonMark does it:
//! each line first continues the open containers (block quotes, list
//! items), may open new ones, and what is left is a leaf: a paragraph's
//! line, a heading, a thematic break, a fence, a code line, a table row.
//! A paragraph's line is drawn once complete (wrapped to the width under
//! its quote bars and list indents); a code line too (highlighted, see
//! [`code`]); a table once its last row is in (its columns depend on every
//! row). A line with a `|` waits for the next one, which says whether it
//! heads a table. Inline markdown is parsed per line ([`inline`]), so
//! emphasis does not reach across lines; setext headings (a line
//! underlined with `===`) and a list item's lazy indentation are not
//! recognised as such, a small price for drawing each line at once.
//!
//! Every character of the model's text goes through
//! [`jp_term::printer::sanitize`], code included: the only escape sequences
//! on screen are the renderer's own (colours, and OSC 8 hyperlinks where
//! the terminal has them).

mod blocks;
mod code;
mod flow;
mod inline;
mod paint;
mod table;

use blocks::ListKind;
use code::Code;
use flow::Flow;
use paint::{Fg, Look, Span, paint, paint_open, width, wrap};
use table::Table;

pub use paint::Ink;

/// What the renderer draws for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkdownOptions {
    /// The terminal's width in columns.
    pub width: usize,
    /// Colour, and hyperlinks.
    pub ink: Ink,
}

/// A container block open across lines.
#[derive(Debug, Clone)]
enum Container {
    /// `> `.
    Quote,
    /// A list item.
    Item(Item),
}

#[derive(Debug, Clone)]
struct Item {
    /// The columns of its content, past its marker.
    content: usize,
    /// Its marker as drawn (`• `, `3. `).
    marker: String,
    /// Whether the marker is on screen (the rows after it are indented).
    drawn: bool,
    kind: ListKind,
    number: u64,
}

/// An open code fence.
struct Fence {
    fence: char,
    length: usize,
    /// The fence's indentation, taken off its code lines.
    indent: usize,
    /// How many containers it is in.
    depth: usize,
    code: Code,
}

/// A table being received, drawn when it ends.
struct OpenTable {
    depth: usize,
    first: Vec<Span>,
    rest: Vec<Span>,
    table: Table,
}

/// A line with a `|`, waiting for the next: a delimiter row makes it a
/// table's header; anything else, a paragraph's line.
struct Held {
    depth: usize,
    text: String,
    first: Vec<Span>,
    rest: Vec<Span>,
}

/// The renderer. See the module's docs.
pub struct Markdown {
    options: MarkdownOptions,
    /// The line being received.
    partial: String,
    containers: Vec<Container>,
    fence: Option<Fence>,
    table: Option<OpenTable>,
    held: Option<Held>,
    /// Whether the last line was a paragraph's (a line that follows may
    /// continue it).
    paragraph: bool,
    /// The paragraph line being drawn word by word.
    flow: Option<Flow>,
    /// Whether the line being received was found not to be one to draw
    /// word by word.
    no_flow: bool,
    /// Rows drawn and not yet returned.
    out: String,
    /// Measures the terminal's width again, before each new line: a window
    /// resized while the answer streams gets rows that fit it.
    measure: Option<fn() -> usize>,
}

/// How a heading of `level` looks.
fn heading_look(level: usize) -> Look {
    Look {
        bold: true,
        underline: level == 1,
        fg: Some(Fg::Ansi(35)),
        ..Look::default()
    }
}

impl Markdown {
    /// A renderer drawing for `options`. With colour, the highlighter's
    /// syntaxes start loading on a thread of their own.
    #[must_use]
    pub fn new(options: MarkdownOptions) -> Self {
        if options.ink.color {
            std::thread::spawn(code::preload);
        }
        Self {
            options,
            partial: String::new(),
            containers: Vec::new(),
            fence: None,
            table: None,
            held: None,
            paragraph: false,
            flow: None,
            no_flow: false,
            out: String::new(),
            measure: None,
        }
    }

    /// Takes the width from `measure` before each line, instead of once.
    #[must_use]
    pub fn measured_by(self, measure: fn() -> usize) -> Self {
        Self {
            measure: Some(measure),
            ..self
        }
    }

    /// The next piece of the text: what it completes (rows, each ending
    /// in a newline, and the words of a paragraph's line drawn word by
    /// word); empty while nothing is.
    pub fn push(&mut self, text: &str) -> String {
        let mut text = text;
        loop {
            if let Some(measure) = self.measure
                && self.partial.is_empty()
                && self.flow.is_none()
                && !text.is_empty()
            {
                self.options.width = measure();
            }
            let end = text.find('\n');
            let piece = &text[..end.unwrap_or(text.len())];
            match &mut self.flow {
                Some(flow) => flow.push(piece, self.options.ink, &mut self.out),
                None => self.partial.push_str(piece),
            }
            let Some(end) = end else {
                if self.flow.is_none() && !self.partial.is_empty() {
                    self.try_flow();
                }
                break;
            };
            self.end_line();
            text = &text[end + 1..];
        }
        std::mem::take(&mut self.out)
    }

    /// The line being received is complete.
    fn end_line(&mut self) {
        self.no_flow = false;
        if let Some(flow) = self.flow.take() {
            flow.end(self.options.ink, &mut self.out);
            self.paragraph = true;
        } else {
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
        }
    }

    /// Starts drawing the line being received word by word, if what has
    /// arrived of it says it is a paragraph's: its first word is complete,
    /// and starts with a letter or digit (no other block starts so).
    fn try_flow(&mut self) {
        if self.no_flow || self.fence.is_some() || self.table.is_some() || self.held.is_some() {
            return;
        }
        let line = std::mem::take(&mut self.partial);
        let expanded = blocks::expand_indent(&line).into_owned();
        let (matched, rest) = self.continue_containers(&expanded);
        let saved = (self.containers.clone(), self.paragraph);
        let lazy = matched < self.containers.len() && self.paragraph && !blocks::starts_block(rest);
        let rest = if lazy {
            rest
        } else {
            self.open_containers(matched, rest)
        };
        let text = rest.trim_start();
        let decided = text.contains(' ');
        let flows = decided
            && text.starts_with(char::is_alphanumeric)
            && !rest.contains('|')
            && (self.paragraph || blocks::indent(rest) < 4);
        if !flows {
            (self.containers, self.paragraph) = saved;
            self.partial = line;
            self.no_flow = decided;
            return;
        }
        let (first, rest_prefix) = self.prefixes();
        let room = (!self.containers.is_empty()).then(|| self.room(&rest_prefix));
        paint_open(&first, self.options.ink, &mut self.out);
        let mut flow = Flow::new(rest_prefix, room);
        flow.push(text, self.options.ink, &mut self.out);
        self.flow = Some(flow);
        self.paragraph = true;
    }

    /// The text ends here, or is interrupted: the rows of what is left
    /// (the last line, a table, a held line), and every block closed.
    pub fn finish(&mut self) -> String {
        if self.flow.is_some() || !self.partial.is_empty() {
            self.end_line();
        }
        if let Some(held) = self.held.take() {
            self.paragraph_line(&held.text, &held.first, &held.rest);
        }
        self.draw_table();
        self.fence = None;
        self.containers.clear();
        self.paragraph = false;
        std::mem::take(&mut self.out)
    }

    /// One complete line, without its newline.
    fn line(&mut self, raw: &str) {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let expanded = blocks::expand_indent(raw);
        let (matched, rest) = self.continue_containers(&expanded);
        if let Some(fence) = &self.fence {
            if matched >= fence.depth {
                self.code_line(rest);
                return;
            }
            self.fence = None;
        }
        if self.table_row(matched, rest) {
            return;
        }
        if blocks::blank(rest) {
            self.containers.truncate(matched);
            self.paragraph = false;
            let mut prefix = String::new();
            for container in &self.containers {
                prefix.push_str(match container {
                    Container::Quote => "│ ",
                    Container::Item(item) => &item.marker,
                });
            }
            let bars: String = prefix
                .chars()
                .map(|c| if c == '│' { '│' } else { ' ' })
                .collect();
            let bars = bars.trim_end();
            paint(
                &[Span::new(bars, Look::DIM)],
                self.options.ink,
                &mut self.out,
            );
            return;
        }
        if matched < self.containers.len() && self.paragraph && !blocks::starts_block(rest) {
            // A lazy continuation of the paragraph: it stays where it was.
            let (first, rest_prefix) = self.prefixes();
            self.paragraph_line(rest.trim_start(), &first, &rest_prefix);
            return;
        }
        let rest = self.open_containers(matched, rest);
        self.leaf(rest);
    }

    /// Matches `line` against the open containers: how many it continues,
    /// and what is left of it. Inside a code fence, a list item's
    /// indentation is not required (a model's code under a list item is
    /// often indented less than the item).
    fn continue_containers<'l>(&self, line: &'l str) -> (usize, &'l str) {
        let fence_depth = self.fence.as_ref().map_or(0, |f| f.depth);
        let mut rest = line;
        let mut matched = 0;
        for (i, container) in self.containers.iter().enumerate() {
            match container {
                Container::Quote => match blocks::quote(rest) {
                    Some(after) => rest = after,
                    None => break,
                },
                Container::Item(item) => {
                    let spaces = blocks::indent(rest);
                    if blocks::blank(rest) {
                        rest = "";
                    } else if spaces >= item.content {
                        rest = &rest[item.content..];
                    } else if i < fence_depth {
                        rest = &rest[spaces..];
                    } else {
                        break;
                    }
                }
            }
            matched += 1;
        }
        (matched, rest)
    }

    /// Closes the containers past the first `matched`, and opens those
    /// `rest` starts; what is left of it. An item that follows one of the
    /// same list continues its numbering.
    fn open_containers<'l>(&mut self, matched: usize, mut rest: &'l str) -> &'l str {
        let closed = match self.containers.get(matched) {
            Some(Container::Item(item)) => Some((matched, item.kind, item.number)),
            _ => None,
        };
        if matched < self.containers.len() {
            self.containers.truncate(matched);
            self.paragraph = false;
        }
        loop {
            if let Some(after) = blocks::quote(rest) {
                self.containers.push(Container::Quote);
                self.paragraph = false;
                rest = after;
                continue;
            }
            if blocks::thematic_break(rest) {
                break;
            }
            let Some(marker) = blocks::marker(rest) else {
                break;
            };
            // Within a paragraph, only a list that starts at 1 and has
            // text starts a list (`2024. was a year` is text).
            let ordered_not_one = matches!(marker.kind, ListKind::Ordered(_)) && marker.number != 1;
            if self.paragraph && (marker.empty || ordered_not_one) {
                break;
            }
            let index = self.containers.len();
            let number = match closed {
                Some((at, kind, n)) if at == index && kind == marker.kind => n + 1,
                _ => marker.number,
            };
            // A bullet's shape says how deep it is among bullet lists (as
            // a browser draws them: a numbered list in between counts not).
            let level = self
                .containers
                .iter()
                .filter(|c| {
                    matches!(c, Container::Item(item) if matches!(item.kind, ListKind::Bullet(_)))
                })
                .count();
            let shown = match marker.kind {
                ListKind::Bullet(_) => ["• ", "◦ ", "▪ "][level.min(2)].to_owned(),
                ListKind::Ordered(delimiter) => format!("{number}{delimiter} "),
            };
            self.containers.push(Container::Item(Item {
                content: marker.content,
                marker: shown,
                drawn: false,
                kind: marker.kind,
                number,
            }));
            self.paragraph = false;
            rest = rest.get(marker.content..).unwrap_or("");
        }
        rest
    }

    /// A line in a code fence: code, or the closing fence.
    fn code_line(&mut self, rest: &str) {
        let Some(fence) = &mut self.fence else {
            return;
        };
        if blocks::fence_close(rest, fence.fence, fence.length) {
            self.fence = None;
            let fence_line = Span::new(rest.trim(), Look::DIM);
            self.draw_unwrapped(vec![fence_line]);
            return;
        }
        let cut = blocks::indent(rest).min(fence.indent);
        let spans = fence.code.line(&rest[cut..]);
        self.draw_unwrapped(spans);
    }

    /// Whether the line went to a table (a row, or the delimiter row that
    /// makes the line held before it a header). A table that ends is drawn;
    /// a held line that heads none is drawn as a paragraph's.
    fn table_row(&mut self, matched: usize, rest: &str) -> bool {
        let here = matched == self.containers.len();
        if let Some(open) = &mut self.table {
            if here && open.depth == matched && !blocks::blank(rest) && rest.contains('|') {
                let cells = self.cells(rest);
                if let Some(open) = &mut self.table {
                    open.table.push(cells);
                }
                return true;
            }
            self.draw_table();
        }
        let Some(held) = self.held.take() else {
            return false;
        };
        if here
            && held.depth == matched
            && let Some(aligns) = blocks::delimiter_row(rest)
        {
            let header = self.cells(&held.text);
            if header.len() == aligns.len() {
                self.table = Some(OpenTable {
                    depth: held.depth,
                    first: held.first,
                    rest: held.rest,
                    table: Table {
                        aligns,
                        header,
                        rows: Vec::new(),
                    },
                });
                self.paragraph = false;
                return true;
            }
        }
        self.paragraph_line(&held.text, &held.first, &held.rest);
        false
    }

    /// A table row's cells, inline-rendered.
    fn cells(&self, row: &str) -> Vec<Vec<Span>> {
        let ink = self.options.ink;
        blocks::cells(row)
            .iter()
            .map(|cell| inline::spans(cell, Look::default(), ink.color, ink.hyperlinks))
            .collect()
    }

    /// The leaf block `rest` holds, all its containers open.
    fn leaf(&mut self, rest: &str) {
        let was_paragraph = std::mem::take(&mut self.paragraph);
        let ink = self.options.ink;
        if blocks::blank(rest) {
            // An empty list item, or an empty quote line.
            self.draw(&[]);
        } else if let Some(open) = blocks::fence_open(rest) {
            self.draw_unwrapped(vec![Span::new(rest.trim(), Look::DIM)]);
            self.fence = Some(Fence {
                fence: open.fence,
                length: open.length,
                indent: open.indent,
                depth: self.containers.len(),
                code: Code::new(&open.language, ink.color),
            });
        } else if let Some((level, text)) = blocks::heading(rest) {
            let look = heading_look(level);
            let mut spans = vec![Span::new(format!("{} ", "#".repeat(level)), look)];
            spans.extend(inline::spans(text, look, ink.color, ink.hyperlinks));
            self.draw(&spans);
        } else if blocks::thematic_break(rest) {
            let (first, _) = self.prefixes();
            let room = self.room(&first);
            let rule = vec![Span::new("─".repeat(room), Look::DIM)];
            self.draw_rows(&first, &first, vec![rule]);
        } else if !was_paragraph && blocks::indent(rest) >= 4 {
            // Indented code, drawn as it is.
            let text = jp_term::printer::sanitize(rest).into_owned();
            self.draw_unwrapped(vec![Span::plain(text)]);
        } else if rest.contains('|') {
            let (first, rest_prefix) = self.prefixes();
            self.held = Some(Held {
                depth: self.containers.len(),
                text: rest.trim().to_owned(),
                first,
                rest: rest_prefix,
            });
            self.paragraph = true;
        } else {
            let (first, rest_prefix) = self.prefixes();
            self.paragraph_line(rest.trim_start(), &first, &rest_prefix);
        }
    }

    /// A paragraph's line, wrapped under `first` (its first row's prefix)
    /// and `rest` (the others').
    fn paragraph_line(&mut self, text: &str, first: &[Span], rest: &[Span]) {
        let ink = self.options.ink;
        let spans = inline::spans(text.trim_end(), Look::default(), ink.color, ink.hyperlinks);
        let rows = wrap(&spans, self.text_room(rest));
        self.draw_rows(first, rest, rows);
        self.paragraph = true;
    }

    /// The prefixes of the next line's first row and of the rows after it:
    /// the quote bars and list indents of the open containers, with the
    /// marker of an item not drawn yet on the first.
    fn prefixes(&mut self) -> (Vec<Span>, Vec<Span>) {
        let (mut first, mut rest) = (Vec::new(), Vec::new());
        for container in &mut self.containers {
            match container {
                Container::Quote => {
                    first.push(Span::new("│ ", Look::DIM));
                    rest.push(Span::new("│ ", Look::DIM));
                }
                Container::Item(item) => {
                    let pad = " ".repeat(width(&[Span::plain(item.marker.as_str())]));
                    if item.drawn {
                        first.push(Span::plain(pad.clone()));
                    } else {
                        first.push(Span::plain(item.marker.clone()));
                        item.drawn = true;
                    }
                    rest.push(Span::plain(pad));
                }
            }
        }
        (first, rest)
    }

    /// The columns a paragraph's rows have after `prefix`: at the top level
    /// all there are (the terminal wraps them, and a paragraph copies as
    /// one line); in a quote or a list, the room left by its bars and
    /// indents, so each row is under them.
    fn text_room(&self, prefix: &[Span]) -> usize {
        if self.containers.is_empty() {
            usize::MAX
        } else {
            self.room(prefix)
        }
    }

    /// The columns left for text after `prefix`.
    fn room(&self, prefix: &[Span]) -> usize {
        self.options.width.saturating_sub(width(prefix)).max(8)
    }

    /// `spans` wrapped as a paragraph's are, under the containers'
    /// prefixes.
    fn draw(&mut self, spans: &[Span]) {
        let (first, rest) = self.prefixes();
        let rows = wrap(spans, self.text_room(&rest));
        self.draw_rows(&first, &rest, rows);
    }

    /// `spans` on one line, not wrapped (code: the terminal wraps it, and
    /// it copies as one line), under the containers' prefixes.
    fn draw_unwrapped(&mut self, spans: Vec<Span>) {
        let (first, _) = self.prefixes();
        self.draw_rows(&first, &first, vec![spans]);
    }

    fn draw_rows(&mut self, first: &[Span], rest: &[Span], rows: Vec<Vec<Span>>) {
        for (i, row) in rows.into_iter().enumerate() {
            let mut spans = if i == 0 {
                first.to_vec()
            } else {
                rest.to_vec()
            };
            spans.extend(row);
            paint(&spans, self.options.ink, &mut self.out);
        }
    }

    /// Draws the table being received, if any.
    fn draw_table(&mut self) {
        if let Some(open) = self.table.take() {
            let lines = open.table.lines(self.room(&open.rest));
            self.draw_rows(&open.first, &open.rest, lines);
        }
    }
}

impl jp_term::printer::ContentFormat for Markdown {
    fn push(&mut self, text: &str) -> String {
        Markdown::push(self, text)
    }

    fn finish(&mut self) -> String {
        Markdown::finish(self)
    }
}

/// Whether the terminal that `var` (an environment lookup) describes
/// draws OSC 8 hyperlinks. `FORCE_HYPERLINK` decides when set (`0` no,
/// anything else yes); otherwise only terminals known to draw them do:
/// iTerm2, WezTerm, VS Code, Ghostty, kitty, foot, Windows Terminal, and
/// VTE-based ones (GNOME Terminal, Tilix) from VTE 0.50. Inside tmux or
/// screen, which pass them on only when configured to, none.
#[must_use]
pub fn hyperlinks_supported(var: impl Fn(&str) -> Option<String>) -> bool {
    if let Some(force) = var("FORCE_HYPERLINK") {
        return force != "0";
    }
    if var("TMUX").is_some() || var("STY").is_some() {
        return false;
    }
    let program = var("TERM_PROGRAM").unwrap_or_default();
    let term = var("TERM").unwrap_or_default();
    matches!(
        program.as_str(),
        "iTerm.app" | "WezTerm" | "vscode" | "ghostty"
    ) || matches!(
        term.as_str(),
        "xterm-kitty" | "foot" | "foot-extra" | "xterm-ghostty"
    ) || var("KITTY_WINDOW_ID").is_some()
        || var("WT_SESSION").is_some()
        || var("VTE_VERSION")
            .and_then(|v| v.parse::<u32>().ok())
            .is_some_and(|v| v >= 5000)
}

/// Whether the terminal that `var` describes takes 24-bit colour
/// (`COLORTERM=truecolor` or `24bit`).
#[must_use]
pub fn truecolor(var: impl Fn(&str) -> Option<String>) -> bool {
    var("COLORTERM").is_some_and(|v| v == "truecolor" || v == "24bit")
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
