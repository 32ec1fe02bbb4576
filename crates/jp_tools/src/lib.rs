//! The default tools jp ships: reading, listing, creating, modifying and
//! deleting files in the workspace.
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

pub mod atomic;
mod create;
mod delete;
mod list;
mod modify;
mod read;
mod text;
mod workspace;

use jp_tool::{Action, Outcome, Request};
use serde_json::Value;

pub use list::MAX_LIST_ENTRIES;
pub use text::MAX_FILE_BYTES;

/// The names of the default tools, as `jp tool NAME` takes them.
pub const NAMES: [&str; 5] = [
    "fs_read_file",
    "fs_list_files",
    "fs_create_file",
    "fs_modify_file",
    "fs_delete_file",
];

/// The definitions `jp init` writes into `.jp/config.toml`: one
/// `[conversation.tools.NAME]` table per tool in [`NAMES`], with its
/// `command` (`["jp", "tool", NAME]`; jp runs its own executable for `jp`),
/// `summary`, `description`, `parameters` and `policy.run`.
///
/// Reading and listing run unattended; creating a file runs unattended
/// under `src/` and asks elsewhere, always asking under `.jp/` and `.git/`;
/// modifying and deleting ask.
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

/// The string argument `name`.
fn string_argument<'a>(request: &'a Request, name: &str) -> Result<&'a str, String> {
    match request.argument(name) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("argument `{name}` must be a string")),
        None => Err(format!("missing argument `{name}`")),
    }
}

/// The optional argument `name`, a list of strings; absent or `null` is
/// empty.
fn string_list_argument<'a>(request: &'a Request, name: &str) -> Result<Vec<&'a str>, String> {
    match request.argument(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .ok_or_else(|| format!("argument `{name}` must be an array of strings"))
            })
            .collect(),
        Some(_) => Err(format!("argument `{name}` must be an array of strings")),
    }
}

/// "1 line", "3 lines".
fn plural(count: usize, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;

    use super::*;
    use crate::test_support::Fixture;

    #[test]
    fn unknown_tools_are_errors() {
        let f = Fixture::new();
        assert_eq!(
            run("fs_move_file", f.request(json!({}))),
            Outcome::error(
                "unknown tool `fs_move_file`; jp's default tools are fs_read_file, fs_list_files, fs_create_file, fs_modify_file, fs_delete_file"
            )
        );
    }

    #[test]
    fn a_missing_root_is_an_error() {
        let f = Fixture::new();
        let mut request = f.request(json!({ "path": "a.txt" }));
        let missing = f.root().join("gone");
        request.context.root.clone_from(&missing);
        assert_eq!(
            run("fs_read_file", request),
            Outcome::error(format!(
                "cannot open the workspace root `{}`: No such file or directory (os error 2)",
                missing.display()
            ))
        );
    }

    #[test]
    fn arguments_are_checked() {
        let f = Fixture::new();
        assert_eq!(
            run("fs_read_file", f.request(json!({}))),
            Outcome::error("missing argument `path`")
        );
        assert_eq!(
            run("fs_read_file", f.request(json!({ "path": 3 }))),
            Outcome::error("argument `path` must be a string")
        );
        assert_eq!(
            run("fs_list_files", f.request(json!({ "prefixes": "src" }))),
            Outcome::error("argument `prefixes` must be an array of strings")
        );
        assert_eq!(
            run(
                "fs_list_files",
                f.request(json!({ "extensions": ["rs", 1] }))
            ),
            Outcome::error("argument `extensions` must be an array of strings")
        );
    }

    #[test]
    fn every_tool_refuses_paths_outside_the_workspace() {
        let f = Fixture::new();
        let args = |path: &str| json!({ "path": path, "content": "x", "patterns": [{ "old": "a", "new": "b" }] });
        for name in [
            "fs_read_file",
            "fs_create_file",
            "fs_modify_file",
            "fs_delete_file",
        ] {
            assert_eq!(
                run(name, f.request(args("../x"))),
                Outcome::error(
                    "refused `../x`: it leads outside the workspace (`..` goes above the workspace root)"
                ),
                "{name}"
            );
            assert_eq!(
                run(name, f.request(args("/etc/passwd"))),
                Outcome::error(
                    "refused `/etc/passwd`: it is an absolute path outside the workspace; use a path relative to the workspace root"
                ),
                "{name}"
            );
        }
        assert_eq!(
            run(
                "fs_list_files",
                f.request(json!({ "prefixes": ["src", "../other"] }))
            ),
            Outcome::error(
                "refused `../other`: it leads outside the workspace (`..` goes above the workspace root)"
            )
        );
    }
}
