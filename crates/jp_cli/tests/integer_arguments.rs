//! `integer` tool parameters accept only an integer literal that fits 64
//! bits (issue 21, item 6): `1e2`, `100.0000000000000000001`, `-0`, `1.0`
//! and integers beyond 64 bits are refused with a message naming the
//! parameter, never run and never turned into another number.
//!
//! The table and the property test take each argument text through the
//! path a query takes it (the streamed call assembled by `EventBuilder`,
//! `ToolCallRequest::arguments_value`, then `check_arguments`); the last
//! test runs a scripted `jp query` through the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Workspace;
use common::query::{responses, stored};
use jp_config::tool::{ToolParameters, check_arguments};
use jp_conversation::{EventBuilder, EventPart, FlushedEvent, ToolCallPart};
use proptest::prelude::*;

/// What an `integer` must look like, as the refusal says it.
const RULE: &str = "an integer is written as digits alone, without a fraction, an exponent or \
                    a minus zero, from -9223372036854775808 to 18446744073709551615";

fn count_param() -> ToolParameters {
    serde_json::from_str(r#"{"count": {"type": "integer", "required": true}}"#).unwrap()
}

/// `{"count": <number>}` streamed as a tool call in chunks of `chunk`
/// bytes, assembled and checked as the query loop checks a call: `Ok` when
/// it may run, else the issues as the model and the user are told them.
fn through_the_query_path(number: &str, chunk: usize) -> Result<(), Vec<String>> {
    let text = format!(r#"{{"count": {number}}}"#);
    let mut builder = EventBuilder::new();
    builder
        .handle_part(
            0,
            EventPart::ToolCall(ToolCallPart::Start {
                id: "call_1".into(),
                name: "counter".into(),
            }),
        )
        .unwrap();
    for piece in text.as_bytes().chunks(chunk) {
        let piece = std::str::from_utf8(piece).unwrap().to_owned();
        builder
            .handle_part(0, EventPart::ToolCall(ToolCallPart::ArgumentChunk(piece)))
            .unwrap();
    }
    let Some(FlushedEvent::ToolCallRequest(call)) = builder.handle_flush(0) else {
        panic!("no call was assembled from {text}");
    };
    let arguments = call
        .arguments_value()
        .unwrap_or_else(|e| panic!("{text}: unusable arguments: {e}"));
    check_arguments(&count_param(), arguments)
        .map_err(|issues| issues.iter().map(ToString::to_string).collect())
}

fn refused(shown: &str) -> Result<(), Vec<String>> {
    Err(vec![format!(
        "/count: expected an integer, found {shown} ({RULE})"
    )])
}

/// Argument texts and what becomes of them: accepted, or refused showing
/// the value the text was read as.
#[test]
fn integer_argument_table() {
    let table: &[(&str, Option<&str>)] = &[
        ("0", None),
        ("42", None),
        ("-42", None),
        ("9223372036854775807", None),
        ("9223372036854775808", None),
        ("-9223372036854775808", None),
        ("18446744073709551615", None),
        ("1e2", Some("100.0")),
        ("1E2", Some("100.0")),
        ("1e+2", Some("100.0")),
        ("1.5e1", Some("15.0")),
        ("100e-2", Some("1.0")),
        ("0e0", Some("0.0")),
        ("1.0", Some("1.0")),
        ("1.5", Some("1.5")),
        ("100.0000000000000000001", Some("100.0")),
        ("99.99999999999999999999", Some("100.0")),
        ("-0", Some("-0.0")),
        ("-0.0", Some("-0.0")),
        ("-0e3", Some("-0.0")),
        ("18446744073709551616", Some("1.8446744073709552e+19")),
        ("-9223372036854775809", Some("-9.223372036854776e+18")),
        (
            "340282366920938463463374607431768211456",
            Some("3.402823669209385e+38"),
        ),
    ];
    for (text, shown) in table {
        let want = shown.map_or(Ok(()), refused);
        for chunk in [1, 3, 1000] {
            assert_eq!(
                through_the_query_path(text, chunk),
                want,
                "{text} in chunks of {chunk}"
            );
        }
    }
}

/// A float form of a number: a fraction, an exponent or both.
fn float_form() -> impl Strategy<Value = String> {
    let int = any::<i64>().prop_map(|n| n.to_string());
    let digits = "[0-9]{1,25}";
    // Up to e280, so that no form overflows an f64 (`1e400` is refused
    // before any parameter is looked at, as out of range).
    let exponent = ("[eE]", "[+-]?", 0u32..=280).prop_map(|(e, s, n)| format!("{e}{s}{n}"));
    prop_oneof![
        (int.clone(), digits).prop_map(|(i, f)| format!("{i}.{f}")),
        (int.clone(), exponent.clone()).prop_map(|(i, e)| format!("{i}{e}")),
        (int, digits, exponent).prop_map(|(i, f, e)| format!("{i}.{f}{e}")),
        "-0(\\.0{1,5})?([eE][+-]?[0-9]{1,2})?",
    ]
}

/// An integer literal outside both `i64` and `u64`.
fn beyond_64_bits() -> impl Strategy<Value = String> {
    prop_oneof![
        (u128::from(u64::MAX) + 1..=u128::MAX).prop_map(|n| n.to_string()),
        (i128::MIN..i128::from(i64::MIN)).prop_map(|n| n.to_string()),
        "[1-9][0-9]{40,60}",
        "-[1-9][0-9]{40,60}",
    ]
}

proptest! {
    #[test]
    fn every_i64_literal_is_accepted(n in any::<i64>(), chunk in 1usize..8) {
        prop_assert_eq!(through_the_query_path(&n.to_string(), chunk), Ok(()));
    }

    #[test]
    fn every_u64_literal_is_accepted(n in any::<u64>(), chunk in 1usize..8) {
        prop_assert_eq!(through_the_query_path(&n.to_string(), chunk), Ok(()));
    }

    #[test]
    fn every_float_form_is_refused(text in float_form(), chunk in 1usize..8) {
        let got = through_the_query_path(&text, chunk);
        let issues = got.expect_err("a float form was accepted");
        prop_assert_eq!(issues.len(), 1);
        prop_assert!(issues[0].starts_with("/count: expected an integer, found "), "{}", issues[0]);
        prop_assert!(issues[0].ends_with(&format!(" ({RULE})")), "{}", issues[0]);
    }

    #[test]
    fn integers_beyond_64_bits_are_refused(text in beyond_64_bits(), chunk in 1usize..8) {
        let issues = through_the_query_path(&text, chunk).expect_err("accepted beyond 64 bits");
        prop_assert_eq!(issues.len(), 1);
        prop_assert!(issues[0].starts_with("/count: expected an integer, found "), "{}", issues[0]);
    }
}

/// A local tool `counter` with an `integer` parameter `count`, which
/// records each run in `ran.txt` and answers `ok`.
const COUNTER: &str = r#"[conversation.tools.counter]
command = ["sh", "-c", "cat >> ran.txt; echo >> ran.txt; printf '{\"type\":\"success\",\"content\":\"ok\"}'"]
summary = "Count."
parameters.count = { type = "integer", required = true }
policy.run = "unattended"
"#;

/// One scripted response calling `counter` with the argument text `args`,
/// then one that says `done`.
fn script(args: &str) -> String {
    format!(
        "[[responses]]\nparts = [{{ tool = \"counter\", arguments = '{args}' }}]\n\
         [[responses]]\nparts = [{{ text = \"done\" }}]\n"
    )
}

fn query(ws: &Workspace, args: &str) -> common::Run {
    ws.write("project/.jp/script.toml", &script(args));
    ws.jp(&[
        "query",
        "--new",
        "--model",
        "scripted/.jp/script.toml",
        "--cfg",
        "@.jp/counter.toml",
        "count",
    ])
}

#[test]
fn a_query_refuses_an_integer_written_as_1e2() {
    let ws = common::query::initialized();
    ws.write("project/.jp/counter.toml", COUNTER);

    let run = query(&ws, r#"{"count": 1e2}"#);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout, "done\n",
        "the model gets the refusal and answers"
    );
    let why = format!("/count: expected an integer, found 100.0 ({RULE})");
    assert!(
        run.stderr.contains(&format!(
            "counter: refused: the arguments do not fit its parameters: {why}"
        )),
        "{}",
        run.stderr
    );
    assert!(
        !ws.project().join("ran.txt").exists(),
        "the tool ran on a refused call"
    );
    assert_eq!(
        responses(&stored(&ws)),
        [(
            "refused".to_owned(),
            // Refused as soon as the number was complete, before any
            // policy: the rest of the response was not read.
            format!(
                "The call was not run because its arguments do not fit the tool's parameters: \
                 {why}. jp stopped your response after 14 B of this call's arguments."
            )
        )]
    );
}

#[test]
fn a_query_refuses_minus_zero_and_integers_beyond_64_bits_and_runs_an_integer() {
    let ws = common::query::initialized();
    ws.write("project/.jp/counter.toml", COUNTER);
    for (args, shown) in [
        (r#"{"count": -0}"#, "-0.0"),
        (r#"{"count": 100.0000000000000000001}"#, "100.0"),
        (
            r#"{"count": 18446744073709551616}"#,
            "1.8446744073709552e+19",
        ),
    ] {
        let run = query(&ws, args);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(
            run.stderr.contains(&format!(
                "counter: refused: the arguments do not fit its parameters: /count: expected an \
                 integer, found {shown} ({RULE})"
            )),
            "{args}: {}",
            run.stderr
        );
        assert!(!ws.project().join("ran.txt").exists(), "{args} ran");
    }

    // The largest u64 reaches the tool exactly as written.
    let run = query(&ws, r#"{"count": 18446744073709551615}"#);
    assert_eq!(run.code, 0, "{run:?}");
    let request = ws.read("project/ran.txt");
    assert!(
        request.contains(r#""arguments":{"count":18446744073709551615}"#),
        "{request}"
    );
}
