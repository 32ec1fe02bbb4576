//! jp's typed configuration tree: loading, merging, `--cfg` assignments, tool
//! definitions and their argument-conditional policies (RFD D25).
//!
//! - [`AppConfig`] is the merged config; [`PartialAppConfig`] one layer of
//!   it (both from schematic's `Config` derive).
//! - [`load::load`] finds, parses, merges and validates every layer.
//! - [`policy`] holds the D25 policy types, their compiler (validation and
//!   unreachable-rule detection) and the evaluator.
//! - [`stateful`] holds `conversation.policies`, the stateful policies
//!   across calls (read before write, sequential and keyed dependencies).
//! - [`validate`] checks the merged config as a whole (model ids, tools,
//!   their policies, `conversation.policies`); the types above do not
//!   depend on it, nor on [`load`].
//! - [`edit`] changes one key in a config file, keeping its comments.

pub mod access;
pub mod app;
pub mod assistant;
pub mod conversation;
pub mod delta;
pub mod diagnostic;
pub mod edit;
pub mod listing;
pub mod load;
pub mod mcp;
pub mod models;
mod named;
pub mod path;
pub mod policy;
pub mod providers;
pub mod schema;
pub mod stateful;
pub mod style;
pub mod tool;
pub mod trust;
pub mod validate;

pub use app::{AppConfig, PartialAppConfig};
pub use diagnostic::{Diagnostic, Severity};
pub use path::ConfigPath;
