//! The command tree.

pub(crate) mod complete;
mod config;
mod conversation;
mod debug;
mod decisions;
mod examples;
mod format;
mod init;
mod mcp;
mod policy;
mod sandbox;
mod tool;
mod trust;
mod usage;

use std::process::ExitCode;

/// jp: an LLM assistant for programmers.
#[derive(Debug, clap::Parser)]
#[command(name = "jp", version, about)]
pub struct Cli {
    /// Set a config key for this run: `KEY=VALUE`, `KEY:=JSON`, or `@FILE`
    /// to merge a config file. Repeatable; later ones win.
    #[arg(long = "cfg", global = true, value_name = "ASSIGNMENT")]
    cfg: Vec<String>,

    /// Log more to stderr: `-v` for info, `-vv` for debug, `-vvv` for
    /// trace (`RUST_LOG` overrides).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// When to use colour: `auto` (on a terminal, unless `NO_COLOR` is
    /// set), `always` or `never`. Short for `--cfg style.color=WHEN`.
    #[arg(long, global = true, value_name = "WHEN")]
    color: Option<ColorWhen>,

    /// Without one, on a terminal, `jp` opens a session (`jp chat`).
    #[command(subcommand)]
    command: Option<Command>,
}

impl Cli {
    /// The global flags as typed (`--cfg`, `--color`), for the commands a
    /// session runs.
    fn globals(&self) -> Vec<String> {
        let mut args = Vec::new();
        for assignment in &self.cfg {
            args.push("--cfg".to_owned());
            args.push(assignment.clone());
        }
        if let Some(when) = self.color {
            args.push("--color".to_owned());
            args.push(when.name().to_owned());
        }
        args
    }
}

/// `jp` alone: a session on a terminal, else the help (exit 2, as for any
/// missing argument).
fn no_command(ctx: crate::ctx::Ctx, globals: Vec<String>) -> Result<ExitCode, crate::error::Error> {
    use std::io::IsTerminal as _;
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return crate::chat::Chat::default().run(ctx, globals);
    }
    let help = examples::with_examples(<Cli as clap::CommandFactory>::command()).render_help();
    for line in help.to_string().trim_end().lines() {
        jp_term::errln!("{line}");
    }
    Ok(ExitCode::from(crate::exit::USAGE))
}

/// Runs `jp` with `argv` (its first item the program's name) in this
/// process, as a session command: a parse error is said as `jp` says it.
pub fn run_args(argv: &[String]) -> ExitCode {
    use clap::{CommandFactory as _, FromArgMatches as _};
    let parsed = examples::with_examples(Cli::command())
        .try_get_matches_from(argv)
        .and_then(|matches| Cli::from_arg_matches(&matches));
    match parsed {
        Ok(cli) => said(cli.run()),
        Err(error) => say_parse_error(&error),
    }
}

/// Says a parse error of the arguments; its exit code. The error quotes
/// the arguments, which may hold anything: escaped, like every line jp
/// writes (found in review).
pub fn say_parse_error(error: &clap::Error) -> ExitCode {
    let text = error.render().to_string();
    for line in text.trim_end().lines() {
        jp_term::errln!("{line}");
    }
    ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2))
}

/// The exit code of a command's `result`, its error said.
pub fn said(result: Result<ExitCode, crate::error::Error>) -> ExitCode {
    result.unwrap_or_else(|error| {
        jp_term::errln!("error: {error}");
        ExitCode::FAILURE
    })
}

/// `--color` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ColorWhen {
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    /// The value as typed.
    const fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Always => "always",
            Self::Never => "never",
        }
    }
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Make this directory a jp workspace: `.jp/config.toml` with the
    /// default tools.
    Init(init::Init),
    /// Ask the assistant; continues the active conversation (`jp q` for
    /// short).
    // A hidden alias: shell completion then offers `query` itself (it
    // offers one name a command, and a visible alias took its place).
    #[command(alias = "q")]
    Query(crate::query::Query),
    /// Talk with the assistant in a session: each line a message, /help
    /// for the commands (what `jp` alone does on a terminal).
    Chat(crate::chat::Chat),
    /// List, show, switch and remove conversations, and see what one cost.
    #[command(subcommand)]
    Conversation(conversation::ConversationCmd),
    /// What the conversations here used and cost, what caching saved,
    /// and the responses stopped early at a declined call.
    Usage(usage::Usage),
    /// Show, read, change, check and describe jp's config.
    #[command(subcommand)]
    Config(config::Config),
    /// List the tools and their policies, or ask what a tool's policy
    /// decides for given arguments.
    #[command(subcommand)]
    Policy(policy::Policy),
    /// The MCP servers: start them to list their state and tools.
    #[command(subcommand)]
    Mcp(mcp::Mcp),
    /// Trust this workspace's own config (its tools, MCP servers and
    /// policies), see whether it is trusted, or stop trusting it.
    Trust(trust::Trust),
    /// The sandbox every tool runs in: `jp sandbox check` tries each way
    /// out of it.
    #[command(subcommand)]
    Sandbox(sandbox::SandboxCmd),
    /// Tools for looking inside jp's machinery.
    #[command(subcommand)]
    Debug(debug::Debug),
    /// Run one of jp's default tools: a request on stdin, an outcome on
    /// stdout (the local tool protocol).
    Tool(tool::Tool),
    /// Print a shell completion script: `jp completions bash >
    /// ~/.local/share/bash-completion/completions/jp`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

impl Cli {
    /// Parses the process's arguments, with an example in each command's
    /// help.
    pub fn parse_args() -> Result<Self, clap::Error> {
        // `COMPLETE=bash jp` prints the shell's registration, and the
        // shell then runs jp with `COMPLETE` set to complete a line;
        // either way jp exits here (without the variable this returns).
        clap_complete::CompleteEnv::with_factory(|| {
            examples::with_examples(<Self as clap::CommandFactory>::command())
        })
        .bin("jp")
        .complete();
        use clap::{CommandFactory as _, FromArgMatches as _};
        let matches = examples::with_examples(Self::command()).try_get_matches()?;
        Self::from_arg_matches(&matches)
    }

    /// Runs the chosen command.
    pub fn run(self) -> Result<ExitCode, crate::error::Error> {
        let mut flags = Vec::new();
        if let Some(when) = self.color {
            let when = when.name();
            flags.push(jp_config::load::FlagAssignment {
                flag: format!("--color {when}"),
                assignment: format!("style.color={when}"),
            });
        }
        let ctx = || crate::ctx::Ctx::from_process(self.cfg.clone(), flags.clone());
        let globals = self.globals();
        let Some(command) = self.command else {
            return no_command(ctx()?, globals);
        };
        match command {
            Command::Init(init) => init.run(&ctx()?),
            Command::Chat(chat) => chat.run(ctx()?, globals),
            Command::Query(query) => query.run(ctx()?),
            Command::Conversation(c) => c.run(&ctx()?),
            Command::Tool(tool) => Ok(tool.run()),
            Command::Debug(debug) => debug.run(),
            Command::Config(config) => config.run(&ctx()?),
            Command::Policy(policy) => policy.run(&ctx()?),
            Command::Mcp(mcp) => mcp.run(&ctx()?),
            Command::Trust(trust) => trust.run(&ctx()?),
            Command::Usage(usage) => usage.run(&ctx()?),
            Command::Sandbox(sandbox) => sandbox.run(ctx),
            Command::Completions { shell } => {
                use std::io::Write as _;
                let mut command = <Self as clap::CommandFactory>::command();
                // Written whole afterwards: the generator panics when its
                // writer fails, and a closed pipe (`| head`) is no error.
                let mut script = Vec::new();
                clap_complete::generate(shell, &mut command, "jp", &mut script);
                let _ = std::io::stdout().lock().write_all(&script);
                Ok(ExitCode::SUCCESS)
            }
        }
    }
}
