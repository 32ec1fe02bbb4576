//! What of a conversation is in force: which turns are live (not taken
//! back by a [`Rewind`](crate::recovery::Rewind)), and what is sent to the
//! model (the live turns after the [`Compaction`] in force, with its
//! summary). The log itself only grows; every reader that derives
//! behaviour from it (the request, the config changes, approvals) reads
//! it through here.

use std::collections::BTreeSet;

use crate::conversation::{ConversationEvent, EventKind};
use crate::recovery::Compaction;

/// The place in the log of every turn: the index of its `turn_start`
/// event, in order. Turn `n` (as `jp conversation show` numbers them,
/// from 1) starts at `turn_starts(events)[n - 1]`.
#[must_use]
pub fn turn_starts(events: &[ConversationEvent]) -> Vec<usize> {
    events
        .iter()
        .enumerate()
        .filter(|(_, event)| matches!(event.kind, EventKind::TurnStart))
        .map(|(index, _)| index)
        .collect()
}

/// Which recovery events (`rewind`, `compaction`) count: with `Some`,
/// those marked `true` (jp passes which events this user's jp sealed: a
/// line anyone else wrote into the log, a sandboxed command included,
/// takes no turn back and replaces none); with `None`, all of them (a log
/// known to be the user's own, and tests).
pub type Honoured<'a> = Option<&'a [bool]>;

fn honoured(by: Honoured<'_>, index: usize) -> bool {
    by.is_none_or(|ours| ours.get(index).copied().unwrap_or(false))
}

/// The turns taken back by a complete rewind, by their place in the log:
/// a rewind takes back only turns that began before it (one naming a
/// place where no turn starts, or a later one, names nothing).
#[must_use]
pub fn rewound(events: &[ConversationEvent], by: Honoured<'_>) -> BTreeSet<usize> {
    rewound_after(events, 0, by)
}

/// The turns taken back by complete rewinds recorded at `from` or later.
fn rewound_after(events: &[ConversationEvent], from: usize, by: Honoured<'_>) -> BTreeSet<usize> {
    events
        .iter()
        .enumerate()
        .skip(from)
        .filter(|(index, _)| honoured(by, *index))
        .filter_map(|(index, event)| match &event.kind {
            EventKind::Rewind(rewind) if rewind.complete => {
                Some(rewind.turns.iter().map(move |turn| (index, *turn)))
            }
            _ => None,
        })
        .flatten()
        .filter(|&(index, turn)| {
            turn < index
                && events
                    .get(turn)
                    .is_some_and(|event| matches!(event.kind, EventKind::TurnStart))
        })
        .map(|(_, turn)| turn)
        .collect()
}

/// For each event, whether it is live: not in a turn taken back. A turn
/// runs from its `turn_start` to the next one; events before the first
/// turn are live.
#[must_use]
pub fn live(events: &[ConversationEvent], by: Honoured<'_>) -> Vec<bool> {
    let rewound = rewound(events, by);
    let mut in_rewound = false;
    events
        .iter()
        .enumerate()
        .map(|(index, event)| {
            if matches!(event.kind, EventKind::TurnStart) {
                in_rewound = rewound.contains(&index);
            }
            !in_rewound
        })
        .collect()
}

/// The compaction in force, with its place in the log: the latest whose
/// `upto` is a turn before it, and none of whose summarised turns was
/// taken back after it (a summary of a turn since rewound is void; the one
/// before it, if any, applies again).
#[must_use]
pub fn compaction<'a>(
    events: &'a [ConversationEvent],
    by: Honoured<'_>,
) -> Option<(usize, &'a Compaction)> {
    events
        .iter()
        .enumerate()
        .rev()
        .filter(|(index, _)| honoured(by, *index))
        .filter_map(|(index, event)| match &event.kind {
            EventKind::Compaction(compaction) => Some((index, compaction)),
            _ => None,
        })
        .find(|(index, compaction)| {
            let starts_a_turn = compaction.upto < *index
                && events
                    .get(compaction.upto)
                    .is_some_and(|event| matches!(event.kind, EventKind::TurnStart));
            starts_a_turn
                && rewound_after(events, *index, by)
                    .range(..compaction.upto)
                    .next()
                    .is_none()
        })
}

/// What is sent to the model of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent<'a> {
    /// The summary sent in place of the turns before it, if any.
    pub compaction: Option<&'a Compaction>,
    /// The events sent whole: the live ones from the compaction's `upto`
    /// (from the start without one).
    pub events: Vec<&'a ConversationEvent>,
}

/// What is sent to the model of `events`.
#[must_use]
pub fn sent<'a>(events: &'a [ConversationEvent], by: Honoured<'_>) -> Sent<'a> {
    let compaction = compaction(events, by).map(|(_, compaction)| compaction);
    let from = compaction.map_or(0, |compaction| compaction.upto);
    let live = live(events, by);
    Sent {
        compaction,
        events: events
            .iter()
            .zip(live)
            .skip(from)
            .filter(|(_, live)| *live)
            .map(|(event, _)| event)
            .collect(),
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
