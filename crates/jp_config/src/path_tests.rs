#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn parses_and_displays_quoted_segments() {
    let path = ConfigPath::parse("conversation.tools.'my.tool'.command").unwrap();
    assert_eq!(
        path.segments(),
        ["conversation", "tools", "my.tool", "command"]
    );
    assert_eq!(path.to_string(), "conversation.tools.'my.tool'.command");
    let star = ConfigPath::parse("conversation.tools.\"*\".policy.run").unwrap();
    assert_eq!(star.to_string(), "conversation.tools.'*'.policy.run");
}

#[test]
fn rejects_malformed_keys() {
    for (input, reason) in [
        ("", "the key is empty"),
        ("a..b", "a segment is empty"),
        ("a.", "the key ends with `.`"),
        ("a.'b", "a quote is not closed"),
        (
            "a.'b'c",
            "a quoted segment must be followed by `.` or the end",
        ),
    ] {
        assert_eq!(
            ConfigPath::parse(input).unwrap_err().to_string(),
            format!("invalid config key `{input}`: {reason}")
        );
    }
}

#[test]
fn prefix_is_per_segment() {
    let model = ConfigPath::parse("assistant.model").unwrap();
    assert!(
        ConfigPath::parse("assistant.model.id")
            .unwrap()
            .starts_with(&model)
    );
    assert!(
        !ConfigPath::parse("assistant.models")
            .unwrap()
            .starts_with(&model)
    );
}
