#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_tool::Outcome;
use serde_json::json;

use crate::test_support::{Fixture, error};

fn create(f: &Fixture, path: &str, content: &str) -> Outcome {
    f.run(
        "fs_create_file",
        json!({ "path": path, "content": content }),
    )
}

#[test]
fn creates_a_file_and_its_directories() {
    let f = Fixture::new();
    assert_eq!(
        create(&f, "src/deep/er/lib.rs", "pub fn a() {}\n\npub fn b() {}\n"),
        Outcome::success("created src/deep/er/lib.rs (3 lines)")
    );
    assert_eq!(
        f.read("src/deep/er/lib.rs"),
        "pub fn a() {}\n\npub fn b() {}\n"
    );
    assert_eq!(
        create(&f, "./notes//todo.md", "one line, no newline"),
        Outcome::success("created notes/todo.md (1 line)")
    );
    assert_eq!(
        create(&f, "empty", ""),
        Outcome::success("created empty (empty)")
    );
    // Nothing else was left behind (no temporary files).
    assert_eq!(
        f.tree(),
        [
            "empty",
            "notes",
            "notes/todo.md",
            "src",
            "src/deep",
            "src/deep/er",
            "src/deep/er/lib.rs"
        ]
    );
}

#[cfg(unix)]
#[test]
fn a_new_file_gets_the_usual_permissions() {
    use std::os::unix::fs::PermissionsExt as _;
    let f = Fixture::new();
    create(&f, "a.txt", "a");
    std::fs::write(f.path("b.txt"), "b").unwrap();
    let mode = |name: &str| {
        std::fs::metadata(f.path(name))
            .unwrap()
            .permissions()
            .mode()
    };
    assert_eq!(mode("a.txt"), mode("b.txt"));
}

#[test]
fn refuses_to_overwrite() {
    let f = Fixture::new();
    f.write("src/lib.rs", "original");
    assert_eq!(
        create(&f, "src/lib.rs", "new"),
        error("cannot create `src/lib.rs`: it already exists; use fs_modify_file to change it")
    );
    assert_eq!(f.read("src/lib.rs"), "original");
    assert_eq!(
        create(&f, "src", "new"),
        error("cannot create `src`: a directory with that name exists")
    );
    assert_eq!(
        create(&f, "docs/", "new"),
        error(
            "cannot create `docs/`: the path ends with `/`, so it names a directory; fs_create_file creates files"
        )
    );
    assert_eq!(
        create(&f, ".", "x"),
        error("cannot create `.`: it is the workspace root")
    );
    assert_eq!(f.tree(), ["src", "src/lib.rs"]);
}

#[test]
fn a_file_in_the_way_of_a_directory() {
    let f = Fixture::new();
    f.write("README", "");
    assert_eq!(
        create(&f, "README/x.md", "x"),
        error(
            "cannot create `README/x.md`: cannot create the directory `README`: File exists (os error 17)"
        )
    );
}

#[test]
fn confinement() {
    let f = Fixture::new();
    assert_eq!(
        create(&f, "src/../../escape.rs", "x"),
        error(
            "refused `src/../../escape.rs`: it leads outside the workspace (`..` goes above the workspace root)"
        )
    );
    assert_eq!(
        create(&f, "a\0.rs", "x"),
        error("refused the path \"a\\0.rs\": a path cannot contain a NUL byte")
    );
    assert_eq!(f.tree(), Vec::<String>::new());
}

#[cfg(unix)]
#[test]
fn refuses_to_write_through_a_symlink_out_of_the_workspace() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), f.path("vendor")).unwrap();
    assert_eq!(
        create(&f, "vendor/new/x.rs", "x"),
        error(format!(
            "refused `vendor/new/x.rs`: `vendor` leads to `{}` through a symbolic link, outside the workspace",
            outside.path().canonicalize().unwrap().display()
        ))
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}
