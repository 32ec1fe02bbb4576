//! Normalising a path by its text alone, without asking the file system.

use std::path::{Component, Path, PathBuf};

/// Removes `.` components, repeated and trailing separators, and resolves
/// `..` against the preceding component, without touching the file system.
/// A `..` at the start of a relative path is kept; at the root of an
/// absolute path it is dropped (`/..` is `/`).
///
/// The result never holds `.`; it holds `..` only at the start of a
/// relative path; an absolute path stays absolute and keeps its root; and
/// normalising it again changes nothing. Because links are not followed,
/// `link/..` is the directory holding `link`, which is not where the kernel
/// would go when `link` points elsewhere: callers that open files resolve
/// links themselves.
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

#[cfg(test)]
#[path = "lexical_tests.rs"]
mod tests;
