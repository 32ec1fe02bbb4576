//! A tool's parameters in the config: `parameters` entries that say what
//! jp can check, and a local tool's own JSON Schema (`parameters_schema`).

use super::Problem;
use crate::path::ConfigPath;
use crate::tool::{ParamType, ToolConfig, ToolParameterConfig, ToolSource};

/// A tool's own JSON Schema (`parameters_schema`) is one jp can use, and
/// its `parameters` name only what it has. Only a local tool gives one;
/// an MCP tool's comes from its server.
pub(super) fn check_parameters_schema(
    base: &ConfigPath,
    cfg: &ToolConfig,
    schema: &serde_json::Value,
    problems: &mut Vec<Problem>,
) {
    if cfg.source != ToolSource::Local {
        // An MCP tool's schema was put there by the query (attach), from
        // its server; a config cannot set one.
        return;
    }
    if !schema.is_object() {
        problems.push(Problem::error(
            base.join("parameters_schema"),
            "must be a table: a JSON Schema of the arguments object",
        ));
        return;
    }
    match crate::tool::schema::adopt(&mut cfg.clone(), schema) {
        Ok(()) => {}
        Err(crate::tool::schema::AdoptError::Config(message)) => {
            problems.push(Problem::error(base.join("parameters"), message));
        }
        Err(crate::tool::schema::AdoptError::Unusable(reason)) => {
            problems.push(Problem::error(
                base.join("parameters_schema"),
                reason.to_string(),
            ));
        }
    }
}

pub(super) fn check_parameter(
    path: &ConfigPath,
    p: &ToolParameterConfig,
    problems: &mut Vec<Problem>,
) {
    if p.items.is_some() && p.kind != ParamType::Array {
        problems.push(Problem::error(
            path.join("items"),
            format!(
                "only an array parameter has `items`; this one is {}",
                p.kind
            ),
        ));
    }
    if !p.properties.is_empty() && p.kind != ParamType::Object {
        problems.push(Problem::error(
            path.join("properties"),
            format!(
                "only an object parameter has `properties`; this one is {}",
                p.kind
            ),
        ));
    }
    if p.kind == ParamType::Array && p.items.is_none() {
        problems.push(Problem::error(
            path.clone(),
            "an array parameter needs `items` to say what its elements are",
        ));
    }
    if let Some(items) = &p.items {
        check_parameter(&path.join("items"), items, problems);
    }
    for (name, child) in &p.properties {
        check_parameter(&path.join("properties").join(name.clone()), child, problems);
    }
}
