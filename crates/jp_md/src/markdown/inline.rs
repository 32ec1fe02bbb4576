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
use jp_term::printer::{expand_tabs, sanitize};

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
/// followed by ` (URL)` unless `hyperlinks` draws it as one (colour on, an
/// `http`, `https` or `mailto` address, and text that does not pass for
/// another address) or the text is the address. Every text is escaped.
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
                            let target = end_link(&mut out, &link, current, color && hyperlinks);
                            out.extend(target);
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

/// A link's text is complete. It is drawn as a hyperlink when the
/// terminal draws them and the address may be one ([`hyperlink_safe`]),
/// unless its text looks like an address other than the target (`[https://
/// bank.example](https://evil.example)`): then, as without hyperlinks, the
/// text is plain and the target follows it, unless the text says it
/// already.
fn end_link(out: &mut [Span], link: &OpenLink, look: Look, hyperlinks: bool) -> Vec<Span> {
    if link.url.is_empty() {
        return Vec::new();
    }
    let text: String = out[link.start..].iter().map(|s| s.text.as_str()).collect();
    let says_it = same_address(&text, &link.url);
    if hyperlinks && hyperlink_safe(&link.url) && (says_it || !looks_like_address(&text)) {
        return Vec::new();
    }
    for span in &mut out[link.start..] {
        span.link = None;
    }
    if says_it {
        return Vec::new();
    }
    let url = expand_tabs(&sanitize(&link.url)).into_owned();
    vec![
        Span::new(" (", look),
        Span::new(url, look.with(Look::DIM)),
        Span::new(")", look),
    ]
}

/// Whether a link's `text` (as drawn) names the address `url` itself: the
/// same, or the same without its `mailto:`, `http://` or `https://` and a
/// final `/`.
fn same_address(text: &str, url: &str) -> bool {
    fn bare(address: &str) -> &str {
        let address = address.trim();
        let lower = address.to_ascii_lowercase();
        let scheme = ["mailto:", "https://", "http://"]
            .iter()
            .find(|scheme| lower.starts_with(*scheme))
            .map_or(0, |scheme| scheme.len());
        let rest = &address[scheme..];
        rest.strip_suffix('/').unwrap_or(rest)
    }
    text == url || bare(text) == bare(url)
}

/// Whether a link's `text` looks like an address, so that it could pass
/// for its target: a word of it has a scheme (`://`, `mailto:`), starts
/// with `www.`, is an e-mail address, or is a host name (dot-separated
/// labels, the last of letters: `bank.example`, `pаypal.com/login`).
fn looks_like_address(text: &str) -> bool {
    text.split_whitespace().any(|word| {
        let word = word.trim_matches(|c: char| {
            matches!(
                c,
                '.' | ',' | ';' | ':' | '!' | '?' | '(' | ')' | '<' | '>' | '"' | '\''
            )
        });
        let lower = word.to_lowercase();
        if lower.contains("://") || lower.starts_with("mailto:") || lower.starts_with("www.") {
            return true;
        }
        let host = word
            .rsplit_once('@')
            .map_or(word, |(_, domain)| domain)
            .split(['/', ':', '?', '#'])
            .next()
            .unwrap_or("");
        let labels: Vec<&str> = host.split('.').collect();
        labels.len() >= 2
            && labels
                .iter()
                .all(|l| !l.is_empty() && l.chars().all(|c| c.is_alphanumeric() || c == '-'))
            && labels
                .last()
                .is_some_and(|tld| tld.chars().count() >= 2 && tld.chars().all(char::is_alphabetic))
    })
}
