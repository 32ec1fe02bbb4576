//! A response's config changes (RFD 078), the end of a [`Cycle`]: what its
//! calls record is held from the first call that changed the config on,
//! and committed with the changes in one write at the end of the response,
//! or told that the change was not applied (the turn was interrupted, or
//! the changes do not load together).

use jp_conversation::{ConversationEvent, EventKind, ResponseStatus, ToolCallResponse};

use super::run::{Cycle, INTERRUPTED_CHANGE};
use jp_llm::tool::ToolExecutor;
use jp_term::printer::Style;

impl<E: ToolExecutor> Cycle<'_, E> {
    /// Records what the cycle held for its config changes (each event
    /// with whether it is the result of a call that changed the config),
    /// and commits the changes with it, unless the turn was `interrupted`
    /// or the config would not load with all of them: then none applies,
    /// and each changing call's result says its change was not applied
    /// instead of what the tool said of it. Whether the changes were
    /// committed (the config must be resolved again).
    pub fn settle_changes(
        &mut self,
        interrupted: bool,
    ) -> Result<bool, jp_conversation::StoreError> {
        let held = std::mem::take(&mut self.held);
        let folded = self.changes.fold();
        let dropped = if interrupted {
            Some((ResponseStatus::Interrupted, INTERRUPTED_CHANGE.to_owned()))
        } else {
            // Each change was checked alone against the config as the
            // cycle began; together they must load as well.
            folded.as_ref().and_then(|f| self.unloadable(f)).map(|detail| {
                self.session.printer.chrome_line(
                    Style::Bad,
                    &format!(
                        "⚠ the config changes of this response were not applied: together they leave a config that does not load: {detail}"
                    ),
                );
                (
                    ResponseStatus::Error,
                    format!(
                        "The tool finished, but its config change was not applied: together with the other config changes of this response it leaves a config that does not load ({detail}). The result was not kept."
                    ),
                )
            })
        };
        let events = held
            .into_iter()
            .map(|(event, changed)| match (event, &dropped) {
                (EventKind::ToolCallResponse(response), Some((status, content))) if changed => {
                    if interrupted {
                        self.session.printer.chrome_line(
                            Style::Warn,
                            &format!(
                                "  the config change of call {} was not applied: the turn was interrupted",
                                response.id
                            ),
                        );
                    }
                    EventKind::ToolCallResponse(ToolCallResponse {
                        status: *status,
                        content: content.clone(),
                        ..response
                    })
                }
                (event, _) => event,
            })
            .collect();
        match folded {
            Some(folded) if dropped.is_none() => {
                self.commit(events, folded)?;
                Ok(true)
            }
            _ => {
                self.commit_events(events)?;
                Ok(false)
            }
        }
    }

    /// Why the config would not load with all of one cycle's changes
    /// (`folded`), each of which loads on its own; `None` when it loads.
    fn unloadable(&self, folded: &jp_config::delta::Folded) -> Option<String> {
        let unsets = folded
            .unsets
            .iter()
            .map(|text| jp_config::delta::UnsetPath::parse(text))
            .collect::<Result<Vec<_>, _>>();
        let unsets = match unsets {
            Ok(unsets) => unsets,
            Err(error) => return Some(error.to_string()),
        };
        let together = jp_config::delta::Proposal {
            sets: jp_config::delta::leaves(&serde_json::Value::Object(folded.delta.clone())),
            unsets,
        };
        together
            .check_loads(&self.session.config)
            .err()
            .map(|refusal| {
                // Said of one change; here it is all of them.
                refusal
                    .detail
                    .strip_prefix("with this change the config would not load: ")
                    .map_or_else(|| refusal.detail.clone(), str::to_owned)
            })
    }

    /// Records `kind` now, or holds it when the cycle holds what its calls
    /// record until its config change is committed: from the first
    /// response whose call `changed` the config on.
    pub fn keep(
        &mut self,
        kind: EventKind,
        changed: bool,
    ) -> Result<(), jp_conversation::StoreError> {
        if self.held.is_empty() && !changed {
            self.session.record(kind)
        } else {
            self.held.push((kind, changed));
            Ok(())
        }
    }

    /// Records `events` held for a config change in one commit.
    fn commit_events(&mut self, events: Vec<EventKind>) -> Result<(), jp_conversation::StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        self.session
            .append(events.into_iter().map(ConversationEvent::now))
    }

    /// Records what was held for one cycle's config changes (`events`)
    /// and the changes, as one event with every path it touches explicitly
    /// unclaimed, in one commit (a killed jp leaves all or none), and says
    /// so.
    fn commit(
        &mut self,
        events: Vec<EventKind>,
        folded: jp_config::delta::Folded,
    ) -> Result<(), jp_conversation::StoreError> {
        self.session.printer.chrome_line(
            Style::Dim,
            &format!(
                "config changed by {}: {}",
                folded.tools.join(", "),
                folded.touched.join(", ")
            ),
        );
        let claims = folded
            .touched
            .iter()
            .map(|path| (path.clone(), Vec::new()))
            .collect();
        let change = EventKind::ConfigDelta(jp_conversation::ConfigDelta {
            delta: folded.delta,
            unsets: folded.unsets,
            claims,
            tools: folded.tools,
            flags: Vec::new(),
        });
        let events = events
            .into_iter()
            .chain([change])
            .map(ConversationEvent::now)
            .collect::<Vec<_>>();
        self.session.append(events)
    }
}
