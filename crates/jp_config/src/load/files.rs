//! Where config files are: the user's, the workspace's, and those a
//! file's `extends` names.

use std::path::{Path, PathBuf};

/// The name of the workspace directory that holds `config.toml`.
pub const WORKSPACE_DIR: &str = ".jp";

/// The user config file: `$XDG_CONFIG_HOME/jp/config.toml`, else
/// `$HOME/.config/jp/config.toml`. `None` when neither variable is set.
#[must_use]
pub fn user_config_file(env: &[(String, String)]) -> Option<PathBuf> {
    let var = |name: &str| {
        env.iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| PathBuf::from(v))
    };
    let base = var("XDG_CONFIG_HOME").or_else(|| var("HOME").map(|home| home.join(".config")))?;
    Some(base.join("jp").join("config.toml"))
}

/// A path for messages: relative to `cwd` when it is below it, else as is.
#[must_use]
pub fn display_path(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd)
        .map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

/// The nearest directory at or above `cwd` that has a `.jp` directory.
#[must_use]
pub fn find_workspace_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|dir| dir.join(WORKSPACE_DIR).is_dir())
        .map(Path::to_path_buf)
}

/// The workspace config file of a workspace root.
#[must_use]
pub fn workspace_config_file(root: &Path) -> PathBuf {
    root.join(WORKSPACE_DIR).join("config.toml")
}

/// Why `path`, named as a config file, cannot be read as one: it is not
/// there, or it is something other than a regular file (a directory, a
/// device, a pipe), which is not read: it could block or never end.
pub(super) fn not_a_file(path: &Path) -> String {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            format!("{} is a directory, not a config file", path.display())
        }
        Ok(_) => format!(
            "{} is not a regular file (a device or a pipe?); config files are read only from regular files",
            path.display()
        ),
        Err(_) => format!("no such file: {}", path.display()),
    }
}

/// Whether an `extends` entry is a glob rather than a file name.
pub(super) fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '['])
}

/// The most directory entries one `extends` glob visits before it gives
/// up with an error: a glob over a large or hostile tree (a repository can
/// commit any tree) must not hold up every command.
pub const MAX_GLOB_ENTRIES: usize = 10_000;

/// The directories config files are never read from: pseudo-file systems
/// whose "files" block (`/proc/kmsg`), never end (`/dev/zero`) or are not
/// configuration at all.
pub const REFUSED_DIRS: [&str; 3] = ["/proc", "/sys", "/dev"];

/// Why `path` is refused as a config file because it is (or resolves to
/// a place) under one of [`REFUSED_DIRS`], if it is.
pub(super) fn refused_dir(path: &Path) -> Option<String> {
    let under = |p: &Path| {
        REFUSED_DIRS
            .iter()
            .find(|dir| p.starts_with(dir))
            .map(|dir| (*dir).to_owned())
    };
    let resolved = std::fs::canonicalize(path).ok();
    let dir = under(path).or_else(|| resolved.as_deref().and_then(under))?;
    Some(format!(
        "{} is under {dir}; config files are never read from {}",
        path.display(),
        REFUSED_DIRS.join(", ")
    ))
}

/// Expands one `extends` entry into files, sorted. A pattern without glob
/// characters must name an existing file.
///
/// A glob is matched by walking the directory below its literal part
/// without following symbolic links to directories (a committed link back
/// to `.` would make the walk exponential), at most as deep as the pattern
/// reaches (any depth with `**`), visiting at most [`MAX_GLOB_ENTRIES`]
/// entries. A link to a file that the pattern matches is a match.
pub(super) fn expand(base: &Path, pattern: &str) -> Result<Vec<PathBuf>, String> {
    let joined = base.join(pattern);
    if !is_glob(pattern) {
        return if joined.is_file() {
            Ok(vec![joined])
        } else {
            Err(not_a_file(&joined))
        };
    }
    let text = joined.to_str().ok_or_else(|| {
        format!(
            "the pattern `{pattern}` is not valid UTF-8 once joined to {}",
            base.display()
        )
    })?;
    let glob = glob::Pattern::new(text).map_err(|e| format!("invalid glob `{pattern}`: {e}"))?;
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };

    // Walk from the deepest directory the pattern names literally.
    let mut root = PathBuf::new();
    let mut rest = Vec::new();
    for component in joined.components() {
        let part = component.as_os_str().to_string_lossy();
        if rest.is_empty() && !is_glob(&part) {
            root.push(component);
        } else {
            rest.push(part.into_owned());
        }
    }
    let max_depth = if rest.iter().any(|part| part.contains("**")) {
        usize::MAX
    } else {
        rest.len()
    };
    if !root.is_dir() {
        return Ok(Vec::new());
    }

    let walk = walkdir::WalkDir::new(&root)
        .follow_links(false)
        .min_depth(1)
        .max_depth(max_depth);
    let mut files = Vec::new();
    for (visited, entry) in walk.into_iter().enumerate() {
        if visited >= MAX_GLOB_ENTRIES {
            return Err(format!(
                "the glob `{pattern}` reaches more than {MAX_GLOB_ENTRIES} entries under {} \
                 (symbolic links to directories are not followed); name the files or a \
                 narrower pattern",
                root.display()
            ));
        }
        let entry = entry.map_err(|e| {
            let path = e.path().map_or_else(|| root.clone(), Path::to_path_buf);
            format!("cannot read {}: {e}", path.display())
        })?;
        let path = entry.path();
        if !glob.matches_path_with(path, options) {
            continue;
        }
        let is_file = if entry.path_is_symlink() {
            path.is_file()
        } else {
            entry.file_type().is_file()
        };
        if is_file {
            files.push(path.to_path_buf());
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
