#![allow(clippy::unwrap_used)]

use super::*;

/// $3 per million input tokens, $15 per million output: Sonnet's price.
fn price() -> Price {
    Price {
        input: 3.0,
        output: 15.0,
        cache_read: 0.3,
        cache_write: 3.75,
    }
}

fn text(s: &str) -> StreamEvent {
    StreamEvent::Part {
        index: 0,
        part: EventPart::Message(s.to_owned()),
    }
}

fn usage(input: u64, output: Option<u64>) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input_tokens: Some(input),
        output_tokens: output,
        ..Usage::default()
    })
}

#[test]
fn a_budget_needs_a_price_and_a_positive_limit() {
    assert_eq!(
        Budget::new(0.5, None, "ollama/qwen3").unwrap_err(),
        "jp knows no price for ollama/qwen3, so it cannot keep to a cost budget; set one in `providers.llm.models` (docs/query.md, \"Tokens and cost\")"
    );
    assert_eq!(
        Budget::new(0.0, Some(price()), "m").unwrap_err(),
        "the cost budget must be a positive number of US dollars, not 0"
    );
    assert!(Budget::new(f64::NAN, Some(price()), "m").is_err());
}

#[test]
fn a_streaming_response_is_over_as_soon_as_its_estimate_passes_the_budget() {
    // $0.01: 1,000 input tokens ($0.003), then output at $15 a million.
    let mut budget = Budget::new(0.01, Some(price()), "m").unwrap();
    budget.start_response();
    assert_eq!(budget.on_event(&usage(1000, None)), None);
    // 3 bytes a token: 1,400 bytes are 466 tokens, $0.00999 with the
    // input; 10 bytes more make 470, $0.01005.
    assert_eq!(budget.on_event(&text(&"x".repeat(1400))), None);
    let over = budget.on_event(&text(&"x".repeat(10))).unwrap();
    assert_eq!(
        over,
        Over {
            spent_micros: 10_050,
            limit_micros: 10_000
        }
    );
    assert_eq!(over.describe(), "about $0.01005 of its $0.01 budget");
}

#[test]
fn what_ended_counts_by_its_recorded_cost_and_is_checked_before_a_request() {
    let mut budget = Budget::new(0.02, Some(price()), "m").unwrap();
    budget.start_response();
    budget.on_event(&usage(1000, Some(200)));
    budget.end_response(Some(0.006));
    assert_eq!(budget.over(), None);
    budget.start_response();
    // A response whose provider reported more output than the text shows
    // counts what it reported.
    budget.on_event(&usage(2000, Some(1000)));
    budget.end_response(None);
    assert_eq!(
        budget.over(),
        Some(Over {
            spent_micros: 27_000,
            limit_micros: 20_000
        })
    );
    assert_eq!(
        budget.over().unwrap().describe(),
        "about $0.027 of its $0.02 budget"
    );
}

#[test]
fn dollars_read_as_people_write_them() {
    assert_eq!(dollars(2_000_000), "2.00");
    assert_eq!(dollars(500_000), "0.50");
    assert_eq!(dollars(10_020), "0.01002");
    assert_eq!(dollars(1), "0.000001");
}
