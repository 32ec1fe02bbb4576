//! The root of the config tree.

use schematic::Config;

use crate::assistant::{AssistantConfig, PartialAssistantConfig};
use crate::conversation::{ConversationConfig, PartialConversationConfig};
use crate::providers::{PartialProvidersConfig, ProvidersConfig};
use crate::style::{PartialStyleConfig, StyleConfig};

/// jp's whole configuration, after every layer is merged.
///
/// Layers, weakest first: built-in defaults, the user config
/// (`$XDG_CONFIG_HOME/jp/config.toml`), the workspace config
/// (`.jp/config.toml`, with the files it `extends`), `JP_CFG_*` environment
/// variables, and `--cfg` arguments.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct AppConfig {
    /// Other config files merged before this one, as globs relative to this
    /// file's directory (`["mcp/tools/**/*.toml"]`). This file's own values
    /// override theirs. Only read from files.
    pub extends: Vec<String>,

    /// The assistant: model, parameters and instructions.
    #[setting(nested)]
    pub assistant: AssistantConfig,

    /// Where jp reaches each LLM provider.
    #[setting(nested)]
    pub providers: ProvidersConfig,

    /// Conversation settings, including the tools the model may call.
    #[setting(nested)]
    pub conversation: ConversationConfig,

    /// How jp's output looks.
    #[setting(nested)]
    pub style: StyleConfig,
}
