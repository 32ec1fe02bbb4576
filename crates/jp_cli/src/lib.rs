//! `jp`, the command-line LLM assistant for programmers, as a library: the
//! `jp` binary is [`main`]. The layers, top down:
//!
//! - `cmd`: the command tree, one module a command; nothing below it
//!   imports it;
//! - `chat`: `jp chat`, the interactive session: each message a turn of
//!   `query`, each of its commands a subcommand of `cmd` run in the
//!   process (so it sits beside `cmd`, not below it);
//! - `query`: the engine of `jp query`, pure machines (the turn, the
//!   decision about each call) behind a thin shell that streams, prompts,
//!   runs and records;
//! - what the engine and several commands share: the context a command
//!   runs in (`ctx`), the conversation's config changes (`recorded`,
//!   `conversation`), the stateful policies (`stateful`), compaction
//!   (`compact`: `jp conversation compact`, and `jp query` before a
//!   request near the window); prompts and the
//!   printer are `jp_term`'s, the markdown renderer `jp_md`'s.
//!
//! docs/architecture.md follows one tool call through these files.

mod blobs;
mod chat;
mod cmd;
mod compact;
mod conversation;
mod ctx;
mod error;
mod exit;
mod ledger;
mod mcp;
mod pick;
mod place;
mod query;
mod recorded;
mod rewind;
mod seal;
mod stateful;
mod trust;
mod usage;

use std::process::ExitCode;

use jp_term::errln;

/// Runs `jp` with the process's arguments: what `main` does.
#[must_use]
pub fn main() -> ExitCode {
    jp_llm::tool::sandbox::protect_this_process();
    let cli = match cmd::Cli::parse_args() {
        Ok(cli) => cli,
        // Help and the version hold no input: clap prints them, coloured.
        Err(error)
            if matches!(
                error.kind(),
                clap::error::ErrorKind::DisplayHelp
                    | clap::error::ErrorKind::DisplayVersion
                    | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            error.exit()
        }
        Err(error) => return cmd::say_parse_error(&error),
    };
    if let Err(problem) = jp_conversation::conversation::clock_override() {
        errln!("error: {problem}");
        return ExitCode::from(exit::USAGE);
    }
    init_logging(cli.verbose);
    jp_term::prompt::install_panic_restore();
    cmd::said(cli.run())
}

/// Logs go to stderr, never stdout; `-v` raises the level, `RUST_LOG`
/// overrides it. At the default level a stateful policy's denial (a
/// warning) is not logged, since the terminal already shows it as chrome,
/// and neither is what rmcp says when an MCP server over HTTP fails (an
/// HTTP error, a dropped stream): jp tells it as the call's error result.
/// Field values (a tool's stderr, a provider's error body, names the model
/// wrote) are escaped like chrome, so an escape sequence in them cannot
/// reach the terminal.
fn init_logging(verbose: u8) {
    use tracing_subscriber::field::MakeExt as _;
    let quiet = format!(
        "warn,{}=error,rmcp=off",
        jp_policy::stateful::DENIAL_LOG_TARGET
    );
    let level = match verbose {
        0 => quiet.as_str(),
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    if verbose > 0 || std::env::var_os("RUST_LOG").is_some() {
        jp_term::printer::logs_on_stderr();
    }
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .fmt_fields(
            tracing_subscriber::fmt::format::debug_fn(|writer, field, value| {
                let text = format!("{value:?}");
                let text = jp_term::printer::sanitize(&text);
                if field.name() == "message" {
                    write!(writer, "{text}")
                } else {
                    write!(writer, "{}={text}", field.name())
                }
            })
            .delimited(" "),
        )
        .with_writer(std::io::stderr)
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .with_target(false)
        .try_init();
}
