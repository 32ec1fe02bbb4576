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
    /// The tool (fs_read_file, fs_list_files, fs_create_file,
    /// fs_modify_file, fs_delete_file).
    name: String,
}

impl Tool {
    /// Serves one request.
    pub fn run(self) -> ExitCode {
        jp_tool::serve(|request| jp_tools::run(&self.name, request))
    }
}
