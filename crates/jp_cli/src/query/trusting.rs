//! Before a query runs in a workspace whose config holds what needs trust
//! ([`crate::trust`]): the question on a terminal, the refusal without one.

use std::borrow::Cow;

use std::process::ExitCode;

use crate::ctx::Ctx;
use crate::error::Error;
use crate::exit;
use jp_config::load::LoadOptions;
use jp_config::trust::{Held, WorkspaceTrust};

use crate::trust::review::Review;
use crate::trust::{self, ENV};
use jp_term::prompt::{Answer, PromptError, Prompter as _, TerminalPrompter};

/// Before a query runs: when the workspace's config holds what needs trust
/// and no record or override covers it, asks on a terminal whether to
/// trust it (recording the answer `y`), and without one refuses to run.
/// `Some` is the exit code of a query that does not run, already said.
pub fn before_query(ctx: &Ctx, interactive: bool) -> Result<Option<ExitCode>, Error> {
    let explicit = trust::Override::from_env(&ctx.env).map_err(Error::TrustOverride)?;
    // A config that does not load is reported when the query loads it.
    let Ok(loaded) = jp_config::load::load(&ctx.load_options()) else {
        return Ok(None);
    };
    let (Some(held), Some(root)) = (loaded.held.filter(|h| !h.applied), loaded.workspace_root)
    else {
        return Ok(None);
    };
    if explicit.is_some() {
        trust::notice(Some(&held), &ctx.env, Some(&root));
        return Ok(None);
    }
    let trusted = trust::recorded(&ctx.env, Some(&root));
    // What the held tools and servers would run: the config as it loads
    // trusted (one that does not is reported once trusted).
    let review = jp_config::load::load(&LoadOptions {
        trust: WorkspaceTrust::Trusted,
        ..ctx.load_options()
    })
    .ok()
    .map(|loaded| Review::new(loaded.config, true));
    let lines = trust::held_lines(&held, trusted.as_ref(), review.as_ref());
    let printer = jp_term::printer::Printer::stdio(jp_term::printer::ColorMode::Auto);
    let terminal = if interactive {
        TerminalPrompter::open(&printer)
    } else {
        None
    };
    let Some(mut terminal) = terminal else {
        for line in &lines {
            jp_term::errln!("error: {line}");
        }
        jp_term::errln!(
            "error: jp query does not run in an untrusted workspace without a terminal to ask on: review what is listed, then run `jp trust`; {ENV}=1 trusts it for one run (it runs what the config says), {ENV}=0 runs without it"
        );
        return Ok(Some(exit::UNTRUSTED.into()));
    };
    for line in &lines {
        jp_term::errln!("{line}");
    }
    let choices = TrustAnswer::choices(TrustAnswer::ALL);
    let answer = loop {
        let answer = TrustAnswer::of(terminal.choose(
            "Trust this workspace and apply them?",
            &choices,
            &tokio_util::sync::CancellationToken::new(),
        ));
        if answer != Ok(TrustAnswer::View) {
            break answer;
        }
        let text = full_view(&held, review.as_ref());
        if let Err(PromptError::Interrupted) = terminal.page(&text) {
            return Ok(Some(exit::INTERRUPTED.into()));
        }
    };
    match answer {
        Ok(TrustAnswer::Trust) => {
            let store = trust::TrustStore::of_user(&ctx.env).ok_or(Error::NoUserConfig)?;
            store.set(&root, trust::record_of(&held))?;
            jp_term::errln!(
                "trusted {}: its config applies in full (`jp trust --revoke` undoes it)",
                root.display()
            );
        }
        // `View` pages and asks again above.
        Ok(TrustAnswer::NotNow | TrustAnswer::View) => {
            jp_term::errln!("going on without them; `jp trust` applies them later");
        }
        Err(_) => return Ok(Some(exit::INTERRUPTED.into())),
    }
    // Said: the loads of the query do not say it again.
    trust::mark_said();
    Ok(None)
}

/// What the `v` key shows: every held key with what it runs, nothing cut,
/// and the value it takes, or the keys alone when the config does not
/// load trusted.
fn full_view(held: &Held, review: Option<&Review>) -> String {
    let mut keys: Vec<String> = Vec::new();
    for key in &held.keys {
        if !keys.contains(&key.key) {
            keys.push(key.key.clone());
        }
    }
    match review {
        Some(review) => review.full(&keys),
        None => format!(
            "the config does not load with what it holds; its keys:\n{}\n",
            keys.join("\n")
        ),
    }
}

/// The answers to "Trust this workspace and apply them?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TrustAnswer {
    /// `y`: trust it.
    Trust,
    /// `n`: go on without what is held.
    NotNow,
    /// `v`: view what is held in full, and ask again.
    View,
}

impl Answer for TrustAnswer {
    const ALL: &'static [Self] = &[Self::Trust, Self::NotNow, Self::View];

    fn key(self) -> char {
        match self {
            Self::Trust => 'y',
            Self::NotNow => 'n',
            Self::View => 'v',
        }
    }

    fn help(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Self::Trust => {
                "trust it: apply what is listed, now and later (recorded in your config directory; `jp trust --revoke` undoes it)"
            }
            Self::NotNow => "not now: go on without what is listed, and ask again next time",
            Self::View => "view what is listed in full (every value, nothing cut), in $PAGER",
        })
    }
}
