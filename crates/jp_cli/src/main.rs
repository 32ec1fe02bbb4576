//! `jp`, the command-line LLM assistant for programmers.

mod cmd;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let cli = cmd::Cli::parse();
    match cli.run() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
