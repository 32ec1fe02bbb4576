//! A local HTTP/1.1 server that replays recorded provider bytes, for jp's tests.
//!
//! Provider code is only trustworthy if it survives what real providers send: SSE events and
//! NDJSON lines that arrive cut at arbitrary byte offsets (inside a UTF-8 character, inside a
//! JSON escape), slowly, or not at all. [`TestServer`] plays a script of [`Reply`]s, one per
//! request, and controls exactly how each body reaches the client: cut into pieces by a
//! [`Split`] (each piece is one HTTP chunk, written and flushed on its own), paced, or broken by
//! a [`Fault`]. It records every request ([`RecordedRequest`]) so a test can assert what the
//! client sent and whether it hung up.
//!
//! The replies usually come from the recorded exchanges in this crate's
//! `tests/data/providers/*.yml` ([`load_fixtures`], [`shared_fixture`]), so the bytes are the
//! ones a real provider produced.
//!
//! Point jp's provider `base_url` (or the real `jp` binary's config) at [`TestServer::url`].
//!
//! # Example
//!
//! ```
//! use std::io::{Read as _, Write as _};
//! use std::time::Duration;
//!
//! use jp_test_server::{Reply, Split, TestServer, load_fixtures, shared_fixture};
//!
//! // The first exchange of a recorded Anthropic tool call, cut into 7-byte pieces.
//! let exchanges = load_fixtures(shared_fixture("anthropic_test_tool_call_stream.yml"))?;
//! let server = TestServer::start(vec![exchanges[0].reply().split(Split::Every(7))]);
//!
//! // Any HTTP client works; the provider tests use reqwest against `server.url()`.
//! let mut client = std::net::TcpStream::connect(server.addr())?;
//! client.write_all(b"POST /v1/messages HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}")?;
//! let mut response = Vec::new();
//! client.read_to_end(&mut response)?; // the server closes after each exchange
//! assert!(response.starts_with(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream"));
//!
//! let requests = server.wait_for(1, Duration::from_secs(5));
//! assert_eq!(requests[0].path, "/v1/messages");
//! assert_eq!(requests[0].json(), serde_json::json!({}));
//! assert_eq!(requests[0].body_bytes_sent, exchanges[0].body.len());
//! assert_eq!(requests[0].path_mismatch, None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Behaviour worth knowing
//!
//! - One request per connection: every response says `connection: close` and the server closes
//!   the socket after it, so HTTP clients that pool connections open a new one per request.
//! - Replies are numbered in the order requests finish arriving, across all connections.
//! - The client counts as gone when a write fails or its end of the socket reaches end of
//!   stream while the body is streaming, pausing between pieces, or stalled. A client that
//!   half-closes (shuts down writing) after its request therefore counts as gone.
//! - Request bodies may use `content-length` or chunked transfer encoding; `expect:
//!   100-continue` is honoured. Malformed requests get `400` and show up in
//!   [`TestServer::errors`], not in [`TestServer::requests`].

pub mod documents;
mod fixture;
mod record;
mod reply;
mod request;
mod server;

pub use fixture::{Fixture, FixtureError, load_fixture, load_fixtures, shared_fixture};
pub use record::RecordedRequest;
pub use reply::{Fault, Reply, Split};
pub use server::TestServer;
