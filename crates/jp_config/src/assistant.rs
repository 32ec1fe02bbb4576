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
    #[setting(merge = schematic::merge::append_vec)]
    pub instruction_files: Vec<String>,

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
