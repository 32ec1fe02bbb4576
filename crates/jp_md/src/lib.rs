//! The assistant's markdown drawn on a terminal as it streams: headings,
//! emphasis, lists, quotes, links, tables and highlighted code, wrapped to
//! the terminal's width ([`Markdown`], a [`jp_term::printer::ContentFormat`]
//! that the printer draws the assistant's text through).
//!
//! It must not depend on any jp crate but `jp_term`, whose escaping
//! ([`jp_term::printer::sanitize`]) and column widths every line it draws
//! goes through. What the markdown setting says, and whether stdout is a
//! terminal, is for its caller to decide.

mod markdown;

pub use markdown::{Ink, Markdown, MarkdownOptions, hyperlinks_supported, truecolor};
