//! A [`Line`] to print, and [`wrap`], which fits lines to a terminal's
//! width: what the renderer, the long-string blocks and the full arguments
//! all produce.

use jp_term::printer::{Style, char_columns, columns, expand_tabs};

/// A line to print, without its newline; its text is safe for a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// How it is styled.
    pub style: Style,
    /// The text.
    pub text: String,
}

/// Wraps lines wider than `width` terminal columns (at least 8): a line is
/// cut into pieces that fit, and each continuation starts with the line's
/// indent (its leading spaces), unless the indent takes more than half the
/// width. Widths are the terminal's ([`columns`]): a tab is first drawn as
/// spaces ([`expand_tabs`]), a wide character that does not fit at the end
/// of a row starts the next one, and a zero-width character stays with the
/// one before it. Nothing is dropped: the pieces, indents aside, join back
/// into the line, its tabs as spaces.
#[must_use]
pub fn wrap(lines: Vec<Line>, width: usize) -> Vec<Line> {
    wrap_with(lines, width, false)
}

/// [`wrap`], but rows end after a space: one that would end inside a word
/// or just before a space ends after the last space in it instead (the
/// space stays at the row's end, so the pieces still join back into the
/// line). For what is read as prose: a tool's result, jp's notes, a diff.
/// A word longer than a row is cut as [`wrap`] cuts it.
#[must_use]
pub fn wrap_words(lines: Vec<Line>, width: usize) -> Vec<Line> {
    wrap_with(lines, width, true)
}

fn wrap_with(lines: Vec<Line>, width: usize, words: bool) -> Vec<Line> {
    let width = width.max(8);
    let mut out = Vec::with_capacity(lines.len());
    for mut line in lines {
        if let std::borrow::Cow::Owned(text) = expand_tabs(&line.text) {
            line.text = text;
        }
        if columns(&line.text) <= width {
            out.push(line);
            continue;
        }
        let spaces = line.text.len() - line.text.trim_start_matches(' ').len();
        let indent = if spaces * 2 > width {
            ""
        } else {
            &line.text[..spaces]
        };
        let room = width - indent.len();
        let mut rest = line.text.as_str();
        let mut first = true;
        while !rest.is_empty() {
            let limit = if first { width } else { room };
            let (mut end, mut used) = (0, 0);
            for (at, c) in rest.char_indices() {
                let w = char_columns(c);
                if used + w > limit && end > 0 {
                    break;
                }
                used += w;
                end = at + c.len_utf8();
            }
            if words
                && end < rest.len()
                && !rest[..end].ends_with(' ')
                && let Some(space) = rest[..end].rfind(' ')
                && !rest[..space].trim_start_matches(' ').is_empty()
            {
                end = space + 1;
            }
            let piece = &rest[..end];
            out.push(Line {
                style: line.style,
                text: if first {
                    piece.to_owned()
                } else {
                    format!("{indent}{piece}")
                },
            });
            rest = &rest[end..];
            first = false;
        }
    }
    out
}
