//! A loaded config and its layers: where each value came from, and where
//! a validation problem about a key is written.

use std::path::PathBuf;

use super::locate::locate_key;
use crate::app::{AppConfig, is_append_key};
use crate::diagnostic::{Diagnostic, key_with_indices};
use crate::path::ConfigPath;
use crate::validate::Problem;

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
    pub(super) text: Option<String>,
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
    /// What the workspace's files set that needs trust, and whether it
    /// applied; `None` when they set nothing that needs it.
    pub held: Option<crate::trust::Held>,
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
    /// ([`APPEND_KEYS`](crate::app::APPEND_KEYS)), every layer that did. Empty for built-in defaults.
    #[must_use]
    pub fn value_sources(&self, path: &ConfigPath) -> Vec<&Layer> {
        let mut layers = self.sources_of(path);
        if !is_append_key(path.segments()) {
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

    /// Fills in the file and line of a validation problem about a key
    /// (also for problems found after loading, such as those a query finds
    /// once its MCP servers' schemas are known).
    #[must_use]
    pub fn place(&self, mut problem: Problem) -> Diagnostic {
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

    /// Where `path` is written: the label of the last layer that sets it
    /// (or the deepest part of it some layer sets) and, for a file, the
    /// line. `None` for a built-in default.
    #[must_use]
    pub fn written_at(&self, path: &ConfigPath) -> Option<(String, Option<usize>)> {
        let (layer, path) = self.setter_of(path)?;
        let line = layer
            .text
            .as_deref()
            .and_then(|text| locate_key(text, path.segments()));
        Some((layer.label.clone(), line))
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
    /// ([`APPEND_KEYS`](crate::app::APPEND_KEYS)), such as `conversation.policies.3.key`: the layer
    /// that entry came from and the path with the entry's index in that
    /// layer. The merged list holds each layer's entries in layer order, so
    /// the merged index is counted off layer by layer. `None` for other
    /// paths, and for an entry no layer wrote (a built-in default).
    fn entry_origin(&self, path: &ConfigPath) -> Option<(&Layer, ConfigPath)> {
        let segments = path.segments();
        let list = (1..segments.len()).find(|&len| is_append_key(&segments[..len]))?;
        let index: usize = segments[list].parse().ok()?;
        let list_path = ConfigPath::from_segments(segments[..list].iter().cloned());
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
                    .chain(segments[list + 1..].iter().cloned());
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
