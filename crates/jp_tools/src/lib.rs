//! The default tools jp ships: reading, listing, creating, modifying and
//! deleting files in the workspace, and running a program in it.
//!
//! They are ordinary local tools. `jp tool NAME` runs one of them behind
//! [`jp_tool::serve`], so jp starts them as processes and talks to them over
//! stdin/stdout like any tool a user adds, and `jp init` writes their
//! definitions ([`DEFAULT_TOOLS_TOML`]) into `.jp/config.toml`, where users
//! can change their descriptions and policies like any other tool's.
//!
//! ```no_run
//! # fn main() -> std::process::ExitCode {
//! // What `jp tool fs_read_file` does:
//! jp_tool::serve(|request| jp_tools::run("fs_read_file", request))
//! # }
//! ```
//!
//! Every path is relative to the workspace root (`context.root` of the
//! request) and confined to it: absolute paths outside it, `..` above it,
//! NUL bytes, and symlinks that lead out of it are refused with a message
//! that says so. Failures are [`Outcome::Error`]s written for the model:
//! they name the path and say what to do instead where there is something
//! to do.

mod arguments;
pub mod atomic;
mod command;
mod create;
mod delete;
mod list;
mod modify;
mod read;
mod text;
mod words;
mod workspace;

use jp_tool::{Action, Outcome, Request};

pub use command::{DEFAULT_TIMEOUT_SECS, MAX_OUTPUT_BYTES, MAX_TIMEOUT_SECS};
pub use list::MAX_LIST_ENTRIES;
pub use modify::{Change, preview as preview_modify, preview_over as preview_modify_over};
pub use text::MAX_FILE_BYTES;

/// The names of the default tools, as `jp tool NAME` takes them.
pub const NAMES: [&str; 6] = [
    "fs_read_file",
    "fs_list_files",
    "fs_create_file",
    "fs_modify_file",
    "fs_delete_file",
    "run_command",
];

/// The definitions `jp init` writes into `.jp/config.toml`: one
/// `[conversation.tools.NAME]` table per tool in [`NAMES`], with its
/// `command` (`["jp", "tool", NAME]`; jp runs its own executable for `jp`),
/// `summary`, `description`, `parameters` and `policy.run`.
///
/// Reading and listing run unattended; creating a file runs unattended
/// under `src/` and asks elsewhere, always asking under `.jp/` and `.git/`;
/// modifying and deleting ask. Running a program asks, except for a few
/// read-only git commands named in full (`git status`, `git diff`, `git
/// log` with a few options), in the workspace root.
pub const DEFAULT_TOOLS_TOML: &str = include_str!("default_tools.toml");

/// Runs the default tool `name` on `request`.
///
/// Never panics; every failure, including an unknown `name`, is an
/// [`Outcome::Error`] with a message for the model.
#[must_use]
pub fn run(name: &str, request: Request) -> Outcome {
    match request.context.action {
        Action::Run => {}
    }
    let result = match name {
        "fs_read_file" => read::run(&request),
        "fs_list_files" => list::run(&request),
        "fs_create_file" => create::run(&request),
        "fs_modify_file" => modify::run(&request),
        "fs_delete_file" => delete::run(&request),
        "run_command" => command::run(&request),
        _ => Err(format!(
            "unknown tool `{name}`; jp's default tools are {}",
            NAMES.join(", ")
        )),
    };
    match result {
        Ok(content) => Outcome::success(content),
        Err(message) => Outcome::error(message),
    }
}

#[cfg(test)]
mod test_support;

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
