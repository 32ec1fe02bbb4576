//! The inline markdown of one line (emphasis, strong, strikethrough, code
//! spans, links, images) as [`Span`]s, by CommonMark's rules through
//! `pulldown-cmark`.
//!
//! Only the line's own text is parsed, never a block: the block structure
//! is the renderer's ([`super::Markdown`]), decided line by line as the
//! text streams. The line is handed to the parser behind a no-break space,
//! which starts no block (a `#` or `1.` after it is text) and counts as
//! whitespace for emphasis (so `_a_` at the start still opens), and is
//! taken off again.

use std::sync::Arc;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::paint::{Fg, Look, Span, hyperlink_safe};
use crate::printer::{expand_tabs, sanitize};

/// What a code span looks like.
pub const CODE: Look = Look {
    bold: false,
    dim: false,
    italic: false,
    underline: false,
    strike: false,
    fg: Some(Fg::Ansi(36)),
};

/// What a link's text looks like.
const LINK: Look = Look {
    bold: false,
    dim: false,
    italic: false,
    underline: true,
    strike: false,
    fg: Some(Fg::Ansi(34)),
};

/// A link being read: its address, and where its text starts in the
/// spans.
struct OpenLink {
    url: String,
    start: usize,
}

/// The spans of `line` (one line of text, without its newline), each in
/// `base` plus its own look. With `color`, emphasis, strong, strikethrough
/// and code are drawn by their looks; without, by their markers (`*a*`,
/// `**a**`, `~~a~~`, `` `a` ``), so they still show. A link is its text,
/// followed by ` (URL)` unless `hyperlinks` draws it as one (colour on, the
/// address safe for it) or the text is the address. Every text is
/// escaped.
#[must_use]
pub fn spans(line: &str, base: Look, color: bool, hyperlinks: bool) -> Vec<Span> {
    let source = format!("\u{a0}{line}");
    let options = Options::ENABLE_STRIKETHROUGH;
    let mut out: Vec<Span> = Vec::new();
    let mut look = vec![base];
    let mut links: Vec<OpenLink> = Vec::new();
    let push = |out: &mut Vec<Span>, text: &str, look: Look, link: Option<&OpenLink>| {
        let text = expand_tabs(&sanitize(text)).into_owned();
        let mut span = Span::new(text, look);
        if let Some(link) = link
            && color
            && hyperlinks
            && hyperlink_safe(&link.url)
        {
            span.link = Some(Arc::from(link.url.as_str()));
        }
        out.push(span);
    };
    for event in Parser::new_ext(&source, options) {
        let current = look.last().copied().unwrap_or(base);
        match event {
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                push(&mut out, &text, current, links.last());
            }
            Event::Code(code) => {
                if color {
                    push(&mut out, &code, current.with(CODE), links.last());
                } else {
                    let ticks = if code.contains('`') { "``" } else { "`" };
                    let pad = if code.contains('`') { " " } else { "" };
                    let text = format!("{ticks}{pad}{code}{pad}{ticks}");
                    push(&mut out, &text, current, links.last());
                }
            }
            Event::FootnoteReference(name) => {
                push(&mut out, &format!("[^{name}]"), current, links.last());
            }
            Event::SoftBreak | Event::HardBreak => push(&mut out, " ", current, links.last()),
            Event::Start(tag) => {
                let (marker, added) = match &tag {
                    Tag::Emphasis => (
                        "*",
                        Look {
                            italic: true,
                            ..Look::default()
                        },
                    ),
                    Tag::Strong => (
                        "**",
                        Look {
                            bold: true,
                            ..Look::default()
                        },
                    ),
                    Tag::Strikethrough => (
                        "~~",
                        Look {
                            strike: true,
                            ..Look::default()
                        },
                    ),
                    Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                        links.push(OpenLink {
                            url: dest_url.to_string(),
                            start: out.len(),
                        });
                        ("", if color { LINK } else { Look::default() })
                    }
                    _ => ("", Look::default()),
                };
                if !color && !marker.is_empty() {
                    push(&mut out, marker, current, links.last());
                }
                look.push(current.with(added));
            }
            Event::End(tag) => {
                look.pop();
                let current = look.last().copied().unwrap_or(base);
                match tag {
                    TagEnd::Emphasis if !color => push(&mut out, "*", current, links.last()),
                    TagEnd::Strong if !color => push(&mut out, "**", current, links.last()),
                    TagEnd::Strikethrough if !color => {
                        push(&mut out, "~~", current, links.last());
                    }
                    TagEnd::Link | TagEnd::Image => {
                        if let Some(link) = links.pop() {
                            end_link(&mut out, &link, current, color && hyperlinks);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    // The no-break space the line was given.
    if let Some(first) = out.first_mut()
        && first.text.starts_with('\u{a0}')
    {
        first.text.remove(0);
    }
    out.retain(|s| !s.text.is_empty());
    out
}

/// A link's text is complete: unless it is drawn as a hyperlink, or says
/// its address already, the address follows it.
fn end_link(out: &mut Vec<Span>, link: &OpenLink, look: Look, hyperlinks: bool) {
    if link.url.is_empty() || (hyperlinks && hyperlink_safe(&link.url)) {
        return;
    }
    let text: String = out[link.start..].iter().map(|s| s.text.as_str()).collect();
    let shown = link.url.strip_prefix("mailto:").unwrap_or(&link.url);
    if text == shown || text == link.url {
        return;
    }
    let url = expand_tabs(&sanitize(&link.url)).into_owned();
    out.push(Span::new(" (", look));
    out.push(Span::new(url, look.with(Look::DIM)));
    out.push(Span::new(")", look));
}
