//! The command tree.

mod config;
mod ctx;
mod debug;
mod policy;

use std::process::ExitCode;

/// jp: an LLM assistant for programmers.
#[derive(Debug, clap::Parser)]
#[command(name = "jp", version, about)]
pub struct Cli {
    /// Set a config key for this run: `KEY=VALUE`, `KEY:=JSON`, or `@FILE`
    /// to merge a config file. Repeatable; later ones win.
    #[arg(long = "cfg", global = true, value_name = "ASSIGNMENT")]
    cfg: Vec<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Show, read, change, check and describe jp's config.
    #[command(subcommand)]
    Config(config::Config),
    /// Ask what a tool's policy decides for given arguments.
    #[command(subcommand)]
    Policy(policy::Policy),
    /// Tools for looking inside jp's machinery.
    #[command(subcommand)]
    Debug(debug::Debug),
}

/// Output formats of commands that print structured results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people.
    Text,
    /// One JSON document, for scripts.
    Json,
}

/// Exit codes shared by commands.
pub mod exit {
    /// The config does not load, or a requested key does not exist.
    pub const INVALID_CONFIG: u8 = 1;
    /// The command was used wrongly: unknown tool, arguments that do not
    /// fit, no workspace to write to.
    pub const USAGE: u8 = 2;
}

impl Cli {
    /// Runs the chosen command.
    pub fn run(self) -> Result<ExitCode, Box<dyn std::error::Error>> {
        match self.command {
            Command::Debug(debug) => debug.run(),
            Command::Config(config) => config.run(&ctx::Ctx::from_process(self.cfg)?),
            Command::Policy(policy) => policy.run(&ctx::Ctx::from_process(self.cfg)?),
        }
    }
}
