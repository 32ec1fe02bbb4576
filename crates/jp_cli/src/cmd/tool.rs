//! `jp tool NAME`: run one of the default tools jp ships.
//!
//! The tool speaks the local tool protocol like any other: a request as
//! JSON on stdin, one outcome as JSON on stdout. `jp init` configures the
//! default tools with `command = ["jp", "tool", NAME]`. Tool authors can
//! also call it by hand to see the protocol at work:
//!
//! ```sh
//! echo '{"tool":{"name":"fs_read_file","arguments":{"path":"Cargo.toml"}},"context":{"root":".","action":"run"}}' | jp tool fs_read_file
//! ```

use std::process::ExitCode;

/// `jp tool`.
#[derive(Debug, clap::Args)]
pub struct Tool {
    /// The tool (fs_read_file, fs_list_files, fs_grep, fs_glob,
    /// fs_create_file, fs_modify_file, fs_delete_file, run_command).
    name: String,
}

impl Tool {
    /// Serves one request, as [`jp_tool::serve`] does; the outcome's JSON
    /// has the characters jp escapes on a terminal written as JSON escapes
    /// (see [`jp_term::printer::escape_json`]), which means the same to jp
    /// and keeps a file's escape sequences off a terminal that shows it.
    pub fn run(self) -> ExitCode {
        jp_tool::serve_with(
            |request| jp_tools::run(&self.name, request),
            |output, outcome| {
                output.write_all(outcome_text(outcome)?.as_bytes())?;
                output.flush()
            },
        )
    }
}

/// The line `jp tool` writes for `outcome`.
fn outcome_text(outcome: &jp_tool::Outcome) -> std::io::Result<String> {
    let mut json = Vec::new();
    jp_tool::write_outcome(&mut json, outcome)?;
    let json = String::from_utf8(json).map_err(std::io::Error::other)?;
    Ok(jp_term::printer::escape_json(&json).into_owned())
}

#[cfg(test)]
#[path = "tool_tests.rs"]
mod tests;
