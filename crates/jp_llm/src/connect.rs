//! From config to a [`Provider`]: picks the provider of a model id, its
//! base URL and its API key.

use std::path::Path;

use jp_config::AppConfig;

use crate::error::ProviderError;
use crate::provider::Provider;

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
    let key = |var: &str| -> Result<String, ProviderError> {
        env(var)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| ProviderError::MissingApiKey {
                provider: provider.to_owned(),
                var: var.to_owned(),
            })
    };
    let optional_key = |var: &Option<String>| -> Result<Option<String>, ProviderError> {
        var.as_deref().map(key).transpose()
    };
    Ok(match provider {
        "anthropic" => Box::new(crate::provider::anthropic::Anthropic::with_caching(
            &llm.anthropic.base_url,
            key(&llm.anthropic.api_key_env)?,
            llm.anthropic.cache.into(),
        )),
        "openai" => Box::new(
            crate::provider::openai_responses::OpenAiResponses::with_reasoning_summaries(
                &llm.openai.base_url,
                key(&llm.openai.api_key_env)?,
                llm.model_info("openai", model).reasoning,
            ),
        ),
        "openrouter" => Box::new(crate::provider::openai::OpenAiCompatible::new(
            "openrouter",
            &llm.openrouter.base_url,
            Some(key(&llm.openrouter.api_key_env)?),
        )),
        "llamacpp" => Box::new(crate::provider::openai::OpenAiCompatible::new(
            "llamacpp",
            &llm.llamacpp.base_url,
            optional_key(&llm.llamacpp.api_key_env)?,
        )),
        "ollama" => Box::new(crate::provider::ollama::Ollama::new(
            &llm.ollama.base_url,
            optional_key(&llm.ollama.api_key_env)?,
        )),
        "google" => Box::new(crate::provider::google::Google::new(
            &llm.google.base_url,
            key(&llm.google.api_key_env)?,
        )),
        "scripted" => Box::new(crate::provider::scripted::Scripted::open(
            model,
            workspace_root,
        )?),
        other => {
            return Err(ProviderError::Config(format!("unknown provider `{other}`")));
        }
    })
}
