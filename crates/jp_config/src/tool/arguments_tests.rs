#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

fn params(toml_text: &str) -> ToolParameters {
    toml::from_str(toml_text).unwrap()
}

fn messages(params: &ToolParameters, args: &Value) -> Vec<String> {
    check_arguments(params, args)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn modify_file() -> ToolParameters {
    params(
        r#"
            path = { type = "path", required = true }
            mode = { type = "string", enum = ["a", "b"] }
            count = { type = "integer" }
            dry = { type = "boolean" }
            [patterns]
            type = "array"
            items = { type = "object", properties = { old = { type = "string", required = true }, paths = { type = "array", items = { type = "path" } } } }
            "#,
    )
}

#[test]
fn valid_arguments_pass() {
    let args = json!({
        "path": "src/lib.rs",
        "mode": "a",
        "count": 1,
        "dry": false,
        "patterns": [{ "old": "x", "paths": ["a", "b"] }],
    });
    assert_eq!(check_arguments(&modify_file(), &args), Ok(()));
}

#[test]
fn every_problem_is_named_with_its_pointer() {
    let args = json!({
        "mode": "c",
        "count": 1.5,
        "dry": "no",
        "extra": 1,
        "patterns": [{ "old": 3, "paths": ["ok", 7, "a\u{0}b"] }, { "paths": [] }, "x"],
    });
    assert_eq!(
        messages(&modify_file(), &args),
        [
            "/mode: expected one of \"a\", \"b\", found \"c\"",
            "/count: expected an integer, found 1.5 (an integer is written as digits alone, \
                 without a fraction, an exponent or a minus zero, from -9223372036854775808 to \
                 18446744073709551615)",
            "/dry: expected a boolean, found \"no\"",
            "/extra: unknown parameter (expected one of \"path\", \"mode\", \"count\", \
                 \"dry\", \"patterns\")",
            "/patterns/0/old: expected a string, found 3",
            "/patterns/0/paths/1: expected a path (a string), found 7",
            "/patterns/0/paths/2: expected a path, found a string containing NUL",
            "/patterns/1/old: missing required parameter",
            "/patterns/2: expected an object, found \"x\"",
            "/path: missing required parameter",
        ]
    );
}

#[test]
fn arguments_must_be_an_object_and_null_is_no_value() {
    assert_eq!(
        messages(&modify_file(), &json!([1])),
        ["arguments: expected an object, found [1]"]
    );
    assert_eq!(
        messages(&modify_file(), &json!({ "path": null })),
        ["/path: expected a path (a string), found null"]
    );
}

#[test]
fn enum_compares_numbers_numerically_and_keys_are_escaped() {
    let p = params(
        r#"
            level = { type = "number", enum = [1, 2.5] }
            "a/b" = { type = "string" }
            "#,
    );
    assert_eq!(check_arguments(&p, &json!({ "level": 1.0 })), Ok(()));
    assert_eq!(
        messages(&p, &json!({ "level": 2, "a/b": 1 })),
        [
            "/level: expected one of 1, 2.5, found 2",
            "/a~1b: expected a string, found 1",
        ]
    );
}

/// Every way of writing a number, parsed as serde_json parses tool-call
/// arguments, against an `integer` parameter.
#[test]
fn an_integer_is_an_integer_literal_that_fits_64_bits() {
    let p = params(r#"count = { type = "integer" }"#);
    let table: &[(&str, Option<&str>)] = &[
        ("0", None),
        ("7", None),
        ("-7", None),
        ("9223372036854775807", None),
        ("-9223372036854775808", None),
        ("18446744073709551615", None),
        ("1.0", Some("1.0")),
        ("1.5", Some("1.5")),
        ("1e2", Some("100.0")),
        ("1E2", Some("100.0")),
        ("1e+2", Some("100.0")),
        ("100e-2", Some("1.0")),
        ("0e0", Some("0.0")),
        ("100.0000000000000000001", Some("100.0")),
        ("-0", Some("-0.0")),
        ("-0.0", Some("-0.0")),
        ("-0e5", Some("-0.0")),
        ("18446744073709551616", Some("1.8446744073709552e+19")),
        ("-9223372036854775809", Some("-9.223372036854776e+18")),
        (
            "123456789012345678901234567890",
            Some("1.2345678901234568e+29"),
        ),
    ];
    for (text, refused_as) in table {
        let args: Value = serde_json::from_str(&format!(r#"{{"count": {text}}}"#)).unwrap();
        let got = check_arguments(&p, &args)
            .map_err(|issues| issues.iter().map(ToString::to_string).collect::<Vec<_>>());
        let want = refused_as.map(|shown| {
            vec![format!(
                "/count: expected an integer, found {shown} ({INTEGER_RULE})"
            )]
        });
        assert_eq!(got, want.map_or(Ok(()), Err), "{text}");
    }
}

#[test]
fn integer_rule_holds_in_arrays_and_objects_and_numbers_stay_lax() {
    let p = params(
        r#"
            counts = { type = "array", items = { type = "integer" } }
            size = { type = "number" }
            [inner]
            type = "object"
            properties = { n = { type = "integer" } }
            "#,
    );
    let args: Value =
        serde_json::from_str(r#"{"counts": [1, 1e2, -0], "size": 1e2, "inner": {"n": 2.0}}"#)
            .unwrap();
    let pointers = check_arguments(&p, &args)
        .unwrap_err()
        .into_iter()
        .map(|i| i.pointer)
        .collect::<Vec<_>>();
    assert_eq!(pointers, ["/counts/1", "/counts/2", "/inner/n"]);
}

#[test]
fn an_integer_enum_still_compares_numerically() {
    let p = params(r#"level = { type = "integer", enum = [1, 2.0] }"#);
    assert_eq!(check_arguments(&p, &json!({ "level": 2 })), Ok(()));
    assert_eq!(
        messages(&p, &json!({ "level": 3 })),
        ["/level: expected one of 1, 2.0, found 3"]
    );
}
