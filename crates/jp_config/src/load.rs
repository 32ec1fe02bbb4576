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
mod locate;

use std::path::{Path, PathBuf};

use schematic::{Config as _, PartialConfig as _};

pub use assign::{AssignedValue, Assignment, AssignmentError};
pub use locate::{line_of_offset, locate_key};

use crate::app::{AppConfig, PartialAppConfig};
use crate::diagnostic::{Diagnostic, key_with_indices};
use crate::path::ConfigPath;
use crate::validate;

/// The prefix of environment variables that set config keys.
pub const ENV_PREFIX: &str = "JP_CFG_";

/// The name of the workspace directory that holds `config.toml`.
pub const WORKSPACE_DIR: &str = ".jp";

/// Keys whose lists are concatenated across layers (their schematic merge
/// is `append_vec`); every other key takes the last layer's value.
pub const APPEND_KEYS: [&[&str]; 2] = [
    &["assistant", "instructions"],
    &["conversation", "policies"],
];

/// The most files one load reads through `extends`, against runaway globs.
const MAX_FILES: usize = 1024;

/// Where to look for config and what to add on top.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The directory the workspace search starts from.
    pub cwd: PathBuf,
    /// The user config file. `None` means no user config (tests); the
    /// binary passes [`user_config_file`]'s answer.
    pub user_config: Option<PathBuf>,
    /// Environment variables; those starting with [`ENV_PREFIX`] are read.
    pub env: Vec<(String, String)>,
    /// `--cfg` arguments, in order.
    pub assignments: Vec<String>,
    /// Assignments that other command-line flags make, applied after
    /// `assignments` and named after the flag (`--model haiku`).
    pub flags: Vec<FlagAssignment>,
    /// File contents to use instead of what is on disk (used to check an
    /// edit before writing it).
    pub overrides: Vec<(PathBuf, String)>,
    /// The conversation's config changes, oldest first.
    pub deltas: Vec<DeltaLayer>,
}

/// A config value a command-line flag sets: `--model haiku` sets
/// `assistant.model.id=haiku`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagAssignment {
    /// The flag as given (`--model haiku`): the layer's label, which
    /// `jp config show` and messages name.
    pub flag: String,
    /// What it sets, as a `--cfg` assignment (`assistant.model.id=haiku`).
    pub assignment: String,
}

/// A config change recorded in a conversation, replayed as a layer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeltaLayer {
    /// What `jp config show` says the value came from.
    pub label: String,
    /// Values set: a partial config tree.
    pub delta: serde_json::Value,
    /// Paths removed from the layers below (`path` or `path["json"]`).
    pub unsets: Vec<String>,
}

/// One config layer: where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// A short label: the file's path, `env JP_CFG_X`, `--cfg k=v`, a flag
    /// (`--model haiku`), or `default`.
    pub label: String,
    /// The file, for file layers.
    pub file: Option<PathBuf>,
    /// What the layer set, as JSON (used to tell where a value came from).
    pub raw: serde_json::Value,
    /// The file's text, for file layers (used to find line numbers).
    text: Option<String>,
}

/// A loaded, merged and validated config.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The merged config.
    pub config: AppConfig,
    /// The merged config as JSON, for display.
    pub resolved: serde_json::Value,
    /// The workspace root (the directory holding `.jp`), if there is one.
    pub workspace_root: Option<PathBuf>,
    /// The layers, weakest first (the built-in defaults are layer 0).
    pub layers: Vec<Layer>,
    /// Warnings: the config loads, but something deserves attention.
    pub warnings: Vec<Diagnostic>,
}

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

/// The user config file: `$XDG_CONFIG_HOME/jp/config.toml`, else
/// `$HOME/.config/jp/config.toml`. `None` when neither variable is set.
#[must_use]
pub fn user_config_file(env: &[(String, String)]) -> Option<PathBuf> {
    let var = |name: &str| {
        env.iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| PathBuf::from(v))
    };
    let base = var("XDG_CONFIG_HOME").or_else(|| var("HOME").map(|home| home.join(".config")))?;
    Some(base.join("jp").join("config.toml"))
}

/// A path for messages: relative to `cwd` when it is below it, else as is.
#[must_use]
pub fn display_path(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd)
        .map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

/// The nearest directory at or above `cwd` that has a `.jp` directory.
#[must_use]
pub fn find_workspace_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|dir| dir.join(WORKSPACE_DIR).is_dir())
        .map(Path::to_path_buf)
}

/// The workspace config file of a workspace root.
#[must_use]
pub fn workspace_config_file(root: &Path) -> PathBuf {
    root.join(WORKSPACE_DIR).join("config.toml")
}

/// Loads every layer, merges them, and validates the result.
///
/// # Errors
///
/// Every problem found: unreadable or malformed files, unknown keys, wrong
/// types, bad assignments, and config that fails validation (see
/// [`crate::validate`]).
pub fn load(options: &LoadOptions) -> Result<Loaded, LoadError> {
    let mut loader = Loader {
        options,
        layers: Vec::new(),
        partials: Vec::new(),
        errors: Vec::new(),
        warnings: Vec::new(),
        stack: Vec::new(),
        seen: Vec::new(),
    };
    loader.run();
    let Loader {
        layers,
        partials,
        mut errors,
        warnings: layer_warnings,
        ..
    } = loader;

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
    let mut loaded = Loaded {
        config,
        resolved,
        workspace_root,
        layers,
        warnings: Vec::new(),
    };
    let (errors, warnings): (Vec<_>, Vec<_>) = validate::validate(&loaded.config)
        .into_iter()
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

impl Loaded {
    /// The layer that last set `path` (or an ancestor of it, such as a whole
    /// array), if any layer did; `None` means the built-in default.
    #[must_use]
    pub fn source_of(&self, path: &ConfigPath) -> Option<&Layer> {
        self.sources_of(path).last().copied()
    }

    /// The layers the resolved value at `path` comes from: the last layer
    /// that set it, or, for fields whose lists append across layers
    /// ([`APPEND_KEYS`]), every layer that did. Empty for built-in defaults.
    #[must_use]
    pub fn value_sources(&self, path: &ConfigPath) -> Vec<&Layer> {
        let mut layers = self.sources_of(path);
        if !APPEND_KEYS.iter().any(|key| path.segments() == *key) {
            layers.drain(..layers.len().saturating_sub(1));
        }
        layers
    }

    /// Every layer that set `path` or one of its ancestors, weakest first.
    #[must_use]
    pub fn sources_of(&self, path: &ConfigPath) -> Vec<&Layer> {
        self.layers
            .iter()
            .filter(|layer| sets(&layer.raw, path.segments()))
            .collect()
    }

    /// Fills in the file and line of a validation problem about a key.
    fn place(&self, mut problem: validate::Problem) -> Diagnostic {
        let Some(path) = &problem.path else {
            return problem.diagnostic;
        };
        let located = match self.entry_origin(path) {
            // An entry of a list that appends across layers: the layer the
            // entry came from, and its index there.
            Some((layer, local)) => {
                problem.diagnostic.key = Some(key_with_indices(&local));
                Some((layer, local))
            }
            None => self.setter_of(path),
        };
        let layer = located.as_ref().map(|(layer, _)| *layer);
        if let Some((layer, path)) = &located {
            problem.diagnostic.source = Some(layer.label.clone());
            problem.diagnostic.line = layer
                .text
                .as_deref()
                .and_then(|text| locate_key(text, path.segments()));
        }
        if !problem.related.is_empty() {
            let related: Vec<String> = problem
                .related
                .iter()
                .map(|other| self.describe_related(other, layer))
                .collect();
            problem.diagnostic.message = format!(
                "{} (with {})",
                problem.diagnostic.message,
                related.join(", ")
            );
        }
        problem.diagnostic
    }

    /// Where `path` was written: the deepest part of it that some layer
    /// sets, and the last layer that sets it.
    fn setter_of(&self, path: &ConfigPath) -> Option<(&Layer, ConfigPath)> {
        (0..=path.segments().len()).rev().find_map(|len| {
            let prefix = ConfigPath::from_segments(path.segments()[..len].iter().cloned());
            self.source_of(&prefix).map(|layer| (layer, prefix))
        })
    }

    /// For a path into an entry of a list that appends across layers
    /// ([`APPEND_KEYS`]), such as `conversation.policies.3.key`: the layer
    /// that entry came from and the path with the entry's index in that
    /// layer. The merged list holds each layer's entries in layer order, so
    /// the merged index is counted off layer by layer. `None` for other
    /// paths, and for an entry no layer wrote (a built-in default).
    fn entry_origin(&self, path: &ConfigPath) -> Option<(&Layer, ConfigPath)> {
        let segments = path.segments();
        let list = APPEND_KEYS.iter().find(|key| {
            segments.len() > key.len() && segments.iter().zip(key.iter()).all(|(a, b)| a == b)
        })?;
        let index: usize = segments[list.len()].parse().ok()?;
        let list_path = ConfigPath::from_segments(list.iter().copied());
        let count = |value: &serde_json::Value| {
            list_path
                .lookup(value)
                .and_then(serde_json::Value::as_array)
                .map_or(0, Vec::len)
        };
        let written: usize = self.layers.iter().map(|layer| count(&layer.raw)).sum();
        // Entries from the built-in defaults come first.
        let mut rest = index.checked_sub(count(&self.resolved).checked_sub(written)?)?;
        for layer in &self.layers {
            let here = count(&layer.raw);
            if rest < here {
                let local = list_path
                    .segments()
                    .iter()
                    .cloned()
                    .chain(std::iter::once(rest.to_string()))
                    .chain(segments[list.len() + 1..].iter().cloned());
                return Some((layer, ConfigPath::from_segments(local)));
            }
            rest -= here;
        }
        None
    }

    /// Another key a problem is about, for its message: the key as its
    /// layer writes it, with the file and line when that is not `here`.
    fn describe_related(&self, path: &ConfigPath, here: Option<&Layer>) -> String {
        let (key, located) = match self.entry_origin(path) {
            Some((layer, local)) => (key_with_indices(&local), Some((layer, local))),
            None => (key_with_indices(path), self.setter_of(path)),
        };
        match located {
            Some((layer, written)) if !here.is_some_and(|here| std::ptr::eq(here, layer)) => {
                let line = layer
                    .text
                    .as_deref()
                    .and_then(|text| locate_key(text, written.segments()))
                    .map(|line| format!(":{line}"))
                    .unwrap_or_default();
                format!("{key} in {}{line}", layer.label)
            }
            _ => key,
        }
    }
}

/// Whether a layer's raw value sets `path` or an ancestor of it as a value.
fn sets(raw: &serde_json::Value, segments: &[String]) -> bool {
    let mut node = raw;
    for segment in segments {
        match node {
            serde_json::Value::Object(map) => match map.get(segment) {
                Some(next) => node = next,
                None => return false,
            },
            // An array (or scalar) set as a whole covers everything below.
            _ => return true,
        }
    }
    !matches!(node, serde_json::Value::Object(map) if map.is_empty()) || segments.is_empty()
}

struct Loader<'a> {
    options: &'a LoadOptions,
    layers: Vec<Layer>,
    partials: Vec<PartialAppConfig>,
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
    /// Files being loaded, for cycle detection.
    stack: Vec<PathBuf>,
    /// Files loaded so far (canonical), to bound runaway globs. A file
    /// reached twice is loaded at both places in the layer order.
    seen: Vec<PathBuf>,
}

impl Loader<'_> {
    fn run(&mut self) {
        self.layers.push(Layer {
            label: "default".into(),
            file: None,
            raw: serde_json::Value::Object(serde_json::Map::new()),
            text: None,
        });
        self.partials.push(PartialAppConfig::default());

        if let Some(user) = &self.options.user_config
            && self.exists(user)
        {
            self.file(user);
        }
        if let Some(root) = find_workspace_root(&self.options.cwd) {
            let file = workspace_config_file(&root);
            if self.exists(&file) {
                self.file(&file);
            }
        }

        let mut env: Vec<_> = self
            .options
            .env
            .iter()
            .filter(|(k, _)| k.starts_with(ENV_PREFIX))
            .collect();
        env.sort();
        for (name, value) in env {
            let label = format!("env {name}");
            match Assignment::from_env(name, value) {
                Ok(assignment) => self.assignment(label, &assignment),
                Err(e) => self
                    .errors
                    .push(with_source(Diagnostic::error(None, e.to_string()), &label)),
            }
        }

        for layer in &self.options.deltas {
            self.delta(layer);
        }

        for arg in &self.options.assignments {
            let label = format!("--cfg {arg}");
            if let Some(file) = arg.strip_prefix('@') {
                let path = self.options.cwd.join(file);
                if self.exists(&path) {
                    self.file(&path);
                } else {
                    self.errors.push(with_source(
                        Diagnostic::error(None, not_a_file(&path)),
                        &label,
                    ));
                }
                continue;
            }
            match Assignment::parse(arg) {
                Ok(assignment) => self.assignment(label, &assignment),
                Err(e) => self
                    .errors
                    .push(with_source(Diagnostic::error(None, e.to_string()), &label)),
            }
        }

        for flag in &self.options.flags {
            match Assignment::parse(&flag.assignment) {
                Ok(assignment) => self.assignment(flag.flag.clone(), &assignment),
                Err(e) => self.errors.push(with_source(
                    Diagnostic::error(None, e.to_string()),
                    &flag.flag,
                )),
            }
        }
    }

    fn exists(&self, path: &Path) -> bool {
        self.options.overrides.iter().any(|(p, _)| p == path) || path.is_file()
    }

    fn read(&self, path: &Path) -> std::io::Result<String> {
        match self.options.overrides.iter().find(|(p, _)| p == path) {
            Some((_, text)) => Ok(text.clone()),
            None => std::fs::read_to_string(path),
        }
    }

    fn file(&mut self, path: &Path) {
        let label = display_path(path, &self.options.cwd);
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.stack.contains(&key) {
            // The file whose `extends` closes the cycle is where to fix it.
            let label = self
                .stack
                .last()
                .map_or(label, |file| display_path(file, &self.options.cwd));
            let chain = self
                .stack
                .iter()
                .chain(std::iter::once(&key))
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" -> ");
            self.errors.push(with_source(
                Diagnostic::error(Some("extends".into()), format!("extends cycle: {chain}")),
                &label,
            ));
            return;
        }
        if self.seen.len() >= MAX_FILES {
            self.errors.push(with_source(
                Diagnostic::error(
                    Some("extends".into()),
                    format!("more than {MAX_FILES} config files; is an extends glob too broad?"),
                ),
                &label,
            ));
            return;
        }
        self.seen.push(key.clone());

        let text = match self.read(path) {
            Ok(text) => text,
            Err(e) => {
                self.errors.push(with_source(
                    Diagnostic::error(None, format!("cannot read: {e}")),
                    &label,
                ));
                return;
            }
        };
        let is_json = path.extension().is_some_and(|e| e == "json");
        let parsed = if is_json {
            parse_json_file(&text)
        } else {
            parse_toml_file(&text)
        };
        let (mut partial, raw) = match parsed {
            Ok(parsed) => parsed,
            Err(mut diagnostic) => {
                diagnostic.source = Some(label);
                self.errors.push(diagnostic);
                return;
            }
        };

        self.stack.push(key);
        let extends = partial.extends.take().unwrap_or_default();
        let base = path.parent().unwrap_or(Path::new("."));
        for (i, pattern) in extends.iter().enumerate() {
            let own = self.stack.last().cloned();
            let is_itself = |file: &Path| std::fs::canonicalize(file).ok() == own;
            match expand(base, pattern) {
                // A name without glob characters that is the file itself.
                Ok(files) if !is_glob(pattern) && files.iter().any(|f| is_itself(f)) => {
                    let mut d = Diagnostic::error(
                        Some(format!("extends[{i}]")),
                        format!(
                            "`{pattern}` is this file itself; a file cannot extend itself \
                             (remove the entry)"
                        ),
                    );
                    d.source = Some(label.clone());
                    d.line = locate_key(&text, &["extends".into(), i.to_string()]);
                    self.errors.push(d);
                }
                Ok(files) => {
                    // A glob such as `*.toml` next to the file matches the
                    // file itself; that is not a cycle, just not an extension.
                    for file in files {
                        if !is_itself(&file) {
                            self.file(&file);
                        }
                    }
                }
                Err(message) => {
                    let mut d = Diagnostic::error(Some(format!("extends[{i}]")), message);
                    d.source = Some(label.clone());
                    d.line = locate_key(&text, &["extends".into(), i.to_string()]);
                    self.errors.push(d);
                }
            }
        }
        self.stack.pop();

        let mut raw = raw;
        fold_legacy_raw(&mut raw);
        for (tool, field) in fold_legacy_policies(&mut partial) {
            let key = ["conversation", "tools", tool.as_str(), field];
            let mut d = deprecated_legacy(&tool, field);
            d.source = Some(label.clone());
            d.line = locate_key(&text, &key.map(str::to_owned));
            self.warnings.push(d);
        }
        self.layers.push(Layer {
            label,
            file: Some(path.to_path_buf()),
            raw,
            text: if is_json { None } else { Some(text) },
        });
        self.partials.push(partial);
    }

    /// A conversation's config change: its removals from every layer so
    /// far (each affected layer is read again), then its values.
    fn delta(&mut self, layer: &DeltaLayer) {
        for text in &layer.unsets {
            let unset = match crate::delta::UnsetPath::parse(text) {
                Ok(unset) => unset,
                Err(e) => {
                    self.errors.push(with_source(
                        Diagnostic::error(Some(text.clone()), e),
                        &layer.label,
                    ));
                    continue;
                }
            };
            for index in 0..self.layers.len() {
                if !crate::delta::remove(&mut self.layers[index].raw, &unset) {
                    continue;
                }
                match deserialize_value(&self.layers[index].raw) {
                    Ok(mut partial) => {
                        // `extends` was followed when the file loaded.
                        partial.extends = None;
                        self.partials[index] = partial;
                    }
                    Err(d) => self.errors.push(with_source(d, &layer.label)),
                }
            }
        }
        if layer.delta.as_object().is_some_and(|map| !map.is_empty()) {
            match deserialize_value(&layer.delta) {
                Ok(partial) => {
                    self.layers.push(Layer {
                        label: layer.label.clone(),
                        file: None,
                        raw: layer.delta.clone(),
                        text: None,
                    });
                    self.partials.push(partial);
                }
                Err(d) => self.errors.push(with_source(d, &layer.label)),
            }
        }
    }

    fn assignment(&mut self, label: String, assignment: &Assignment) {
        match assignment.to_partial() {
            Ok((mut partial, mut raw)) => {
                fold_legacy_raw(&mut raw);
                for (tool, field) in fold_legacy_policies(&mut partial) {
                    let mut d = deprecated_legacy(&tool, field);
                    d.source = Some(label.clone());
                    self.warnings.push(d);
                }
                self.layers.push(Layer {
                    label,
                    file: None,
                    raw,
                    text: None,
                });
                self.partials.push(partial);
            }
            Err(e) => self
                .errors
                .push(with_source(Diagnostic::error(None, e.to_string()), &label)),
        }
    }
}

/// Moves each tool's deprecated top-level `run`/`result` into
/// `policy.run`/`policy.result` within one layer, before layers merge, so
/// a higher layer's `run` overrides a lower layer's `policy.run` like any
/// other field. Where a layer sets both, `policy.*` wins; the tools and
/// fields where that happened are returned, to warn about.
fn fold_legacy_policies(partial: &mut PartialAppConfig) -> Vec<(String, &'static str)> {
    let mut both = Vec::new();
    let Some(tools) = partial.conversation.as_mut().and_then(|c| c.tools.as_mut()) else {
        return both;
    };
    for (name, tool) in tools.iter_mut() {
        let policy = tool.policy.get_or_insert_with(Default::default);
        for (legacy, modern, field) in [
            (&mut tool.run, &mut policy.run, "run"),
            (&mut tool.result, &mut policy.result, "result"),
        ] {
            if let Some(spec) = legacy.take() {
                if modern.is_some() {
                    both.push((name.clone(), field));
                } else {
                    *modern = Some(spec);
                }
            }
        }
    }
    both
}

/// The same move in a layer's raw value, so `jp config show` and error
/// locations attribute a folded `run` to the layer that wrote it.
fn fold_legacy_raw(raw: &mut serde_json::Value) {
    let Some(tools) = raw
        .get_mut("conversation")
        .and_then(|c| c.get_mut("tools"))
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    for tool in tools.values_mut() {
        let Some(tool) = tool.as_object_mut() else {
            continue;
        };
        for field in ["run", "result"] {
            if let Some(spec) = tool.remove(field) {
                let policy = tool
                    .entry("policy")
                    .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
                if let Some(policy) = policy.as_object_mut() {
                    policy.entry(field).or_insert(spec);
                }
            }
        }
    }
}

fn deprecated_legacy(tool: &str, field: &str) -> Diagnostic {
    Diagnostic::warning(
        Some(ConfigPath::from_segments(["conversation", "tools", tool, field]).to_string()),
        format!("deprecated and ignored because `policy.{field}` is also set; remove it"),
    )
}

fn with_source(mut diagnostic: Diagnostic, label: &str) -> Diagnostic {
    diagnostic.source = Some(label.to_owned());
    diagnostic
}

/// Parses a TOML config file into its partial config and its raw value.
///
/// # Errors
///
/// A diagnostic with the line and key of the first problem (no source set).
pub fn parse_toml_file(text: &str) -> Result<(PartialAppConfig, serde_json::Value), Diagnostic> {
    let deserializer =
        toml::de::Deserializer::parse(text).map_err(|e| toml_diagnostic(text, &e, None))?;
    let raw: serde_json::Value =
        toml::from_str(text).map_err(|e| toml_diagnostic(text, &e, None))?;
    let partial: PartialAppConfig =
        serde_path_to_error::deserialize(deserializer).map_err(|e| {
            let mut diagnostic = toml_diagnostic(text, e.inner(), path_to_key(e.path()));
            diagnostic.message = explain_mismatch(e.path(), &diagnostic.message, &raw);
            diagnostic
        })?;
    Ok((partial, raw))
}

fn parse_json_file(text: &str) -> Result<(PartialAppConfig, serde_json::Value), Diagnostic> {
    let raw: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        let mut d = Diagnostic::error(None, e.to_string());
        d.line = Some(e.line());
        d
    })?;
    let partial = deserialize_value(&raw)?;
    Ok((partial, raw))
}

/// Deserializes a partial config from a JSON value, naming the key of the
/// first problem.
///
/// # Errors
///
/// A diagnostic naming the key and the problem.
pub fn deserialize_value(raw: &serde_json::Value) -> Result<PartialAppConfig, Diagnostic> {
    serde_path_to_error::deserialize(raw).map_err(|e| {
        let message = explain_mismatch(e.path(), &e.inner().to_string(), raw);
        Diagnostic::error(path_to_key(e.path()), message)
    })
}

fn toml_diagnostic(text: &str, error: &toml::de::Error, key: Option<String>) -> Diagnostic {
    let message = error.message().trim_end();
    let message = match error.span() {
        Some(span) if message == "duplicate key" => explain::duplicate_key(text, span),
        _ => message.to_owned(),
    };
    let mut diagnostic = Diagnostic::error(key, message);
    diagnostic.line = error.span().map(|span| line_of_offset(text, span.start));
    diagnostic
}

/// [`explain::type_mismatch`] for the key at `path` of the layer `raw`.
fn explain_mismatch(
    path: &serde_path_to_error::Path,
    message: &str,
    raw: &serde_json::Value,
) -> String {
    use serde_path_to_error::Segment;
    let mut segments = Vec::new();
    let mut found = Some(raw);
    for segment in path {
        match segment {
            Segment::Map { key } | Segment::Enum { variant: key } => {
                found = found.and_then(|v| v.get(key));
                segments.push(key.clone());
            }
            Segment::Seq { index } => {
                found = found.and_then(|v| v.get(index));
                segments.push(index.to_string());
            }
            Segment::Unknown => found = None,
        }
    }
    explain::type_mismatch(&segments, message, found)
}

fn path_to_key(path: &serde_path_to_error::Path) -> Option<String> {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&ConfigPath::from_segments([key.as_str()]).to_string());
            }
            Segment::Unknown => {}
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Why `path`, named as a config file, cannot be read as one: it is not
/// there, or it is something other than a regular file (a directory, a
/// device, a pipe), which is not read: it could block or never end.
fn not_a_file(path: &Path) -> String {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            format!("{} is a directory, not a config file", path.display())
        }
        Ok(_) => format!(
            "{} is not a regular file (a device or a pipe?); config files are read only from regular files",
            path.display()
        ),
        Err(_) => format!("no such file: {}", path.display()),
    }
}

/// Whether an `extends` entry is a glob rather than a file name.
fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '['])
}

/// Expands one `extends` entry into files, sorted. A pattern without glob
/// characters must name an existing file.
fn expand(base: &Path, pattern: &str) -> Result<Vec<PathBuf>, String> {
    let joined = base.join(pattern);
    if !is_glob(pattern) {
        return if joined.is_file() {
            Ok(vec![joined])
        } else {
            Err(not_a_file(&joined))
        };
    }
    let text = joined.to_str().ok_or_else(|| {
        format!(
            "the pattern `{pattern}` is not valid UTF-8 once joined to {}",
            base.display()
        )
    })?;
    let paths = glob::glob(text).map_err(|e| format!("invalid glob `{pattern}`: {e}"))?;
    let mut files = Vec::new();
    for entry in paths {
        let path =
            entry.map_err(|e| format!("cannot read {}: {}", e.path().display(), e.error()))?;
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}
