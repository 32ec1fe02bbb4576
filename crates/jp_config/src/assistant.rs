//! `assistant`: which model answers and how.

use schematic::Config;

/// The assistant: the model and the instructions it gets.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct AssistantConfig {
    /// Instructions sent to the model before the conversation, as the system
    /// prompt, in place of jp's default one (which says where the model is:
    /// the workspace, the OS, the date, how tools and declines work). Sent
    /// as written: never run as a template.
    pub system_prompt: Option<String>,

    /// Extra instructions appended to the system prompt (the default one or
    /// `system_prompt`), one paragraph each. Lists from every config layer
    /// are concatenated (user config first), so a workspace adds to the
    /// user's instructions instead of replacing them.
    #[setting(merge = schematic::merge::append_vec)]
    pub instructions: Vec<String>,

    /// Files whose text is appended after `instructions`, one paragraph
    /// each (`AGENTS.md`, a style guide): paths relative to the workspace
    /// root, which they may not leave (a link out of it is refused too).
    /// Lists from every config layer are concatenated.
    /// A file listed that does not exist is a warning; one outside the
    /// workspace, too large or not text is an error.
    #[setting(merge = schematic::merge::append_vec)]
    pub instruction_files: Vec<String>,

    /// Whether `AGENTS.md` is read without being listed: the one at the
    /// workspace root, then each in a directory between the root and the
    /// current directory, when present (absent ones are skipped silently),
    /// after `instructions` and before `instruction_files`.
    #[setting(default = true)]
    pub agents_md: bool,

    /// Whether jp's default system prompt says the repository's state when
    /// the workspace is a git repository: the branch, whether the working
    /// tree has changes, and the last commit's subject (taken once, as the
    /// session starts, by `git` run in the default sandbox).
    #[setting(default = true)]
    pub repository_state: bool,

    /// The model and its parameters.
    #[setting(nested)]
    pub model: ModelConfig,
}

/// The model that answers.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct ModelConfig {
    /// The model as `provider/name` (`anthropic/claude-sonnet-4-5`,
    /// `ollama/qwen3.5:9b`), or an alias from `providers.llm.aliases`
    /// (`sonnet`). The provider is everything before the first `/`.
    #[setting(default = "anthropic/claude-sonnet-4-5")]
    pub id: String,

    /// Generation parameters sent with every request.
    #[setting(nested)]
    pub parameters: ParametersConfig,
}

/// Generation parameters. Unset parameters are left to the provider's
/// default.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct ParametersConfig {
    /// The most tokens the model may generate in one answer.
    #[setting(default = 8192)]
    pub max_tokens: u32,

    /// Sampling temperature, from 0 (most deterministic) to 2.
    pub temperature: Option<f64>,

    /// Nucleus sampling: only tokens within this cumulative probability are
    /// considered, from 0 to 1.
    pub top_p: Option<f64>,
}
