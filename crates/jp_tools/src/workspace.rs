//! Keeping every path a tool touches inside the workspace.
//!
//! A path from the model is refused when it contains NUL, is empty, is an
//! absolute path outside the workspace, climbs above the root with `..`, or
//! reaches outside the workspace through a symbolic link. The last check
//! resolves the deepest part of the path that exists (every symlink on it)
//! and requires the result to stay under the canonical root; the part that
//! does not exist yet cannot hold a symlink.
//!
//! The file a tool opens is the one jp's policy judged and the question to
//! the user named: the path resolved the way the kernel resolves it from
//! the workspace root ([`jp_policy::path::resolve_path`]), where a
//! `..` after a symbolic link goes to the parent of the link's *target*.
//! Removing `..` first would open another file (`k/../notes.txt` with `k ->
//! ~/.ssh/sub` is `~/.ssh/notes.txt` to the kernel, `notes.txt` lexically),
//! so the tools never do: they open the resolved directory joined with the
//! last name, and refuse the path when that leads outside the workspace.
//!
//! The check and the later file operation are separate system calls, so a
//! process that swaps a directory for a symlink between them could still
//! redirect the operation. The tools defend against a model writing
//! surprising paths, not against a hostile process already running in the
//! workspace.

use std::path::{Component, Path, PathBuf};

use jp_fs::normalize_lexically;
use jp_policy::path::{
    NulInPath, PathValue, Unresolvable, Workspace as PolicyWorkspace, resolve_path,
};

/// The workspace root a tool works in.
#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    /// The root as jp sent it (lexically normalized), to accept absolute
    /// paths written against it.
    given: PathBuf,
    /// The root with every symlink resolved.
    root: PathBuf,
    /// The root as jp's policies resolve paths in it.
    policy: PolicyWorkspace,
}

/// A path inside the workspace, checked.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The path the tool opens, relative to the root (empty for the root):
    /// its directory with every symbolic link resolved, then its last name.
    pub rel: PathBuf,
    /// The root joined with `rel`.
    pub abs: PathBuf,
    /// The path for messages: `src/lib.rs`, or `.` for the root. The path
    /// as written, normalized, unless a `..` in it follows a symbolic
    /// link; then `rel`, the file it opens.
    pub shown: String,
}

impl Workspace {
    /// The workspace at `root`, an existing directory. jp always sends an
    /// absolute root; a relative one (a request written by hand) is taken
    /// from the current directory.
    pub(crate) fn open(root: &Path) -> Result<Self, String> {
        let cannot_open =
            |e: std::io::Error| format!("cannot open the workspace root `{}`: {e}", root.display());
        let given = std::path::absolute(root).map_err(cannot_open)?;
        let canonical = root.canonicalize().map_err(cannot_open)?;
        if !canonical.is_dir() {
            return Err(format!(
                "the workspace root `{}` is not a directory",
                root.display()
            ));
        }
        Ok(Self {
            given: normalize_lexically(&given),
            policy: PolicyWorkspace::new(&canonical),
            root: canonical,
        })
    }

    /// The root with every symlink resolved.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Checks `raw`, a path the model wrote, and places it in the
    /// workspace.
    ///
    /// # Errors
    ///
    /// A message saying which path was refused and why.
    pub(crate) fn resolve(&self, raw: &str) -> Result<Target, String> {
        if raw.contains('\0') {
            return Err(format!(
                "refused the path {raw:?}: a path cannot contain a NUL byte"
            ));
        }
        if raw.is_empty() {
            return Err(
                "refused an empty path: name a file relative to the workspace root".to_owned(),
            );
        }
        let path = Path::new(raw);
        let relative = if path.is_absolute() {
            let path = normalize_lexically(path);
            match path
                .strip_prefix(&self.root)
                .or_else(|_| path.strip_prefix(&self.given))
            {
                Ok(rel) => rel.to_path_buf(),
                Err(_) => {
                    return Err(format!(
                        "refused `{raw}`: it is an absolute path outside the workspace; use a path relative to the workspace root"
                    ));
                }
            }
        } else {
            path.to_path_buf()
        };

        // Normalized, a relative path that climbs above its start begins
        // with `..`; one with a root (`\\x`, `C:x` on Windows) keeps it.
        let rel = normalize_lexically(&relative);
        match rel.components().next() {
            Some(Component::ParentDir) => {
                return Err(format!(
                    "refused `{raw}`: it leads outside the workspace (`..` goes above the workspace root)"
                ));
            }
            Some(Component::RootDir | Component::Prefix(_)) => {
                return Err(format!(
                    "refused `{raw}`: it is not a path inside the workspace"
                ));
            }
            Some(Component::Normal(_) | Component::CurDir) | None => {}
        }

        self.check_links(raw, &self.root.join(&rel))?;
        let written = Path::new(raw);
        let (opened, ambiguous) = match self.opened(raw) {
            // Without a `..`, the path as written and normalized are one
            // file, which `check_links` found inside: a component jp
            // cannot inspect (a file used as a directory, no permission)
            // is left to the operation to report, in its own words.
            Err(Unopened::Inaccessible(_))
                if !written.components().any(|c| c == Component::ParentDir) =>
            {
                (rel.clone(), false)
            }
            Err(Unopened::Inaccessible(message) | Unopened::Refused(message)) => {
                return Err(message);
            }
            Ok(opened) => opened,
        };
        Ok(Target {
            shown: show(if ambiguous { &opened } else { &rel }),
            abs: self.root.join(&opened),
            rel: opened,
        })
    }

    /// The path the kernel opens for `raw` from the root, relative to the
    /// root: its directory resolved (every link followed, `..` applied to
    /// where the links led), then its last name, which is left for the
    /// operation to follow or not (deleting a link deletes the link). Also
    /// whether a `..` follows a link, so that removing `..` first would
    /// name another file. Refused when the path, or its directory, leads
    /// outside the workspace or cannot be resolved.
    fn opened(&self, raw: &str) -> Result<(PathBuf, bool), Unopened> {
        let resolve = |raw: &str| -> Result<PathValue, Unopened> {
            resolve_path(raw, &self.policy).map_err(|NulInPath| {
                Unopened::Refused(format!(
                    "refused the path {raw:?}: a path cannot contain a NUL byte"
                ))
            })
        };
        let whole = resolve(raw)?;
        let inside = |value: &PathValue| -> Result<PathBuf, Unopened> {
            match &value.resolved {
                Ok(form) => form.relative().map(Path::to_path_buf).ok_or_else(|| {
                    Unopened::Refused(format!(
                        "refused `{raw}`: a `..` in it follows a symbolic link, so it leads to `{}`, outside the workspace",
                        form.absolute().display()
                    ))
                }),
                Err(why @ Unresolvable::Inaccessible { .. }) => {
                    Err(Unopened::Inaccessible(format!("refused `{raw}`: {why}")))
                }
                Err(why) => Err(Unopened::Refused(format!("refused `{raw}`: {why}"))),
            }
        };
        let whole_rel = inside(&whole)?;
        let path = Path::new(raw);
        let opened = match (path.components().next_back(), path.parent()) {
            (Some(Component::Normal(name)), Some(parent)) => {
                let parent = parent.to_str().unwrap_or_default();
                inside(&resolve(parent)?)?.join(name)
            }
            _ => whole_rel,
        };
        Ok((opened, whole.is_ambiguous()))
    }

    /// Resolves the deepest existing part of `abs` and checks that it stays
    /// under the root.
    fn check_links(&self, raw: &str, abs: &Path) -> Result<(), String> {
        // `abs` is under the root, which exists, so this finds something.
        let existing = abs
            .ancestors()
            .find(|p| std::fs::symlink_metadata(p).is_ok())
            .unwrap_or(&self.root);
        let shown_existing = show(existing.strip_prefix(&self.root).unwrap_or(existing));
        let resolved = existing.canonicalize().map_err(|e| {
            format!(
                "refused `{raw}`: `{shown_existing}` cannot be resolved ({e}); it may be a symbolic link to something that does not exist"
            )
        })?;
        if resolved.starts_with(&self.root) {
            Ok(())
        } else {
            Err(format!(
                "refused `{raw}`: `{shown_existing}` leads to `{}` through a symbolic link, outside the workspace",
                resolved.display()
            ))
        }
    }
}

/// Why [`Workspace::opened`] gives no path.
enum Unopened {
    /// A component could not be inspected (the message).
    Inaccessible(String),
    /// The path leads out, or cannot be resolved (the message).
    Refused(String),
}

/// `rel` with `/` between components, or `.` when it is empty.
pub(crate) fn show(rel: &Path) -> String {
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
