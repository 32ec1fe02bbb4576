//! `jp trust`: trust the workspace's own config, see whether it is
//! trusted, or stop trusting it ([`crate::trust`]).

use std::process::ExitCode;

use jp_config::load::{self, LoadOptions, Loaded};
use jp_config::trust::WorkspaceTrust;

use crate::ctx::{Ctx, no_workspace, print_load_error};
use crate::error::Error;
use crate::exit;
use crate::trust::review::Review;
use crate::trust::{TrustStore, held_lines, record_of};
use jp_term::{errln, outln};

/// `jp trust`.
#[derive(Debug, clap::Args)]
pub struct Trust {
    /// Say whether the workspace is trusted, and what its config holds
    /// that needs trust; change nothing.
    #[arg(long, conflicts_with = "revoke")]
    status: bool,
    /// Stop trusting the workspace: what its config runs or decides is
    /// left out again.
    #[arg(long)]
    revoke: bool,
}

impl Trust {
    /// Runs it.
    pub fn run(self, ctx: &Ctx) -> Result<ExitCode, Error> {
        let Some(root) = ctx.workspace_root() else {
            return Ok(no_workspace(&ctx.cwd));
        };
        let store = TrustStore::of_user(&ctx.env).ok_or(Error::NoUserConfig)?;
        if self.revoke {
            if store.revoke(&root)? {
                outln!(
                    "this workspace ({}) is no longer trusted: what its config runs or decides is left out",
                    root.display()
                );
            } else {
                outln!("this workspace ({}) was not trusted", root.display());
            }
            return Ok(ExitCode::SUCCESS);
        }
        // What the files hold, as if nothing were trusted.
        let untrusted = match held_reading(ctx) {
            Ok(loaded) => loaded,
            Err(code) => return Ok(code),
        };
        let record = store.get(&root)?;
        if self.status {
            // What the held tools and servers would run, in full.
            let review = load::load(&LoadOptions {
                trust: WorkspaceTrust::Trusted,
                ..ctx.load_options()
            })
            .ok()
            .map(|loaded| Review::new(loaded.config, false));
            status(
                untrusted.held.as_ref(),
                record.as_ref(),
                review.as_ref(),
                &ctx.env,
            );
            return Ok(ExitCode::SUCCESS);
        }
        let Some(held) = untrusted.held else {
            outln!(
                "nothing in this workspace's config needs trust: it runs nothing and decides nothing"
            );
            return Ok(ExitCode::SUCCESS);
        };
        // Trust only a config that loads with all of it.
        if let Err(code) = load_as(ctx, WorkspaceTrust::Trusted) {
            errln!("error: not trusted: the config does not load with what it holds");
            return Ok(code);
        }
        store.set(&root, record_of(&held))?;
        outln!("trusted this workspace; its config now applies in full:");
        for key in &held.keys {
            let line = key.line.map(|l| format!(":{l}")).unwrap_or_default();
            outln!("  {}{line}: {}", key.file, key.key);
        }
        outln!("a change to any of them needs `jp trust` again; `jp trust --revoke` undoes it");
        Ok(ExitCode::SUCCESS)
    }
}

/// Loads the config with `trust` for the workspace, reporting a config
/// that does not load.
fn load_as(ctx: &Ctx, trust: WorkspaceTrust) -> Result<Loaded, ExitCode> {
    load::load(&LoadOptions {
        trust,
        ..ctx.load_options()
    })
    .map_err(|error| {
        print_load_error(&error);
        exit::INVALID_CONFIG.into()
    })
}

/// The config as if nothing in the workspace were trusted, for what its
/// files hold. A config may load only with what it holds (a model id
/// naming a provider or an alias that the held part adds): what is held is
/// then read from that load, marked as not applied, so that it can be
/// reviewed and trusted.
fn held_reading(ctx: &Ctx) -> Result<Loaded, ExitCode> {
    let error = match load::load(&LoadOptions {
        trust: WorkspaceTrust::Untrusted,
        ..ctx.load_options()
    }) {
        Ok(loaded) => return Ok(loaded),
        Err(error) => error,
    };
    let Ok(mut loaded) = load::load(&LoadOptions {
        trust: WorkspaceTrust::Trusted,
        ..ctx.load_options()
    }) else {
        print_load_error(&error);
        return Err(exit::INVALID_CONFIG.into());
    };
    if let Some(held) = loaded.held.as_mut() {
        held.applied = false;
    }
    Ok(loaded)
}

/// `jp trust --status`.
fn status(
    held: Option<&jp_config::trust::Held>,
    record: Option<&crate::trust::Record>,
    review: Option<&Review>,
    env: &[(String, String)],
) {
    let over = crate::trust::Override::from_env(env).ok().flatten();
    match (held, record) {
        (None, _) => outln!("nothing in this workspace's config needs trust"),
        (Some(held), Some(record)) if record.digest == held.digest => {
            outln!("this workspace is trusted, as its config is now");
        }
        (Some(held), record) => {
            for line in held_lines(held, record, review) {
                outln!("{line}");
            }
            outln!("`jp trust` applies them");
        }
    }
    match over {
        Some(crate::trust::Override::Trust) => {
            outln!("{}=1: trusted in full for this run", crate::trust::ENV);
        }
        Some(crate::trust::Override::Distrust) => {
            outln!("{}=0: not trusted for this run", crate::trust::ENV);
        }
        None => {}
    }
}
