//! Tool execution: running a local tool as a process that speaks
//! [`jp_tool`]'s protocol (architecture decision 8).
//!
//! [`run_local`] is the whole transport: it starts the tool's program in the
//! workspace root, writes the [`jp_tool::Request`] to its stdin, reads one
//! [`jp_tool::Outcome`] from its stdout, and turns every way that can go
//! wrong (a missing program, a crash, garbage output, too much output, a
//! timeout, a cancelled turn) into an [`jp_tool::Outcome::Error`] whose
//! message names the tool and says what happened. It never returns an
//! error of its own, so the turn loop always has a result to hand the
//! model.

mod containment;
mod executor;
pub(crate) mod local;
pub mod mcp;
pub mod sandbox;

pub use executor::{Executor, LocalExecutor, ToolExecutor, ToolTarget};

pub use local::{STDERR_TAIL_BYTES, ToolLimits, ToolRun, limit_key, run_local};
pub use sandbox::{Confinement, Sandbox, SandboxError, enforceable, unbounded, unbounded_in};
