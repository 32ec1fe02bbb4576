#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use super::readable;

/// A home with a workspace, a secret directory, a secret file, a file
/// beside them and a link to the secret directory.
fn home() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(dir.path()).unwrap().join("home");
    for sub in ["project/src", ".ssh", ".config/jp", ".config/nvim"] {
        std::fs::create_dir_all(home.join(sub)).unwrap();
    }
    for file in [
        ".netrc",
        ".bashrc",
        ".ssh/id_ed25519",
        ".config/jp/trust.json",
    ] {
        std::fs::write(home.join(file), "x").unwrap();
    }
    std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
    (dir, home)
}

/// The grants beneath `home`, relative to it, sorted.
fn beneath(grants: &[PathBuf], home: &Path) -> Vec<String> {
    let mut names: Vec<String> = grants
        .iter()
        .filter_map(|p| p.strip_prefix(home).ok())
        .map(|p| p.display().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn every_entry_on_the_way_is_granted_but_the_denied_ones_and_links() {
    let (_dir, home) = home();
    let deny = [
        home.join(".ssh"),
        home.join(".netrc"),
        home.join(".config/jp"),
    ];
    let grants = readable(&deny, &home.join("project"));
    assert_eq!(
        beneath(&grants, &home),
        [".bashrc", ".config/nvim", "project"]
    );
    // Nothing granted holds a denied path, so no grant reaches into one.
    for grant in &grants {
        assert!(
            deny.iter().all(|d| !d.starts_with(grant)),
            "{} holds a denied path",
            grant.display()
        );
    }
    // The way itself is walked from `/`: `/` is never granted whole.
    assert!(!grants.contains(&PathBuf::from("/")));
    assert!(grants.contains(&PathBuf::from("/usr")) || !Path::new("/usr").exists());
}

#[test]
fn a_denied_link_denies_what_it_points_to() {
    let (_dir, home) = home();
    let grants = readable(&[home.join("keys")], &home.join("project"));
    assert_eq!(
        beneath(&grants, &home),
        [".bashrc", ".config", ".netrc", "project"]
    );
}

#[test]
fn a_path_inside_another_denied_one_and_a_missing_one_change_nothing() {
    let (_dir, home) = home();
    let alone = readable(&[home.join(".config")], &home.join("project"));
    let with_inner = readable(
        &[
            home.join(".config"),
            home.join(".config/jp"),
            home.join(".aws"),
        ],
        &home.join("project"),
    );
    assert_eq!(beneath(&alone, &home), beneath(&with_inner, &home));
    assert_eq!(
        beneath(&alone, &home),
        [".bashrc", ".netrc", ".ssh", "project"]
    );
}

#[test]
fn a_denied_path_holding_the_workspace_is_not_denied() {
    let (_dir, home) = home();
    assert_eq!(
        readable(std::slice::from_ref(&home), &home.join("project")),
        [PathBuf::from("/")]
    );
    assert_eq!(readable(&[], &home), [PathBuf::from("/")]);
}
