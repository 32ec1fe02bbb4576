//! What the tools' unit tests share: a trusted workspace with a config of
//! their own, and a printer that shows nothing.

#![allow(clippy::unwrap_used)]

use jp_config::AppConfig;
use jp_config::load::{LoadOptions, load};

use jp_term::printer::Printer;

/// A temporary workspace whose `.jp/config.toml` is `config`, trusted, and
/// the config it loads to. The workspace lives as long as the directory.
pub fn workspace(config: &str) -> (tempfile::TempDir, AppConfig) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".jp")).unwrap();
    std::fs::write(dir.path().join(".jp/config.toml"), config).unwrap();
    let loaded = load(&LoadOptions {
        cwd: dir.path().to_path_buf(),
        trust: jp_config::trust::WorkspaceTrust::Trusted,
        ..LoadOptions::default()
    })
    .unwrap();
    (dir, loaded.config)
}

/// A printer whose output goes nowhere.
pub fn quiet_printer() -> Printer {
    Printer::new(
        Box::new(std::io::sink()),
        false,
        Box::new(std::io::sink()),
        false,
    )
}
