#![allow(clippy::unwrap_used)]

use super::*;
use crate::query::tools::fixture::workspace;

/// A workspace with jp's default tools and a few files; `cwd` below it.
fn files() -> (tempfile::TempDir, AppConfig) {
    let (dir, config) = workspace(jp_tools::DEFAULT_TOOLS_TOML);
    let root = dir.path();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join("src/deep/a.rs"), "// a\n").unwrap();
    std::fs::write(root.join("src/.env"), "TOKEN=1\n").unwrap();
    std::fs::write(root.join("src/logo.png"), [0x89, b'P', 0, 1]).unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("target/out.rs"), "ignored\n").unwrap();
    (dir, config)
}

fn paths(place: &Place<'_>, specs: &[&str], message: &str) -> Result<Gathered, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let specs: Vec<String> = specs.iter().map(|s| (*s).to_owned()).collect();
    gather(place, &specs, message, &runtime, false)
}

fn sources(gathered: &Gathered) -> Vec<&str> {
    gathered
        .attachments
        .iter()
        .map(|a| a.source.as_str())
        .collect()
}

#[test]
fn a_file_a_directory_and_a_glob_attach_their_text_files() {
    let (dir, config) = files();
    let place = Place::new(dir.path(), dir.path(), &config);
    let gathered = paths(&place, &["src/main.rs", "src", "**/*.rs"], "").unwrap();
    assert_eq!(
        sources(&gathered),
        ["src/main.rs", "src/deep/a.rs"],
        "each file once, in the order named; target/ is ignored"
    );
    assert_eq!(
        gathered.notes,
        [
            "left out src/.env: it looks like it holds secrets (keys, credentials, .env)",
            "left out src/logo.png: it is not UTF-8 text",
        ]
    );
    // From a directory below the root, paths and globs are relative to it;
    // `./` and an absolute glob inside the workspace are read as written.
    let below = Place::new(dir.path(), &dir.path().join("src"), &config);
    let gathered = paths(&below, &["deep/*.rs"], "").unwrap();
    assert_eq!(sources(&gathered), ["src/deep/a.rs"]);
    let gathered = paths(&below, &["./*.rs"], "").unwrap();
    assert_eq!(sources(&gathered), ["src/main.rs"]);
    let absolute = format!("{}/src/deep/*.rs", place.root.display());
    let gathered = paths(&place, &[absolute.as_str()], "").unwrap();
    assert_eq!(sources(&gathered), ["src/deep/a.rs"]);
}

#[test]
fn what_may_not_be_attached_is_refused_by_name() {
    let (dir, config) = files();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("notes.txt"), "x").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("notes.txt"),
        dir.path().join("link.txt"),
    )
    .unwrap();
    let place = Place::new(dir.path(), dir.path(), &config);
    let root = place.root.display().to_string();
    let refused = |spec: &str| paths(&place, &[spec], "").unwrap_err();
    assert_eq!(
        refused("src/.env"),
        "-a src/.env: refused: it looks like it holds secrets (keys, credentials, .env)"
    );
    assert_eq!(
        refused("src/logo.png"),
        "-a src/logo.png: refused: it is not UTF-8 text (a binary file)"
    );
    assert_eq!(
        refused("link.txt"),
        format!("-a link.txt: refused: it is outside the workspace ({root}); attach files in it")
    );
    assert_eq!(
        refused("nope.rs"),
        "-a nope.rs: there is no such file or directory"
    );
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".git/config"), "url = https://u:t@h/r").unwrap();
    assert_eq!(
        refused(".git/config"),
        "-a .git/config: refused: it is in a .git directory, which may hold credentials (remote URLs with tokens)"
    );
    std::fs::create_dir_all(dir.path().join("keys")).unwrap();
    std::fs::write(dir.path().join("keys/.env"), "K=1").unwrap();
    assert_eq!(
        refused("keys"),
        "-a keys: every file it names was left out (left out keys/.env: it looks like it holds secrets (keys, credentials, .env))"
    );
    assert_eq!(refused("*.py"), "-a *.py: no file matches");
    assert_eq!(
        refused("../*.rs"),
        "-a ../*.rs: refused: a glob cannot climb with `..`; run jp where it starts"
    );
    assert_eq!(
        refused("target"),
        "-a target: the directory holds no file to attach"
    );
    // A pipe would block the read forever.
    let fifo = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status();
    if fifo.is_ok_and(|s| s.success()) {
        assert_eq!(
            refused("pipe"),
            "-a pipe: it is neither a file nor a directory"
        );
    }
}

#[test]
fn fs_read_file_s_own_policy_also_says_what_is_secret() {
    let (dir, config) = workspace(
        "[conversation.tools.fs_read_file]\ncommand = [\"jp\", \"tool\", \"fs_read_file\"]\n\
         parameters.path = { type = \"path\", required = true }\n\
         policy.run = [{ arg = \"/path\", prefix = \"private/\", mode = \"ask\" }, { mode = \"unattended\" }]\n",
    );
    std::fs::create_dir_all(dir.path().join("private")).unwrap();
    std::fs::write(dir.path().join("private/plan.md"), "x").unwrap();
    let place = Place::new(dir.path(), dir.path(), &config);
    let error = paths(&place, &["private/plan.md"], "").unwrap_err();
    assert!(
        error.starts_with(
            "-a private/plan.md: refused: fs_read_file's policy would not read it unattended (policy.run[0]"
        ),
        "{error}"
    );
}

#[test]
fn sizes_are_capped_per_attachment_and_in_total() {
    let (dir, config) = files();
    let big = "x".repeat(MAX_ATTACHMENT_BYTES + 1);
    std::fs::write(dir.path().join("big.txt"), &big).unwrap();
    let part = "y".repeat(MAX_ATTACHMENT_BYTES - 1);
    for i in 0..5 {
        std::fs::write(dir.path().join(format!("part{i}.txt")), &part).unwrap();
    }
    let place = Place::new(dir.path(), dir.path(), &config);
    assert_eq!(
        paths(&place, &["big.txt"], "").unwrap_err(),
        "-a big.txt: refused: it is 262145 bytes; an attachment may hold at most 262144"
    );
    assert_eq!(
        paths(&place, &["part*.txt"], "").unwrap_err(),
        "the attachments hold 1310715 bytes together; the most a message may carry is 1048576 (attach fewer or smaller files)"
    );
}

#[test]
fn at_path_in_the_message_attaches_an_existing_file() {
    let (dir, config) = files();
    let place = Place::new(dir.path(), dir.path(), &config);
    assert_eq!(
        mentions("see @src/main.rs, and @someone. Mail me@x.org @"),
        ["src/main.rs", "someone"]
    );
    let gathered = paths(
        &place,
        &["src/main.rs"],
        "compare @src/deep/a.rs with @src/main.rs; ask @team",
    )
    .unwrap();
    assert_eq!(sources(&gathered), ["src/main.rs", "src/deep/a.rs"]);
    assert_eq!(
        paths(&place, &[], "read @src/.env").unwrap_err(),
        "@src/.env: refused: it looks like it holds secrets (keys, credentials, .env)"
    );
}

#[test]
fn the_message_carries_each_block_and_the_record_its_hash() {
    let attachment = Attachment {
        source: "src/main.rs".into(),
        text: "fn main() {}\n".into(),
    };
    assert_eq!(
        compose(std::slice::from_ref(&attachment), "why?"),
        "<attachment-536e506bb90914c2 source=\"src/main.rs\">\nfn main() {}\n</attachment-536e506bb90914c2>\n\nwhy?"
    );
    assert_eq!(
        attachment.record(),
        Attached {
            source: "src/main.rs".into(),
            sha256: "536e506bb90914c243a12b397b9a998f85ae2cbd9ba02dfd03a9e155ca5ca0f4".into(),
            bytes: 13,
        }
    );
}

#[test]
fn a_command_splits_into_words_as_a_shell_would() {
    assert_eq!(
        serde_json::Value::Object(command::arguments("git log -n 2 --format='%h %s'").unwrap()),
        serde_json::json!({"program": "git", "args": ["log", "-n", "2", "--format=%h %s"]})
    );
    assert_eq!(
        command::arguments("  ").unwrap_err(),
        "there is no command after `cmd:`"
    );
}

#[test]
fn no_command_runs_for_a_message_refused_for_a_path() {
    let (dir, config) = files();
    let place = Place::new(dir.path(), dir.path(), &config);
    let marker = dir.path().join("ran");
    let command = format!("cmd:touch {}", marker.display());
    let error = paths(&place, &[command.as_str(), "src/.env"], "").unwrap_err();
    assert_eq!(
        error,
        "-a src/.env: refused: it looks like it holds secrets (keys, credentials, .env)"
    );
    assert!(!marker.exists());
}
