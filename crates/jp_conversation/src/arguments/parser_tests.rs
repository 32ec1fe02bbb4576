#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Number, json};

use super::*;
use crate::FragmentAggregator;

fn s(text: &str) -> StreamFragment {
    StreamFragment::String(text.into())
}

fn num(text: &str) -> StreamFragment {
    StreamFragment::Scalar(Scalar::Number(text.parse::<Number>().unwrap()))
}

fn bool_(b: bool) -> StreamFragment {
    StreamFragment::Scalar(Scalar::Bool(b))
}

const DONE: StreamFragment = StreamFragment::Done;

fn empty(kind: EmptyKind) -> StreamFragment {
    StreamFragment::Empty(kind)
}

/// Pushes each chunk, then finishes; returns every fragment in order.
fn parse_chunks(chunks: &[&str]) -> Vec<StreamFragment> {
    let mut parser = IncrementalArgParser::new();
    let mut fragments = Vec::new();
    for chunk in chunks {
        fragments.extend(parser.push(chunk).unwrap());
    }
    fragments.extend(parser.finish().unwrap());
    fragments
}

/// Fragments returned by each push separately (the last entry is `finish`).
fn per_push(chunks: &[&str]) -> Vec<Vec<StreamFragment>> {
    let mut parser = IncrementalArgParser::new();
    let mut pushes: Vec<_> = chunks.iter().map(|c| parser.push(c).unwrap()).collect();
    pushes.push(parser.finish().unwrap());
    pushes
}

fn aggregate(fragments: Vec<StreamFragment>) -> serde_json::Value {
    let mut aggregator = FragmentAggregator::new();
    let mut root = None;
    for fragment in fragments {
        assert!(root.is_none(), "fragment after the root's Done");
        root = aggregator.push(fragment);
    }
    root.expect("the root's Done never arrived")
}

fn parse_error(chunks: &[&str]) -> ArgParseError {
    let mut parser = IncrementalArgParser::new();
    for chunk in chunks {
        if let Err(error) = parser.push(chunk) {
            return error;
        }
    }
    parser.finish().expect_err("input was accepted")
}

#[test]
fn rfd_example_create_file() {
    let fragments = parse_chunks(&[
        r#"{"path": "/tmp/foo.rs", "content": "fn main("#,
        r#") {...}"}"#,
    ]);
    assert_eq!(
        fragments,
        vec![
            s("/tmp/foo.rs").in_object("path"),
            DONE.in_object("path"),
            s("fn main(").in_object("content"),
            s(") {...}").in_object("content"),
            DONE.in_object("content"),
            DONE,
        ]
    );
}

#[test]
fn rfd_example_modify_file() {
    let fragments = parse_chunks(&[
        r#"{"path": "lib.rs", "patterns": [{"old": "lo"#,
        r#"ng...", "new": "also "#,
        r#"long..."}]}"#,
    ]);
    let pattern = |f: StreamFragment| f.in_array(0).in_object("patterns");
    assert_eq!(
        fragments,
        vec![
            s("lib.rs").in_object("path"),
            DONE.in_object("path"),
            pattern(s("lo").in_object("old")),
            pattern(s("ng...").in_object("old")),
            pattern(DONE.in_object("old")),
            pattern(s("also ").in_object("new")),
            pattern(s("long...").in_object("new")),
            pattern(DONE.in_object("new")),
            pattern(DONE),
            DONE.in_object("patterns"),
            DONE,
        ]
    );
}

#[test]
fn rfd_example_scalar_argument() {
    assert_eq!(
        parse_chunks(&[r#"{"dry_run": true}"#]),
        vec![
            bool_(true).in_object("dry_run"),
            DONE.in_object("dry_run"),
            DONE
        ]
    );
}

#[test]
fn rfd_example_mixed_arguments_with_escape() {
    let fragments = parse_chunks(&[
        r#"{"path":"/tmp/foo.rs","content":"fn main()"#,
        r#" {}\n","dry_run":false}"#,
    ]);
    assert_eq!(
        fragments,
        vec![
            s("/tmp/foo.rs").in_object("path"),
            DONE.in_object("path"),
            s("fn main()").in_object("content"),
            s(" {}\n").in_object("content"),
            DONE.in_object("content"),
            bool_(false).in_object("dry_run"),
            DONE.in_object("dry_run"),
            DONE,
        ]
    );
}

#[test]
fn root_string_streams_directly() {
    assert_eq!(
        per_push(&[r#""chu"#, r#"nk""#]),
        vec![vec![s("chu")], vec![s("nk"), DONE], vec![]]
    );
}

#[test]
fn root_scalars_wait_for_finish() {
    assert_eq!(
        per_push(&["12", "3"]),
        vec![vec![], vec![], vec![num("123"), DONE]]
    );
    assert_eq!(per_push(&[" true "]), vec![vec![], vec![bool_(true), DONE]]);
    assert_eq!(
        per_push(&["nu", "ll"]),
        vec![
            vec![],
            vec![],
            vec![StreamFragment::Scalar(Scalar::Null), DONE]
        ]
    );
    assert_eq!(aggregate(parse_chunks(&["-0"])), json!(-0.0));
    assert_eq!(
        aggregate(parse_chunks(&["1", "2345678901234567890123"])),
        serde_json::from_str::<serde_json::Value>("12345678901234567890123").unwrap()
    );
}

#[test]
fn numbers_and_literals_wait_for_their_terminator() {
    assert_eq!(
        per_push(&["[12", "3", ",tr", "ue", "]"]),
        vec![
            vec![],
            vec![],
            vec![num("123").in_array(0), DONE.in_array(0)],
            vec![],
            vec![bool_(true).in_array(1), DONE.in_array(1), DONE],
            vec![],
        ]
    );
    assert_eq!(
        per_push(&[r#"{"n":1.5e"#, "+3 ", "}"]),
        vec![
            vec![],
            vec![num("1.5e+3").in_object("n"), DONE.in_object("n")],
            vec![DONE],
            vec![],
        ]
    );
}

#[test]
fn keys_are_reported_only_when_complete() {
    assert_eq!(
        per_push(&[r#"{"pa"#, r#"th":"x"#, r#"y"}"#]),
        vec![
            vec![],
            vec![s("x").in_object("path")],
            vec![s("y").in_object("path"), DONE.in_object("path"), DONE],
            vec![],
        ]
    );
}

#[test]
fn empty_values_are_announced() {
    assert_eq!(
        parse_chunks(&[r#"{"a":[],"b":{},"c":""}"#]),
        vec![
            empty(EmptyKind::Array).in_object("a"),
            DONE.in_object("a"),
            empty(EmptyKind::Object).in_object("b"),
            DONE.in_object("b"),
            empty(EmptyKind::String).in_object("c"),
            DONE.in_object("c"),
            DONE,
        ]
    );
    assert_eq!(parse_chunks(&["[ ]"]), vec![empty(EmptyKind::Array), DONE]);
    assert_eq!(parse_chunks(&["{ }"]), vec![empty(EmptyKind::Object), DONE]);
    assert_eq!(
        parse_chunks(&["\"\""]),
        vec![empty(EmptyKind::String), DONE]
    );
}

#[test]
fn a_string_started_in_one_push_and_closed_in_the_next_is_not_empty() {
    assert_eq!(
        per_push(&[r#"["ab"#, r#"""#, "]"]),
        vec![
            vec![s("ab").in_array(0)],
            vec![DONE.in_array(0)],
            vec![DONE],
            vec![],
        ]
    );
}

#[test]
fn nested_arrays_of_objects() {
    let text = r#"[[{"a":1}],[{"b":[2,{}]}]]"#;
    assert_eq!(
        parse_chunks(&[text]),
        vec![
            num("1").in_object("a").in_array(0).in_array(0),
            DONE.in_object("a").in_array(0).in_array(0),
            DONE.in_array(0).in_array(0),
            DONE.in_array(0),
            num("2").in_array(0).in_object("b").in_array(0).in_array(1),
            DONE.in_array(0).in_object("b").in_array(0).in_array(1),
            empty(EmptyKind::Object)
                .in_array(1)
                .in_object("b")
                .in_array(0)
                .in_array(1),
            DONE.in_array(1).in_object("b").in_array(0).in_array(1),
            DONE.in_object("b").in_array(0).in_array(1),
            DONE.in_array(0).in_array(1),
            DONE.in_array(1),
            DONE,
        ]
    );
    assert_eq!(
        aggregate(parse_chunks(&[text])),
        serde_json::from_str::<serde_json::Value>(text).unwrap()
    );
}

#[test]
fn one_string_fragment_per_push_however_many_escapes() {
    let pushes = per_push(&[r#"["a\nb\u00e9\"c"#, r#"\\d"]"#]);
    assert_eq!(
        pushes,
        vec![
            vec![s("a\nbé\"c").in_array(0)],
            vec![s("\\d").in_array(0), DONE.in_array(0), DONE],
            vec![],
        ]
    );
}

/// Every escape the grammar has, split at every byte position (two pushes),
/// must decode to the same text with no empty fragment and at most one
/// fragment per push.
#[test]
fn escapes_split_at_every_position() {
    let text = r#"{"k\u0041\"":"a\"b\\c\/d\be\ff\ng\rh\ti\u00e9j\uD83D\uDE00k\u65e5"}"#;
    let expected = serde_json::from_str::<serde_json::Value>(text).unwrap();
    let decoded = "a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti\u{e9}j\u{1F600}k\u{65e5}";
    assert_eq!(expected["kA\""], decoded);
    for split in 1..text.len() {
        let pushes = per_push(&[&text[..split], &text[split..]]);
        let mut joined = String::new();
        for push in &pushes {
            let strings: Vec<_> = push
                .iter()
                .filter_map(|f| match f.leaf() {
                    StreamFragment::String(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            assert!(strings.len() <= 1, "split {split}: {push:?}");
            assert!(strings.iter().all(|t| !t.is_empty()), "split {split}");
            joined.extend(strings);
        }
        assert_eq!(joined, decoded, "split at {split}");
        assert_eq!(aggregate(pushes.concat()), expected, "split at {split}");
    }
}

/// A surrogate pair split between the two escapes, in every three-way cut.
#[test]
fn surrogate_pair_split_anywhere() {
    let text = r#""\uD834\uDD1E""#;
    for a in 1..text.len() {
        for b in a..text.len() {
            let value = aggregate(parse_chunks(&[&text[..a], &text[a..b], &text[b..]]));
            assert_eq!(value, json!("\u{1D11E}"), "cuts at {a} and {b}");
        }
    }
}

#[test]
fn multibyte_text_and_one_byte_pushes() {
    let text = r#"{"content":"é日本😀 \u00e9"}"#;
    let chunks: Vec<&str> = text
        .char_indices()
        .map(|(i, c)| &text[i..i + c.len_utf8()])
        .collect();
    let fragments = parse_chunks(&chunks);
    assert_eq!(
        aggregate(fragments),
        serde_json::from_str::<serde_json::Value>(text).unwrap()
    );
}

#[test]
fn invalid_input_names_the_byte_and_what_was_expected() {
    assert_eq!(
        parse_error(&["[1 2]"]).to_string(),
        "invalid JSON at byte 3: expected ',' or ']' after an array item, found '2'"
    );
    assert_eq!(
        parse_error(&[r#"{"a" 1}"#]).to_string(),
        "invalid JSON at byte 5: expected ':' after an object key, found '1'"
    );
    assert_eq!(
        parse_error(&["{", "'a':1}"]).to_string(),
        "invalid JSON at byte 1: expected a string key or '}', found '\\''"
    );
    assert_eq!(
        parse_error(&["[01]"]).to_string(),
        "invalid JSON at byte 2: expected '.', 'e', or the end of the number (no leading zeros), found '1'"
    );
    assert_eq!(
        parse_error(&["[tru", "e1]"]).to_string(),
        "invalid JSON at byte 5: expected ',' or ']' after an array item, found '1'"
    );
    assert_eq!(
        parse_error(&["\"a\tb\""]).to_string(),
        "invalid JSON at byte 2: expected a string character (control characters must be escaped), found U+0009"
    );
    assert_eq!(
        parse_error(&[r#""\x""#]).to_string(),
        "invalid JSON at byte 2: expected an escape character (one of \" \\ / b f n r t u), found 'x'"
    );
    assert_eq!(
        parse_error(&[r#""\uDC00""#]).to_string(),
        "invalid JSON at byte 6: expected a \\u escape that is not a lone low surrogate, found '0'"
    );
    assert_eq!(
        parse_error(&["{} x"]).to_string(),
        "invalid JSON at byte 3: expected the end of the input after the value, found 'x'"
    );
    assert_eq!(
        parse_error(&["[1,]"]).to_string(),
        "invalid JSON at byte 3: expected a JSON value, found ']'"
    );
    assert_eq!(
        parse_error(&["[1", "}"]).to_string(),
        "invalid JSON at byte 2: expected ',' or ']' after an array item, found '}'"
    );
    assert_eq!(
        parse_error(&["1]"]).to_string(),
        "invalid JSON at byte 1: expected the end of the input after the value, found ']'"
    );
    assert_eq!(
        parse_error(&["[1.", "]"]).to_string(),
        "invalid JSON at byte 3: expected a digit, found ']'"
    );
    assert_eq!(
        parse_error(&["[1e400]"]).to_string(),
        "number `1e400` at byte 1 is out of range"
    );
    let huge = format!("[1{}e400]", "0".repeat(5000));
    assert_eq!(
        parse_error(&[&huge]).to_string(),
        "number `100000000000000000000000... (5005 characters)` at byte 1 is out of range"
    );
}

#[test]
fn truncated_input_says_where() {
    let cases = [
        (
            r#"{"path":"src/lib.rs","patterns":[{"old":"pub fn"#,
            "inside a string at /patterns/0/old",
        ),
        (
            r#"{"patterns":[{"old":"x"},"#,
            "inside an array at /patterns",
        ),
        (r#"{"a/b":{"#, "inside an object at /a~1b"),
        (r#"{"a":"#, "before a value at /a"),
        (r#"{"ke"#, "inside an object key at (root)"),
        ("[-", "inside a number at /0"),
        ("[1", "inside an array at (root)"),
        ("[nul", "inside a literal at /0"),
        ("  ", "before any value at (root)"),
        ("", "before any value at (root)"),
        ("-", "inside a number at (root)"),
    ];
    for (text, where_) in cases {
        let error = parse_error(&[text]);
        assert!(error.is_truncated(), "{text}: {error}");
        assert_eq!(
            error.to_string(),
            format!("arguments are truncated: input ended {where_}"),
            "{text}"
        );
    }
}

#[test]
fn a_failed_parser_stays_failed() {
    let mut parser = IncrementalArgParser::new();
    assert_eq!(
        parser.push(r#"{"a":"x"#).unwrap(),
        vec![s("x").in_object("a")]
    );
    let error = parser.push("\u{1}").unwrap_err();
    assert_eq!(parser.push(r#"","b":1}"#), Err(error.clone()));
    assert_eq!(parser.finish(), Err(error));
}

#[test]
fn a_finished_parser_refuses_more_input() {
    let mut parser = IncrementalArgParser::new();
    parser.push("{}").unwrap();
    parser.finish().unwrap();
    assert_eq!(parser.push(" "), Err(ArgParseError::AlreadyFinished));
    assert_eq!(parser.finish(), Err(ArgParseError::AlreadyFinished));
}

#[test]
fn depth_limit_is_exact_and_configurable() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let at_limit = deep(ParserLimits::DEFAULT_MAX_DEPTH);
    assert!(parse_chunks(&[&at_limit]).last() == Some(&DONE));
    assert_eq!(
        parse_error(&[&deep(ParserLimits::DEFAULT_MAX_DEPTH + 1)]),
        ArgParseError::LimitExceeded {
            limit: Limit::Depth,
            max: 128,
            offset: 128
        }
    );
    let limits = ParserLimits {
        max_depth: 3,
        ..ParserLimits::default()
    };
    let mut parser = IncrementalArgParser::with_limits(limits);
    assert_eq!(
        parser.push(r#"{"a":[{"b":["#).unwrap_err().to_string(),
        "nesting depth limit of 3 exceeded at byte 11"
    );
}

#[test]
fn key_and_size_limits() {
    let limits = ParserLimits {
        max_key_len: 4,
        max_size: 32,
        ..ParserLimits::default()
    };
    let mut parser = IncrementalArgParser::with_limits(limits);
    assert!(parser.push(r#"{"abcd":1,"ab"#).is_ok());
    // The escape brings the key to 3 bytes, `d` to 4, `e` (byte 20) over.
    assert_eq!(
        parser.push(r#"\u0063de":2}"#).unwrap_err().to_string(),
        "key length (bytes) limit of 4 exceeded at byte 20"
    );

    let mut parser = IncrementalArgParser::with_limits(limits);
    assert!(parser.push(&format!("\"{}", "x".repeat(30))).is_ok());
    assert_eq!(
        parser.push("yy\"").unwrap_err(),
        ArgParseError::LimitExceeded {
            limit: Limit::Size,
            max: 32,
            offset: 32
        }
    );
}

#[test]
fn fragments_display_with_json_pointers() {
    let shown: Vec<String> = parse_chunks(&[r#"{"a/b":[{"x":"y"}],"n":-1}"#])
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        shown,
        vec![
            r#"/a~1b/0/x += "y""#,
            "/a~1b/0/x: done",
            "/a~1b/0: done",
            "/a~1b: done",
            "/n = -1",
            "/n: done",
            "(root): done",
        ]
    );
}

#[test]
fn skip_plain_stops_where_a_byte_at_a_time_scan_stops() {
    let naive = |bytes: &[u8], at: usize| {
        (at..bytes.len())
            .find(|&i| STRING_SPECIAL[usize::from(bytes[i])])
            .unwrap_or(bytes.len())
    };
    // Every byte value at every position of an 18-byte run of plain text
    // (two words and a byte tail), from every start.
    for special in 0..=255_u8 {
        for position in 0..18 {
            let mut bytes = b"plain text, \xc3\xa9\x7f ok".to_vec();
            bytes[position] = special;
            for start in 0..=bytes.len() {
                assert_eq!(
                    skip_plain(&bytes, start),
                    naive(&bytes, start),
                    "byte {special:#04x} at {position}, from {start}"
                );
            }
        }
    }
}

#[test]
fn whole_escapes_decode_as_the_state_machine_does() {
    // Each escape whole in one chunk (the fast path) and one byte per push
    // (the state machine): the same text, the same errors.
    let escapes = [
        r#"\""#,
        r"\\",
        r"\/",
        r"\b",
        r"\f",
        r"\n",
        r"\r",
        r"\t",
        r"\u0041",
        r"\u00e9",
        r"\uFFFF",
        r"\u001b",
        r"\uD83D\uDE00",
        r"\ud800\udc00",
        r"\uDBFF\uDFFF",
        r"\x",
        r"\u12G4",
        r"\uDC00",
        r"\uD800x",
        r"\uD800\n",
        r"\uD800\u0041",
        r"\uD800\uD800",
    ];
    for escape in escapes {
        let text = format!(r#"{{"k":"a{escape}b"}}"#);
        let bytewise: Vec<String> = text.chars().map(String::from).collect();
        let bytewise: Vec<&str> = bytewise.iter().map(String::as_str).collect();
        let expected = serde_json::from_str::<serde_json::Value>(&text);
        match expected {
            Ok(value) => {
                assert_eq!(aggregate(parse_chunks(&[&text])), value, "{escape}");
                assert_eq!(aggregate(parse_chunks(&bytewise)), value, "{escape}");
            }
            Err(_) => assert_eq!(parse_error(&[&text]), parse_error(&bytewise), "{escape}"),
        }
    }
}
