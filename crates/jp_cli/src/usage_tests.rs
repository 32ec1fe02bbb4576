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

fn usage_of(model: &str, input: u64, output: u64, cost: Option<f64>) -> ConversationEvent {
    at(EventKind::Usage(ResponseUsage {
        model: model.into(),
        input_tokens: Some(input),
        output_tokens: Some(output),
        cost_usd: cost,
        ..ResponseUsage::default()
    }))
}

#[test]
fn cost_of_a_conversation_without_usage() {
    assert_eq!(
        cost_lines(&[], None),
        ["0 turns · no usage recorded (no response reported its tokens)"]
    );
    assert_eq!(
        cost_lines(&[at(EventKind::TurnStart)], None),
        ["1 turn · no usage recorded (no response reported its tokens)"]
    );
}

#[test]
fn cost_of_one_model_with_the_cache() {
    let events = [
        at(EventKind::TurnStart),
        usage(5000, 0, 4000, 100, Some(0.02)),
        usage(6000, 4000, 1500, 200, Some(0.01)),
    ];
    assert_eq!(
        cost_lines(&events, None),
        [
            "1 turn · 2 requests · 11,000 in (4,000 cached, 5,500 written to the cache) · 300 out · $0.0300"
        ]
    );
}

#[test]
fn cost_by_model_names_those_without_a_price() {
    let events = [
        at(EventKind::TurnStart),
        usage_of("anthropic/claude-haiku-4-5", 10, 42, Some(0.000_22)),
        at(EventKind::TurnStart),
        usage_of("anthropic/claude-opus-5", 10, 42, None),
        at(EventKind::TurnStart),
        usage_of("anthropic/claude-haiku-4-5", 10, 42, Some(0.000_22)),
    ];
    assert_eq!(
        cost_lines(&events, None),
        [
            "3 turns · 3 requests · 30 in · 126 out · $0.0004 for 2 of 3 requests (no price for anthropic/claude-opus-5)",
            "  anthropic/claude-haiku-4-5: 2 requests · 20 in · 84 out · $0.0004",
            "  anthropic/claude-opus-5: 1 request · 10 in · 42 out · cost unknown (no price for anthropic/claude-opus-5)",
        ]
    );
}

#[test]
fn cost_of_rewound_turns_and_summaries_is_said_apart() {
    let rewind = |turns: Vec<usize>| {
        at(EventKind::Rewind(jp_conversation::Rewind {
            turns,
            reason: jp_conversation::RewindReason::User,
            restored: Vec::new(),
            removed: Vec::new(),
            left: Vec::new(),
            complete: true,
        }))
    };
    let compaction = at(EventKind::Compaction(jp_conversation::Compaction {
        upto: 0,
        summary: "s".into(),
        model: "m".into(),
        edited: false,
    }));
    let model = "anthropic/claude-haiku-4-5";
    let events = [
        at(EventKind::TurnStart),
        usage_of(model, 100, 10, Some(0.5)),
        at(EventKind::TurnStart),
        usage_of(model, 200, 20, Some(1.0)),
        usage_of(model, 300, 30, Some(1.0)),
        // A summary made after turn 2, then turn 2 taken back: the summary
        // is not a rewound turn's.
        usage_of(model, 50, 5, Some(0.25)),
        compaction,
        rewind(vec![2]),
        at(EventKind::TurnStart),
        usage_of(model, 400, 40, None),
    ];
    assert_eq!(
        cost_lines(&events, None),
        [
            "3 turns · 5 requests · 1,050 in · 105 out · $2.75 for 4 of 5 requests (no price for anthropic/claude-haiku-4-5)",
            "of it, rewound (1 turn, paid for, no longer sent): 2 requests · 500 in · 50 out · $2.00",
            "of it, summaries (compaction): 1 request · 50 in · 5 out · $0.2500",
        ]
    );
    // A rewind the user's jp did not record takes nothing back.
    let mut theirs = [true; 10];
    theirs[7] = false;
    assert_eq!(cost_lines(&events, Some(&theirs)).len(), 2);
}
