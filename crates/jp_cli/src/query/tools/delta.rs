//! A tool's proposed config change (RFD 078), between its run and its
//! result: checked, authorized against its `access.config` grants, checked
//! to leave a config that loads, put to the user when a deciding rule says
//! `apply = "ask"`, and either approved (for the cycle's commit buffer) or
//! rejected with a reason the tool is run again with.

use jp_config::AppConfig;
use jp_config::access::{Apply, Grants};
use jp_config::delta::{Proposal, Refusal};
use jp_tool::{DeltaRejection, RejectionReason};
use serde_json::Value;

use super::Asker;
use jp_term::printer::Style;
use jp_term::prompt::{PromptError, Prompts};

/// How many times a call's config change may be rejected and the tool run
/// again; the next rejection ends the call with an error.
pub const MAX_DELTA_REJECTIONS: usize = 3;

/// What became of a proposed change.
pub enum Settled {
    /// Approved (or nothing to apply): into the cycle's buffer.
    Approved(Proposal),
    /// Rejected: the tool runs again with this (or the call ends).
    Rejected(DeltaRejection),
    /// The user interrupted the turn at the prompt.
    Interrupted,
}

/// The review of the config changes a call's runs propose, against the
/// config as of the cycle's start.
pub struct ChangeReview<'r> {
    /// Who shows a change and asks about it.
    pub asker: &'r Asker<'r>,
    /// The config the change is checked against.
    pub config: &'r AppConfig,
    /// The same config as tools see it (the model alias resolved): what
    /// a change is shown against.
    pub readable: &'r Value,
}

impl ChangeReview<'_> {
    /// Settles the change `tool` proposed with `config` and `unset`.
    pub async fn settle(
        &self,
        tool: &str,
        grants: &Grants,
        config: Option<&Value>,
        unset: &[String],
        prompts: &Prompts,
    ) -> Settled {
        let schema = match jp_config::schema::config_schema() {
            Ok(schema) => schema,
            Err(message) => {
                return Settled::Rejected(rejection(
                    RejectionReason::InvalidConfig,
                    Vec::new(),
                    format!("jp cannot check config changes: {message}"),
                ));
            }
        };
        let proposal = match Proposal::check(config, unset, self.config, schema) {
            Ok(proposal) => proposal,
            Err(refusal) => return Settled::Rejected(self.invalid(tool, refusal)),
        };
        if proposal.is_empty() {
            return Settled::Approved(proposal);
        }
        let apply = match proposal.authorize(grants) {
            Ok(apply) => apply,
            Err(refusal) => {
                self.notice(&format!(
                    "⚠ tool {tool} proposed a config change it has no grant for ({}); not applied, the tool runs again",
                    refusal.fields.join(", ")
                ));
                return Settled::Rejected(rejection(
                    RejectionReason::UnauthorizedPaths,
                    refusal.fields,
                    refusal.detail,
                ));
            }
        };
        // A change the config would not load with is refused before
        // anyone is asked: committed, it would stop the conversation from
        // loading at all.
        if let Err(refusal) = proposal.check_loads(self.config) {
            return Settled::Rejected(self.invalid(tool, refusal));
        }
        let changes = proposal.changes(self.readable);
        if apply == Apply::Unattended {
            self.asker.show_changes(
                Style::Dim,
                &format!("⟳ config change by tool {tool}, applied when this step ends:"),
                &changes,
            );
            return Settled::Approved(proposal);
        }
        let fields = || changes.iter().map(|c| c.path.clone()).collect::<Vec<_>>();
        if !prompts.available() {
            self.notice(&format!(
                "⚠ tool {tool} proposed a config change that needs your confirmation, and no terminal is available; not applied, the tool runs again (apply = \"unattended\" on the grant applies such changes without asking)"
            ));
            return Settled::Rejected(rejection(
                RejectionReason::ConfirmationUnavailable,
                fields(),
                "the change needs the user's confirmation and jp runs without a terminal".into(),
            ));
        }
        let answer = match prompts.turn().await {
            Ok(prompt) => {
                self.asker.show_changes(
                    Style::Header,
                    &format!("⟳ tool {tool} proposes a config change:"),
                    &changes,
                );
                prompt.confirm("Apply this config change?").await
            }
            Err(error) => Err(error),
        };
        match answer {
            Ok(true) => Settled::Approved(proposal),
            Ok(false) => {
                self.notice("config change rejected; the tool runs again");
                Settled::Rejected(rejection(
                    RejectionReason::UserRejected,
                    fields(),
                    "the user declined the change".into(),
                ))
            }
            Err(PromptError::Interrupted) => Settled::Interrupted,
            Err(error) => Settled::Rejected(rejection(
                RejectionReason::ConfirmationUnavailable,
                fields(),
                format!("the user could not be asked: {error}"),
            )),
        }
    }

    /// Says that `tool`'s change is invalid; the rejection it runs again
    /// with.
    fn invalid(&self, tool: &str, refusal: Refusal) -> DeltaRejection {
        self.notice(&format!(
            "⚠ tool {tool} proposed an invalid config change ({}); not applied, the tool runs again",
            refusal.detail
        ));
        rejection(
            RejectionReason::InvalidConfig,
            refusal.fields,
            refusal.detail,
        )
    }

    fn notice(&self, text: &str) {
        self.asker.say(Style::Warn, text);
    }
}

fn rejection(reason: RejectionReason, fields: Vec<String>, detail: String) -> DeltaRejection {
    DeltaRejection {
        reason,
        fields,
        detail,
    }
}

/// The error the model gets when a call's changes were rejected too often.
#[must_use]
pub fn exhausted(tool: &str, last: &DeltaRejection) -> String {
    format!(
        "Tool `{tool}` proposed a config change jp could not apply {} times, so the call ends here without its result. Last reason: {}: {}",
        MAX_DELTA_REJECTIONS + 1,
        last.reason.as_str(),
        last.detail
    )
}
