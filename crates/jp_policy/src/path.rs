//! Paths in policies (RFD D25, architecture decision 3).
//!
//! A `path`-typed argument is matched the way the tool will use it, not as
//! the text the model wrote:
//!
//! - it is joined to the workspace root and normalized lexically (`.`, `..`,
//!   repeated and trailing separators), so `src/../.env` is `.env`;
//! - a path inside the root is matched in its relative form (an absolute
//!   path inside the root becomes relative); a path that escapes the root
//!   keeps its absolute form and never matches a relative `prefix` or
//!   `const`;
//! - symlinks are resolved as well, component by component the way the
//!   file system would (dangling links and links after a missing
//!   directory included), giving a second, *resolved* form: the file the
//!   kernel opens for the value as written, and the one jp's own tools
//!   open;
//! - a `..` that follows a symlink means one thing to the kernel (the
//!   parent of the link's target) and another to a tool that removes `..`
//!   before it opens the path (as most path libraries do): `src/b/../a`
//!   with `src/b -> c/d` is `src/c/a` to the first and `src/a` to the
//!   second. So the lexical form is resolved too, giving a third form (the
//!   same as the resolved one when no `..` follows a link). A rule whose
//!   mode is `unattended` needs every form to match (and, unless it names
//!   an absolute location, every form inside the workspace); any other
//!   rule matches if any form does, so a link inside `src/` that points
//!   elsewhere is never let through on the strength of its name alone;
//! - a path that cannot be resolved (a symlink loop, more than
//!   [`MAX_SYMLINKS`] links, a component jp may not inspect) has no
//!   resolved form ([`Unresolvable`]): no `unattended` rule matches it, and
//!   other rules match on the lexical form alone. The kernel stops after 40
//!   links, but a tool that resolves paths itself may not, so the lexical
//!   form alone proves nothing about where the tool will write.
//!
//! Rule literals (`prefix`, `const` and `enum` on a `path` parameter) are
//! normalized the same way when the policy is compiled, so `./src`, `src`,
//! `src/` and `src//` are one prefix.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use jp_fs::io_reason;

use crate::links::{Disk, Entry, Links};

/// A path written in a rule, normalized.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PolicyPath {
    /// Relative to the workspace root, without `.` or `..` components. The
    /// root itself is the empty path (written `.`).
    Relative(PathBuf),
    /// An absolute path, normalized lexically. Matches values by their
    /// absolute form, inside the workspace or not.
    Absolute(PathBuf),
}

/// Why a path written in a rule is not usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathLiteralError {
    /// The empty string.
    Empty,
    /// The text contains a NUL character, which no path can hold.
    Nul,
    /// A relative path whose `..` leave the workspace root.
    EscapesRoot,
}

impl PolicyPath {
    /// Normalizes a path written in a rule.
    ///
    /// # Errors
    ///
    /// When `text` is empty, holds a NUL, or is relative and leaves the
    /// workspace with `..`.
    pub fn parse(text: &str) -> Result<Self, PathLiteralError> {
        if text.is_empty() {
            return Err(PathLiteralError::Empty);
        }
        if text.contains('\0') {
            return Err(PathLiteralError::Nul);
        }
        let path = Path::new(text);
        let normal = normalize_lexically(path);
        if path.is_absolute() {
            return Ok(Self::Absolute(normal));
        }
        if matches!(normal.components().next(), Some(Component::ParentDir)) {
            return Err(PathLiteralError::EscapesRoot);
        }
        Ok(Self::Relative(normal))
    }

    /// The path as shown in messages: `src/lib.rs`, `.` for the root,
    /// `/etc/hosts`.
    #[must_use]
    pub fn display(&self) -> String {
        match self {
            Self::Relative(p) if p.as_os_str().is_empty() => ".".to_owned(),
            Self::Relative(p) | Self::Absolute(p) => p.display().to_string(),
        }
    }

    /// The path as a prefix in messages, with a trailing separator:
    /// `src/`, `./`, `/etc/`.
    #[must_use]
    pub fn display_prefix(&self) -> String {
        let text = self.display();
        if text.ends_with('/') {
            text
        } else {
            format!("{text}/")
        }
    }

    /// Whether every path under `other` is under `self` (both relative or
    /// both absolute; component-aware).
    #[must_use]
    pub fn is_prefix_of(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Relative(a), Self::Relative(b)) | (Self::Absolute(a), Self::Absolute(b)) => {
                b.starts_with(a)
            }
            _ => false,
        }
    }

    /// Whether `form` is this path or below it.
    #[must_use]
    pub fn contains(&self, form: &PathForm) -> bool {
        match self {
            Self::Relative(p) => form.relative.as_ref().is_some_and(|r| r.starts_with(p)),
            Self::Absolute(p) => form.absolute.starts_with(p),
        }
    }

    /// Whether `form` is exactly this path.
    #[must_use]
    pub fn equals(&self, form: &PathForm) -> bool {
        match self {
            Self::Relative(p) => form.relative.as_ref() == Some(p),
            Self::Absolute(p) => form.absolute == *p,
        }
    }
}

/// Removes `.` components, repeated and trailing separators, and resolves
/// `..` against the preceding component, without touching the file system
/// (shared with jp's tools: [`jp_fs::normalize_lexically`]).
pub use jp_fs::normalize_lexically;

/// The workspace root, lexically and resolved, against which path values
/// are matched, and the file system their links are read from. Build it
/// once per evaluation.
#[derive(Debug, Clone)]
pub struct Workspace {
    lexical: PathBuf,
    resolved: PathBuf,
    links: Arc<dyn Links>,
}

impl Workspace {
    /// The workspace rooted at `root`, on the real file system. A relative
    /// root is taken from the current directory; a root that cannot be
    /// canonicalized (it does not exist) is used as is for the resolved
    /// form too.
    #[must_use]
    pub fn new(root: &Path) -> Self {
        let absolute = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        let lexical = normalize_lexically(&absolute);
        let resolved = std::fs::canonicalize(&absolute).unwrap_or_else(|_| lexical.clone());
        Self {
            lexical,
            resolved,
            links: Arc::new(Disk),
        }
    }

    /// The workspace rooted at `root` (absolute) on the file system
    /// `links` (for instance a [`Memory`](crate::links::Memory) one, in
    /// tests). A root that cannot be resolved there is used as is for the
    /// resolved form too.
    #[must_use]
    pub fn with_links(root: &Path, links: Arc<dyn Links>) -> Self {
        let lexical = normalize_lexically(root);
        let resolved = resolve_physically(&lexical, links.as_ref())
            .ok()
            .filter(|resolved| links.entry(resolved).is_ok())
            .unwrap_or_else(|| lexical.clone());
        Self {
            lexical,
            resolved,
            links,
        }
    }

    /// The file system paths in this workspace are resolved on.
    #[must_use]
    pub fn links(&self) -> &dyn Links {
        self.links.as_ref()
    }

    /// The root, normalized lexically.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.lexical
    }

    /// The root with symlinks resolved.
    #[must_use]
    pub fn resolved_root(&self) -> &Path {
        &self.resolved
    }
}

/// One form of a path value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathForm {
    absolute: PathBuf,
    relative: Option<PathBuf>,
}

impl PathForm {
    fn new(absolute: PathBuf, root: &Path) -> Self {
        let relative = absolute.strip_prefix(root).ok().map(Path::to_path_buf);
        Self { absolute, relative }
    }

    /// The absolute, normalized path.
    #[must_use]
    pub fn absolute(&self) -> &Path {
        &self.absolute
    }

    /// The path relative to the workspace root, if it is inside it (empty
    /// for the root itself).
    #[must_use]
    pub fn relative(&self) -> Option<&Path> {
        self.relative.as_deref()
    }

    /// The text `pattern` is matched against and messages show: the
    /// relative path inside the workspace (`.` for the root), the absolute
    /// path outside it.
    #[must_use]
    pub fn text(&self) -> String {
        match &self.relative {
            Some(r) if r.as_os_str().is_empty() => ".".to_owned(),
            Some(r) => r.to_string_lossy().into_owned(),
            None => self.absolute.to_string_lossy().into_owned(),
        }
    }
}

/// A path argument in its three forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathValue {
    /// Joined to the root and normalized lexically.
    pub lexical: PathForm,
    /// The value as written, resolved the way the file system would: every
    /// symlink on the way followed (dangling ones too), `..` taken as the
    /// parent of what the path has led to so far, missing components kept
    /// as written. This is the file the kernel opens for the value, and
    /// the one jp's own tools open. An error when that cannot be done
    /// (architecture decision 3: a form that cannot be computed matches no
    /// `unattended` rule).
    pub resolved: Result<PathForm, Unresolvable>,
    /// The lexical form resolved the same way: the file a tool opens that
    /// removes `..` from the path before it opens it. The same as
    /// `resolved` unless a `..` in the value follows a symbolic link.
    pub resolved_lexical: Result<PathForm, Unresolvable>,
}

impl PathValue {
    /// Whether every form is inside the workspace root (the root itself
    /// included). An unresolvable path is not.
    #[must_use]
    pub fn is_inside(&self) -> bool {
        let inside = |form: &Result<PathForm, Unresolvable>| {
            form.as_ref().is_ok_and(|form| form.relative.is_some())
        };
        self.lexical.relative.is_some() && inside(&self.resolved) && inside(&self.resolved_lexical)
    }

    /// The two resolved forms differ: a `..` in the value follows a
    /// symbolic link, so a tool that removes `..` first opens another file
    /// than the kernel (and jp's tools) would.
    #[must_use]
    pub fn is_ambiguous(&self) -> bool {
        self.resolved != self.resolved_lexical
    }

    /// The file the value opens: its resolved form (as the kernel and jp's
    /// tools open it), and, when a `..` follows a link, the file a tool
    /// opens that removes `..` first: `/home/u/.ssh/notes.txt (a tool that
    /// removes ".." before following links opens notes.txt)`.
    #[must_use]
    pub fn target(&self) -> String {
        let show = |form: &Result<PathForm, Unresolvable>| match form {
            Ok(form) => form.text(),
            Err(why) => format!("nowhere jp can tell ({why})"),
        };
        if self.is_ambiguous() {
            format!(
                "{} (a tool that removes \"..\" before following links opens {})",
                show(&self.resolved),
                show(&self.resolved_lexical)
            )
        } else {
            show(&self.resolved)
        }
    }

    /// What the question put to the user about a call says of the value:
    /// `None` when it opens exactly the file it names (its resolved form is
    /// its lexical form), otherwise `opens` and its [`Self::target`].
    #[must_use]
    pub fn opens(&self) -> Option<String> {
        let plain = self
            .resolved
            .as_ref()
            .is_ok_and(|resolved| resolved.text() == self.lexical.text());
        (!plain || self.is_ambiguous()).then(|| format!("opens {}", self.target()))
    }
}

/// Why a path argument has no resolved form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresolvable {
    /// Following symbolic links comes back to a link already followed with
    /// the same rest of the path still to go: the links form a loop.
    Loop {
        /// The link at which the loop closed, as [`PathForm::text`] shows it.
        link: String,
    },
    /// More than [`MAX_SYMLINKS`] symbolic links would have to be followed.
    /// The kernel gives up at that point (`ELOOP`) but a tool that resolves
    /// paths itself may not, so no form can be trusted.
    TooManyLinks,
    /// The way leads through a link under `/proc` (`/proc/self/cwd`,
    /// `/dev/fd`, ...), which leads somewhere else for each process that
    /// follows it: jp would resolve it as jp, the tool follows it as the
    /// tool, from another directory (found by an adversarial run).
    ProcessDependent {
        /// The link, as [`PathForm::text`] shows it.
        link: String,
    },
    /// A component could not be inspected (permission denied, a name too
    /// long, not a directory, ...).
    Inaccessible {
        /// The component, as [`PathForm::text`] shows it.
        at: String,
        /// The system's reason.
        reason: String,
    },
}

impl std::fmt::Display for Unresolvable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Loop { link } => write!(f, "symbolic links loop at {link}"),
            Self::TooManyLinks => write!(
                f,
                "more than {MAX_SYMLINKS} symbolic links would have to be followed"
            ),
            Self::ProcessDependent { link } => write!(
                f,
                "the way goes through {link}, a link under /proc that leads somewhere else for \
                 each process that follows it"
            ),
            Self::Inaccessible { at, reason } => write!(f, "{at} cannot be inspected: {reason}"),
        }
    }
}

/// Why a path argument is not a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NulInPath;

/// Both forms of the path argument `value`.
///
/// # Errors
///
/// When `value` contains NUL, which no file system path can hold.
pub fn resolve_path(value: &str, workspace: &Workspace) -> Result<PathValue, NulInPath> {
    if value.contains('\0') {
        return Err(NulInPath);
    }
    let lexical = normalize_lexically(&workspace.lexical.join(value));
    let show = |path: PathBuf| PathForm::new(path, &workspace.resolved).text();
    let resolve = |path: &Path| match resolve_physically(path, workspace.links()) {
        Ok(path) => Ok(PathForm::new(path, &workspace.resolved)),
        Err(Failure::Loop(link)) => Err(Unresolvable::Loop { link: show(link) }),
        Err(Failure::TooManyLinks) => Err(Unresolvable::TooManyLinks),
        Err(Failure::ProcessDependent(link)) => {
            Err(Unresolvable::ProcessDependent { link: show(link) })
        }
        Err(Failure::Inaccessible(at, error)) => Err(Unresolvable::Inaccessible {
            at: show(at),
            reason: io_reason(&error),
        }),
    };
    let written = workspace.resolved.join(value);
    let resolved = resolve(&written);
    // Without a `..`, removing `..` first changes nothing.
    let resolved_lexical = if written
        .components()
        .any(|c| matches!(c, Component::ParentDir))
    {
        resolve(&normalize_lexically(&written))
    } else {
        resolved.clone()
    };
    Ok(PathValue {
        lexical: PathForm::new(lexical, &workspace.lexical),
        resolved,
        resolved_lexical,
    })
}

/// The most symlinks followed while resolving one path (Linux's limit).
pub const MAX_SYMLINKS: usize = 40;

enum Failure {
    Loop(PathBuf),
    TooManyLinks,
    ProcessDependent(PathBuf),
    Inaccessible(PathBuf, std::io::Error),
}

/// Resolves `path` (absolute, `..` not yet applied) the way the file system
/// would, component by component: every existing symlink is followed, also
/// after a missing directory and a `..` lead back into existing ones, and
/// a dangling symlink is followed to its (missing) target. Components that
/// do not exist are kept as written. Anything else fails: a loop, more than
/// [`MAX_SYMLINKS`] links, or a component that cannot be inspected.
fn resolve_physically(path: &Path, links: &dyn Links) -> Result<PathBuf, Failure> {
    use std::collections::{HashSet, VecDeque};
    use std::ffi::OsString;

    let mut pending: VecDeque<OsString> = VecDeque::new();
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            other => pending.push_back(other.as_os_str().to_owned()),
        }
    }
    // Each link followed, with what was left to resolve after it: meeting
    // one again means the walk would repeat itself forever.
    let mut followed: HashSet<(PathBuf, VecDeque<OsString>)> = HashSet::new();
    while let Some(name) = pending.pop_front() {
        if name == "." {
            continue;
        }
        if name == ".." {
            // `out` holds no symlinks, so its parent is the physical parent.
            out.pop();
            continue;
        }
        let next = out.join(&name);
        match links.entry(&next) {
            Ok(Entry::Link(target)) => {
                // `/proc/self`, `/proc/PID/cwd`, `root`, `fd/N`: what they
                // lead to depends on who follows them.
                if next.starts_with("/proc") {
                    return Err(Failure::ProcessDependent(next));
                }
                if !followed.insert((next.clone(), pending.clone())) {
                    return Err(Failure::Loop(next));
                }
                if followed.len() > MAX_SYMLINKS {
                    return Err(Failure::TooManyLinks);
                }
                let mut target_parts = Vec::new();
                for component in target.components() {
                    match component {
                        Component::Prefix(_) | Component::RootDir => {
                            out = PathBuf::new();
                            out.push(component.as_os_str());
                        }
                        other => target_parts.push(other.as_os_str().to_owned()),
                    }
                }
                for part in target_parts.into_iter().rev() {
                    pending.push_front(part);
                }
            }
            Ok(Entry::Other) => out = next,
            // A missing entry is kept as written: the tool would create it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => out = next,
            // An entry jp cannot inspect (permission denied, a name too
            // long, a file used as a directory) may hide a link: fail closed.
            Err(e) => return Err(Failure::Inaccessible(next, e)),
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "path_tests.rs"]
mod tests;
