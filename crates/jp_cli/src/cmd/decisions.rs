//! `jp conversation decisions`: how each tool call of a conversation was
//! decided: the rule (key, file, line), the mode, how much of its
//! arguments had arrived when it was decided, who settled it and how,
//! what became of it, and whether jp stopped the stream at it. Read from
//! the conversation's `call_decision` records, joined with each call's
//! response and the `stream_stopped` records.

use jp_conversation::{CallDecision, ConversationEvent, EventKind, ResponseStatus};
use serde_json::{Value, json};

use crate::conversation::{human_bytes, stopped_note};

/// One call as `jp conversation decisions` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The turn it was made in, counted from 1.
    pub turn: usize,
    /// How it was decided.
    pub decision: CallDecision,
    /// What became of it (its response's status).
    pub outcome: Option<ResponseStatus>,
    /// Where jp stopped the stream at it: the argument bytes that had
    /// arrived, and whether the call had arrived whole.
    pub cut: Option<(usize, bool)>,
}

impl Row {
    /// Every decision recorded in `events`, in order.
    #[must_use]
    pub fn all(events: &[ConversationEvent]) -> Vec<Self> {
        let mut rows = Vec::new();
        let mut turn = 0;
        for (index, event) in events.iter().enumerate() {
            match &event.kind {
                EventKind::TurnStart => turn += 1,
                EventKind::CallDecision(decision) => {
                    let outcome = events[index + 1..].iter().find_map(|e| match &e.kind {
                        EventKind::ToolCallResponse(r) if r.id == decision.call_id => {
                            Some(r.status)
                        }
                        _ => None,
                    });
                    let cut = events[..index].iter().rev().find_map(|e| match &e.kind {
                        EventKind::StreamStopped {
                            call_id,
                            bytes,
                            whole,
                            ..
                        } if *call_id == decision.call_id => Some((*bytes, *whole)),
                        _ => None,
                    });
                    rows.push(Self {
                        turn,
                        decision: decision.clone(),
                        outcome,
                        cut,
                    });
                }
                _ => {}
            }
        }
        rows
    }

    /// The row for people: a heading line and one line per fact.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        let d = &self.decision;
        let outcome = self.outcome.map_or("no response", ResponseStatus::as_str);
        let mut lines = vec![
            format!(
                "call {} {} · turn {} · {outcome}",
                d.call_id, d.tool, self.turn
            ),
            format!("  rule     {}", self.rule()),
        ];
        // Cut where it was decided: the rest never arrived.
        let cut_here = self.cut.is_some_and(|(_, whole)| !whole) && d.at_byte == Some(d.bytes);
        let decided = match d.at_byte {
            Some(0) if cut_here => {
                "before any of its arguments, where jp stopped reading".to_owned()
            }
            Some(at) if cut_here => format!("after {}, where jp stopped reading", human_bytes(at)),
            Some(0) if d.bytes == 0 => "before any of its arguments (it has none)".to_owned(),
            Some(0) => format!("before any of its {} of arguments", human_bytes(d.bytes)),
            Some(at) => format!(
                "after {} of {} of its arguments",
                human_bytes(at),
                human_bytes(d.bytes)
            ),
            None => format!(
                "once its {} of arguments were complete",
                human_bytes(d.bytes)
            ),
        };
        lines.push(format!("  decided  {decided}"));
        let by = match &d.how {
            Some(how) => format!("{} ({how})", d.by.as_str()),
            None => d.by.as_str().to_owned(),
        };
        lines.push(format!("  by       {by}"));
        if let Some((bytes, whole)) = self.cut {
            lines.push(format!(
                "  stream   {}",
                stopped_note(&d.tool, bytes, whole)
            ));
        }
        lines
    }

    /// The rule that decided, for people.
    fn rule(&self) -> String {
        let d = &self.decision;
        let Some(mode) = &d.mode else {
            return "none: jp refused the call before any policy".to_owned();
        };
        let Some(rule) = &d.rule else {
            return format!("{mode}: no rule matched, the implicit ask");
        };
        let key = rule.key.as_deref().unwrap_or("built-in policy.run");
        let place = match (&rule.file, rule.line) {
            (Some(file), Some(line)) => format!(" ({file}:{line})"),
            (Some(file), None) => format!(" ({file})"),
            (None, _) => String::new(),
        };
        format!("{mode}: {key}[{}]{place}", rule.index)
    }

    /// The row for scripts: the record, with the outcome and the cut.
    #[must_use]
    pub fn json(&self) -> Value {
        let mut value = serde_json::to_value(&self.decision).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.insert("turn".into(), json!(self.turn));
            map.insert(
                "outcome".into(),
                json!(self.outcome.map(ResponseStatus::as_str)),
            );
            map.insert(
                "stream_cut".into(),
                self.cut.map_or(
                    Value::Null,
                    |(bytes, whole)| json!({"bytes": bytes, "whole": whole}),
                ),
            );
        }
        value
    }
}

#[cfg(test)]
#[path = "decisions_tests.rs"]
mod tests;
