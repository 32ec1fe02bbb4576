//! How attachments sit in a user message: a block each, before what the
//! user wrote,
//!
//! ```text
//! <attachment source="src/lib.rs">
//! ...the file's text...
//! </attachment>
//! ```
//!
//! separated by a blank line. The source is a JSON string, so a quote or a
//! line break in a path cannot end it. What the conversation records of
//! each is [`Attached`](crate::Attached).

/// The block of an attachment from `source` holding `text`.
#[must_use]
pub fn block(source: &str, text: &str) -> String {
    let text = text.strip_suffix('\n').unwrap_or(text);
    format!(
        "<attachment source={}>\n{text}\n</attachment>",
        serde_json::Value::String(source.to_owned())
    )
}

/// The message sent: each of `blocks`, then `message`.
#[must_use]
pub fn compose(blocks: &[String], message: &str) -> String {
    if blocks.is_empty() {
        return message.to_owned();
    }
    let mut parts = blocks.to_vec();
    parts.push(message.to_owned());
    parts.join("\n\n")
}

/// What the user wrote in a message `content`: the text after its
/// attachment blocks (all of it when there are none).
#[must_use]
pub fn written(content: &str) -> &str {
    let mut rest = content;
    while rest.starts_with("<attachment source=") {
        let Some(end) = rest.find("\n</attachment>\n\n") else {
            break;
        };
        rest = &rest[end + "\n</attachment>\n\n".len()..];
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_written_part_follows_the_blocks() {
        let blocks = [
            block("src/a \"b\".rs", "fn a() {}\n"),
            block("cmd:git diff", "no output"),
        ];
        let content = compose(&blocks, "why?\nthanks");
        assert_eq!(
            content,
            "<attachment source=\"src/a \\\"b\\\".rs\">\nfn a() {}\n</attachment>\n\n\
             <attachment source=\"cmd:git diff\">\nno output\n</attachment>\n\nwhy?\nthanks"
        );
        assert_eq!(written(&content), "why?\nthanks");
        assert_eq!(written("plain"), "plain");
        assert_eq!(compose(&[], "plain"), "plain");
    }
}
