//! What one query may spend (`--max-cost`, `conversation.max_cost`), kept
//! while it runs: the cost of the responses that ended, by their recorded
//! usage, and an estimate of the one streaming, so that a response is cut
//! as soon as the query passes its budget, as a declined call cuts one
//! (RFD D26), rather than when it ends.
//!
//! The estimate of a streaming response takes the input tokens the
//! provider reported so far (Anthropic says them as the response starts)
//! and the larger of the output tokens it reported and the text that
//! arrived divided by [`BYTES_PER_TOKEN`] (a low guess of how much text a
//! token holds, so the estimate errs high). A query whose model has no
//! known price has no budget to keep: it is refused before it sends
//! anything ([`Budget::new`]).

use jp_config::models::{Price, Tokens};
use jp_conversation::{EventPart, ToolCallPart};
use jp_llm::{StreamEvent, Usage};

/// Bytes of streamed text taken as one output token.
pub const BYTES_PER_TOKEN: usize = 3;

/// A query's spending against its budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// The most it may spend, in US dollars.
    limit: f64,
    /// The model's price.
    price: Price,
    /// What the responses that ended cost.
    spent: f64,
    /// The usage the streaming response's provider reported last.
    reported: Option<Usage>,
    /// The bytes of text, reasoning and arguments it streamed.
    streamed: usize,
}

/// The budget was reached: what was spent, about, against what limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Over {
    /// Spent so far (an estimate while a response streams), in
    /// micro-dollars.
    pub spent_micros: u64,
    /// The budget, in micro-dollars.
    pub limit_micros: u64,
}

impl Over {
    /// `$0.0213 of the $0.02 budget`.
    #[must_use]
    pub fn describe(self) -> String {
        format!(
            "about ${} of its ${} budget",
            dollars(self.spent_micros),
            dollars(self.limit_micros)
        )
    }
}

/// Micro-dollars as dollars, with as many decimals as they need (at least
/// two, at most six).
fn dollars(micros: u64) -> String {
    let text = format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000);
    let trimmed = text.trim_end_matches('0');
    let decimals = trimmed.len() - trimmed.find('.').unwrap_or(trimmed.len()) - 1;
    if decimals < 2 {
        format!(
            "{}.{:02}",
            micros / 1_000_000,
            (micros % 1_000_000) / 10_000
        )
    } else {
        trimmed.to_owned()
    }
}

/// Dollars as micro-dollars, to the nearest.
fn micros(dollars: f64) -> u64 {
    let micros = (dollars * 1_000_000.0).round();
    if micros.is_finite() && micros > 0.0 {
        // Far below u64::MAX for any real spend; saturates otherwise.
        micros.min(u64::MAX as f64) as u64
    } else {
        0
    }
}

impl Budget {
    /// A budget of `limit` dollars for a model priced `price`.
    ///
    /// # Errors
    ///
    /// When `limit` is not a positive number of dollars, or the price is
    /// unknown (`price` is `None`): the words say which.
    pub fn new(limit: f64, price: Option<Price>, model: &str) -> Result<Self, String> {
        if !(limit.is_finite() && limit > 0.0) {
            return Err(format!(
                "the cost budget must be a positive number of US dollars, not {limit}"
            ));
        }
        let Some(price) = price else {
            return Err(format!(
                "jp knows no price for {model}, so it cannot keep to a cost budget; set one in `providers.llm.models` (docs/query.md, \"Tokens and cost\")"
            ));
        };
        Ok(Self {
            limit,
            price,
            spent: 0.0,
            reported: None,
            streamed: 0,
        })
    }

    /// A response begins streaming. One before it that ended without a
    /// report of its usage counts by its estimate.
    pub fn start_response(&mut self) {
        self.spent += self.running();
        self.reported = None;
        self.streamed = 0;
    }

    /// A response ended; its recorded usage cost `cost` dollars (`None`:
    /// none was reported, the estimate stands).
    pub fn end_response(&mut self, cost: Option<f64>) {
        self.spent += cost.unwrap_or_else(|| self.running());
        self.reported = None;
        self.streamed = 0;
    }

    /// Takes `event` of the streaming response into the estimate; whether
    /// the query is now over its budget.
    pub fn on_event(&mut self, event: &StreamEvent) -> Option<Over> {
        match event {
            StreamEvent::Usage(usage) => self.reported = Some(*usage),
            StreamEvent::Part { part, .. } => self.streamed += part_bytes(part),
            _ => {}
        }
        self.over()
    }

    /// Whether the query is over its budget now (before a request: with
    /// what the responses so far cost).
    #[must_use]
    pub fn over(&self) -> Option<Over> {
        let spent = self.spent + self.running();
        (spent >= self.limit).then(|| Over {
            spent_micros: micros(spent),
            limit_micros: micros(self.limit),
        })
    }

    /// The estimate of the streaming response's cost.
    fn running(&self) -> f64 {
        let reported = self.reported.as_ref();
        let guessed = u64::try_from(self.streamed / BYTES_PER_TOKEN).unwrap_or(u64::MAX);
        let output = reported
            .and_then(|usage| usage.output_tokens)
            .unwrap_or(0)
            .max(guessed);
        self.price.cost(Tokens {
            input: reported.and_then(|u| u.input_tokens).unwrap_or(0),
            cache_read: reported.and_then(|u| u.cache_read_tokens).unwrap_or(0),
            cache_write: reported.and_then(|u| u.cache_write_tokens).unwrap_or(0),
            output,
        })
    }
}

/// The bytes of text a part of a response carries.
fn part_bytes(part: &EventPart) -> usize {
    match part {
        EventPart::Message(text)
        | EventPart::Reasoning(text)
        | EventPart::ToolCall(ToolCallPart::ArgumentChunk(text)) => text.len(),
        EventPart::ToolCall(ToolCallPart::Start { .. }) => 0,
    }
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
