//! `jp sandbox check`: the escape suite. Each attempt is a real process,
//! `jp sandbox probe KIND ARGS...`, started the way every local tool is
//! started (`jp_llm::tool::run_local`, with its process group, timeout and
//! clean-up) in the sandbox the loaded config gives the tool `--tool`
//! (`run_command` by default). It tries one way out and says what happened;
//! the check also looks for itself afterwards (a file outside that changed,
//! a connection that arrived, a process that outlived its run) and prints
//! each attempt as blocked, escaped or skipped.
//!
//! Everything it aims at is in a fresh temporary directory (a workspace,
//! an `outside/` directory and a home with a canary at each default secret
//! place); the only real places it touches are the user's secret places,
//! which it tries to read (never printing what it read). It sends only to
//! loopback sockets it opens itself.
//!
//! So that an attempt can look for credentials in its environment, the
//! check runs again as a child of itself with canary credentials in its
//! environment (`JP_SANDBOX_CHECK_TOKEN` and others), the way jp holds the
//! user's keys.

mod attempts;
mod evidence;
mod probe;
mod report;
mod scratch;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use jp_config::AppConfig;
use jp_llm::tool::{Sandbox, ToolLimits, run_local};

use crate::query::tools::kept::Kept;
use jp_tool::{Context, Outcome, Request, ToolInfo};
use tokio_util::sync::CancellationToken;

use self::attempts::{Attempt, Targets, Which};
use self::probe::EnvSpec;
use self::report::{Reported, Verdict};
use self::scratch::Scratch;
use super::format::Format;
use crate::ctx::{Ctx, print_load_error};

/// The exit code when the suite cannot run (its scratch directory, a
/// config that does not load, a probe that did not answer).
const CANNOT_RUN: u8 = 2;

/// The variable that holds the canary credential, and says that this jp
/// is the check's child that holds canaries.
const CANARY_VAR: &str = "JP_SANDBOX_CHECK_TOKEN";

/// Canary credentials the check's child gets besides [`CANARY_VAR`]; the
/// providers' default key variables get one too where they are not set.
const CANARY_NAMES: &[&str] = &[
    "JP_SANDBOX_CHECK_API_KEY",
    "JP_SANDBOX_CHECK_SECRET",
    "JP_SANDBOX_CHECK_PASSWORD",
];

/// The providers' default key variables.
const PROVIDER_KEYS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "GEMINI_API_KEY",
];

/// How long one attempt may run.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, clap::Subcommand)]
pub enum SandboxCmd {
    /// Run the escape suite: try each way out of a tool's sandbox.
    ///
    /// Each attempt (writes outside the workspace, reads of the secret
    /// places, the network, jp's own process, children that outlive the
    /// run, jp's trust records and the workspace's config; docs/sandbox.md
    /// lists them) is a process started exactly as a tool is, aimed at a
    /// scratch directory, and is printed as blocked, escaped or skipped.
    /// Nothing is sent off the machine.
    ///
    /// Exits 0 when nothing escaped, 1 when something did, 2 when the
    /// suite cannot run.
    Check {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The tool whose sandbox is checked (`conversation.tools.NAME`
        /// with `conversation.sandbox`); `run_command` by default.
        #[arg(long, value_name = "NAME")]
        tool: Option<String>,
    },
    /// One attempt of the escape suite, as `jp sandbox check` runs it (a
    /// local tool: a request on stdin, an outcome on stdout).
    #[command(hide = true)]
    Probe {
        /// What to try.
        kind: String,
        /// Its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

impl SandboxCmd {
    pub fn run(
        self,
        ctx: impl FnOnce() -> Result<Ctx, crate::error::Error>,
    ) -> Result<ExitCode, crate::error::Error> {
        match self {
            Self::Probe { kind, args } => Ok(probe::serve(&kind, &args)),
            Self::Check { format, tool } => {
                if std::env::var_os(CANARY_VAR).is_none() {
                    return Ok(with_canaries());
                }
                // Where the kernel cannot enforce a sandbox, tools run
                // only when asked, without one: nothing to check.
                let checked = jp_llm::tool::enforceable()
                    .map_err(|why| {
                        format!(
                            "the kernel cannot enforce a sandbox here ({why}); every tool call is asked instead"
                        )
                    })
                    .and_then(|()| ctx().map_err(|e| e.to_string()))
                    .and_then(|ctx| check(&ctx, format, tool));
                Ok(match checked {
                    Ok(code) => code,
                    Err(problem) => {
                        jp_term::errln!("error: the escape suite cannot run: {problem}");
                        CANNOT_RUN.into()
                    }
                })
            }
        }
    }
}

/// Runs this check again as a child with canary credentials in its
/// environment; its exit code.
fn with_canaries() -> ExitCode {
    let canary = format!("jp-sandbox-canary-{}", std::process::id());
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            jp_term::errln!(
                "error: the escape suite cannot run: cannot find jp's own program: {e}"
            );
            return CANNOT_RUN.into();
        }
    };
    let mut command = std::process::Command::new(&exe);
    command.args(std::env::args_os().skip(1));
    for name in std::iter::once(&CANARY_VAR).chain(CANARY_NAMES) {
        command.env(name, &canary);
    }
    for name in PROVIDER_KEYS {
        if std::env::var_os(name).is_none() {
            command.env(name, &canary);
        }
    }
    match command.status() {
        Ok(status) => status
            .code()
            .and_then(|code| u8::try_from(code).ok())
            .unwrap_or(CANNOT_RUN)
            .into(),
        Err(e) => {
            jp_term::errln!(
                "error: the escape suite cannot run: cannot start {}: {e}",
                exe.display()
            );
            CANNOT_RUN.into()
        }
    }
}

/// One printed attempt.
struct Line {
    name: String,
    what: String,
    verdict: Verdict,
    detail: String,
}

/// The suite, in this jp that holds canaries.
fn check(ctx: &Ctx, format: Format, tool: Option<String>) -> Result<ExitCode, String> {
    let loaded = match ctx.load() {
        Ok(loaded) => loaded,
        Err(error) => {
            print_load_error(&error);
            return Ok(CANNOT_RUN.into());
        }
    };
    let config = &loaded.config;
    let name = match tool {
        Some(name) if !config.conversation.tools.contains_key(&name) => {
            return Err(format!(
                "no tool `{name}` is configured (`conversation.tools.{name}`)"
            ));
        }
        Some(name) => name,
        None => "run_command".to_owned(),
    };
    let sandbox = jp_config::sandbox::for_tool(config, &name);
    let scratch = Scratch::new().map_err(|e| e.to_string())?;
    let home = scratch.home();
    let runner = Runner {
        exe: std::env::current_exe().map_err(|e| format!("cannot find jp's own program: {e}"))?,
        tool: name,
        root: scratch.workspace(),
        canary: Sandbox::from_config_in(&sandbox, Some(&home), Some(&home.join(".config"))),
        real: Sandbox::from_config(&sandbox),
    };
    let targets = Targets {
        scratch: &scratch,
        jp_pid: std::process::id(),
        env: env_spec(config, &sandbox.env),
        real_deny_read: runner.real.deny_read.clone(),
        home: std::env::var_os("HOME").map(PathBuf::from),
    };
    let mut attempts = attempts::all(&targets).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let reports = runtime.block_on(runner.run_all(&mut attempts))?;
    let scratch_path = scratch.root().display().to_string();
    let lines: Vec<Line> = attempts
        .iter()
        .zip(reports)
        .map(|(attempt, reported)| {
            let (verdict, detail) = attempt.evidence.judge(&reported);
            Line {
                name: attempt.name.clone(),
                what: attempt.what.clone(),
                verdict,
                detail: detail.replace(&scratch_path, "<scratch>"),
            }
        })
        .collect();
    drop(attempts);
    drop(scratch);
    print(&lines, format).map_err(|e| e.to_string())?;
    let escaped = lines.iter().any(|l| l.verdict == Verdict::Escaped);
    Ok(if escaped {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// What the environment attempt looks for: the canary, the providers' key
/// variables, and not what the tool's `sandbox.env` names (`named`).
fn env_spec(config: &AppConfig, named: &[String]) -> EnvSpec {
    let llm = &config.providers.llm;
    let mut forbidden: Vec<String> = [
        Some(&llm.anthropic.api_key_env),
        Some(&llm.openai.api_key_env),
        Some(&llm.openrouter.api_key_env),
        Some(&llm.google.api_key_env),
        llm.ollama.api_key_env.as_ref(),
        llm.llamacpp.api_key_env.as_ref(),
    ]
    .into_iter()
    .flatten()
    .chain(llm.custom.values().filter_map(|c| c.api_key_env.as_ref()))
    .cloned()
    .chain(
        std::iter::once(CANARY_VAR)
            .chain(CANARY_NAMES.iter().copied())
            .map(str::to_owned),
    )
    .collect();
    forbidden.retain(|name| !named.contains(name));
    EnvSpec {
        canary: std::env::var(CANARY_VAR).unwrap_or_default(),
        forbidden,
        named: named.to_vec(),
    }
}

/// How each attempt's probe is started.
struct Runner {
    exe: PathBuf,
    tool: String,
    /// The scratch workspace.
    root: PathBuf,
    canary: Sandbox,
    real: Sandbox,
}

impl Runner {
    /// Runs every attempt in turn; the probes' reports.
    async fn run_all(&self, attempts: &mut [Attempt]) -> Result<Vec<Reported>, String> {
        let mut reports = Vec::new();
        for attempt in attempts.iter_mut() {
            let reported = match &attempt.probe {
                Err(why) => Reported::skipped(why.clone()),
                Ok(args) => self.run(attempt, args).await?,
            };
            attempt.evidence.run_ended();
            reports.push(reported);
        }
        Ok(reports)
    }

    /// Runs one probe as the tool would run.
    async fn run(&self, attempt: &Attempt, args: &[String]) -> Result<Reported, String> {
        let mut argv = vec![
            self.exe.to_string_lossy().into_owned(),
            "sandbox".to_owned(),
            "probe".to_owned(),
        ];
        argv.extend(args.iter().cloned());
        let request = Request {
            tool: ToolInfo {
                name: self.tool.clone(),
                arguments: serde_json::Map::new(),
                answers: serde_json::Map::new(),
                options: serde_json::Map::new(),
            },
            context: Context::run(&self.root),
        };
        let limits = ToolLimits {
            timeout: ATTEMPT_TIMEOUT,
            max_output_bytes: 64 * 1024,
            timeout_key: None,
            max_output_key: None,
            sandbox: match attempt.which {
                Which::Canary => self.canary.clone(),
                Which::Real => self.real.clone(),
            },
        };
        // As the runner does around every call: what reaches past the
        // sandbox in the workspace (jp's config, git's hooks) is put back.
        let kept = Kept::take(&self.root);
        let run = run_local(&argv, &request, &limits, &CancellationToken::new()).await;
        let restored = kept.restore();
        if !restored.failed.is_empty() {
            return Ok(Reported::escaped(format!(
                "jp could not put back {}",
                restored.failed.join("; ")
            )));
        }
        if !restored.put_back.is_empty() {
            return Ok(Reported::blocked(format!(
                "jp put back {}",
                restored.put_back.join(", ")
            )));
        }
        let name = &attempt.name;
        match run.outcome {
            Outcome::Success { content, .. } => Reported::decode(&content)
                .ok_or_else(|| format!("the probe of `{name}` answered {content:?}")),
            // Killed for what it tried (a filter that kills): stopped.
            Outcome::Error { message, .. } if message.contains("killed by signal") => {
                Ok(Reported::blocked(message))
            }
            Outcome::Error { message, .. } => {
                Err(format!("the probe of `{name}` did not report: {message}"))
            }
            Outcome::NeedsInput { .. } => Err(format!("the probe of `{name}` asked a question")),
        }
    }
}

/// Prints the lines as `format` says.
fn print(lines: &[Line], format: Format) -> Result<(), serde_json::Error> {
    let count = |verdict| lines.iter().filter(|l| l.verdict == verdict).count();
    let (blocked, escaped, skipped) = (
        count(Verdict::Blocked),
        count(Verdict::Escaped),
        count(Verdict::Skipped),
    );
    if format == Format::Json {
        let attempts: Vec<serde_json::Value> = lines
            .iter()
            .map(|l| {
                serde_json::json!({
                    "name": l.name,
                    "what": l.what,
                    "result": l.verdict.as_str(),
                    "detail": l.detail,
                })
            })
            .collect();
        let document = serde_json::json!({
            "attempts": attempts,
            "blocked": blocked,
            "escaped": escaped,
            "skipped": skipped,
        });
        jp_term::outln!("{}", serde_json::to_string_pretty(&document)?);
        return Ok(());
    }
    let width = lines
        .iter()
        .map(|l| l.what.chars().count())
        .max()
        .unwrap_or(0);
    for line in lines {
        let label = match line.verdict {
            Verdict::Escaped => "ESCAPED",
            verdict => verdict.as_str(),
        };
        let detail = if line.detail.is_empty() {
            String::new()
        } else {
            format!("  ({})", line.detail)
        };
        jp_term::outln!("{label}  {:<width$}{detail}", line.what);
    }
    jp_term::outln!(
        "{} attempts: {blocked} blocked, {escaped} escaped, {skipped} skipped",
        lines.len()
    );
    Ok(())
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
