#![allow(clippy::unwrap_used)]

use std::path::Path;

use clap::Parser as _;

use super::attempts::slug;
use super::report::{Reported, Said, Verdict, errno};
use super::scratch::canary_file;
use crate::cmd::Cli;

#[test]
fn a_report_is_one_line_and_reads_back() {
    let reported = Reported::blocked("Permission\tdenied\n");
    assert_eq!(reported.encode(), "blocked\tPermission denied");
    assert_eq!(
        Reported::decode(&reported.encode()),
        Some(Reported::blocked("Permission denied"))
    );
    let done = Reported::decode("done\tsent 16 bytes").unwrap();
    assert_eq!(done.said, Said::Done);
    assert_eq!(
        Reported::decode("escaped\tread 3 bytes").unwrap().said,
        Said::Verdict(Verdict::Escaped)
    );
    assert_eq!(Reported::decode("maybe\tno"), None);
    assert_eq!(Reported::decode("blocked"), None);
}

#[test]
fn errno_is_the_system_text_alone() {
    let error = std::io::Error::from_raw_os_error(13);
    assert_eq!(errno(&error), "Permission denied");
    assert_eq!(errno(&std::io::Error::other("plain")), "plain");
}

#[test]
fn attempt_names_come_from_the_places() {
    assert_eq!(slug("~/.ssh"), "ssh");
    assert_eq!(slug("~/.docker/config.json"), "docker-config-json");
    assert_eq!(slug("~/.config/BraveSoftware"), "config-bravesoftware");
    assert_eq!(slug("/etc/secret.d"), "etc-secret-d");
}

#[test]
fn a_canary_is_the_place_when_it_names_a_file_else_a_file_in_it() {
    let home = Path::new("/h");
    let file = |entry| canary_file(home, entry);
    assert_eq!(file("~/.ssh"), Path::new("/h/.ssh/id_ed25519"));
    assert_eq!(file("~/.config/jp"), Path::new("/h/.config/jp/trust.json"));
    assert_eq!(file("~/.netrc"), Path::new("/h/.netrc"));
    assert_eq!(
        file("~/.docker/config.json"),
        Path::new("/h/.docker/config.json")
    );
    assert_eq!(
        file("~/.cargo/credentials"),
        Path::new("/h/.cargo/credentials")
    );
    assert_eq!(file("~/.mozilla"), Path::new("/h/.mozilla/canary"));
}

#[test]
fn a_probe_takes_arguments_that_look_like_flags() {
    let cli = Cli::try_parse_from([
        "jp", "sandbox", "probe", "program", "unshare", "-Um", "true",
    ]);
    let debug = format!("{:?}", cli.unwrap());
    assert!(
        debug.contains(r#"args: ["unshare", "-Um", "true"]"#),
        "{debug}"
    );
}
