#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn an_excerpt_is_a_short_escaped_prefix() {
    let long = "\u{e9}".repeat(130);
    assert_eq!(excerpt(&long), format!("`{}`…", "\u{e9}".repeat(60)));
    assert_eq!(excerpt("short"), "`short`");
    assert_eq!(
        excerpt("{\"a\":1}\u{1b}]0;title\u{7}\u{202e}\\\n"),
        r#"`{"a":1}\u{1b}]0;title\u{7}\u{202e}\\\n`"#
    );
    assert_eq!(excerpt(""), "``");
}
