//! A deliberately naive raw HTTP/1.1 client, so the server is checked against bytes on the wire
//! rather than against another HTTP library's interpretation of them.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use jp_test_server::TestServer;

/// Longest any test waits for the server.
pub const PATIENCE: Duration = Duration::from_secs(5);

/// A response as it arrived: the head, every chunk separately, and whether the terminating
/// zero-length chunk came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status_line: String,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<Vec<u8>>,
    /// The `0\r\n\r\n` that ends a chunked body arrived.
    pub terminated: bool,
    /// Bytes after the last complete chunk (or after the terminator).
    pub leftover: Vec<u8>,
}

impl Response {
    pub fn body(&self) -> Vec<u8> {
        self.chunks.concat()
    }

    pub fn body_text(&self) -> String {
        String::from_utf8(self.body()).unwrap()
    }

    pub fn chunk_lengths(&self) -> Vec<usize> {
        self.chunks.iter().map(Vec::len).collect()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub fn connect(server: &TestServer) -> TcpStream {
    let stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    stream
}

/// Send a request with a `content-length` body.
pub fn send(
    stream: &mut TcpStream,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) {
    let mut raw = format!("{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n");
    for (name, value) in headers {
        raw.push_str(&format!("{name}: {value}\r\n"));
    }
    raw.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    let mut raw = raw.into_bytes();
    raw.extend_from_slice(body);
    stream.write_all(&raw).unwrap();
}

/// Read until the server closes the connection.
pub fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .unwrap_or_else(|e| panic!("reading the response failed after {} bytes: {e}", raw.len()));
    raw
}

/// One whole exchange on a new connection.
pub fn post(server: &TestServer, path: &str, body: &[u8]) -> Response {
    let mut stream = connect(server);
    send(
        &mut stream,
        "POST",
        path,
        &[("content-type", "application/json")],
        body,
    );
    parse(&read_to_close(&mut stream)).expect("a complete response head")
}

/// Read from `stream` until `done` holds for what has arrived, and return that.
pub fn read_until(stream: &mut TcpStream, done: impl Fn(&Response) -> bool) -> Response {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(response) = parse(&raw)
            && done(&response)
        {
            return response;
        }
        let n = stream
            .read(&mut buf)
            .unwrap_or_else(|e| panic!("read failed after {} bytes: {e}", raw.len()));
        assert_ne!(
            n,
            0,
            "the server closed the connection early: {:?}",
            String::from_utf8_lossy(&raw)
        );
        raw.extend_from_slice(&buf[..n]);
    }
}

/// Read to the end, noting when the first chunk and the end of stream arrived.
pub fn read_timed(stream: &mut TcpStream) -> (Response, Instant, Instant) {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let mut first_chunk_at = None;
    loop {
        let n = stream.read(&mut buf).unwrap();
        let now = Instant::now();
        if n == 0 {
            let response = parse(&raw).expect("a complete response head");
            return (response, first_chunk_at.expect("at least one chunk"), now);
        }
        raw.extend_from_slice(&buf[..n]);
        if first_chunk_at.is_none() && parse(&raw).is_some_and(|r| !r.chunks.is_empty()) {
            first_chunk_at = Some(now);
        }
    }
}

/// Parse what has arrived so far; `None` until the head is complete. Panics on bytes that are
/// not valid chunked framing.
pub fn parse(raw: &[u8]) -> Option<Response> {
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..head_end]).unwrap();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap().to_owned();
    let headers = lines
        .map(|line| {
            let (name, value) = line.split_once(": ").unwrap();
            (name.to_owned(), value.to_owned())
        })
        .collect();
    let mut rest = &raw[head_end + 4..];
    let mut chunks = Vec::new();
    let mut terminated = false;
    while let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") {
        let size_text = std::str::from_utf8(&rest[..line_end]).unwrap();
        let size = usize::from_str_radix(size_text, 16)
            .unwrap_or_else(|_| panic!("bad chunk size line {size_text:?}"));
        let data_start = line_end + 2;
        if size == 0 {
            if rest.len() >= data_start + 2 {
                assert_eq!(
                    &rest[data_start..data_start + 2],
                    b"\r\n",
                    "no CRLF after the last chunk"
                );
                terminated = true;
                rest = &rest[data_start + 2..];
            }
            break;
        }
        if rest.len() < data_start + size + 2 {
            break;
        }
        chunks.push(rest[data_start..data_start + size].to_vec());
        assert_eq!(
            &rest[data_start + size..data_start + size + 2],
            b"\r\n",
            "chunk data not followed by CRLF"
        );
        rest = &rest[data_start + size + 2..];
    }
    Some(Response {
        status_line,
        headers,
        chunks,
        terminated,
        leftover: rest.to_vec(),
    })
}
