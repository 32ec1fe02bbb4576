//! Fenced code, highlighted line by line with `syntect`: the parse state
//! carries from one line to the next, so each line's colours are final as
//! soon as the line is complete and it is drawn then, not when the fence
//! closes.
//!
//! The syntaxes and the theme are those bundled with syntect, loaded once,
//! on the first highlighted block. Text in the theme's own foreground is
//! left in the terminal's, so plain code reads on a light background as
//! on a dark one; only the tokens the theme colours are coloured.

use std::sync::OnceLock;

use syntect::easy::HighlightLines;
use syntect::highlighting::{Color, FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

use super::paint::{Fg, Look, Span};
use jp_term::printer::sanitize;

/// The theme whose colours code is drawn in.
const THEME: &str = "base16-ocean.dark";

fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn theme() -> &'static Theme {
    static THEME_: OnceLock<Theme> = OnceLock::new();
    THEME_.get_or_init(|| {
        let mut themes = ThemeSet::load_defaults().themes;
        themes.remove(THEME).unwrap_or_default()
    })
}

/// Loads the syntaxes and the theme, so the first code block does not wait
/// for them (tens of milliseconds): called on a thread of its own when a
/// coloured renderer is made, while the model has yet to answer.
pub fn preload() {
    syntaxes();
    theme();
}

/// One fenced block's highlighter.
pub struct Code {
    /// None: not highlighted (colour off, or a language syntect does not
    /// know).
    lines: Option<HighlightLines<'static>>,
    /// The theme's foreground: text in it is left unstyled.
    foreground: Option<Color>,
}

impl Code {
    /// A block in `language` (the fence's info string's first word), to be
    /// highlighted when `color` is on.
    #[must_use]
    pub fn new(language: &str, color: bool) -> Self {
        if !color || language.is_empty() {
            return Self {
                lines: None,
                foreground: None,
            };
        }
        let syntaxes = syntaxes();
        let Some(syntax) = syntaxes
            .find_syntax_by_token(language)
            .or_else(|| syntaxes.find_syntax_by_name(language))
        else {
            return Self {
                lines: None,
                foreground: None,
            };
        };
        let theme = theme();
        Self {
            lines: Some(HighlightLines::new(syntax, theme)),
            foreground: theme.settings.foreground,
        }
    }

    /// One line of code (without its newline) as spans, escaped; tabs are
    /// kept, so the code can be copied as it is.
    pub fn line(&mut self, line: &str) -> Vec<Span> {
        let Some(lines) = &mut self.lines else {
            return vec![Span::plain(sanitize(line).into_owned())];
        };
        let with_newline = format!("{line}\n");
        let Ok(regions) = lines.highlight_line(&with_newline, syntaxes()) else {
            // A syntax that fails on this text: the rest is plain.
            self.lines = None;
            return vec![Span::plain(sanitize(line).into_owned())];
        };
        regions
            .into_iter()
            .filter_map(|(style, text)| {
                let text = text.strip_suffix('\n').unwrap_or(text);
                if text.is_empty() {
                    return None;
                }
                let colour = style.foreground;
                let fg = (Some(colour) != self.foreground)
                    .then_some(Fg::Rgb(colour.r, colour.g, colour.b));
                let look = Look {
                    bold: style.font_style.contains(FontStyle::BOLD),
                    italic: style.font_style.contains(FontStyle::ITALIC),
                    underline: style.font_style.contains(FontStyle::UNDERLINE),
                    fg,
                    ..Look::default()
                };
                Some(Span::new(sanitize(text).into_owned(), look))
            })
            .collect()
    }
}
