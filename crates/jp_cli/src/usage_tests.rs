use jp_conversation::ResponseUsage;

use super::*;

fn usage(input: u64, read: u64, write: u64, output: u64, cost: Option<f64>) -> ConversationEvent {
    ConversationEvent {
        at_ms: 0,
        kind: EventKind::Usage(ResponseUsage {
            model: "anthropic/claude-sonnet-4-5".into(),
            input_tokens: Some(input),
            cache_read_tokens: Some(read),
            cache_write_tokens: Some(write),
            output_tokens: Some(output),
            cost_usd: cost,
        }),
    }
}

fn at(kind: EventKind) -> ConversationEvent {
    ConversationEvent { at_ms: 0, kind }
}

#[test]
fn one_response_without_cache() {
    let turn = [
        at(EventKind::TurnStart),
        usage(1234, 0, 0, 56, Some(0.004_542)),
    ];
    assert_eq!(
        turn_line(&turn).as_deref(),
        Some("tokens: 1,234 in · 56 out · $0.0045")
    );
}

#[test]
fn several_responses_with_the_cache() {
    let turn = [
        at(EventKind::TurnStart),
        usage(5000, 0, 4000, 100, Some(0.02)),
        usage(6000, 4000, 1500, 200, Some(0.01)),
        usage(1_234_567, 1_000_000, 0, 300, Some(1.5)),
    ];
    assert_eq!(
        turn_line(&turn).as_deref(),
        Some(
            "tokens: 3 responses · 1,245,567 in (1,004,000 cached, 5,500 written to the cache) · 600 out · $1.53"
        )
    );
}

#[test]
fn no_cost_where_no_price_is_known() {
    let turn = [usage(10, 0, 0, 2, None)];
    assert_eq!(turn_line(&turn).as_deref(), Some("tokens: 10 in · 2 out"));
    let mixed = [usage(10, 0, 0, 2, None), usage(10, 0, 0, 2, Some(0.5))];
    assert_eq!(
        turn_line(&mixed).as_deref(),
        Some(
            "tokens: 2 responses · 20 in · 4 out · $0.5000 for 1 of 2 responses (no price for the model of the others)"
        )
    );
}

#[test]
fn nothing_reported_prints_nothing() {
    assert_eq!(turn_line(&[at(EventKind::TurnStart)]), None);
    assert_eq!(total_line(&[at(EventKind::TurnStart)]), None);
}

#[test]
fn an_early_stop_says_the_rest_was_never_generated() {
    let turn = [
        at(EventKind::TurnStart),
        at(EventKind::StreamStopped {
            call_id: "c".into(),
            tool: "fs_create_file".into(),
            bytes: 4096,
            whole: false,
        }),
        usage(900, 0, 0, 1, Some(0.0)),
    ];
    assert_eq!(
        turn_line(&turn).as_deref(),
        Some(
            "tokens: 900 in · 1 out · $0 · stream stopped after 4.0 KB of fs_create_file's arguments; the rest was never generated"
        )
    );
}

#[test]
fn the_last_turn_starts_at_its_turn_start() {
    let events = [
        at(EventKind::TurnStart),
        usage(1, 0, 0, 1, None),
        at(EventKind::TurnStart),
        usage(2, 0, 0, 2, None),
    ];
    assert_eq!(last_turn(&events).len(), 2);
    assert_eq!(
        turn_line(last_turn(&events)).as_deref(),
        Some("tokens: 2 in · 2 out")
    );
    assert_eq!(
        total_line(&events).as_deref(),
        Some("total: 2 turns · 2 responses · 3 in · 3 out")
    );
}

#[test]
fn amounts() {
    assert_eq!(grouped(0), "0");
    assert_eq!(grouped(999), "999");
    assert_eq!(grouped(1000), "1,000");
    assert_eq!(grouped(123_456_789), "123,456,789");
    assert_eq!(dollars(0.000_01), "under $0.0001");
    assert_eq!(dollars(0.999_94), "$0.9999");
    assert_eq!(dollars(12.345), "$12.35");
}

#[test]
fn a_stop_before_any_argument_says_none_were_generated() {
    let turn = [
        at(EventKind::StreamStopped {
            call_id: "c".into(),
            tool: "fs_modify_file".into(),
            bytes: 0,
            whole: false,
        }),
        usage(10, 0, 0, 1, None),
    ];
    assert_eq!(
        turn_line(&turn).as_deref(),
        Some(
            "tokens: 10 in · 1 out · stream stopped before fs_modify_file's arguments; they were never generated"
        )
    );
}

#[test]
fn the_context_share_is_rounded_and_the_window_short() {
    assert_eq!(context(122_000, 200_000), "context 61% of 200k");
    assert_eq!(context(1_234, 3_000), "context 41% of 3k");
    assert_eq!(context(0, 128_000), "context 0% of 128k");
    assert_eq!(context(4_000, 1_500), "context 267% of 1.5k");
    assert_eq!(context(1, 1_048_576), "context 0% of 1M");
    assert_eq!(context(1, 1_047_576), "context 0% of 1M");
    assert_eq!(context(5, 950), "context 1% of 950");
    assert_eq!(context(5, 0), "context 0% of 0");
}
