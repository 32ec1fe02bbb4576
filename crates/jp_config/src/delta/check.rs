//! Checking a proposed change against the whole config: that its values
//! deserialize as config and its removals name keys ([`Proposal::check`]),
//! and that the config still loads with it applied
//! ([`Proposal::check_loads`], [`Proposal::applied`]).

use schematic::{Config as _, PartialConfig as _};
use serde_json::{Map, Value};

use super::{Proposal, Refusal, UnsetPath, insert, leaves, remove};
use crate::access::schema_at;
use crate::app::{AppConfig, PartialAppConfig, resolved_json};
use crate::diagnostic::Diagnostic;
use crate::load::deserialize_value;
use crate::path::ConfigPath;
use crate::validate::{resolve_model_id, validate};

impl Proposal {
    /// Checks a tool's `config` and `unset` against the config's shape:
    /// `config` must deserialize as a partial config, model aliases are
    /// resolved with `current`'s aliases, and each `unset` must parse and
    /// name a key of `schema` (the config schema; a list element only on
    /// a list).
    ///
    /// # Errors
    ///
    /// A [`Refusal`] with `invalid` set, naming the key and the problem.
    pub fn check(
        config: Option<&Value>,
        unset: &[String],
        current: &AppConfig,
        schema: &Value,
    ) -> Result<Self, Refusal> {
        let mut proposal = Self::default();
        if let Some(tree) = config {
            if !tree.is_object() {
                return Err(Refusal::invalid(
                    Vec::new(),
                    "`config` must be an object: a partial config tree such as {\"assistant\": {\"model\": {\"id\": \"...\"}}}".into(),
                ));
            }
            deserialize_value(tree).map_err(|d| {
                Refusal::invalid(d.key.clone().into_iter().collect(), d.message.clone())
            })?;
            proposal.sets = leaves(tree);
            // A null would read as "removed" and set nothing.
            if let Some((path, _)) = proposal.sets.iter().find(|(_, value)| value.is_null()) {
                return Err(Refusal::invalid(
                    vec![path.to_string()],
                    format!(
                        "`{path}` is null in `config`, which sets nothing; to remove a value, list its path in `unset`"
                    ),
                ));
            }
            for (path, value) in &mut proposal.sets {
                if path.segments() == ["assistant", "model", "id"] {
                    *value = resolve_alias(path, value, current)?;
                }
            }
        }
        for text in unset {
            let parsed = UnsetPath::parse(text)
                .map_err(|e| Refusal::invalid(vec![text.clone()], format!("`unset`: {e}")))?;
            let node = schema_at(&parsed.path, schema).map_err(|e| {
                Refusal::invalid(
                    vec![parsed.path.to_string()],
                    format!("`unset` {text}: {e}"),
                )
            })?;
            if parsed.element.is_some() && !is_list(node) {
                return Err(Refusal::invalid(
                    vec![parsed.path.to_string()],
                    format!(
                        "`unset` {text}: `{}` is not a list, so it has no element to remove",
                        parsed.path
                    ),
                ));
            }
            proposal.unsets.push(parsed);
        }
        Ok(proposal)
    }

    /// Checks that the config still loads with the change applied to
    /// `current`: as a conversation's change is replayed (see
    /// [`crate::load`]), the removals come out of the config as it is and
    /// the values go on top, and the result must merge, deserialize and
    /// pass [`crate::validate`]. Unsetting a local tool's `command`, say,
    /// leaves a tool jp cannot run. Only problems the change brings count;
    /// one the config already has is not the tool's.
    ///
    /// `current` stands for every layer below the change, `--cfg` included
    /// (a removal here also takes what `--cfg` sets for this query), so
    /// the check is of the config as this query has it, which can differ
    /// from the next load's where `--cfg` sets the same keys.
    ///
    /// # Errors
    ///
    /// A [`Refusal`] with `invalid` set, naming each key whose problem the
    /// change brings and the problem.
    pub fn check_loads(&self, current: &AppConfig) -> Result<(), Refusal> {
        if self.is_empty() {
            return Ok(());
        }
        self.applied(current).map(|_| ())
    }

    /// The config `current` becomes with the change applied, checked as
    /// [`Proposal::check_loads`] checks it: for a caller that applies
    /// changes one after another and needs each one's result.
    ///
    /// # Errors
    ///
    /// As for [`Proposal::check_loads`].
    pub fn applied(&self, current: &AppConfig) -> Result<AppConfig, Refusal> {
        let base = resolved_json(current);
        let (_, before) = apply_layers(&base, &[], &Value::Object(Map::new()));
        if !before.is_empty() {
            // A config that loaded reads back without errors; when it does
            // not, no error could be told from one the change brings, so
            // the change is not taken on trust (found in review).
            let problems: Vec<String> = before.iter().map(|d| d.message.clone()).collect();
            return Err(Refusal::invalid(
                Vec::new(),
                format!(
                    "jp cannot check this change: the config as it is does not read back ({})",
                    problems.join("; ")
                ),
            ));
        }
        let mut tree = Value::Object(Map::new());
        for (path, value) in &self.sets {
            insert(&mut tree, path.segments(), value.clone());
        }
        let (config, errors) = apply_layers(&base, &self.unsets, &tree);
        let brought: Vec<Diagnostic> = errors
            .into_iter()
            .filter(|error| !before.contains(error))
            .collect();
        if brought.is_empty() {
            return config.ok_or_else(|| {
                Refusal::invalid(
                    Vec::new(),
                    "with this change the config would not load".to_owned(),
                )
            });
        }
        let fields = brought.iter().filter_map(|d| d.key.clone()).collect();
        let problems: Vec<String> = brought
            .iter()
            .map(|d| match &d.key {
                Some(key) => format!("{key}: {}", d.message),
                None => d.message.clone(),
            })
            .collect();
        Err(Refusal::invalid(
            fields,
            format!(
                "with this change the config would not load: {}",
                problems.join("; ")
            ),
        ))
    }
}

/// The errors of the config `base` (resolved, as JSON) with `unsets`
/// removed from it and `sets` (a partial config tree) merged on top, as
/// the loader finds them: a layer that does not deserialize, a merge that
/// fails, or what validation calls an error.
/// `base` (a resolved config as JSON) without `unsets` and with `sets` on
/// top, over the built-in defaults: the config, when it merges, and the
/// errors it has.
pub(super) fn apply_layers(
    base: &Value,
    unsets: &[UnsetPath],
    sets: &Value,
) -> (Option<AppConfig>, Vec<Diagnostic>) {
    let mut lower = base.clone();
    for unset in unsets {
        remove(&mut lower, unset);
    }
    let mut merged = match PartialAppConfig::default_values(&()) {
        Ok(defaults) => defaults.unwrap_or_default(),
        Err(e) => {
            return (
                None,
                vec![Diagnostic::error(None, format!("built-in defaults: {e}"))],
            );
        }
    };
    for layer in [&lower, sets] {
        let partial = match deserialize_value(layer) {
            Ok(partial) => partial,
            Err(diagnostic) => return (None, vec![diagnostic]),
        };
        if let Err(e) = merged.merge(&(), partial) {
            return (
                None,
                vec![Diagnostic::error(
                    None,
                    format!("merging config layers: {e}"),
                )],
            );
        }
    }
    let mut config = match merged.finalize(&()) {
        Ok(finalized) => AppConfig::from_partial(finalized),
        Err(e) => {
            return (
                None,
                vec![Diagnostic::error(None, format!("finalizing config: {e}"))],
            );
        }
    };
    crate::tool::schema::adopt_local(&mut config.conversation.tools);
    let errors = validate(&config)
        .into_iter()
        .map(|problem| problem.diagnostic)
        .filter(Diagnostic::is_error)
        .collect();
    (Some(config), errors)
}

/// Whether a schema node describes a list.
fn is_list(node: &Value) -> bool {
    match node.get("type") {
        Some(Value::String(kind)) => kind == "array",
        Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "array"),
        _ => false,
    }
}

/// Resolves a model alias in a proposed `assistant.model.id`.
fn resolve_alias(path: &ConfigPath, value: &Value, current: &AppConfig) -> Result<Value, Refusal> {
    let Some(id) = value.as_str() else {
        return Ok(value.clone());
    };
    resolve_model_id(current, id)
        .map(|(provider, name)| Value::String(format!("{provider}/{name}")))
        .map_err(|e| Refusal::invalid(vec![path.to_string()], e.to_string()))
}
