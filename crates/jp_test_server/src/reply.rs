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
mod tests {
    use super::*;

    fn lengths(split: &Split, len: usize) -> Vec<usize> {
        split.pieces(len).iter().map(Range::len).collect()
    }

    #[test]
    fn whole_is_one_piece_and_empty_body_has_none() {
        assert_eq!(Split::Whole.pieces(7), vec![0..7]);
        assert_eq!(Split::Whole.pieces(0), Vec::<Range<usize>>::new());
        assert_eq!(Split::Every(3).pieces(0), Vec::<Range<usize>>::new());
        assert_eq!(
            Split::Random { seed: 1, max: 4 }.pieces(0),
            Vec::<Range<usize>>::new()
        );
    }

    #[test]
    fn every_cuts_fixed_lengths_with_a_short_tail() {
        assert_eq!(Split::Every(3).pieces(7), vec![0..3, 3..6, 6..7]);
        assert_eq!(Split::Every(3).pieces(6), vec![0..3, 3..6]);
        assert_eq!(Split::Every(1).pieces(3), vec![0..1, 1..2, 2..3]);
        assert_eq!(Split::Every(10).pieces(4), vec![0..4]);
        assert_eq!(Split::Every(0).pieces(4), vec![0..4]);
    }

    #[test]
    fn offsets_are_sorted_deduplicated_and_clamped() {
        let split = Split::Offsets(vec![5, 2, 2, 0, 9, 100]);
        assert_eq!(split.pieces(9), vec![0..2, 2..5, 5..9]);
        assert_eq!(Split::Offsets(vec![]).pieces(3), vec![0..3]);
    }

    #[test]
    fn random_pieces_cover_the_body_within_bounds_and_repeat_per_seed() {
        for seed in [0, 1, 42, u64::MAX] {
            for max in [1, 2, 7, 64] {
                let split = Split::Random { seed, max };
                let pieces = split.pieces(1000);
                assert_eq!(pieces.first().map(|r| r.start), Some(0));
                assert_eq!(pieces.last().map(|r| r.end), Some(1000));
                assert!(pieces.windows(2).all(|w| w[0].end == w[1].start));
                assert!(pieces.iter().all(|r| (1..=max).contains(&r.len())));
                assert_eq!(split.pieces(1000), pieces);
            }
        }
        assert_eq!(lengths(&Split::Random { seed: 9, max: 1 }, 5), vec![1; 5]);
        assert_eq!(lengths(&Split::Random { seed: 9, max: 0 }, 3), vec![1; 3]);
        assert_ne!(
            Split::Random { seed: 1, max: 16 }.pieces(1000),
            Split::Random { seed: 2, max: 16 }.pieces(1000)
        );
        // Every length in 1..=max shows up over a long body: the generator is not stuck.
        let seen = lengths(&Split::Random { seed: 3, max: 8 }, 4000);
        for len in 1..=8 {
            assert!(seen.contains(&len), "length {len} never drawn");
        }
    }

    #[test]
    fn path_matching_compares_the_path_and_requires_expected_query_pairs() {
        assert_eq!(path_mismatch("/v1/messages", "/v1/messages"), None);
        assert_eq!(
            path_mismatch("/v1/messages", "/v1/messages?beta=true"),
            None
        );
        assert_eq!(
            path_mismatch("/m:gen?alt=sse", "/m:gen?key=k&alt=sse"),
            None
        );
        assert_eq!(path_mismatch("/m:gen?", "/m:gen"), None);
        assert_eq!(
            path_mismatch("/m:gen?alt=sse", "/m:gen"),
            Some(r#"expected path "/m:gen?alt=sse", got "/m:gen""#.to_owned())
        );
        assert_eq!(
            path_mismatch("/m:gen?alt=sse", "/m:gen?alt=sse2"),
            Some(r#"expected path "/m:gen?alt=sse", got "/m:gen?alt=sse2""#.to_owned())
        );
        assert_eq!(
            path_mismatch("/v1/messages", "/v1/chat/completions"),
            Some(r#"expected path "/v1/messages", got "/v1/chat/completions""#.to_owned())
        );
    }

    #[test]
    fn header_replaces_case_insensitively_and_appends_new_names() {
        let reply = Reply::sse("x")
            .header("Content-Type", "text/plain")
            .header("x-request-id", "abc");
        assert_eq!(
            reply.headers,
            vec![
                ("Content-Type".to_owned(), "text/plain".to_owned()),
                ("x-request-id".to_owned(), "abc".to_owned()),
            ]
        );
    }

    #[test]
    fn constructors_set_status_content_type_and_defaults() {
        let reply = Reply::ndjson("{}\n");
        assert_eq!(reply.status, 200);
        assert_eq!(
            reply.headers,
            vec![("content-type".to_owned(), "application/x-ndjson".to_owned())]
        );
        assert_eq!(reply.body, b"{}\n".to_vec());
        assert_eq!(reply.split, Split::Whole);
        assert_eq!(reply.pace, Duration::ZERO);
        assert_eq!(reply.fault, None);
        assert_eq!(reply.expect_path, None);
        let reply = Reply::status(429, "application/json", "{}")
            .split(Split::Every(1))
            .pace(Duration::from_millis(3))
            .fault(Fault::StallAfter(1))
            .expect_path("/v1/messages");
        assert_eq!(reply.status, 429);
        assert_eq!(reply.split, Split::Every(1));
        assert_eq!(reply.pace, Duration::from_millis(3));
        assert_eq!(reply.fault, Some(Fault::StallAfter(1)));
        assert_eq!(reply.expect_path.as_deref(), Some("/v1/messages"));
    }
}
