//! Tool configuration: how a tool is run, what it accepts, and its policies.

pub mod parameter;

pub use parameter::{ParamType, ToolParameterConfig, ToolParameters, parameters_json_schema};
