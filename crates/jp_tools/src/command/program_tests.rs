#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt as _;

use super::*;

fn write(path: &Path, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_name_is_found_in_absolute_path_directories_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join("bin/tool"), 0o755);
    write(&root.join("tool"), 0o755);
    let path_var = std::env::join_paths([root.join("bin")]).unwrap();
    assert_eq!(
        resolve("tool", root, ".", Some(&path_var)),
        Ok(root.join("bin/tool"))
    );
    // `.` and an empty entry mean the working directory: skipped.
    let relative = std::env::join_paths([Path::new("."), Path::new("")]).unwrap();
    assert_eq!(
        resolve("tool", root, ".", Some(&relative)),
        Err("cannot run `tool`: no executable file of that name in PATH's directories".to_owned())
    );
    assert_eq!(
        resolve("tool", root, ".", None),
        Err("cannot run `tool`: no executable file of that name in PATH's directories".to_owned())
    );
}

#[test]
fn a_file_that_cannot_be_run_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join("a/tool"), 0o644);
    write(&root.join("b/tool"), 0o755);
    std::fs::create_dir_all(root.join("c/tool")).unwrap();
    let path_var = std::env::join_paths([root.join("c"), root.join("a")]).unwrap();
    assert_eq!(
        resolve("tool", root, ".", Some(&path_var)),
        Err(format!(
            "cannot run `tool`: no executable file of that name in PATH's directories (`{}` is a directory)",
            root.join("c/tool").display()
        ))
    );
    // A later directory with an executable one wins, as with execvp.
    let path_var = std::env::join_paths([root.join("a"), root.join("b")]).unwrap();
    assert_eq!(
        resolve("tool", root, ".", Some(&path_var)),
        Ok(root.join("b/tool"))
    );
}

#[test]
fn a_path_is_taken_from_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join("sub/run.sh"), 0o755);
    write(&root.join("sub/data.txt"), 0o644);
    let sub = root.join("sub");
    assert_eq!(
        resolve("./run.sh", &sub, "sub", None),
        Ok(sub.join("./run.sh"))
    );
    assert_eq!(
        resolve("./data.txt", &sub, "sub", None),
        Err("cannot run `./data.txt`: it is not executable (no execute permission)".to_owned())
    );
    assert_eq!(
        resolve("./missing", &sub, "sub", None),
        Err(
            "cannot run `./missing`: no such file (relative paths are taken from `sub`)".to_owned()
        )
    );
    assert_eq!(
        resolve("../sub", &sub, "sub", None),
        Err("cannot run `../sub`: it is a directory".to_owned())
    );
}

#[test]
fn the_programs_path_loses_relative_directories() {
    assert_eq!(absolute_path_var(OsStr::new("/usr/bin:/bin")), None);
    assert_eq!(
        absolute_path_var(OsStr::new(".:/usr/bin::bin:/bin")),
        Some("/usr/bin:/bin".into())
    );
}
