//! `jp debug ...`: commands that show what jp's machinery does with an input.

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use jp_conversation::{EventBuilder, EventPart, FlushedEvent, ToolCallPart};

#[derive(Debug, clap::Subcommand)]
pub enum Debug {
    /// Stream tool-call arguments through jp's incremental parser and show
    /// each fragment as it would reach the terminal.
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
    pub fn run(self) -> Result<ExitCode, Box<dyn std::error::Error>> {
        match self {
            Self::StreamArgs {
                chunk_size,
                tool,
                file,
            } => stream_args(&read_input(file.as_ref())?, chunk_size as usize, tool),
        }
    }
}

fn read_input(file: Option<&PathBuf>) -> Result<String, Box<dyn std::error::Error>> {
    Ok(match file {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?,
        None => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            text
        }
    })
}

fn stream_args(
    text: &str,
    chunk_size: usize,
    tool: String,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let mut out = std::io::stdout().lock();
    let mut builder = EventBuilder::new();
    builder.handle_part(
        0,
        EventPart::ToolCall(ToolCallPart::Start {
            id: "debug".into(),
            name: tool.clone(),
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
                written = writeln!(out, "{tool} {}", progress.fragment);
            }
        })?;
        written?;
        start = end;
    }
    let Some(FlushedEvent::ToolCallRequest(call)) = builder.handle_flush(0) else {
        return Err("the tool call vanished before its flush".into());
    };
    match call.arguments() {
        Ok(arguments) => {
            writeln!(
                out,
                "{tool} arguments: {}",
                serde_json::to_string(arguments)?
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            out.flush()?;
            crate::errln!("{tool}: unusable arguments: {error}");
            Ok(ExitCode::FAILURE)
        }
    }
}
