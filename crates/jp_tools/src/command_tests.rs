#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt as _;
use std::time::{Duration, Instant};

use jp_tool::Outcome;
use serde_json::json;

use crate::test_support::{Fixture, error};

fn run(f: &Fixture, arguments: serde_json::Value) -> Outcome {
    f.run("run_command", arguments)
}

#[test]
fn runs_a_program_with_its_arguments_as_given() {
    let f = Fixture::new();
    // No shell: `;`, `*` and `$HOME` reach the program as they are.
    assert_eq!(
        run(
            &f,
            json!({ "program": "echo", "args": ["a b", ";", "*", "$HOME"] })
        ),
        Outcome::success(
            "`echo \"a b\" \";\" \"*\" \"$HOME\"` exited with status 0\noutput (stdout and stderr interleaved):\na b ; * $HOME\n"
        )
    );
    assert_eq!(
        run(&f, json!({ "program": "true" })),
        Outcome::success("`true` exited with status 0\nno output")
    );
}

#[test]
fn stdout_and_stderr_are_interleaved_as_written() {
    let f = Fixture::new();
    assert_eq!(
        run(
            &f,
            json!({ "program": "sh", "args": ["-c", "echo out; echo err >&2; echo out again"] })
        ),
        Outcome::success(
            "`sh -c \"echo out; echo err >&2; echo out again\"` exited with status 0\noutput (stdout and stderr interleaved):\nout\nerr\nout again\n"
        )
    );
}

#[test]
fn a_failing_program_is_an_error_with_its_status_and_output() {
    let f = Fixture::new();
    assert_eq!(
        run(
            &f,
            json!({ "program": "sh", "args": ["-c", "echo failing >&2; exit 3"] })
        ),
        error(
            "`sh -c \"echo failing >&2; exit 3\"` exited with status 3\noutput (stdout and stderr interleaved):\nfailing\n"
        )
    );
    assert_eq!(
        run(&f, json!({ "program": "sh", "args": ["-c", "kill -9 $$"] })),
        error("`sh -c \"kill -9 $$\"` was killed by signal 9\nno output")
    );
}

#[test]
fn runs_in_the_root_or_in_cwd_inside_the_workspace() {
    let f = Fixture::new();
    f.write("sub/dir/a.txt", "");
    let root = f.root().canonicalize().unwrap();
    assert_eq!(
        run(&f, json!({ "program": "pwd" })),
        Outcome::success(format!(
            "`pwd` exited with status 0\noutput (stdout and stderr interleaved):\n{}\n",
            root.display()
        ))
    );
    assert_eq!(
        run(&f, json!({ "program": "ls", "cwd": "sub/dir" })),
        Outcome::success(
            "`ls` exited with status 0\noutput (stdout and stderr interleaved):\na.txt\n"
        )
    );
    assert_eq!(
        run(&f, json!({ "program": "ls", "cwd": "../" })),
        error("refused `../`: it leads outside the workspace (`..` goes above the workspace root)")
    );
    assert_eq!(
        run(&f, json!({ "program": "ls", "cwd": "/tmp" })),
        error(
            "refused `/tmp`: it is an absolute path outside the workspace; use a path relative to the workspace root"
        )
    );
    std::os::unix::fs::symlink("/tmp", f.path("out")).unwrap();
    assert_eq!(
        run(&f, json!({ "program": "ls", "cwd": "out" })),
        error(format!(
            "refused `out`: `out` leads to `{}` through a symbolic link, outside the workspace",
            std::path::Path::new("/tmp")
                .canonicalize()
                .unwrap()
                .display()
        ))
    );
    assert_eq!(
        run(&f, json!({ "program": "ls", "cwd": "sub/dir/a.txt" })),
        error("cannot run in `sub/dir/a.txt`: it is not a directory")
    );
    assert_eq!(
        run(&f, json!({ "program": "ls", "cwd": "missing" })),
        error("cannot run in `missing`: No such file or directory (os error 2)")
    );
}

#[test]
fn a_program_that_cannot_be_run_is_named() {
    let f = Fixture::new();
    assert_eq!(
        run(&f, json!({ "program": "no-such-program-jp" })),
        error(
            "cannot run `no-such-program-jp`: no executable file of that name in PATH's directories"
        )
    );
    f.write("script.sh", "#!/bin/sh\necho hi\n");
    assert_eq!(
        run(&f, json!({ "program": "./script.sh" })),
        error("cannot run `./script.sh`: it is not executable (no execute permission)")
    );
    std::fs::set_permissions(f.path("script.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        run(&f, json!({ "program": "./script.sh" })),
        Outcome::success(
            "`./script.sh` exited with status 0\noutput (stdout and stderr interleaved):\nhi\n"
        )
    );
    f.write("bad.sh", "#!/nonexistent/interpreter\n");
    std::fs::set_permissions(f.path("bad.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        run(&f, json!({ "program": "./bad.sh" })),
        error("cannot run `./bad.sh`: No such file or directory (os error 2)")
    );
}

#[test]
fn arguments_are_checked() {
    let f = Fixture::new();
    assert_eq!(run(&f, json!({})), error("missing argument `program`"));
    assert_eq!(
        run(&f, json!({ "program": "" })),
        error("argument `program` is empty: name the program to run, such as `git`")
    );
    assert_eq!(
        run(&f, json!({ "program": "echo", "args": "a b" })),
        error("argument `args` must be an array of strings")
    );
    assert_eq!(
        run(&f, json!({ "program": "echo", "args": ["a", "b\u{0}"] })),
        error("argument `args` element 1 contains a NUL byte, which no program can be given")
    );
    assert_eq!(
        run(&f, json!({ "program": "echo", "cwd": 3 })),
        error("argument `cwd` must be a string")
    );
    assert_eq!(
        run(&f, json!({ "program": "git\n/x", "args": ["status"] })),
        error(
            "argument `program` contains a control character (git\\n/x); name a program or directory without one"
        )
    );
    assert_eq!(
        run(&f, json!({ "program": "git", "cwd": "\n" })),
        error(
            "argument `cwd` contains a control character (\\n); name a program or directory without one"
        )
    );
    for bad in [json!(0), json!(-1), json!(1.5), json!("10")] {
        assert_eq!(
            run(&f, json!({ "program": "true", "timeout_secs": bad })),
            error(format!(
                "argument `timeout_secs` must be a whole number of seconds from 1 to 600, not {bad}"
            ))
        );
    }
    assert_eq!(
        run(&f, json!({ "program": "true", "timeout_secs": 601 })),
        Outcome::success(
            "`true` exited with status 0 (timeout_secs 601 was lowered to the maximum, 600)\nno output"
        )
    );
}

/// Whether process `pid` is running (exists and is not a zombie).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, rest) = stat.rsplit_once(')')?;
            rest.split_ascii_whitespace().next().map(str::to_owned)
        })
        .is_some_and(|state| state != "Z" && state != "X")
}

/// Whether `pid` is still running 2 s from now: a SIGKILL is delivered
/// after `kill` returns, and on a loaded machine the process may show as
/// running for a moment after jp sent it.
#[cfg(target_os = "linux")]
fn outlives_its_kill(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    while running(pid) {
        if Instant::now() > deadline {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
#[cfg(target_os = "linux")]
fn a_timeout_kills_the_program_and_what_it_started() {
    let f = Fixture::new();
    let started = Instant::now();
    let outcome = run(
        &f,
        json!({
            "program": "sh",
            "args": ["-c", "sleep 1000 & echo $! > child; echo started; wait"],
            "timeout_secs": 1
        }),
    );
    assert_eq!(
        outcome,
        error(
            "`sh -c \"sleep 1000 & echo $! > child; echo started; wait\"` did not finish within 1 s (timeout_secs) and was killed, with the processes it started\noutput (stdout and stderr interleaved):\nstarted\n"
        )
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let child: u32 = f.read("child").trim().parse().unwrap();
    assert!(
        !outlives_its_kill(child),
        "sleep {child} outlived the timeout"
    );
}

#[test]
#[cfg(target_os = "linux")]
fn what_the_program_leaves_behind_is_killed_when_it_exits() {
    let f = Fixture::new();
    let started = Instant::now();
    // The background sleep holds the output open; it is killed with the
    // program's group as soon as the program exits.
    let outcome = run(
        &f,
        json!({ "program": "sh", "args": ["-c", "sleep 1000 & echo $! > child; echo done"] }),
    );
    assert_eq!(
        outcome,
        Outcome::success(
            "`sh -c \"sleep 1000 & echo $! > child; echo done\"` exited with status 0\noutput (stdout and stderr interleaved):\ndone\n"
        )
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let child: u32 = f.read("child").trim().parse().unwrap();
    assert!(
        !outlives_its_kill(child),
        "sleep {child} outlived the program"
    );
}

#[test]
fn the_program_has_no_terminal_and_an_empty_stdin() {
    let f = Fixture::new();
    assert_eq!(
        run(
            &f,
            json!({ "program": "sh", "args": ["-c", "cat; (: < /dev/tty) 2>/dev/null || echo no terminal"] })
        ),
        Outcome::success(
            "`sh -c \"cat; (: < /dev/tty) 2>/dev/null || echo no terminal\"` exited with status 0\noutput (stdout and stderr interleaved):\nno terminal\n"
        )
    );
}

#[test]
fn output_over_the_cap_is_cut_and_says_so() {
    let f = Fixture::new();
    let outcome = run(&f, json!({ "program": "seq", "args": ["1", "10000"] }));
    let all: String = (1..=10_000).map(|i| format!("{i}\n")).collect();
    let head = &all[..8192];
    let tail = &all[all.len() - 24_576..];
    assert_eq!(
        outcome,
        Outcome::success(format!(
            "`seq 1 10000` exited with status 0\noutput (stdout and stderr interleaved), 48,894 bytes, over the cap of 32,768 bytes: the first 8,192 and the last 24,576 are shown:\n{head}\n[… 16,126 bytes left out …]\n{tail}"
        ))
    );
}
