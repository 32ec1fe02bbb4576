#![allow(clippy::unwrap_used)]

use jp_conversation::ResponseUsage;

use super::*;

fn at(at_ms: u64, kind: EventKind) -> ConversationEvent {
    ConversationEvent { at_ms, kind }
}

fn usage(model: &str, input: u64, cached: u64, output: u64, cost: Option<f64>) -> EventKind {
    EventKind::Usage(ResponseUsage {
        model: model.into(),
        input_tokens: Some(input),
        cache_read_tokens: Some(cached),
        cache_write_tokens: None,
        output_tokens: Some(output),
        cost_usd: cost,
    })
}

/// Sonnet's price: $3 in, $0.30 from the cache, a million tokens.
fn price(model: &str) -> Option<Price> {
    (model == "anthropic/claude-sonnet-4-5").then_some(Price {
        input: 3.0,
        output: 15.0,
        cache_read: 0.3,
        cache_write: 3.75,
    })
}

#[test]
fn each_conversation_the_total_what_caching_saved_and_the_early_stops() {
    let sonnet = "anthropic/claude-sonnet-4-5";
    let conversations = vec![
        (
            "17".to_owned(),
            "fix the parser\nand more".to_owned(),
            vec![
                at(10, usage(sonnet, 1000, 0, 100, Some(0.0045))),
                at(20, usage(sonnet, 10_000, 8000, 200, Some(0.0114))),
                at(
                    30,
                    EventKind::StreamStopped {
                        call_id: "c".into(),
                        tool: "fs_create_file".into(),
                        bytes: 412,
                        whole: false,
                    },
                ),
            ],
        ),
        ("18".to_owned(), "(untitled)".to_owned(), Vec::new()),
    ];
    assert_eq!(
        Report::of(&conversations, 0, &price).lines(0),
        [
            "17 · fix the parser: 2 requests · 11,000 in (8,000 cached) · 300 out · $0.0159",
            "total: 1 conversation · 2 requests · 11,000 in (8,000 cached) · 300 out · $0.0159",
            "cache: 72% of the input tokens were read from the provider's cache, saving about $0.0216",
            "early declines: jp stopped 1 response at a declined call, after 412 bytes of its arguments; nothing after them was generated or billed",
        ]
    );
    let json = Report::of(&conversations, 0, &price).json(0);
    let usage = |requests: u64, input: u64, output: u64| {
        serde_json::json!({"responses": requests, "input_tokens": input,
            "cache_read_tokens": 8000, "cache_write_tokens": 0, "output_tokens": output,
            "cost_usd": 0.0159, "unpriced": 0})
    };
    let mut checked = json.clone();
    // Floats as they add: compared near.
    for at in [
        "/total/cost_usd",
        "/conversations/0/usage/cost_usd",
        "/cache_saved_usd",
    ] {
        let value = checked.pointer(at).unwrap().as_f64().unwrap();
        let expected = if at == "/cache_saved_usd" {
            0.0216
        } else {
            0.0159
        };
        assert!((value - expected).abs() < 1e-9, "{at}: {value}");
        *checked.pointer_mut(at).unwrap() = serde_json::json!(expected);
    }
    assert_eq!(
        checked,
        serde_json::json!({
            "since_ms": null,
            "conversations": [{"id": "17", "title": "fix the parser", "usage": usage(2, 11_000, 300)}],
            "total": usage(2, 11_000, 300),
            "cache_saved_usd": 0.0216,
            "early_declines": {"responses": 1, "argument_bytes": 412},
        })
    );
    // Since a time after the first response: only the second counts.
    assert_eq!(
        Report::of(&conversations, 15, &price).lines(15)[0],
        "17 · fix the parser: 1 request · 10,000 in (8,000 cached) · 200 out · $0.0114"
    );
    assert_eq!(
        Report::of(&conversations, 31, &price).lines(31),
        ["nothing used in that time"]
    );
}

#[test]
fn since_reads_a_day_or_a_span() {
    let now = 1_796_601_600_000; // 2026-12-07 00:00 UTC
    assert_eq!(since_ms("2026-12-07", now), Ok(now));
    assert_eq!(since_ms("1970-01-02", now), Ok(86_400_000));
    assert_eq!(since_ms("7d", now), Ok(now - 7 * 86_400_000));
    assert_eq!(since_ms("24h", now), Ok(now - 86_400_000));
    assert_eq!(since_ms("90m", now), Ok(now - 90 * 60_000));
    for bad in ["yesterday", "7w", "2026-13-01", "d"] {
        assert_eq!(
            since_ms(bad, now),
            Err("give a day (2026-12-01) or a span back from now (7d, 24h, 90m)".to_owned()),
            "{bad}"
        );
    }
}
