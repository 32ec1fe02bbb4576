//! Reading every layer in order: the files (following `extends`), the
//! environment, the conversation's changes, `--cfg` and other flags.

use std::path::{Path, PathBuf};

use super::assign::{Assignment, ENV_PREFIX};
use super::files::{
    display_path, expand, find_workspace_root, is_glob, not_a_file, refused_dir,
    workspace_config_file,
};
use super::legacy::{deprecated_legacy, fold_legacy_policies, fold_legacy_raw};
use super::loaded::Layer;
use super::locate::locate_key;
use super::options::{DeltaLayer, LoadOptions};
use super::parse::{deserialize_value, parse_json_file, parse_toml_file};
use crate::app::PartialAppConfig;
use crate::delta::{UnsetPath, remove};
use crate::diagnostic::Diagnostic;
use crate::trust::{self, Held, HeldKey, HeldLayer};

/// The most files one load reads through `extends`, against runaway globs.
pub const MAX_FILES: usize = 1024;

/// The largest config file read, in bytes: a file is text someone wrote,
/// and a bigger one is refused rather than read without bound.
pub const MAX_CONFIG_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Every layer read, weakest first, with what was found reading them.
pub(super) struct Layers {
    /// Where each layer came from and what it set.
    pub(super) layers: Vec<Layer>,
    /// Each layer's partial config, in the same order.
    pub(super) partials: Vec<PartialAppConfig>,
    /// Layers that do not read.
    pub(super) errors: Vec<Diagnostic>,
    /// Things worth fixing in layers that read.
    pub(super) warnings: Vec<Diagnostic>,
    /// What the workspace's files set that needs trust ([`crate::trust`]).
    pub(super) held: Option<Held>,
}

/// Reads every layer `options` names: the built-in defaults, the user and
/// workspace files (with what they extend), the environment, the
/// conversation's changes, `--cfg` arguments and flags.
///
/// The workspace's files may extend files outside the workspace (and
/// outside the user's config directory) only once the workspace is
/// trusted: they are first read without them, the list of them held with
/// the rest of what needs trust; when the trust covers that, they are read
/// again with them. Trust is of what the workspace's own files hold and
/// which outside files they name, not of those files' contents (they are
/// not the repository's).
pub(super) fn read_layers(options: &LoadOptions) -> Layers {
    let first = Loader::new(options, false).run();
    let trusted_outside =
        !first.outside.is_empty() && first.held.as_ref().is_some_and(|held| held.applied);
    if !trusted_outside {
        return first.into_layers();
    }
    let mut second = Loader::new(options, true).run();
    // What was trusted is what the first reading held.
    second.held = first.held;
    second.into_layers()
}

/// A file outside the workspace that one of its files extends.
struct Outside {
    /// The file whose `extends` names it.
    from: PathBuf,
    /// That file's label.
    label: String,
    /// The line of the `extends` entry.
    line: Option<usize>,
    /// The file named, resolved.
    path: PathBuf,
}

struct Loader<'a> {
    options: &'a LoadOptions,
    /// Whether the workspace's files may extend files outside it (and
    /// outside the user's config directory): the second reading of a
    /// trusted workspace. What they hold then applies as trusted.
    read_outside: bool,
    /// While the workspace's files are read: where they may extend
    /// without trust (the canonical workspace root and user config
    /// directory).
    inside: Option<Vec<PathBuf>>,
    /// Files outside those the workspace's files extend and that were not
    /// read.
    outside: Vec<Outside>,
    layers: Vec<Layer>,
    partials: Vec<PartialAppConfig>,
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
    /// Files being loaded, for cycle detection.
    stack: Vec<PathBuf>,
    /// Files loaded so far (canonical), to bound runaway globs. A file
    /// reached twice is loaded at both places in the layer order.
    seen: Vec<PathBuf>,
    /// What the workspace's files set that needs trust.
    held: Option<Held>,
}

impl<'a> Loader<'a> {
    fn new(options: &'a LoadOptions, read_outside: bool) -> Self {
        Loader {
            options,
            read_outside,
            inside: None,
            outside: Vec::new(),
            layers: Vec::new(),
            partials: Vec::new(),
            errors: Vec::new(),
            warnings: Vec::new(),
            stack: Vec::new(),
            seen: Vec::new(),
            held: None,
        }
    }

    fn run(mut self) -> Self {
        self.read_all();
        self
    }

    fn into_layers(self) -> Layers {
        Layers {
            layers: self.layers,
            partials: self.partials,
            errors: self.errors,
            warnings: self.warnings,
            held: self.held,
        }
    }

    fn read_all(&mut self) {
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
                let first = self.layers.len();
                let mut inside =
                    vec![std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone())];
                if let Some(dir) = self.options.user_config.as_deref().and_then(Path::parent) {
                    inside.push(std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()));
                }
                self.inside = Some(inside);
                self.file(&file);
                self.inside = None;
                self.hold(first, &root);
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
            None => read_bounded(path),
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
        if let Some(message) = refused_dir(path) {
            self.errors.push(with_source(
                Diagnostic::error(None, format!("not read: {message}")),
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
        self.extends(path, &label, &text, &extends);
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

    /// Loads the files a file's `extends` names (the file is on top of
    /// the stack), before the file itself.
    fn extends(&mut self, path: &Path, label: &str, text: &str, extends: &[String]) {
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
                    d.source = Some(label.to_owned());
                    d.line = locate_key(text, &["extends".into(), i.to_string()]);
                    self.errors.push(d);
                }
                Ok(files) => {
                    let line = || locate_key(text, &["extends".into(), i.to_string()]);
                    // A glob such as `*.toml` next to the file matches the
                    // file itself; that is not a cycle, just not an extension.
                    for file in files {
                        if is_itself(&file) {
                            continue;
                        }
                        if let Some(message) = refused_dir(&file) {
                            let mut d = Diagnostic::error(
                                Some(format!("extends[{i}]")),
                                format!("not read: {message}"),
                            );
                            d.source = Some(label.to_owned());
                            d.line = line();
                            self.errors.push(d);
                            continue;
                        }
                        if let Some(outside) = self.untrusted_outside(&file) {
                            self.outside.push(Outside {
                                from: path.to_path_buf(),
                                label: label.to_owned(),
                                line: line(),
                                path: outside,
                            });
                            continue;
                        }
                        self.file(&file);
                    }
                }
                Err(message) => {
                    let mut d = Diagnostic::error(Some(format!("extends[{i}]")), message);
                    d.source = Some(label.to_owned());
                    d.line = locate_key(text, &["extends".into(), i.to_string()]);
                    self.errors.push(d);
                }
            }
        }
    }

    /// The canonical path of `file`, when the workspace's files are being
    /// read, `file` is outside the workspace and the user's config
    /// directory, and such files are not read in this reading.
    fn untrusted_outside(&self, file: &Path) -> Option<PathBuf> {
        let inside = self.inside.as_ref()?;
        if self.read_outside {
            return None;
        }
        let resolved = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        (!inside.iter().any(|dir| resolved.starts_with(dir))).then_some(resolved)
    }

    /// Takes out of the workspace's layers (`first..`: its file and what
    /// it extends) what needs trust, unless the load's trust covers it.
    fn hold(&mut self, first: usize, root: &Path) {
        let mut values = Vec::new();
        let mut keys = Vec::new();
        let mut kept_layers = Vec::new();
        for (index, layer) in self.layers.iter().enumerate().skip(first) {
            let (kept, held) = trust::split(&layer.raw);
            if held.as_object().is_none_or(serde_json::Map::is_empty) {
                continue;
            }
            let file = layer.file.as_deref().map_or_else(
                || layer.label.clone(),
                |f| f.strip_prefix(root).unwrap_or(f).display().to_string(),
            );
            let mut file_keys: Vec<HeldKey> = trust::held_keys(&held)
                .into_iter()
                .map(|key| HeldKey {
                    file: layer.label.clone(),
                    line: layer.text.as_deref().and_then(|t| locate_key(t, &key)),
                    key: key.join("."),
                })
                .collect();
            // In the order they are written (keys with no line last).
            file_keys.sort_by_key(|k| k.line.unwrap_or(usize::MAX));
            keys.extend(file_keys);
            // Every file in merge order, a file merged twice is here twice: the
            // order decides which value wins.
            values.push(HeldLayer { file, values: held });
            kept_layers.push((index, kept));
        }
        // The files outside that were not read: which they are needs trust.
        for outside in &self.outside {
            let file = outside.from.strip_prefix(root).unwrap_or(&outside.from);
            let file = file.display().to_string();
            let at = match values
                .iter()
                .rposition(|layer: &HeldLayer| layer.file == file)
            {
                Some(at) => at,
                None => {
                    values.push(HeldLayer {
                        file,
                        values: serde_json::json!({}),
                    });
                    values.len() - 1
                }
            };
            if let Some(held) = values[at].values.as_object_mut() {
                let list = held
                    .entry("extends")
                    .or_insert_with(|| serde_json::json!([]));
                if let Some(list) = list.as_array_mut() {
                    list.push(outside.path.display().to_string().into());
                }
            }
            keys.push(HeldKey {
                file: outside.label.clone(),
                line: outside.line,
                key: format!("extends {} (outside the workspace)", outside.path.display()),
            });
        }
        if values.is_empty() {
            return;
        }
        let mut held = Held::new(values, keys, false);
        // The second reading of a trusted workspace ([`read_layers`]).
        held.applied = self.read_outside || held.covered_by(&self.options.trust);
        if !held.applied {
            for (index, kept) in kept_layers {
                match deserialize_value(&kept) {
                    Ok(mut partial) => {
                        // `extends` was followed when the file loaded.
                        partial.extends = None;
                        self.partials[index] = partial;
                        self.layers[index].raw = kept;
                    }
                    Err(d) => {
                        let label = self.layers[index].label.clone();
                        self.errors.push(with_source(d, &label));
                    }
                }
            }
        }
        self.held = Some(held);
    }

    /// A conversation's config change: its removals from every layer so
    /// far (each affected layer is read again), then its values.
    fn delta(&mut self, layer: &DeltaLayer) {
        for text in &layer.unsets {
            let unset = match UnsetPath::parse(text) {
                Ok(unset) => unset,
                Err(e) => {
                    self.errors.push(with_source(
                        Diagnostic::error(Some(text.clone()), e.to_string()),
                        &layer.label,
                    ));
                    continue;
                }
            };
            for index in 0..self.layers.len() {
                if !remove(&mut self.layers[index].raw, &unset) {
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

/// Reads a config file: a regular file of at most
/// [`MAX_CONFIG_FILE_BYTES`], as UTF-8.
fn read_bounded(path: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other(
            "not a regular file; config files are read only from regular files",
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {MAX_CONFIG_FILE_BYTES} bytes, the most a config file may be"
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not valid UTF-8"))
}

fn with_source(mut diagnostic: Diagnostic, label: &str) -> Diagnostic {
    diagnostic.source = Some(label.to_owned());
    diagnostic
}
