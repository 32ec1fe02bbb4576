//! The command tree.

mod debug;

use std::process::ExitCode;

/// jp: an LLM assistant for programmers.
#[derive(Debug, clap::Parser)]
#[command(name = "jp", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Tools for looking inside jp's machinery.
    #[command(subcommand)]
    Debug(debug::Debug),
}

impl Cli {
    /// Runs the chosen command.
    pub fn run(self) -> Result<ExitCode, Box<dyn std::error::Error>> {
        match self.command {
            Command::Debug(debug) => debug.run(),
        }
    }
}
