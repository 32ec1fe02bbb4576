//! `-a 'cmd:git diff'`: a command's output as an attachment.
//!
//! The command is split into words as a shell would (quotes, backslashes)
//! and run without a shell, as a call of the `run_command` tool: its
//! `policy.run` decides (what runs unattended runs; what asks is asked on
//! the terminal, and declined without one; what is skipped is refused), and
//! it runs in that tool's sandbox, with the files jp guards put back after
//! it as after every call. Its report (exit status and output) is attached
//! whatever the status: a failing test run is worth asking about.

use jp_config::tool::limits::run_limits;
use jp_conversation::ToolCallRequest;
use jp_llm::tool::{Sandbox, ToolLimits, run_local};
use jp_tool::{Context, Outcome, Request, ToolInfo};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::Place;
use crate::query::decision::{Decided, Verdict};
use crate::query::tools::Judge;
use crate::query::tools::kept::Kept;

/// The tool a `cmd:` attachment runs as.
const TOOL: &str = "run_command";

/// The `run_command` arguments for `command`.
///
/// # Errors
///
/// When it does not split into words, or is empty.
pub fn arguments(command: &str) -> Result<Map<String, Value>, String> {
    let words = shell_words::split(command)
        .map_err(|e| format!("it does not split into words ({e}); check its quotes"))?;
    let Some((program, args)) = words.split_first() else {
        return Err("there is no command after `cmd:`".to_owned());
    };
    let mut arguments = Map::new();
    arguments.insert("program".into(), Value::from(program.as_str()));
    arguments.insert("args".into(), Value::from(args.to_vec()));
    Ok(arguments)
}

/// Runs `command` (the `index`th attachment) as a `run_command` call:
/// its report, or why it did not run.
pub(super) fn run(
    place: &Place<'_>,
    index: usize,
    command: &str,
    runtime: &tokio::runtime::Runtime,
    can_ask: bool,
) -> Result<String, String> {
    let arguments = arguments(command)?;
    let Some(tool) = place.config.conversation.tools.get(TOOL) else {
        return Err(format!(
            "`cmd:` attachments run as the `{TOOL}` tool, which this config does not have (`jp init` writes it)"
        ));
    };
    let judge = Judge::new(place.config, &place.root);
    let call = ToolCallRequest::new(format!("attachment_{index}"), TOOL, arguments);
    let arguments = match judge.decide_after(&call, can_ask, None) {
        Decided::Now(Verdict::Run { arguments, .. }) => arguments,
        Decided::Now(Verdict::NotRun { note, .. }) => return Err(note),
        Decided::Ask(ask) => {
            let question = format!("Run `{command}` to attach its output? ({TOOL} asks)");
            match crate::ctx::ask_yes_no("attach_command", &question) {
                crate::ctx::YesNo::Yes => ask.arguments,
                crate::ctx::YesNo::No => return Err("declined; nothing was sent".to_owned()),
                crate::ctx::YesNo::NoTerminal => {
                    return Err(format!(
                        "{TOOL}'s policy asks ({}), and there is no terminal to answer; nothing was sent",
                        ask.why
                    ));
                }
                crate::ctx::YesNo::Interrupted => {
                    return Err("interrupted; nothing was sent".to_owned());
                }
            }
        }
    };
    let mut argv = tool.command.as_ref().map(|c| c.argv()).unwrap_or_default();
    if argv.first().is_some_and(|p| p == "jp")
        && let Ok(exe) = std::env::current_exe()
    {
        argv[0] = exe.to_string_lossy().into_owned();
    }
    if argv.is_empty() {
        return Err(format!("the `{TOOL}` tool has no command to run"));
    }
    let request = Request {
        tool: ToolInfo {
            name: TOOL.to_owned(),
            arguments: arguments
                .as_value()
                .as_object()
                .cloned()
                .unwrap_or_default(),
            answers: Map::new(),
            options: tool.options.clone().into_iter().collect(),
        },
        context: Context::run(&place.root),
    };
    let limits = run_limits(&place.config.conversation.tools, TOOL);
    let limits = ToolLimits {
        timeout: limits.timeout,
        max_output_bytes: usize::try_from(limits.max_output_bytes).unwrap_or(usize::MAX),
        timeout_key: Some(limits.timeout_key),
        max_output_key: Some(limits.max_output_key),
        sandbox: Sandbox::from_config(&jp_config::sandbox::for_tool(place.config, TOOL)),
    };
    // As around every call: what reaches past the sandbox in the workspace
    // (jp's config, git's hooks) is put back.
    let kept = Kept::take(&place.root);
    let run = runtime.block_on(run_local(
        &argv,
        &request,
        &limits,
        &CancellationToken::new(),
    ));
    let restored = kept.restore();
    if !restored.failed.is_empty() {
        return Err(format!(
            "jp could not put back {}; nothing was sent",
            restored.failed.join("; ")
        ));
    }
    match run.outcome {
        Outcome::Success { content, .. } => Ok(content),
        // It ran and failed: its report says how, with its output.
        Outcome::Error { message, .. }
            if message.contains("\nno output") || message.contains("\noutput (") =>
        {
            Ok(message)
        }
        Outcome::Error { message, .. } => Err(message),
        Outcome::NeedsInput { .. } => Err(format!("the `{TOOL}` tool asked a question")),
    }
}
