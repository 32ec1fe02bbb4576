//! `jp conversation rewind`: taking turns back, and putting back the files
//! their calls changed (issue 38).
//!
//! Which turns: [`target`]. What to do to the files: [`plan`], from the
//! `file_change` records of those turns that this user's jp sealed (a
//! record anyone else wrote never makes jp write a file), checked against
//! the files as they are now. Doing it: [`apply`], through [`jp_fs`]
//! (no link on the way is followed). The command ([`run`]) shows the plan,
//! asks, applies, and records a `rewind` event.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use jp_conversation::{ConversationEvent, EventKind, FileChange, FileState, Rewind, RewindReason};

use crate::query::tools::undo::look;

/// The turns a rewind takes back: their places in the log (the index of
/// each `turn_start`) and their numbers, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Each turn's `turn_start` index.
    pub places: Vec<usize>,
    /// Each turn's number, from 1.
    pub numbers: Vec<usize>,
}

/// The turns to take back: the newest `count` live turns, or (`to`) turn
/// `to` and every live turn after it. A sentence when there are not so
/// many, or `to` is no live turn.
///
/// # Errors
///
/// What the user asked for that the conversation does not have.
pub fn target(
    events: &[ConversationEvent],
    ours: &[bool],
    count: Option<usize>,
    to: Option<usize>,
) -> Result<Target, String> {
    let starts = jp_conversation::view::turn_starts(events);
    let rewound = jp_conversation::view::rewound(events, Some(ours));
    let live: Vec<(usize, usize)> = starts
        .iter()
        .enumerate()
        .filter(|(_, place)| !rewound.contains(place))
        .map(|(i, place)| (i + 1, *place))
        .collect();
    if live.is_empty() {
        return Err("the conversation has no turn to rewind".into());
    }
    let chosen: Vec<(usize, usize)> = match (count, to) {
        (_, Some(to)) => {
            if !live.iter().any(|(number, _)| *number == to) {
                return Err(if (1..=starts.len()).contains(&to) {
                    format!("turn {to} was rewound already")
                } else {
                    format!(
                        "there is no turn {to} (the conversation has {})",
                        starts.len()
                    )
                });
            }
            live.into_iter()
                .filter(|(number, _)| *number >= to)
                .collect()
        }
        (count, None) => {
            let count = count.unwrap_or(1);
            if count == 0 {
                return Err("give how many turns to rewind, from 1".into());
            }
            if count > live.len() {
                return Err(format!(
                    "cannot rewind {count} turns: the conversation has {} live {}",
                    live.len(),
                    if live.len() == 1 { "turn" } else { "turns" }
                ));
            }
            live[live.len() - count..].to_vec()
        }
    };
    Ok(Target {
        numbers: chosen.iter().map(|(number, _)| *number).collect(),
        places: chosen.iter().map(|(_, place)| *place).collect(),
    })
}

/// What a rewind does to one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write the file back whole, with its mode (`existed`: there is a
    /// file there now, else it is recreated).
    Write {
        /// The content.
        content: Vec<u8>,
        /// Its permission bits.
        mode: u32,
        /// Whether something is there now.
        existed: bool,
    },
    /// Put the link back as it was.
    Link {
        /// What it held.
        target: String,
        /// Whether something is there now (it goes first).
        existed: bool,
    },
    /// Remove the file the turns made.
    Remove,
    /// Make the directory the turns removed again.
    MakeDir {
        /// Its permission bits.
        mode: u32,
    },
    /// Give the directory its mode back.
    DirMode {
        /// Its permission bits.
        mode: u32,
    },
}

/// One path a rewind puts back: how, and what it found there when it
/// planned (checked again right before it acts: what changed meanwhile,
/// while it asked, is not overwritten).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The path, relative to the workspace root.
    pub path: String,
    /// What to do.
    pub action: Action,
    /// What is there now.
    pub now: FileState,
}

/// A path a rewind cannot put back as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The path.
    pub path: String,
    /// Why.
    pub why: String,
}

/// What a rewind would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Each path to put back, and how, in path order.
    pub actions: Vec<Step>,
    /// Directories the turns made, deepest first: removed when empty.
    pub dirs: Vec<String>,
    /// The paths that cannot be put back, and why.
    pub problems: Vec<Problem>,
    /// Paths already as they were before the turns (a rewind that stopped
    /// part-way), left alone.
    pub already: Vec<String>,
    /// How many file changes of these turns this user's jp did not
    /// record here: never acted on.
    pub foreign: usize,
    /// The calls of these turns whose changes jp did not keep: turn
    /// number, tool and why.
    pub not_kept: Vec<(usize, String, String)>,
}

/// Where a rewind reads what it needs: the files, and the content kept.
pub struct Sources<'a> {
    /// The workspace root.
    pub root: &'a Path,
    /// The conversation's kept content (`None`: nowhere to read it).
    pub blobs: Option<&'a crate::blobs::Blobs>,
}

/// What putting back the turns at `target.places` would do, given which
/// events are `ours`.
#[must_use]
pub fn plan(
    events: &[ConversationEvent],
    ours: &[bool],
    target: &Target,
    sources: &Sources<'_>,
) -> Plan {
    let mut out = Plan::default();
    // The changes of each path, oldest first, with their turn numbers.
    let mut by_path: BTreeMap<&str, Vec<(usize, &FileChange)>> = BTreeMap::new();
    let mut turn = None;
    for (index, event) in events.iter().enumerate() {
        if matches!(event.kind, EventKind::TurnStart) {
            turn = target
                .places
                .iter()
                .position(|place| *place == index)
                .map(|i| target.numbers[i]);
        }
        let Some(number) = turn else { continue };
        let is_ours = ours.get(index).copied().unwrap_or(false);
        if let EventKind::ChangesNotKept(not_kept) = &event.kind
            && is_ours
        {
            out.not_kept
                .push((number, not_kept.tool.clone(), not_kept.reason.clone()));
            continue;
        }
        let EventKind::FileChange(change) = &event.kind else {
            continue;
        };
        if is_ours {
            by_path
                .entry(&change.path)
                .or_default()
                .push((number, change));
        } else {
            out.foreign += 1;
        }
    }
    let mut dirs = std::collections::BTreeSet::new();
    for (path, changes) in by_path {
        for (_, change) in &changes {
            dirs.extend(change.made_dirs.iter().cloned());
        }
        match plan_path(path, &changes, sources) {
            // A directory the turns made goes with the others, when empty.
            Ok(Some((Action::Remove, FileState::Dir { .. }))) => {
                dirs.insert(path.to_owned());
            }
            Ok(Some((action, now))) => out.actions.push(Step {
                path: path.to_owned(),
                action,
                now,
            }),
            Ok(None) => out.already.push(path.to_owned()),
            Err(why) => out.problems.push(Problem {
                path: path.to_owned(),
                why,
            }),
        }
    }
    // Deepest first.
    let mut dirs: Vec<String> = dirs.into_iter().collect();
    dirs.sort_by_key(|dir| std::cmp::Reverse(dir.matches('/').count()));
    out.dirs = dirs;
    out
}

/// How to put `path` back as it was before `changes` (oldest first, each
/// with its turn number), and what is there now: `None` when it already
/// is as it was.
fn plan_path(
    path: &str,
    changes: &[(usize, &FileChange)],
    sources: &Sources<'_>,
) -> Result<Option<(Action, FileState)>, String> {
    let (Some((_, first)), Some((_, last))) = (changes.first(), changes.last()) else {
        return Ok(None);
    };
    // Each change must start where the one before it ended.
    for pair in changes.windows(2) {
        let ((earlier, a), (later, b)) = (pair[0], pair[1]);
        if a.after != b.before {
            return Err(format!(
                "it was changed by something other than jp between turn {earlier} and turn {later}"
            ));
        }
    }
    let limit = size_of(&first.before).max(size_of(&last.after));
    let (now, _) = look(sources.root, Path::new(path), limit);
    if now == first.before && !matches!(now, FileState::Unkept { .. }) {
        return Ok(None);
    }
    if let FileState::Unkept { reason, .. } = &last.after {
        return Err(format!(
            "jp cannot tell whether it was changed since: it did not keep it ({reason})"
        ));
    }
    if now != last.after {
        return Err("it was changed since by something other than jp".into());
    }
    let existed = now != FileState::Absent;
    let is_dir = matches!(now, FileState::Dir { .. });
    let action = match &first.before {
        FileState::Absent => Action::Remove,
        FileState::Dir { mode } if is_dir => Action::DirMode { mode: *mode },
        FileState::Dir { mode } if !existed => Action::MakeDir { mode: *mode },
        FileState::Dir { .. } => {
            return Err("a file is where its directory was, which jp does not replace".into());
        }
        _ if is_dir => {
            return Err("a directory is where it was, which jp does not replace".into());
        }
        FileState::Unkept { reason, .. } => return Err(format!("jp did not keep it: {reason}")),
        FileState::Link { target } => Action::Link {
            target: target.clone(),
            existed,
        },
        FileState::File {
            sha256,
            bytes,
            mode,
        } => {
            let content = match sources.blobs {
                Some(blobs) => blobs.get(sha256, *bytes)?,
                None => return Err("jp has no data directory to read its copy from".into()),
            };
            Action::Write {
                content,
                mode: *mode,
                existed,
            }
        }
    };
    Ok(Some((action, now)))
}

/// The most bytes of `state`'s content (what a look at it reads).
fn size_of(state: &FileState) -> u64 {
    match state {
        FileState::File { bytes, .. } | FileState::Unkept { bytes, .. } => *bytes,
        FileState::Absent | FileState::Link { .. } | FileState::Dir { .. } => 0,
    }
}

/// What applying a plan did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// Paths written back or relinked.
    pub restored: Vec<String>,
    /// Files and directories removed.
    pub removed: Vec<String>,
    /// The first failure, which stopped it: the path and why.
    pub failed: Option<(String, String)>,
}

/// Puts the files back as `plan` says, in the workspace at `root`; stops
/// at the first failure. Each path is looked at again right before it is
/// put back: one that changed since the plan (while the user was asked)
/// stops it there.
#[must_use]
pub fn apply(root: &Path, plan: &Plan) -> Applied {
    let mut out = Applied::default();
    // Directories first, outermost first, so that the files in them can
    // be put back.
    let mut steps: Vec<&Step> = plan.actions.iter().collect();
    steps.sort_by_key(|step| match step.action {
        Action::MakeDir { .. } | Action::DirMode { .. } => (0, step.path.matches('/').count()),
        _ => (1, 0),
    });
    for step in steps {
        let rel = PathBuf::from(&step.path);
        if look(root, &rel, size_of(&step.now)).0 != step.now {
            out.failed = Some((
                step.path.clone(),
                "it changed while the rewind was asking, so jp left it as it is".into(),
            ));
            return out;
        }
        let done = match &step.action {
            Action::MakeDir { mode } => {
                jp_fs::create_dir(root, &rel).and_then(|()| jp_fs::set_dir_mode(root, &rel, *mode))
            }
            Action::DirMode { mode } => jp_fs::set_dir_mode(root, &rel, *mode),
            Action::Write { content, mode, .. } => {
                jp_fs::write_atomic_mode(root, &rel, content, *mode)
            }
            Action::Link { target, existed } => (if *existed {
                jp_fs::remove_file(root, &rel)
            } else {
                Ok(())
            })
            .and_then(|()| jp_fs::symlink(root, &rel, Path::new(target))),
            Action::Remove => jp_fs::remove_file(root, &rel),
        };
        match done {
            Ok(()) if matches!(step.action, Action::Remove) => out.removed.push(step.path.clone()),
            Ok(()) => out.restored.push(step.path.clone()),
            Err(error) => {
                out.failed = Some((step.path.clone(), jp_fs::io_reason(&error)));
                return out;
            }
        }
    }
    for dir in &plan.dirs {
        // Only when empty: anything else put there since stays.
        if jp_fs::remove_dir(root, Path::new(dir)).is_ok() {
            out.removed.push(format!("{dir}/"));
        }
    }
    out
}

/// How the plan shows an action: `restore src/a.rs`.
#[must_use]
pub fn action_line(path: &str, action: &Action) -> String {
    match action {
        Action::Write { existed: true, .. } => format!("restore {path}"),
        Action::Write { existed: false, .. } => format!("recreate {path}"),
        Action::Link { target, .. } => format!("restore link {path} -> {target}"),
        Action::Remove => format!("remove {path}"),
        Action::MakeDir { .. } => format!("recreate directory {path}/"),
        Action::DirMode { mode } => format!("give {path}/ its mode {mode:o} back"),
    }
}

/// What `jp conversation rewind` was asked.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked {
    /// How many of the newest live turns.
    pub count: Option<usize>,
    /// This turn and every live turn after it.
    pub to: Option<usize>,
    /// Leave the files that cannot be put back as they are.
    pub force: bool,
    /// Do not ask.
    pub yes: bool,
}

/// `jp conversation rewind` on conversation `id` of `store`, in the
/// workspace at `root`: shows what it will do, asks (on a terminal;
/// without one it needs `--yes`), puts the files back and records the
/// rewind.
///
/// # Errors
///
/// When the conversation cannot be opened (in use, not found) or the
/// rewind cannot be recorded.
pub fn run(
    store: &jp_conversation::Store,
    ledger: &crate::ledger::Ledger,
    root: &Path,
    id: &str,
    asked: Asked,
) -> Result<std::process::ExitCode, jp_conversation::StoreError> {
    use jp_term::{errln, outln};
    let (mut conversation, mut lock) = store.open(id)?;
    let ours = ledger.ours(&conversation);
    let target = match target(&conversation.events, &ours, asked.count, asked.to) {
        Ok(target) => target,
        Err(message) => {
            errln!("error: {message}");
            return Ok(crate::exit::USAGE.into());
        }
    };
    let turns = turn_list(&target.numbers);
    let blobs = crate::blobs::Blobs::of(root, id);
    let sources = Sources {
        root,
        blobs: blobs.as_ref(),
    };
    let mut plan = plan(&conversation.events, &ours, &target, &sources);
    if !plan.problems.is_empty() && !asked.force {
        refuse(&plan, &turns, id);
        return Ok(std::process::ExitCode::FAILURE);
    }
    show(&plan, &turns, id);
    if !asked.yes {
        use crate::ctx::YesNo;
        match crate::ctx::ask_yes_no("rewind", "Rewind?") {
            YesNo::Yes => {}
            YesNo::No => {
                errln!("not rewound");
                return Ok(std::process::ExitCode::FAILURE);
            }
            YesNo::Interrupted => {
                errln!("interrupted; not rewound");
                return Ok(crate::exit::INTERRUPTED.into());
            }
            YesNo::NoTerminal => {
                errln!("error: no terminal to ask on; give --yes to rewind without asking");
                return Ok(crate::exit::USAGE.into());
            }
        }
    }
    let applied = apply(root, &plan);
    let left = std::mem::take(&mut plan.problems)
        .into_iter()
        .map(|problem| problem.path)
        .collect();
    let rewind = Rewind {
        turns: target.places.clone(),
        reason: RewindReason::User,
        restored: applied.restored,
        removed: applied.removed,
        left,
        complete: applied.failed.is_none(),
    };
    let line = rewind_line(
        &rewind,
        &jp_conversation::view::turn_starts(&conversation.events),
    );
    ledger.append(
        &mut lock,
        &mut conversation,
        [ConversationEvent::now(EventKind::Rewind(rewind))],
    )?;
    outln!("{}", jp_term::printer::sanitize(&line));
    if let Some((path, why)) = applied.failed {
        errln!(
            "{}",
            jp_term::printer::sanitize(&format!(
                "error: the rewind stopped at {path}: {why}; what it put back is recorded, and the turns stay live: run it again to finish"
            ))
        );
        return Ok(std::process::ExitCode::FAILURE);
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// Says why the rewind of `turns` cannot go on as planned: each path it
/// cannot put back, and why.
fn refuse(plan: &Plan, turns: &str, id: &str) {
    use jp_term::errln;
    let one = plan.problems.len() == 1;
    errln!(
        "error: cannot rewind {turns} of conversation {id}: jp cannot put {} back as {} was:",
        if one { "this file" } else { "these files" },
        if one { "it" } else { "each" }
    );
    for problem in &plan.problems {
        errln!(
            "{}",
            jp_term::printer::sanitize(&format!("  {}: {}", problem.path, problem.why))
        );
    }
    errln!(
        "give --force to leave {} as {} now and rewind the rest",
        if one { "it" } else { "them" },
        if one { "it is" } else { "they are" }
    );
}

/// Shows what the rewind of `turns` will do.
fn show(plan: &Plan, turns: &str, id: &str) {
    let say = |line: String| jp_term::outln!("{}", jp_term::printer::sanitize(&line));
    say(format!("rewind {turns} of conversation {id}:"));
    for step in &plan.actions {
        say(format!("  {}", action_line(&step.path, &step.action)));
    }
    for dir in &plan.dirs {
        say(format!("  remove {dir}/ if it is empty"));
    }
    for problem in &plan.problems {
        say(format!(
            "  leave {} as it is ({})",
            problem.path, problem.why
        ));
    }
    if !plan.already.is_empty() {
        say(format!(
            "  ({} already as {} was)",
            plan.already.join(", "),
            if plan.already.len() == 1 {
                "it"
            } else {
                "each"
            }
        ));
    }
    if plan.actions.is_empty() && plan.problems.is_empty() && plan.dirs.is_empty() {
        say("  (no file to put back)".into());
    }
    for (turn, tool, why) in &plan.not_kept {
        say(format!(
            "  note: {tool} (turn {turn}) may have changed files jp did not keep ({why}); they stay as they are"
        ));
    }
    if plan.foreign > 0 {
        let one = plan.foreign == 1;
        say(format!(
            "  note: {} file {} in these turns {} not recorded by your jp here; jp leaves {} alone",
            plan.foreign,
            if one { "change" } else { "changes" },
            if one { "was" } else { "were" },
            if one { "it" } else { "them" },
        ));
    }
}

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
        FileState::Absent | FileState::Link { .. } | FileState::Dir { .. } => None,
    };
    match (&change.before, &change.after) {
        (FileState::Absent, FileState::Dir { .. }) => "created directory".to_owned(),
        (FileState::Dir { .. }, FileState::Absent) => "deleted directory".to_owned(),
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
        done.push(format!(
            "left {} as {} (--force)",
            rewind.left.len(),
            if rewind.left.len() == 1 {
                "it is"
            } else {
                "they are"
            }
        ));
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
