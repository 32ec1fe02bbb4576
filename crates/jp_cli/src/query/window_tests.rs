use super::*;

const REMEDY_TEXT: &str = "Summarise older turns (`jp conversation compact`), take turns back (`jp conversation rewind N`), start a new conversation (`jp query --new`), switch to a model with a larger window (`--model`), or send old tool results as stubs (`conversation.elide_tool_results.enable = true`)";

const STUBS: &str =
    ", or send old tool results as stubs (`conversation.elide_tool_results.enable = true`)";

#[test]
fn a_refusal_says_each_way_out_that_fits_and_by_how_much() {
    let reads = "the conversation is too large for anthropic/x: about 100,001 tokens by jp's estimate, and the model reads at most 100,000 tokens.";
    let all = Ways {
        compact: Some((7, 41_000)),
        summary_tokens: 4096,
        rewind: Some((2, 60_000)),
        new: Some(1_200),
        alone: None,
        elision_off: true,
    };
    assert_eq!(
        refuse_before_sending("anthropic/x", 100_001, 100_000, &all),
        format!(
            "{reads} Ways out: `jp conversation compact` (which summarises turns 1–7 in at most 4,096 tokens) would make it about 41,000; `jp conversation rewind 2` (which takes back the last 2 turns and puts back the files they changed) about 60,000; a new conversation (`jp query --new`) about 1,200; or switch to a model with a larger window (`--model`){STUBS}"
        )
    );
    let some = Ways {
        compact: None,
        rewind: Some((1, 90_000)),
        elision_off: false,
        ..all.clone()
    };
    assert_eq!(
        refuse_before_sending("anthropic/x", 100_001, 100_000, &some),
        format!(
            "{reads} Ways out: `jp conversation rewind 1` (which takes back the last turn and puts back the files it changed) about 90,000; a new conversation (`jp query --new`) about 1,200; or switch to a model with a larger window (`--model`)"
        )
    );
    let alone = Ways {
        compact: None,
        rewind: None,
        new: None,
        alone: Some(100_000),
        ..all
    };
    assert_eq!(
        refuse_before_sending("anthropic/x", 100_001, 100_000, &alone),
        format!(
            "{reads} This turn alone (with the system prompt and the tools) is about 100,000 tokens, so only a shorter message or a model with a larger window (`--model`) gets it through"
        )
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
