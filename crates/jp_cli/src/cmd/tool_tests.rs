#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn the_outcome_keeps_escape_sequences_as_json_escapes() {
    let text = "a\u{1b}]0;pwned\u{7}b\u{9b}31m\u{202e}c\u{7f}d\u{200b}e\u{e0041}";
    let line = outcome_text(&jp_tool::Outcome::success(text)).unwrap();
    assert_eq!(
        line,
        "{\"type\":\"success\",\"content\":\"a\\u001b]0;pwned\\u0007b\\u009b31m\\u202ec\\u007fd\\u200be\\udb40\\udc41\"}\n"
    );
    // jp reads back exactly what the tool said.
    match jp_tool::parse_outcome(&line).unwrap() {
        jp_tool::Outcome::Success { content, .. } => assert_eq!(content, text),
        other => panic!("{other:?}"),
    }
}
