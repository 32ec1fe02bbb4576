//! What a load reads: where to look for config files, and the layers
//! added on top of them.

use std::path::PathBuf;

use crate::trust::WorkspaceTrust;

/// Where to look for config and what to add on top.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The directory the workspace search starts from.
    pub cwd: PathBuf,
    /// The user config file. `None` means no user config (tests); the
    /// binary passes [`user_config_file`](super::user_config_file)'s answer.
    pub user_config: Option<PathBuf>,
    /// Environment variables; those starting with [`ENV_PREFIX`](super::ENV_PREFIX) are read.
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
    /// How far the workspace's own files are trusted: what needs trust
    /// ([`crate::trust`]) applies only where this covers it. The default
    /// trusts nothing.
    pub trust: WorkspaceTrust,
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
