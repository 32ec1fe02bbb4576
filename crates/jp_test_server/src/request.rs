//! Reading one HTTP/1.1 request (head and body) off a connection.

use tokio::io::{AsyncRead, AsyncReadExt};

/// Longest request head (request line and headers) the server accepts.
pub(crate) const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Largest request body the server accepts.
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// The request line and headers of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestHead {
    pub(crate) method: String,
    /// The request target as sent: path and query.
    pub(crate) target: String,
    /// Header names lowercased, values trimmed, in arrival order.
    pub(crate) headers: Vec<(String, String)>,
}

impl RequestHead {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the client waits for `100 Continue` before sending the body.
    pub(crate) fn expects_continue(&self) -> bool {
        self.header("expect")
            .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    }
}

/// Why a request could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The connection closed before the first byte of a request: not an error.
    Idle,
    /// The connection closed or failed part-way through the request.
    Truncated(String),
    /// The bytes are not an HTTP/1.1 request this server understands; answered with `400`.
    Malformed(String),
}

/// A buffered reader over the client half of a connection.
pub(crate) struct Input<R> {
    reader: R,
    buf: Vec<u8>,
    /// Bytes of `buf` already consumed.
    pos: usize,
}

impl<R: AsyncRead + Unpin> Input<R> {
    pub(crate) fn new(reader: R) -> Input<R> {
        Input {
            reader,
            buf: Vec::new(),
            pos: 0,
        }
    }

    /// Give back the underlying reader; bytes buffered but not consumed are dropped.
    pub(crate) fn into_inner(self) -> R {
        self.reader
    }

    /// Read more bytes into the buffer; `Ok(false)` at end of stream.
    async fn fill(&mut self) -> Result<bool, String> {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        let mut chunk = [0u8; 8192];
        match self.reader.read(&mut chunk).await {
            Ok(0) => Ok(false),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(true)
            }
            Err(e) => Err(format!("reading the request failed: {e}")),
        }
    }

    fn pending(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Read the request line and headers.
    pub(crate) async fn read_head(&mut self) -> Result<RequestHead, ReadError> {
        loop {
            if let Some(end) = find(self.pending(), b"\r\n\r\n") {
                let head = &self.pending()[..end];
                let parsed = parse_head(head).map_err(ReadError::Malformed)?;
                self.pos += end + 4;
                return Ok(parsed);
            }
            if self.pending().len() > MAX_HEAD_BYTES {
                return Err(ReadError::Malformed(format!(
                    "request head is longer than {MAX_HEAD_BYTES} bytes"
                )));
            }
            let started = !self.pending().is_empty();
            match self.fill().await {
                Ok(true) => {}
                Ok(false) if !started => return Err(ReadError::Idle),
                Ok(false) => {
                    return Err(ReadError::Truncated(
                        "the client closed the connection in the middle of the request head"
                            .to_owned(),
                    ));
                }
                Err(e) => return Err(ReadError::Truncated(e)),
            }
        }
    }

    /// Read the body that `head` announces: chunked, by `content-length`, or none.
    pub(crate) async fn read_body(&mut self, head: &RequestHead) -> Result<Vec<u8>, ReadError> {
        let chunked = head.header("transfer-encoding").is_some_and(|te| {
            te.rsplit(',')
                .next()
                .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"))
        });
        if chunked {
            return self.read_chunked().await;
        }
        let Some(length) = head.header("content-length") else {
            return Ok(Vec::new());
        };
        let length: usize = length.parse().map_err(|_| {
            ReadError::Malformed(format!("content-length {length:?} is not a byte count"))
        })?;
        if length > MAX_BODY_BYTES {
            return Err(ReadError::Malformed(format!(
                "request body of {length} bytes is larger than the limit of {MAX_BODY_BYTES}"
            )));
        }
        self.take(length).await
    }

    /// Consume exactly `n` bytes.
    async fn take(&mut self, n: usize) -> Result<Vec<u8>, ReadError> {
        while self.pending().len() < n {
            match self.fill().await {
                Ok(true) => {}
                Ok(false) => {
                    return Err(ReadError::Truncated(format!(
                        "the client closed the connection after {} of {n} body bytes",
                        self.pending().len()
                    )));
                }
                Err(e) => return Err(ReadError::Truncated(e)),
            }
        }
        let bytes = self.pending()[..n].to_vec();
        self.pos += n;
        Ok(bytes)
    }

    /// Consume one CRLF-terminated line (without the CRLF).
    async fn line(&mut self) -> Result<Vec<u8>, ReadError> {
        loop {
            if let Some(end) = find(self.pending(), b"\r\n") {
                let line = self.pending()[..end].to_vec();
                self.pos += end + 2;
                return Ok(line);
            }
            if self.pending().len() > MAX_HEAD_BYTES {
                return Err(ReadError::Malformed(format!(
                    "a chunked-body line is longer than {MAX_HEAD_BYTES} bytes"
                )));
            }
            match self.fill().await {
                Ok(true) => {}
                Ok(false) => {
                    return Err(ReadError::Truncated(
                        "the client closed the connection in the middle of a chunked body"
                            .to_owned(),
                    ));
                }
                Err(e) => return Err(ReadError::Truncated(e)),
            }
        }
    }

    async fn read_chunked(&mut self) -> Result<Vec<u8>, ReadError> {
        let mut body = Vec::new();
        loop {
            let line = self.line().await?;
            let size_text = String::from_utf8_lossy(&line);
            let size_text = size_text.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_text, 16).map_err(|_| {
                ReadError::Malformed(format!("chunk size {size_text:?} is not hexadecimal"))
            })?;
            if size == 0 {
                // Trailer fields, up to the empty line that ends the message.
                while !self.line().await?.is_empty() {}
                return Ok(body);
            }
            if body.len().saturating_add(size) > MAX_BODY_BYTES {
                return Err(ReadError::Malformed(format!(
                    "chunked request body is larger than the limit of {MAX_BODY_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&self.take(size).await?);
            if !self.line().await?.is_empty() {
                return Err(ReadError::Malformed(
                    "chunk data is not followed by CRLF".to_owned(),
                ));
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn parse_head(head: &[u8]) -> Result<RequestHead, String> {
    let head = std::str::from_utf8(head).map_err(|_| "request head is not UTF-8".to_owned())?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("malformed request line {request_line:?}"));
    };
    if method.is_empty() || target.is_empty() || !version.starts_with("HTTP/1.") {
        return Err(format!("malformed request line {request_line:?}"));
    }
    let mut headers = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("malformed header line {line:?}"));
        };
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(format!("malformed header line {line:?}"));
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    Ok(RequestHead {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
    })
}

#[cfg(test)]
mod tests {
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
}
