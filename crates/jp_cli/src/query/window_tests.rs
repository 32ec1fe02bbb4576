use jp_llm::Message;

use super::*;

const REMEDY_TEXT: &str = "Start a new conversation (`jp query --new`), switch to a model with a larger window (`--model`), or send old tool results as stubs (`conversation.elide_tool_results.enable = true`)";

fn request(chars: usize) -> ChatRequest {
    ChatRequest {
        model: "m".into(),
        system: None,
        messages: vec![Message::User("x".repeat(chars))],
        tools: Vec::new(),
        max_tokens: 10,
        temperature: None,
        top_p: None,
    }
}

#[test]
fn a_request_over_the_window_is_refused_before_sending() {
    // 400,004 characters: about 100,001 tokens.
    let big = request(400_004);
    assert_eq!(
        refuse_before_sending(&big, "anthropic/x", Some(100_000)).as_deref(),
        Some(
            format!(
                "the conversation is too large for anthropic/x: about 100,001 tokens by jp's estimate, and the model reads at most 100,000 tokens. {REMEDY_TEXT}"
            )
            .as_str()
        )
    );
    assert_eq!(
        refuse_before_sending(&big, "anthropic/x", Some(100_001)),
        None
    );
    assert_eq!(
        refuse_before_sending(&big, "anthropic/x", None),
        None,
        "unknown window"
    );
}

fn http(message: &str) -> ProviderError {
    ProviderError::Http {
        provider: "p".into(),
        status: 400,
        message: message.into(),
    }
}

#[test]
fn a_providers_too_long_answer_is_told_in_the_same_words() {
    let cases = [
        (
            "prompt is too long: 215000 tokens > 200000 maximum",
            "215,000 tokens by the provider's count, and the model reads at most 200,000 tokens",
        ),
        (
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.",
            "130,512 tokens by the provider's count, and the model reads at most 128,000 tokens",
        ),
        (
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
            "1,200,000 tokens by the provider's count, and the model reads at most 1,048,576 tokens",
        ),
        // No sizes in the message: the provider's words, and jp's window.
        (
            "Your input exceeds the context window of this model. Please adjust your input and try again.",
            "the provider says \"Your input exceeds the context window of this model. Please adjust your input and try again.\", and the model reads at most 400,000 tokens",
        ),
    ];
    for (said, size) in cases {
        assert_eq!(
            reword(http(said), "provider/model", Some(400_000)),
            ProviderError::TooLarge(format!(
                "the conversation is too large for provider/model: {size}. {REMEDY_TEXT}"
            )),
            "{said}"
        );
    }
}

#[test]
fn other_errors_stay_as_they_are() {
    let other = http("invalid x-api-key");
    assert_eq!(reword(other.clone(), "p/m", Some(1)), other);
    let dropped = ProviderError::Disconnected {
        provider: "p".into(),
        message: "prompt is too long".into(),
    };
    assert_eq!(reword(dropped.clone(), "p/m", Some(1)), dropped);
}
