//! What the server answers: [`Reply`], and how its body is cut ([`Split`]) or broken ([`Fault`]).

use std::ops::Range;
use std::time::Duration;

/// One scripted answer: the `N`-th request the server receives gets the `N`-th reply.
///
/// The body is always sent with `Transfer-Encoding: chunked`, one HTTP chunk per piece of the
/// [`Split`], so a client's parser sees the bytes arrive exactly as cut. Build one with
/// [`Reply::sse`], [`Reply::ndjson`] or [`Reply::status`] and adjust it with the builder methods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// HTTP status code of the response.
    pub status: u16,
    /// Response headers in the order they are sent. `content-length`, `transfer-encoding` and
    /// `connection` are left out on the wire: the server frames the body itself (chunked) and
    /// always closes the connection after one exchange.
    pub headers: Vec<(String, String)>,
    /// The exact response body bytes.
    pub body: Vec<u8>,
    /// How the body is cut into separately written and flushed pieces.
    pub split: Split,
    /// Pause between two consecutive pieces (not before the first or after the last).
    pub pace: Duration,
    /// A way to break the exchange part-way through the body, if any.
    pub fault: Option<Fault>,
    /// The path the request must have. When it differs, the server answers `404` instead of this
    /// reply and records the difference in [`RecordedRequest::path_mismatch`].
    ///
    /// Without a `?` only the path part of the request target is compared, so any query string
    /// is accepted. With a `?`, every `name=value` pair listed after it must also appear
    /// (byte-for-byte, in any order) in the request's query string; extra request parameters
    /// are allowed.
    ///
    /// [`RecordedRequest::path_mismatch`]: crate::RecordedRequest::path_mismatch
    pub expect_path: Option<String>,
}

impl Reply {
    /// A `200 OK` reply with `content-type: text/event-stream` and the given body, sent whole.
    pub fn sse(body: impl Into<Vec<u8>>) -> Reply {
        Reply::status(200, "text/event-stream", body)
    }

    /// A `200 OK` reply with `content-type: application/x-ndjson` and the given body, sent whole.
    pub fn ndjson(body: impl Into<Vec<u8>>) -> Reply {
        Reply::status(200, "application/x-ndjson", body)
    }

    /// A reply with the given status code, `content-type` and body, sent whole.
    pub fn status(code: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status: code,
            headers: vec![("content-type".to_owned(), content_type.to_owned())],
            body: body.into(),
            split: Split::Whole,
            pace: Duration::ZERO,
            fault: None,
            expect_path: None,
        }
    }

    /// Cut the body into pieces as described by `split`.
    #[must_use]
    pub fn split(mut self, split: Split) -> Reply {
        self.split = split;
        self
    }

    /// Sleep `d` between two consecutive pieces of the body.
    #[must_use]
    pub fn pace(mut self, d: Duration) -> Reply {
        self.pace = d;
        self
    }

    /// Break the exchange part-way through the body.
    #[must_use]
    pub fn fault(mut self, f: Fault) -> Reply {
        self.fault = Some(f);
        self
    }

    /// Set a response header. An existing header with the same name (compared
    /// case-insensitively) is replaced; push onto [`Reply::headers`] to send a name twice.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        match self
            .headers
            .iter_mut()
            .find(|(existing, _)| existing.eq_ignore_ascii_case(name))
        {
            Some(slot) => *slot = (name.to_owned(), value.to_owned()),
            None => self.headers.push((name.to_owned(), value.to_owned())),
        }
        self
    }

    /// Require the request to have this path; see [`Reply::expect_path`](field@Reply::expect_path)
    /// for how query strings are compared.
    #[must_use]
    pub fn expect_path(mut self, p: &str) -> Reply {
        self.expect_path = Some(p.to_owned());
        self
    }
}

/// How a reply body is cut into pieces. Each piece is written and flushed on its own as one HTTP
/// chunk, with [`Reply::pace`](field@Reply::pace) between pieces.
///
/// Pieces are cut at byte offsets, so they may end inside a UTF-8 character or a JSON escape:
/// that is what the streaming parsers under test must survive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Split {
    /// The whole body as one piece.
    Whole,
    /// Pieces of this many bytes (the last may be shorter). `Every(0)` behaves like
    /// [`Split::Whole`].
    Every(usize),
    /// Cut at these absolute byte offsets. Order and duplicates do not matter; offsets of `0` or
    /// at or past the end of the body are ignored.
    Offsets(Vec<usize>),
    /// Pieces of pseudo-random length in `1..=max`, the same for the same `seed` on every run and
    /// platform. A `max` of `0` behaves like `1`.
    Random {
        /// Seed of the generator; any value, including `0`, is fine.
        seed: u64,
        /// Longest piece, in bytes.
        max: usize,
    },
}

impl Split {
    /// The byte ranges this split cuts a body of `len` bytes into: consecutive, non-empty,
    /// covering `0..len` exactly (no ranges for an empty body).
    pub fn pieces(&self, len: usize) -> Vec<Range<usize>> {
        let mut cuts: Vec<usize> = match self {
            Split::Whole | Split::Every(0) => Vec::new(),
            Split::Every(n) => (1..len.div_ceil(*n)).map(|i| i * n).collect(),
            Split::Offsets(offsets) => {
                let mut cuts: Vec<usize> = offsets
                    .iter()
                    .copied()
                    .filter(|&o| o > 0 && o < len)
                    .collect();
                cuts.sort_unstable();
                cuts.dedup();
                cuts
            }
            Split::Random { seed, max } => {
                let max = (*max).max(1) as u64;
                let mut rng = XorShift::new(*seed);
                let mut cuts = Vec::new();
                let mut at = 0usize;
                loop {
                    // `max` came from a usize, so the remainder plus one fits in a usize.
                    let step = usize::try_from(rng.next() % max + 1).unwrap_or(1);
                    at = at.saturating_add(step);
                    if at >= len {
                        break;
                    }
                    cuts.push(at);
                }
                cuts
            }
        };
        if len == 0 {
            return Vec::new();
        }
        cuts.push(len);
        let mut start = 0;
        cuts.into_iter()
            .map(|end| {
                let range = start..end;
                start = end;
                range
            })
            .collect()
    }
}

/// A way to break an exchange part-way through the reply body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Send only the first `n` body bytes (still cut by the split and paced), then close the
    /// connection without the terminating zero-length chunk, so the client sees a truncated
    /// body. The close is an ordinary FIN, so every byte sent reaches the client before its
    /// end-of-stream. If `n` is at least the body length, the whole body is sent and only the
    /// terminating chunk is missing.
    DisconnectAfter(usize),
    /// Send the first `n` body bytes, then keep the connection open and send nothing more until
    /// the client goes away or the server is dropped.
    StallAfter(usize),
}

/// Compare a request target with [`Reply::expect_path`](field@Reply::expect_path); `None` when it
/// matches, otherwise a message naming both.
pub(crate) fn path_mismatch(expected: &str, actual: &str) -> Option<String> {
    let (expected_path, expected_query) = expected.split_once('?').unwrap_or((expected, ""));
    let (actual_path, actual_query) = actual.split_once('?').unwrap_or((actual, ""));
    let actual_params: Vec<&str> = actual_query.split('&').collect();
    let matches = expected_path == actual_path
        && expected_query
            .split('&')
            .filter(|param| !param.is_empty())
            .all(|param| actual_params.contains(&param));
    (!matches).then(|| format!("expected path {expected:?}, got {actual:?}"))
}

/// A xorshift64* generator: tiny, deterministic and good enough to pick piece lengths.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> XorShift {
        // splitmix64 of the seed, so that nearby seeds differ and seed 0 gives a non-zero state.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift(if z == 0 { 0x9E37_79B9_7F4A_7C15 } else { z })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[cfg(test)]
#[path = "reply_tests.rs"]
mod tests;
