//! What the server remembers about each request and how its reply went.

use std::time::Instant;

/// One request the server received, with the outcome of its reply.
///
/// Requests are numbered in the order they were fully read; the `N`-th one (from 0) was
/// answered with the `N`-th scripted [`Reply`](crate::Reply).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// The request method, as sent (`POST`).
    pub method: String,
    /// The request target: path and query string, as sent (`/v1beta/models/x?alt=sse`).
    pub path: String,
    /// Request headers in arrival order, names lowercased, values trimmed.
    pub headers: Vec<(String, String)>,
    /// The request body, with any chunked transfer encoding removed.
    pub body: Vec<u8>,
    /// When the request had been read completely (head and body).
    pub received_at: Instant,
    /// Reply body bytes written successfully so far (not counting chunk framing).
    pub body_bytes_sent: usize,
    /// The client closed the connection before the reply was complete.
    pub client_disconnected: bool,
    /// When the exchange ended: the reply was complete, a fault ended it, or the client went
    /// away. `None` while the reply is still streaming or stalled.
    pub ended_at: Option<Instant>,
    /// Set when the reply had an `expect_path` the request did not match; the server then
    /// answered `404` with `test server: request #N: ` followed by this message.
    pub path_mismatch: Option<String>,
}

impl RecordedRequest {
    /// The body parsed as JSON, or `Null` if it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The value of the first header with this name (compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
