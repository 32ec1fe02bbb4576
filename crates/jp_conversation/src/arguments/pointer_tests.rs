use super::*;

#[test]
fn escapes_tilde_and_slash_in_keys() {
    let mut pointer = JsonPointer::root();
    pointer.push_key("a/b");
    pointer.push_index(3);
    pointer.push_key("~x");
    assert_eq!(pointer.as_str(), "/a~1b/3/~0x");
    assert_eq!(pointer.to_string(), "/a~1b/3/~0x");
    assert_eq!(JsonPointer::root().to_string(), "(root)");
    let mut hostile = JsonPointer::root();
    hostile.push_key("\u{1b}[31mred\u{7}");
    assert_eq!(hostile.to_string(), "/\\u{001b}[31mred\\u{0007}");
}
