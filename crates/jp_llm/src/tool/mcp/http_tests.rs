#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn a_message_never_carries_the_url() {
    assert_eq!(
        without_url("error sending request for url (https://h.example/mcp?token=s3cret)"),
        "error sending request"
    );
    assert_eq!(
        without_url("error decoding response body for url (http://localhost/mcp): eof"),
        "error decoding response body: eof"
    );
    assert_eq!(without_url("HTTP 500"), "HTTP 500");
}

#[test]
fn a_header_value_is_sensitive_and_never_quoted() {
    let (name, value) =
        header_pair("X-Api-Key", "s3cret".to_owned()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(name.as_str(), "x-api-key");
    assert!(value.is_sensitive());
    assert_eq!(format!("{value:?}"), "Sensitive");
    assert_eq!(
        header_pair("X-Api-Key", "a\nb".to_owned()).err(),
        Some("the value of `X-Api-Key` has characters a header cannot carry".to_owned())
    );
}

#[tokio::test]
async fn a_transport_error_names_the_cause_and_not_the_url() {
    let client = client(Duration::from_secs(5), true).unwrap();
    // Nothing listens on port 1; the URL has a `)` and a secret.
    let error = client
        .get("http://127.0.0.1:1/a)b?token=s3cret")
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        describe(&error),
        "error sending request: client error (Connect): tcp connect error: Connection refused (os error 111)"
    );
}

/// https:// goes through rustls with ring (no other provider is built
/// in): a server that speaks no TLS fails the handshake, told as such.
#[tokio::test]
async fn https_is_rustls_and_a_failed_handshake_is_told() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt as _;
        let (mut stream, _) = listener.accept().await.unwrap();
        let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
    });
    let client = client(Duration::from_secs(5), false).unwrap();
    let error = client
        .get(format!("https://127.0.0.1:{port}/mcp"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        describe(&error),
        "error sending request: client error (Connect): received corrupt message of type InvalidContentType"
    );
    server.await.unwrap();
}
