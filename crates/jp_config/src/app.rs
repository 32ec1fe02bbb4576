//! The root of the config tree.

use schematic::Config;

use crate::assistant::{AssistantConfig, PartialAssistantConfig};
use crate::conversation::{ConversationConfig, PartialConversationConfig};
use crate::hooks::{HooksConfig, PartialHooksConfig};
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

    /// Commands jp runs before and after tool calls.
    #[setting(nested)]
    pub hooks: HooksConfig,
}

/// Keys whose lists are concatenated across layers (their schematic merge
/// is `append_vec`); every other key takes the last layer's value. `*`
/// stands for any one key ([`is_append_key`]).
pub const APPEND_KEYS: [&[&str]; 14] = [
    &["assistant", "instructions"],
    &["hooks", "before_tool"],
    &["hooks", "after_tool"],
    &["assistant", "instruction_files"],
    &["conversation", "policies"],
    &["conversation", "sandbox", "env"],
    &["conversation", "tools", "*", "sandbox", "env"],
    &["providers", "mcp", "*", "sandbox", "env"],
    &["conversation", "sandbox", "write"],
    &["conversation", "tools", "*", "sandbox", "write"],
    &["providers", "mcp", "*", "sandbox", "write"],
    &["conversation", "sandbox", "deny_read"],
    &["conversation", "tools", "*", "sandbox", "deny_read"],
    &["providers", "mcp", "*", "sandbox", "deny_read"],
];

/// Whether the list at `path` (its segments) is one of [`APPEND_KEYS`].
#[must_use]
pub fn is_append_key<S: AsRef<str>>(path: &[S]) -> bool {
    APPEND_KEYS.iter().any(|key| {
        key.len() == path.len()
            && key
                .iter()
                .zip(path)
                .all(|(k, p)| *k == "*" || *k == p.as_ref())
    })
}

/// The merged config as JSON (what `jp config show` prints).
#[must_use]
pub fn resolved_json(config: &AppConfig) -> serde_json::Value {
    // Serializing plain config types cannot fail; `Null` is never expected.
    let value = serde_json::to_value(config).unwrap_or(serde_json::Value::Null);
    let serde_json::Value::Object(mut map) = value else {
        return value;
    };
    map.remove("extends");
    // Sections in the order people look for them (and the docs list them).
    let mut ordered = serde_json::Map::new();
    for section in ["assistant", "providers", "conversation", "style"] {
        if let Some(v) = map.remove(section) {
            ordered.insert(section.to_owned(), v);
        }
    }
    ordered.extend(map);
    serde_json::Value::Object(ordered)
}
