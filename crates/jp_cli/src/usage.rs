//! How the tokens a turn or a conversation used, and their cost, are
//! shown: one line after each `jp query` turn, and the totals of
//! `jp conversation show`.

use jp_conversation::view::Honoured;
use jp_conversation::{ConversationEvent, EventKind, UsageTotals};
pub use jp_policy::listing::grouped;

use crate::conversation::human_bytes;

/// The line `jp query` prints after a turn whose events are `turn`, or
/// `None` when no response of it reported usage (the scripted provider, a
/// provider that failed before answering).
#[must_use]
pub fn turn_line(turn: &[ConversationEvent]) -> Option<String> {
    let totals = UsageTotals::of(turn);
    if totals.responses == 0 {
        return None;
    }
    let mut line = format!("tokens: {}", describe(&totals));
    // The last early stop of the turn: what it saved was never generated.
    let stopped = turn.iter().rev().find_map(|event| match &event.kind {
        EventKind::StreamStopped {
            tool, bytes, whole, ..
        } => Some((tool, *bytes, *whole)),
        _ => None,
    });
    if let Some((tool, bytes, whole)) = stopped {
        if whole {
            line.push_str(&format!(
                " · stream stopped after {tool}'s call; the rest of the response was never generated"
            ));
        } else if bytes == 0 {
            line.push_str(&format!(
                " · stream stopped before {tool}'s arguments; they were never generated"
            ));
        } else {
            line.push_str(&format!(
                " · stream stopped after {} of {tool}'s arguments; the rest was never generated",
                human_bytes(bytes)
            ));
        }
    }
    Some(line)
}

/// `context 61% of 200k`: how much of a `window`-token context window a
/// request of about `estimate` tokens takes.
#[must_use]
pub fn context(estimate: u64, window: u64) -> String {
    // Rounded to the nearest percent.
    let share = estimate
        .saturating_mul(100)
        .saturating_add(window / 2)
        .checked_div(window)
        .unwrap_or(0);
    format!("context {share}% of {}", short(window))
}

/// `200k`, `1.5k`, `1M`, `950`: a token count in a few characters.
fn short(tokens: u64) -> String {
    let scaled = |unit: u64, suffix: &str| {
        #[allow(clippy::cast_precision_loss)]
        let value = tokens as f64 / unit as f64;
        let text = if value < 10.0 {
            format!("{value:.1}")
        } else {
            format!("{value:.0}")
        };
        format!("{}{suffix}", text.strip_suffix(".0").unwrap_or(&text))
    };
    if tokens >= 1_000_000 {
        scaled(1_000_000, "M")
    } else if tokens >= 1_000 {
        scaled(1_000, "k")
    } else {
        tokens.to_string()
    }
}

/// The events of the last turn of `events` (from its `TurnStart`).
#[must_use]
pub fn last_turn(events: &[ConversationEvent]) -> &[ConversationEvent] {
    let start = events
        .iter()
        .rposition(|event| matches!(event.kind, EventKind::TurnStart))
        .unwrap_or(0);
    &events[start..]
}

/// The totals line of `jp conversation show`, or `None` when no response
/// reported usage.
#[must_use]
pub fn total_line(events: &[ConversationEvent]) -> Option<String> {
    let totals = UsageTotals::of(events);
    if totals.responses == 0 {
        return None;
    }
    let turns = events
        .iter()
        .filter(|event| matches!(event.kind, EventKind::TurnStart))
        .count();
    let turns = if turns == 1 {
        "1 turn".to_owned()
    } else {
        format!("{turns} turns")
    };
    Some(format!("total: {turns} · {}", describe(&totals)))
}

/// `2 responses · 12,345 in (10,000 cached) · 456 out · $0.0412`: the
/// response count only when there are several, the cache only when used,
/// the cost only where a price was known.
fn describe(totals: &UsageTotals) -> String {
    let mut parts = Vec::new();
    if totals.responses > 1 {
        parts.push(format!("{} responses", totals.responses));
    }
    parts.extend(tokens(totals));
    let priced = totals.responses - totals.unpriced;
    if totals.unpriced == 0 {
        parts.push(dollars(totals.cost_usd));
    } else if priced > 0 {
        parts.push(format!(
            "{} for {priced} of {} responses (no price for the model of the others)",
            dollars(totals.cost_usd),
            totals.responses
        ));
    }
    parts.join(" · ")
}

/// `12,345 in (10,000 cached, 500 written to the cache)` and `456 out`.
fn tokens(totals: &UsageTotals) -> [String; 2] {
    let mut cache = Vec::new();
    if totals.cache_read_tokens > 0 {
        cache.push(format!("{} cached", grouped(totals.cache_read_tokens)));
    }
    if totals.cache_write_tokens > 0 {
        cache.push(format!(
            "{} written to the cache",
            grouped(totals.cache_write_tokens)
        ));
    }
    let cache = if cache.is_empty() {
        String::new()
    } else {
        format!(" ({})", cache.join(", "))
    };
    [
        format!("{} in{cache}", grouped(totals.input_tokens)),
        format!("{} out", grouped(totals.output_tokens)),
    ]
}

/// `1 turn`, `3 requests`: a count and its noun.
fn counted(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// Usage summed, with the models of the responses that had no price.
#[derive(Debug, Default)]
pub struct Tally {
    /// The sums.
    pub totals: UsageTotals,
    unpriced: Vec<String>,
}

impl Tally {
    /// Adds one response's usage.
    pub fn add(&mut self, usage: &jp_conversation::ResponseUsage) {
        let before = self.totals.unpriced;
        self.totals.add(usage);
        if self.totals.unpriced > before && !self.unpriced.contains(&usage.model) {
            self.unpriced.push(usage.model.clone());
        }
    }

    /// `3 requests · 6,127 in (…) · 60 out · $0.0135`: counted, and
    /// priced as far as it can be.
    pub fn line(&self) -> String {
        let totals = &self.totals;
        let mut parts = vec![counted(totals.responses, "request")];
        parts.extend(tokens(totals));
        let priced = totals.responses - totals.unpriced;
        let models = self.unpriced.join(", ");
        if totals.unpriced == 0 {
            parts.push(dollars(totals.cost_usd));
        } else if priced == 0 {
            parts.push(format!("cost unknown (no price for {models})"));
        } else {
            parts.push(format!(
                "{} for {priced} of {} requests (no price for {models})",
                dollars(totals.cost_usd),
                totals.responses,
            ));
        }
        parts.join(" · ")
    }
}

/// The usage of a conversation, for `jp conversation cost`: in all, by
/// model, and of it what rewound turns and summaries cost.
#[derive(Debug, Default)]
struct Spent {
    all: Tally,
    by_model: Vec<(String, Tally)>,
    rewound: Tally,
    rewound_turns: usize,
    summaries: Tally,
}

impl Spent {
    /// What `events` record; `ours` says which recovery events count (as
    /// for the conversation's view).
    fn of(events: &[ConversationEvent], ours: Honoured<'_>) -> Self {
        let live = jp_conversation::view::live(events, ours);
        let mut spent = Self {
            rewound_turns: jp_conversation::view::rewound(events, ours).len(),
            ..Self::default()
        };
        for (index, event) in events.iter().enumerate() {
            let EventKind::Usage(usage) = &event.kind else {
                continue;
            };
            spent.all.add(usage);
            match spent.by_model.iter_mut().find(|(m, _)| *m == usage.model) {
                Some((_, tally)) => tally.add(usage),
                None => {
                    let mut tally = Tally::default();
                    tally.add(usage);
                    spent.by_model.push((usage.model.clone(), tally));
                }
            }
            // A summary's usage is recorded right before its compaction
            // (between turns, or after the turn it follows).
            let summary = events
                .get(index + 1)
                .is_some_and(|next| matches!(next.kind, EventKind::Compaction(_)));
            if summary {
                spent.summaries.add(usage);
            } else if !live.get(index).copied().unwrap_or(true) {
                spent.rewound.add(usage);
            }
        }
        spent
    }
}

/// What `jp conversation cost` prints of a conversation's `events`: the
/// tokens and cost of every request so far (rewound turns included: they
/// were paid for), by model when there were several, and what of it went
/// to rewound turns and to summaries. `ours` says which recovery events
/// count.
#[must_use]
pub fn cost_lines(events: &[ConversationEvent], ours: Honoured<'_>) -> Vec<String> {
    let turns = counted(
        events
            .iter()
            .filter(|event| matches!(event.kind, EventKind::TurnStart))
            .count(),
        "turn",
    );
    let spent = Spent::of(events, ours);
    if spent.all.totals.responses == 0 {
        return vec![format!(
            "{turns} · no usage recorded (no response reported its tokens)"
        )];
    }
    let mut lines = vec![format!("{turns} · {}", spent.all.line())];
    if spent.by_model.len() > 1 {
        for (model, tally) in &spent.by_model {
            lines.push(format!("  {model}: {}", tally.line()));
        }
    }
    if spent.rewound.totals.responses > 0 {
        lines.push(format!(
            "of it, rewound ({}, paid for, no longer sent): {}",
            counted(spent.rewound_turns, "turn"),
            spent.rewound.line()
        ));
    }
    if spent.summaries.totals.responses > 0 {
        lines.push(format!(
            "of it, summaries (compaction): {}",
            spent.summaries.line()
        ));
    }
    lines
}

/// `$0.0042`, `$1.23`: four decimals below a dollar, where turns cost.
pub fn dollars(amount: f64) -> String {
    if amount == 0.0 {
        "$0".into()
    } else if amount < 0.0001 {
        "under $0.0001".into()
    } else if amount < 1.0 {
        format!("${amount:.4}")
    } else {
        format!("${amount:.2}")
    }
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
