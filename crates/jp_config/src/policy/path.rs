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
//! - symlinks are resolved as well: the longest existing ancestor is
//!   canonicalized and the rest appended, giving a second, *resolved* form.
//!   A rule whose mode is `unattended` needs both forms to match; any other
//!   rule matches if either does, so a link inside `src/` that points
//!   elsewhere is never let through on the strength of its name alone.
//!
//! Rule literals (`prefix`, `const` and `enum` on a `path` parameter) are
//! normalized the same way when the policy is compiled, so `./src`, `src`,
//! `src/` and `src//` are one prefix.

use std::path::{Component, Path, PathBuf};

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
/// `..` against the preceding component, without touching the file system.
/// A `..` at the start of a relative path is kept; at the root of an
/// absolute path it is dropped (`/..` is `/`).
#[must_use]
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut parts: Vec<Component<'_>> = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match parts.last() {
                Some(Component::Normal(_)) => {
                    parts.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                Some(Component::ParentDir | Component::CurDir) | None => parts.push(component),
            },
            other => parts.push(other),
        }
    }
    parts.iter().collect()
}

/// The workspace root, lexically and resolved, against which path values
/// are matched. Build it once per evaluation.
#[derive(Debug, Clone)]
pub struct Workspace {
    lexical: PathBuf,
    resolved: PathBuf,
}

impl Workspace {
    /// The workspace rooted at `root`. A relative root is taken from the
    /// current directory; a root that cannot be canonicalized (it does not
    /// exist) is used as is for the resolved form too.
    #[must_use]
    pub fn new(root: &Path) -> Self {
        let absolute = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        let lexical = normalize_lexically(&absolute);
        let resolved = std::fs::canonicalize(&absolute).unwrap_or_else(|_| lexical.clone());
        Self { lexical, resolved }
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

/// A path argument in both of its forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathValue {
    /// Joined to the root and normalized lexically.
    pub lexical: PathForm,
    /// Resolved the way the file system would: every symlink on the way
    /// followed (dangling ones too), missing components kept as written.
    pub resolved: PathForm,
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
    let resolved =
        resolve_physically(&workspace.resolved.join(value)).unwrap_or_else(|| lexical.clone());
    Ok(PathValue {
        lexical: PathForm::new(lexical, &workspace.lexical),
        resolved: PathForm::new(resolved, &workspace.resolved),
    })
}

/// The most symlinks followed while resolving one path (Linux's limit).
const MAX_SYMLINKS: usize = 40;

/// Resolves `path` (absolute, `..` not yet applied) the way the file system
/// would, component by component: every existing symlink is followed, also
/// after a missing directory and a `..` lead back into existing ones, and
/// a dangling symlink is followed to its (missing) target. Components that
/// do not exist are kept as written. `None` when symlinks loop.
fn resolve_physically(path: &Path) -> Option<PathBuf> {
    use std::collections::VecDeque;
    use std::ffi::OsString;

    let mut pending: VecDeque<OsString> = VecDeque::new();
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            other => pending.push_back(other.as_os_str().to_owned()),
        }
    }
    let mut links = 0;
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
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_SYMLINKS {
                    return None;
                }
                let target = std::fs::read_link(&next).ok()?;
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
            // Existing entries, missing ones, and entries jp may not inspect
            // (which the tool, running as the same user, cannot traverse
            // either) are kept as written.
            _ => out = next,
        }
    }
    Some(out)
}

#[cfg(test)]
#[path = "path_tests.rs"]
mod tests;
