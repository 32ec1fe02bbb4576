#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_tool::Outcome;
use serde_json::json;

use crate::test_support::{Fixture, error};

fn delete(f: &Fixture, path: &str) -> Outcome {
    f.run("fs_delete_file", json!({ "path": path }))
}

#[test]
fn deletes_a_file() {
    let f = Fixture::new();
    f.write("src/old.rs", "x");
    f.write("src/lib.rs", "x");
    assert_eq!(
        delete(&f, "./src/old.rs"),
        Outcome::success("deleted src/old.rs")
    );
    assert_eq!(f.tree(), ["src", "src/lib.rs"]);
}

#[test]
fn refuses_directories_and_missing_files() {
    let f = Fixture::new();
    f.write("src/lib.rs", "x");
    assert_eq!(
        delete(&f, "src"),
        error("cannot delete `src`: it is a directory; fs_delete_file deletes only files")
    );
    assert_eq!(
        delete(&f, "src/gone.rs"),
        error("cannot delete `src/gone.rs`: no such file")
    );
    assert_eq!(
        delete(&f, "."),
        error("cannot delete `.`: it is the workspace root")
    );
    assert_eq!(
        delete(&f, "src/.."),
        error("cannot delete `.`: it is the workspace root")
    );
    assert_eq!(f.tree(), ["src", "src/lib.rs"]);
}

#[cfg(unix)]
#[test]
fn a_symlink_is_deleted_not_its_target() {
    let f = Fixture::new();
    f.write("src/lib.rs", "x");
    std::os::unix::fs::symlink("src/lib.rs", f.path("link.rs")).unwrap();
    assert_eq!(
        delete(&f, "link.rs"),
        Outcome::success("deleted link.rs (a symbolic link; what it pointed to is unchanged)")
    );
    assert_eq!(f.tree(), ["src", "src/lib.rs"]);
}

#[cfg(unix)]
#[test]
fn confinement() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("keep"), "x").unwrap();
    std::os::unix::fs::symlink(outside.path(), f.path("ext")).unwrap();
    assert_eq!(
        delete(&f, "ext/keep"),
        error(format!(
            "refused `ext/keep`: `ext/keep` leads to `{}/keep` through a symbolic link, outside the workspace",
            outside.path().canonicalize().unwrap().display()
        ))
    );
    assert!(outside.path().join("keep").exists());
    assert_eq!(
        delete(&f, "../keep"),
        error(
            "refused `../keep`: it leads outside the workspace (`..` goes above the workspace root)"
        )
    );
}
