//! How much room text takes on a terminal: columns, rows, and text cut
//! or laid out to fit.

/// How many columns a tab takes in what jp draws on a terminal: it draws a
/// tab as that many spaces, so that it knows where each row ends.
pub const TAB_COLUMNS: usize = 4;

/// How many terminal columns `c` takes once drawn: two for a wide (East
/// Asian) character, none for a combining mark or another zero-width
/// character, `TAB_COLUMNS` (4) for a tab.
#[must_use]
pub fn char_columns(c: char) -> usize {
    if c == '\t' {
        TAB_COLUMNS
    } else {
        unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
    }
}

/// How many terminal columns `text` takes (see [`char_columns`]).
#[must_use]
pub fn columns(text: &str) -> usize {
    text.chars().map(char_columns).sum()
}

/// How many rows `text` (one line as written to a terminal, no newline)
/// takes on a terminal `width` columns wide, starting at its first column:
/// the terminal wraps it where it is full, a wide character that does not
/// fit at the end of a row starts the next one, and a tab moves to the
/// next multiple of 8 (never past the last column). Escape sequences
/// (jp's own colours and hyperlinks) take no room. At least one.
#[must_use]
pub fn rows_drawn(text: &str, width: usize) -> usize {
    let width = width.max(1);
    let (mut rows, mut column) = (1, 0);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => skip_escape(&mut chars),
            '\t' => {
                if column < width {
                    column = ((column / 8 + 1) * 8).min(width - 1);
                }
            }
            c => {
                let w = char_columns(c);
                if w == 0 {
                    continue;
                }
                // `column == width`: the row is full, and the cursor waits
                // at its end until something is drawn.
                if column + w > width {
                    rows += 1;
                    column = 0;
                }
                column += w;
            }
        }
    }
    rows
}

/// Skips the rest of an escape sequence: CSI (`ESC [` up to a final byte),
/// OSC (`ESC ]` up to BEL or `ESC \`), or one character after `ESC`.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\x40'..='\x7e').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == '\x07' {
                    break;
                }
                if c == '\x1b' {
                    chars.next_if_eq(&'\\');
                    break;
                }
            }
        }
        _ => {}
    }
}

/// `text` with each tab drawn as `TAB_COLUMNS` (4) spaces.
#[must_use]
pub fn expand_tabs(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\t') {
        std::borrow::Cow::Owned(text.replace('\t', &" ".repeat(TAB_COLUMNS)))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// `text` cut to at most `max` terminal columns, with `…` when cut.
#[must_use]
pub fn cut_columns(text: &str, max: usize) -> String {
    if columns(text) <= max {
        return text.to_owned();
    }
    let room = max.saturating_sub(1);
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_columns(c);
        if used + w > room {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// `text` cut to `max` characters, with `…` when cut.
#[must_use]
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}
