//! Property tests of the incremental argument parser against serde_json.
//!
//! The generators write JSON *text* (escapes, number spellings, whitespace,
//! duplicate keys) together with the [`Shape`] it must decode to, so the
//! tests control every byte the parser sees. The text is fed in random
//! chunks; the aggregated value must equal serde_json's, and the fragment
//! stream must satisfy the protocol, checked by [`Checker`], which shares no
//! code with the crate's aggregator.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_conversation::{
    ArgParseError, EmptyKind, FragmentAggregator, IncrementalArgParser, StreamFragment,
};
use jp_test_server::documents::TINY_VALUES as TINY;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde_json::{Map, Value};

// ---------------------------------------------------------------------------
// Generated documents
// ---------------------------------------------------------------------------

/// What a generated text decodes to, keeping every object entry (duplicates
/// included) in document order.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Scalar(Value),
    Str(String),
    Arr(Vec<Shape>),
    Obj(Vec<(String, Shape)>),
}

impl Shape {
    /// The value serde_json builds: the last duplicate wins, in the first
    /// one's position (`preserve_order`).
    fn to_value(&self) -> Value {
        match self {
            Self::Scalar(value) => value.clone(),
            Self::Str(text) => Value::String(text.clone()),
            Self::Arr(items) => Value::Array(items.iter().map(Self::to_value).collect()),
            Self::Obj(entries) => {
                let mut map = Map::new();
                for (key, value) in entries {
                    map.insert(key.clone(), value.to_value());
                }
                Value::Object(map)
            }
        }
    }

    /// Every repeated key as (key, JSON pointer of the entry), in the order
    /// the entries complete: an entry's nested duplicates come before it.
    fn duplicates(&self, pointer: &str, out: &mut Duplicates) {
        match self {
            Self::Scalar(_) | Self::Str(_) => {}
            Self::Arr(items) => {
                for (index, item) in items.iter().enumerate() {
                    item.duplicates(&format!("{pointer}/{index}"), out);
                }
            }
            Self::Obj(entries) => {
                for (position, (key, value)) in entries.iter().enumerate() {
                    let escaped = key.replace('~', "~0").replace('/', "~1");
                    let entry = format!("{pointer}/{escaped}");
                    value.duplicates(&entry, out);
                    if entries[..position].iter().any(|(k, _)| k == key) {
                        out.push((key.clone(), entry));
                    }
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Doc {
    text: String,
    shape: Shape,
}

/// JSON whitespace, usually none.
fn ws() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => Just(String::new()),
        1 => proptest::collection::vec(select(vec![' ', '\t', '\n', '\r']), 1..4)
            .prop_map(|chars| chars.into_iter().collect()),
    ]
}

/// `\uXXXX` with the hex digits' case picked by `style`.
fn unicode_escape(unit: u16, style: u8) -> String {
    let hex = format!("{unit:04x}");
    let digits: String = hex
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if (style >> (4 + i)) & 1 == 1 {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect();
    format!("\\u{digits}")
}

/// One char of a JSON string literal, spelled one of the ways `style` picks.
fn encode_char(c: char, style: u8) -> String {
    let escape = || {
        let mut units = [0; 2];
        c.encode_utf16(&mut units)
            .iter()
            .map(|&unit| unicode_escape(unit, style))
            .collect()
    };
    let short = match c {
        '\n' => Some("\\n"),
        '\t' => Some("\\t"),
        '\r' => Some("\\r"),
        '\u{8}' => Some("\\b"),
        '\u{c}' => Some("\\f"),
        '"' => Some("\\\""),
        '\\' => Some("\\\\"),
        '/' => Some("\\/"),
        _ => None,
    };
    let must_escape = c < ' ' || c == '"' || c == '\\';
    let spelling = style % 4;
    match short {
        Some(short) if spelling == 0 || (spelling == 1 && must_escape) => short.to_owned(),
        _ if spelling == 3 || must_escape => escape(),
        _ => c.to_string(),
    }
}

/// Chars for string contents: mostly ASCII, plenty of chars that need
/// escaping, and 2-, 3- and 4-byte UTF-8.
fn string_char() -> impl Strategy<Value = char> {
    prop_oneof![
        6 => proptest::char::range(' ', '~'),
        3 => select(vec![
            '"', '\\', '/', '\n', '\t', '\r', '\u{8}', '\u{c}', '\u{0}', '\u{1}', '\u{1f}',
            '\u{7f}', 'é', '€', '😀', '\u{2028}', '\u{ffff}', '\u{10ffff}',
        ]),
        1 => proptest::char::range('\u{0}', '\u{1f}'),
        1 => proptest::char::range('\u{80}', '\u{7ff}'),
        1 => proptest::char::range('\u{800}', '\u{d7ff}'),
        1 => proptest::char::range('\u{e000}', '\u{ffff}'),
        1 => proptest::char::range('\u{10000}', '\u{10ffff}'),
    ]
}

/// A string literal with its decoded text.
fn string_from(
    chars: impl Strategy<Value = char> + 'static,
    len: std::ops::Range<usize>,
) -> BoxedStrategy<(String, String)> {
    proptest::collection::vec((chars, any::<u8>()), len)
        .prop_map(|pieces| {
            let decoded = pieces.iter().map(|(c, _)| *c).collect();
            let body: String = pieces
                .iter()
                .map(|&(c, style)| encode_char(c, style))
                .collect();
            (format!("\"{body}\""), decoded)
        })
        .boxed()
}

fn string() -> BoxedStrategy<(String, String)> {
    prop_oneof![
        2 => string_from(string_char(), 0..1),
        8 => string_from(string_char(), 1..10),
        1 => string_from(string_char(), 10..60),
    ]
    .boxed()
}

/// Object keys: often from a tiny pool (so duplicates happen, also spelled
/// differently, like `"a"` and `"\u0061"`), otherwise like string values.
fn key() -> BoxedStrategy<(String, String)> {
    prop_oneof![
        2 => string_from(select(vec!['a', 'b', '/', '~']), 0..2),
        3 => string(),
    ]
    .boxed()
}

/// Number text of every shape JSON allows, within f64's range.
fn number() -> impl Strategy<Value = String> {
    let int = prop_oneof![
        2 => Just("0".to_owned()),
        2 => (1_u8..10).prop_map(|d| d.to_string()),
        2 => any::<u64>().prop_map(|n| n.to_string()),
        1 => "[1-9][0-9]{19,28}",
        1 => select(vec![
            "9223372036854775807",
            "9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
        ])
        .prop_map(str::to_owned),
    ];
    let frac = proptest::option::weighted(0.3, "[0-9]{1,12}");
    let exp = proptest::option::weighted(
        0.3,
        (
            select(vec!["e", "E"]),
            select(vec!["", "+", "-"]),
            0_u32..250,
            0_usize..3,
        ),
    );
    (any::<bool>(), int, frac, exp).prop_map(|(negative, int, frac, exp)| {
        let mut text = String::new();
        if negative {
            text.push('-');
        }
        text.push_str(&int);
        if let Some(frac) = frac {
            text.push('.');
            text.push_str(&frac);
        }
        if let Some((e, sign, value, zeros)) = exp {
            text.push_str(&format!("{e}{sign}{}{value}", "0".repeat(zeros)));
        }
        text
    })
}

fn scalar() -> impl Strategy<Value = Doc> {
    prop_oneof![
        1 => select(vec!["true", "false", "null"]).prop_map(str::to_owned),
        3 => number(),
    ]
    .prop_map(|text| {
        let value = serde_json::from_str(&text).expect("generated scalar is valid");
        Doc {
            text,
            shape: Shape::Scalar(value),
        }
    })
}

fn leaf() -> impl Strategy<Value = Doc> {
    prop_oneof![
        1 => scalar(),
        1 => string().prop_map(|(text, decoded)| Doc { text, shape: Shape::Str(decoded) }),
    ]
}

fn array(inner: BoxedStrategy<Doc>) -> impl Strategy<Value = Doc> {
    (ws(), proptest::collection::vec((ws(), inner, ws()), 0..5)).prop_map(|(empty, items)| {
        let mut text = String::from("[");
        if items.is_empty() {
            text.push_str(&empty);
        }
        let mut shapes = Vec::new();
        for (i, (before, item, after)) in items.into_iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&before);
            text.push_str(&item.text);
            text.push_str(&after);
            shapes.push(item.shape);
        }
        text.push(']');
        Doc {
            text,
            shape: Shape::Arr(shapes),
        }
    })
}

fn object(inner: BoxedStrategy<Doc>) -> impl Strategy<Value = Doc> {
    let entry = (ws(), key(), ws(), ws(), inner, ws());
    (ws(), proptest::collection::vec(entry, 0..5)).prop_map(|(empty, entries)| {
        let mut text = String::from("{");
        if entries.is_empty() {
            text.push_str(&empty);
        }
        let mut shapes = Vec::new();
        for (i, (ws1, (key_text, key), ws2, ws3, value, ws4)) in entries.into_iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format!("{ws1}{key_text}{ws2}:{ws3}{}{ws4}", value.text));
            shapes.push((key, value.shape));
        }
        text.push('}');
        Doc {
            text,
            shape: Shape::Obj(shapes),
        }
    })
}

/// A whole document: any root, at most 6 containers deep, with whitespace
/// around it.
fn document() -> impl Strategy<Value = Doc> {
    let nested = leaf().prop_recursive(6, 48, 5, |inner| {
        prop_oneof![array(inner.clone()), object(inner)]
    });
    // Scalars and strings at the root too, not only inside containers.
    let value = prop_oneof![1 => leaf(), 4 => nested];
    (ws(), value, ws()).prop_map(|(before, doc, after)| Doc {
        text: format!("{before}{}{after}", doc.text),
        shape: doc.shape,
    })
}

// ---------------------------------------------------------------------------
// Chunking
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Chunking {
    /// One char per push.
    PerChar,
    /// Cut at these char boundaries (repeats make empty chunks; none is the
    /// whole text in one push).
    Cuts(Vec<Index>),
}

fn chunking() -> impl Strategy<Value = Chunking> {
    prop_oneof![
        1 => Just(Chunking::PerChar),
        4 => proptest::collection::vec(any::<Index>(), 0..12).prop_map(Chunking::Cuts),
    ]
}

/// Char boundaries of `text`, from 0 to `text.len()` inclusive.
fn boundaries(text: &str) -> Vec<usize> {
    text.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect()
}

fn chunks<'a>(text: &'a str, chunking: &Chunking) -> Vec<&'a str> {
    match chunking {
        Chunking::PerChar => text
            .char_indices()
            .map(|(i, c)| &text[i..i + c.len_utf8()])
            .collect(),
        Chunking::Cuts(cuts) => {
            let boundaries = boundaries(text);
            let mut points: Vec<usize> = cuts.iter().map(|cut| *cut.get(&boundaries)).collect();
            points.sort_unstable();
            let mut out = Vec::new();
            let mut start = 0;
            for point in points.into_iter().chain(std::iter::once(text.len())) {
                out.push(&text[start..point]);
                start = point;
            }
            out
        }
    }
}

// ---------------------------------------------------------------------------
// Running the parser
// ---------------------------------------------------------------------------

struct Run {
    /// Fragments of each push, then of `finish` (if it was reached).
    pushes: Vec<Vec<StreamFragment>>,
    result: Result<(), ArgParseError>,
}

fn run(chunks: &[&str]) -> Run {
    let mut parser = IncrementalArgParser::new();
    let mut pushes = Vec::new();
    let result = chunks
        .iter()
        .try_for_each(|chunk| parser.push(chunk).map(|f| pushes.push(f)))
        .and_then(|()| parser.finish().map(|f| pushes.push(f)));
    if let Err(error) = &result {
        // A failed parser keeps failing the same way.
        assert_eq!(parser.push("1").as_ref(), Err(error));
        assert_eq!(parser.finish().as_ref(), Err(error));
    }
    Run { pushes, result }
}

/// Duplicate keys as (key, JSON pointer of the entry).
type Duplicates = Vec<(String, String)>;

/// What the crate's aggregator makes of a run: the root value (`None` if it
/// never completed) and the duplicate keys as (key, pointer).
fn aggregate(run: &Run) -> Result<(Option<Value>, Duplicates), String> {
    let mut aggregator = FragmentAggregator::new();
    let mut root = None;
    for fragment in run.pushes.iter().flatten() {
        if root.is_some() {
            return Err(format!(
                "fragment {fragment:?} after the root value completed"
            ));
        }
        root = aggregator.push(fragment.clone());
        if let Some(error) = aggregator.error() {
            return Err(format!("aggregator rejected {fragment:?}: {error}"));
        }
    }
    let duplicates = aggregator
        .duplicate_keys()
        .iter()
        .map(|d| (d.key.clone(), d.pointer.as_str().to_owned()))
        .collect();
    Ok((root, duplicates))
}

// ---------------------------------------------------------------------------
// Independent stream checker
// ---------------------------------------------------------------------------

#[derive(Debug)]
enum Content {
    /// Opened by a fragment addressed to it or below it; no content yet.
    New,
    Scalar(Value),
    Empty(EmptyKind),
    Str {
        text: String,
        last_push: usize,
    },
    Arr(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

#[derive(Debug)]
struct Node {
    content: Content,
    done: bool,
}

impl Node {
    fn new() -> Self {
        Self {
            content: Content::New,
            done: false,
        }
    }

    fn apply(&mut self, fragment: &StreamFragment, push: usize, path: &str) -> Result<(), String> {
        if self.done {
            return Err(format!("{path}: {fragment:?} after its Done"));
        }
        match fragment {
            StreamFragment::ArrayItem { index, value } => {
                if matches!(self.content, Content::New) {
                    self.content = Content::Arr(Vec::new());
                }
                let Content::Arr(items) = &mut self.content else {
                    return Err(format!("{path}: array item in {:?}", self.content));
                };
                let path = format!("{path}/{index}");
                let len = items.len();
                match items.last_mut() {
                    Some(open) if !open.done => {
                        if *index != len - 1 {
                            return Err(format!("{path}: item {} is still open", len - 1));
                        }
                        open.apply(value, push, &path)
                    }
                    _ => {
                        if *index != len {
                            return Err(format!("{path}: expected item {len}"));
                        }
                        let mut item = Self::new();
                        item.apply(value, push, &path)?;
                        items.push(item);
                        Ok(())
                    }
                }
            }
            StreamFragment::ObjectEntry { key, value } => {
                if matches!(self.content, Content::New) {
                    self.content = Content::Obj(Vec::new());
                }
                let Content::Obj(entries) = &mut self.content else {
                    return Err(format!("{path}: object entry in {:?}", self.content));
                };
                let path = format!("{path}/{key}");
                match entries.last_mut() {
                    Some((open_key, open)) if !open.done => {
                        if open_key != key {
                            return Err(format!("{path}: entry {open_key:?} is still open"));
                        }
                        open.apply(value, push, &path)
                    }
                    _ => {
                        let mut entry = Self::new();
                        entry.apply(value, push, &path)?;
                        entries.push((key.clone(), entry));
                        Ok(())
                    }
                }
            }
            StreamFragment::Scalar(scalar) => {
                self.expect_new(fragment, path)?;
                self.content = Content::Scalar(Value::from(scalar.clone()));
                Ok(())
            }
            StreamFragment::Empty(kind) => {
                self.expect_new(fragment, path)?;
                self.content = Content::Empty(*kind);
                Ok(())
            }
            StreamFragment::String(chunk) => {
                if chunk.is_empty() {
                    return Err(format!("{path}: empty String fragment"));
                }
                match &mut self.content {
                    Content::New => {
                        self.content = Content::Str {
                            text: chunk.clone(),
                            last_push: push,
                        };
                        Ok(())
                    }
                    Content::Str { text, last_push } if *last_push != push => {
                        text.push_str(chunk);
                        *last_push = push;
                        Ok(())
                    }
                    Content::Str { .. } => {
                        Err(format!("{path}: two String fragments in push {push}"))
                    }
                    other => Err(format!("{path}: String fragment in {other:?}")),
                }
            }
            StreamFragment::Done => {
                match &self.content {
                    Content::New => return Err(format!("{path}: Done before any content")),
                    Content::Arr(items) if items.last().is_some_and(|i| !i.done) => {
                        return Err(format!("{path}: Done with an item still open"));
                    }
                    Content::Obj(entries) if entries.last().is_some_and(|(_, e)| !e.done) => {
                        return Err(format!("{path}: Done with an entry still open"));
                    }
                    _ => {}
                }
                self.done = true;
                Ok(())
            }
        }
    }

    fn expect_new(&self, fragment: &StreamFragment, path: &str) -> Result<(), String> {
        match self.content {
            Content::New => Ok(()),
            _ => Err(format!("{path}: {fragment:?} in {:?}", self.content)),
        }
    }

    fn shape(&self) -> Shape {
        assert!(self.done);
        match &self.content {
            Content::New => unreachable!("a done value has content"),
            Content::Scalar(value) => Shape::Scalar(value.clone()),
            Content::Empty(EmptyKind::String) => Shape::Str(String::new()),
            Content::Empty(EmptyKind::Array) => Shape::Arr(Vec::new()),
            Content::Empty(EmptyKind::Object) => Shape::Obj(Vec::new()),
            Content::Str { text, .. } => Shape::Str(text.clone()),
            Content::Arr(items) => Shape::Arr(items.iter().map(Self::shape).collect()),
            Content::Obj(entries) => Shape::Obj(
                entries
                    .iter()
                    .map(|(key, value)| (key.clone(), value.shape()))
                    .collect(),
            ),
        }
    }
}

/// Checks the fragment stream of `run` against the protocol; returns the
/// shape it describes if the root value was completed.
fn check_stream(run: &Run) -> Result<Option<Shape>, String> {
    let mut root = Node::new();
    for (push, fragments) in run.pushes.iter().enumerate() {
        for fragment in fragments {
            root.apply(fragment, push, "")?;
        }
    }
    Ok(root.done.then(|| root.shape()))
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// Any valid document in any chunking: the aggregated value is
    /// serde_json's, the stream is well formed and describes exactly the
    /// generated entries, and duplicate keys are reported iff generated.
    #[test]
    fn streamed_documents_match_serde_json(doc in document(), chunking in chunking()) {
        let expected: Value = serde_json::from_str(&doc.text).expect("generated text is JSON");
        prop_assert_eq!(&doc.shape.to_value(), &expected, "generator's shape disagrees with serde_json");

        let chunks = chunks(&doc.text, &chunking);
        let run = run(&chunks);
        prop_assert_eq!(&run.result, &Ok(()), "chunks: {:?}", chunks);

        let shape = check_stream(&run).map_err(|e| TestCaseError::fail(format!("{e}; chunks: {chunks:?}")))?;
        prop_assert_eq!(shape.as_ref(), Some(&doc.shape), "chunks: {:?}", chunks);

        let (value, duplicates) = aggregate(&run).map_err(TestCaseError::fail)?;
        let value = value.expect("root value completed");
        prop_assert_eq!(&value, &expected, "chunks: {:?}", chunks);
        prop_assert_eq!(value.to_string(), expected.to_string(), "chunks: {:?}", chunks);

        let mut expected_duplicates = Vec::new();
        doc.shape.duplicates("", &mut expected_duplicates);
        prop_assert_eq!(duplicates, expected_duplicates);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Cutting a document anywhere before its end leaves it truncated, unless
    /// the prefix happens to be a complete document itself (`12` of `123`).
    #[test]
    fn truncated_documents_fail_as_truncated(doc in document(), split in any::<Index>()) {
        let text = &doc.text;
        let end = text.trim_end_matches([' ', '\t', '\n', '\r']).len();
        let boundaries = boundaries(text);
        for (i, &k) in boundaries.iter().enumerate().filter(|&(_, &k)| k < end) {
            let prefix = &text[..k];
            let at = boundaries[split.index(i + 1)];
            let run = run(&[&prefix[..at], &prefix[at..]]);
            match serde_json::from_str::<Value>(prefix) {
                Ok(expected) => {
                    prop_assert_eq!(&run.result, &Ok(()), "prefix {:?}", prefix);
                    let (value, _) = aggregate(&run).map_err(TestCaseError::fail)?;
                    prop_assert_eq!(value, Some(expected), "prefix {:?}", prefix);
                }
                Err(error) => {
                    prop_assert!(error.is_eof(), "serde_json: {error} for prefix {prefix:?}");
                    prop_assert!(
                        matches!(run.result, Err(ArgParseError::Truncated { .. })),
                        "prefix {:?}: {:?}", prefix, run.result
                    );
                    check_stream(&run).map_err(|e| TestCaseError::fail(format!("{e}; prefix {prefix:?}")))?;
                }
            }
        }
    }

    /// Texts one to three chars away from a valid document: the parser
    /// accepts exactly what serde_json accepts, with the same value.
    #[test]
    fn mutated_documents_agree_with_serde_json(
        doc in document(),
        mutations in proptest::collection::vec(mutation(), 1..4),
        chunking in chunking(),
    ) {
        let text = mutations.iter().fold(doc.text, |text, m| m.apply(&text));
        let chunks = chunks(&text, &chunking);
        let run = run(&chunks);
        let shape = check_stream(&run)
            .map_err(|e| TestCaseError::fail(format!("{e}; chunks: {chunks:?}")))?;
        match (serde_json::from_str::<Value>(&text), &run.result) {
            (Ok(expected), Ok(())) => {
                let (value, _) = aggregate(&run).map_err(TestCaseError::fail)?;
                prop_assert_eq!(value.as_ref(), Some(&expected), "text {:?}", text);
                prop_assert_eq!(shape.map(|s| s.to_value()), Some(expected), "text {:?}", text);
            }
            (Err(_), Err(
                ArgParseError::Invalid { .. }
                | ArgParseError::Truncated { .. }
                | ArgParseError::NumberOutOfRange { .. },
            )) => {}
            (serde, parser) => {
                prop_assert!(false, "text {:?} chunks {:?}: serde_json {:?}, parser {:?}", text, chunks, serde, parser);
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Insert(Index, char),
    Delete(Index),
    Replace(Index, char),
}

impl Mutation {
    fn apply(&self, text: &str) -> String {
        let boundaries = boundaries(text);
        let mut out = text.to_owned();
        match self {
            Self::Insert(at, c) => out.insert(*at.get(&boundaries), *c),
            Self::Delete(at) | Self::Replace(at, _) => {
                // Where a char starts: any boundary but the end.
                let starts = &boundaries[..boundaries.len() - 1];
                if !starts.is_empty() {
                    let start = *at.get(starts);
                    out.remove(start);
                    if let Self::Replace(_, c) = self {
                        out.insert(start, *c);
                    }
                }
            }
        }
        out
    }
}

fn mutation_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => select(vec![
            '{', '}', '[', ']', ',', ':', '"', '\\', '/', '0', '1', '9', '-', '+', '.', 'e', 'E',
            'u', 'D', '8', 'b', 't', 'f', 'n', 'r', 'l', 'a', 's', ' ', '\n', '\u{0}', '\u{1f}',
            '\u{7f}', '\u{a0}', '\u{feff}',
        ]),
        1 => any::<char>(),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), mutation_char()).prop_map(|(at, c)| Mutation::Insert(at, c)),
        any::<Index>().prop_map(Mutation::Delete),
        (any::<Index>(), mutation_char()).prop_map(|(at, c)| Mutation::Replace(at, c)),
    ]
}

/// The checker is only worth something if it fails on broken streams.
#[test]
fn checker_rejects_malformed_streams() {
    use StreamFragment::{Done, Empty, String as Str};

    let s = |text: &str| Str(text.to_owned());
    let one = || StreamFragment::Scalar(jp_conversation::Scalar::Null);
    let good: Vec<Vec<StreamFragment>> = vec![
        vec![s("a").in_object("k")],
        vec![s("b").in_object("k"), Done.in_object("k")],
        vec![Empty(EmptyKind::Array).in_array(0).in_object("l")],
        vec![
            Done.in_array(0).in_object("l"),
            one().in_array(1).in_object("l"),
            Done.in_array(1).in_object("l"),
            Done.in_object("l"),
            Done,
        ],
    ];
    let shape = check_stream(&Run {
        pushes: good,
        result: Ok(()),
    });
    assert_eq!(
        shape,
        Ok(Some(Shape::Obj(vec![
            ("k".to_owned(), Shape::Str("ab".to_owned())),
            (
                "l".to_owned(),
                Shape::Arr(vec![Shape::Arr(Vec::new()), Shape::Scalar(Value::Null)])
            ),
        ])))
    );

    let bad: Vec<(&str, Vec<Vec<StreamFragment>>)> = vec![
        ("empty String", vec![vec![s(""), Done]]),
        ("two Strings in one push", vec![vec![s("a"), s("b"), Done]]),
        ("Done before content", vec![vec![Done]]),
        (
            "Empty after content",
            vec![vec![s("a")], vec![Empty(EmptyKind::String)]],
        ),
        ("second Done", vec![vec![one(), Done, Done]]),
        ("after root Done", vec![vec![one(), Done], vec![one()]]),
        ("index gap", vec![vec![one().in_array(1)]]),
        (
            "index repeated",
            vec![vec![one().in_array(0), Done.in_array(0), one().in_array(0)]],
        ),
        (
            "key changed while open",
            vec![vec![s("a").in_object("k"), Done.in_object("j")]],
        ),
        (
            "container closed with open child",
            vec![vec![s("a").in_array(0), Done]],
        ),
        (
            "array item in object",
            vec![vec![one().in_object("k"), one().in_array(0)]],
        ),
        ("String in scalar", vec![vec![one(), s("a")]]),
    ];
    for (what, pushes) in bad {
        let result = check_stream(&Run {
            pushes,
            result: Ok(()),
        });
        assert!(result.is_err(), "{what}: accepted as {result:?}");
    }
}

/// Around the default depth limit. `max_depth` 128 allows 128 nested
/// containers; serde_json's recursion limit of 128 allows only 127, so at
/// exactly 128 the two differ (see `ParserLimits::DEFAULT_MAX_DEPTH`). Below
/// that they agree on the value, above it both refuse.
#[test]
fn depth_limit_around_serde_json_recursion_limit() {
    for depth in 120..=131 {
        for (open, close) in [("[", "]"), ("{\"k\":", "}"), ("[{\"\":", "}]")] {
            let per_level = open.matches(['[', '{']).count();
            if depth % per_level != 0 {
                continue;
            }
            let levels = depth / per_level;
            let text = format!("{}0{}", open.repeat(levels), close.repeat(levels));
            let serde = serde_json::from_str::<Value>(&text);
            assert_eq!(serde.is_ok(), depth <= 127, "serde_json at depth {depth}");
            for chunking in [Chunking::Cuts(Vec::new()), Chunking::PerChar] {
                let run = run(&chunks(&text, &chunking));
                if depth <= 128 {
                    assert_eq!(run.result, Ok(()), "depth {depth} {open}");
                    let (value, _) = aggregate(&run).unwrap();
                    let value = value.unwrap();
                    if let Ok(expected) = &serde {
                        assert_eq!(&value, expected, "depth {depth} {open}");
                    }
                } else {
                    assert_eq!(
                        run.result,
                        Err(ArgParseError::LimitExceeded {
                            limit: jp_conversation::Limit::Depth,
                            max: 128,
                            // The 129th container's opening bracket.
                            offset: text.match_indices(['[', '{']).nth(128).unwrap().0,
                        }),
                        "depth {depth} {open}"
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The borrowing API (issue 14)
// ---------------------------------------------------------------------------

/// The fragments `push_with` and `finish_with` hand out, made owned.
fn run_with(chunks: &[&str]) -> (Vec<Vec<StreamFragment>>, Result<(), ArgParseError>) {
    let mut parser = IncrementalArgParser::new();
    let mut pushes = Vec::new();
    let result = chunks
        .iter()
        .try_for_each(|chunk| {
            let mut out = Vec::new();
            let pushed = parser.push_with(chunk, |f| out.push(f.to_fragment()));
            pushes.push(out);
            pushed
        })
        .and_then(|()| {
            let mut out = Vec::new();
            let finished = parser.finish_with(|f| out.push(f.to_fragment()));
            pushes.push(out);
            finished
        });
    (pushes, result)
}

/// The value `push_fragment` builds from the borrowed fragments of
/// `push_with`, the way jp consumes them.
fn aggregate_with(chunks: &[&str]) -> Result<Option<Value>, ArgParseError> {
    let mut parser = IncrementalArgParser::new();
    let mut aggregator = FragmentAggregator::new();
    let mut root = None;
    for chunk in chunks {
        parser.push_with(chunk, |f| {
            if let Some(value) = aggregator.push_fragment(f) {
                root = Some(value);
            }
        })?;
    }
    parser.finish_with(|f| {
        if let Some(value) = aggregator.push_fragment(f) {
            root = Some(value);
        }
    })?;
    assert_eq!(aggregator.error(), None);
    Ok(root)
}

/// Hostile arguments as issue 14 describes them: tiny values in one array
/// nested `depth` containers deep, `count` of them, cycling through `items`.
fn adversarial(depth: usize, count: usize, items: &[&str]) -> String {
    let mut text = String::new();
    let mut close = Vec::new();
    for level in 1..depth {
        if level % 2 == 1 {
            text.push_str("{\"k\":");
            close.push('}');
        } else {
            text.push('[');
            close.push(']');
        }
    }
    text.push('[');
    close.push(']');
    let values: Vec<&str> = items.iter().cycle().take(count).copied().collect();
    text.push_str(&values.join(","));
    text.extend(close.iter().rev());
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// `push_with` hands out exactly the fragments `push` returns, push by
    /// push (RFD 043's protocol is unchanged), and `push_fragment` builds
    /// serde_json's value from them.
    #[test]
    fn borrowed_fragments_are_the_owned_ones(doc in document(), chunking in chunking()) {
        let expected: Value = serde_json::from_str(&doc.text).expect("generated text is JSON");
        let chunks = chunks(&doc.text, &chunking);
        let owned = run(&chunks);
        let (borrowed, result) = run_with(&chunks);
        prop_assert_eq!(&result, &owned.result);
        prop_assert_eq!(&borrowed, &owned.pushes);
        prop_assert_eq!(aggregate_with(&chunks), Ok(Some(expected)));
    }

    /// Tiny values nested 100 to 127 deep (serde_json's limit), pushed
    /// whole as Ollama sends them: the value is serde_json's, through the
    /// borrowing API and through the owned one.
    #[test]
    fn adversarial_documents_pushed_whole_match_serde_json(
        depth in 100usize..=126,
        count in 1usize..400,
        first in 0usize..TINY.len(),
    ) {
        let items: Vec<&str> = TINY.iter().cycle().skip(first).take(TINY.len()).copied().collect();
        let text = adversarial(depth, count, &items);
        let expected: Value = serde_json::from_str(&text).expect("generated text is JSON");
        prop_assert_eq!(aggregate_with(&[text.as_str()]), Ok(Some(expected.clone())));
        let (value, _) = aggregate(&run(&[text.as_str()])).map_err(TestCaseError::fail)?;
        prop_assert_eq!(value, Some(expected));
    }
}

/// A 200 KB adversarial document, 120 deep, pushed whole: serde_json's
/// value through the borrowing API.
#[test]
fn a_large_adversarial_document_pushed_whole_matches_serde_json() {
    let text = adversarial(120, 45_000, &TINY);
    assert!(text.len() > 200_000, "{}", text.len());
    let expected: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(aggregate_with(&[text.as_str()]), Ok(Some(expected)));
}
