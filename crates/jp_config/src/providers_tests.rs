#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::load::config_of_toml;

/// The one table of providers: each built-in one by its wire API, where
/// it is reached by default and the variable of its key; then the custom
/// ones, in the order written.
#[test]
fn every_provider_is_one_entry_of_the_table() {
    let config = config_of_toml(&[
        "[providers.llm.custom.local]\nbase_url = \"http://localhost:1234/v1\"\n\
         [providers.llm.custom.proxy]\nbase_url = \"https://proxy.example/v1\"\nwire = \"anthropic\"\napi_key_env = \"PROXY_KEY\"\n",
    ])
    .unwrap();
    let table: Vec<(&str, WireApi, &str, Option<&str>, bool)> = config
        .providers
        .llm
        .endpoints()
        .map(|e| (e.name, e.wire, e.base_url, e.api_key_env, e.cache))
        .collect();
    assert_eq!(
        table,
        [
            (
                "anthropic",
                WireApi::Anthropic,
                "https://api.anthropic.com",
                Some("ANTHROPIC_API_KEY"),
                true
            ),
            (
                "openai",
                WireApi::OpenaiResponses,
                "https://api.openai.com/v1",
                Some("OPENAI_API_KEY"),
                false
            ),
            (
                "openrouter",
                WireApi::OpenaiChat,
                "https://openrouter.ai/api/v1",
                Some("OPENROUTER_API_KEY"),
                false
            ),
            (
                "ollama",
                WireApi::Ollama,
                "http://localhost:11434",
                None,
                false
            ),
            (
                "llamacpp",
                WireApi::OpenaiChat,
                "http://localhost:8080/v1",
                None,
                false
            ),
            (
                "google",
                WireApi::Google,
                "https://generativelanguage.googleapis.com",
                Some("GEMINI_API_KEY"),
                false
            ),
            ("scripted", WireApi::Scripted, "", None, false),
            (
                "local",
                WireApi::OpenaiChat,
                "http://localhost:1234/v1",
                None,
                false
            ),
            (
                "proxy",
                WireApi::Anthropic,
                "https://proxy.example/v1",
                Some("PROXY_KEY"),
                true
            ),
        ]
    );
    assert!(config.providers.llm.endpoint("acme").is_none());
    // Each one's `models` table, but the scripted provider's.
    assert!(config.providers.llm.models("local").is_some());
    assert!(config.providers.llm.models("scripted").is_none());
}
