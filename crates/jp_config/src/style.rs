//! `style`: how jp's output looks.

use schematic::{Config, Schematic};
use serde::{Deserialize, Serialize};

/// Output style.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct StyleConfig {
    /// When to use color: `auto` (when writing to a terminal and `NO_COLOR`
    /// is unset), `always` or `never`.
    pub color: ColorMode,

    /// Whether the assistant's text is drawn as markdown on a terminal
    /// (headings, emphasis, lists, quotes, links, tables, highlighted code).
    /// Piped or redirected, it is written as the model sent it either way.
    #[setting(default = true)]
    pub markdown: bool,

    /// Whether to show the model's reasoning, when the provider sends it.
    #[setting(default = false)]
    pub show_reasoning: bool,

    /// How tool calls are shown.
    #[setting(nested)]
    pub tool_call: ToolCallStyleConfig,
}

/// When to use color.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Schematic)]
#[serde(rename_all = "snake_case")]
pub enum ColorMode {
    /// Color on a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always color.
    Always,
    /// Never color.
    Never,
}

/// How tool calls are shown.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct ToolCallStyleConfig {
    /// Show the tool's arguments as they stream in.
    #[setting(default = true)]
    pub show_arguments: bool,

    /// How a call's arguments are laid out on a terminal: `function_call`
    /// (`path: "src/lib.rs"`, `patterns[0].old:`) or `json` (JSON keys
    /// and pointers: `"path": "src/lib.rs"`, `/patterns/0/old:`). Long
    /// strings show as text in both.
    pub format: ToolCallFormat,

    /// The most terminal rows of one long string argument shown while it
    /// streams (a line wider than the terminal takes several, and shows at
    /// most 400 characters); the rest is counted ("… N more lines", "… N
    /// more bytes").
    #[setting(default = 20)]
    pub argument_lines: u32,

    /// The most terminal rows one call's arguments take in all while they
    /// stream, however many values they hold (a thousand array items, many
    /// patterns); the values past it are counted ("… N more values"). `v`
    /// at the prompt shows every argument in full.
    #[setting(default = 100)]
    pub call_lines: u32,

    /// The most lines of a tool's result shown inline; 0 hides results.
    #[setting(default = 10)]
    pub result_lines: u32,
}

/// How a call's arguments are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Schematic)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallFormat {
    /// `path: "src/lib.rs"`.
    #[default]
    FunctionCall,
    /// `"path": "src/lib.rs"`.
    Json,
}
