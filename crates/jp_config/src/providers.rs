//! `providers`: where jp reaches each LLM provider.

use indexmap::IndexMap;
use schematic::{Config, Schematic};
use serde::{Deserialize, Serialize};

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

    /// Providers added by config alone, by the name used in model ids
    /// (`local = { base_url = "http://localhost:1234/v1" }` lets
    /// `assistant.model.id = "local/qwen3"`): any server that speaks one of
    /// the wire APIs jp speaks ([`WireApi`]). Like all of `providers`, a
    /// workspace's apply once the workspace is trusted.
    #[setting(nested, merge = merge_custom)]
    pub custom: IndexMap<String, CustomProviderConfig>,
}

/// The wire protocol of a provider's API: how jp speaks to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Schematic)]
#[serde(rename_all = "snake_case")]
pub enum WireApi {
    /// OpenAI's Chat Completions (`POST {base_url}/chat/completions`), which
    /// most OpenAI-compatible servers speak (OpenRouter, llama.cpp, vLLM,
    /// LM Studio, ...).
    #[default]
    OpenaiChat,
    /// OpenAI's Responses API (`POST {base_url}/responses`).
    OpenaiResponses,
    /// Anthropic's Messages API (`POST {base_url}/v1/messages`).
    Anthropic,
    /// Ollama's native chat API (`POST {base_url}/api/chat`).
    Ollama,
    /// Google's Gemini API (`streamGenerateContent`).
    Google,
    /// jp's own scripted provider (offline; its model id names a script).
    Scripted,
}

/// A provider added by config alone (`providers.llm.custom.NAME`).
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct CustomProviderConfig {
    /// The API's base URL, as for the built-in provider of the same wire
    /// API (`http://localhost:1234/v1` for an OpenAI-compatible server).
    pub base_url: String,

    /// The wire API the server speaks (`openai_chat`, the default;
    /// `openai_responses`, `anthropic`, `ollama` or `google`).
    pub wire: WireApi,

    /// The environment variable that holds the API key. Unset: no key is
    /// sent (the `openai_chat` and `ollama` wire APIs only; the others
    /// need one).
    pub api_key_env: Option<String>,

    /// Prices and context windows of this provider's models, by model name
    /// (see `docs/query.md`): `price` in US dollars per million tokens
    /// (`input`, `output`, `cache_read`, `cache_write`), `context_window`
    /// in tokens, and `reasoning`.
    #[setting(merge = merge_models)]
    pub models: ModelsConfig,
}

/// Merges custom providers name by name, each field by field, as MCP
/// servers are.
fn merge_custom(
    prev: IndexMap<String, PartialCustomProviderConfig>,
    next: IndexMap<String, PartialCustomProviderConfig>,
    context: &(),
) -> schematic::MergeResult<IndexMap<String, PartialCustomProviderConfig>> {
    crate::named::merge_by_name(prev, next, context, "provider")
}

/// One provider jp can reach, built in or added by config: the one table
/// every part of jp reads a provider from by the name in a model id
/// ([`LlmProvidersConfig::endpoint`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Endpoint<'a> {
    /// The name used in model ids (`anthropic`, or a custom provider's).
    pub name: &'a str,
    /// How jp speaks to it.
    pub wire: WireApi,
    /// Where it is reached (empty for [`WireApi::Scripted`]).
    pub base_url: &'a str,
    /// The environment variable that holds its API key, if any: when one
    /// is named, it must be set.
    pub api_key_env: Option<&'a str>,
    /// Its `models` table, over jp's built-in one.
    pub models: Option<&'a ModelsConfig>,
    /// Whether requests mark prompt-cache breakpoints (the Anthropic wire
    /// API only).
    pub cache: bool,
    /// How to start its server, for a provider that runs on the user's
    /// machine: said when nothing listens at its base URL.
    pub start_hint: Option<&'static str>,
}

/// The built-in providers' names, in the order jp lists them.
pub const BUILT_IN: [&str; 7] = [
    "anthropic",
    "openai",
    "openrouter",
    "ollama",
    "llamacpp",
    "google",
    "scripted",
];

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
    /// The provider `name` names in a model id: a built-in one, or one of
    /// `custom` (which cannot take a built-in name: validation refuses it).
    #[must_use]
    pub fn endpoint(&self, name: &str) -> Option<Endpoint<'_>> {
        let endpoint = match name {
            "anthropic" => Endpoint {
                name: "anthropic",
                wire: WireApi::Anthropic,
                base_url: &self.anthropic.base_url,
                api_key_env: Some(&self.anthropic.api_key_env),
                models: Some(&self.anthropic.models),
                cache: self.anthropic.cache,
                start_hint: None,
            },
            "openai" => Endpoint {
                name: "openai",
                wire: WireApi::OpenaiResponses,
                base_url: &self.openai.base_url,
                api_key_env: Some(&self.openai.api_key_env),
                models: Some(&self.openai.models),
                cache: false,
                start_hint: None,
            },
            "openrouter" => Endpoint {
                name: "openrouter",
                wire: WireApi::OpenaiChat,
                base_url: &self.openrouter.base_url,
                api_key_env: Some(&self.openrouter.api_key_env),
                models: Some(&self.openrouter.models),
                cache: false,
                start_hint: None,
            },
            "ollama" => Endpoint {
                name: "ollama",
                wire: WireApi::Ollama,
                base_url: &self.ollama.base_url,
                api_key_env: self.ollama.api_key_env.as_deref(),
                models: Some(&self.ollama.models),
                cache: false,
                start_hint: Some(
                    "is Ollama running? Start it with `ollama serve` (and fetch the model with `ollama pull NAME`), or set providers.llm.ollama.base_url to where it listens",
                ),
            },
            "llamacpp" => Endpoint {
                name: "llamacpp",
                wire: WireApi::OpenaiChat,
                base_url: &self.llamacpp.base_url,
                api_key_env: self.llamacpp.api_key_env.as_deref(),
                models: Some(&self.llamacpp.models),
                cache: false,
                start_hint: Some(
                    "is llama.cpp's server running? Start it with `llama-server -m MODEL.gguf --port 8080`, or set providers.llm.llamacpp.base_url to where it listens",
                ),
            },
            "google" => Endpoint {
                name: "google",
                wire: WireApi::Google,
                base_url: &self.google.base_url,
                api_key_env: Some(&self.google.api_key_env),
                models: Some(&self.google.models),
                cache: false,
                start_hint: None,
            },
            "scripted" => Endpoint {
                name: "scripted",
                wire: WireApi::Scripted,
                base_url: "",
                api_key_env: None,
                models: None,
                cache: false,
                start_hint: None,
            },
            _ => {
                let (name, custom) = self.custom.get_key_value(name)?;
                Endpoint {
                    name,
                    wire: custom.wire,
                    base_url: &custom.base_url,
                    api_key_env: custom.api_key_env.as_deref(),
                    models: Some(&custom.models),
                    cache: custom.wire == WireApi::Anthropic,
                    start_hint: None,
                }
            }
        };
        Some(endpoint)
    }

    /// Every provider jp can reach: the built-in ones, then `custom`.
    pub fn endpoints(&self) -> impl Iterator<Item = Endpoint<'_>> {
        BUILT_IN
            .into_iter()
            .chain(self.custom.keys().map(String::as_str))
            .filter_map(|name| self.endpoint(name))
    }

    /// The `models` table of `provider`, if jp knows the provider.
    #[must_use]
    pub fn models(&self, provider: &str) -> Option<&ModelsConfig> {
        self.endpoint(provider)?.models
    }

    /// What jp knows of `name` of `provider`: the built-in entry with the
    /// configured one over it.
    #[must_use]
    pub fn model_info(&self, provider: &str, name: &str) -> crate::models::ModelInfo {
        let configured = self.models(provider).and_then(|models| models.get(name));
        crate::models::ModelInfo::resolve(provider, name, configured)
    }
}

#[cfg(test)]
#[path = "providers_tests.rs"]
mod tests;
