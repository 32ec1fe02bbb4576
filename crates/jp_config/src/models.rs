//! What jp knows about a model: its price and its context window.
//!
//! A built-in table holds both for the providers' common models; each
//! provider's `models` table in config (`providers.llm.<p>.models.<name>`)
//! extends it with models it lacks and overrides it field by field, so
//! `price.input = 2.5` changes one price and keeps the others.

use indexmap::IndexMap;
use schematic::Schematic;
use serde::{Deserialize, Serialize};

/// One model's entry under `providers.llm.<provider>.models`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Schematic)]
#[serde(deny_unknown_fields)]
pub struct ModelInfoConfig {
    /// What the model costs, in US dollars per million tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<PriceConfig>,

    /// How many tokens the model reads at most in one request (the system
    /// prompt, tools and conversation together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,

    /// Whether the model reasons before it answers: for `openai` models jp
    /// then asks for reasoning summaries (`reasoning.summary = "auto"`),
    /// which the API refuses for models that do not reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<bool>,
}

/// A model's prices in US dollars per million tokens. Unset cache prices
/// fall back to the input price.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, Schematic)]
#[serde(deny_unknown_fields)]
pub struct PriceConfig {
    /// Uncached input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<f64>,
    /// Output tokens (reasoning included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<f64>,
    /// Input tokens read from the provider's prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Input tokens written to the provider's prompt cache (Anthropic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

/// A provider's `models` table.
pub type ModelsConfig = IndexMap<String, ModelInfoConfig>;

/// A model's complete price, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Uncached input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from the cache.
    pub cache_read: f64,
    /// Input tokens written to the cache.
    pub cache_write: f64,
}

/// Token counts of one request, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Every input token, cached or not.
    pub input: u64,
    /// Of `input`, the tokens read from the cache.
    pub cache_read: u64,
    /// Of `input`, the tokens written to the cache.
    pub cache_write: u64,
    /// Output tokens.
    pub output: u64,
}

impl Price {
    /// What `tokens` cost, in US dollars.
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        reason = "token counts stay far below 2^52"
    )]
    pub fn cost(&self, tokens: Tokens) -> f64 {
        let uncached = tokens
            .input
            .saturating_sub(tokens.cache_read)
            .saturating_sub(tokens.cache_write);
        (uncached as f64 * self.input
            + tokens.cache_read as f64 * self.cache_read
            + tokens.cache_write as f64 * self.cache_write
            + tokens.output as f64 * self.output)
            / 1_000_000.0
    }
}

/// What jp knows of one model, built-in and configured together.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ModelInfo {
    /// Its price, when both the input and the output price are known.
    pub price: Option<Price>,
    /// Its context window in tokens, when known.
    pub context_window: Option<u64>,
    /// Whether it reasons (and can summarize its reasoning).
    pub reasoning: bool,
}

impl ModelInfo {
    /// The entry for `name` of `provider`: the built-in one with
    /// `configured` laid over it field by field.
    #[must_use]
    pub fn resolve(provider: &str, name: &str, configured: Option<&ModelInfoConfig>) -> Self {
        let builtin = builtin(provider, name);
        let price = overlay(
            builtin.as_ref().and_then(|b| b.price),
            configured.and_then(|c| c.price),
        );
        let context_window = configured
            .and_then(|c| c.context_window)
            .or(builtin.and_then(|b| b.context_window));
        let price = price.and_then(|p| {
            let (input, output) = (p.input?, p.output?);
            Some(Price {
                input,
                output,
                cache_read: p.cache_read.unwrap_or(input),
                cache_write: p.cache_write.unwrap_or(input),
            })
        });
        let reasoning = configured
            .and_then(|c| c.reasoning)
            .unwrap_or_else(|| REASONING.contains(&(provider, name)));
        Self {
            price,
            context_window,
            reasoning,
        }
    }
}

fn overlay(under: Option<PriceConfig>, over: Option<PriceConfig>) -> Option<PriceConfig> {
    match (under, over) {
        (None, over) => over,
        (under, None) => under,
        (Some(under), Some(over)) => Some(PriceConfig {
            input: over.input.or(under.input),
            output: over.output.or(under.output),
            cache_read: over.cache_read.or(under.cache_read),
            cache_write: over.cache_write.or(under.cache_write),
        }),
    }
}

/// One row of the built-in table: provider, model, input, output, cache
/// read and cache write prices (USD per million tokens; `None` for a cache
/// price the provider does not bill separately), and the context window.
type Row = (
    &'static str,
    &'static str,
    f64,
    f64,
    Option<f64>,
    Option<f64>,
    u64,
);

/// The providers' published list prices (standard tier; Gemini's for
/// prompts up to 200,000 tokens) and context windows. `docs/query.md`
/// shows this table; config overrides any of it.
const BUILTIN: &[Row] = &[
    (
        "anthropic",
        "claude-sonnet-4-5",
        3.0,
        15.0,
        Some(0.3),
        Some(3.75),
        200_000,
    ),
    (
        "anthropic",
        "claude-sonnet-4-0",
        3.0,
        15.0,
        Some(0.3),
        Some(3.75),
        200_000,
    ),
    (
        "anthropic",
        "claude-haiku-4-5",
        1.0,
        5.0,
        Some(0.1),
        Some(1.25),
        200_000,
    ),
    (
        "anthropic",
        "claude-opus-4-5",
        5.0,
        25.0,
        Some(0.5),
        Some(6.25),
        200_000,
    ),
    (
        "anthropic",
        "claude-opus-4-1",
        15.0,
        75.0,
        Some(1.5),
        Some(18.75),
        200_000,
    ),
    ("openai", "gpt-5", 1.25, 10.0, Some(0.125), None, 400_000),
    (
        "openai",
        "gpt-5-mini",
        0.25,
        2.0,
        Some(0.025),
        None,
        400_000,
    ),
    ("openai", "gpt-4.1", 2.0, 8.0, Some(0.5), None, 1_047_576),
    (
        "openai",
        "gpt-4.1-mini",
        0.4,
        1.6,
        Some(0.1),
        None,
        1_047_576,
    ),
    ("openai", "gpt-4o", 2.5, 10.0, Some(1.25), None, 128_000),
    ("openai", "o3", 2.0, 8.0, Some(0.5), None, 200_000),
    ("openai", "o4-mini", 1.1, 4.4, Some(0.275), None, 200_000),
    (
        "google",
        "gemini-2.5-pro",
        1.25,
        10.0,
        Some(0.31),
        None,
        1_048_576,
    ),
    (
        "google",
        "gemini-2.5-flash",
        0.3,
        2.5,
        Some(0.075),
        None,
        1_048_576,
    ),
];

/// The built-in models that reason (OpenAI's reasoning models, whose
/// summaries jp asks for).
const REASONING: &[(&str, &str)] = &[
    ("openai", "gpt-5"),
    ("openai", "gpt-5-mini"),
    ("openai", "o3"),
    ("openai", "o4-mini"),
];

/// The built-in entry for `name` of `provider`, if there is one.
#[must_use]
pub fn builtin(provider: &str, name: &str) -> Option<ModelInfoConfig> {
    BUILTIN
        .iter()
        .find(|row| row.0 == provider && row.1 == name)
        .map(
            |&(_, _, input, output, cache_read, cache_write, window)| ModelInfoConfig {
                price: Some(PriceConfig {
                    input: Some(input),
                    output: Some(output),
                    cache_read,
                    cache_write,
                }),
                context_window: Some(window),
                reasoning: REASONING.contains(&(provider, name)).then_some(true),
            },
        )
}

/// Every built-in row, for documentation and tests: provider, model and
/// entry.
pub fn builtin_rows() -> impl Iterator<Item = (&'static str, &'static str, ModelInfoConfig)> {
    BUILTIN
        .iter()
        .filter_map(|row| Some((row.0, row.1, builtin(row.0, row.1)?)))
}

/// A problem with one entry of a `models` table.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelProblem {
    /// The model's key in the table.
    pub model: String,
    /// The field, below the model's key (`price.input`, `context_window`).
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

/// Problems with a `models` table: negative or non-finite prices, a zero
/// window.
#[must_use]
pub fn check(models: &ModelsConfig) -> Vec<ModelProblem> {
    let mut problems = Vec::new();
    for (name, info) in models {
        if let Some(price) = info.price {
            for (field, value) in [
                ("price.input", price.input),
                ("price.output", price.output),
                ("price.cache_read", price.cache_read),
                ("price.cache_write", price.cache_write),
            ] {
                if let Some(value) = value.filter(|v| !v.is_finite() || *v < 0.0) {
                    problems.push(ModelProblem {
                        model: name.clone(),
                        field,
                        message: format!(
                            "must be a price in US dollars per million tokens, 0 or more, found {value}"
                        ),
                    });
                }
            }
        }
        if info.context_window == Some(0) {
            problems.push(ModelProblem {
                model: name.clone(),
                field: "context_window",
                message: "must be at least 1 (the most tokens the model reads)".into(),
            });
        }
    }
    problems
}

#[cfg(test)]
#[path = "models_tests.rs"]
mod tests;
