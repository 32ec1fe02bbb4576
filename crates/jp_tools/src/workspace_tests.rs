#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    (dir, ws)
}

fn rel(ws: &Workspace, raw: &str) -> String {
    ws.resolve(raw).unwrap().shown
}

#[test]
fn relative_paths_are_normalized() {
    let (_dir, ws) = workspace();
    assert_eq!(rel(&ws, "src/lib.rs"), "src/lib.rs");
    assert_eq!(rel(&ws, "./src//lib.rs"), "src/lib.rs");
    assert_eq!(rel(&ws, "src/../README.md"), "README.md");
    assert_eq!(rel(&ws, "src/new/deeper/x.rs"), "src/new/deeper/x.rs");
    assert_eq!(rel(&ws, "."), ".");
    let target = ws.resolve("src/lib.rs").unwrap();
    assert_eq!(target.abs, ws.root().join("src/lib.rs"));
}

#[test]
fn absolute_paths_inside_the_root_become_relative() {
    let (dir, ws) = workspace();
    let given = format!("{}/src/lib.rs", dir.path().display());
    assert_eq!(rel(&ws, &given), "src/lib.rs");
    let canonical = format!("{}/src/../Cargo.toml", ws.root().display());
    assert_eq!(rel(&ws, &canonical), "Cargo.toml");
}

#[test]
fn escapes_are_refused() {
    let (_dir, ws) = workspace();
    assert_eq!(
        ws.resolve("../x").unwrap_err(),
        "refused `../x`: it leads outside the workspace (`..` goes above the workspace root)"
    );
    assert_eq!(
        ws.resolve("src/../../x").unwrap_err(),
        "refused `src/../../x`: it leads outside the workspace (`..` goes above the workspace root)"
    );
    assert_eq!(
        ws.resolve("/etc/passwd").unwrap_err(),
        "refused `/etc/passwd`: it is an absolute path outside the workspace; use a path relative to the workspace root"
    );
    assert_eq!(
        ws.resolve("src/a\0b").unwrap_err(),
        "refused the path \"src/a\\0b\": a path cannot contain a NUL byte"
    );
    assert_eq!(
        ws.resolve("").unwrap_err(),
        "refused an empty path: name a file relative to the workspace root"
    );
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_workspace_are_refused() {
    let (dir, ws) = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("src/out")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret"),
        dir.path().join("secret-link"),
    )
    .unwrap();
    let out = outside.path().canonicalize().unwrap();
    assert_eq!(
        ws.resolve("src/out/secret").unwrap_err(),
        format!(
            "refused `src/out/secret`: `src/out/secret` leads to `{}/secret` through a symbolic link, outside the workspace",
            out.display()
        )
    );
    // Through a symlinked directory, even to a file that does not exist.
    assert_eq!(
        ws.resolve("src/out/new/file.rs").unwrap_err(),
        format!(
            "refused `src/out/new/file.rs`: `src/out` leads to `{}` through a symbolic link, outside the workspace",
            out.display()
        )
    );
    assert_eq!(
        ws.resolve("secret-link").unwrap_err(),
        format!(
            "refused `secret-link`: `secret-link` leads to `{}/secret` through a symbolic link, outside the workspace",
            out.display()
        )
    );
}

#[cfg(unix)]
#[test]
fn symlinks_inside_the_workspace_are_followed() {
    let (dir, ws) = workspace();
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    std::os::unix::fs::symlink("src", dir.path().join("code")).unwrap();
    assert_eq!(rel(&ws, "code/lib.rs"), "code/lib.rs");
}

#[cfg(unix)]
#[test]
fn a_broken_symlink_is_refused() {
    let (dir, ws) = workspace();
    std::os::unix::fs::symlink("/nonexistent/jp-target", dir.path().join("dangling")).unwrap();
    assert_eq!(
        ws.resolve("dangling/x").unwrap_err(),
        "refused `dangling/x`: `dangling` cannot be resolved (No such file or directory (os error 2)); it may be a symbolic link to something that does not exist"
    );
}

#[test]
fn the_root_must_exist() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone");
    assert_eq!(
        Workspace::open(&missing).unwrap_err(),
        format!(
            "cannot open the workspace root `{}`: No such file or directory (os error 2)",
            missing.display()
        )
    );
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    assert_eq!(
        Workspace::open(&file).unwrap_err(),
        format!("the workspace root `{}` is not a directory", file.display())
    );
    // A relative root is taken from the current directory.
    let here = Workspace::open(Path::new(".")).unwrap();
    assert_eq!(
        here.root(),
        std::env::current_dir().unwrap().canonicalize().unwrap()
    );
}
