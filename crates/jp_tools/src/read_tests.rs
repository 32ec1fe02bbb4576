#![allow(clippy::unwrap_used, clippy::expect_used)]

use jp_tool::Outcome;
use serde_json::json;

use crate::test_support::{Fixture, error};

fn read(f: &Fixture, path: &str) -> Outcome {
    f.run("fs_read_file", json!({ "path": path }))
}

#[test]
fn reads_a_file_exactly() {
    let f = Fixture::new();
    f.write("src/lib.rs", "pub fn a() {}\r\n\n// é\n");
    assert_eq!(
        read(&f, "src/lib.rs"),
        Outcome::success("pub fn a() {}\r\n\n// é\n")
    );
    assert_eq!(
        read(&f, "./src//lib.rs"),
        Outcome::success("pub fn a() {}\r\n\n// é\n")
    );
    let absolute = f.path("src/lib.rs").display().to_string();
    assert_eq!(
        read(&f, &absolute),
        Outcome::success("pub fn a() {}\r\n\n// é\n")
    );
    f.write("empty", "");
    assert_eq!(read(&f, "empty"), Outcome::success(""));
}

#[test]
fn refuses_what_is_not_a_readable_text_file() {
    let f = Fixture::new();
    f.write("latin1.txt", b"caf\xe9\n");
    f.write("image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    f.write("big.log", vec![b'x'; 1024 * 1024 + 512]);
    f.write("src/lib.rs", "");
    assert_eq!(
        read(&f, "latin1.txt"),
        error(
            "cannot read `latin1.txt`: it is not UTF-8 text (an invalid byte at offset 3), and fs_read_file handles only UTF-8"
        )
    );
    assert_eq!(
        read(&f, "image.png"),
        error(
            "cannot read `image.png`: it looks binary (a NUL byte at offset 8), and fs_read_file handles only text"
        )
    );
    assert_eq!(
        read(&f, "big.log"),
        error(
            "cannot read `big.log`: it is 1.0 MiB (1049088 bytes), over the 1 MiB limit for one file"
        )
    );
    assert_eq!(
        read(&f, "src"),
        error("cannot read `src`: it is a directory; fs_list_files lists the files in it")
    );
    assert_eq!(
        read(&f, "src/main.rs"),
        error("cannot read `src/main.rs`: no such file")
    );
}

#[test]
fn a_file_of_exactly_the_limit_is_read() {
    let f = Fixture::new();
    f.write("max.txt", vec![b'x'; 1024 * 1024]);
    let Outcome::Success { content, .. } = read(&f, "max.txt") else {
        panic!("expected a success");
    };
    assert_eq!(content.len(), 1024 * 1024);
}

#[test]
fn confinement() {
    let f = Fixture::new();
    f.write("a.txt", "a");
    assert_eq!(
        read(&f, "src/../../x"),
        error(
            "refused `src/../../x`: it leads outside the workspace (`..` goes above the workspace root)"
        )
    );
    assert_eq!(
        read(&f, "a.txt\0"),
        error("refused the path \"a.txt\\0\": a path cannot contain a NUL byte")
    );
}

#[cfg(unix)]
#[test]
fn refuses_a_symlink_out_of_the_workspace() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s3cret").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), f.path("innocent.txt")).unwrap();
    assert_eq!(
        read(&f, "innocent.txt"),
        error(format!(
            "refused `innocent.txt`: `innocent.txt` leads to `{}` through a symbolic link, outside the workspace",
            outside
                .path()
                .join("secret")
                .canonicalize()
                .unwrap()
                .display()
        ))
    );
}

#[cfg(unix)]
#[test]
fn refuses_a_fifo_without_blocking() {
    let f = Fixture::new();
    let status = std::process::Command::new("mkfifo")
        .arg(f.path("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        read(&f, "pipe"),
        error("cannot read `pipe`: it is not a regular file")
    );
}
