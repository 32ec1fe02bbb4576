#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;
use crate::ArgumentsError;

#[test]
fn dates() {
    assert_eq!(format_utc(0), "1970-01-01 00:00");
    assert_eq!(format_utc(951_782_400_000), "2000-02-29 00:00");
    assert_eq!(format_utc(1_795_350_600_000), "2026-11-22 12:30");
}

#[test]
fn wire_shape() {
    let mut args = serde_json::Map::new();
    args.insert("path".into(), json!("a.rs"));
    let event = ConversationEvent {
        at_ms: 5,
        kind: EventKind::ToolCallRequest(ToolCallRequest::new("c1", "fs_read_file", args)),
    };
    let value = serde_json::to_value(&event).unwrap();
    assert_eq!(
        value,
        json!({"at_ms": 5, "type": "tool_call_request", "id": "c1", "name": "fs_read_file", "arguments": {"path": "a.rs"}})
    );
    assert_eq!(
        serde_json::from_value::<ConversationEvent>(value).unwrap(),
        event
    );
}

#[test]
fn an_invalid_call_stays_invalid_when_read_back() {
    let call = ToolCallRequest::invalid(
        "c1",
        "x",
        serde_json::Map::new(),
        ArgumentsError::NotAnObject("an array"),
    );
    let text = serde_json::to_string(&EventKind::ToolCallRequest(call)).unwrap();
    assert_eq!(
        text,
        r#"{"type":"tool_call_request","id":"c1","name":"x","arguments":{},"error":"tool arguments must be a JSON object, got an array"}"#
    );
    let EventKind::ToolCallRequest(back) = serde_json::from_str(&text).unwrap() else {
        panic!("not a tool call request");
    };
    assert_eq!(
        back.arguments().unwrap_err().to_string(),
        "tool arguments must be a JSON object, got an array"
    );
}

fn usage_of(tokens: u64, cost: Option<f64>) -> ResponseUsage {
    ResponseUsage {
        model: "anthropic/claude-haiku-4-5".into(),
        input_tokens: Some(tokens),
        cache_read_tokens: Some(tokens),
        cache_write_tokens: Some(tokens),
        output_tokens: Some(tokens),
        cost_usd: cost,
    }
}

#[test]
fn usage_totals_take_absurd_counts_as_unknown() {
    // (each response's count) => each total.
    for (counts, expected) in [
        (vec![10, 20], 30),
        (vec![MAX_RECORDED_TOKENS, 1], MAX_RECORDED_TOKENS + 1),
        (vec![MAX_RECORDED_TOKENS + 1, 5], 5),
        (vec![u64::MAX, u64::MAX - 1, 7], 7),
    ] {
        let mut totals = UsageTotals::default();
        for count in &counts {
            totals.add(&usage_of(*count, Some(0.5)));
        }
        assert_eq!(
            (
                totals.input_tokens,
                totals.cache_read_tokens,
                totals.cache_write_tokens,
                totals.output_tokens,
                totals.responses,
            ),
            (expected, expected, expected, expected, counts.len()),
            "{counts:?}"
        );
    }
    // A cost that is no amount is unpriced.
    let mut totals = UsageTotals::default();
    for cost in [
        Some(f64::NAN),
        Some(f64::INFINITY),
        Some(-1.0),
        None,
        Some(0.25),
    ] {
        totals.add(&usage_of(1, cost));
    }
    assert_eq!((totals.unpriced, totals.cost_usd), (4, 0.25));
}

proptest::proptest! {
    /// Whatever the counts, totals never wrap: each is at least every
    /// plausible count added and at most `u64::MAX`.
    #[test]
    fn usage_totals_never_wrap(counts in proptest::collection::vec(proptest::num::u64::ANY, 0..64)) {
        let mut totals = UsageTotals::default();
        for count in &counts {
            totals.add(&usage_of(*count, None));
        }
        let plausible: u128 = counts
            .iter()
            .filter(|c| **c <= MAX_RECORDED_TOKENS)
            .map(|c| u128::from(*c))
            .sum();
        proptest::prop_assert_eq!(u128::from(totals.input_tokens), plausible.min(u128::from(u64::MAX)));
        proptest::prop_assert_eq!(totals.responses, counts.len());
    }
}
