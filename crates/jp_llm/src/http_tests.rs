//! Tests of the retry policy, error-body parsing and error messages of the
//! shared streaming POST (the HTTP exchanges themselves are tested in
//! `tests/providers.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};

use super::*;

#[test]
fn backoff_doubles_up_to_the_maximum() {
    let policy = RetryPolicy::default();
    let waits: Vec<Duration> = (1..=7).map(|attempt| policy.backoff(attempt)).collect();
    let secs = |s| Duration::from_secs(s);
    assert_eq!(
        waits,
        vec![
            secs(1),
            secs(2),
            secs(4),
            secs(8),
            secs(16),
            secs(30),
            secs(30)
        ]
    );
    assert_eq!(policy.backoff(u32::MAX), secs(30));
}

#[test]
fn retry_after_is_seconds_capped_at_a_minute() {
    let parse = |value: &str| {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_str(value).unwrap());
        retry_after(&headers)
    };
    assert_eq!(parse("0"), Some(Duration::ZERO));
    assert_eq!(parse(" 7 "), Some(Duration::from_secs(7)));
    assert_eq!(parse("1.5"), Some(Duration::from_millis(1500)));
    assert_eq!(parse("3600"), Some(Duration::from_secs(60)));
    assert_eq!(parse("-1"), None);
    assert_eq!(parse("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    assert_eq!(retry_after(&HeaderMap::new()), None);
}

#[test]
fn delays_read_naturally() {
    assert_eq!(format_delay(Duration::ZERO), "0s");
    assert_eq!(format_delay(Duration::from_secs(2)), "2s");
    assert_eq!(format_delay(Duration::from_millis(1500)), "1.5s");
    assert_eq!(format_delay(Duration::from_millis(250)), "250ms");
}

#[test]
fn error_bodies_of_each_provider() {
    let anthropic =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    assert_eq!(
        ErrorBody::parse(anthropic),
        ErrorBody {
            kind: Some("overloaded_error".into()),
            message: Some("Overloaded".into()),
        }
    );
    let openai = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#;
    assert_eq!(
        ErrorBody::parse(openai),
        ErrorBody {
            kind: Some("invalid_request_error".into()),
            message: Some("Incorrect API key provided".into()),
        }
    );
    assert_eq!(
        ErrorBody::parse(r#"{"error":"model \"x\" not found, try pulling it first"}"#),
        ErrorBody {
            kind: None,
            message: Some("model \"x\" not found, try pulling it first".into()),
        }
    );
    assert_eq!(
        ErrorBody::parse("<html>Bad Gateway</html>"),
        ErrorBody::default()
    );
}

#[test]
fn retry_reasons() {
    let none = ErrorBody::default();
    let overloaded = ErrorBody {
        kind: Some("overloaded_error".into()),
        message: None,
    };
    assert_eq!(
        retry_reason(429, &none).as_deref(),
        Some("rate limited (HTTP 429)")
    );
    assert_eq!(
        retry_reason(503, &none).as_deref(),
        Some("unavailable (HTTP 503)")
    );
    assert_eq!(
        retry_reason(529, &none).as_deref(),
        Some("overloaded (HTTP 529)")
    );
    assert_eq!(
        retry_reason(500, &overloaded).as_deref(),
        Some("overloaded (HTTP 500)")
    );
    assert_eq!(retry_reason(500, &none), None);
    assert_eq!(retry_reason(400, &none), None);
}

#[test]
fn error_messages_fall_back_to_the_body_then_the_status() {
    let status = StatusCode::BAD_GATEWAY;
    assert_eq!(
        error_message(
            status,
            "{}",
            ErrorBody {
                kind: None,
                message: Some("upstream failed".into()),
            }
        ),
        "upstream failed"
    );
    assert_eq!(
        error_message(status, "  <html>Bad Gateway</html>\n", ErrorBody::default()),
        "<html>Bad Gateway</html>"
    );
    let long = "x".repeat(600);
    assert_eq!(
        error_message(status, &long, ErrorBody::default()),
        format!("{}…", "x".repeat(500))
    );
    assert_eq!(
        error_message(status, "", ErrorBody::default()),
        "Bad Gateway"
    );
}

#[test]
fn secret_headers_are_redacted_in_debug_output() {
    assert_eq!(
        format!("{:?}", Header::secret("x-api-key", "sk-123")),
        "x-api-key: <redacted>"
    );
    assert_eq!(
        format!("{:?}", Header::plain("anthropic-version", "2023-06-01")),
        "anthropic-version: 2023-06-01"
    );
}
