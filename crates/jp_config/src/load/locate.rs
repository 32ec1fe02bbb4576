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
    let doc = toml_edit::Document::parse(text).ok()?;
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
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn seg(path: &str) -> Vec<String> {
        path.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn finds_keys_tables_and_array_elements() {
        let text = "\
[assistant.model]
id = \"x\"

[conversation.tools.fs.policy]
run = [
    { mode = \"ask\" },
    { arg = \"/path\", prefx = \"src/\", mode = \"ask\" },
]
";
        assert_eq!(locate_key(text, &seg("assistant.model.id")), Some(2));
        assert_eq!(
            locate_key(text, &seg("conversation.tools.fs.policy.run")),
            Some(5)
        );
        assert_eq!(
            locate_key(text, &seg("conversation.tools.fs.policy.run.1")),
            Some(7)
        );
        assert_eq!(
            locate_key(text, &seg("conversation.tools.fs.policy.run.1.prefx")),
            Some(7)
        );
        // The deepest existing part: `assistant.model` exists, `temperature` does not.
        assert_eq!(
            locate_key(text, &seg("assistant.model.temperature")),
            Some(1)
        );
        assert_eq!(locate_key(text, &seg("style")), None);
    }
}
