#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt as _;
use std::process::Stdio;

use super::{not_run, user_command};

#[test]
fn a_quoted_program_path_with_spaces_runs_with_its_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("My Editor");
    std::fs::create_dir(&bin).unwrap();
    let program = bin.join("edit");
    std::fs::write(
        &program,
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let line = format!("'{}' --wait", program.display());
    let status = user_command(&line)
        .arg("/tmp/a file.json")
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(not_run(status), None);
    assert_eq!(
        std::fs::read_to_string(bin.join("args")).unwrap(),
        "--wait\n/tmp/a file.json\n"
    );
}

#[test]
fn an_empty_editor_variable_counts_as_unset() {
    let line = |visual: Option<&str>, editor: Option<&str>| {
        super::editor_line(visual.map(str::to_owned), editor.map(str::to_owned))
    };
    assert_eq!(line(Some(""), Some("nano")), "nano");
    assert_eq!(line(Some("  "), Some(" ")), "vi");
    assert_eq!(line(None, None), "vi");
    assert_eq!(line(Some("code --wait"), Some("nano")), "code --wait");
}

#[test]
fn a_plain_name_not_on_the_path_is_missing_before_anything_runs() {
    assert_eq!(
        super::missing_program("jp-test-no-such-pager -R"),
        Some("jp-test-no-such-pager")
    );
    assert_eq!(super::missing_program("sh -c true"), None);
    // A builtin is no program on the PATH, and runs all the same.
    assert_eq!(super::missing_program("exec true"), None);
    // Paths, quoting and shell syntax are left to the shell.
    assert_eq!(super::missing_program("'/opt/My Editor/edit' -w"), None);
    assert_eq!(super::missing_program("/no/such/editor"), None);
    assert_eq!(super::missing_program("$HOME/bin/edit"), None);
}

#[test]
fn a_program_that_is_not_there_is_told_apart_from_one_that_failed() {
    let run = |line: &str| {
        user_command(line)
            .arg("file")
            .stderr(Stdio::null())
            .status()
            .unwrap()
    };
    assert_eq!(
        not_run(run("jp-test-no-such-editor --wait")),
        Some("no such command (the shell's exit status 127)")
    );
    let failed = run("false");
    assert!(!failed.success());
    assert_eq!(not_run(failed), None);
}
