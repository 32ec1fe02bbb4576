//! Model ids: `provider/name` or an alias, resolved and checked
//! (`assistant.model.id`, `conversation.compaction.model`, the aliases),
//! and one that names no model jp knows (a misspelled `--model`).

use crate::AppConfig;

use super::{ModelIdError, Problem, key};

/// Splits `provider/name`, resolving an alias first.
///
/// # Errors
///
/// What is wrong with the id.
pub fn resolve_model_id<'a>(
    config: &'a AppConfig,
    id: &'a str,
) -> Result<(&'a str, &'a str), ModelIdError> {
    let target = config
        .providers
        .llm
        .aliases
        .get(id)
        .map_or(id, String::as_str);
    let Some((provider, name)) = target.split_once('/') else {
        return Err(ModelIdError::NotAnId {
            id: id.to_owned(),
            aliases: list(config.providers.llm.aliases.keys()),
        });
    };
    if config.providers.llm.endpoint(provider).is_none() {
        return Err(ModelIdError::UnknownProvider {
            provider: provider.to_owned(),
            target: target.to_owned(),
            known: config
                .providers
                .llm
                .endpoints()
                .map(|endpoint| endpoint.name)
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    if name.is_empty() {
        return Err(ModelIdError::NoName {
            target: target.to_owned(),
        });
    }
    Ok((provider, name))
}

/// Names for a message, joined (`none` for no name).
pub(super) fn list<'a>(items: impl Iterator<Item = &'a String>) -> String {
    let items = items.map(String::as_str).collect::<Vec<_>>();
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// The model ids the config names resolve.
pub(super) fn check_model(config: &AppConfig, problems: &mut Vec<Problem>) {
    if let Err(error) = resolve_model_id(config, &config.assistant.model.id) {
        problems.push(Problem::error(key("assistant.model.id"), error.to_string()));
    }
    let summariser = &config.conversation.compaction.model;
    if !summariser.is_empty()
        && let Err(error) = resolve_model_id(config, summariser)
    {
        problems.push(Problem::error(
            key("conversation.compaction.model"),
            error.to_string(),
        ));
    }
    for (alias, target) in &config.providers.llm.aliases {
        let path = key("providers.llm.aliases").join(alias.clone());
        if config.providers.llm.aliases.contains_key(target) {
            problems.push(Problem::error(
                path,
                format!("`{target}` is an alias; an alias must name `provider/name`"),
            ));
        } else if let Err(error) = resolve_model_id(config, target) {
            problems.push(Problem::error(path, error.to_string()));
        }
    }
}

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
