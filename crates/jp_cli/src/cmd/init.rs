//! `jp init`: make the current directory a jp workspace.

use std::io::IsTerminal as _;
use std::path::Path;
use std::process::ExitCode;

use crate::error::Error;
use crate::exit;
use jp_term::prompt::{Prompter as _, TerminalPrompter};
use jp_term::{errln, outln};

/// `.jp/.gitignore`: conversations hold every message and the text of
/// every file a tool read, so they stay out of the repository unless one is
/// shared on purpose (`git add -f`, see docs/query.md); the local state
/// stays out even then.
const GITIGNORE: &str = "\
# Conversations hold your messages and the text of every file a tool read:
# they stay out of the repository. To share one on purpose:
#   git add -f .jp/conversations/ID/events.jsonl
conversations/
# Local state of jp, also in a shared conversation: which conversation is
# active, write locks, and temporary files a crash may leave.
conversations/active
conversations/*/lock
conversations/*/.*.tmp
conversations/.removing-*
";

/// The model `jp init` writes when nobody chooses one.
const DEFAULT_MODEL: &str = "anthropic/claude-sonnet-4-5";

/// `jp init`.
#[derive(Debug, clap::Args)]
pub struct Init {
    /// Ask nothing; use the defaults.
    #[arg(long, short = 'y')]
    yes: bool,

    /// Let `run_command` run every command without asking, inside its
    /// sandbox (no network, writes only in the workspace), and add
    /// `run_command_online`, which has the network and always asks
    /// (docs/sandbox.md). Without it, `jp init` asks on a terminal; the
    /// default is that commands ask.
    #[arg(long)]
    sandboxed_commands: bool,

    /// Create `AGENTS.md`, the project's instructions for coding agents
    /// (jp reads it into every query), when there is none. Without it,
    /// `jp init` asks on a terminal; an existing one is never replaced.
    #[arg(long)]
    agents_md: bool,
}

impl Init {
    /// Writes `.jp/config.toml` (model and the default tools),
    /// `.jp/.gitignore`, and `AGENTS.md` when asked for. Both are created new, and `.jp` is neither
    /// followed nor written through when it is a link (a repository could
    /// commit one to the user's config directory): see [`jp_fs`].
    pub fn run(self, ctx: &crate::ctx::Ctx) -> Result<ExitCode, Error> {
        let cwd = &ctx.cwd;
        let dir = cwd.join(".jp");
        let config = dir.join("config.toml");
        // A link at `.jp` is refused here, before anything is asked.
        let existing =
            jp_fs::kind(cwd, Path::new(".jp/config.toml")).map_err(|source| Error::File {
                action: "create",
                path: config.clone(),
                source,
            })?;
        if existing.is_some() {
            errln!(
                "error: {} already exists; jp init leaves an existing workspace alone",
                config.display()
            );
            return Ok(exit::USAGE.into());
        }
        let asks = !self.yes && std::io::stdin().is_terminal();
        let model = if asks {
            let Some(model) = ask_model(ctx) else {
                errln!("interrupted; nothing was created");
                return Ok(exit::INTERRUPTED.into());
            };
            model
        } else {
            DEFAULT_MODEL.to_owned()
        };
        let sandboxed = if asks && !self.sandboxed_commands {
            let Some(sandboxed) = ask_sandboxed() else {
                errln!("interrupted; nothing was created");
                return Ok(exit::INTERRUPTED.into());
            };
            sandboxed
        } else {
            self.sandboxed_commands
        };
        let has_agents_md = !matches!(jp_fs::kind(cwd, Path::new(AGENTS_MD)), Ok(None));
        let agents_md = if has_agents_md {
            false
        } else if asks && !self.agents_md {
            let Some(create) = ask_agents_md() else {
                errln!("interrupted; nothing was created");
                return Ok(exit::INTERRUPTED.into());
            };
            create
        } else {
            self.agents_md
        };
        jp_fs::create_dir_all(cwd, Path::new(".jp")).map_err(|source| Error::File {
            action: "create",
            path: dir.clone(),
            source,
        })?;
        write_new(cwd, ".jp/config.toml", &config_text(&model, sandboxed))?;
        let ignore = Path::new(".jp/.gitignore");
        if matches!(jp_fs::kind(cwd, ignore), Ok(None)) {
            write_new(cwd, ".jp/.gitignore", GITIGNORE)?;
        }
        if agents_md {
            write_new(cwd, AGENTS_MD, &agents_md_text(cwd))?;
        }
        trust_created(ctx)?;
        outln!("Initialized a jp workspace: .jp/config.toml");
        outln!(
            "  model: {model} (change it with `jp config set assistant.model.id=PROVIDER/NAME`)"
        );
        if sandboxed {
            outln!(
                "  tools: {}, run_command_online",
                jp_tools::NAMES.join(", ")
            );
            outln!(
                "  commands: run_command runs them without asking, in its sandbox (no network, writes only here); run_command_online (with network) asks"
            );
        } else {
            outln!("  tools: {}", jp_tools::NAMES.join(", "));
        }
        if agents_md {
            outln!(
                "  instructions: AGENTS.md created; say there how to build and test this project (jp reads it into every query)"
            );
        } else if cwd.join(AGENTS_MD).is_file() {
            // One that is not a file (a dangling link) is left alone and
            // not said to be read.
            outln!("  instructions: AGENTS.md (jp reads it into every query)");
        }
        outln!("Try it offline: jp query --model scripted/demo \"add a hello() to src/lib.rs\"");
        Ok(ExitCode::SUCCESS)
    }
}

/// Asks for the workspace's model until the answer names one (an alias
/// of the user's config counts); `None` when the user interrupts (Ctrl+C
/// or Ctrl+D).
fn ask_model(ctx: &crate::ctx::Ctx) -> Option<String> {
    let printer = jp_term::printer::Printer::stdio(jp_term::printer::ColorMode::Auto);
    let Some(mut terminal) = TerminalPrompter::open(&printer) else {
        return Some(DEFAULT_MODEL.to_owned());
    };
    // The user's aliases; a user config that does not load is reported by
    // the next command, and the answer is then taken as it is.
    let known = jp_config::load::load(&ctx.load_options()).ok();
    let question = jp_tool::Question {
        id: "model".into(),
        text: format!("Model for this workspace (provider/name or alias) [{DEFAULT_MODEL}]:"),
        answer: jp_tool::AnswerKind::Text,
        default: Some(DEFAULT_MODEL.into()),
    };
    loop {
        let answer = match terminal.ask(&question, &tokio_util::sync::CancellationToken::new()) {
            Ok(serde_json::Value::String(model)) if !model.trim().is_empty() => {
                model.trim().to_owned()
            }
            Ok(_) => DEFAULT_MODEL.to_owned(),
            Err(_) => return None,
        };
        let checked = known.as_ref().map_or(Ok(()), |loaded| {
            jp_config::validate::resolve_model_id(&loaded.config, &answer).map(|_| ())
        });
        match checked {
            Ok(()) => return Some(answer),
            Err(error) => errln!(
                "  {}; try again",
                jp_term::printer::sanitize(&error.to_string())
            ),
        }
    }
}

/// Asks whether commands run unattended in their sandbox; `None` when the
/// user interrupts. No terminal: no.
fn ask_sandboxed() -> Option<bool> {
    use crate::ctx::YesNo;
    match crate::ctx::ask_yes_no(
        "sandboxed_commands",
        "Run commands without asking, sandboxed (no network, writes only here)?",
    ) {
        YesNo::Yes => Some(true),
        YesNo::No | YesNo::NoTerminal => Some(false),
        YesNo::Interrupted => None,
    }
}

/// The project's instructions file jp reads without being told.
const AGENTS_MD: &str = "AGENTS.md";

/// Asks whether to create `AGENTS.md`; `None` when the user interrupts.
/// No terminal: no.
fn ask_agents_md() -> Option<bool> {
    use crate::ctx::YesNo;
    match crate::ctx::ask_yes_no(
        "agents_md",
        "Create AGENTS.md for this project's instructions (jp reads it into every query)?",
    ) {
        YesNo::Yes => Some(true),
        YesNo::No | YesNo::NoTerminal => Some(false),
        YesNo::Interrupted => None,
    }
}

/// The `AGENTS.md` `jp init` writes in `dir`: headings to fill in, with
/// the build and test commands of the build files it finds there.
fn agents_md_text(dir: &Path) -> String {
    const KNOWN: [(&str, &str); 5] = [
        ("Cargo.toml", "`cargo build`; test with `cargo test`"),
        ("package.json", "`npm install`; test with `npm test`"),
        ("go.mod", "`go build ./...`; test with `go test ./...`"),
        ("pyproject.toml", "`pip install -e .`; test with `pytest`"),
        ("Makefile", "`make`; test with `make test`"),
    ];
    let commands: Vec<String> = KNOWN
        .iter()
        .filter(|(file, _)| dir.join(file).is_file())
        .map(|(file, how)| format!("- Build with {how} ({file})."))
        .collect();
    let commands = if commands.is_empty() {
        "- (How to build the project, and how to run its tests.)".to_owned()
    } else {
        commands.join("\n")
    };
    format!(
        "# AGENTS.md\n\
         \n\
         Instructions for coding agents working in this project. jp sends this file\n\
         with every query (`jp query --print-system-prompt` shows it); other agents\n\
         read it too. Keep it short: what an agent cannot find out by itself.\n\
         \n\
         ## Build and test\n\
         \n\
         {commands}\n\
         \n\
         ## Conventions\n\
         \n\
         - (Code style, naming, what to keep out of commits.)\n"
    )
}

/// The workspace config `jp init` writes: the default tools, with the
/// sandboxed commands' policy when `sandboxed`.
fn config_text(model: &str, sandboxed: bool) -> String {
    let model = toml_edit::Value::from(model);
    format!(
        "# jp workspace config. `jp config show` prints every setting; docs/config.md\n\
         # explains them.\n\n\
         [assistant.model]\n\
         # `provider/name` or an alias (haiku, sonnet, opus). `scripted/demo` plays\n\
         # an offline demo session.\n\
         id = {model}\n\n\
         {}",
        if sandboxed {
            jp_tools::SANDBOXED_TOOLS_TOML
        } else {
            jp_tools::DEFAULT_TOOLS_TOML
        }
    )
}

/// Records that the user trusts the workspace just created: its config is
/// what jp wrote for them.
fn trust_created(ctx: &crate::ctx::Ctx) -> Result<(), Error> {
    let options = jp_config::load::LoadOptions {
        trust: jp_config::trust::WorkspaceTrust::Untrusted,
        ..ctx.load_options()
    };
    // A user config that does not load is reported by the next command.
    let Ok(loaded) = jp_config::load::load(&options) else {
        return Ok(());
    };
    if let (Some(held), Some(root)) = (loaded.held, loaded.workspace_root) {
        let store = crate::trust::TrustStore::of_user(&ctx.env).ok_or(Error::NoUserConfig)?;
        store.set(&root, crate::trust::record_of(&held))?;
    }
    Ok(())
}

/// Writes `root/rel`, a file that must not exist yet, through no link.
fn write_new(root: &Path, rel: &str, text: &str) -> Result<(), Error> {
    use std::io::Write as _;
    let path = &root.join(rel);
    let failed = |action| {
        move |source| Error::File {
            action,
            path: path.clone(),
            source,
        }
    };
    let mut file =
        jp_fs::open(root, Path::new(rel), jp_fs::Access::CreateNew).map_err(failed("create"))?;
    file.write_all(text.as_bytes()).map_err(failed("write"))
}
