//! The system prompt: what the model is told before the conversation.
//!
//! Without `assistant.system_prompt`, jp's default one says where the model
//! is and how it works here: the workspace root, the OS, today's date, that
//! files are reached through its tools with paths relative to the root, and
//! that the user sees each call and may decline it. `system_prompt`
//! replaces it; `assistant.instructions` and the text of
//! `assistant.instruction_files` follow, a paragraph each. Text from config
//! is sent as written: nothing in it is run or expanded.

use std::path::{Path, PathBuf};

use jp_config::assistant::AssistantConfig;

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
}

impl Facts {
    /// The facts of this process, in the workspace at `root`.
    #[must_use]
    pub fn here(root: &Path) -> Self {
        let now = jp_conversation::conversation::now_ms();
        let date = jp_conversation::conversation::format_utc(now);
        Self {
            root: root.to_path_buf(),
            os: format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH),
            date: date.split(' ').next().unwrap_or_default().to_owned(),
        }
    }
}

/// An instruction file jp will not send.
#[derive(Debug, thiserror::Error)]
#[error("assistant.instruction_files[{index}] ({path}): {problem}")]
pub struct InstructionFileError {
    /// The entry's place in the list.
    pub index: usize,
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
    format!(
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
    )
}

/// The system prompt `assistant` makes for `facts`: the default one or
/// `system_prompt`, then each instruction and each instruction file's text,
/// a paragraph each. `None` when that is empty (a `system_prompt` of `""`
/// and no instructions).
///
/// # Errors
///
/// An instruction file outside the workspace, too large, not text or
/// unreadable: the query does not start rather than send without it.
pub fn system_prompt(
    assistant: &AssistantConfig,
    facts: &Facts,
) -> Result<Option<String>, InstructionFileError> {
    let mut paragraphs = vec![match &assistant.system_prompt {
        Some(prompt) => prompt.clone(),
        None => default_prompt(facts),
    }];
    paragraphs.extend(assistant.instructions.iter().cloned());
    for (index, path) in assistant.instruction_files.iter().enumerate() {
        let text =
            read_instruction_file(&facts.root, path).map_err(|problem| InstructionFileError {
                index,
                path: path.clone(),
                problem,
            })?;
        paragraphs.push(text.trim_end().to_owned());
    }
    let prompt = paragraphs
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    Ok((!prompt.is_empty()).then_some(prompt))
}

/// The text of the instruction file at `path` (relative to `root`), when
/// it is a file inside the workspace (links resolved), not too large, and
/// text.
fn read_instruction_file(root: &Path, path: &str) -> Result<String, FileProblem> {
    let relative = Path::new(path);
    if relative.is_absolute() || relative.has_root() {
        return Err(FileProblem::Outside);
    }
    let root = root.canonicalize().map_err(FileProblem::Unreadable)?;
    let file = root
        .join(relative)
        .canonicalize()
        .map_err(FileProblem::Unreadable)?;
    if !file.starts_with(&root) {
        return Err(FileProblem::Outside);
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
    String::from_utf8(bytes).map_err(|_| FileProblem::NotText)
}

#[cfg(test)]
#[path = "system_tests.rs"]
mod tests;
