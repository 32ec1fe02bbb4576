//! `jp config ...`: show, read, change, check and describe the config.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use jp_config::ConfigPath;
use jp_config::load::{self, Assignment, Loaded};

use super::format::Format;
use crate::ctx::{Ctx, print_load_error};
use crate::error::Error;
use crate::exit;

#[derive(Debug, clap::Subcommand)]
pub enum Config {
    /// Show the resolved config and where each value came from.
    Show {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Print one resolved value (strings bare, everything else as JSON).
    Get {
        /// The key, such as `assistant.model.id` or
        /// `conversation.tools.'*'.policy.run`.
        key: String,
    },
    /// Set a key in a config file, keeping the file's comments and layout.
    ///
    /// `KEY=VALUE` sets a string, or the JSON value when the key does not
    /// take a string (`assistant.model.parameters.max_tokens=4096`);
    /// `KEY:=JSON` sets exactly that JSON. The change is written only if the
    /// whole config is still valid with it.
    Set {
        /// `KEY=VALUE` or `KEY:=JSON`.
        assignment: String,
        /// Change the user config (`$XDG_CONFIG_HOME/jp/config.toml`).
        #[arg(long, conflicts_with = "workspace")]
        user: bool,
        /// Change the workspace config (`.jp/config.toml`); the default.
        #[arg(long)]
        workspace: bool,
    },
    /// Check every config layer; print one line per problem. Exits 1 if any
    /// is an error (warnings do not fail).
    Validate {
        /// Also start the MCP servers the config offers tools of (as a
        /// query does, and stop them again) to check their tools: a tool
        /// whose schema jp cannot use, and rules on arguments a tool
        /// lacks. Without it, no server is started.
        #[arg(long)]
        mcp: bool,
    },
    /// Print the JSON Schema of config files, for editors.
    Schema,
}

impl Config {
    pub fn run(self, ctx: &Ctx) -> Result<ExitCode, Error> {
        match self {
            Self::Show { format } => with_config(ctx, |loaded| show(loaded, format)),
            Self::Get { key } => with_config(ctx, |loaded| get(loaded, &key)),
            Self::Set {
                assignment,
                user,
                workspace: _,
            } => set(ctx, &assignment, user),
            Self::Validate { mcp } => validate(ctx, mcp),
            Self::Schema => {
                jp_term::printer::stdout_json(&jp_config::schema::config_json_schema()?);
                Ok(ExitCode::SUCCESS)
            }
        }
    }
}

fn with_config(
    ctx: &Ctx,
    f: impl FnOnce(&Loaded) -> Result<ExitCode, Error>,
) -> Result<ExitCode, Error> {
    let loaded = ctx.load().and_then(|loaded| {
        // The active conversation's config changes (made by tools) are
        // part of the config its next `jp query` uses.
        let deltas = here(ctx, &loaded)
            .map(|place| active_deltas(place, &loaded.config, &ctx.cwd))
            .unwrap_or_default();
        if deltas.is_empty() {
            Ok(loaded)
        } else {
            ctx.load_with(deltas)
        }
    });
    match loaded {
        Ok(loaded) => f(&loaded),
        Err(error) => {
            print_load_error(&error);
            Ok(exit::INVALID_CONFIG.into())
        }
    }
}

/// Where the command runs, as its config was `loaded` (a workspace, or
/// the current directory outside one: [`crate::place`]), settled; `None`
/// without either.
fn here(ctx: &Ctx, loaded: &Loaded) -> Option<&'static crate::place::Place> {
    crate::place::Place::find(&ctx.cwd, loaded.workspace_root.clone(), &ctx.env)
        .ok()
        .map(crate::place::settle)
}

/// The config changes recorded in the active conversation of `place`
/// (the workspace's, or the current directory's outside one), each
/// authorized again against `base` (the config without them); those
/// refused are named on stderr and left out. A conversation that cannot be
/// read is reported and its changes left out: the config itself can still
/// be shown and fixed.
fn active_deltas(
    place: &crate::place::Place,
    base: &jp_config::AppConfig,
    cwd: &std::path::Path,
) -> Vec<jp_config::load::DeltaLayer> {
    let Some(store) = place.stored() else {
        return Vec::new();
    };
    let root = place.root();
    let ledger = crate::ledger::Ledger::new(root);
    let Some(id) = crate::conversation::active_id(&store, &ledger) else {
        return Vec::new();
    };
    match store.load(&id) {
        Ok(conversation) => {
            crate::conversation::warn_torn(&conversation);
            let authorized = crate::conversation::conversation_deltas(&conversation, base, &ledger);
            crate::recorded::warn(
                &crate::recorded::log_name(root, &id, cwd),
                &authorized.refused,
            );
            authorized.layers
        }
        Err(error) => {
            jp_term::errln!(
                "warning: {error}; the config shown leaves out the changes recorded in it"
            );
            Vec::new()
        }
    }
}

/// Every leaf of the resolved config: `(key, value)`. Arrays and empty
/// tables are leaves.
fn leaves(
    path: &ConfigPath,
    value: &serde_json::Value,
    out: &mut Vec<(ConfigPath, serde_json::Value)>,
) {
    match value {
        serde_json::Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                leaves(&path.join(k.clone()), v, out);
            }
        }
        _ => out.push((path.clone(), value.clone())),
    }
}

fn sources(loaded: &Loaded, key: &ConfigPath) -> Vec<String> {
    let layers = loaded.value_sources(key);
    if layers.is_empty() {
        return vec!["default".into()];
    }
    layers.iter().map(|l| l.label.clone()).collect()
}

fn show(loaded: &Loaded, format: Format) -> Result<ExitCode, Error> {
    let mut all = Vec::new();
    leaves(&ConfigPath::root(), &loaded.resolved, &mut all);
    match format {
        Format::Text => {
            for (key, value) in &all {
                jp_term::outln!(
                    "{key} = {}  # {}",
                    serde_json::to_string(value)?,
                    sources(loaded, key).join(", ")
                );
            }
        }
        Format::Json => {
            let sources = all
                .iter()
                .map(|(key, _)| (key.to_string(), sources(loaded, key).into()))
                .collect::<serde_json::Map<_, _>>();
            let out = serde_json::json!({ "config": loaded.resolved, "sources": sources });
            jp_term::printer::stdout_json(&serde_json::to_string_pretty(&out)?);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn get(loaded: &Loaded, key: &str) -> Result<ExitCode, Error> {
    let path = ConfigPath::parse(key)?;
    match path.lookup(&loaded.resolved) {
        // Piped, a string is written byte for byte (a script reads the
        // value); on a terminal it is escaped like everything jp shows.
        Some(serde_json::Value::String(s)) => jp_term::printer::stdout_value_line(s),
        Some(value) => jp_term::printer::stdout_json(&serde_json::to_string_pretty(value)?),
        None => {
            jp_term::errln!("error: no config key `{path}`");
            return Ok(exit::INVALID_CONFIG.into());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn validate(ctx: &Ctx, mcp: bool) -> Result<ExitCode, Error> {
    // All of it is checked, what needs trust too: checking runs nothing
    // (unless `--mcp` asks to start the servers, which then must be the
    // ones the config applies).
    let options = load::LoadOptions {
        trust: if mcp {
            ctx.load_options().trust
        } else {
            jp_config::trust::WorkspaceTrust::Trusted
        },
        ..ctx.load_options()
    };
    Ok(match load::load(&options) {
        Ok(mut loaded) => {
            if let Ok(applies) = load::load(&ctx.load_options()) {
                ctx.trust_notice(&applies);
            }
            for warning in &loaded.warnings {
                jp_term::outln!("{warning}");
            }
            for warning in missing_programs(&loaded, ctx) {
                jp_term::outln!("{warning}");
            }
            if mcp && let Err(message) = crate::mcp::attach_once(ctx, &mut loaded)? {
                jp_term::outln!("error: {message}");
                return Ok(exit::INVALID_CONFIG.into());
            }
            let layers = loaded
                .layers
                .iter()
                .map(|l| l.label.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            jp_term::outln!("config is valid ({layers})");
            ExitCode::SUCCESS
        }
        Err(error) => {
            for diagnostic in error.warnings.iter().chain(&error.errors) {
                jp_term::outln!("{diagnostic}");
            }
            exit::INVALID_CONFIG.into()
        }
    })
}

fn set(ctx: &Ctx, arg: &str, user: bool) -> Result<ExitCode, Error> {
    let assignment = match Assignment::parse(arg) {
        Ok(a) => a,
        Err(e) => {
            jp_term::errln!("error: {e}");
            return Ok(exit::USAGE.into());
        }
    };
    let file = match target_file(ctx, user) {
        Ok(file) => file,
        Err(message) => {
            jp_term::errln!("error: {message}");
            return Ok(exit::USAGE.into());
        }
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(Error::File {
                action: "read",
                path: file,
                source,
            });
        }
    };

    // A workspace the user trusts stays trusted through their own edit.
    let trusted = !user && workspace_is_trusted(ctx);

    // `KEY=VALUE` is a string unless the key wants another type and the
    // text is JSON of that type; trying both against the whole config
    // decides, the same way `--cfg` does.
    let mut failure = None;
    for candidate in assignment.candidates() {
        let new_text = match jp_config::edit::set_key(&text, &assignment.path, &candidate) {
            Ok(t) => t,
            Err(e) => {
                jp_term::errln!("error: {}: {e}", file.display());
                return Ok(exit::INVALID_CONFIG.into());
            }
        };
        // Check the files alone: a value that only passes because an
        // environment variable, `--cfg` or a flag (`--color`) overrides it
        // must not be written.
        let mut options = ctx.load_options();
        options.env.clear();
        options.assignments.clear();
        options.flags.clear();
        options.overrides.push((file.clone(), new_text.clone()));
        // All of it is checked, what needs trust too: checking runs nothing.
        options.trust = jp_config::trust::WorkspaceTrust::Trusted;
        match load::load(&options) {
            Ok(loaded) => {
                write_atomically(&file, &new_text)?;
                if !user && trusted {
                    retrust(ctx, &loaded)?;
                }
                for warning in &loaded.warnings {
                    jp_term::errln!("{warning}");
                }
                jp_term::outln!(
                    "{} = {} in {}",
                    assignment.path,
                    serde_json::to_string(&candidate)?,
                    load::display_path(&file, &ctx.cwd)
                );
                note_if_shadowed(ctx, &assignment.path);
                return Ok(ExitCode::SUCCESS);
            }
            Err(error) => failure = Some(error),
        }
    }
    if let Some(error) = failure {
        print_load_error(&error);
        jp_term::errln!(
            "error: {} is unchanged: the config would not be valid",
            load::display_path(&file, &ctx.cwd)
        );
    }
    Ok(exit::INVALID_CONFIG.into())
}

/// Says so when the active conversation's recorded changes (its
/// `--model`, a tool's change) set `path` to something else: they apply
/// over the config files in its next `jp query`, so the edit just made
/// would seem to do nothing there.
fn note_if_shadowed(ctx: &Ctx, path: &ConfigPath) {
    let Ok(files) = ctx.load() else {
        return;
    };
    let Some(place) = here(ctx, &files) else {
        return;
    };
    let Some(id) = place.stored().and_then(|store| store.active()) else {
        return;
    };
    let deltas = active_deltas(place, &files.config, &ctx.cwd);
    if deltas.is_empty() {
        return;
    }
    let Ok(with) = ctx.load_with(deltas) else {
        return;
    };
    if let Some(value) = path.lookup(&with.resolved)
        && path.lookup(&files.resolved) != Some(value)
    {
        jp_term::errln!(
            "note: the active conversation {id} sets {path} = {value}, which its next `jp query` \
             uses instead (`jp query --new` starts one without it)"
        );
    }
}

/// Whether the user's record trusts the workspace's files as they are now
/// (a trust for one run, `JP_TRUST_WORKSPACE=1`, is not carried over).
fn workspace_is_trusted(ctx: &Ctx) -> bool {
    let options = ctx.load_options();
    let trust = options.trust.clone();
    matches!(trust, jp_config::trust::WorkspaceTrust::Recorded(_))
        && load::load(&options)
            .ok()
            .and_then(|loaded| loaded.held)
            .is_some_and(|held| held.covered_by(&trust))
}

/// Records trust in the workspace's files as the user's edit left them.
fn retrust(ctx: &Ctx, loaded: &Loaded) -> Result<(), Error> {
    let (Some(held), Some(root)) = (&loaded.held, &loaded.workspace_root) else {
        return Ok(());
    };
    let store = crate::trust::TrustStore::of_user(&ctx.env).ok_or(Error::NoUserConfig)?;
    store.set(root, crate::trust::record_of(held))?;
    Ok(())
}

fn target_file(ctx: &Ctx, user: bool) -> Result<PathBuf, Error> {
    if user {
        return load::user_config_file(&ctx.env).ok_or(Error::NoUserConfig);
    }
    let root = load::find_workspace_root(&ctx.cwd).ok_or(Error::NoWorkspace)?;
    let file = load::workspace_config_file(&root);
    // The workspace's config is written inside the workspace: a link at
    // `.jp` or at the file (a repository can commit one, to any file of
    // the user's) is refused, not written through. The user's own config
    // may be a link (see `write_atomically`).
    let rel = Path::new(load::WORKSPACE_DIR).join("config.toml");
    let refused = match jp_fs::kind(&root, &rel) {
        Ok(Some(jp_fs::FileKind::Link)) => jp_fs::Refusal::Link(file.clone()).into(),
        Ok(_) => return Ok(file),
        Err(source) => source,
    };
    Err(Error::File {
        action: "write",
        path: file,
        source: refused,
    })
}

/// Writes through a temporary file in the same directory and renames it
/// over the target, so a crash never leaves a half-written config. A
/// config that is a symbolic link (dotfiles repositories often link the
/// user config) is written where the link points, so the link stays; the
/// file keeps its permissions.
fn write_atomically(file: &Path, text: &str) -> Result<(), Error> {
    let target = link_target(file)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|source| Error::File {
        action: "create",
        path: dir.to_path_buf(),
        source,
    })?;
    let written = match std::fs::metadata(&target) {
        Ok(meta) => jp_tools::atomic::replace(&target, text.as_bytes(), meta.permissions()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            jp_tools::atomic::create_new(&target, text.as_bytes())
        }
        Err(e) => Err(e),
    };
    written.map_err(|source| Error::File {
        action: "write",
        path: target.clone(),
        source,
    })
}

/// The file a chain of symbolic links at `file` ends in (`file` itself when
/// it is not a link); the end may not exist yet.
fn link_target(file: &Path) -> Result<PathBuf, Error> {
    /// As many links as Linux follows in one path.
    const MAX_LINKS: usize = 40;
    let mut path = file.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let to = std::fs::read_link(&path).map_err(|source| Error::File {
                    action: "read the link",
                    path: path.clone(),
                    source,
                })?;
                path = match path.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path),
            Err(source) => {
                return Err(Error::File {
                    action: "read",
                    path,
                    source,
                });
            }
        }
    }
    Err(Error::LinkLoop {
        path: file.to_path_buf(),
        limit: MAX_LINKS,
    })
}

/// A warning for each offered local tool whose program cannot be found:
/// a bare name on no directory of `PATH`, or a path (relative to the
/// workspace root, where tools run) that is not an executable file. `jp`
/// is the jp that runs the query. The config is valid all the same; the
/// tool fails when it is called.
fn missing_programs(loaded: &Loaded, ctx: &Ctx) -> Vec<jp_config::diagnostic::Diagnostic> {
    let path = ctx
        .env
        .iter()
        .find_map(|(name, value)| (name == "PATH").then_some(value.as_str()))
        .unwrap_or_default();
    let root = loaded.workspace_root.as_deref().unwrap_or(&ctx.cwd);
    jp_config::tool::offered(&loaded.config.conversation.tools)
        .filter(|(_, tool)| tool.source == jp_config::tool::ToolSource::Local)
        .filter_map(|(name, tool)| {
            let program = tool.command.as_ref()?.argv().into_iter().next()?;
            let found = if program == "jp" {
                true
            } else if program.contains('/') {
                is_executable(&root.join(&program))
            } else {
                std::env::split_paths(path).any(|dir| is_executable(&dir.join(&program)))
            };
            if found {
                return None;
            }
            let key =
                ConfigPath::from_segments(["conversation", "tools", name.as_str(), "command"]);
            let where_ = if program.contains('/') {
                "is not an executable file (relative to the workspace root)"
            } else {
                "is not found on PATH"
            };
            Some(jp_config::diagnostic::Diagnostic {
                source: loaded.source_of(&key).map(|layer| layer.label.clone()),
                ..jp_config::diagnostic::Diagnostic::warning(
                    Some(key.to_string()),
                    format!(
                        "the program `{program}` {where_}, so the tool fails when it is called"
                    ),
                )
            })
        })
        .collect()
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
