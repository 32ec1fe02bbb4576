//! Differential fuzzing of the streaming argument parser against serde_json.
//!
//! Input: the first byte chooses how the document is cut into chunks, the
//! rest is the document (inputs that are not UTF-8 are skipped: providers
//! stream text). The parser is fed those chunks and its fragments go through
//! the aggregator. Checked:
//!
//! - serde_json accepts the document ⇔ the parser accepts it, and then the
//!   aggregated value equals serde_json's (including key order);
//! - the fragment stream is well formed: the aggregator never rejects a
//!   fragment, `String` fragments are never empty, nothing follows the
//!   root's `Done`, and a successful `finish` means the root value arrived;
//! - a failed parser keeps returning the same error, and a finished one
//!   refuses more input.
//!
//! The parser runs with its default depth limit (128 nested containers) but
//! without the key-length and size limits, which serde_json does not have.
//! serde_json runs without its recursion limit (which stops at 127 levels),
//! so the oracle for a document nested deeper than 128 is "rejected because
//! of the depth limit".

#![no_main]

use jp_conversation::{
    ArgParseError, FragmentAggregator, IncrementalArgParser, Limit, ParserLimits, StreamFragment,
};
use libfuzzer_sys::fuzz_target;
use serde::Deserialize as _;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&seed, document)) = data.split_first() else {
        return;
    };
    let Ok(document) = std::str::from_utf8(document) else {
        return;
    };
    let chunks = split(document, seed);
    check(document, &chunks);
});

/// Cuts `document` as `seed` says. Bits 0-1: one chunk, 1-byte chunks,
/// 1..=8 bytes or 1..=64 bytes (each cut moved forward to a char boundary).
/// Bit 2: also push empty chunks now and then. Bits 3-7 seed the sizes.
fn split(document: &str, seed: u8) -> Vec<&str> {
    let max = match seed & 0b11 {
        0 => usize::MAX,
        1 => 1,
        2 => 8,
        _ => 64,
    };
    let with_empty = seed & 0b100 != 0;
    let mut state = u32::from(seed >> 3).wrapping_mul(0x9E37_79B9) | 1;
    let mut next = move || {
        // xorshift32
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as usize
    };

    let mut chunks = Vec::new();
    let mut start = 0;
    while start < document.len() {
        if with_empty && next() % 4 == 0 {
            chunks.push("");
        }
        let size = if max == usize::MAX {
            document.len()
        } else {
            1 + next() % max
        };
        let mut end = start.saturating_add(size).min(document.len());
        while !document.is_char_boundary(end) {
            end += 1;
        }
        chunks.push(&document[start..end]);
        start = end;
    }
    chunks
}

/// Watches the fragment stream while it rebuilds the value.
#[derive(Default)]
struct Stream {
    aggregator: FragmentAggregator,
    root: Option<Value>,
    fragments: usize,
}

impl Stream {
    fn feed(&mut self, fragments: Vec<StreamFragment>) {
        for fragment in fragments {
            self.fragments += 1;
            assert!(
                self.root.is_none(),
                "fragment {} ({fragment}) arrived after the root's Done",
                self.fragments - 1
            );
            if let StreamFragment::String(text) = fragment.leaf() {
                assert!(!text.is_empty(), "empty String fragment: {fragment}");
            }
            let shown = fragment.to_string();
            self.root = self.aggregator.push(fragment);
            if let Some(error) = self.aggregator.error() {
                panic!("the aggregator rejects fragment {shown}: {error}");
            }
        }
    }
}

/// serde_json's verdict on the whole document, without its recursion limit.
fn oracle(document: &str) -> serde_json::Result<Value> {
    let mut deserializer = serde_json::Deserializer::from_str(document);
    deserializer.disable_recursion_limit();
    let value = Value::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// Nesting depth of arrays and objects (a scalar is 0), without recursion.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0)];
    while let Some((value, level)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        deepest = deepest.max(level + 1);
        stack.extend(children.map(|child| (child, level + 1)));
    }
    deepest
}

fn check(document: &str, chunks: &[&str]) {
    let expected = oracle(document);

    let limits = ParserLimits {
        max_key_len: usize::MAX,
        max_size: usize::MAX,
        ..ParserLimits::default()
    };
    let mut parser = IncrementalArgParser::with_limits(limits);
    let mut stream = Stream::default();
    let outcome = parse(&mut parser, &mut stream, chunks);

    match &outcome {
        Ok(()) => {
            assert_eq!(
                parser.push(" "),
                Err(ArgParseError::AlreadyFinished),
                "a finished parser accepted more input"
            );
        }
        Err(error) => {
            // The root value may have arrived before trailing garbage; what
            // was emitted stays valid, so nothing to check about it here.
            assert_eq!(parser.push("0").as_ref(), Err(error), "push after failing");
            assert_eq!(parser.finish().as_ref(), Err(error), "finish after failing");
        }
    }

    match (expected, outcome) {
        (Ok(expected), Ok(())) => {
            let Some(got) = stream.root else {
                panic!("the parser accepted {document:?} but the root value never arrived");
            };
            assert_eq!(got, expected, "values differ for {document:?}");
            // `Value`'s equality ignores key order; the text does not.
            assert_eq!(
                got.to_string(),
                expected.to_string(),
                "key order differs for {document:?}"
            );
        }
        (Ok(expected), Err(ArgParseError::LimitExceeded { limit: Limit::Depth, max, .. }))
            if depth(&expected) > max => {}
        (Ok(expected), Err(error)) => {
            panic!(
                "serde_json accepts {document:?} (as {expected}) but the parser rejects it: {error}"
            );
        }
        (Err(error), Ok(())) => {
            panic!(
                "serde_json rejects {document:?} ({error}) but the parser accepts it as {:?}",
                stream.root
            );
        }
        (Err(_), Err(_)) => {}
    }
}

fn parse(
    parser: &mut IncrementalArgParser,
    stream: &mut Stream,
    chunks: &[&str],
) -> Result<(), ArgParseError> {
    for chunk in chunks {
        // A container root may be done before trailing whitespace arrives.
        stream.feed(parser.push(chunk)?);
    }
    stream.feed(parser.finish()?);
    assert!(
        stream.root.is_some(),
        "finish succeeded without the root value"
    );
    Ok(())
}
