#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// Read one request from `bytes`, delivered in pieces of `step` bytes.
async fn read(bytes: &[u8], step: usize) -> Result<(RequestHead, Vec<u8>), ReadError> {
    let (mut tx, rx) = tokio::io::duplex(64);
    let bytes = bytes.to_vec();
    let writer = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        for piece in bytes.chunks(step) {
            if tx.write_all(piece).await.is_err() {
                break;
            }
        }
    });
    let mut input = Input::new(rx);
    let result = async {
        let head = input.read_head().await?;
        let body = input.read_body(&head).await?;
        Ok((head, body))
    }
    .await;
    drop(input);
    writer.await.unwrap();
    result
}

#[tokio::test]
async fn content_length_body_and_lowercased_headers() {
    let raw = b"POST /v1/messages?beta=true HTTP/1.1\r\nHost: x\r\nContent-Type:  application/json \r\nContent-Length: 7\r\n\r\n{\"a\":1}";
    for step in [1, 3, raw.len()] {
        let (head, body) = read(raw, step).await.unwrap();
        assert_eq!(
            head,
            RequestHead {
                method: "POST".to_owned(),
                target: "/v1/messages?beta=true".to_owned(),
                headers: vec![
                    ("host".to_owned(), "x".to_owned()),
                    ("content-type".to_owned(), "application/json".to_owned()),
                    ("content-length".to_owned(), "7".to_owned()),
                ],
            }
        );
        assert_eq!(body, b"{\"a\":1}".to_vec());
    }
}

#[tokio::test]
async fn chunked_body_with_extensions_and_trailers() {
    let raw = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\nB\r\npedia in \r\n\r\n0\r\nX-Trailer: y\r\n\r\n";
    for step in [1, 5, raw.len()] {
        let (_, body) = read(raw, step).await.unwrap();
        assert_eq!(body, b"Wikipedia in \r\n".to_vec());
    }
}

#[tokio::test]
async fn no_length_means_no_body() {
    let (head, body) = read(b"GET /health HTTP/1.1\r\n\r\n", 4).await.unwrap();
    assert_eq!(head.method, "GET");
    assert_eq!(head.target, "/health");
    assert_eq!(body, Vec::<u8>::new());
}

#[tokio::test]
async fn closing_before_any_byte_is_idle_and_part_way_is_truncated() {
    assert!(matches!(read(b"", 1).await, Err(ReadError::Idle)));
    match read(b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab", 2).await {
        Err(ReadError::Truncated(msg)) => assert_eq!(
            msg,
            "the client closed the connection after 2 of 5 body bytes"
        ),
        other => panic!("unexpected {other:?}"),
    }
    match read(b"POST / HTTP/1.1\r\nHost", 2).await {
        Err(ReadError::Truncated(msg)) => assert_eq!(
            msg,
            "the client closed the connection in the middle of the request head"
        ),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn malformed_requests_say_what_is_wrong() {
    let cases: [(&[u8], &str); 4] = [
        (b"HELLO\r\n\r\n", "malformed request line \"HELLO\""),
        (
            b"POST / HTTP/1.1\r\nno colon here\r\n\r\n",
            "malformed header line \"no colon here\"",
        ),
        (
            b"POST / HTTP/1.1\r\nContent-Length: lots\r\n\r\n",
            "content-length \"lots\" is not a byte count",
        ),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "chunk size \"zz\" is not hexadecimal",
        ),
    ];
    for (raw, expected) in cases {
        match read(raw, 3).await {
            Err(ReadError::Malformed(msg)) => assert_eq!(msg, expected),
            other => panic!("unexpected {other:?} for {expected}"),
        }
    }
}
