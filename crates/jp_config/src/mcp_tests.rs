#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn https_anywhere_and_http_only_on_this_machine() {
    for ok in [
        "https://mcp.example.com/mcp",
        "https://10.0.0.1:8443/",
        "http://localhost:3000/mcp",
        "http://LOCALHOST/mcp",
        "http://127.0.0.1:9/mcp",
        "http://127.1.2.3/",
        "http://[::1]:8080/mcp",
    ] {
        assert_eq!(check_url(ok), Ok(()), "{ok}");
    }
    assert_eq!(
        check_url("http://mcp.example.com/mcp"),
        Err("`http://mcp.example.com/mcp` would send the MCP session and its headers unencrypted; use `https://`, or `http://` only for a server on this machine (localhost, 127.0.0.1 or [::1])".to_owned())
    );
    for refused in [
        "http://10.0.0.1/mcp",
        "http://localhost.example.com/",
        "http://[::2]/",
        "http://0.0.0.0:80/",
    ] {
        assert!(
            check_url(refused).unwrap_err().contains("unencrypted"),
            "{refused}"
        );
    }
    assert_eq!(
        check_url("ftp://example.com/mcp"),
        Err("`ftp://example.com/mcp` is no HTTP URL (scheme `ftp`); an MCP server is reached over `https://` (`http://` on localhost), or run with `command`".to_owned())
    );
    assert_eq!(
        check_url("mcp.example.com/mcp"),
        Err("`mcp.example.com/mcp` is not a URL (relative URL without a base)".to_owned())
    );
}

#[test]
fn credentials_in_the_url_are_refused_without_quoting_them() {
    for url in [
        "https://me:s3cret@mcp.example.com/mcp",
        "https://token@mcp.example.com/mcp",
    ] {
        let refused = check_url(url).unwrap_err();
        assert_eq!(
            refused,
            "the URL carries a user name or password; give credentials in `bearer_token_env` or `headers_env`, which keep them out of the config and out of messages"
        );
    }
}

#[test]
fn header_names_are_tokens_and_not_ones_jp_sets() {
    assert_eq!(check_header_name("X-Api-Key"), Ok(()));
    assert_eq!(check_header_name("authorization"), Ok(()));
    assert_eq!(
        check_header_name("Mcp-Session-Id"),
        Err("jp sets the header `Mcp-Session-Id` itself on every MCP request".to_owned())
    );
    assert_eq!(
        check_header_name("X Key"),
        Err("`X Key` is no HTTP header name".to_owned())
    );
    assert_eq!(
        check_header_name(""),
        Err("`` is no HTTP header name".to_owned())
    );
    assert!(header_value_ok("Bearer abc\tdef"));
    assert!(!header_value_ok("abc\r\nX-Evil: 1"));
}
