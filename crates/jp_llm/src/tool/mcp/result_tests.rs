#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

#[test]
fn text_is_the_result_and_other_content_a_placeholder() {
    let result = json!({
        "content": [
            { "type": "text", "text": "two files changed" },
            { "type": "image", "mimeType": "image/png", "data": "aGVsbG8=" },
            { "type": "resource", "resource": { "uri": "file:///a.txt", "mimeType": "text/plain", "text": "abc" } },
            { "type": "resource_link", "uri": "file:///b.txt", "name": "b" }
        ]
    });
    assert_eq!(
        outcome("git", "git_status", &result, &ToolLimits::default()),
        Outcome::success(
            "two files changed\n[image: image/png, 5 bytes]\n[resource: file:///a.txt, text/plain, 3 bytes]\n[resource link: file:///b.txt]"
        )
    );
}

#[test]
fn is_error_is_an_error_result() {
    let result =
        json!({ "content": [{ "type": "text", "text": "no such branch" }], "isError": true });
    assert_eq!(
        outcome("git", "git_checkout", &result, &ToolLimits::default()),
        Outcome::error("no such branch")
    );
    assert_eq!(
        outcome(
            "git",
            "git_checkout",
            &json!({ "isError": true }),
            &ToolLimits::default()
        ),
        Outcome::error("MCP server `git`'s tool `git_checkout` failed without saying why")
    );
}

#[test]
fn structured_content_is_compact_json_when_there_is_no_content() {
    let result = json!({ "content": [], "structuredContent": { "a": 1, "b": [true] } });
    assert_eq!(
        outcome("s", "t", &result, &ToolLimits::default()),
        Outcome::success(r#"{"a":1,"b":[true]}"#)
    );
}

#[test]
fn a_result_over_the_limit_is_an_error_naming_the_server() {
    let result = json!({ "content": [{ "type": "text", "text": "x".repeat(11) }] });
    let limits = ToolLimits {
        max_output_bytes: 10,
        max_output_key: Some("conversation.tools.big_dump.max_output_bytes".into()),
        ..ToolLimits::default()
    };
    assert_eq!(
        outcome("big", "dump", &result, &limits),
        Outcome::error(
            "MCP server `big` answered the call to `dump` with a result of 11 bytes, more than the 10 this tool may return (conversation.tools.big_dump.max_output_bytes)"
        )
    );
}
