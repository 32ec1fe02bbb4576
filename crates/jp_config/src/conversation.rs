//! `conversation`: the tools offered to the model and the stateful
//! policies over their calls.

use indexmap::IndexMap;
use schematic::Config;

use crate::sandbox::{PartialSandboxConfig, SandboxConfig};

use crate::stateful::StatefulPolicyConfig;
use crate::tool::{PartialToolConfig, ToolConfig};

/// Conversation settings.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct ConversationConfig {
    /// Tools the model may call, by name. The entry `'*'` holds defaults for
    /// every tool (`enable`, `policy`, `run`, `result`, `style`).
    #[setting(nested, merge = merge_tools)]
    pub tools: IndexMap<String, ToolConfig>,

    /// Stateful policies: rules about the order of calls across the
    /// conversation, such as "read a file before changing it" or "run the
    /// tests before deploying". Lists from every config layer are
    /// concatenated (user config first), so a workspace cannot drop a
    /// policy the user set; see `docs/policies.md`.
    #[setting(merge = schematic::merge::append_vec)]
    pub policies: Vec<StatefulPolicyConfig>,

    /// Send old, large tool results as a one-line stub instead of whole, so
    /// a long conversation fits the model's context window. The
    /// conversation keeps every result whole.
    #[setting(nested)]
    pub elide_tool_results: ElideToolResultsConfig,

    /// Compaction: older turns sent as a summary a model writes, when the
    /// conversation nears the model's context window (`auto`) or on
    /// `jp conversation compact`. The conversation keeps the turns whole.
    #[setting(nested)]
    pub compaction: CompactionConfig,

    /// What every process jp starts may reach (local tools, MCP servers):
    /// see `docs/sandbox.md`. A tool's or server's own `sandbox` adds to it.
    #[setting(nested)]
    pub sandbox: SandboxConfig,

    /// What jp keeps so that `jp conversation rewind` can put back the
    /// files a turn's calls changed.
    #[setting(nested)]
    pub undo: UndoConfig,

    /// The most responses one query asks of the model: each time tool
    /// results go back, another response begins. Past it the query ends
    /// (the calls' results kept, so `jp query -c` goes on), with exit code
    /// 4. `jp query --max-turns N` sets it for one query.
    #[setting(default = 50)]
    pub max_turns: u32,

    /// The most one query may spend, in US dollars, by the model's price:
    /// a response is cut as soon as the query's cost passes it (estimated
    /// while it streams), and the query ends with exit code 4. Unset: no
    /// budget. `jp query --max-cost USD` sets it for one query. A model
    /// whose price jp does not know cannot keep to one: the query is
    /// refused.
    pub max_cost: Option<f64>,
}

/// `conversation.undo`.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct UndoConfig {
    /// Whether jp keeps each file its file tools change, as it was, with
    /// the conversation (on by default).
    #[setting(default = true)]
    pub enable: bool,

    /// A file larger than this many bytes is not copied: it is listed as
    /// changed, and a rewind cannot put it back.
    #[setting(default = 8_388_608)]
    pub max_file_bytes: u64,

    /// For a command (a local tool whose sandbox confines its writes to
    /// the workspace), jp looks at the whole workspace before and after
    /// the call: in a workspace with more files than this, it does not,
    /// and the call's changes are not kept.
    #[setting(default = 50_000)]
    pub max_files: u64,

    /// Likewise, the most bytes of the workspace's files jp keeps a copy
    /// of (in the user's cache directory) to put back what a command
    /// changes.
    #[setting(default = 268_435_456)]
    pub max_bytes: u64,
}

/// `conversation.elide_tool_results`.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct ElideToolResultsConfig {
    /// Whether old results are elided (off by default: the model sees
    /// everything it was given).
    #[setting(default = false)]
    pub enable: bool,

    /// Results of the last this many turns (the current one included) are
    /// always sent whole; at least 1.
    #[setting(default = 2)]
    pub keep_turns: u32,

    /// Results of at most this many bytes are always sent whole.
    #[setting(default = 4096)]
    pub min_bytes: u64,
}

/// `conversation.compaction`.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct CompactionConfig {
    /// Whether `jp query` compacts by itself, once per query, before a
    /// request larger than `at` of the model's context window (when the
    /// window is known).
    #[setting(default = true)]
    pub auto: bool,

    /// The share of the model's context window above which `jp query`
    /// compacts: more than 0, at most 1.
    #[setting(default = 0.8)]
    pub at: f64,

    /// The last this many turns (the current one included) are always sent
    /// whole; at least 1.
    #[setting(default = 2)]
    pub keep_turns: u32,

    /// The model that writes the summary, as `provider/name` or an alias;
    /// empty for the conversation's own model.
    #[setting(default = "")]
    pub model: String,

    /// The most tokens the summary may use.
    #[setting(default = 4096)]
    pub max_tokens: u32,
}

/// Merges tool tables key by key, and each tool field by field, so a
/// workspace can set one tool's policy without repeating its definition
/// (schematic's default would replace the whole tool).
fn merge_tools(
    prev: IndexMap<String, PartialToolConfig>,
    next: IndexMap<String, PartialToolConfig>,
    context: &(),
) -> schematic::MergeResult<IndexMap<String, PartialToolConfig>> {
    crate::named::merge_by_name(prev, next, context, "tool")
}
