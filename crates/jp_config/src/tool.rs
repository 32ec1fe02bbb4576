//! Tool configuration: how a tool is run, what it accepts, and its policies.
//!
//! Tools live under `conversation.tools.<name>`. The entry named `'*'` holds
//! defaults for every tool: only `enable`, `policy`, `run`, `result` and
//! `style` may be set there.

pub mod arguments;
pub mod effective;
pub mod imported;
pub mod limits;
pub mod schema;
pub mod wildcard;

use indexmap::IndexMap;
use schematic::{Config, Schematic};
use serde::{Deserialize, Serialize};

pub use arguments::{ArgumentIssue, check_arguments, check_value_at};
// A tool's `parameters` is the argument schema its policies are compiled
// against, owned by jp_policy; named here too, as part of the tool's config.
use jp_policy::PolicySpec;

use crate::sandbox::{PartialSandboxConfig, SandboxConfig};
pub use jp_policy::parameter::{
    ParamType, ToolParameterConfig, ToolParameters, parameters_json_schema,
};

/// The name of the `conversation.tools` entry that holds defaults for every
/// tool.
pub const DEFAULTS_KEY: &str = "*";

/// One tool: where it comes from, how it is run, its parameters and
/// policies.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct ToolConfig {
    /// Whether the model is offered this tool.
    #[setting(default = true)]
    pub enable: bool,

    /// Where the tool comes from: `local` (a program jp runs, speaking JSON
    /// over stdin/stdout), `builtin` (part of jp), or `mcp.NAME` (a tool of
    /// the MCP server configured at `providers.mcp.NAME`).
    pub source: ToolSource,

    /// For an MCP tool: the server's name for the tool. Unset: the name it
    /// is configured under.
    pub tool: Option<String>,

    /// For local tools: the program to run, as a string of words separated
    /// by spaces (no shell quoting) or as an array of arguments. The request
    /// goes to its stdin as JSON; it answers with one JSON outcome on stdout.
    pub command: Option<ToolCommand>,

    /// A one-line description shown to the model.
    pub summary: Option<String>,

    /// A longer description shown to the model after the summary.
    pub description: Option<String>,

    /// The tool's arguments, in the order the model sees them. For a tool
    /// with a JSON Schema (an MCP tool's, or `parameters_schema`): what
    /// jp adds to the schema's parameters, by name (`type = "path"` for
    /// policies to match a string as a path, a summary).
    pub parameters: ToolParameters,

    /// For local tools: the arguments as a JSON Schema (draft 2020-12 or
    /// draft-07, as a table), instead of `parameters`: the schema the
    /// tool already has. The model is sent it and every call is checked
    /// against all of it; `parameters` then only adds to it.
    pub parameters_schema: Option<serde_json::Value>,

    /// Tool-specific options passed to the tool with every call (RFD 042).
    pub options: IndexMap<String, serde_json::Value>,

    /// How long one run of a local tool may take, in seconds, before jp
    /// stops it and tells the model it timed out. Unset: the `'*'` default,
    /// else 60.
    pub timeout_secs: Option<u64>,

    /// The most bytes a local tool may write to stdout; more is an error.
    /// Unset: the `'*'` default, else 1048576 (1 MiB).
    pub max_output_bytes: Option<u64>,

    /// The most bytes of argument text the model may send in one call of
    /// this tool. A call whose arguments grow past it is refused while it
    /// streams: jp stops reading the response (as when a call is declined
    /// early, RFD D26), records the refusal and tells the model, so a
    /// runaway or hostile call cannot exhaust memory. Unset: the `'*'`
    /// default, else 16777216 (16 MiB).
    pub max_argument_bytes: Option<u64>,

    /// How calls of this tool are shown.
    #[setting(nested)]
    pub style: ToolStyleConfig,

    /// Argument-conditional policies (RFD D25).
    #[setting(nested)]
    pub policy: PolicyConfig,

    /// What of jp's resources the tool may use: `access.config` rules grant
    /// reading and changing config paths (RFD 078). None: no access.
    pub access: crate::access::AccessConfig,

    /// What the tool's process may reach, besides `conversation.sandbox`.
    #[setting(nested)]
    pub sandbox: SandboxConfig,

    /// Deprecated: use `policy.run`. Still read when `policy.run` is unset.
    pub run: Option<PolicySpec>,

    /// Deprecated: use `policy.result`. Still read when `policy.result` is
    /// unset.
    pub result: Option<PolicySpec>,
}

impl ToolConfig {
    /// Whether this entry defines a tool, rather than only carrying settings
    /// for a tool defined elsewhere (say, a user-wide policy for a tool some
    /// workspaces define): a local tool needs a `command` or `parameters`;
    /// an MCP or builtin tool is defined by its `source`.
    #[must_use]
    pub fn is_defined(&self) -> bool {
        self.source != ToolSource::Local
            || self.command.is_some()
            || !self.parameters.is_empty()
            || self.parameters_schema.is_some()
    }

    /// The JSON Schema of the tool's arguments: the one it was given
    /// ([`schema::adopt`]), else the one its `parameters` describe.
    #[must_use]
    pub fn arguments_schema(&self) -> std::borrow::Cow<'_, serde_json::Value> {
        match &self.parameters_schema {
            Some(schema) => std::borrow::Cow::Borrowed(schema),
            None => std::borrow::Cow::Owned(parameters_json_schema(&self.parameters)),
        }
    }

    /// Checks a call's arguments: against the tool's JSON Schema and
    /// what jp asks beyond it, or against its `parameters`.
    ///
    /// # Errors
    ///
    /// Every problem found, each with the JSON pointer of the value.
    pub fn check_arguments(&self, args: &serde_json::Value) -> Result<(), Vec<ArgumentIssue>> {
        match &self.parameters_schema {
            Some(schema) => schema::check(schema, &self.parameters, args),
            None => check_arguments(&self.parameters, args),
        }
    }

    /// Checks one value as it stands in the arguments (`at`) while the
    /// call streams: its type and form against `param`, or for a tool
    /// with a JSON Schema, against what the schema asks of a value there
    /// whatever the rest of the arguments are ([`schema::check_value_at`])
    /// and its form (a path without NUL, an integer literal).
    #[must_use]
    pub fn check_value_at(
        &self,
        param: &ToolParameterConfig,
        value: &serde_json::Value,
        at: Vec<String>,
    ) -> Vec<ArgumentIssue> {
        if let Some(schema) = &self.parameters_schema {
            schema::check_value_at(schema, param, value, at)
        } else {
            check_value_at(param, value, at)
        }
    }
}

/// The tools offered to the model: every enabled, defined entry except the
/// `'*'` defaults, in config order.
pub fn offered(
    tools: &IndexMap<String, ToolConfig>,
) -> impl Iterator<Item = (&String, &ToolConfig)> {
    tools
        .iter()
        .filter(|(name, tool)| name.as_str() != DEFAULTS_KEY && tool.enable && tool.is_defined())
}

/// The default for [`ToolConfig::timeout_secs`].
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The default for [`ToolConfig::max_output_bytes`].
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 1024 * 1024;

/// The default for [`ToolConfig::max_argument_bytes`].
pub const DEFAULT_MAX_ARGUMENT_BYTES: u64 = 16 * 1024 * 1024;

/// Where a tool comes from: written `"local"`, `"builtin"` or
/// `"mcp.NAME"`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolSource {
    /// A program jp runs, speaking JSON over stdin/stdout.
    #[default]
    Local,
    /// Part of jp itself.
    Builtin,
    /// A tool of the MCP server configured at `providers.mcp.NAME`; holds
    /// `NAME`.
    Mcp(String),
}

impl ToolSource {
    /// The MCP server the tool comes from, if it is an MCP tool.
    #[must_use]
    pub fn mcp_server(&self) -> Option<&str> {
        match self {
            Self::Mcp(server) => Some(server),
            Self::Local | Self::Builtin => None,
        }
    }
}

impl std::fmt::Display for ToolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Local => f.write_str("local"),
            Self::Builtin => f.write_str("builtin"),
            Self::Mcp(server) => write!(f, "mcp.{server}"),
        }
    }
}

impl std::str::FromStr for ToolSource {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "local" => Ok(Self::Local),
            "builtin" => Ok(Self::Builtin),
            _ => match text.strip_prefix("mcp.") {
                Some(server) if !server.is_empty() => Ok(Self::Mcp(server.to_owned())),
                _ => Err(format!(
                    "unknown tool source `{text}`; expected `local`, `builtin` or `mcp.NAME` (a server under `providers.mcp`)"
                )),
            },
        }
    }
}

impl Serialize for ToolSource {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ToolSource {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl Schematic for ToolSource {
    fn build_schema(schema: schematic::SchemaBuilder) -> schematic::Schema {
        schema.infer::<String>()
    }
}

/// The program that runs a local tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Schematic)]
#[serde(untagged)]
pub enum ToolCommand {
    /// Words separated by spaces: `"python3 tools/lint.py"`.
    Line(String),
    /// The program and its arguments: `["python3", "tools/my tool.py"]`.
    Argv(Vec<String>),
}

impl ToolCommand {
    /// The program and its arguments.
    #[must_use]
    pub fn argv(&self) -> Vec<String> {
        match self {
            Self::Line(line) => line.split_whitespace().map(str::to_owned).collect(),
            Self::Argv(argv) => argv.clone(),
        }
    }
}

/// `policy`: when jp asks before running a tool, and how results reach the
/// model (RFD D25).
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct PolicyConfig {
    /// Whether jp asks before running a call: a mode (`unattended`, `ask`,
    /// `edit`, `skip`) or an ordered list of rules such as
    /// `{ arg = "/path", prefix = "src/", mode = "unattended" }`; the first
    /// matching rule decides, and `ask` applies when none matches. Unset:
    /// the `'*'` default, else `ask`.
    pub run: Option<PolicySpec>,

    /// How a call's result reaches the model: a mode or rules, like `run`
    /// (`unattended` delivers it, `ask` asks first, `edit` opens it in an
    /// editor, `skip` withholds it). Unset: the `'*'` default, else
    /// `unattended`.
    pub result: Option<PolicySpec>,
}

/// How calls of a tool are shown.
#[derive(Debug, Clone, Config, serde::Serialize)]
#[config(rename_all = "snake_case")]
pub struct ToolStyleConfig {
    /// Hide this tool's calls from the output (decisions and prompts still
    /// show).
    pub hidden: Option<bool>,

    /// The most lines of this tool's result shown inline; overrides
    /// `style.tool_call.result_lines`.
    pub result_lines: Option<u32>,
}
