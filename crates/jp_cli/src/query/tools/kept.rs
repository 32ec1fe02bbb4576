//! The workspace's config files, kept as they were around each tool run.
//!
//! The kernel sandbox lets a tool write anywhere in the workspace, and the
//! workspace holds jp's own config (`.jp/config.toml` and the files beside
//! it that it extends). A tool that rewrote them would change jp's config
//! behind the grant system (RFD 078: a tool changes config only through
//! its `access.config` grants, which never reach a sandbox or a policy
//! outside them). Landlock only grants, so it cannot carve `.jp/` out of
//! the workspace; jp instead keeps the bytes of each `.jp/*.toml` before
//! the run and puts back what the run changed, made or removed ([`Kept`]).

use std::path::{Path, PathBuf};

/// The most bytes one kept file may have: a config file is small; a
/// larger one is left alone rather than held in memory.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The `.jp/*.toml` files of a workspace, as they were when taken.
#[derive(Debug)]
pub struct Kept {
    dir: PathBuf,
    /// Every config file there was, kept or not.
    seen: Vec<PathBuf>,
    /// Those kept, with their bytes.
    files: Vec<(PathBuf, Vec<u8>)>,
}

impl Kept {
    /// The config files of the workspace at `root` as they are now.
    pub fn take(root: &Path) -> Self {
        let dir = root.join(jp_config::load::WORKSPACE_DIR);
        let seen = config_files(&dir);
        let files = seen
            .iter()
            .filter(|path| {
                std::fs::symlink_metadata(path)
                    .is_ok_and(|meta| meta.is_file() && meta.len() <= MAX_FILE_BYTES)
            })
            .filter_map(|path| std::fs::read(path).ok().map(|bytes| (path.clone(), bytes)))
            .collect();
        Self { dir, seen, files }
    }

    /// Puts back every file that differs from when it was taken, removes
    /// a config file made since, and says which (workspace-relative, such
    /// as `.jp/config.toml`); empty when nothing changed.
    pub fn restore(&self) -> Vec<String> {
        let mut restored = Vec::new();
        let name = |path: &Path| {
            let file = path.file_name().map(|f| f.to_string_lossy().into_owned());
            format!(
                "{}/{}",
                jp_config::load::WORKSPACE_DIR,
                file.unwrap_or_default()
            )
        };
        for (path, bytes) in &self.files {
            let same = std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file())
                && std::fs::read(path).is_ok_and(|now| now == *bytes);
            if !same {
                // A link or directory put in its place goes first.
                let _ = std::fs::remove_dir_all(path).or_else(|_| std::fs::remove_file(path));
                match std::fs::write(path, bytes) {
                    Ok(()) => restored.push(name(path)),
                    Err(error) => tracing::warn!(
                        path = %path.display(), %error,
                        "cannot put back the workspace config a tool changed"
                    ),
                }
            }
        }
        for path in config_files(&self.dir) {
            if !self.seen.contains(&path) && std::fs::remove_file(&path).is_ok() {
                restored.push(name(&path));
            }
        }
        restored
    }
}

/// The `.toml` files directly in `dir` (the workspace's `.jp`), sorted.
fn config_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    files
}
