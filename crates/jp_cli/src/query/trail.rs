//! [`Trail`]: how one call is being decided, kept as it goes by
//! [`Calls`](super::calls::Calls) (while it streams and once complete) and
//! by the [`Cycle`](super::run::Cycle) (at its start), then recorded with
//! its response as a [`CallDecision`]: the rule, the byte it was decided
//! at, who settled it and how.

use jp_conversation::{CallDecision, DecidedBy, ResponseStatus, RuleSource};
use jp_policy::{Decision, Mode};

use super::decision::{Answer, Verdict};

/// How one call is being decided (see the module).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trail {
    /// The `policy.run` decision that stands: its mode and rule (`None`:
    /// the implicit fallback).
    pub policy: Option<(Mode, Option<usize>)>,
    /// The argument bytes that had arrived when it was decided; `None`:
    /// once they were complete.
    pub at: Option<usize>,
    /// Who settled it, once someone did.
    pub by: Option<DecidedBy>,
    /// How, in a word or two.
    pub how: Option<String>,
    /// `by` is the user's answer given while the call streamed (run,
    /// allow, edit): it stands if the call runs as answered, and gives way
    /// to whatever refuses or skips it once complete.
    pub provisional: bool,
    /// The argument bytes that arrived in all.
    pub bytes: usize,
}

/// Who settled a call that did not run, from what it answers the model,
/// when no one was asked: a policy's `skip`, a question no one could
/// answer, a stateful policy, jp's own refusal.
fn unasked(status: ResponseStatus) -> DecidedBy {
    match status {
        ResponseStatus::Skipped => DecidedBy::Policy,
        ResponseStatus::Declined => DecidedBy::NoTerminal,
        ResponseStatus::Denied => DecidedBy::Stateful,
        ResponseStatus::Interrupted => DecidedBy::Interrupted,
        ResponseStatus::Refused
        | ResponseStatus::Success
        | ResponseStatus::Error
        | ResponseStatus::Withheld => DecidedBy::Jp,
    }
}

/// Who ended a call at its question with `response`: the user, who
/// declined it or interrupted the turn.
fn declined(response: &jp_conversation::ToolCallResponse) -> (DecidedBy, Option<&'static str>) {
    if response.status == ResponseStatus::Interrupted {
        (DecidedBy::Interrupted, None)
    } else {
        (DecidedBy::User, Some("decline"))
    }
}

impl Trail {
    /// A policy decided the call after `at` bytes of its arguments (`None`:
    /// once complete). The first decision stands, unless a later one is
    /// stricter (architecture decision 7: the complete arguments can only
    /// make a call stricter).
    pub fn decided(&mut self, decision: &Decision, at: Option<usize>) {
        let stricter = self.policy.is_none_or(|(mode, _)| decision.mode > mode);
        if stricter {
            self.policy = Some((decision.mode, decision.rule));
            self.at = at;
        }
    }

    /// jp refused the call (`how`) after `at` bytes, before or whatever
    /// any policy said.
    pub fn refused(&mut self, at: usize, how: &str) {
        if self.open() {
            self.at = Some(at);
        }
        self.settle(DecidedBy::Jp, Some(how));
    }

    /// Whether who settled it can still be said: no one has, or only the
    /// user's answer while it streamed (`provisional`).
    fn open(&self) -> bool {
        self.by.is_none() || self.provisional
    }

    /// Settled by `by`, `how`; a call already settled keeps who settled it
    /// (but for an answer given while it streamed, see `provisional`).
    pub fn settle(&mut self, by: DecidedBy, how: Option<&str>) {
        if self.open() {
            self.provisional = false;
            self.by = Some(by);
            self.how = how.map(ToOwned::to_owned);
        }
    }

    /// Settled again at the call's start (a stateful policy, a hook, an
    /// interrupt): what was said before no longer decides.
    pub fn overrule(&mut self, by: DecidedBy, how: Option<&str>) {
        self.provisional = false;
        self.by = Some(by);
        self.how = how.map(ToOwned::to_owned);
    }

    /// What happened at the call's start: its policy, checked again with
    /// the files as they were then (`start`, when that changed the
    /// answer), decided anew or asked again (`can_ask`: a user could
    /// answer); a stateful policy denied it; or it was not run.
    pub fn at_start(
        &mut self,
        ran: &super::decision::Ran,
        can_ask: bool,
        start: Option<super::tools::AtStart>,
    ) {
        if let Some(start) = start {
            if let Some(policy) = start.policy {
                self.policy = Some(policy);
                self.at = None;
            }
            if let Some(key) = start.key {
                let how = if key == 'a' {
                    "allow for this session, at its start"
                } else {
                    "run, at its start"
                };
                self.overrule(DecidedBy::User, Some(how));
            }
        }
        if let Some(denial) = &ran.denial {
            self.overrule(DecidedBy::Stateful, Some(&denial.policy));
            return;
        }
        let by = match ran.response.status {
            ResponseStatus::Declined if can_ask => DecidedBy::User,
            status @ (ResponseStatus::Declined
            | ResponseStatus::Skipped
            | ResponseStatus::Refused) => unasked(status),
            _ => return,
        };
        self.overrule(by, Some("at its start"));
    }

    /// The user answered the question put while the call streamed.
    pub fn answered(&mut self, answer: &Answer) {
        let ((by, how), provisional) = match answer {
            Answer::Run { .. } => ((DecidedBy::User, Some("run")), true),
            Answer::Allow { .. } => ((DecidedBy::User, Some("allow for this session")), true),
            Answer::Edit { .. } => ((DecidedBy::User, Some("edit")), true),
            Answer::NotRun(Verdict::NotRun { response, .. }) => (declined(response), false),
            Answer::NotRun(Verdict::Run { .. }) | Answer::Policy(_) => return,
        };
        let open = self.open();
        self.settle(by, how);
        self.provisional = open && provisional;
    }

    /// The question put once the call was complete was answered (or,
    /// while it waited its turn, a session approval answered it).
    pub fn confirmed(&mut self, verdict: &Verdict) {
        let (by, how) = match verdict {
            Verdict::Run { key: None, .. } => (DecidedBy::Session, None),
            Verdict::Run { edited: true, .. } => (DecidedBy::User, Some("edit")),
            Verdict::Run { key: Some('a'), .. } => {
                (DecidedBy::User, Some("allow for this session"))
            }
            Verdict::Run { .. } => (DecidedBy::User, Some("run")),
            Verdict::NotRun { response, .. } => declined(response),
        };
        self.settle(by, how);
    }

    /// The verdict made without asking, once the call was complete (or
    /// ended early): who settled it follows from it, unless the user
    /// already had.
    pub fn unasked(&mut self, verdict: &Verdict) {
        match verdict {
            // As the user answered while it streamed.
            Verdict::Run { approved: true, .. } if self.provisional => self.provisional = false,
            Verdict::Run {
                approved: false, ..
            } => self.settle(DecidedBy::Policy, None),
            // Approved at no question of this call's: a session approval.
            Verdict::Run { .. } => self.settle(DecidedBy::Session, None),
            Verdict::NotRun { response, note } => {
                // What jp refused, in the words the user was told.
                let how = (response.status == ResponseStatus::Refused).then(|| {
                    note.split_once("refused: ")
                        .map_or(note.as_str(), |(_, why)| why)
                });
                self.settle(unasked(response.status), how);
            }
        }
    }

    /// The record of call `id` of `tool`, with `locate` saying where rule
    /// number `i` of the tool's `policy.run` is written.
    pub fn record(
        self,
        id: &str,
        tool: &str,
        locate: &dyn Fn(usize) -> RuleSource,
    ) -> CallDecision {
        let (mode, rule) = match self.policy {
            Some((mode, rule)) => (Some(mode.as_str().to_owned()), rule.map(locate)),
            None => (None, None),
        };
        CallDecision {
            call_id: id.to_owned(),
            tool: tool.to_owned(),
            mode,
            rule,
            at_byte: self.at,
            bytes: self.bytes,
            // Never settled: jp made no decision for it, and it did not run.
            by: self.by.unwrap_or(DecidedBy::Jp),
            how: self.how,
        }
    }
}

/// How many calls among `events` (a turn's) a policy declined without
/// anyone answering: asked with no terminal, skipped (when it was decided,
/// or at its start), denied by a stateful policy or declined by a hook.
#[must_use]
pub fn declined_by_policy(events: &[jp_conversation::ConversationEvent]) -> usize {
    use jp_conversation::EventKind;
    let skipped: std::collections::HashSet<&str> = events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::ToolCallResponse(r) if r.status == ResponseStatus::Skipped => {
                Some(r.id.as_str())
            }
            _ => None,
        })
        .collect();
    events
        .iter()
        .filter(|event| match &event.kind {
            EventKind::CallDecision(d) => match d.by {
                DecidedBy::NoTerminal | DecidedBy::Stateful | DecidedBy::Hook => true,
                DecidedBy::Policy => skipped.contains(d.call_id.as_str()),
                _ => false,
            },
            _ => false,
        })
        .count()
}

/// Where rule number `index` of `tool`'s `policy.run` is written in
/// `loaded`: its key, file and line.
#[must_use]
pub fn rule_source(loaded: &jp_config::load::Loaded, tool: &str, index: usize) -> RuleSource {
    let spec = jp_config::tool::effective::effective_spec(
        &loaded.config,
        tool,
        jp_policy::PolicyField::Run,
    );
    let Some(key) = spec.origin.key() else {
        return RuleSource {
            index,
            key: None,
            file: None,
            line: None,
        };
    };
    // A list of rules: the rule's own entry; one mode: the key.
    let at = match spec.spec {
        jp_policy::PolicySpec::Rules(_) => jp_config::ConfigPath::from_segments(
            key.segments()
                .iter()
                .cloned()
                .chain(std::iter::once(index.to_string())),
        ),
        jp_policy::PolicySpec::Mode(_) => key.clone(),
    };
    let (file, line) = loaded
        .written_at(&at)
        .map_or((None, None), |(file, line)| (Some(file), line));
    RuleSource {
        index,
        key: Some(key.to_string()),
        file,
        line,
    }
}

#[cfg(test)]
#[path = "trail_tests.rs"]
mod tests;
