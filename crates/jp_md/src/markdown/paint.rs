//! Styled text for the terminal: a [`Span`] is text with a [`Look`] (and a
//! link); [`wrap`] fits spans to a width at word boundaries, and [`paint`]
//! writes them with the escape sequences that style them, or with none
//! when colour is off.
//!
//! The text of a span is escaped ([`jp_term::printer::sanitize`]) when the
//! span is made ([`Span::new`]), whatever part of the markdown it comes
//! from (a fence's info string once reached the terminal raw, issue 34):
//! the only escape sequences on screen are the ones [`paint`] adds.

use std::sync::Arc;

use jp_term::printer::{char_columns, sanitize};

/// A foreground colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fg {
    /// One of the terminal's own colours (`31` red to `37` white).
    Ansi(u8),
    /// A colour of a highlighting theme.
    Rgb(u8, u8, u8),
}

/// How a span looks when colour is on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Look {
    /// Bold.
    pub bold: bool,
    /// Dim (fence lines, rules, table borders, quote bars).
    pub dim: bool,
    /// Italic.
    pub italic: bool,
    /// Underlined.
    pub underline: bool,
    /// Struck through.
    pub strike: bool,
    /// The colour, if not the terminal's own.
    pub fg: Option<Fg>,
}

impl Look {
    /// Dim text.
    pub const DIM: Self = Self {
        bold: false,
        dim: true,
        italic: false,
        underline: false,
        strike: false,
        fg: None,
    };

    /// `self` with what `other` adds (its colour wins).
    #[must_use]
    pub fn with(self, other: Self) -> Self {
        Self {
            bold: self.bold || other.bold,
            dim: self.dim || other.dim,
            italic: self.italic || other.italic,
            underline: self.underline || other.underline,
            strike: self.strike || other.strike,
            fg: other.fg.or(self.fg),
        }
    }

    /// The SGR parameters, `;`-separated; empty for the plain look.
    fn codes(self, truecolor: bool) -> String {
        let mut codes: Vec<String> = Vec::new();
        for (on, code) in [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.strike, "9"),
        ] {
            if on {
                codes.push(code.to_owned());
            }
        }
        match self.fg {
            Some(Fg::Ansi(code)) => codes.push(code.to_string()),
            Some(Fg::Rgb(r, g, b)) if truecolor => codes.push(format!("38;2;{r};{g};{b}")),
            Some(Fg::Rgb(r, g, b)) => codes.push(format!("38;5;{}", xterm_256(r, g, b))),
            None => {}
        }
        codes.join(";")
    }
}

/// The nearest colour of the xterm 256-colour palette's 6×6×6 cube or
/// grey ramp, for terminals without 24-bit colour.
fn xterm_256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let level = |v: u8| {
        (0..6)
            .min_by_key(|&i| (i32::from(LEVELS[i]) - i32::from(v)).abs())
            .unwrap_or(0)
    };
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let cube = 16 + 36 * ri + 6 * gi + bi;
    let distance = |(x, y, z): (u8, u8, u8)| {
        let d = |p: u8, q: u8| (i32::from(p) - i32::from(q)).pow(2);
        d(x, r) + d(y, g) + d(z, b)
    };
    let cube_distance = distance((LEVELS[ri], LEVELS[gi], LEVELS[bi]));
    let average = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let step = (average.saturating_sub(8) / 10).min(23);
    let grey = u8::try_from(8 + 10 * step).unwrap_or(238);
    if distance((grey, grey, grey)) < cube_distance {
        u8::try_from(232 + step).unwrap_or(255)
    } else {
        u8::try_from(cube).unwrap_or(15)
    }
}

/// Text with a look, and the address it links to (drawn as an OSC 8
/// hyperlink where the terminal has them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The text, escaped, without newlines. Made by [`Span::new`], or of
    /// the characters of spans it made.
    pub text: String,
    /// Its look.
    pub look: Look,
    /// The link's address: printable ASCII only (see [`hyperlink_safe`]).
    pub link: Option<Arc<str>>,
}

impl Span {
    /// `text` in `look`, escaped ([`sanitize`]: escaping escaped text
    /// changes nothing, so a caller that escaped it already loses
    /// nothing).
    pub fn new(text: impl Into<String>, look: Look) -> Self {
        let text = text.into();
        let text = match sanitize(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(escaped) => escaped,
        };
        Self {
            text,
            look,
            link: None,
        }
    }

    /// `text` unstyled.
    pub fn plain(text: impl Into<String>) -> Self {
        Self::new(text, Look::default())
    }
}

/// Whether `url` may become an OSC 8 hyperlink: an `http`, `https` or
/// `mailto` address (a click on anything else could open a local file or
/// run a program's handler), of printable ASCII with no space, so nothing
/// in it can end the sequence or start another.
#[must_use]
pub fn hyperlink_safe(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let Some(scheme) = ["http://", "https://", "mailto:"]
        .iter()
        .find(|scheme| lower.starts_with(**scheme))
    else {
        return false;
    };
    url.len() > scheme.len() && url.bytes().all(|b| (0x21..0x7f).contains(&b))
}

/// How `paint` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ink {
    /// Whether to style at all (otherwise: the text alone).
    pub color: bool,
    /// 24-bit colour (`COLORTERM=truecolor`); else the 256-colour palette.
    pub truecolor: bool,
    /// OSC 8 hyperlinks.
    pub hyperlinks: bool,
}

/// `spans` as one terminal row, styled per `ink`, ending in a newline
/// (trailing spaces dropped).
pub fn paint(spans: &[Span], ink: Ink, out: &mut String) {
    let mut row = String::new();
    paint_open(spans, ink, &mut row);
    out.push_str(row.trim_end_matches(' '));
    out.push('\n');
}

/// `spans` styled per `ink`, with no newline: the start of a row that
/// goes on.
pub fn paint_open(spans: &[Span], ink: Ink, out: &mut String) {
    // Neighbours that look alike share their sequences.
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if last.look == span.look && last.link == span.link => {
                last.text.push_str(&span.text);
            }
            _ => merged.push(span.clone()),
        }
    }
    for span in &merged {
        if !ink.color || span.text.is_empty() {
            out.push_str(&span.text);
            continue;
        }
        let link = span.link.as_deref().filter(|_| ink.hyperlinks);
        if let Some(url) = link {
            out.push_str(&format!("\x1b]8;;{url}\x1b\\"));
        }
        let codes = span.look.codes(ink.truecolor);
        if codes.is_empty() {
            out.push_str(&span.text);
        } else {
            out.push_str(&format!("\x1b[{codes}m{}\x1b[0m", span.text));
        }
        if link.is_some() {
            out.push_str("\x1b]8;;\x1b\\");
        }
    }
}

/// How many terminal columns `spans` take.
#[must_use]
pub fn width(spans: &[Span]) -> usize {
    spans
        .iter()
        .map(|s| s.text.chars().map(char_columns).sum::<usize>())
        .sum()
}

/// A word or the spaces between words, in pieces of one look each.
struct Token {
    space: bool,
    pieces: Vec<Span>,
    width: usize,
}

/// `spans` cut into words and spaces.
fn tokens(spans: &[Span]) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    for span in spans {
        for c in span.text.chars() {
            let space = c == ' ';
            let w = char_columns(c);
            let same = out.last().is_some_and(|t| t.space == space);
            if !same {
                out.push(Token {
                    space,
                    pieces: Vec::new(),
                    width: 0,
                });
            }
            let Some(token) = out.last_mut() else {
                continue;
            };
            token.width += w;
            match token.pieces.last_mut() {
                Some(piece) if piece.look == span.look && piece.link == span.link => {
                    piece.text.push(c);
                }
                _ => token.pieces.push(Span {
                    text: c.to_string(),
                    look: span.look,
                    link: span.link.clone(),
                }),
            }
        }
    }
    out
}

/// `spans` as rows at most `room` columns wide (at least 1), broken
/// between words; a word wider than a row is cut where the row ends.
/// Spaces where a row breaks are dropped, and so are leading ones.
#[must_use]
pub fn wrap(spans: &[Span], room: usize) -> Vec<Vec<Span>> {
    wrap_from(spans, room, 0)
}

/// [`wrap`] on a row of which `start` columns are used already: the first
/// row returned goes on after them (it may be empty: the row is full).
#[must_use]
pub fn wrap_from(spans: &[Span], room: usize, start: usize) -> Vec<Vec<Span>> {
    let room = room.max(1);
    let mut rows: Vec<Vec<Span>> = Vec::new();
    let mut row: Vec<Span> = Vec::new();
    let mut used = start;
    let mut space: Option<Token> = None;
    for token in tokens(spans) {
        if token.space {
            if used > 0 {
                space = Some(token);
            }
            continue;
        }
        let gap = space.as_ref().map_or(0, |s| s.width);
        if used + gap + token.width <= room {
            if let Some(space) = space.take() {
                row.extend(space.pieces);
            }
            used += gap + token.width;
            row.extend(token.pieces);
            continue;
        }
        space = None;
        if used > 0 {
            rows.push(std::mem::take(&mut row));
            used = 0;
        }
        if token.width <= room {
            used = token.width;
            row.extend(token.pieces);
            continue;
        }
        // A word wider than a row: cut it.
        for piece in token.pieces {
            for c in piece.text.chars() {
                let w = char_columns(c);
                if used + w > room && used > 0 {
                    rows.push(std::mem::take(&mut row));
                    used = 0;
                }
                used += w;
                match row.last_mut() {
                    Some(last) if last.look == piece.look && last.link == piece.link => {
                        last.text.push(c);
                    }
                    _ => row.push(Span {
                        text: c.to_string(),
                        look: piece.look,
                        link: piece.link.clone(),
                    }),
                }
            }
        }
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows
}
