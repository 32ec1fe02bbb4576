//! The answers to the questions the [`Asker`](super::Asker) puts about a
//! call, one enum per question: each answer's key, its help at `?` and the
//! `match` on it come from the enum, so a key cannot be offered without
//! being handled.

use std::borrow::Cow;

use jp_term::prompt::{Answer, Choice};

/// The answers to "Run this call?", while its arguments stream and once
/// they are complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RunAnswer {
    /// `y`: run it.
    Run,
    /// `a`: run it, and allow calls like it for this session.
    Allow,
    /// `n`: decline it.
    Decline,
    /// `e`: edit its arguments first.
    Edit,
    /// `v`: page its arguments, and ask again.
    View,
}

impl Answer for RunAnswer {
    const ALL: &'static [Self] = &[
        Self::Run,
        Self::Allow,
        Self::Decline,
        Self::Edit,
        Self::View,
    ];

    fn key(self) -> char {
        match self {
            Self::Run => 'y',
            Self::Allow => 'a',
            Self::Decline => 'n',
            Self::Edit => 'e',
            Self::View => 'v',
        }
    }

    /// What `?` says of it once the call is complete (`a` names its scope
    /// there: [`run_choices`]).
    fn help(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Self::Run => "run the call",
            Self::Allow => "allow calls like this one for this session",
            Self::Decline => "decline it (the model is told)",
            Self::Edit => "edit the arguments in $VISUAL or $EDITOR first",
            Self::View => "view the arguments in full, in $PAGER",
        })
    }
}

impl RunAnswer {
    /// What `?` says of it while the call streams.
    fn early_help(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Self::Run => "run the call once its arguments are complete",
            // What calls like it are is not known yet, so it allows only
            // the identical call; once the prompt shows the whole call,
            // `a` names the scope it allows
            // ([`Asker::settled_question`](super::Asker::settled_question)).
            Self::Allow => {
                "allow only this exact call for this session, once its arguments are complete: run it, and later calls in this conversation with exactly its arguments that the same policy rule asks about (its arguments are still arriving; answer once the prompt shows the whole call to allow calls like it) (`jp conversation forget-approvals` undoes it)"
            }
            Self::Decline => "decline it now (the rest of it is not streamed)",
            Self::Edit => "edit the arguments in $VISUAL or $EDITOR once they are complete",
            Self::View => "view the arguments so far in full, in $PAGER",
        })
    }
}

/// The choices of "Run this call?" once it is complete, with `allow` as
/// what `a` says (the scope it would allow), or without `a` for a call
/// asked about again at its start (`allow` `None`): no rule asked then to
/// allow.
pub(super) fn run_choices(allow: Option<String>) -> Vec<Choice> {
    with_allow(RunAnswer::choices(RunAnswer::ALL), allow)
}

/// The choices of "Run this call?" while it streams; once it is complete
/// (the prompt still open), `allow` is what `a` says.
pub(super) fn early_choices(allow: Option<String>) -> Vec<Choice> {
    let choices = RunAnswer::ALL
        .iter()
        .map(|answer| Choice {
            key: answer.key(),
            help: answer.early_help(),
        })
        .collect();
    match allow {
        Some(allow) => with_allow(choices, Some(allow)),
        None => choices,
    }
}

/// `choices` with what `y` says followed by `reach`, where the call would
/// run ([`Judge::reach`](super::Judge::reach)).
pub(super) fn with_reach(choices: Vec<Choice>, reach: &str) -> Vec<Choice> {
    let y = RunAnswer::Run.key();
    choices
        .into_iter()
        .map(|choice| {
            if choice.key == y {
                Choice {
                    help: Cow::Owned(format!("{}, {reach}", choice.help)),
                    ..choice
                }
            } else {
                choice
            }
        })
        .collect()
}

/// `choices` with `allow` as what `a` says, or without `a`.
pub(super) fn with_allow(choices: Vec<Choice>, allow: Option<String>) -> Vec<Choice> {
    let a = RunAnswer::Allow.key();
    choices
        .into_iter()
        .filter_map(|choice| match (choice.key == a, &allow) {
            (true, None) => None,
            (true, Some(help)) => Some(Choice {
                help: Cow::Owned(help.clone()),
                ..choice
            }),
            (false, _) => Some(choice),
        })
        .collect()
}

/// The answers after an edit that cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RetryAnswer {
    /// `e`: edit again.
    Edit,
    /// `n`: cancel; the call does not run.
    Cancel,
}

impl Answer for RetryAnswer {
    const ALL: &'static [Self] = &[Self::Edit, Self::Cancel];

    fn key(self) -> char {
        match self {
            Self::Edit => 'e',
            Self::Cancel => 'n',
        }
    }

    fn help(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Self::Edit => "edit again",
            Self::Cancel => "cancel: the call does not run",
        })
    }
}
