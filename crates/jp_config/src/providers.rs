//! `providers`: where jp reaches each LLM provider.

use indexmap::IndexMap;
use schematic::Config;

use crate::models::ModelsConfig;

/// Provider settings.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct ProvidersConfig {
    /// LLM providers.
    #[setting(nested)]
    pub llm: LlmProvidersConfig,

    /// MCP servers, by name; a tool uses one with `source = "mcp.NAME"`.
    #[setting(nested, merge = crate::mcp::merge_servers)]
    pub mcp: IndexMap<String, crate::mcp::McpServerConfig>,
}

/// LLM providers: one table per provider, plus model aliases.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct LlmProvidersConfig {
    /// Short names for models: `sonnet = "anthropic/claude-sonnet-4-5"` lets
    /// `assistant.model.id = "sonnet"`.
    #[setting(default = default_aliases)]
    pub aliases: IndexMap<String, String>,

    /// Anthropic's Messages API.
    #[setting(nested)]
    pub anthropic: AnthropicConfig,

    /// OpenAI's Responses API.
    #[setting(nested)]
    pub openai: OpenaiConfig,

    /// OpenRouter (OpenAI-compatible).
    #[setting(nested)]
    pub openrouter: OpenrouterConfig,

    /// A local Ollama server (native `/api/chat`).
    #[setting(nested)]
    pub ollama: OllamaConfig,

    /// A local llama.cpp server (OpenAI-compatible).
    #[setting(nested)]
    pub llamacpp: LlamacppConfig,

    /// Google's Gemini API (native `streamGenerateContent`).
    #[setting(nested)]
    pub google: GoogleConfig,
}

fn default_aliases(_: &()) -> schematic::DefaultValueResult<IndexMap<String, String>> {
    Ok(Some(
        [
            ("haiku", "anthropic/claude-haiku-4-5"),
            ("sonnet", "anthropic/claude-sonnet-4-5"),
            ("opus", "anthropic/claude-opus-5"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect(),
    ))
}

/// Anthropic's Messages API.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct AnthropicConfig {
    /// The API's base URL.
    #[setting(default = "https://api.anthropic.com")]
    pub base_url: String,

    /// The environment variable that holds the API key.
    #[setting(default = "ANTHROPIC_API_KEY")]
    pub api_key_env: String,

    /// Whether requests mark `cache_control` breakpoints, so that each step
    /// of a tool loop reads the conversation so far from Anthropic's prompt
    /// cache instead of paying for it in full again.
    #[setting(default = true)]
    pub cache: bool,

    /// Prices and context windows of this provider's models, by model name,
    /// over jp's built-in table (see `docs/query.md`): `price` in US dollars
    /// per million tokens (`input`, `output`, `cache_read`, `cache_write`),
    /// `context_window` in tokens, and `reasoning`.
    #[setting(merge = merge_models)]
    pub models: ModelsConfig,
}

/// OpenAI's Responses API (`POST {base_url}/responses`).
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct OpenaiConfig {
    /// The API's base URL.
    #[setting(default = "https://api.openai.com/v1")]
    pub base_url: String,

    /// The environment variable that holds the API key.
    #[setting(default = "OPENAI_API_KEY")]
    pub api_key_env: String,

    /// Prices and context windows of this provider's models, by model name,
    /// over jp's built-in table (see `docs/query.md`): `price` in US dollars
    /// per million tokens (`input`, `output`, `cache_read`, `cache_write`),
    /// `context_window` in tokens, and `reasoning`.
    #[setting(merge = merge_models)]
    pub models: ModelsConfig,
}

/// OpenRouter (OpenAI-compatible Chat Completions).
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct OpenrouterConfig {
    /// The API's base URL.
    #[setting(default = "https://openrouter.ai/api/v1")]
    pub base_url: String,

    /// The environment variable that holds the API key.
    #[setting(default = "OPENROUTER_API_KEY")]
    pub api_key_env: String,

    /// Prices and context windows of this provider's models, by model name,
    /// over jp's built-in table (see `docs/query.md`): `price` in US dollars
    /// per million tokens (`input`, `output`, `cache_read`, `cache_write`),
    /// `context_window` in tokens, and `reasoning`.
    #[setting(merge = merge_models)]
    pub models: ModelsConfig,
}

/// A local Ollama server.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct OllamaConfig {
    /// The server's base URL.
    #[setting(default = "http://localhost:11434")]
    pub base_url: String,

    /// The environment variable that holds an API key, for servers behind a
    /// proxy that wants one. Unset: no key is sent.
    pub api_key_env: Option<String>,

    /// Prices and context windows of this provider's models, by model name,
    /// over jp's built-in table (see `docs/query.md`): `price` in US dollars
    /// per million tokens (`input`, `output`, `cache_read`, `cache_write`),
    /// `context_window` in tokens, and `reasoning`.
    #[setting(merge = merge_models)]
    pub models: ModelsConfig,
}

/// A local llama.cpp server.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct LlamacppConfig {
    /// The server's base URL (OpenAI-compatible, ending in `/v1`).
    #[setting(default = "http://localhost:8080/v1")]
    pub base_url: String,

    /// The environment variable that holds an API key, if the server wants
    /// one. Unset: no key is sent.
    pub api_key_env: Option<String>,

    /// Prices and context windows of this provider's models, by model name,
    /// over jp's built-in table (see `docs/query.md`): `price` in US dollars
    /// per million tokens (`input`, `output`, `cache_read`, `cache_write`),
    /// `context_window` in tokens, and `reasoning`.
    #[setting(merge = merge_models)]
    pub models: ModelsConfig,
}

/// Google's Gemini API.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct GoogleConfig {
    /// The API's base URL (jp adds `/v1beta/models/{model}:...`).
    #[setting(default = "https://generativelanguage.googleapis.com")]
    pub base_url: String,

    /// The environment variable that holds the API key.
    #[setting(default = "GEMINI_API_KEY")]
    pub api_key_env: String,

    /// Prices and context windows of this provider's models, by model name,
    /// over jp's built-in table (see `docs/query.md`): `price` in US dollars
    /// per million tokens (`input`, `output`, `cache_read`, `cache_write`),
    /// `context_window` in tokens, and `reasoning`.
    #[setting(merge = merge_models)]
    pub models: ModelsConfig,
}

/// Merges `models` tables model by model: a layer's entry for a model
/// replaces the one below it, and other models stay.
fn merge_models(
    mut prev: ModelsConfig,
    next: ModelsConfig,
    _: &(),
) -> schematic::MergeResult<ModelsConfig> {
    prev.extend(next);
    Ok(Some(prev))
}

impl LlmProvidersConfig {
    /// The `models` table of `provider`, if jp knows the provider.
    #[must_use]
    pub fn models(&self, provider: &str) -> Option<&ModelsConfig> {
        Some(match provider {
            "anthropic" => &self.anthropic.models,
            "openai" => &self.openai.models,
            "openrouter" => &self.openrouter.models,
            "ollama" => &self.ollama.models,
            "llamacpp" => &self.llamacpp.models,
            "google" => &self.google.models,
            _ => return None,
        })
    }

    /// What jp knows of `name` of `provider`: the built-in entry with the
    /// configured one over it.
    #[must_use]
    pub fn model_info(&self, provider: &str, name: &str) -> crate::models::ModelInfo {
        let configured = self.models(provider).and_then(|models| models.get(name));
        crate::models::ModelInfo::resolve(provider, name, configured)
    }
}
