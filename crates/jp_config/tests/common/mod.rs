//! A temporary workspace (`project/`, with the user's config under
//! `xdg/`) that the config tests load for real.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use jp_config::load::{LoadOptions, Loaded, load};
use jp_config::trust::WorkspaceTrust;

pub struct Fixture {
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project/.jp")).unwrap();
        Self { dir }
    }

    /// Writes `text` to `rel`, relative to the temporary directory.
    pub fn write(&self, rel: &str, text: &str) {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Loading from the project, with `trust` for its files.
    pub fn options(&self, trust: WorkspaceTrust) -> LoadOptions {
        LoadOptions {
            cwd: self.dir.path().join("project"),
            user_config: Some(self.dir.path().join("xdg/jp/config.toml")),
            trust,
            ..LoadOptions::default()
        }
    }

    /// The config, which must load.
    pub fn load(&self, trust: WorkspaceTrust) -> Loaded {
        match load(&self.options(trust)) {
            Ok(loaded) => loaded,
            Err(e) => panic!("config should load:\n{e}"),
        }
    }

    /// The errors of a config that must not load (trusted), paths
    /// relative to the temporary directory.
    pub fn errors(&self) -> Vec<String> {
        let err = load(&self.options(WorkspaceTrust::Trusted)).expect_err("config should not load");
        let root = format!("{}/", self.dir.path().display());
        err.errors
            .iter()
            .map(|d| d.to_string().replace(&root, ""))
            .collect()
    }
}
