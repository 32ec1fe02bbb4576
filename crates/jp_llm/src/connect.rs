//! From config to a [`Provider`]: picks the provider of a model id, its
//! base URL and its API key.

use std::path::Path;

use jp_config::AppConfig;
use jp_config::providers::{Endpoint, WireApi};

use crate::error::ProviderError;
use crate::provider::Provider;
use crate::provider::http::{Api, HttpProvider};

/// The provider for `provider` (a name from a model id) as configured in
/// `config`; `env` supplies API keys; `workspace_root` is where scripts are
/// found.
///
/// A missing API key fails here, before anything is sent, with a message
/// naming the variable.
///
/// # Errors
///
/// [`ProviderError::MissingApiKey`], or [`ProviderError::Config`] for an
/// unknown provider or an unreadable script.
pub fn connect(
    config: &AppConfig,
    provider: &str,
    model: &str,
    env: &dyn Fn(&str) -> Option<String>,
    workspace_root: &Path,
) -> Result<Box<dyn Provider>, ProviderError> {
    let llm = &config.providers.llm;
    let Some(endpoint) = llm.endpoint(provider) else {
        return Err(ProviderError::Config(format!(
            "unknown provider `{provider}`"
        )));
    };
    // A key variable named (a local server's is optional) must be set.
    let key = match endpoint.api_key_env {
        Some(var) => Some(env(var).filter(|v| !v.is_empty()).ok_or_else(|| {
            ProviderError::MissingApiKey {
                provider: provider.to_owned(),
                var: var.to_owned(),
            }
        })?),
        None => None,
    };
    let reasoning = llm.model_info(provider, model).reasoning;
    open(&endpoint, key, reasoning, model, workspace_root)
}

/// The provider that speaks `endpoint`'s wire API, with `key` (the value
/// of its key variable, if it names one). `reasoning`: whether `model` is
/// asked for reasoning summaries (the Responses API); `workspace_root`:
/// where the scripted provider's scripts are.
///
/// The one place a wire API becomes a provider: a new wire API is its
/// module (`provider/`), a [`WireApi`] variant with its table entry
/// (`jp_config/src/providers.rs`) and an arm below.
///
/// # Errors
///
/// [`ProviderError::Config`] for an unreadable script.
fn open(
    endpoint: &Endpoint<'_>,
    key: Option<String>,
    reasoning: bool,
    model: &str,
    workspace_root: &std::path::Path,
) -> Result<Box<dyn Provider>, ProviderError> {
    let base_url = endpoint.base_url;
    // An HTTP provider, saying how to start its server where the table
    // knows (a local one).
    fn http<A: Api>(provider: HttpProvider<A>, endpoint: &Endpoint<'_>) -> Box<dyn Provider> {
        Box::new(provider.with_start_hint(endpoint.start_hint))
    }
    Ok(match endpoint.wire {
        WireApi::Anthropic => http(
            crate::provider::anthropic::Anthropic::with_caching(
                base_url,
                key.unwrap_or_default(),
                endpoint.cache.into(),
            ),
            endpoint,
        ),
        WireApi::OpenaiResponses => http(
            crate::provider::openai_responses::OpenAiResponses::with_reasoning_summaries(
                base_url,
                key.unwrap_or_default(),
                reasoning,
            ),
            endpoint,
        ),
        WireApi::OpenaiChat => http(
            crate::provider::openai::OpenAiCompatible::new(endpoint.name, base_url, key),
            endpoint,
        ),
        WireApi::Ollama => http(
            crate::provider::ollama::Ollama::new(base_url, key),
            endpoint,
        ),
        WireApi::Google => http(
            crate::provider::google::Google::new(base_url, key.unwrap_or_default()),
            endpoint,
        ),
        WireApi::Scripted => Box::new(crate::provider::scripted::Scripted::open(
            model,
            workspace_root,
        )?),
    })
}
