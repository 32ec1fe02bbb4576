//! What one line of markdown starts, by CommonMark's (and GitHub's table)
//! rules: a block quote marker, a list item's marker, a code fence, an ATX
//! heading, a thematic break, a table's delimiter row. Pure functions of
//! the line, the text left once the open containers took their part.

use std::borrow::Cow;

/// The columns of indentation that make a line indented code, or too deep
/// for a marker.
const CODE_INDENT: usize = 4;

/// Leading spaces.
#[must_use]
pub fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Whether the line holds nothing but spaces.
#[must_use]
pub fn blank(line: &str) -> bool {
    line.trim_matches(' ').is_empty()
}

/// `line` with the tabs of its indentation as spaces, to the next multiple
/// of four columns (as CommonMark counts them).
#[must_use]
pub fn expand_indent(line: &str) -> Cow<'_, str> {
    let lead = line.len() - line.trim_start_matches([' ', '\t']).len();
    if !line[..lead].contains('\t') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 8);
    for c in line[..lead].chars() {
        if c == '\t' {
            let to = (out.len() / 4 + 1) * 4;
            out.push_str(&" ".repeat(to - out.len()));
        } else {
            out.push(c);
        }
    }
    out.push_str(&line[lead..]);
    Cow::Owned(out)
}

/// The rest of a block quote line (`> text` gives `text`).
#[must_use]
pub fn quote(line: &str) -> Option<&str> {
    let spaces = indent(line);
    if spaces >= CODE_INDENT {
        return None;
    }
    let rest = line[spaces..].strip_prefix('>')?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// The kind of a list, which its items share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `-`, `+` or `*`.
    Bullet(char),
    /// A number followed by `.` or `)`.
    Ordered(char),
}

/// A list item's marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// Its list's kind.
    pub kind: ListKind,
    /// The number of an ordered item.
    pub number: u64,
    /// Where the item's content starts, in columns from the line's start.
    pub content: usize,
    /// Whether nothing follows the marker.
    pub empty: bool,
}

/// The list item marker that starts `line`, if one does.
#[must_use]
pub fn marker(line: &str) -> Option<Marker> {
    let spaces = indent(line);
    if spaces >= CODE_INDENT {
        return None;
    }
    let rest = &line[spaces..];
    let (kind, number, width) = match rest.chars().next()? {
        c @ ('-' | '+' | '*') => (ListKind::Bullet(c), 0, 1),
        '0'..='9' => {
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let delimiter = rest[digits..].chars().next()?;
            if digits > 9 || !matches!(delimiter, '.' | ')') {
                return None;
            }
            let number = rest[..digits].parse().ok()?;
            (ListKind::Ordered(delimiter), number, digits + 1)
        }
        _ => return None,
    };
    let after = &rest[width..];
    if !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    let gap = indent(after);
    let empty = blank(after);
    let gap = if empty || gap > CODE_INDENT { 1 } else { gap };
    Some(Marker {
        kind,
        number,
        content: spaces + width + gap,
        empty,
    })
}

/// An opening code fence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FenceOpen {
    /// `` ` `` or `~`.
    pub fence: char,
    /// How many.
    pub length: usize,
    /// Its indentation, which the code lines lose.
    pub indent: usize,
    /// The info string's first word: the language.
    pub language: String,
}

/// The code fence that `line` opens, if it does.
#[must_use]
pub fn fence_open(line: &str) -> Option<FenceOpen> {
    let spaces = indent(line);
    if spaces >= CODE_INDENT {
        return None;
    }
    let rest = &line[spaces..];
    let fence = rest.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let length = rest.len() - rest.trim_start_matches(fence).len();
    if length < 3 {
        return None;
    }
    let info = rest[length..].trim();
    if fence == '`' && info.contains('`') {
        return None;
    }
    Some(FenceOpen {
        fence,
        length,
        indent: spaces,
        language: info.split_whitespace().next().unwrap_or("").to_owned(),
    })
}

/// Whether `line` closes a fence of `length` `fence`s: as many or more,
/// and nothing else but spaces. Its indentation is not held against it
/// (a model's fence under a list item is often indented less than the
/// item's text).
#[must_use]
pub fn fence_close(line: &str, fence: char, length: usize) -> bool {
    let rest = line.trim_matches(' ');
    rest.len() >= length && rest.chars().all(|c| c == fence)
}

/// An ATX heading: its level and its text.
#[must_use]
pub fn heading(line: &str) -> Option<(usize, &str)> {
    let spaces = indent(line);
    if spaces >= CODE_INDENT {
        return None;
    }
    let rest = &line[spaces..];
    let level = rest.len() - rest.trim_start_matches('#').len();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let text = after.trim();
    // A closing sequence of `#`s, after a space, is not text.
    let stripped = text.trim_end_matches('#');
    let text = if stripped.is_empty() {
        ""
    } else if stripped.ends_with([' ', '\t']) {
        stripped.trim_end()
    } else {
        text
    };
    Some((level, text))
}

/// Whether `line` is a thematic break (`---`, `***`, `___`).
#[must_use]
pub fn thematic_break(line: &str) -> bool {
    if indent(line) >= CODE_INDENT {
        return false;
    }
    let rest = line.trim();
    let Some(first) = rest.chars().next().filter(|c| matches!(c, '-' | '*' | '_')) else {
        return false;
    };
    rest.chars().all(|c| c == first || c == ' ' || c == '\t')
        && rest.chars().filter(|&c| c == first).count() >= 3
}

/// How a table column is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Left (also when the delimiter row does not say).
    Left,
    /// Centred.
    Center,
    /// Right.
    Right,
}

/// The cells of a table row: split at each `|` that is not escaped or in
/// a code span, the outer pipes dropped, each cell trimmed.
#[must_use]
pub fn cells(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = line.trim().chars().peekable();
    let mut ticks = 0;
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                cell.push('|');
            }
            '`' => {
                let mut run = 1;
                while chars.peek() == Some(&'`') {
                    chars.next();
                    run += 1;
                }
                ticks = if ticks == 0 {
                    run
                } else if ticks == run {
                    0
                } else {
                    ticks
                };
                cell.push_str(&"`".repeat(run));
            }
            '|' if ticks == 0 => cells.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    cells.push(cell);
    let trimmed = line.trim();
    if trimmed.starts_with('|') && cells.len() > 1 {
        cells.remove(0);
    }
    if trimmed.ends_with('|') && !trimmed.ends_with("\\|") && cells.len() > 1 {
        cells.pop();
    }
    cells.into_iter().map(|c| c.trim().to_owned()).collect()
}

/// The alignments of a table's delimiter row (`| --- | :-: | --: |`), if
/// `line` is one.
#[must_use]
pub fn delimiter_row(line: &str) -> Option<Vec<Align>> {
    if !line.contains('-') || indent(line) >= CODE_INDENT {
        return None;
    }
    let trimmed = line.trim();
    if !trimmed.contains('|') && !trimmed.starts_with(':') {
        // `---` alone is a thematic break, not a one-column table.
        return None;
    }
    cells(line)
        .iter()
        .map(|cell| {
            let left = cell.starts_with(':');
            let right = cell.ends_with(':');
            let dashes = cell.trim_start_matches(':').trim_end_matches(':');
            if dashes.is_empty() || !dashes.chars().all(|c| c == '-') {
                return None;
            }
            Some(match (left, right) {
                (true, true) => Align::Center,
                (false, true) => Align::Right,
                _ => Align::Left,
            })
        })
        .collect()
}

/// Whether `line` starts a block other than a paragraph: then it is no
/// lazy continuation of the paragraph before it.
#[must_use]
pub fn starts_block(line: &str) -> bool {
    blank(line)
        || quote(line).is_some()
        || marker(line).is_some()
        || fence_open(line).is_some()
        || heading(line).is_some()
        || thematic_break(line)
}
