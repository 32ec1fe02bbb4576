//! The message of a `jp query`: its arguments, and text piped to it
//! (`echo "explain" | jp query`, `cat src/main.rs | jp query "explain
//! this"`, `jp query -` for the whole message from stdin).

use std::io::Read;

/// The most text jp takes from a pipe.
pub const MAX_PIPED_BYTES: usize = 1024 * 1024;

/// Why piped text is not sent.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InputError {
    /// More than [`MAX_PIPED_BYTES`] arrived.
    #[error(
        "stdin holds more than 1 MiB; jp sends at most 1 MiB from a pipe (put the file in the workspace and ask the model to read it)"
    )]
    TooLarge,
    /// Not UTF-8, or a NUL byte: not text.
    #[error("stdin is not text ({0}); jp sends only UTF-8 text from a pipe")]
    NotText(String),
    /// Reading failed.
    #[error("cannot read stdin: {0}")]
    Read(String),
    /// Neither the arguments nor stdin say anything.
    #[error("the message is empty; say what you want the assistant to do")]
    Empty,
    /// No message at all, and no terminal to write one on.
    #[error(
        "no message: give it as an argument (`jp query \"...\"`) or on stdin (`echo ... | jp query`); on a terminal, `jp query` alone opens your editor to write it"
    )]
    NoMessage,
}

/// Whether stdin is something jp reads the message from: a pipe or a
/// file. A terminal is not (jp never waits for typing it did not ask
/// for), nor is a device such as `/dev/null`.
#[must_use]
pub fn stdin_is_piped() -> bool {
    use std::io::IsTerminal as _;
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::FileTypeExt as _;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return false;
    }
    let Ok(fd) = stdin.as_fd().try_clone_to_owned() else {
        return false;
    };
    std::fs::File::from(fd)
        .metadata()
        .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_file())
}

/// Reads at most [`MAX_PIPED_BYTES`] of text from `reader`.
///
/// # Errors
///
/// More than that, or bytes that are not text.
pub fn read_piped(reader: impl Read) -> Result<String, InputError> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_PIPED_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::Read(e.to_string()))?;
    if bytes.len() > MAX_PIPED_BYTES {
        return Err(InputError::TooLarge);
    }
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(InputError::NotText(format!("a NUL byte at offset {at}")));
    }
    String::from_utf8(bytes).map_err(|e| {
        InputError::NotText(format!(
            "an invalid UTF-8 byte at offset {}",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The message sent: the arguments joined by spaces; `-` alone takes the
/// whole message from `piped`; with both, the piped text follows the
/// message in a fenced block (a fence longer than any run of backticks in
/// the text, so nothing in it closes the block).
///
/// # Errors
///
/// [`InputError::NoMessage`] without arguments or piped text,
/// [`InputError::Empty`] when they say nothing.
pub fn message(arguments: &[String], piped: Option<&str>) -> Result<String, InputError> {
    let piped = piped.filter(|text| !text.trim().is_empty());
    let joined = arguments.join(" ");
    let message = match (joined.trim(), piped) {
        ("-", Some(text)) | ("", Some(text)) => text.to_owned(),
        _ if arguments.is_empty() && piped.is_none() => return Err(InputError::NoMessage),
        ("" | "-", None) => return Err(InputError::Empty),
        (_, None) => joined,
        (_, Some(text)) => {
            let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
            let fence = "`".repeat(longest.max(2) + 1);
            let newline = if text.ends_with('\n') { "" } else { "\n" };
            format!("{joined}\n\n{fence}\n{text}{newline}{fence}")
        }
    };
    Ok(message)
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
