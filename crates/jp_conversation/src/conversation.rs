//! A conversation: the ordered events that are its source of truth.
//!
//! Everything jp sends a provider, and everything it shows in
//! `jp conversation show`, is derived from these events. They are stored as
//! they are (see [`crate::store`]), so a later jp can replay them.

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::event::ToolCallRequest;

/// One event of a conversation, with when it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationEvent {
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

impl ConversationEvent {
    /// An event that happens now.
    #[must_use]
    pub fn now(kind: EventKind) -> Self {
        Self {
            at_ms: now_ms(),
            kind,
        }
    }
}

/// One attachment of a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attached {
    /// A workspace-relative path (`src/lib.rs`), or `cmd:` and the command
    /// whose output it is (`cmd:git diff`).
    pub source: String,
    /// The SHA-256 of the text sent, lowercase hex.
    pub sha256: String,
    /// Its length in bytes.
    pub bytes: u64,
}

/// What happened in a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A `jp query` began a turn: the user's message follows.
    TurnStart,
    /// What the user wrote.
    ChatRequest {
        /// The message.
        content: String,
    },
    /// What the user attached to the message that follows (`jp query -a`,
    /// `@path` in the message): each one's source and the hash of what was
    /// sent. The content itself is in the message, once. Never sent to the
    /// model on its own.
    Attachments {
        /// In the order they appear in the message.
        items: Vec<Attached>,
    },
    /// Text the assistant wrote.
    AssistantMessage {
        /// The text.
        content: String,
    },
    /// Reasoning the assistant showed.
    AssistantReasoning {
        /// The reasoning.
        content: String,
    },
    /// A tool call the assistant asked for (arguments may be unusable, see
    /// [`ToolCallRequest::arguments`]).
    ToolCallRequest(ToolCallRequest),
    /// The answer to a tool call, as given to the model.
    ToolCallResponse(ToolCallResponse),
    /// The config changes of one cycle (RFD 078).
    ConfigDelta(ConfigDelta),
    /// A stateful policy (`conversation.policies`) kept a call from
    /// running. The call's response follows; this records why, for
    /// `jp conversation show`. Never sent to the model.
    PolicyDenied(PolicyDenial),
    /// jp closed the response stream early (RFD D26): the call it was
    /// streaming was declined while its arguments arrived (or, `whole`,
    /// once they had all arrived, the response going on), and no other
    /// call was still streaming, so the rest of the response was never
    /// generated or paid for. Not sent to the model (the call's response
    /// says so). A response that had ended by then records none: closing
    /// it saved nothing.
    StreamStopped {
        /// The declined call's id.
        call_id: String,
        /// The declined call's tool.
        tool: String,
        /// How many bytes of the call's arguments had arrived.
        bytes: usize,
        /// Whether the call had arrived whole (a provider that sends each
        /// call in one event, as Gemini does): the stream was stopped after
        /// it, not in it. Logs written before it have none (false).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        whole: bool,
    },
    /// What one response used, as its provider reported it, and what it
    /// cost where the model's price was known. Never sent to the model.
    Usage(ResponseUsage),
    /// The user answered `a` ("allow for this session") at a call's
    /// prompt: later calls of the tool that the same `policy.run` rule asks
    /// about run without a prompt in this conversation. Never sent to the
    /// model; logs written before it existed simply have none.
    SessionApproval(SessionApproval),
    /// `jp conversation forget-approvals`: every session approval recorded
    /// before this event no longer applies.
    ApprovalsForgotten,
    /// A tool call changed a file, and what the file was before (so
    /// `jp conversation rewind` can put it back). Recorded with the call's
    /// response, in the same commit. Never sent to the model.
    FileChange(crate::recovery::FileChange),
    /// A call ran that may have changed files jp did not keep, and why.
    /// Never sent to the model.
    ChangesNotKept(crate::recovery::ChangesNotKept),
    /// `jp conversation rewind` (or a request refused as too large): the
    /// turns it names are no longer sent to the model, nor give authority;
    /// the log keeps them. Never sent to the model.
    Rewind(crate::recovery::Rewind),
    /// A summary of the turns before `upto`, sent from then on in their
    /// place; the log keeps them. See [`crate::view`].
    Compaction(crate::recovery::Compaction),
    /// How jp decided a tool call: the rule, the byte, who answered.
    /// Recorded just before the call's response. Never sent to the model;
    /// logs written before it existed have none.
    CallDecision(crate::decision::CallDecision),
}

/// An "allow for this session" answer (see [`EventKind::SessionApproval`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionApproval {
    /// The call it was given at.
    pub call_id: String,
    /// The tool it covers.
    pub tool: String,
    /// The index of the `policy.run` rule that asked; `None` for the
    /// implicit fallback `ask`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<usize>,
    /// That rule as it read then (`catch-all`, `prefix "src/" on /path`):
    /// a config whose rule at that index reads differently is not covered.
    pub rule_text: String,
    /// Which calls it covers, derived from the call it was given at (see
    /// [`ApprovalScope`]). An approval without one (recorded by a jp
    /// before scopes) covers nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ApprovalScope>,
    /// The approval generation of the conversation it was given in: a
    /// random id kept in the user's config directory, which
    /// `jp conversation forget-approvals` replaces, so an approval of an
    /// earlier generation approves nothing whatever the log says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
    /// A keyed hash (HMAC-SHA256) of the approval and its conversation,
    /// with a key only the user's config directory holds: a log can be
    /// shared and edited, so an approval without a seal that verifies was
    /// not given by this user and approves nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal: Option<String>,
}

/// Which later calls a session approval covers: what the user saw at
/// the call they allowed, never a whole rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalScope {
    /// Calls of jp's `run_command` with the same `program` (as written),
    /// the same first argument (`None`: no arguments at all) and the same
    /// `cwd` (as written; `None`: not given); the other arguments vary.
    Command {
        /// The program, as the call named it.
        program: String,
        /// Its first argument.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first: Option<String>,
        /// The `cwd` argument.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// Calls of one of jp's file tools whose every path argument is at or
    /// below one of `under` (relative to the workspace root, with `/`),
    /// as written and with links followed.
    Paths {
        /// The directories (or, for a file in the root, the file).
        under: Vec<String>,
    },
    /// Only a call with exactly these arguments.
    Call {
        /// The arguments.
        arguments: Value,
    },
}

/// The tokens of one request and response, for `jp query`'s line after
/// each turn and the totals of `jp conversation show`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseUsage {
    /// The model that answered, as `provider/name`.
    pub model: String,
    /// Input tokens, cached ones included; `None` when not reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Of the input tokens, those read from the provider's prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Of the input tokens, those written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Output tokens, reasoning included; `None` when not reported (a
    /// stream jp stopped early ends before the provider counts them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// What the tokens cost in US dollars, by the price jp knew when the
    /// response ended; `None` when the model's price was unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// The largest token count of one response that totals take as known:
/// jp's provider decoders make a larger report unknown
/// (`jp_llm::provider::MAX_REPORTED_TOKENS`, the same bound), so only a
/// log from elsewhere holds one.
pub const MAX_RECORDED_TOKENS: u64 = 1_000_000_000_000;

/// Usage summed over responses (a turn's, or a whole conversation's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct UsageTotals {
    /// How many responses reported usage.
    pub responses: usize,
    /// Input tokens, cached ones included.
    pub input_tokens: u64,
    /// Of them, read from the cache.
    pub cache_read_tokens: u64,
    /// Of them, written to the cache.
    pub cache_write_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// The cost of the responses whose price was known, in US dollars.
    pub cost_usd: f64,
    /// How many responses had no known price (their cost is not in
    /// `cost_usd`).
    pub unpriced: usize,
}

impl UsageTotals {
    /// The totals of the `Usage` events among `events`.
    #[must_use]
    pub fn of<'a>(events: impl IntoIterator<Item = &'a ConversationEvent>) -> Self {
        let mut totals = Self::default();
        for event in events {
            if let EventKind::Usage(usage) = &event.kind {
                totals.add(usage);
            }
        }
        totals
    }

    /// Adds one response's usage. The sums saturate, and a count over
    /// [`MAX_RECORDED_TOKENS`] (a log written before jp checked what
    /// providers report, or edited) counts as unknown, as does a cost that
    /// is not a finite, non-negative number.
    pub fn add(&mut self, usage: &ResponseUsage) {
        let count = |n: Option<u64>| n.filter(|n| *n <= MAX_RECORDED_TOKENS).unwrap_or(0);
        self.responses = self.responses.saturating_add(1);
        self.input_tokens = self.input_tokens.saturating_add(count(usage.input_tokens));
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(count(usage.cache_read_tokens));
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(count(usage.cache_write_tokens));
        self.output_tokens = self
            .output_tokens
            .saturating_add(count(usage.output_tokens));
        match usage.cost_usd.filter(|c| c.is_finite() && *c >= 0.0) {
            Some(cost) => self.cost_usd += cost,
            None => self.unpriced = self.unpriced.saturating_add(1),
        }
    }
}

/// A change to the conversation's config (RFD 070 and 078, architecture
/// decision 9): what tools changed in one cycle, committed when the cycle
/// ended, or what the flags of a `jp query` set, recorded when its turn
/// began. Reading a conversation authorizes each change again (a log is no
/// authority of its own; see `docs/config.md`). Replaying the conversation applies it above the config files,
/// removing `unsets` first and then setting `delta`, so the next request
/// (and the next `jp query`) uses the changed config. Never sent to the
/// model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigDelta {
    /// Values set: a partial config tree.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub delta: Map<String, Value>,
    /// Paths removed (`path` or `path["json"]` for list elements).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsets: Vec<String>,
    /// For each path touched, the config sources that set it; an empty
    /// list is the explicit unclaim a tool's change makes (no config file
    /// is the source of that value any more).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub claims: BTreeMap<String, Vec<String>>,
    /// The tools whose changes these are, for people reading the
    /// conversation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// The flags of the `jp query` whose change this is, as given
    /// (`--model haiku`, `--cfg key=value`, `--cfg @FILE`): the user's own
    /// change, recorded when the query began its turn. Empty for tools'
    /// changes (and in logs written before flags were recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
}

/// Why a stateful policy denied a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyDenial {
    /// The id of the call.
    pub id: String,
    /// The policy that denied it.
    pub policy: String,
    /// The tool.
    pub tool: String,
    /// What the model was told.
    pub reason: String,
    /// The policy's structured details (the key, the missing tools).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

/// The answer to one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallResponse {
    /// The id of the call this answers.
    pub id: String,
    /// What happened to the call.
    pub status: ResponseStatus,
    /// The text the model receives.
    pub content: String,
    /// What replaying the conversation needs to know about a call that
    /// ran, beyond its request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran: Option<RanWith>,
}

/// What a call that ran was run with, for replaying the conversation (the
/// stateful policies rebuild their state from it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RanWith {
    /// The arguments it ran with, when they are not the ones the model
    /// sent (the user edited them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// The keys stateful policies took from its arguments, by JSON pointer:
    /// a path as it resolved when the call ran, so a replay does not
    /// resolve it again against a file system that has changed since.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub keys: BTreeMap<String, String>,
}

impl ToolCallResponse {
    /// The answer `content` with `status` to the call `id`.
    #[must_use]
    pub fn new(id: impl Into<String>, status: ResponseStatus, content: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            status,
            content: content.into(),
            ran: None,
        }
    }
}

impl ToolCallResponse {
    /// Whether the model is told the call failed.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.status != ResponseStatus::Success
    }
}

/// What happened to a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseStatus {
    /// The tool ran and succeeded.
    Success,
    /// The tool ran and failed (or could not be run: a crash, a timeout).
    Error,
    /// jp refused the call before running it: unknown tool, unusable or
    /// ill-typed arguments.
    Refused,
    /// The user, or a policy that asks with no terminal to ask on, declined
    /// the call; it was not run.
    Declined,
    /// The policy skips this call; it was not run.
    Skipped,
    /// A stateful policy (`conversation.policies`) denied the call; it was
    /// not run.
    Denied,
    /// The call ran, but its result was withheld from the model.
    Withheld,
    /// The response was cut off before the call was complete, or the turn
    /// ended before it ran.
    Interrupted,
}

impl ResponseStatus {
    /// The word shown to users.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
            Self::Refused => "refused",
            Self::Declined => "declined",
            Self::Skipped => "skipped",
            Self::Denied => "denied",
            Self::Withheld => "withheld",
            Self::Interrupted => "interrupted",
        }
    }
}

/// The environment variable that sets jp's clock: milliseconds since the
/// Unix epoch. Output that shows a time (`jp conversation ls`'s ages, the
/// date in the system prompt, the times events are recorded at) then
/// reads the same in every run, whatever the day: tests set it, and so
/// can anyone who wants reproducible output.
pub const CLOCK_ENV: &str = "JP_NOW_MS";

/// What [`CLOCK_ENV`] sets the clock to: `Ok(None)` when it is not set.
///
/// # Errors
///
/// A sentence naming the variable when it is set but is not a whole
/// number of milliseconds.
pub fn clock_override() -> Result<Option<u64>, String> {
    match std::env::var_os(CLOCK_ENV) {
        None => Ok(None),
        Some(value) => value
            .to_str()
            .and_then(|text| text.parse::<u64>().ok())
            .map(Some)
            .ok_or_else(|| {
                format!(
                    "{CLOCK_ENV}={value:?} is not a time: give milliseconds since 1970-01-01 UTC, \
                     or unset it to use the system clock"
                )
            }),
    }
}

/// Milliseconds since the Unix epoch (0 if the clock is before it), or
/// the time [`CLOCK_ENV`] sets. jp checks that variable when it starts,
/// so a value it cannot read never gets here; if one did, the system
/// clock would be used.
#[must_use]
pub fn now_ms() -> u64 {
    if let Ok(Some(ms)) = clock_override() {
        return ms;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `at_ms` as `YYYY-MM-DD HH:MM` in UTC.
#[must_use]
pub fn format_utc(at_ms: u64) -> String {
    let secs = at_ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's well-known algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
#[path = "conversation_tests.rs"]
mod tests;
