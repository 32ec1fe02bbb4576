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
    crate::provider::open(&endpoint, key, reasoning, model, workspace_root)
}
