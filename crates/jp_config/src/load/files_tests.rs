#![allow(clippy::unwrap_used)]

use std::os::unix::fs::symlink;
use std::path::Path;

use super::*;

/// The files `pattern` gives under `base`, relative to it.
fn matched(base: &Path, pattern: &str) -> Result<Vec<String>, String> {
    expand(base, pattern).map(|files| {
        files
            .iter()
            .map(|f| f.strip_prefix(base).unwrap().display().to_string())
            .collect()
    })
}

#[test]
fn globs_match_what_the_pattern_names_and_never_follow_directory_links() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    for file in [
        "a.toml",
        "b.json",
        "x/c.toml",
        "x/y/d.toml",
        "x/y/z/e.toml",
        ".h.toml",
    ] {
        let path = base.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    // Loops back up, and a link out of the tree: none is descended.
    symlink(".", base.join("x/loop1")).unwrap();
    symlink("..", base.join("x/y/loop2")).unwrap();
    symlink("/", base.join("x/root")).unwrap();
    // A link to a file is a match.
    symlink("../a.toml", base.join("x/linked.toml")).unwrap();
    // A dangling link is not.
    symlink("nowhere.toml", base.join("x/dangling.toml")).unwrap();

    for (pattern, expected) in [
        ("*.toml", vec![".h.toml", "a.toml"]),
        ("x/*.toml", vec!["x/c.toml", "x/linked.toml"]),
        ("x/*/*.toml", vec!["x/y/d.toml"]),
        (
            "x/**/*.toml",
            vec!["x/c.toml", "x/linked.toml", "x/y/d.toml", "x/y/z/e.toml"],
        ),
        (
            "**/*.toml",
            vec![
                ".h.toml",
                "a.toml",
                "x/c.toml",
                "x/linked.toml",
                "x/y/d.toml",
                "x/y/z/e.toml",
            ],
        ),
        ("x/y/z/*", vec!["x/y/z/e.toml"]),
        // A literal part is the path as named: a link there is followed.
        (
            "x/loop1/*.toml",
            vec!["x/loop1/c.toml", "x/loop1/linked.toml"],
        ),
        ("nothere/*.toml", vec![]),
        ("[ab].*", vec!["a.toml", "b.json"]),
    ] {
        assert_eq!(
            matched(base, pattern),
            Ok(expected.into_iter().map(String::from).collect()),
            "{pattern}"
        );
    }
}

#[test]
fn a_glob_stops_at_the_entry_bound_with_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    std::fs::create_dir(base.join("many")).unwrap();
    for i in 0..MAX_GLOB_ENTRIES {
        std::fs::write(base.join(format!("many/f{i}")), "").unwrap();
    }
    // At the bound: fine.
    assert_eq!(matched(base, "many/*.toml"), Ok(vec![]));
    std::fs::write(base.join("many/one-more"), "").unwrap();
    assert_eq!(
        matched(base, "many/*.toml"),
        Err(format!(
            "the glob `many/*.toml` reaches more than 10000 entries under {}/many (symbolic \
             links to directories are not followed); name the files or a narrower pattern",
            base.display()
        ))
    );
}

#[test]
fn a_link_loop_of_any_depth_costs_one_entry_per_link() {
    // 2^depth paths through links, had they been followed.
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    for name in ["a", "b", "c", "d"] {
        symlink(".", base.join(name)).unwrap();
    }
    std::fs::write(base.join("f.toml"), "").unwrap();
    for pattern in ["**/*.toml", "*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/*.toml"] {
        let start = std::time::Instant::now();
        let found = matched(base, pattern).unwrap();
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "{pattern}"
        );
        let expected: Vec<String> = if pattern.starts_with("**") {
            vec!["f.toml".into()]
        } else {
            vec![]
        };
        assert_eq!(found, expected, "{pattern}");
    }
}

#[test]
fn proc_sys_and_dev_are_refused_however_they_are_reached() {
    let dir = tempfile::tempdir().unwrap();
    symlink("/proc/self/status", dir.path().join("status.toml")).unwrap();
    symlink("/dev", dir.path().join("devices")).unwrap();
    std::fs::write(dir.path().join("fine.toml"), "").unwrap();
    let link = dir.path().join("status.toml");
    let through = dir.path().join("devices/null");
    for (path, refused) in [
        (Path::new("/proc/kmsg"), Some("/proc")),
        (Path::new("/proc/self/status"), Some("/proc")),
        (Path::new("/sys/kernel/uevent_seqnum"), Some("/sys")),
        (Path::new("/dev/zero"), Some("/dev")),
        (Path::new("/dev/../dev/zero"), Some("/dev")),
        (link.as_path(), Some("/proc")),
        (through.as_path(), Some("/dev")),
        (Path::new("/procfs.toml"), None),
        (Path::new("/devices/a.toml"), None),
    ] {
        let expected = refused.map(|dir| {
            format!(
                "{} is under {dir}; config files are never read from /proc, /sys, /dev",
                path.display()
            )
        });
        assert_eq!(refused_dir(path), expected, "{}", path.display());
    }
    assert_eq!(refused_dir(&dir.path().join("fine.toml")), None);
}
