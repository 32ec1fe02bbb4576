//! Tests of the retry policy and its jitter, the holding back of events
//! before content, error-body parsing and error messages of the shared
//! streaming POST (the HTTP exchanges themselves are tested in
//! `tests/providers.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use jp_conversation::EventPart;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};

use super::*;
use crate::provider::Usage;

/// Every wait `with_jitter` gives `delay` over many entropies, including
/// nanosecond counts of a clock with microsecond resolution.
fn jittered(delay: Duration) -> BTreeSet<Duration> {
    (0..5000u64)
        .chain((0..5000).map(|micros| micros * 1000))
        .map(|entropy| with_jitter(delay, entropy))
        .collect()
}

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
fn jitter_adds_up_to_a_fifth_rounded_to_what_the_notice_shows() {
    let ms = Duration::from_millis;
    // Tenths of a second above a second, 0 to 20% (exclusive) extra.
    let one_second = jittered(Duration::from_secs(1));
    assert_eq!(one_second, BTreeSet::from([ms(1000), ms(1100)]));
    let thirty = jittered(Duration::from_secs(30));
    assert_eq!(thirty.first(), Some(&ms(30_000)));
    assert_eq!(thirty.last(), Some(&ms(35_900)));
    assert_eq!(thirty.len(), 60, "every tenth from 30.0 s to 35.9 s");
    assert!(thirty.iter().all(|wait| wait.subsec_millis() % 100 == 0));
    // Whole milliseconds below a second.
    let quarter = jittered(ms(250));
    assert_eq!(quarter.first(), Some(&ms(250)));
    assert_eq!(quarter.last(), Some(&ms(299)));
    assert_eq!(quarter.len(), 50);
    // The retry-after-free waits of the HTTP tests stay exact.
    for short in [Duration::ZERO, ms(1), ms(2), ms(3), ms(4), ms(5)] {
        assert_eq!(jittered(short), BTreeSet::from([short]), "{short:?}");
    }
    // Rounding never shortens the computed wait.
    assert_eq!(
        jittered(Duration::from_micros(1500)),
        BTreeSet::from([Duration::from_micros(1500)])
    );
    // No overflow at the extremes.
    assert_eq!(with_jitter(Duration::MAX, u64::MAX), Duration::MAX);
}

#[test]
fn jitter_is_a_function_of_the_entropy() {
    let policy = RetryPolicy::default();
    for entropy in [0, 1, 999_999_999, u64::MAX] {
        assert_eq!(
            policy.jittered_backoff(3, entropy),
            policy.jittered_backoff(3, entropy)
        );
        let wait = policy.jittered_backoff(3, entropy);
        assert!(
            (Duration::from_secs(4)..Duration::from_millis(4800)).contains(&wait),
            "{wait:?}"
        );
    }
}

fn usage() -> StreamEvent {
    StreamEvent::Usage(Usage {
        input_tokens: Some(7),
        output_tokens: Some(1),
        cache_read_tokens: None,
        cache_write_tokens: None,
    })
}

fn text(text: &str) -> StreamEvent {
    StreamEvent::Part {
        index: 0,
        part: EventPart::Message(text.into()),
    }
}

fn api(kind: &str) -> ProviderError {
    ProviderError::Api {
        provider: "anthropic".into(),
        kind: kind.into(),
        message: "m".into(),
    }
}

#[test]
fn holdback_keeps_events_until_content_then_passes_everything() {
    let mut holdback = Holdback::default();
    assert_eq!(holdback.accept(usage()), vec![]);
    assert_eq!(holdback.accept(StreamEvent::Notice("n".into())), vec![]);
    assert_eq!(
        holdback.accept(text("Hi")),
        vec![usage(), StreamEvent::Notice("n".into()), text("Hi")]
    );
    assert_eq!(holdback.accept(usage()), vec![usage()]);
    assert_eq!(holdback.release(), vec![]);

    for content in [
        StreamEvent::Flush { index: 0 },
        StreamEvent::Finished(crate::provider::FinishReason::EndTurn),
    ] {
        let mut holdback = Holdback::default();
        assert_eq!(holdback.accept(usage()), vec![]);
        assert_eq!(holdback.accept(content.clone()), vec![usage(), content]);
    }

    let mut holdback = Holdback::default();
    assert_eq!(holdback.accept(usage()), vec![]);
    assert_eq!(holdback.release(), vec![usage()]);
    assert_eq!(holdback.release(), vec![]);
}

#[test]
fn only_overload_and_rate_limit_events_before_content_are_retried() {
    let holdback = Holdback::default();
    assert_eq!(
        holdback.retry_reason(&api("overloaded_error")).as_deref(),
        Some("overloaded (overloaded_error)")
    );
    assert_eq!(
        holdback.retry_reason(&api("rate_limit_error")).as_deref(),
        Some("rate limited (rate_limit_error)")
    );
    assert_eq!(holdback.retry_reason(&api("api_error")), None);
    assert_eq!(
        holdback.retry_reason(&ProviderError::Disconnected {
            provider: "anthropic".into(),
            message: "gone".into(),
        }),
        None
    );
    let mut started = Holdback::default();
    let _ = started.accept(text("Hi"));
    assert_eq!(started.retry_reason(&api("overloaded_error")), None);
    assert_eq!(started.retry_reason(&api("rate_limit_error")), None);
}

#[test]
fn a_chunk_keeps_the_events_before_an_error_in_it() {
    let body = b"event: message_start\n\
                 data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":7,\"output_tokens\":1}}}\n\n\
                 event: error\n\
                 data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"m\"}}\n\n";
    let mut decoder = crate::provider::anthropic::Decoder::new();
    let mut events = Vec::new();
    let step = decode_chunk(
        &mut decoder,
        Ok(Some(Bytes::from_static(body))),
        &mut events,
    );
    assert_eq!(
        (events, step),
        (vec![usage()], Step::Failed(api("overloaded_error")))
    );

    // The body ends after the first event.
    let cut = body.windows(12).position(|w| w == b"event: error").unwrap();
    let mut decoder = crate::provider::anthropic::Decoder::new();
    let mut events = Vec::new();
    assert_eq!(
        decode_chunk(
            &mut decoder,
            Ok(Some(Bytes::copy_from_slice(&body[..cut]))),
            &mut events
        ),
        Step::More
    );
    assert_eq!(
        decode_chunk(&mut decoder, Ok(None), &mut events),
        Step::Failed(ProviderError::Disconnected {
            provider: "anthropic".into(),
            message: "the response ended before its `message_stop` event".into(),
        })
    );
    assert_eq!(events, vec![usage()]);
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

/// reqwest is built without a crypto provider and panics building a client
/// when none is installed: the shared client installs ring first, and an
/// HTTPS request starts a real TLS handshake with it (the first bytes on
/// the wire are a TLS handshake record), ending in a clear error when the
/// other side is not a TLS server.
#[tokio::test]
async fn https_goes_through_rustls_with_ring() {
    use tokio::io::AsyncReadExt as _;
    let client = client().expect("the client builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut first = [0_u8; 3];
        socket.read_exact(&mut first).await.unwrap();
        // Closing without an answer fails the handshake.
        first
    });
    let error = client
        .get(format!("https://127.0.0.1:{port}/"))
        .send()
        .await
        .expect_err("no TLS server answers");
    // A handshake record (22) of TLS 1.x (3, 1 in a ClientHello record).
    assert_eq!(server.await.unwrap(), [22, 3, 1]);
    assert!(error.is_connect(), "{error:?}");
}
