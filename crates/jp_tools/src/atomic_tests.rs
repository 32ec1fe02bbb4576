#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn create_new_never_overwrites_and_leaves_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    create_new(&path, b"one").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one");
    let err = create_new(&path, b"two").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one");
    assert_eq!(names(dir.path()), ["a.txt"]);
}

#[cfg(unix)]
#[test]
fn replace_sets_the_permissions() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.sh");
    std::fs::write(&path, "old").unwrap();
    replace(&path, b"new", Permissions::from_mode(0o751)).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o751);
    assert_eq!(names(dir.path()), ["run.sh"]);
}

#[cfg(unix)]
#[test]
fn create_new_gives_the_permissions_of_any_new_file_not_private_ones() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.txt");
    std::fs::write(&plain, "x").unwrap();
    let path = dir.path().join("a.txt");
    create_new(&path, b"one").unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), mode(&plain));
}
