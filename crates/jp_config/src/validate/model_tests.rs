#![allow(clippy::unwrap_used)]

use super::*;

fn config(toml: &str) -> AppConfig {
    crate::load::config_of_toml(&[toml]).unwrap()
}

#[test]
fn only_a_model_no_list_of_its_provider_holds_is_unknown() {
    let config = config("[providers.llm.anthropic.models.claude-next]\ncontext_window = 1000000\n");
    // Known: built in, named in config, an alias or an alias's target
    // (`opus` is `anthropic/claude-opus-5`, which the table lacks).
    for id in [
        "anthropic/claude-haiku-4-5",
        "anthropic/claude-next",
        "opus",
        "anthropic/claude-opus-5",
    ] {
        assert_eq!(unknown_model(&config, id), None, "{id}");
    }
    // Providers whose models jp cannot list, and ids that do not resolve.
    for id in ["ollama/anything", "openrouter/x/y", "scripted/demo", "nope"] {
        assert_eq!(unknown_model(&config, id), None, "{id}");
    }
    assert_eq!(
        unknown_model(&config, "openai/gpt-4.l").unwrap(),
        "`openai/gpt-4.l` is not a model jp knows (did you mean openai/gpt-4.1?); a model jp does not list yet works once your config names it: `[providers.llm.openai.models.\"gpt-4.l\"]`"
    );
    assert!(
        unknown_model(&config, "google/something-else")
            .unwrap()
            .starts_with("`google/something-else` is not a model jp knows; ")
    );
}
