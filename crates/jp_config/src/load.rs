//! Loading the config: finding the layers, parsing each, merging them.
//!
//! Layers, weakest first:
//! 1. built-in defaults;
//! 2. the user config, `$XDG_CONFIG_HOME/jp/config.toml` (or
//!    `~/.config/jp/config.toml`);
//! 3. the workspace config, `.jp/config.toml` in the nearest directory at or
//!    above the current one that has a `.jp` directory;
//! 4. `JP_CFG_*` environment variables;
//! 5. the conversation's config changes (tools' changes, RFD 078), in
//!    order: each removes its `unsets` from every layer below it, then
//!    sets its values;
//! 6. `--cfg` arguments, in order.
//!
//! A file's `extends` globs name files merged just before it. Every layer is
//! parsed on its own, so an error names the layer (file and line, variable
//! or argument) it is in; one bad layer fails the whole load, none is
//! skipped. Merging is per field, by each field's declared strategy
//! (schematic's `merge`): most replace, `assistant.instructions` appends.

mod assign;
mod explain;
mod files;
mod legacy;
mod loaded;
mod locate;
mod memo;
mod options;
mod parse;
mod read;

use schematic::{Config as _, PartialConfig as _};

pub use assign::{AssignedValue, Assignment, AssignmentError, ENV_PREFIX};
pub use files::{
    WORKSPACE_DIR, display_path, find_workspace_root, user_config_file, workspace_config_file,
};
pub use loaded::{Layer, Loaded};
pub use locate::{line_of_offset, locate_key};
pub use options::{DeltaLayer, FlagAssignment, LoadOptions};
pub use parse::{deserialize_value, parse_toml_file};

pub use crate::app::{APPEND_KEYS, is_append_key, resolved_json};
use crate::app::{AppConfig, PartialAppConfig};
use crate::diagnostic::Diagnostic;
use crate::validate;

/// A config that does not load: every error found, plus the warnings.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", render(.errors))]
pub struct LoadError {
    /// The problems that stop the config from loading.
    pub errors: Vec<Diagnostic>,
    /// Warnings found along the way.
    pub warnings: Vec<Diagnostic>,
}

fn render(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Loads every layer, merges them, and validates the result.
///
/// # Errors
///
/// Every problem found: unreadable or malformed files, unknown keys, wrong
/// types, bad assignments, and config that fails validation (see
/// [`crate::validate`]).
pub fn load(options: &LoadOptions) -> Result<Loaded, LoadError> {
    let read::Layers {
        layers,
        partials,
        mut errors,
        warnings: layer_warnings,
        held,
    } = read::read_layers(options);

    let workspace_root = find_workspace_root(&options.cwd);
    if !errors.is_empty() {
        return Err(LoadError {
            errors,
            warnings: layer_warnings,
        });
    }

    let config = match merge(partials) {
        Ok(config) => config,
        Err(message) => {
            errors.push(Diagnostic::error(None, message));
            return Err(LoadError {
                errors,
                warnings: Vec::new(),
            });
        }
    };
    let resolved = resolved_json(&config);
    let mut config = config;
    crate::tool::schema::adopt_local(&mut config.conversation.tools);
    let mut loaded = Loaded {
        config,
        resolved,
        workspace_root,
        layers,
        warnings: Vec::new(),
        held,
    };
    let (errors, warnings): (Vec<_>, Vec<_>) = validate::validate(&loaded.config)
        .into_iter()
        .chain(validate::validate_written(&loaded.config))
        .map(|problem| loaded.place(problem))
        .partition(Diagnostic::is_error);
    loaded.warnings = layer_warnings.into_iter().chain(warnings).collect();
    if errors.is_empty() {
        Ok(loaded)
    } else {
        Err(LoadError {
            errors,
            warnings: loaded.warnings,
        })
    }
}

/// The config TOML texts make, merged in order on the built-in defaults,
/// with no other layer and unvalidated: what `jp init`'s tools are, to
/// compare a workspace's with.
///
/// # Errors
///
/// A text does not parse, or they do not merge.
pub fn config_of_toml(texts: &[&str]) -> Result<AppConfig, String> {
    let partials = texts
        .iter()
        .map(|text| parse_toml_file(text).map(|(partial, _)| partial))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|d| d.to_string())?;
    merge(partials)
}

fn merge(partials: Vec<PartialAppConfig>) -> Result<AppConfig, String> {
    let mut merged = PartialAppConfig::default_values(&())
        .map_err(|e| format!("built-in defaults: {e}"))?
        .unwrap_or_default();
    for partial in partials {
        merged
            .merge(&(), partial)
            .map_err(|e| format!("merging config layers: {e}"))?;
    }
    let finalized = merged
        .finalize(&())
        .map_err(|e| format!("finalizing config: {e}"))?;
    Ok(AppConfig::from_partial(finalized))
}
