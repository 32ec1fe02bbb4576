//! `jp usage [--since DATE|SPAN]`: what the conversations here used and
//! cost, each and in all; how much of the input the provider's prompt
//! cache served and what that saved; and the responses jp stopped early at
//! a declined call (RFD D26), whose rest was never generated or billed.

use std::process::ExitCode;

use jp_config::app::AppConfig;
use jp_config::models::Price;
use jp_conversation::{ConversationEvent, EventKind};
use jp_term::printer::sanitize;
use jp_term::{errln, outln};

use crate::cmd::format::Format;
use crate::error::Error;
use crate::exit;
use crate::usage::Tally;

/// `jp usage`.
#[derive(Debug, clap::Args)]
pub struct Usage {
    /// Only what was used since a day (`2026-12-01`, UTC) or a span back
    /// from now (`7d`, `24h`, `90m`).
    #[arg(long, value_name = "DATE|SPAN")]
    since: Option<String>,

    /// `text` for people, `json` for scripts.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

impl Usage {
    /// Prints the report for the conversations of the workspace around
    /// `cwd` (or of `cwd` when it is in none).
    pub fn run(self, ctx: &crate::ctx::Ctx) -> Result<ExitCode, Error> {
        let now = jp_conversation::conversation::now_ms();
        let since = match self.since.as_deref().map(|text| since_ms(text, now)) {
            Some(Err(why)) => {
                errln!("error: --since {}: {why}", self.since.unwrap_or_default());
                return Ok(exit::USAGE.into());
            }
            Some(Ok(ms)) => ms,
            None => 0,
        };
        let place = match crate::place::Place::of(ctx) {
            Ok(place) => crate::place::settle(place),
            Err(why) => {
                errln!("error: {why}");
                return Ok(exit::USAGE.into());
            }
        };
        let store = place.store()?;
        // Prices for what caching saved; a config that does not load leaves
        // that unsaid (the next command reports it).
        let config = jp_config::load::load(&ctx.load_options())
            .ok()
            .map(|loaded| loaded.config);
        let ids = store.ids()?;
        if ids.is_empty() {
            outln!("no conversations yet; `jp query MESSAGE` starts one");
            return Ok(ExitCode::SUCCESS);
        }
        let mut conversations = Vec::new();
        for id in ids {
            let conversation = store.load(&id)?;
            let title = conversation.title().unwrap_or_else(|| "(untitled)".into());
            conversations.push((id, title, conversation.events));
        }
        let price = |model: &str| price_of(config.as_ref(), model);
        let report = Report::of(&conversations, since, &price);
        match self.format {
            Format::Json => outln!("{}", report.json(since)),
            // Titles come from messages: their control characters are
            // made visible.
            Format::Text => {
                for line in report.lines(since) {
                    outln!("{}", sanitize(&line));
                }
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// The price of `model` (`provider/name`) by `config`.
fn price_of(config: Option<&AppConfig>, model: &str) -> Option<Price> {
    let (provider, name) = model.split_once('/')?;
    config?.providers.llm.model_info(provider, name).price
}

/// What the conversations used since a time.
#[derive(Debug, Default)]
pub struct Report {
    /// Each conversation that used something: its id, title and sums.
    pub conversations: Vec<(String, String, Tally)>,
    /// All of them.
    pub total: Tally,
    /// What reading from the cache saved, in US dollars; `None` when a
    /// model that read from it has no known price.
    pub saved: Option<f64>,
    /// Responses stopped early at a declined call.
    pub stopped: usize,
    /// The bytes of the declined calls' arguments that had arrived.
    pub stopped_bytes: usize,
}

impl Report {
    /// The report of `conversations` (id, title, events) since `since`
    /// (ms), with `price` for what caching saved.
    #[must_use]
    pub fn of(
        conversations: &[(String, String, Vec<ConversationEvent>)],
        since: u64,
        price: &dyn Fn(&str) -> Option<Price>,
    ) -> Self {
        let mut report = Self {
            saved: Some(0.0),
            ..Self::default()
        };
        for (id, title, events) in conversations {
            let mut tally = Tally::default();
            for event in events.iter().filter(|e| e.at_ms >= since) {
                match &event.kind {
                    EventKind::Usage(usage) => {
                        tally.add(usage);
                        report.total.add(usage);
                        let cached = usage.cache_read_tokens.unwrap_or(0);
                        if cached > 0 {
                            report.saved =
                                report.saved.zip(price(&usage.model)).map(|(saved, price)| {
                                    saved + cached as f64 * (price.input - price.cache_read) / 1e6
                                });
                        }
                    }
                    EventKind::StreamStopped { bytes, .. } => {
                        report.stopped += 1;
                        report.stopped_bytes += bytes;
                    }
                    _ => {}
                }
            }
            if tally.totals.responses > 0 {
                let title = title.lines().next().unwrap_or_default().to_owned();
                report.conversations.push((id.clone(), title, tally));
            }
        }
        report
    }

    /// The report for people: one line per conversation, then the totals,
    /// the cache and the early stops.
    #[must_use]
    pub fn lines(&self, since: u64) -> Vec<String> {
        let mut lines: Vec<String> = self
            .conversations
            .iter()
            .map(|(id, title, tally)| {
                let title: String = title.chars().take(40).collect();
                format!("{id} · {title}: {}", tally.line())
            })
            .collect();
        let used = self.conversations.len();
        if used == 0 {
            lines.push(if since > 0 {
                "nothing used in that time".to_owned()
            } else {
                "nothing used yet".to_owned()
            });
            return lines;
        }
        let conversations = if used == 1 {
            "conversation"
        } else {
            "conversations"
        };
        lines.push(format!(
            "total: {used} {conversations} · {}",
            self.total.line()
        ));
        let totals = &self.total.totals;
        if totals.cache_read_tokens > 0 && totals.input_tokens > 0 {
            let share = totals.cache_read_tokens * 100 / totals.input_tokens;
            let saving = match self.saved {
                Some(saved) => format!("saving about {}", crate::usage::dollars(saved)),
                None => "what that saved is unknown for a model without a price".to_owned(),
            };
            lines.push(format!(
                "cache: {share}% of the input tokens were read from the provider's cache, {saving}"
            ));
        }
        if self.stopped > 0 {
            let responses = if self.stopped == 1 {
                "response"
            } else {
                "responses"
            };
            lines.push(format!(
                "early declines: jp stopped {} {responses} at a declined call, after {} bytes of its arguments; nothing after them was generated or billed",
                self.stopped, self.stopped_bytes
            ));
        }
        lines
    }

    /// The report for scripts: `{"since_ms", "conversations": [{"id",
    /// "title", "usage"}], "total", "cache_saved_usd", "early_declines":
    /// {"responses", "argument_bytes"}}`, each usage as `jp conversation
    /// show --format json` gives it.
    #[must_use]
    pub fn json(&self, since: u64) -> serde_json::Value {
        let conversations: Vec<serde_json::Value> = self
            .conversations
            .iter()
            .map(|(id, title, tally)| {
                serde_json::json!({"id": id, "title": title, "usage": tally.totals})
            })
            .collect();
        serde_json::json!({
            "since_ms": (since > 0).then_some(since),
            "conversations": conversations,
            "total": self.total.totals,
            "cache_saved_usd": self.saved.filter(|_| self.total.totals.cache_read_tokens > 0),
            "early_declines": {"responses": self.stopped, "argument_bytes": self.stopped_bytes},
        })
    }
}

/// The time `text` names, in ms since the epoch: a day (`YYYY-MM-DD`,
/// its start in UTC) or a span back from `now` (`7d`, `24h`, `90m`).
///
/// # Errors
///
/// When it is neither, in words.
pub fn since_ms(text: &str, now: u64) -> Result<u64, String> {
    let text = text.trim();
    if let Some((number, unit)) = text
        .find(|c: char| !c.is_ascii_digit())
        .filter(|&at| at > 0)
        .map(|at| text.split_at(at))
    {
        let scale = match unit {
            "d" => Some(86_400_000),
            "h" => Some(3_600_000),
            "m" => Some(60_000),
            _ => None,
        };
        if let (Some(scale), Ok(number)) = (scale, number.parse::<u64>()) {
            return Ok(now.saturating_sub(number.saturating_mul(scale)));
        }
    }
    let parts: Vec<&str> = text.split('-').collect();
    if let [y, m, d] = parts.as_slice()
        && let (Ok(y), Ok(m), Ok(d)) = (y.parse::<i64>(), m.parse::<i64>(), d.parse::<i64>())
        && (1..=12).contains(&m)
        && (1..=31).contains(&d)
        && y >= 1970
    {
        let days = days_from_civil(y, m, d);
        return Ok(u64::try_from(days).unwrap_or(0) * 86_400_000);
    }
    Err("give a day (2026-12-01) or a span back from now (7d, 24h, 90m)".to_owned())
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the inverse of
/// the conversion `format_utc` uses).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
