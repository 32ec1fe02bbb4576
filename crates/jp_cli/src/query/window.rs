//! Whether a request fits the model's context window: jp's estimate before
//! sending, and a provider's own "prompt too long" answer, reported in the
//! same words (how large, the model's window, what to do).

use std::sync::LazyLock;

use jp_llm::{ChatRequest, ProviderError};
use regex::Regex;

use crate::usage::grouped;

/// What to do about a conversation that outgrew its model.
const REMEDY: &str = "Start a new conversation (`jp query --new`), switch to a model with a larger \
                      window (`--model`), or send old tool results as stubs \
                      (`conversation.elide_tool_results.enable = true`)";

/// Why `request` is not sent to `model` (`provider/name`), whose window is
/// `window` tokens: jp's estimate of it is larger. `None` when it may fit
/// or the window is unknown.
#[must_use]
pub fn refuse_before_sending(
    request: &ChatRequest,
    model: &str,
    window: Option<u64>,
) -> Option<String> {
    let window = window?;
    let estimate = jp_llm::request::estimate_tokens(request);
    (estimate > window).then(|| {
        too_large(
            model,
            &format!("about {} tokens by jp's estimate", grouped(estimate)),
            Some(window),
        )
    })
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
