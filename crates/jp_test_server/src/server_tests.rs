use super::*;

#[test]
fn response_head_drops_framing_headers_and_adds_its_own() {
    let reply = Reply::sse("x")
        .header("Content-Length", "1")
        .header("x-request-id", "r1")
        .header("Connection", "keep-alive");
    assert_eq!(
        String::from_utf8_lossy(&response_head(&reply)),
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-request-id: r1\r\n\
         transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&response_head(&Reply::status(599, "a/b", ""))),
        "HTTP/1.1 599 \r\ncontent-type: a/b\r\ntransfer-encoding: chunked\r\n\
         connection: close\r\n\r\n"
    );
}

#[test]
fn chunk_frames_with_hex_length() {
    assert_eq!(chunk(b"hello"), b"5\r\nhello\r\n".to_vec());
    assert_eq!(chunk(&[b'a'; 26]).get(..4), Some(&b"1a\r\n"[..]));
}
