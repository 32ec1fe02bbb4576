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
#[path = "request_tests.rs"]
mod tests;
