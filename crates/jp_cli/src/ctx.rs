//! What every command that reads config needs: where it runs, the
//! environment, and the `--cfg` arguments; and loading the config from them.

use std::path::PathBuf;

use jp_config::load::{self, LoadError, LoadOptions, Loaded};

/// The context a command runs in.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The directory jp was started in.
    pub cwd: PathBuf,
    /// The process environment.
    pub env: Vec<(String, String)>,
    /// `--cfg` arguments, in order.
    pub assignments: Vec<String>,
    /// What other flags set (`--model`), after the `--cfg` arguments.
    pub flags: Vec<load::FlagAssignment>,
}

impl Ctx {
    /// The context of this process.
    pub fn from_process(
        assignments: Vec<String>,
        flags: Vec<load::FlagAssignment>,
    ) -> Result<Self, crate::error::Error> {
        let cwd = std::env::current_dir().map_err(crate::error::Error::CurrentDir)?;
        let env = process_env();
        crate::trust::Override::from_env(&env).map_err(crate::error::Error::TrustOverride)?;
        Ok(Self {
            cwd,
            env,
            assignments,
            flags,
        })
    }

    /// The load options for this context.
    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            cwd: self.cwd.clone(),
            user_config: load::user_config_file(&self.env),
            env: self.env.clone(),
            assignments: self.assignments.clone(),
            flags: self.flags.clone(),
            overrides: Vec::new(),
            deltas: Vec::new(),
            trust: crate::trust::workspace_trust(&self.env, self.workspace_root().as_deref()),
        }
    }

    /// The workspace root around `cwd`, if there is one.
    pub fn workspace_root(&self) -> Option<PathBuf> {
        load::find_workspace_root(&self.cwd)
    }

    /// Loads the config, printing its warnings to stderr, and what the
    /// workspace's config holds that did not apply.
    pub fn load(&self) -> Result<Loaded, LoadError> {
        let loaded = load::load(&self.load_options())?;
        for warning in &loaded.warnings {
            jp_term::errln!("{warning}");
        }
        self.trust_notice(&loaded);
        Ok(loaded)
    }

    /// Says (once) what the workspace's config holds that did not apply.
    pub fn trust_notice(&self, loaded: &Loaded) {
        crate::trust::notice(
            loaded.held.as_ref(),
            &self.env,
            loaded.workspace_root.as_deref(),
        );
    }
}

impl Ctx {
    /// Loads the config with a conversation's config changes on top of the
    /// files (below `--cfg`). Warnings are not printed: [`Ctx::load`] has
    /// printed those of the files already.
    pub fn load_with(&self, deltas: Vec<load::DeltaLayer>) -> Result<Loaded, LoadError> {
        load::load(&LoadOptions {
            deltas,
            ..self.load_options()
        })
    }
}

/// The process's environment. `vars()` panics on a variable that is not
/// UTF-8; such a variable can be no config key or path jp reads, so it is
/// skipped.
pub fn process_env() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// The `style.color` setting as the printer takes it: `jp_term` knows no
/// config.
pub fn color(mode: jp_config::style::ColorMode) -> jp_term::printer::ColorMode {
    use jp_config::style::ColorMode as Config;
    use jp_term::printer::ColorMode as Printer;
    match mode {
        Config::Auto => Printer::Auto,
        Config::Always => Printer::Always,
        Config::Never => Printer::Never,
    }
}

/// Prints a failed load to stderr (warnings, then errors).
pub fn print_load_error(error: &LoadError) {
    for diagnostic in error.warnings.iter().chain(&error.errors) {
        jp_term::errln!("{diagnostic}");
    }
}

/// Says there is no workspace around `cwd`; the exit code for it.
pub fn no_workspace(cwd: &std::path::Path) -> std::process::ExitCode {
    jp_term::errln!(
        "error: no jp workspace here or above {}; run `jp init` to create one",
        cwd.display()
    );
    crate::exit::USAGE.into()
}

/// The user's own directory of one kind for the workspace at `root`:
/// `$VAR/jp/workspaces/DIGEST` (`var` such as `XDG_CACHE_HOME`), else the
/// same under `~/UNDER_HOME` (`.cache`); `None` without either. DIGEST is
/// the workspace's name among the user's records ([`crate::ledger::digest`]).
#[must_use]
pub fn user_workspace_dir(var: &str, under_home: &str, root: &std::path::Path) -> Option<PathBuf> {
    Some(
        user_dir(&process_env(), var, under_home)?
            .join("workspaces")
            .join(crate::ledger::digest(root)),
    )
}

/// jp's own directory of one kind for this user, as `env` says:
/// `$VAR/jp` (`var` such as `XDG_DATA_HOME`), else `~/UNDER_HOME/jp`
/// (`.local/share`); `None` without either.
#[must_use]
pub fn user_dir(env: &[(String, String)], var: &str, under_home: &str) -> Option<PathBuf> {
    let value = |name: &str| {
        env.iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| PathBuf::from(v))
    };
    let base = value(var).or_else(|| value("HOME").map(|home| home.join(under_home)))?;
    Some(base.join("jp"))
}

/// The answer to a yes-or-no question a command asks on the terminal
/// ([`ask_yes_no`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YesNo {
    /// `y`.
    Yes,
    /// `n`, or Enter (no is the default).
    No,
    /// Ctrl+C or Ctrl+D.
    Interrupted,
    /// There is no terminal to ask on.
    NoTerminal,
}

/// Asks `text` (a question whose id is `id`) on the terminal, no by
/// default.
#[must_use]
pub fn ask_yes_no(id: &str, text: &str) -> YesNo {
    use jp_term::prompt::Prompter as _;
    let printer = jp_term::printer::Printer::stdio(jp_term::printer::ColorMode::Auto);
    let Some(mut terminal) = jp_term::prompt::TerminalPrompter::open(&printer) else {
        return YesNo::NoTerminal;
    };
    let question = jp_tool::Question {
        id: id.into(),
        text: text.into(),
        answer: jp_tool::AnswerKind::Boolean,
        default: Some(serde_json::Value::Bool(false)),
    };
    match terminal.ask(&question, &tokio_util::sync::CancellationToken::new()) {
        Ok(serde_json::Value::Bool(true)) => YesNo::Yes,
        Ok(_) => YesNo::No,
        Err(_) => YesNo::Interrupted,
    }
}
