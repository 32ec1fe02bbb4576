//! `jp conversation rewind`: taking turns back, and putting back the files
//! their calls changed (issue 38).

use std::ops::RangeInclusive;

use jp_conversation::{FileChange, FileState, Rewind, RewindReason};

/// Turn numbers as one says them: `turn 3`, `turns 3–5`, `turns 2, 5`.
#[must_use]
pub fn turn_list(numbers: &[usize]) -> String {
    let mut sorted = numbers.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    match sorted.as_slice() {
        [] => "no turn".to_owned(),
        [one] => format!("turn {one}"),
        [first, .., last] if last - first + 1 == sorted.len() => format!("turns {first}–{last}"),
        all => format!(
            "turns {}",
            all.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A range of turn numbers, as [`turn_list`] says it.
#[must_use]
pub fn turn_range(range: RangeInclusive<usize>) -> String {
    turn_list(&range.collect::<Vec<_>>())
}

/// The turn numbers (from 1) of the turns starting at `places` in a log
/// whose turns start at `starts`.
#[must_use]
pub fn numbers(places: &[usize], starts: &[usize]) -> Vec<usize> {
    places
        .iter()
        .filter_map(|place| starts.binary_search(place).ok().map(|i| i + 1))
        .collect()
}

/// What a call did to a file, in a word or two: `created`, `modified`,
/// `deleted`, `mode 644 → 755`.
#[must_use]
pub fn change_word(change: &FileChange) -> String {
    let mode = |state: &FileState| match state {
        FileState::File { mode, .. } | FileState::Unkept { mode, .. } => Some(*mode),
        FileState::Absent | FileState::Link { .. } => None,
    };
    match (&change.before, &change.after) {
        (FileState::Absent, FileState::Link { .. }) => "created link".to_owned(),
        (FileState::Absent, _) => "created".to_owned(),
        (FileState::Link { .. }, FileState::Absent) => "deleted link".to_owned(),
        (_, FileState::Absent) => "deleted".to_owned(),
        (
            FileState::File {
                sha256: before,
                mode: old,
                ..
            },
            FileState::File {
                sha256: after,
                mode: new,
                ..
            },
        ) if before == after && old != new => format!("mode {old:o} → {new:o}"),
        (before, after) => match (mode(before), mode(after)) {
            (Some(old), Some(new)) if old != new => format!("modified (mode {old:o} → {new:o})"),
            _ => "modified".to_owned(),
        },
    }
}

/// How `jp conversation show` lists a rewind, with the turn numbers of a
/// log whose turns start at `starts`.
#[must_use]
pub fn rewind_line(rewind: &Rewind, starts: &[usize]) -> String {
    let turns = turn_list(&numbers(&rewind.turns, starts));
    if rewind.reason == RewindReason::TooLarge {
        return format!(
            "{turns} not sent: larger than the model's context window (its message is kept here)"
        );
    }
    let mut done = Vec::new();
    let count = |n: usize| {
        if n == 1 {
            "1 file".to_owned()
        } else {
            format!("{n} files")
        }
    };
    if !rewind.restored.is_empty() {
        done.push(format!("restored {}", count(rewind.restored.len())));
    }
    if !rewind.removed.is_empty() {
        done.push(format!("removed {}", rewind.removed.len()));
    }
    if !rewind.left.is_empty() {
        done.push(format!("left {} as they were (--force)", rewind.left.len()));
    }
    let done = if done.is_empty() {
        String::new()
    } else {
        format!(": {}", done.join(", "))
    };
    if rewind.complete {
        format!("rewound {turns}{done}")
    } else {
        format!("rewind of {turns} stopped part-way{done}; the turns are still live")
    }
}

#[cfg(test)]
#[path = "rewind_tests.rs"]
mod tests;
