//! Helpers for the decoders' tests (feed recorded bodies at many split
//! patterns and assemble the events the way jp does), and the tests of the
//! shared decoder.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_conversation::{EventBuilder, FlushedEvent};

use super::Latch;
use crate::error::ProviderError;
use crate::provider::{StreamEvent, WireDecoder};

/// The events of `body` fed to a fresh decoder in pieces of the sizes in
/// `sizes` (cycled), then finished, and the error that stopped it.
pub(crate) fn decode_in<D: WireDecoder>(
    make: &impl Fn() -> D,
    body: &[u8],
    sizes: &[usize],
) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut decoder = make();
    let mut events = Vec::new();
    let mut rest = body;
    let mut sizes = sizes.iter().copied().cycle();
    while !rest.is_empty() {
        let size = sizes.next().unwrap_or(1).clamp(1, rest.len());
        let (piece, tail) = rest.split_at(size);
        rest = tail;
        match decoder.feed(piece) {
            Ok(more) => events.extend(more),
            Err(error) => return (events, Some(error)),
        }
    }
    match decoder.finish() {
        Ok(more) => {
            events.extend(more);
            (events, None)
        }
        Err(error) => (events, Some(error)),
    }
}

/// The split patterns every recorded body is fed at: whole, byte by
/// byte, fixed sizes and irregular ones.
pub(crate) const SPLITS: &[&[usize]] = &[
    &[usize::MAX],
    &[1],
    &[2],
    &[3],
    &[7],
    &[64],
    &[1, 2, 3, 5, 8, 13, 21],
    &[17, 1, 1, 250, 4],
];

/// The events of `body` (and the error that ended them), after
/// checking that every pattern in [`SPLITS`] gives the same.
pub(crate) fn decode<D: WireDecoder>(
    make: impl Fn() -> D,
    body: &[u8],
) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let whole = decode_in(&make, body, SPLITS[0]);
    for sizes in &SPLITS[1..] {
        assert_eq!(
            decode_in(&make, body, sizes),
            whole,
            "split into pieces of {sizes:?}"
        );
    }
    whole
}

/// Feeds `events` to an [`EventBuilder`] as jp does and returns what
/// the flushes produced, in order. Asserts every flush ends an item and
/// nothing is left open.
pub(crate) fn build(events: &[StreamEvent]) -> Vec<FlushedEvent> {
    let mut builder = EventBuilder::new();
    let mut flushed = Vec::new();
    for event in events {
        match event {
            StreamEvent::Part { index, part } => {
                builder.handle_part(*index, part.clone()).unwrap();
            }
            StreamEvent::Flush { index } => {
                let item = builder.handle_flush(*index);
                flushed.push(item.unwrap_or_else(|| panic!("flush of empty index {index}")));
            }
            _ => {}
        }
    }
    assert!(builder.is_empty(), "indexes left open: {builder:?}");
    flushed
}

/// The response bodies of a shared fixture file, in order.
pub(crate) fn fixture_bodies(name: &str) -> Vec<Vec<u8>> {
    jp_test_server::load_fixtures(jp_test_server::shared_fixture(name))
        .unwrap()
        .into_iter()
        .map(|fixture| fixture.body)
        .collect()
}

/// The request bodies of a shared fixture file, in order.
pub(crate) fn fixture_requests(name: &str) -> Vec<serde_json::Value> {
    jp_test_server::load_fixtures(jp_test_server::shared_fixture(name))
        .unwrap()
        .into_iter()
        .map(|fixture| fixture.request_body.unwrap())
        .collect()
}

/// Parts at `index` with each of `texts` built by `make`.
pub(crate) fn parts(
    index: usize,
    texts: &[&str],
    make: impl Fn(String) -> jp_conversation::EventPart,
) -> Vec<StreamEvent> {
    texts
        .iter()
        .map(|text| StreamEvent::Part {
            index,
            part: make((*text).to_owned()),
        })
        .collect()
}

#[test]
fn latch_returns_events_before_an_error_then_the_error() {
    let error = ProviderError::Config("boom".into());
    let mut latch = Latch::default();
    let first = latch.run(|events| {
        events.push(StreamEvent::Notice("before".into()));
        Err(error.clone())
    });
    assert_eq!(first, Ok(vec![StreamEvent::Notice("before".into())]));
    assert_eq!(latch.run(|_| Ok(())), Err(error.clone()));
    assert_eq!(latch.run(|_| Ok(())), Err(error));
}
