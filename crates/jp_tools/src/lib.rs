//! The default tools jp ships: reading, listing, searching, creating,
//! modifying and deleting files in the workspace, and running a program in
//! it.
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
mod glob;
mod grep;
mod list;
mod modify;
mod read;
mod secrets;
mod text;
mod walk;
mod words;
mod workspace;

use jp_tool::{Action, Outcome, Request};

pub use command::{DEFAULT_TIMEOUT_SECS, MAX_OUTPUT_BYTES, MAX_TIMEOUT_SECS};
pub use glob::MAX_GLOB_ENTRIES;
pub use grep::{MAX_CONTEXT, MAX_FILE_MATCHES, MAX_LINE_CHARS, MAX_LINES, MAX_MATCHES};
pub use list::MAX_LIST_ENTRIES;
pub use modify::{Change, preview as preview_modify, preview_over as preview_modify_over};
pub use secrets::PATTERNS as SECRET_PATTERNS;
pub use text::MAX_FILE_BYTES;

/// jp's default tools: what each is, once, so that a name is read in one
/// place ([`DefaultTool::named`]) and everything else matches on the enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefaultTool {
    /// `fs_read_file`: reads a file.
    ReadFile,
    /// `fs_list_files`: lists a directory.
    ListFiles,
    /// `fs_grep`: searches the files' contents.
    Grep,
    /// `fs_glob`: lists the files matching a glob.
    Glob,
    /// `fs_create_file`: creates a file.
    CreateFile,
    /// `fs_modify_file`: replaces text in a file.
    ModifyFile,
    /// `fs_delete_file`: deletes a file.
    DeleteFile,
    /// `run_command`: runs a program.
    RunCommand,
}

impl DefaultTool {
    /// Every default tool, in the order `jp init` writes them.
    pub const ALL: [Self; 8] = [
        Self::ReadFile,
        Self::ListFiles,
        Self::Grep,
        Self::Glob,
        Self::CreateFile,
        Self::ModifyFile,
        Self::DeleteFile,
        Self::RunCommand,
    ];

    /// Its name, as `jp tool NAME` takes it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::ReadFile => "fs_read_file",
            Self::ListFiles => "fs_list_files",
            Self::Grep => "fs_grep",
            Self::Glob => "fs_glob",
            Self::CreateFile => "fs_create_file",
            Self::ModifyFile => "fs_modify_file",
            Self::DeleteFile => "fs_delete_file",
            Self::RunCommand => "run_command",
        }
    }

    /// The default tool called `name`.
    #[must_use]
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.name() == name)
    }

    /// Whether it works on one file or directory named by its `path`
    /// (or, for `fs_list_files`, the directories of its `prefixes`).
    #[must_use]
    pub const fn is_file_tool(self) -> bool {
        !matches!(self, Self::RunCommand | Self::Grep | Self::Glob)
    }

    /// Whether it only reads: it changes nothing, so there is nothing to
    /// undo, and it may run unattended outside a workspace.
    #[must_use]
    pub const fn reads_only(self) -> bool {
        matches!(
            self,
            Self::ReadFile | Self::ListFiles | Self::Grep | Self::Glob
        )
    }
}

/// The file a call of `tool` with `arguments` changes, relative to the
/// workspace root `root` with every link resolved, as the tool itself
/// resolves its `path`: for `fs_modify_file`, the file a final link leads
/// to (it writes through it); for `fs_create_file` and `fs_delete_file`,
/// the entry named. `None` for a tool that changes no file, a path the
/// tool refuses, and a `fs_modify_file` whose file does not resolve inside
/// the workspace (it then refuses too).
#[must_use]
pub fn changed_path(
    root: &std::path::Path,
    tool: DefaultTool,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Option<std::path::PathBuf> {
    let workspace = workspace::Workspace::open(root).ok()?;
    let raw = arguments.get("path")?.as_str()?;
    let target = workspace.resolve(raw).ok()?;
    if target.rel.as_os_str().is_empty() {
        return None;
    }
    match tool {
        DefaultTool::CreateFile | DefaultTool::DeleteFile => Some(target.rel),
        DefaultTool::ModifyFile => {
            let real = target.abs.canonicalize().ok()?;
            real.strip_prefix(workspace.root()).ok().map(Into::into)
        }
        DefaultTool::ReadFile
        | DefaultTool::ListFiles
        | DefaultTool::Grep
        | DefaultTool::Glob
        | DefaultTool::RunCommand => None,
    }
}

/// Whether the file at `rel`, a path relative to the workspace root with
/// `/` between its components, may hold secrets: it matches one of
/// [`SECRET_PATTERNS`], the patterns `fs_read_file`'s default policy asks
/// about (environment files, keys and certificates, credential files, what
/// is in a directory of secrets). `fs_grep` and `fs_glob` leave such files
/// out unless a call names them; one list, for whatever else needs it.
#[must_use]
pub fn looks_secret(rel: &str) -> bool {
    secrets::is_secret(rel, false)
}

/// The names of the default tools, as `jp tool NAME` takes them.
pub const NAMES: [&str; 8] = {
    let mut names = [""; 8];
    let mut i = 0;
    while i < names.len() {
        names[i] = DefaultTool::ALL[i].name();
        i += 1;
    }
    names
};

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
pub const DEFAULT_TOOLS_TOML: &str = concat!(
    include_str!("default_tools.toml"),
    include_str!("run_command_asks.toml")
);

/// [`DEFAULT_TOOLS_TOML`] for a user who chose sandboxed commands (`jp
/// init --sandboxed-commands`): `run_command` runs every command
/// unattended in its sandbox (no network, writes only in the workspace),
/// and `run_command_online`, the same tool with network, always asks.
pub const SANDBOXED_TOOLS_TOML: &str = concat!(
    include_str!("default_tools.toml"),
    include_str!("run_command_sandboxed.toml")
);

/// Runs the default tool `name` on `request`.
///
/// Never panics; every failure, including an unknown `name`, is an
/// [`Outcome::Error`] with a message for the model.
#[must_use]
pub fn run(name: &str, request: Request) -> Outcome {
    match request.context.action {
        Action::Run => {}
    }
    let result = match DefaultTool::named(name) {
        Some(DefaultTool::ReadFile) => read::run(&request),
        Some(DefaultTool::ListFiles) => list::run(&request),
        Some(DefaultTool::Grep) => grep::run(&request),
        Some(DefaultTool::Glob) => glob::run(&request),
        Some(DefaultTool::CreateFile) => create::run(&request),
        Some(DefaultTool::ModifyFile) => modify::run(&request),
        Some(DefaultTool::DeleteFile) => delete::run(&request),
        Some(DefaultTool::RunCommand) => command::run(&request),
        None => Err(format!(
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
