//! A model id that names no model jp knows (a misspelled `--model`).

use crate::AppConfig;

use super::resolve_model_id;

/// Why `id` names no model jp knows, with the closest names it does
/// know: for a provider whose models jp lists (its built-in table, the
/// config's `providers.llm.<p>.models` and the aliases' targets), so a
/// misspelled `--model` is caught before anything is sent or recorded.
/// `None` for a model jp knows, for an id that does not resolve (said
/// elsewhere), and for a provider whose models jp cannot list (`ollama`,
/// `llamacpp`, `openrouter`, a provider of the user's, `scripted`).
#[must_use]
pub fn unknown_model(config: &AppConfig, id: &str) -> Option<String> {
    let (provider, name) = resolve_model_id(config, id).ok()?;
    let mut known: Vec<&str> = crate::models::builtin_rows()
        .filter(|(p, _, _)| *p == provider)
        .map(|(_, model, _)| model)
        .collect();
    if known.is_empty() {
        return None;
    }
    let llm = &config.providers.llm;
    known.extend(
        llm.models(provider)
            .into_iter()
            .flat_map(|models| models.keys().map(String::as_str)),
    );
    known.extend(llm.aliases.values().filter_map(|target| {
        target
            .split_once('/')
            .filter(|(p, _)| *p == provider)
            .map(|(_, model)| model)
    }));
    if known.contains(&name) {
        return None;
    }
    let mut close: Vec<(usize, &str)> = known
        .iter()
        .map(|model| (strsim::levenshtein(name, model), *model))
        .filter(|(distance, _)| *distance <= 3.max(name.len() / 4))
        .collect();
    close.sort_unstable();
    close.dedup_by_key(|(_, model)| *model);
    let suggestion = match close.as_slice() {
        [] => String::new(),
        [(_, one), ..] => format!(" (did you mean {provider}/{one}?)"),
    };
    Some(format!(
        "`{provider}/{name}` is not a model jp knows{suggestion}; a model jp does not list yet works once your config names it: `[providers.llm.{provider}.models.\"{name}\"]`"
    ))
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
