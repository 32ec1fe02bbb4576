//! Finding where a key is written in a TOML file, for error messages.

use toml_edit::{Item, Value};

/// The 1-based line of a byte offset in `text`.
#[must_use]
pub fn line_of_offset(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The 1-based line where the deepest existing part of `segments` is
/// written in `text` (a key, or an array element for numeric segments).
/// `None` when the text does not parse or not even the first segment is in
/// it.
#[must_use]
pub fn locate_key(text: &str, segments: &[String]) -> Option<usize> {
    type Parsed = Option<std::sync::Arc<toml_edit::Document<String>>>;
    static PARSED: super::memo::Memo<Parsed> = super::memo::Memo::new(8, 256 * 1024);
    let doc = PARSED.get_or(text, || {
        toml_edit::Document::parse(text.to_owned())
            .ok()
            .map(std::sync::Arc::new)
    })?;
    let mut node = Node::Item(doc.as_item());
    let mut span = None;
    for segment in segments {
        let Some((next, next_span)) = node.child(segment) else {
            break;
        };
        span = next_span.or(span);
        node = next;
    }
    span.map(|s| line_of_offset(text, s.start))
}

#[derive(Clone, Copy)]
enum Node<'a> {
    Item(&'a Item),
    Table(&'a toml_edit::Table),
    Value(&'a Value),
}

type Span = std::ops::Range<usize>;

impl<'a> Node<'a> {
    fn child(self, segment: &str) -> Option<(Node<'a>, Option<Span>)> {
        match self {
            Node::Item(Item::Value(value)) => Node::Value(value).child(segment),
            Node::Item(Item::ArrayOfTables(tables)) => {
                let table = tables.get(segment.parse().ok()?)?;
                Some((Node::Table(table), table.span()))
            }
            Node::Table(table) => {
                let (key, next) = table.get_key_value(segment)?;
                Some((Node::Item(next), key.span().or_else(|| next.span())))
            }
            Node::Item(item) => {
                let (key, next) = item.as_table_like()?.get_key_value(segment)?;
                Some((Node::Item(next), key.span().or_else(|| next.span())))
            }
            Node::Value(Value::Array(array)) => {
                let value = array.get(segment.parse().ok()?)?;
                Some((Node::Value(value), value.span()))
            }
            Node::Value(Value::InlineTable(table)) => {
                let (key, next) = table.get_key_value(segment)?;
                Some((Node::Item(next), key.span().or_else(|| next.span())))
            }
            Node::Value(_) => None,
        }
    }
}

#[cfg(test)]
#[path = "locate_tests.rs"]
mod tests;
