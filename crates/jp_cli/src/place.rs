//! Where a command runs: in a workspace (a directory whose `.jp/` holds its
//! config and conversations, here or above the current directory), or in a
//! plain directory that is none (issue 39: `jp query` from anywhere).
//!
//! In a plain directory jp runs with the user's config (the user config
//! file, the environment, `--cfg`; there is no workspace config), the
//! current directory is the root the tools are confined to, and nothing is
//! written into it by jp itself (no `.jp/`):
//!
//! - Its conversations are kept in the user's data directory,
//!   `$XDG_DATA_HOME/jp/directories/DIGEST/conversations/` (or under
//!   `~/.local/share`), DIGEST naming the directory as the user's other
//!   records do ([`crate::ledger::digest`]). A tree of its own, beside
//!   `jp/workspaces/`, so it cannot collide with what jp keeps there for
//!   the same path: the copies that `jp conversation rewind` puts back
//!   ([`crate::blobs`], `jp/workspaces/DIGEST/conversations/ID/blobs/`, by
//!   the same DIGEST, as for any root) and the undo cache. Were the store
//!   at `jp/workspaces/DIGEST/conversations/` itself, one directory would
//!   hold a conversation's log (`ID/events.jsonl`) and the copies kept for
//!   a conversation of that id (`ID/blobs/`); for a path that is a plain
//!   directory at one time and a workspace at another, those are two
//!   stores' conversations, ids being unique only within a store (the
//!   time each began), and removing one would take the other's copies
//!   with it. Here nothing but the store writes under its tree, so it
//!   cannot. The active-conversation marker is
//!   the store's own (`conversations/active`), and the user's records of
//!   it (seals, approvals, which one they made active:
//!   [`crate::ledger::Ledger`]) are those of the directory's root, as for a
//!   workspace.
//! - Every tool call that may change something is asked, whatever the
//!   user's config says ([`asked`]): no unattended write without a
//!   workspace the user chose. Only jp's own tools that only read
//!   (`fs_read_file`, `fs_list_files`, `fs_grep`, `fs_glob`, known by the
//!   command they run, not by their name) follow their policy as in a workspace; a tool jp knows
//!   nothing of (a command of the user's, an MCP server's) may change
//!   anything, so it is asked (fail closed), and no "allow for this
//!   session" answer covers it. Without a terminal such a call is
//!   declined, saying why and that `jp init` makes the directory a
//!   workspace.
//!
//! Where a command runs is settled once, when it starts ([`settle`]), and
//! read from there by what decides later ([`here`]): the judge of tool
//! calls does not look at the disk again, so a tool that creates `.jp/`
//! in the middle of a turn cannot turn a plain directory into a workspace
//! whose calls run unattended.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

use jp_conversation::Store;
use jp_tools::DefaultTool;

use crate::ctx::Ctx;
use crate::exit;

/// Where a command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A workspace, at its root.
    Workspace(PathBuf),
    /// A directory with no workspace in it or above it.
    Directory {
        /// The directory (the current one): the root the tools are
        /// confined to.
        dir: PathBuf,
        /// Where its conversations are kept, in the user's data directory:
        /// `.../jp/directories/DIGEST`.
        data: PathBuf,
    },
}

/// The store's directory in a plain directory's data directory.
const CONVERSATIONS: &str = "conversations";

impl Place {
    /// Where a command started in `cwd` runs: the `workspace` around it, if
    /// there is one; else `cwd` itself, whose conversations go to the data
    /// directory `env` names. `Err` says why there is neither.
    ///
    /// # Errors
    ///
    /// No workspace, and no data directory (neither `XDG_DATA_HOME` nor
    /// `HOME` is set).
    pub fn find(
        cwd: &Path,
        workspace: Option<PathBuf>,
        env: &[(String, String)],
    ) -> Result<Self, String> {
        if let Some(root) = workspace {
            return Ok(Self::Workspace(root));
        }
        let data = crate::ctx::user_dir(env, "XDG_DATA_HOME", ".local/share").ok_or_else(|| {
            format!(
                "no jp workspace here or above {}, and no data directory to keep its conversations in (neither XDG_DATA_HOME nor HOME is set); run `jp init` to make this directory a workspace",
                cwd.display()
            )
        })?;
        Ok(Self::Directory {
            dir: cwd.to_path_buf(),
            data: data.join("directories").join(crate::ledger::digest(cwd)),
        })
    }

    /// Where the command of `ctx` runs.
    ///
    /// # Errors
    ///
    /// As [`Self::find`].
    pub fn of(ctx: &Ctx) -> Result<Self, String> {
        Self::find(&ctx.cwd, ctx.workspace_root(), &ctx.env)
    }

    /// The root the tools are confined to: the workspace's, or the
    /// directory.
    #[must_use]
    pub fn root(&self) -> &Path {
        match self {
            Self::Workspace(root) => root,
            Self::Directory { dir, .. } => dir,
        }
    }

    /// The conversations kept here. A plain directory's data directory is
    /// made (for this user only) when it is not there yet.
    ///
    /// # Errors
    ///
    /// When that directory cannot be made.
    pub fn store(&self) -> Result<Store, crate::error::Error> {
        match self {
            Self::Workspace(root) => Ok(Store::new(root)),
            Self::Directory { data, .. } => {
                private_dir_all(data).map_err(|source| crate::error::Error::File {
                    action: "create",
                    path: data.clone(),
                    source,
                })?;
                Ok(Store::under(data, Path::new(CONVERSATIONS)))
            }
        }
    }

    /// The conversations kept here, making nothing: `None` for a plain
    /// directory that has none yet.
    #[must_use]
    pub fn stored(&self) -> Option<Store> {
        match self {
            Self::Workspace(root) => Some(Store::new(root)),
            Self::Directory { data, .. } => data
                .is_dir()
                .then(|| Store::under(data, Path::new(CONVERSATIONS))),
        }
    }

    /// What to say when a query starts here: `None` in a workspace; in a
    /// plain directory, where its conversations are kept and that every
    /// call that may change something is asked (`home` shown as `~`).
    #[must_use]
    pub fn notice(&self, home: Option<&Path>) -> Option<String> {
        let Self::Directory { data, .. } = self else {
            return None;
        };
        let kept = data.join(CONVERSATIONS);
        let shown = match home.and_then(|home| kept.strip_prefix(home).ok()) {
            Some(below) => format!("~/{}", below.display()),
            None => kept.display().to_string(),
        };
        Some(format!(
            "no workspace here: conversations are kept in {shown}, and every tool call that may change something is asked (`jp init` makes this directory a workspace)"
        ))
    }
}

/// Makes `dir` and what is missing on the way, each readable by this
/// user only.
fn private_dir_all(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Where this process runs, once settled.
static HERE: OnceLock<Place> = OnceLock::new();

/// Settles where this process runs (the first place settled stays), and
/// returns it.
pub fn settle(place: Place) -> &'static Place {
    HERE.get_or_init(|| place)
}

/// Where this process runs, if that is settled.
#[must_use]
pub fn here() -> Option<&'static Place> {
    HERE.get()
}

/// The conversations of the place at `root`: those of the plain directory
/// this process runs in when `root` is that directory (made already, when
/// the place was settled), else those of the workspace at `root`.
#[must_use]
pub fn store_at(root: &Path) -> Store {
    match here() {
        Some(Place::Directory { dir, data }) if dir == root => {
            Store::under(data, Path::new(CONVERSATIONS))
        }
        _ => Store::new(root),
    }
}

/// Settles where `jp query` runs (`workspace` being the workspace around
/// `ctx.cwd`, as its config was loaded) and says it when that is a plain
/// directory: the root the tools are confined to and the conversations.
/// `Err` holds the exit code of a place that cannot be had, said already.
///
/// # Errors
///
/// When a plain directory's data directory cannot be made.
pub fn for_query(
    ctx: &Ctx,
    workspace: Option<PathBuf>,
    color: jp_config::style::ColorMode,
) -> Result<Result<(PathBuf, Store), ExitCode>, crate::error::Error> {
    let place = match Place::find(&ctx.cwd, workspace, &ctx.env) {
        Ok(place) => settle(place),
        Err(why) => {
            jp_term::errln!("error: {why}");
            return Ok(Err(exit::USAGE.into()));
        }
    };
    let store = place.store()?;
    let home = ctx
        .env
        .iter()
        .find(|(k, v)| k == "HOME" && !v.is_empty())
        .map(|(_, v)| PathBuf::from(v));
    // Said once a process: a session (`jp chat`) loads this for each
    // message.
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if let Some(notice) = place.notice(home.as_deref())
        && !SAID.swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        jp_term::printer::Printer::stdio(crate::ctx::color(color))
            .chrome_line(jp_term::printer::Style::Dim, &notice);
    }
    Ok(Ok((place.root().to_path_buf(), store)))
}

/// Whether a call of a tool that runs `tool` (the default tool of jp's it
/// runs, if it runs one: [`crate::query::tools::judge::default_tool`]) may
/// change something: every tool but jp's own that only read.
#[must_use]
pub const fn may_change(tool: Option<DefaultTool>) -> bool {
    !matches!(tool, Some(tool) if tool.reads_only())
}

/// Why a call of a tool that runs `tool` is asked whatever its policy says,
/// when the command runs in `place`: in a plain directory, when it may
/// change something. Words that follow "but" in the reason of its
/// decision.
#[must_use]
pub fn asked(place: Option<&Place>, tool: Option<DefaultTool>) -> Option<&'static str> {
    (matches!(place, Some(Place::Directory { .. })) && may_change(tool)).then_some(
        "there is no workspace here (every tool call that may change something is asked)",
    )
}

/// [`asked`] for a call of the tool called `name` in `config`, for `jp
/// policy check`: as the judge of a query decides it.
#[must_use]
pub fn asked_of(
    config: &jp_config::AppConfig,
    place: Option<&Place>,
    name: &str,
) -> Option<String> {
    let tool = jp_config::tool::offered(&config.conversation.tools)
        .find(|(offered, _)| offered.as_str() == name)
        .and_then(|(_, tool)| crate::query::tools::judge::default_tool(tool));
    asked(place, tool).map(str::to_owned)
}

/// How to let such a call run without a terminal: words that follow the
/// reason it was declined.
pub const ASKED_ADVICE: &str = "run jp in a terminal to answer, or run `jp init` to make this directory a workspace, where your policies decide";

#[cfg(test)]
#[path = "place_tests.rs"]
mod tests;
