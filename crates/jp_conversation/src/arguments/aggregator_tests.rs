#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;
use crate::{EmptyKind, IncrementalArgParser, Scalar};

fn fragments(text: &str) -> Vec<StreamFragment> {
    let mut parser = IncrementalArgParser::new();
    let mut out = parser.push(text).unwrap();
    out.extend(parser.finish().unwrap());
    out
}

#[test]
fn so_far_holds_what_arrived_of_the_open_argument() {
    let text = r#"{"path":"a.rs","patterns":[{"old":"x","new":"y"},{"old":"li"#;
    let mut parser = IncrementalArgParser::new();
    let mut aggregator = FragmentAggregator::new();
    assert_eq!(aggregator.so_far(), None);
    for fragment in parser.push(text).unwrap() {
        aggregator.push(fragment);
    }
    assert_eq!(
        aggregator.so_far(),
        Some(ArgumentsSoFar {
            arguments:
                json!({"path": "a.rs", "patterns": [{"old": "x", "new": "y"}, {"old": "li"}]})
                    .as_object()
                    .unwrap()
                    .clone(),
            streaming: Some("patterns".into()),
            complete: false,
        })
    );
    // Between two arguments, none is streaming.
    let mut aggregator = FragmentAggregator::new();
    for fragment in fragments(r#"{"path":"a.rs","n":1}"#) {
        if matches!(fragment, StreamFragment::ObjectEntry { ref key, .. } if key == "n") {
            assert_eq!(
                aggregator.so_far().map(|s| (s.arguments, s.streaming)),
                Some((json!({"path": "a.rs"}).as_object().unwrap().clone(), None))
            );
            break;
        }
        aggregator.push(fragment);
    }
}

#[test]
fn each_top_level_argument_is_available_when_its_done_arrives() {
    let mut aggregator = FragmentAggregator::new();
    let mut seen = Vec::new();
    for fragment in fragments(r#"{"path":"a.rs","opts":{"x":[1]},"n":2}"#) {
        let root = aggregator.push(fragment);
        if let Some((key, value)) = aggregator.completed_argument() {
            seen.push((key.to_owned(), value.clone()));
        }
        if let Some(root) = root {
            assert_eq!(root, json!({"path": "a.rs", "opts": {"x": [1]}, "n": 2}));
        }
    }
    assert_eq!(
        seen,
        vec![
            ("path".to_owned(), json!("a.rs")),
            ("opts".to_owned(), json!({"x": [1]})),
            ("n".to_owned(), json!(2)),
        ]
    );
    assert!(aggregator.is_done());
}

#[test]
fn partial_arguments_are_visible_while_the_root_is_open() {
    let mut aggregator = FragmentAggregator::new();
    let mut parser = IncrementalArgParser::new();
    for fragment in parser.push(r#"{"path":"a.rs","content":"par"#).unwrap() {
        aggregator.push(fragment);
    }
    assert_eq!(aggregator.completed_argument(), None);
    let arguments = aggregator.arguments().unwrap();
    assert_eq!(
        serde_json::Value::Object(arguments.clone()),
        json!({"path": "a.rs"})
    );
}

#[test]
fn duplicates_keep_serde_json_semantics_and_are_reported() {
    let text = r#"{"a":1,"b":{"c":[{"d":1,"d":2}]},"a":3}"#;
    let mut aggregator = FragmentAggregator::new();
    let mut root = None;
    for fragment in fragments(text) {
        root = aggregator.push(fragment).or(root);
    }
    let expected: Value = serde_json::from_str(text).unwrap();
    assert_eq!(root, Some(expected));
    let reported: Vec<_> = aggregator
        .duplicate_keys()
        .iter()
        .map(|d| (d.key.as_str(), d.pointer.as_str()))
        .collect();
    assert_eq!(reported, vec![("d", "/b/c/0/d"), ("a", "/a")]);
}

fn rejects(stream: Vec<StreamFragment>) -> AggregateError {
    let mut aggregator = FragmentAggregator::new();
    for fragment in stream {
        assert_eq!(aggregator.push(fragment), None);
    }
    aggregator.error().cloned().unwrap()
}

#[test]
fn fragments_that_do_not_continue_the_stream_are_rejected() {
    let s = |t: &str| StreamFragment::String(t.into());
    assert_eq!(
        rejects(vec![StreamFragment::Done]).to_string(),
        "fragment 0 does not continue the value stream: a Done for a value that never started"
    );
    assert_eq!(
        rejects(vec![s("x").in_object("a"), s("y").in_object("b")]).reason,
        "an entry for a key that is not the open one"
    );
    assert_eq!(
        rejects(vec![s("x").in_array(1)]).reason,
        "an array whose first item is not item 0"
    );
    assert_eq!(
        rejects(vec![
            StreamFragment::Empty(EmptyKind::Array).in_array(0),
            StreamFragment::Done.in_array(0),
            s("x").in_array(0),
        ])
        .reason,
        "an array item out of order"
    );
    assert_eq!(
        rejects(vec![s("x"), StreamFragment::Scalar(Scalar::Null)]).reason,
        "a fragment that does not fit the open value"
    );
    let mut aggregator = FragmentAggregator::new();
    aggregator.push(StreamFragment::Empty(EmptyKind::Object));
    assert_eq!(aggregator.push(StreamFragment::Done), Some(json!({})));
    assert_eq!(aggregator.push(StreamFragment::Done), None);
    let after_root = aggregator.error().unwrap();
    assert_eq!(after_root.index, 2);
    assert_eq!(
        after_root.reason,
        "a fragment after the root value was done"
    );
}

#[test]
fn a_string_continues_without_a_path_walk_only_from_its_own_parser() {
    // Pieces of one string, one push each, take the short way; a piece of
    // another parser's string at another path is still checked and refused.
    let mut first = IncrementalArgParser::new();
    let mut aggregator = FragmentAggregator::new();
    let mut root = None;
    for chunk in [r#"{"a":"x"#, "y", "z", r#""}"#] {
        first
            .push_with(chunk, |fragment| {
                if let Some(value) = aggregator.push_fragment(fragment) {
                    root = Some(value);
                }
            })
            .unwrap();
    }
    assert_eq!(root, Some(json!({"a": "xyz"})));

    let mut first = IncrementalArgParser::new();
    let mut aggregator = FragmentAggregator::new();
    let feed = |parser: &mut IncrementalArgParser, aggregator: &mut FragmentAggregator, text| {
        parser
            .push_with(text, |fragment| {
                aggregator.push_fragment(fragment);
            })
            .unwrap();
    };
    feed(&mut first, &mut aggregator, r#"{"a":"x"#);
    feed(
        &mut IncrementalArgParser::new(),
        &mut aggregator,
        r#"{"b":"y"#,
    );
    assert_eq!(
        aggregator.error().map(|error| error.reason),
        Some("an entry for a key that is not the open one")
    );
}
