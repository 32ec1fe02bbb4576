//! `conversation`: the tools offered to the model.

use indexmap::IndexMap;
use schematic::Config;

use schematic::PartialConfig as _;

use crate::tool::{PartialToolConfig, ToolConfig};

/// Conversation settings.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct ConversationConfig {
    /// Tools the model may call, by name. The entry `'*'` holds defaults for
    /// every tool (`enable`, `policy`, `run`, `result`, `style`).
    #[setting(nested, merge = merge_tools)]
    pub tools: IndexMap<String, ToolConfig>,
}

/// Merges tool tables key by key, and each tool field by field, so a
/// workspace can set one tool's policy without repeating its definition
/// (schematic's default would replace the whole tool).
fn merge_tools(
    mut prev: IndexMap<String, PartialToolConfig>,
    next: IndexMap<String, PartialToolConfig>,
    context: &(),
) -> schematic::MergeResult<IndexMap<String, PartialToolConfig>> {
    for (name, tool) in next {
        match prev.get_mut(&name) {
            Some(existing) => existing
                .merge(context, tool)
                .map_err(|e| schematic::MergeError::new(format!("tool `{name}`: {e}")))?,
            None => {
                prev.insert(name, tool);
            }
        }
    }
    Ok(Some(prev))
}
