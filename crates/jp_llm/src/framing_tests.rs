#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn excerpt_cuts_at_a_character_boundary() {
    let long = "\u{e9}".repeat(130);
    assert_eq!(excerpt(&long), format!("{}…", "\u{e9}".repeat(120)));
    assert_eq!(excerpt("short"), "short");
}
