//! [`Error`]: why a jp command failed, as its last line says it
//! (`error: ...`).

use std::path::PathBuf;

/// Why a jp command failed. What a command reports and then exits with a
/// code of its own (a config that does not load, no workspace) is not an
/// error here: it has been said already.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory jp reads or writes: `cannot write PATH: ...`.
    #[error("cannot {action} {}: {source}", path.display())]
    File {
        /// What jp tried: `read`, `write`, `create`, `read the link`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// A chain of symbolic links too long to follow to the file to write.
    #[error("cannot write {}: more than {limit} symbolic links in a row", path.display())]
    LinkLoop {
        /// Where the chain starts.
        path: PathBuf,
        /// How many links jp follows.
        limit: usize,
    },
    /// Standard input could not be read.
    #[error("cannot read standard input: {0}")]
    Stdin(#[source] std::io::Error),
    /// `JP_TRUST_WORKSPACE` holds neither `1` nor `0`.
    #[error("{0}")]
    TrustOverride(String),
    /// The records of trusted workspaces do not read or write.
    #[error("the trusted workspaces: {0}")]
    TrustStore(#[from] crate::trust::StoreError),
    /// The directory jp runs in could not be read.
    #[error("cannot read the current directory: {0}")]
    CurrentDir(#[source] std::io::Error),
    /// `--user` without a place for the user config.
    #[error("cannot find the user config: neither XDG_CONFIG_HOME nor HOME is set")]
    NoUserConfig,
    /// A command that writes the workspace's config, outside a workspace.
    #[error(
        "not in a workspace (no .jp directory here or above); run `jp init` at the project root, or use --user"
    )]
    NoWorkspace,
    /// The conversation store failed.
    #[error(transparent)]
    Store(#[from] jp_conversation::StoreError),
    /// The active conversation cannot be opened to continue it.
    #[error("{0}\n(`jp query --new` starts a new conversation; the old one is left as it is)")]
    ActiveUnreadable(#[source] jp_conversation::StoreError),
    /// An instruction file jp will not send.
    #[error(transparent)]
    InstructionFile(#[from] crate::query::system::InstructionFileError),
    /// The model's provider cannot be set up (an API key, a base URL).
    #[error(transparent)]
    Provider(#[from] jp_llm::ProviderError),
    /// `assistant.model.id` names no model jp can use.
    #[error("assistant.model.id: {0}")]
    Model(#[from] jp_config::validate::ModelIdError),
    /// The config's schema could not be built.
    #[error(transparent)]
    Schema(#[from] jp_config::schema::ConfigSchemaError),
    /// The flags of a query set what they may not record (why).
    #[error("the flags of this query: {0}")]
    Flags(String),
    /// The stateful policies (`conversation.policies`) cannot be set up.
    #[error(transparent)]
    StatefulPolicies(#[from] crate::stateful::SetupError),
    /// JSON jp writes could not be made.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A config key that is not a key.
    #[error(transparent)]
    ConfigPath(#[from] jp_config::path::ConfigPathError),
    /// Tool-call text that does not parse as a streamed call's would.
    #[error(transparent)]
    Arguments(#[from] jp_conversation::EventBuilderError),
    /// A tool's policy that does not compile (the loader refuses such a
    /// config, so this is a bug).
    #[error("the {field} policy of `{tool}` does not compile")]
    PolicyDoesNotCompile {
        /// `policy.run` or `policy.result`.
        field: String,
        /// The tool.
        tool: String,
    },
    /// A streamed tool call that was started was never completed.
    #[error("the tool call vanished before its flush")]
    Vanished,
    /// The runtime, the terminal or an output stream failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
