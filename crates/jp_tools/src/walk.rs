//! The walk `fs_grep` and `fs_glob` share: the workspace's files the way
//! `rg` finds them, in parallel.
//!
//! - `.gitignore` (also outside a git repository), `.ignore` and git's
//!   exclude files are honoured;
//! - hidden files and directories (names starting with `.`) are skipped,
//!   as `rg` skips them, unless the glob has a component that starts with
//!   `.` (`.github/**`, `**/.eslintrc*`); a `paths` entry that names one
//!   (`.github`) is walked, like a path given to `rg`;
//! - `.git` and jp's conversation store (`.jp/conversations`) are never
//!   entered, even when named;
//! - files that may hold secrets ([`crate::secrets`]) are left out unless a
//!   `paths` entry or the glob names them; the ones left out are reported;
//! - symbolic links are not followed, except a `paths` entry that is one:
//!   it is resolved and confined by [`Workspace::resolve`], and searched
//!   under the path it leads to.
//!
//! A `paths` entry is searched even when an ignore file excludes it, as
//! `rg` searches a path given on its command line.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use globset::{GlobBuilder, GlobMatcher};
use ignore::{DirEntry, WalkState};

use crate::secrets;
use crate::workspace::{Workspace, show};

/// Which files a walk visits.
pub(crate) struct Scope {
    root: PathBuf,
    /// Where the walk starts: the root, or the `paths` entries (relative).
    starts: Vec<PathBuf>,
    /// The `paths` entries that name secrets: what is under them is
    /// visited.
    named_secrets: Vec<PathBuf>,
    glob: Option<Arc<Glob>>,
    hidden: bool,
}

/// A glob argument, compiled.
struct Glob {
    matcher: GlobMatcher,
    /// Whether it is matched against the file name (no `/` in it) rather
    /// than the path from the root.
    on_name: bool,
    names_secret: bool,
}

/// What a walk found: what `visit` returned for each file, sorted by path,
/// the paths left out because they may hold secrets, and how many entries
/// could not be read.
pub(crate) struct Walked<T> {
    pub found: Vec<(String, T)>,
    pub secrets: BTreeSet<String>,
    pub unreadable: usize,
}

impl Scope {
    /// The files under the `paths` entries (the whole workspace when there
    /// are none) that match `glob`.
    ///
    /// # Errors
    ///
    /// A message naming a refused path or an invalid glob.
    pub(crate) fn new(
        workspace: &Workspace,
        paths: &[&str],
        glob: Option<&str>,
    ) -> Result<Self, String> {
        let mut starts = Vec::new();
        let mut named_secrets = Vec::new();
        for raw in paths {
            let target = workspace.resolve(raw)?;
            if never_entered(&target.rel) {
                return Err(format!(
                    "refused `{raw}`: git's directory (.git) and jp's conversations (.jp/conversations) are not searched"
                ));
            }
            // Every link resolved: the walk follows none.
            let real = match target.abs.canonicalize() {
                Ok(real) => real,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(format!("`{}` does not exist", target.shown));
                }
                Err(e) => return Err(format!("cannot open `{}`: {e}", target.shown)),
            };
            let Ok(rel) = real.strip_prefix(workspace.root()) else {
                return Err(format!(
                    "refused `{raw}`: it leads to `{}`, outside the workspace",
                    real.display()
                ));
            };
            if never_entered(rel) {
                return Err(format!(
                    "refused `{raw}`: git's directory (.git) and jp's conversations (.jp/conversations) are not searched"
                ));
            }
            if secrets::names_secret(&show(&target.rel)) || secrets::names_secret(&show(rel)) {
                named_secrets.push(rel.to_path_buf());
            }
            starts.push(rel.to_path_buf());
        }
        if starts.is_empty() {
            starts.push(PathBuf::new());
        }
        let glob = glob.map(compile).transpose()?.map(Arc::new);
        let hidden = glob.as_ref().is_some_and(|g| {
            g.matcher
                .glob()
                .glob()
                .split('/')
                .any(|part| part.starts_with('.') && part != "." && part != "..")
        });
        Ok(Self {
            root: workspace.root().to_path_buf(),
            starts,
            named_secrets,
            glob,
            hidden,
        })
    }

    /// Calls a visitor of `visitors` (one made per thread) with the
    /// absolute path of each file in scope; what it returns is kept.
    pub(crate) fn walk<T, V, M>(&self, visitors: M) -> Walked<T>
    where
        T: Send,
        V: FnMut(&Path) -> Option<T> + Send,
        M: Fn() -> V + Sync,
    {
        let secrets_seen = Arc::new(Mutex::new(BTreeSet::new()));
        let allowed = Arc::new(Allowed {
            root: self.root.clone(),
            named_secrets: self.named_secrets.clone(),
            glob: self.glob.clone(),
            secrets: Arc::clone(&secrets_seen),
        });
        let mut builder = ignore::WalkBuilder::new(self.root.join(&self.starts[0]));
        for start in &self.starts[1..] {
            builder.add(self.root.join(start));
        }
        let filter = Arc::clone(&allowed);
        builder
            .hidden(!self.hidden)
            .require_git(false)
            .follow_links(false)
            .filter_entry(move |entry| filter.keeps(entry));

        let found = Mutex::new(Vec::new());
        let unreadable = Mutex::new(0_usize);
        builder.build_parallel().run(|| {
            let mut visit = visitors();
            let found = &found;
            let unreadable = &unreadable;
            let allowed = &allowed;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    *unreadable.lock().unwrap_or_else(PoisonError::into_inner) += 1;
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                // The starts themselves are not filtered by the walk.
                if entry.depth() == 0 && !allowed.keeps(&entry) {
                    return WalkState::Continue;
                }
                let Ok(rel) = entry.path().strip_prefix(&allowed.root) else {
                    return WalkState::Continue;
                };
                let rel = show(rel);
                if !allowed.glob.as_ref().is_none_or(|g| g.matches(&rel)) {
                    return WalkState::Continue;
                }
                if let Some(value) = visit(entry.path()) {
                    found
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((rel, value));
                }
                WalkState::Continue
            })
        });
        let mut found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found.dedup_by(|a, b| a.0 == b.0);
        let secrets =
            std::mem::take(&mut *secrets_seen.lock().unwrap_or_else(PoisonError::into_inner));
        Walked {
            found,
            secrets,
            unreadable: unreadable
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner),
        }
    }
}

/// The entries a walk enters or visits.
struct Allowed {
    root: PathBuf,
    named_secrets: Vec<PathBuf>,
    glob: Option<Arc<Glob>>,
    /// The paths left out because they may hold secrets.
    secrets: Arc<Mutex<BTreeSet<String>>>,
}

impl Allowed {
    fn keeps(&self, entry: &DirEntry) -> bool {
        let Ok(rel) = entry.path().strip_prefix(&self.root) else {
            return false;
        };
        if never_entered(rel) {
            return false;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let shown = show(rel);
        if !secrets::is_secret(&shown, is_dir)
            || self.glob.as_ref().is_some_and(|g| g.names_secret)
            || self
                .named_secrets
                .iter()
                .any(|named| rel.starts_with(named))
        {
            return true;
        }
        // Said only where the file would have been visited.
        if is_dir || self.glob.as_ref().is_none_or(|g| g.matches(&shown)) {
            let shown = if is_dir { format!("{shown}/") } else { shown };
            self.secrets
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(shown);
        }
        false
    }
}

impl Glob {
    fn matches(&self, rel: &str) -> bool {
        if self.on_name {
            self.matcher.is_match(rel.rsplit('/').next().unwrap_or(rel))
        } else {
            self.matcher.is_match(rel)
        }
    }
}

/// The glob argument `raw`, compiled: `*` and `?` do not match `/`, `**`
/// matches any number of directories.
fn compile(raw: &str) -> Result<Glob, String> {
    let pattern = raw.strip_prefix("./").unwrap_or(raw);
    if pattern.is_empty() {
        return Err(
            "refused an empty glob: write a pattern such as `*.rs` or `src/**/*.toml`".into(),
        );
    }
    if pattern.starts_with('/') || pattern.split('/').any(|part| part == "..") {
        return Err(format!(
            "refused the glob `{raw}`: it is matched against paths inside the workspace; write it relative to the workspace root, without `..`"
        ));
    }
    let glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("invalid glob `{raw}`: {}", e.kind()))?;
    Ok(Glob {
        on_name: !pattern.contains('/'),
        names_secret: secrets::glob_names_secret(pattern),
        matcher: glob.compile_matcher(),
    })
}

/// Whether `rel` is in `.git` (at any depth) or jp's conversation store.
fn never_entered(rel: &Path) -> bool {
    rel.components().any(|c| c.as_os_str() == ".git")
        || rel.starts_with(Path::new(".jp").join("conversations"))
}
