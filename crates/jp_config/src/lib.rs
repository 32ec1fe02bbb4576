//! jp's typed configuration tree: loading, merging, `--cfg` assignments, tool
//! definitions and the policies written in them.
//!
//! - [`AppConfig`] is the merged config; [`PartialAppConfig`] one layer of
//!   it (both from schematic's `Config` derive).
//! - [`load::load`] finds, parses, merges and validates every layer.
//! - Tools' D25 policies and argument schemas are written here, in
//!   [`tool`], but their types, compiler and evaluator are `jp_policy`'s:
//!   this crate depends on it (validation compiles every policy), and it
//!   does not depend on this one.
//! - [`stateful`] holds `conversation.policies`, the stateful policies
//!   across calls (read before write, sequential and keyed dependencies).
//! - [`validate`] checks the merged config as a whole (model ids, tools,
//!   their policies, `conversation.policies`); the types above do not
//!   depend on it, nor on [`load`].
//! - [`edit`] changes one key in a config file, keeping its comments.
//!
//! It depends on `jp_policy` (and through it on `jp_conversation`, whose
//! argument parser the policy watch follows) and on nothing above: not
//! `jp_llm`, `jp_tools` or `jp_cli`.

pub mod access;
pub mod app;
pub mod assistant;
pub mod conversation;
pub mod delta;
pub mod diagnostic;
pub mod edit;
pub mod hooks;
pub mod load;
pub mod mcp;
pub mod models;
mod named;
pub mod path;
pub mod providers;
pub mod sandbox;
pub mod schema;
pub mod stateful;
pub mod style;
pub mod tool;
pub mod trust;
pub mod validate;

pub use app::{AppConfig, PartialAppConfig};
pub use diagnostic::{Diagnostic, Severity};
pub use path::ConfigPath;
