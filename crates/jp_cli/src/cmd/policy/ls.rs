//! `jp policy ls`: the tools as they stand in the resolved config, one
//! line each, with where they come from and their policies in short. No
//! MCP server is started: a `'NAME.*'` entry is listed as written, for
//! every tool of server NAME.

use std::process::ExitCode;

use jp_config::app::AppConfig;
use jp_config::load::Loaded;
use jp_config::tool::effective::effective_policy;
use jp_config::tool::wildcard::wildcard_server;
use jp_config::tool::{DEFAULTS_KEY, ToolConfig};
use jp_policy::{Mode, PolicyField, PolicySpec};
use jp_term::printer::sanitize;

use crate::ctx::{Ctx, print_load_error};
use crate::exit;

/// One tool's line.
#[derive(Debug, PartialEq, Eq)]
pub struct Row {
    pub name: String,
    pub source: String,
    pub run: String,
    pub result: String,
    /// Disabled, the server a wildcard stands for, the stateful policies.
    pub notes: Vec<String>,
}

/// `jp policy ls`.
pub fn run(ctx: &Ctx) -> Result<ExitCode, crate::error::Error> {
    let loaded = match ctx.load() {
        Ok(loaded) => loaded,
        Err(error) => {
            print_load_error(&error);
            return Ok(exit::INVALID_CONFIG.into());
        }
    };
    for line in lines(&rows(&loaded.config)?, &withheld(&loaded)) {
        jp_term::outln!("{}", sanitize(&line));
    }
    Ok(ExitCode::SUCCESS)
}

/// The configured tools of `config`, in config order: every entry that
/// defines a tool (or stands for an MCP server's tools), but `'*'`.
pub fn rows(config: &AppConfig) -> Result<Vec<Row>, crate::error::Error> {
    let stateful = crate::stateful::from_config(config)?;
    let rows = config
        .conversation
        .tools
        .iter()
        .filter(|(name, cfg)| *name != DEFAULTS_KEY && cfg.is_defined())
        .map(|(name, cfg)| {
            let mut notes = Vec::new();
            if !cfg.enable {
                notes.push("disabled".to_owned());
            }
            if let Some(server) = wildcard_server(name) {
                notes.push(format!(
                    "every tool of MCP server {server} (not started to list them)"
                ));
            } else if let (Some(server), Some(tool)) = (cfg.source.mcp_server(), &cfg.tool) {
                notes.push(format!("MCP server {server}'s tool {tool}"));
            }
            let governing = stateful.policies_for(name);
            if !governing.is_empty() {
                notes.push(format!("stateful: {}", governing.join(", ")));
            }
            Row {
                name: name.clone(),
                source: source(name, cfg),
                run: short(config, name, PolicyField::Run),
                result: short(config, name, PolicyField::Result),
                notes,
            }
        })
        .collect();
    Ok(rows)
}

/// `builtin`, `local`, `mcp.git`: a wildcard entry's server as its name
/// says, whatever its `source`.
fn source(name: &str, cfg: &ToolConfig) -> String {
    match wildcard_server(name) {
        Some(server) => format!("mcp.{server}"),
        None => cfg.source.to_string(),
    }
}

/// A tool's policy for `field` in a few words: its mode when one mode
/// decides every call, else `2 rules, else ask` (the rules before the
/// catch-all, and what applies when none matches).
fn short(config: &AppConfig, tool: &str, field: PolicyField) -> String {
    let Some((spec, compiled)) = effective_policy(config, tool, field) else {
        return String::new();
    };
    let (conditional, fallback) = match compiled.policy {
        Some(policy) => {
            let rules = policy.rules();
            let first = rules.iter().position(jp_policy::Rule::is_catch_all);
            let fallback = first.map_or(Mode::Ask, |at| rules[at].mode);
            (first.unwrap_or(rules.len()), fallback)
        }
        // A rule names a parameter the entry does not declare (a
        // wildcard's tools are known only once its server runs): as
        // written.
        None => match &spec.spec {
            PolicySpec::Mode(mode) => (0, *mode),
            PolicySpec::Rules(rules) => {
                let first = rules
                    .iter()
                    .position(|rule| rule.entries().keys().all(|key| key == "mode"));
                let fallback = first
                    .and_then(|at| rules[at].entries().get("mode"))
                    .and_then(|mode| Mode::from_name(mode.as_str()?))
                    .unwrap_or(Mode::Ask);
                (first.unwrap_or(rules.len()), fallback)
            }
        },
    };
    match conditional {
        0 => fallback.to_string(),
        1 => format!("1 rule, else {fallback}"),
        n => format!("{n} rules, else {fallback}"),
    }
}

/// The tools the workspace's config sets that did not apply: it is not
/// trusted (as it is now).
fn withheld(loaded: &Loaded) -> Vec<String> {
    let Some(held) = loaded.held.as_ref().filter(|held| !held.applied) else {
        return Vec::new();
    };
    held.merged
        .pointer("/conversation/tools")
        .and_then(serde_json::Value::as_object)
        .map(|tools| {
            tools
                .keys()
                .filter(|name| *name != DEFAULTS_KEY)
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The table: a header, one aligned line per row, then the withheld tools
/// said once.
#[must_use]
pub fn lines(rows: &[Row], withheld: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    if rows.is_empty() {
        lines.push("no tools are configured".to_owned());
    } else {
        let header = ["tool", "source", "run", "result"];
        let width = |column: usize, cell: fn(&Row) -> &str| {
            rows.iter()
                .map(|row| cell(row).chars().count())
                .chain([header[column].len()])
                .max()
                .unwrap_or(0)
        };
        let widths = [
            width(0, |row| &row.name),
            width(1, |row| &row.source),
            width(2, |row| &row.run),
            width(3, |row| &row.result),
        ];
        let line = |cells: [&str; 4], notes: &str| {
            let mut line = String::new();
            for (cell, width) in cells.iter().zip(widths) {
                line.push_str(&format!("{cell:<width$}  "));
            }
            line.push_str(notes);
            line.trim_end().to_owned()
        };
        lines.push(line(header, ""));
        for row in rows {
            lines.push(line(
                [&row.name, &row.source, &row.run, &row.result],
                &row.notes.join("; "),
            ));
        }
    }
    if !withheld.is_empty() {
        lines.push(format!(
            "this workspace's config also sets {}, left out until you trust it (`jp trust`)",
            withheld.join(", ")
        ));
    }
    lines
}

#[cfg(test)]
#[path = "ls_tests.rs"]
mod tests;
