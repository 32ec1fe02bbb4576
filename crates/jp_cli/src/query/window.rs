//! Whether a request fits the model's context window: jp's estimate before
//! sending, and a provider's own "prompt too long" answer, reported in the
//! same words (how large, the model's window, what to do).

use std::sync::LazyLock;

use jp_llm::ProviderError;
use regex::Regex;

use crate::usage::grouped;

/// What to do about a conversation that outgrew its model, when the
/// provider said so (jp's estimate let it through, so it cannot tell which
/// way out is enough).
const REMEDY: &str = "Summarise older turns (`jp conversation compact`), take turns back \
                      (`jp conversation rewind N`), start a new conversation (`jp query --new`), \
                      switch to a model with a larger window (`--model`), or send old tool results \
                      as stubs (`conversation.elide_tool_results.enable = true`)";

/// The ways out of a request too large for the model, each with jp's
/// estimate of the request it leaves; only those that fit the window are
/// given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ways {
    /// `jp conversation compact`: the turns it summarises (1 to this) and
    /// the request after it, the summary counted at its most.
    pub compact: Option<(usize, u64)>,
    /// The most tokens a summary may use.
    pub summary_tokens: u32,
    /// `jp conversation rewind N`: how many turns, and the request
    /// without them.
    pub rewind: Option<(usize, u64)>,
    /// `jp query --new`: the request with the current turn alone.
    pub new: Option<u64>,
    /// The current turn alone, when it is larger than the window itself.
    pub alone: Option<u64>,
    /// Whether old tool results are sent whole
    /// (`conversation.elide_tool_results` is off).
    pub elision_off: bool,
}

/// Why a request of about `estimate` tokens is not sent to `model`
/// (`provider/name`), whose window is `window` tokens, and which of
/// `ways` gets it through.
#[must_use]
pub fn refuse_before_sending(model: &str, estimate: u64, window: u64, ways: &Ways) -> String {
    let reads = format!(
        "the conversation is too large for {model}: about {} tokens by jp's estimate, and the model reads at most {} tokens.",
        grouped(estimate),
        grouped(window)
    );
    let stubs = if ways.elision_off {
        ", or send old tool results as stubs (`conversation.elide_tool_results.enable = true`)"
    } else {
        ""
    };
    if let Some(alone) = ways.alone {
        return format!(
            "{reads} This turn alone (with the system prompt and the tools) is about {} tokens, so only a shorter message or a model with a larger window (`--model`) gets it through",
            grouped(alone)
        );
    }
    let mut out = Vec::new();
    if let Some((turns, tokens)) = ways.compact {
        out.push(format!(
            "`jp conversation compact` (which summarises {} in at most {} tokens) would make it about {}",
            crate::rewind::turn_range(1..=turns),
            grouped(u64::from(ways.summary_tokens)),
            grouped(tokens)
        ));
    }
    if let Some((turns, tokens)) = ways.rewind {
        out.push(format!(
            "`jp conversation rewind {turns}` (which takes back {} and puts back the files {} changed) about {}",
            if turns == 1 {
                "the last turn".to_owned()
            } else {
                format!("the last {turns} turns")
            },
            if turns == 1 { "it" } else { "they" },
            grouped(tokens)
        ));
    }
    if let Some(tokens) = ways.new {
        out.push(format!(
            "a new conversation (`jp query --new`) about {}",
            grouped(tokens)
        ));
    }
    if out.is_empty() {
        return format!("{reads} Switch to a model with a larger window (`--model`){stubs}");
    }
    format!(
        "{reads} Ways out: {}; or switch to a model with a larger window (`--model`){stubs}",
        out.join("; ")
    )
}

/// `error` in the words of [`refuse_before_sending`], when it is a
/// provider saying the request is larger than the model reads; else
/// `error` as it is.
#[must_use]
pub fn reword(error: ProviderError, model: &str, window: Option<u64>) -> ProviderError {
    let said = match &error {
        ProviderError::Http { message, .. } | ProviderError::Api { message, .. } => message,
        _ => return error,
    };
    if !says_too_long(said) {
        return error;
    }
    let (tokens, max) = sizes(said);
    let size = match tokens {
        Some(tokens) => format!("{} tokens by the provider's count", grouped(tokens)),
        None => format!("the provider says \"{}\"", said.trim()),
    };
    ProviderError::TooLarge(too_large(model, &size, max.or(window)))
}

fn too_large(model: &str, size: &str, window: Option<u64>) -> String {
    let reads = match window {
        Some(window) => format!(", and the model reads at most {} tokens", grouped(window)),
        None => String::new(),
    };
    format!("the conversation is too large for {model}: {size}{reads}. {REMEDY}")
}

/// Whether a provider's error message is about the request's size.
fn says_too_long(message: &str) -> bool {
    let message = message.to_lowercase();
    [
        // Anthropic.
        "prompt is too long",
        // OpenAI and OpenRouter (Chat Completions and Responses).
        "context_length_exceeded",
        "maximum context length",
        "exceeds the context window",
        // Gemini.
        "input token count",
        // llama.cpp.
        "exceed_context_size",
        "exceeds the available context size",
    ]
    .iter()
    .any(|phrase| message.contains(phrase))
}

/// The request's tokens and the model's maximum, where the message gives
/// them.
fn sizes(message: &str) -> (Option<u64>, Option<u64>) {
    static PATTERNS: LazyLock<[Regex; 3]> = LazyLock::new(|| {
        [
            // Anthropic: "prompt is too long: 215000 tokens > 200000 maximum".
            Regex::new(r"(?P<tokens>\d+) tokens > (?P<max>\d+) maximum"),
            // OpenAI: "maximum context length is 128000 tokens. However,
            // your messages resulted in 130000 tokens".
            Regex::new(r"maximum context length is (?P<max>\d+) tokens\. However, (?:your messages|you requested) (?:resulted in )?(?P<tokens>\d+) tokens"),
            // Gemini: "The input token count (1200000) exceeds the maximum
            // number of tokens allowed (1048576)".
            Regex::new(r"input token count \((?P<tokens>\d+)\) exceeds the maximum number of tokens allowed \((?P<max>\d+)\)"),
        ]
        .map(|pattern| pattern.unwrap_or_else(|_| unreachable!("the patterns are valid")))
    });
    let number = |captures: &regex::Captures<'_>, name: &str| {
        captures.name(name).and_then(|m| m.as_str().parse().ok())
    };
    PATTERNS
        .iter()
        .find_map(|pattern| pattern.captures(message))
        .map_or((None, None), |c| (number(&c, "tokens"), number(&c, "max")))
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;
