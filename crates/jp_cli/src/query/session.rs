//! [`Session`]: one turn's conversation and terminal. It holds the config,
//! the provider, the conversation and its log, the printer and the call
//! renderer; it makes each request, records each event, shows each call and
//! its result, asks for the user's reply, and resolves the config again
//! when tools changed it. The turn's loop
//! ([`drive`](mod@super::drive)) hands it to a
//! [`super::stream::Response`] while a response streams, and to a
//! [`super::run::Cycle`] while its calls run.

use std::collections::HashMap;

use jp_config::AppConfig;
use jp_config::validate::resolve_model_id;
use jp_conversation::{
    Conversation, ConversationEvent, ConversationLock, EventKind, ResponseUsage, ToolCallRequest,
    ToolCallResponse,
};
use jp_llm::{ChatRequest, Provider};

use super::arguments::received_arguments_line;
use super::decision::Verdict;
use super::diff;
use super::render::{self, ToolRenderer};
use super::system::{Facts, system_prompt};
use super::tools::Asker;
use super::tools::allow::SESSION_APPROVED;
use crate::ctx::Ctx;
use jp_term::printer::{Printer, Style};
use jp_term::prompt::{PromptError, Prompts};

/// One turn's conversation and terminal: what it records, and what it
/// shows.
pub struct Session {
    /// What the query may still spend (`conversation.max_cost`), when it
    /// has a budget.
    pub(super) budget: Option<super::budget::Budget>,
    /// The config as of this cycle's start.
    pub(super) config: std::sync::Arc<AppConfig>,
    /// The config as loaded, with where each part of it is written: to say
    /// the file and line of a problem found later (once the MCP servers'
    /// schemas are known).
    pub(super) loaded: jp_config::load::Loaded,
    pub(super) provider: Box<dyn Provider>,
    pub(super) model: String,
    /// The provider's name in config (`anthropic`), for the model's price.
    pub(super) provider_name: String,
    /// The role header that starts each response: `── jp (PROVIDER/MODEL) ──`.
    pub(super) header: String,
    pub(super) printer: Printer,
    /// Renders calls live on a terminal.
    pub(super) renderer: Option<ToolRenderer>,
    pub(super) conversation: Conversation,
    pub(super) lock: ConversationLock,
    /// What this user's jp recorded in this workspace: every event is
    /// sealed there as it is appended.
    pub(super) ledger: crate::ledger::Ledger,
    /// The system prompt ([`super::system`]), made when the config is
    /// resolved.
    pub(super) system: Option<String>,
    /// Whether this query compacted the conversation already (or tried):
    /// it does so at most once ([`super::fit`]).
    pub(super) compacted: bool,
    /// Where the turn's events go, for `--format jsonl`.
    pub(super) events: Option<super::events::EventStream>,
}

impl Session {
    /// Starts the turn with the user's `message` (what was `attached` to
    /// it recorded before it, and the config change
    /// the command line asked to `record`), in one commit: a killed jp
    /// leaves all or none.
    pub fn start_turn(
        &mut self,
        message: String,
        attached: Vec<jp_conversation::Attached>,
        record: Option<jp_conversation::ConfigDelta>,
    ) -> Result<(), jp_conversation::StoreError> {
        tracing::info!(conversation = %self.conversation.id, "turn starts");
        if let Some(stream) = &self.events {
            stream.start(
                &self.conversation.id,
                &format!("{}/{}", self.provider_name, self.model),
            );
        }
        let mut start = vec![ConversationEvent::now(EventKind::TurnStart)];
        if !attached.is_empty() {
            start.push(ConversationEvent::now(EventKind::Attachments {
                items: attached,
            }));
        }
        start.push(ConversationEvent::now(EventKind::ChatRequest {
            content: message,
        }));
        if let Some(record) = record {
            start.push(ConversationEvent::now(EventKind::ConfigDelta(record)));
        }
        self.append(start)
    }

    /// Appends `events` to the conversation's log in one commit, and
    /// writes them to the event stream once they are in it.
    pub fn append(
        &mut self,
        events: impl IntoIterator<Item = ConversationEvent>,
    ) -> Result<(), jp_conversation::StoreError> {
        let first = self.conversation.events.len();
        self.ledger
            .append(&mut self.lock, &mut self.conversation, events)?;
        if let Some(stream) = &self.events {
            for event in &self.conversation.events[first..] {
                stream.recorded(event);
            }
        }
        Ok(())
    }

    /// Resolves the config again, with the conversation's config changes,
    /// for the rest of the turn. The message names what does not resolve;
    /// the change stays in the conversation.
    pub fn reload(
        &mut self,
        ctx: &Ctx,
        env: &HashMap<String, String>,
        root: &std::path::Path,
    ) -> Result<(), String> {
        let failed = |what: String| {
            format!(
                "the config a tool changed does not resolve: {what}; the change stays in the conversation (see `jp conversation show`), and a later one (a tool, or --cfg) can correct it"
            )
        };
        // The grants come from the config without the conversation's
        // changes; every change is authorized again, the new one too.
        let base = jp_config::load::load(&ctx.load_options())
            .map_err(|error| failed(error.to_string()))?;
        let authorized = crate::conversation::conversation_deltas(
            &self.conversation,
            &base.config,
            &self.ledger,
        );
        crate::recorded::warn(
            &crate::recorded::log_name(root, &self.conversation.id, &ctx.cwd),
            &authorized.refused,
        );
        let loaded = ctx
            .load_with(authorized.layers)
            .map_err(|error| failed(error.to_string()))?;
        // The flags were recorded when the turn began, below this change,
        // except a value of a sensitive key, which stays on top for this
        // query only; say so rather than let the change look applied.
        let committed = self
            .conversation
            .events
            .iter()
            .rev()
            .find_map(|e| match &e.kind {
                EventKind::ConfigDelta(delta) => {
                    Some(delta.claims.keys().cloned().collect::<Vec<_>>())
                }
                _ => None,
            });
        for touched in committed.unwrap_or_default() {
            let Ok(unset) = jp_config::delta::UnsetPath::parse(&touched) else {
                continue;
            };
            if let Some(layer) = loaded.source_of(&unset.path)
                && layer.label.starts_with("--")
            {
                self.printer.chrome_line(
                    Style::Warn,
                    &format!(
                        "note: {} sets {} for this query only (a sensitive key's flag is not recorded in the conversation), so the change to it applies from the next query",
                        layer.label, unset.path
                    ),
                );
            }
        }
        let resolved = resolve(&loaded.config, env, root).map_err(|e| failed(e.to_string()))?;
        let assistant = &loaded.config.assistant;
        // Its warnings were said as the query started.
        let system = system_prompt(assistant, &Facts::here(root, assistant))
            .map_err(|e| failed(e.to_string()))?
            .text;
        self.header = format!("── jp ({}/{}) ──", resolved.provider_name, resolved.model);
        self.model = resolved.model;
        self.provider_name = resolved.provider_name;
        self.provider = resolved.provider;
        self.config = std::sync::Arc::new(loaded.config.clone());
        self.loaded = loaded;
        self.system = system;
        Ok(())
    }

    /// Appends `kind` to the conversation's log (one commit point).
    pub fn record(&mut self, kind: EventKind) -> Result<(), jp_conversation::StoreError> {
        // What the user approved carries the seal that makes it theirs.
        let kind = match kind {
            EventKind::SessionApproval(approval) => EventKind::SessionApproval(
                self.ledger.seal_approval(&self.conversation.id, approval),
            ),
            kind => kind,
        };
        self.append([ConversationEvent::now(kind)])
    }

    /// Records what one response used, with its cost where the model's
    /// price is known.
    pub fn record_usage(
        &mut self,
        usage: jp_llm::Usage,
    ) -> Result<(), jp_conversation::StoreError> {
        let kind = usage_kind(&self.config, &self.provider_name, &self.model, &usage);
        if let (Some(budget), EventKind::Usage(usage)) = (&mut self.budget, &kind) {
            budget.end_response(usage.cost_usd);
        }
        self.record(kind)
    }

    /// Which old tool results the request sends as stubs, if any
    /// (`conversation.elide_tool_results`).
    fn elision(&self) -> Option<jp_llm::request::Elision> {
        elision(&self.config)
    }

    /// The model as `provider/name`, and its context window when known.
    pub fn window(&self) -> (String, Option<u64>) {
        let info = self
            .config
            .providers
            .llm
            .model_info(&self.provider_name, &self.model);
        (
            format!("{}/{}", self.provider_name, self.model),
            info.context_window,
        )
    }

    pub fn request(&self) -> ChatRequest {
        let assistant = &self.config.assistant;
        ChatRequest {
            model: self.model.clone(),
            system: self.system.clone(),
            // Only the user's own rewinds and compactions shape it.
            messages: jp_llm::request::messages_of(
                jp_conversation::view::sent(
                    &self.conversation.events,
                    Some(&self.ledger.ours(&self.conversation)),
                ),
                self.elision(),
            ),
            tools: jp_llm::request::tool_definitions(&self.config),
            max_tokens: assistant.model.parameters.max_tokens,
            temperature: assistant.model.parameters.temperature,
            top_p: assistant.model.parameters.top_p,
        }
    }

    /// The user's reply after they stopped the turn: `Some(None)` for no
    /// reply, `None` when they interrupted instead.
    pub async fn ask_reply(&self, prompts: &Prompts) -> Option<Option<String>> {
        let question = jp_tool::Question {
            id: "reply".into(),
            text: "Your reply (Enter alone ends the turn):".into(),
            answer: jp_tool::AnswerKind::Text,
            default: None,
        };
        let answer = match prompts.turn().await {
            Ok(prompt) => prompt.ask(&question).await,
            Err(error) => Err(error),
        };
        match answer {
            Ok(serde_json::Value::String(reply)) if !reply.trim().is_empty() => Some(Some(reply)),
            Err(PromptError::Interrupted) => None,
            Ok(_) | Err(_) => Some(None),
        }
    }

    /// Whether calls of `tool` are hidden (`style.hidden`).
    pub fn hidden(&self, tool: &str) -> bool {
        hidden(&self.config, tool)
    }

    /// Prints `lines` as chrome, below the content so far.
    pub(super) fn print_lines(&self, lines: Vec<render::Line>) {
        if lines.is_empty() {
            return;
        }
        self.printer.finish_content();
        for line in lines {
            self.printer.chrome_line(line.style, &line.text);
        }
    }

    /// The call, before it is decided (so a prompt follows it): on a
    /// terminal the rest of what streamed, in a log one line.
    pub(super) fn show_call(&mut self, call: &ToolCallRequest) {
        self.printer.finish_content();
        if let Some(renderer) = &mut self.renderer {
            let lines = renderer.finish(call);
            if !self.hidden(&call.name) {
                self.print_lines(lines);
            }
            return;
        }
        if self.hidden(&call.name) {
            return;
        }
        let args = received_arguments_line(call, 100);
        self.printer.chrome_line(
            Style::Header,
            &format!("Calling tool {}({args})", call.name),
        );
    }

    /// On a terminal, below a complete call's arguments: the diff of the
    /// file change it would make (jp's `fs_modify_file`), wrapped and
    /// capped like the arguments.
    pub(super) fn show_change(&self, call: &ToolCallRequest, asker: &Asker<'_>) {
        let style = &self.config.style.tool_call;
        let Some(renderer) = &self.renderer else {
            return;
        };
        if !style.show_arguments || self.hidden(&call.name) {
            return;
        }
        let Ok(arguments) = call.arguments() else {
            return;
        };
        if let Some(lines) = asker.file_change(&call.id, &call.name, arguments) {
            let lines = render::wrap_words(lines, renderer.width());
            self.print_lines(diff::capped(lines, style.call_lines as usize));
        }
    }

    pub(super) fn show_verdict(&self, verdict: &Verdict) {
        match verdict {
            Verdict::Run {
                tool,
                mode,
                reason,
                approved,
                ..
            } => {
                if !self.hidden(tool) {
                    let how = if reason.starts_with(SESSION_APPROVED) {
                        reason.clone()
                    } else if *approved {
                        format!("approved ({mode}: {reason})")
                    } else {
                        format!("{mode} ({reason})")
                    };
                    self.printer.chrome_line(Style::Dim, &format!("  {how}"));
                }
            }
            Verdict::NotRun { note, .. } => {
                self.printer.chrome_line(Style::Warn, &format!("  {note}"));
            }
        }
    }

    /// The call's result, as [`render::result_lines`] lays it out; on a
    /// terminal wrapped to its width like the call's arguments, in a log
    /// one line per result line.
    pub(super) fn show_result(
        &self,
        call: &ToolCallRequest,
        response: &ToolCallResponse,
        note: Option<&str>,
    ) {
        let max = self
            .config
            .conversation
            .tools
            .get(&call.name)
            .and_then(|t| t.style.result_lines)
            .unwrap_or(self.config.style.tool_call.result_lines) as usize;
        let mut lines =
            render::result_lines(&call.name, response, note, max, self.hidden(&call.name));
        if let Some(renderer) = &self.renderer {
            lines = render::wrap_words(lines, renderer.width());
        }
        for line in lines {
            self.printer.chrome_line(line.style, &line.text);
        }
    }
}

/// The provider and model a config resolves to.
pub struct Resolved {
    pub provider: Box<dyn Provider>,
    pub provider_name: String,
    pub model: String,
}

/// What one response used, with its cost where the price of `model` of
/// `provider` (its name in config) is known, as the conversation records
/// it.
#[must_use]
pub fn usage_kind(
    config: &AppConfig,
    provider: &str,
    model: &str,
    usage: &jp_llm::Usage,
) -> EventKind {
    let info = config.providers.llm.model_info(provider, model);
    let tokens = jp_config::models::Tokens {
        input: usage.input_tokens.unwrap_or(0),
        cache_read: usage.cache_read_tokens.unwrap_or(0),
        cache_write: usage.cache_write_tokens.unwrap_or(0),
        output: usage.output_tokens.unwrap_or(0),
    };
    EventKind::Usage(ResponseUsage {
        model: format!("{provider}/{model}"),
        input_tokens: usage.input_tokens,
        cache_read_tokens: usage.cache_read_tokens,
        cache_write_tokens: usage.cache_write_tokens,
        output_tokens: usage.output_tokens,
        cost_usd: info.price.map(|price| price.cost(tokens)),
    })
}

/// Which old tool results `config` sends as stubs, if any
/// (`conversation.elide_tool_results`).
#[must_use]
pub fn elision(config: &AppConfig) -> Option<jp_llm::request::Elision> {
    let elide = &config.conversation.elide_tool_results;
    elide.enable.then(|| jp_llm::request::Elision {
        keep_turns: usize::try_from(elide.keep_turns).unwrap_or(usize::MAX),
        min_bytes: usize::try_from(elide.min_bytes).unwrap_or(usize::MAX),
    })
}

/// The provider and model `config` names, connected.
pub fn resolve(
    config: &AppConfig,
    env: &HashMap<String, String>,
    root: &std::path::Path,
) -> Result<Resolved, crate::error::Error> {
    resolve_id(config, &config.assistant.model.id, env, root)
}

/// The provider and model `id` (`provider/name` or an alias of `config`)
/// names, connected.
pub fn resolve_id(
    config: &AppConfig,
    id: &str,
    env: &HashMap<String, String>,
    root: &std::path::Path,
) -> Result<Resolved, crate::error::Error> {
    let (provider_name, model) = resolve_model_id(config, id)?;
    let (provider_name, model) = (provider_name.to_owned(), model.to_owned());
    let provider = jp_llm::connect(
        config,
        &provider_name,
        &model,
        &|var| env.get(var).cloned(),
        root,
    )?;
    Ok(Resolved {
        provider,
        provider_name,
        model,
    })
}

/// Whether `config` hides the calls of `tool` (`style.hidden`).
#[must_use]
pub fn hidden(config: &AppConfig, tool: &str) -> bool {
    config
        .conversation
        .tools
        .get(tool)
        .and_then(|t| t.style.hidden)
        .unwrap_or(false)
}
