//! `providers.llm.anthropic.cache`: on unless a layer turns it off (issue
//! 23).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_config::load::{LoadOptions, load};

fn options(dir: &tempfile::TempDir) -> LoadOptions {
    LoadOptions {
        cwd: dir.path().join("project"),
        user_config: Some(dir.path().join("xdg/jp/config.toml")),
        // The workspace's own file is what these tests are about.
        trust: jp_config::trust::WorkspaceTrust::Trusted,
        ..LoadOptions::default()
    }
}

fn workspace(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("project/.jp")).unwrap();
    std::fs::write(dir.path().join("project/.jp/config.toml"), config).unwrap();
    dir
}

fn cache(options: &LoadOptions) -> bool {
    match load(options) {
        Ok(loaded) => loaded.config.providers.llm.anthropic.cache,
        Err(e) => panic!("config should load:\n{e}"),
    }
}

#[test]
fn caching_is_on_by_default() {
    let dir = workspace("");
    assert!(cache(&options(&dir)));
}

#[test]
fn a_file_or_cfg_turns_caching_off_and_on() {
    let dir = workspace("[providers.llm.anthropic]\ncache = false\n");
    let mut options = options(&dir);
    assert!(!cache(&options));
    options.assignments = vec!["providers.llm.anthropic.cache=true".into()];
    assert!(cache(&options));
}

#[test]
fn a_value_that_is_no_bool_is_an_error() {
    let dir = workspace("[providers.llm.anthropic]\ncache = \"yes\"\n");
    let error = load(&options(&dir)).expect_err("a string is no bool");
    assert!(
        error.to_string().contains("providers.llm.anthropic.cache"),
        "{error}"
    );
}
