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

/// Expands one `extends` entry into files, sorted. A pattern without glob
/// characters must name an existing file.
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
    let paths = glob::glob(text).map_err(|e| format!("invalid glob `{pattern}`: {e}"))?;
    let mut files = Vec::new();
    for entry in paths {
        let path =
            entry.map_err(|e| format!("cannot read {}: {}", e.path().display(), e.error()))?;
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}
