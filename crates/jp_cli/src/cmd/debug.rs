//! `jp debug ...`: commands that show what jp's machinery does with an input.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use jp_conversation::{EventBuilder, EventPart, FlushedEvent, ToolCallPart};

use jp_term::printer::{escape_json, sanitize};

#[derive(Debug, clap::Subcommand)]
pub enum Debug {
    /// Stream tool-call arguments through jp's incremental parser and show
    /// each fragment as it would reach the terminal (control characters
    /// escaped, as everywhere jp shows text).
    ///
    /// The JSON is fed in chunks of `--chunk-size` bytes (extended to a
    /// character boundary), the way a provider streams it. Prints one line per
    /// fragment, then the complete arguments; exits 1 if the arguments are
    /// unusable (invalid, truncated, not an object, or with a duplicate key).
    StreamArgs {
        /// Bytes per chunk.
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
        chunk_size: u32,
        /// Tool name to show in the output.
        #[arg(long, default_value = "tool")]
        tool: String,
        /// File holding the arguments JSON; standard input if absent.
        file: Option<PathBuf>,
    },
}

impl Debug {
    pub fn run(self) -> Result<ExitCode, crate::error::Error> {
        match self {
            Self::StreamArgs {
                chunk_size,
                tool,
                file,
            } => stream_args(&read_input(file.as_ref())?, chunk_size as usize, tool),
        }
    }
}

fn read_input(file: Option<&PathBuf>) -> Result<String, crate::error::Error> {
    Ok(match file {
        Some(path) => {
            std::fs::read_to_string(path).map_err(|source| crate::error::Error::File {
                action: "read",
                path: path.clone(),
                source,
            })?
        }
        None => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(crate::error::Error::Stdin)?;
            text
        }
    })
}

fn stream_args(
    text: &str,
    chunk_size: usize,
    tool: String,
) -> Result<ExitCode, crate::error::Error> {
    stream_args_to(&mut std::io::stdout().lock(), text, chunk_size, &tool)
}

/// [`stream_args`], writing to `out`. The lines show text from the
/// arguments (and the tool name) with control characters escaped, as
/// `jp query` shows them.
fn stream_args_to(
    out: &mut impl std::io::Write,
    text: &str,
    chunk_size: usize,
    tool: &str,
) -> Result<ExitCode, crate::error::Error> {
    let mut builder = EventBuilder::new();
    builder.handle_part(
        0,
        EventPart::ToolCall(ToolCallPart::Start {
            id: "debug".into(),
            name: tool.to_owned(),
        }),
    )?;
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + chunk_size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let chunk = &text[start..end];
        let part = EventPart::ToolCall(ToolCallPart::ArgumentChunk(chunk.to_owned()));
        // Each fragment is printed as it is parsed, never collected, as
        // `jp query` handles them (issue 14).
        let mut written = Ok(());
        builder.handle_part_with(0, part, |progress, _| {
            if written.is_ok() {
                let line = format!("{tool} {}", progress.fragment);
                written = writeln!(out, "{}", sanitize(&line));
            }
        })?;
        written?;
        start = end;
    }
    let Some(FlushedEvent::ToolCallRequest(call)) = builder.handle_flush(0) else {
        return Err(crate::error::Error::Vanished);
    };
    match call.arguments() {
        Ok(arguments) => {
            let json = serde_json::to_string(arguments)?;
            let line = format!("{tool} arguments: {}", escape_json(&json));
            writeln!(out, "{}", sanitize(&line))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            out.flush()?;
            jp_term::errln!("{tool}: unusable arguments: {error}");
            Ok(ExitCode::FAILURE)
        }
    }
}

#[cfg(test)]
#[path = "debug_tests.rs"]
mod tests;
