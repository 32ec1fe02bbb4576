//! Dynamic completion: the values only the workspace knows (conversation
//! ids, tool names, MCP servers, the models its config names), offered
//! while the shell completes. Each reads what it needs from the current
//! directory and starts nothing; a workspace that does not read offers
//! nothing (models: the built-in ones and aliases still).

use clap_complete::CompletionCandidate;

/// The conversation ids here (the workspace's, or outside one the current
/// directory's: [`crate::place`]), newest last, and `last`.
pub fn conversations() -> Vec<CompletionCandidate> {
    let Some(store) = std::env::current_dir().ok().and_then(|cwd| {
        let workspace = jp_config::load::find_workspace_root(&cwd);
        crate::place::Place::find(&cwd, workspace, &crate::ctx::process_env())
            .ok()?
            .stored()
    }) else {
        return Vec::new();
    };
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

/// The models jp knows, as `--model` takes them: the aliases, the
/// built-in table's models and those the config names, each once.
/// The model names [`models`] offers, as text (for `jp chat`'s `/model`).
pub fn model_names() -> Vec<String> {
    models()
        .iter()
        .map(|candidate| candidate.get_value().to_string_lossy().into_owned())
        .collect()
}

pub fn models() -> Vec<CompletionCandidate> {
    let config = config().unwrap_or_default();
    let llm = &config.providers.llm;
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for (alias, target) in &llm.aliases {
        if seen.insert(alias.clone()) {
            out.push(CompletionCandidate::new(alias).help(Some(target.clone().into())));
        }
    }
    let configured = jp_config::providers::BUILT_IN.iter().flat_map(|provider| {
        llm.models(provider)
            .into_iter()
            .flat_map(move |models| models.keys().map(move |name| format!("{provider}/{name}")))
    });
    let builtin = jp_config::models::builtin_rows().map(|(p, name, _)| format!("{p}/{name}"));
    for id in builtin.chain(configured) {
        if seen.insert(id.clone()) {
            out.push(CompletionCandidate::new(id));
        }
    }
    out
}
