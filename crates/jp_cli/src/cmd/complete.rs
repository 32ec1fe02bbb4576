//! Dynamic completion: the values only the workspace knows (conversation
//! ids, tool names, MCP servers), offered while the shell completes. Each
//! reads what it needs from the current directory and starts nothing; a
//! workspace that does not read offers nothing.

use clap_complete::CompletionCandidate;

/// The workspace's conversation ids, newest last, and `last`.
pub fn conversations() -> Vec<CompletionCandidate> {
    let Some(root) = std::env::current_dir()
        .ok()
        .and_then(|cwd| jp_config::load::find_workspace_root(&cwd))
    else {
        return Vec::new();
    };
    let store = jp_conversation::Store::new(&root);
    let mut ids: Vec<CompletionCandidate> = store
        .ids()
        .unwrap_or_default()
        .into_iter()
        .map(CompletionCandidate::new)
        .collect();
    ids.push(CompletionCandidate::new("last").help(Some("the latest conversation".into())));
    ids
}

/// The config as it applies here (trust and all), if it loads.
fn config() -> Option<jp_config::AppConfig> {
    let ctx = crate::ctx::Ctx::from_process(Vec::new(), Vec::new()).ok()?;
    jp_config::load::load(&ctx.load_options())
        .ok()
        .map(|loaded| loaded.config)
}

/// The configured tools, with their summaries.
pub fn tools() -> Vec<CompletionCandidate> {
    let Some(config) = config() else {
        return Vec::new();
    };
    jp_config::tool::offered(&config.conversation.tools)
        .map(|(name, tool)| {
            CompletionCandidate::new(name).help(tool.summary.clone().map(Into::into))
        })
        .collect()
}

/// The configured MCP servers.
pub fn servers() -> Vec<CompletionCandidate> {
    config()
        .map(|config| {
            config
                .providers
                .mcp
                .keys()
                .map(CompletionCandidate::new)
                .collect()
        })
        .unwrap_or_default()
}
