//! The system prompt: what the model is told before the conversation.
//!
//! Without `assistant.system_prompt`, jp's default one says where the model
//! is and how it works here: the workspace root, the OS, today's date, that
//! files are reached through its tools with paths relative to the root, and
//! that the user sees each call and may decline it. `system_prompt`
//! replaces it; `assistant.instructions` and the text of
//! `assistant.instruction_files` follow, a paragraph each. Text from config
//! is sent as written: nothing in it is run or expanded.
//!
//! `AGENTS.md` is read without being listed (`assistant.agents_md`): the
//! one at the workspace root, then one in each directory from there to the
//! current directory, where there is one; a listed file that is missing
//! is a warning. In a git repository the default prompt also says the
//! branch, whether the tree has changes and the last commit's subject
//! ([`super::repo`], `assistant.repository_state`).

use std::path::{Path, PathBuf};

use jp_config::assistant::AssistantConfig;

use super::repo::RepoState;

/// The most text one instruction file may hold.
pub const MAX_INSTRUCTION_FILE_BYTES: u64 = 256 * 1024;

/// What the default system prompt says about where the model is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// The workspace root, absolute.
    pub root: PathBuf,
    /// The OS and architecture jp runs on: `linux (x86_64)`.
    pub os: String,
    /// Today's date, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// The directory jp runs in, absolute: `AGENTS.md` files between the
    /// root and it are read.
    pub cwd: PathBuf,
    /// The repository's state, when the workspace is a git repository
    /// and `assistant.repository_state` is on.
    pub repo: Option<RepoState>,
}

impl Facts {
    /// The facts of this process, in the workspace at `root`, with the
    /// repository's state when `assistant` asks for it.
    #[must_use]
    pub fn here(root: &Path, assistant: &AssistantConfig) -> Self {
        let now = jp_conversation::conversation::now_ms();
        let date = jp_conversation::conversation::format_utc(now);
        Self {
            root: root.to_path_buf(),
            os: format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH),
            date: date.split(' ').next().unwrap_or_default().to_owned(),
            cwd: std::env::current_dir().unwrap_or_else(|_| root.to_path_buf()),
            repo: assistant
                .repository_state
                .then(|| super::repo::snapshot(root))
                .flatten(),
        }
    }
}

/// The system prompt, and what the user should hear about how it was
/// made (a listed instruction file that is missing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemPrompt {
    /// The text; `None` when empty.
    pub text: Option<String>,
    /// One line each, without `warning: `.
    pub warnings: Vec<String>,
}

impl SystemPrompt {
    /// Says each warning on stderr.
    pub fn warn(&self) {
        for warning in &self.warnings {
            jp_term::errln!("warning: {warning}");
        }
    }
}

/// An instruction file jp will not send.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", match index {
    Some(index) => format!("assistant.instruction_files[{index}] ({path})"),
    None => format!("{path} (read as the project's instructions; `assistant.agents_md = false` turns that off)"),
})]
pub struct InstructionFileError {
    /// The entry's place in the list; `None` for a found `AGENTS.md`.
    pub index: Option<usize>,
    /// The path as configured.
    pub path: String,
    /// Why.
    pub problem: FileProblem,
}

/// Why an instruction file is not sent.
#[derive(Debug, thiserror::Error)]
pub enum FileProblem {
    /// An absolute path, or one that leads out of the workspace (through
    /// `..` or a link).
    #[error("it is outside the workspace; name a file in it, relative to its root")]
    Outside,
    /// Not a regular file.
    #[error("it is not a file")]
    NotAFile,
    /// It is (or leads to) a file that may hold secrets, or one in git's
    /// or jp's own store: its text is not sent.
    #[error("it leads to {0}: {1}; jp does not send it")]
    Secret(String, &'static str),
    /// Too large to send as instructions.
    #[error(
        "it is {bytes} bytes; the most an instruction file may hold is {MAX_INSTRUCTION_FILE_BYTES}"
    )]
    TooLarge {
        /// Its size.
        bytes: u64,
    },
    /// Not UTF-8 text.
    #[error("it is not UTF-8 text")]
    NotText,
    /// Reading failed.
    #[error("cannot read it: {}", jp_fs::io_reason(.0))]
    Unreadable(#[source] std::io::Error),
}

/// jp's default system prompt for `facts`.
#[must_use]
pub fn default_prompt(facts: &Facts) -> String {
    let prompt = format!(
        "You are jp, a coding assistant working in the user's workspace.\n\
         \n\
         - Workspace root: {root}\n\
         - Operating system: {os}\n\
         - Today's date: {date} (UTC)\n\
         \n\
         You reach the workspace's files only through your tools; a path you give a tool is \
         relative to the workspace root. The user sees each tool call and may decline it: a \
         declined call is the user's decision, not an error, so do not retry it unchanged; ask \
         what they want, or take another way.",
        root = facts.root.display(),
        os = facts.os,
        date = facts.date,
    );
    match &facts.repo {
        Some(repo) => format!("{prompt}\n\n{}", repo.describe()),
        None => prompt,
    }
}

/// The system prompt `assistant` makes for `facts`: the default one or
/// `system_prompt`, then each instruction, each `AGENTS.md` found, and
/// each instruction file's text, a paragraph each (a file read once even
/// when found and listed).
///
/// # Errors
///
/// An instruction file outside the workspace, too large, not text or
/// unreadable (other than missing): the query does not start rather than
/// send without it. A found `AGENTS.md` with such a problem is an error
/// too: it is the project's, and sending the prompt without it would
/// hide that.
pub fn system_prompt(
    assistant: &AssistantConfig,
    facts: &Facts,
) -> Result<SystemPrompt, InstructionFileError> {
    let mut paragraphs = vec![match &assistant.system_prompt {
        Some(prompt) => prompt.clone(),
        None => default_prompt(facts),
    }];
    paragraphs.extend(assistant.instructions.iter().cloned());
    let mut warnings = Vec::new();
    let mut read = Vec::new();
    let found = if assistant.agents_md {
        found_agents_md(&facts.root, &facts.cwd)
    } else {
        Vec::new()
    };
    let listed = assistant.instruction_files.iter().enumerate();
    let files = found
        .into_iter()
        .map(|path| (None, path))
        .chain(listed.map(|(index, path)| (Some(index), path.clone())));
    for (index, path) in files {
        let file = match read_instruction_file(&facts.root, &path) {
            Ok(file) => file,
            Err(FileProblem::Unreadable(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(index) = index {
                    warnings.push(format!(
                        "assistant.instruction_files[{index}] ({path}): there is no such file; it is left out"
                    ));
                }
                continue;
            }
            Err(problem) => {
                return Err(InstructionFileError {
                    index,
                    path,
                    problem,
                });
            }
        };
        if !read.contains(&file.path) {
            paragraphs.push(file.text.trim_end().to_owned());
            read.push(file.path);
        }
    }
    let prompt = paragraphs
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    Ok(SystemPrompt {
        text: (!prompt.is_empty()).then_some(prompt),
        warnings,
    })
}

/// The `AGENTS.md` files to read for a workspace at `root` when jp runs in
/// `cwd`: the root's, then one in each directory below it on the way to
/// `cwd` (relative to the root), where there is one.
fn found_agents_md(root: &Path, cwd: &Path) -> Vec<String> {
    let below = cwd.strip_prefix(root).unwrap_or(Path::new(""));
    let mut dir = PathBuf::new();
    let mut dirs = vec![dir.clone()];
    for part in below.components() {
        dir.push(part);
        dirs.push(dir.clone());
    }
    dirs.into_iter()
        .map(|dir| dir.join("AGENTS.md"))
        .filter(|path| root.join(path).is_file())
        .filter_map(|path| path.to_str().map(str::to_owned))
        .collect()
}

/// An instruction file's text, and where it really is.
struct InstructionFile {
    path: PathBuf,
    text: String,
}

/// The text of the instruction file at `path` (relative to `root`), when
/// it is a file inside the workspace (links resolved), not too large, and
/// text.
fn read_instruction_file(root: &Path, path: &str) -> Result<InstructionFile, FileProblem> {
    let relative = Path::new(path);
    if relative.is_absolute() || relative.has_root() {
        return Err(FileProblem::Outside);
    }
    let root = root.canonicalize().map_err(FileProblem::Unreadable)?;
    let file = root
        .join(relative)
        .canonicalize()
        .map_err(FileProblem::Unreadable)?;
    let Ok(rel) = file.strip_prefix(&root) else {
        return Err(FileProblem::Outside);
    };
    // A file a repository commits can be a link to its own `.env` or
    // `.git/config`: where it leads is checked as an attachment is.
    let shown = rel.to_string_lossy();
    if let Some(why) = super::attach::looks_secret(&shown)
        .then_some(super::attach::SECRET)
        .or_else(|| super::attach::internal(rel))
    {
        return Err(FileProblem::Secret(shown.into_owned(), why));
    }
    let meta = std::fs::metadata(&file).map_err(FileProblem::Unreadable)?;
    if !meta.is_file() {
        return Err(FileProblem::NotAFile);
    }
    if meta.len() > MAX_INSTRUCTION_FILE_BYTES {
        return Err(FileProblem::TooLarge { bytes: meta.len() });
    }
    let bytes = std::fs::read(&file).map_err(FileProblem::Unreadable)?;
    // Read once, so a file that grew since the check is still capped.
    if bytes.len() as u64 > MAX_INSTRUCTION_FILE_BYTES {
        return Err(FileProblem::TooLarge {
            bytes: bytes.len() as u64,
        });
    }
    if bytes.contains(&0) {
        return Err(FileProblem::NotText);
    }
    let text = String::from_utf8(bytes).map_err(|_| FileProblem::NotText)?;
    Ok(InstructionFile { path: file, text })
}

#[cfg(test)]
#[path = "system_tests.rs"]
mod tests;
