//! The incremental argument parser against the JSONTestSuite corpus
//! (`test_parsing`): every `y_` file is accepted with the value serde_json
//! gives, every `n_` file is rejected, and every `i_` file has the outcome
//! pinned in [`IMPLEMENTATION_DEFINED`], each at every split point of the
//! input, all at once and one char per push.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use jp_conversation::{
    ArgParseError, FragmentAggregator, IncrementalArgParser, Limit, ParserLimits, StreamFragment,
};
use serde_json::Value;

/// The corpus, vendored byte for byte (see `tests/data/JSONTestSuite/README.md`).
const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/JSONTestSuite/test_parsing"
);

/// Files per prefix, as (valid UTF-8, skipped as not UTF-8). Pinned so that
/// a missing, empty or changed corpus cannot pass silently.
const EXPECTED_COUNTS: [(char, usize, usize); 3] = [('y', 95, 0), ('n', 176, 12), ('i', 22, 13)];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Accept,
    Reject,
}

/// The parser's outcome for each valid-UTF-8 `i_` file. The parser is meant
/// to agree with serde_json: accept when serde_json accepts (with the same
/// value), reject otherwise.
const IMPLEMENTATION_DEFINED: &[(&str, Expect)] = &[
    // Underflows to 0.0, as in serde_json.
    ("i_number_double_huge_neg_exp.json", Expect::Accept),
    // Exponent overflows f64 for a non-zero significand.
    ("i_number_huge_exp.json", Expect::Reject),
    // -1e+9999 overflows f64.
    ("i_number_neg_int_huge_exp.json", Expect::Reject),
    // 1.5e+9999 overflows f64.
    ("i_number_pos_double_huge_exp.json", Expect::Reject),
    // -123123e100000 overflows f64.
    ("i_number_real_neg_overflow.json", Expect::Reject),
    // 123123e100000 overflows f64.
    ("i_number_real_pos_overflow.json", Expect::Reject),
    // 123e-10000000 underflows to 0.0.
    ("i_number_real_underflow.json", Expect::Accept),
    // Beyond i64: becomes an f64, as in serde_json.
    ("i_number_too_big_neg_int.json", Expect::Accept),
    // Beyond u64: becomes an f64.
    ("i_number_too_big_pos_int.json", Expect::Accept),
    // Beyond i64: becomes an f64.
    ("i_number_very_big_negative_int.json", Expect::Accept),
    // Lone trailing surrogate in a key.
    ("i_object_key_lone_2nd_surrogate.json", Expect::Reject),
    // Leading surrogate at the end of the string.
    (
        "i_string_1st_surrogate_but_2nd_missing.json",
        Expect::Reject,
    ),
    // Leading surrogate followed by a non-surrogate escape.
    (
        "i_string_1st_valid_surrogate_2nd_invalid.json",
        Expect::Reject,
    ),
    // Leading surrogate followed by `\n`.
    (
        "i_string_incomplete_surrogate_and_escape_valid.json",
        Expect::Reject,
    ),
    // Trailing surrogate first, then plain text.
    ("i_string_incomplete_surrogate_pair.json", Expect::Reject),
    // Two leading surrogates.
    (
        "i_string_incomplete_surrogates_escape_valid.json",
        Expect::Reject,
    ),
    // Lone leading surrogate.
    ("i_string_invalid_lonely_surrogate.json", Expect::Reject),
    // Leading surrogate followed by plain text.
    ("i_string_invalid_surrogate.json", Expect::Reject),
    // Trailing surrogate before leading surrogate.
    ("i_string_inverted_surrogates_U+1D11E.json", Expect::Reject),
    // Lone trailing surrogate.
    ("i_string_lone_second_surrogate.json", Expect::Reject),
    // 500 levels exceed the default depth limit of 128 (serde_json's too).
    ("i_structure_500_nested_arrays.json", Expect::Reject),
    // A byte order mark is not JSON whitespace.
    ("i_structure_UTF-8_BOM_empty_object.json", Expect::Reject),
];

struct Corpus {
    /// File name -> text, for files that are valid UTF-8.
    files: BTreeMap<String, String>,
    /// Prefix -> (valid UTF-8, skipped).
    counts: BTreeMap<char, (usize, usize)>,
}

fn corpus() -> Corpus {
    let dir = PathBuf::from(CORPUS);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|error| {
        panic!(
            "JSONTestSuite corpus not found at {}: {error}",
            dir.display()
        )
    });
    let mut files = BTreeMap::new();
    let mut counts = BTreeMap::new();
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let Some(prefix) = name.chars().next() else {
            continue;
        };
        if !name.ends_with(".json") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let count: &mut (usize, usize) = counts.entry(prefix).or_default();
        match String::from_utf8(bytes) {
            Ok(text) => {
                count.0 += 1;
                files.insert(name, text);
            }
            Err(_) => count.1 += 1,
        }
    }
    Corpus { files, counts }
}

/// Feeds `chunks` to a fresh parser, aggregates the fragments and returns the
/// root value or the parser's error.
///
/// Also checks what must hold for any input: the aggregator accepts every
/// fragment, the root value completes with the very last fragment, and a
/// failed parser keeps returning its error.
fn parse<'a>(
    limits: ParserLimits,
    chunks: impl IntoIterator<Item = &'a str>,
) -> Result<Value, ArgParseError> {
    let mut parser = IncrementalArgParser::with_limits(limits);
    let mut aggregator = FragmentAggregator::new();
    let mut root = None;
    let mut feed = |fragments: Vec<StreamFragment>| {
        for fragment in fragments {
            assert!(
                root.is_none(),
                "fragment {fragment:?} after the root's Done"
            );
            root = aggregator.push(fragment);
            assert_eq!(aggregator.error(), None);
        }
    };
    let result = chunks
        .into_iter()
        .try_for_each(|chunk| parser.push(chunk).map(&mut feed))
        .and_then(|()| parser.finish().map(&mut feed));
    match result {
        Ok(()) => Ok(root.expect("finish succeeded but the root value is incomplete")),
        Err(error) => {
            assert!(
                !matches!(error, ArgParseError::AlreadyFinished),
                "unexpected {error:?}"
            );
            assert_eq!(parser.push("0").unwrap_err(), error, "push after error");
            assert_eq!(parser.finish().unwrap_err(), error, "finish after error");
            Err(error)
        }
    }
}

/// Every way of feeding `text` this suite tries: all at once, one char per
/// push, and in two pushes split at every char boundary (including the empty
/// first or last chunk).
fn chunkings(text: &str) -> impl Iterator<Item = Vec<&str>> {
    let whole = std::iter::once(vec![text]);
    let per_char = std::iter::once(
        text.char_indices()
            .map(|(i, c)| &text[i..i + c.len_utf8()])
            .collect(),
    );
    let splits = (0..=text.len())
        .filter(|&k| text.is_char_boundary(k))
        .map(|k| vec![&text[..k], &text[k..]]);
    whole.chain(per_char).chain(splits)
}

/// Parses `text` every way and checks that all agree; returns the outcome.
fn parse_every_way(name: &str, text: &str, limits: ParserLimits) -> Result<Value, ArgParseError> {
    let reference = parse(limits, [text]);
    for chunks in chunkings(text) {
        let outcome = parse(limits, chunks.iter().copied());
        match (&reference, &outcome) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "{name}: value differs for chunks {chunks:?}");
                assert_eq!(a.to_string(), b.to_string(), "{name}: {chunks:?}");
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "{name}: error differs for chunks {chunks:?}"),
            _ => panic!("{name}: {reference:?} all at once but {outcome:?} for {chunks:?}"),
        }
    }
    reference
}

#[test]
fn corpus_has_the_expected_files() {
    let corpus = corpus();
    let expected: BTreeMap<char, (usize, usize)> = EXPECTED_COUNTS
        .iter()
        .map(|&(prefix, valid, skipped)| (prefix, (valid, skipped)))
        .collect();
    assert_eq!(corpus.counts, expected);
}

#[test]
fn y_files_are_accepted_with_serde_json_value() {
    let corpus = corpus();
    let mut checked = 0;
    for (name, text) in corpus.files.iter().filter(|(n, _)| n.starts_with("y_")) {
        let expected: Value = serde_json::from_str(text)
            .unwrap_or_else(|error| panic!("{name}: serde_json rejects it: {error}"));
        let value = parse_every_way(name, text, ParserLimits::default())
            .unwrap_or_else(|error| panic!("{name}: rejected: {error:?}"));
        assert_eq!(value, expected, "{name}");
        assert_eq!(value.to_string(), expected.to_string(), "{name}");
        checked += 1;
    }
    assert_eq!(checked, 95);
}

#[test]
fn n_files_are_rejected() {
    let corpus = corpus();
    let mut checked = 0;
    for (name, text) in corpus.files.iter().filter(|(n, _)| n.starts_with("n_")) {
        assert!(
            serde_json::from_str::<Value>(text).is_err(),
            "{name}: serde_json accepts it"
        );
        match parse_every_way(name, text, ParserLimits::default()) {
            Ok(value) => panic!("{name}: accepted as {value}"),
            Err(
                ArgParseError::Invalid { .. }
                | ArgParseError::Truncated { .. }
                | ArgParseError::LimitExceeded {
                    limit: Limit::Depth,
                    ..
                },
            ) => {}
            Err(error) => panic!("{name}: unexpected error {error:?}"),
        }
        checked += 1;
    }
    assert_eq!(checked, 176);
}

#[test]
fn i_files_have_their_pinned_outcome() {
    let corpus = corpus();
    let actual: Vec<&str> = corpus
        .files
        .keys()
        .filter(|n| n.starts_with("i_"))
        .map(String::as_str)
        .collect();
    let pinned: Vec<&str> = IMPLEMENTATION_DEFINED.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        actual, pinned,
        "the table must list exactly the UTF-8 i_ files, sorted"
    );

    let mut mismatches = Vec::new();
    for &(name, expect) in IMPLEMENTATION_DEFINED {
        let text = &corpus.files[name];
        // The table's premise: the outcome is serde_json's.
        let serde = serde_json::from_str::<Value>(text).ok();
        assert_eq!(
            serde.is_some(),
            expect == Expect::Accept,
            "{name}: table disagrees with serde_json ({serde:?})"
        );
        let outcome = parse_every_way(name, text, ParserLimits::default());
        match (expect, &outcome, &serde) {
            (Expect::Accept, Ok(value), Some(expected)) => {
                assert_eq!(value, expected, "{name}");
                assert_eq!(value.to_string(), expected.to_string(), "{name}");
            }
            (Expect::Reject, Err(_), _) => {}
            _ => mismatches.push(format!("{name}: expected {expect:?}, got {outcome:?}")),
        }
    }
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}

#[test]
fn five_hundred_nested_arrays_hit_the_default_depth_limit() {
    let corpus = corpus();
    let text = &corpus.files["i_structure_500_nested_arrays.json"];
    let error = parse(ParserLimits::default(), [text.as_str()]).unwrap_err();
    assert_eq!(
        error,
        ArgParseError::LimitExceeded {
            limit: Limit::Depth,
            max: 128,
            offset: 128,
        }
    );
}

#[test]
fn five_hundred_nested_arrays_parse_with_a_raised_depth_limit() {
    let corpus = corpus();
    let text = &corpus.files["i_structure_500_nested_arrays.json"];
    let limits = ParserLimits {
        max_depth: 500,
        ..ParserLimits::default()
    };
    // Every fragment here is nested up to 500 deep, so one parse costs
    // O(depth²) allocations; a handful of splits keeps the test fast.
    let value = parse(limits, [text.as_str()]).unwrap_or_else(|error| panic!("{error:?}"));
    let splits = [0, 1, 250, 499, 500, 501, 750, 999, 1000];
    let per_char = text.char_indices().map(|(i, c)| &text[i..i + c.len_utf8()]);
    for chunks in splits
        .iter()
        .map(|&k| vec![&text[..k], &text[k..]])
        .chain(std::iter::once(per_char.collect()))
    {
        assert_eq!(parse(limits, chunks.iter().copied()), Ok(value.clone()));
    }

    let mut depth = 0;
    let mut current = &value;
    while let Value::Array(items) = current {
        depth += 1;
        match items.as_slice() {
            [] => break,
            [only] => current = only,
            _ => panic!("array at depth {depth} has {} items", items.len()),
        }
    }
    assert_eq!(depth, 500);
    assert_eq!(current, &Value::Array(Vec::new()));

    // One level more than allowed is refused.
    let limits = ParserLimits {
        max_depth: 499,
        ..ParserLimits::default()
    };
    assert!(matches!(
        parse(limits, [text.as_str()]),
        Err(ArgParseError::LimitExceeded {
            limit: Limit::Depth,
            max: 499,
            ..
        })
    ));
}
