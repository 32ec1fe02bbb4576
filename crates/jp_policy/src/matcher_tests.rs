#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

fn num(v: Value) -> Number {
    match v {
        Value::Number(n) => n,
        other => panic!("not a number: {other}"),
    }
}

#[test]
fn numbers_are_equal_by_value() {
    assert!(numbers_equal(&num(json!(1)), &num(json!(1.0))));
    assert!(numbers_equal(&num(json!(-3)), &num(json!(-3.0))));
    assert!(!numbers_equal(&num(json!(1)), &num(json!(1.5))));
    assert!(numbers_equal(&num(json!(u64::MAX)), &num(json!(u64::MAX))));
    // 2^53 + 1 is not the float 2^53, although `as f64` would round it so.
    assert!(!numbers_equal(
        &num(json!(9_007_199_254_740_993_u64)),
        &num(json!(9_007_199_254_740_992.0))
    ));
    assert!(numbers_equal(
        &num(json!(9_007_199_254_740_992_u64)),
        &num(json!(9_007_199_254_740_992.0))
    ));
}

#[test]
fn bounds_compare_exactly() {
    assert_eq!(
        compare_f64(&num(json!(1000)), 1000.0),
        Some(Ordering::Equal)
    );
    assert_eq!(compare_f64(&num(json!(1000)), 1000.5), Some(Ordering::Less));
    assert_eq!(
        compare_f64(&num(json!(-1000)), -1000.5),
        Some(Ordering::Greater)
    );
    assert_eq!(
        compare_f64(
            &num(json!(9_007_199_254_740_993_u64)),
            9_007_199_254_740_992.0
        ),
        Some(Ordering::Greater)
    );
    assert_eq!(
        compare_f64(&num(json!(i64::MIN)), -1e300),
        Some(Ordering::Greater)
    );
    assert_eq!(
        compare_f64(&num(json!(u64::MAX)), 1e300),
        Some(Ordering::Less)
    );
    assert_eq!(compare_f64(&num(json!(2.5)), 2.5), Some(Ordering::Equal));
}

#[test]
fn deep_equality_is_numeric() {
    assert!(json_equal(
        &json!({ "a": [1, "x"] }),
        &json!({ "a": [1.0, "x"] })
    ));
    assert!(!json_equal(&json!({ "a": [1] }), &json!({ "a": [1, 2] })));
    assert!(!json_equal(&json!("1"), &json!(1)));
}

#[test]
fn integral_numbers() {
    assert!(is_integral(&num(json!(3))));
    assert!(is_integral(&num(json!(3.0))));
    assert!(!is_integral(&num(json!(3.25))));
}

#[test]
fn long_values_are_cut_short_in_messages() {
    assert_eq!(show(&json!("abc")), "\"abc\"");
    let long = "x".repeat(100);
    assert_eq!(show(&json!(long)), format!("\"{}…", "x".repeat(59)));
}

#[test]
fn phrases() {
    let cases = [
        (
            Matcher::Const(Literal::String("jq".into())),
            "equals \"jq\"",
            "does not equal \"jq\"",
        ),
        (
            Matcher::Enum(vec![Literal::Bool(true), Literal::Number(2.into())]),
            "is one of [true, 2]",
            "is not one of [true, 2]",
        ),
        (
            Matcher::Pattern(Regex::new(r"a\d").unwrap()),
            "matches pattern \"a\\\\d\"",
            "does not match pattern \"a\\\\d\"",
        ),
        (
            Matcher::Prefix(Literal::Path(PolicyPath::Relative("".into()))),
            "is under ./",
            "is not under ./",
        ),
        (
            Matcher::Prefix(Literal::String("rm".into())),
            "starts with \"rm\"",
            "does not start with \"rm\"",
        ),
        (Matcher::Minimum(1.5), "is at least 1.5", "is less than 1.5"),
        (Matcher::Maximum(2.0), "is at most 2", "is greater than 2"),
        (
            Matcher::ExclusiveMinimum(0.0),
            "is greater than 0",
            "is not greater than 0",
        ),
        (
            Matcher::ExclusiveMaximum(-1.0),
            "is less than -1",
            "is not less than -1",
        ),
    ];
    for (matcher, yes, no) in cases {
        assert_eq!(
            (matcher.phrase(true), matcher.phrase(false)),
            (yes.to_owned(), no.to_owned()),
            "{}",
            matcher.keyword()
        );
    }
}
