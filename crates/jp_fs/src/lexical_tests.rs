#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Component, Path, PathBuf};

use proptest::prelude::*;

use super::normalize_lexically;

#[test]
fn table() {
    let cases = [
        // `.`, repeated and trailing separators.
        ("src/./lib.rs", "src/lib.rs"),
        ("src//lib.rs/", "src/lib.rs"),
        ("./src", "src"),
        (".", ""),
        ("", ""),
        ("./", ""),
        // `..` against the component before it.
        ("src/../.env", ".env"),
        ("a/b/../../c", "c"),
        ("a/./b/.././c", "a/c"),
        ("a/..", ""),
        // A relative path keeps the `..` that climb above its start.
        ("..", ".."),
        ("../a/..", ".."),
        ("a/../..", ".."),
        ("../../a/b/..", "../../a"),
        ("./../a", "../a"),
        // An absolute path never climbs above its root.
        ("/", "/"),
        ("/..", "/"),
        ("/../..", "/"),
        ("/a/../../b", "/b"),
        ("/a/b/..", "/a"),
        ("//etc///hosts", "/etc/hosts"),
        ("/etc/./ssh/", "/etc/ssh"),
    ];
    for (input, expected) in cases {
        assert_eq!(
            normalize_lexically(Path::new(input)),
            PathBuf::from(expected),
            "{input:?}"
        );
    }
}

/// The same rules on names as strings: a stack of names, and a count of the
/// `..` that climbed above the start of a relative path.
fn model(absolute: bool, segments: &[&str]) -> (usize, Vec<String>) {
    let mut above = 0;
    let mut names: Vec<String> = Vec::new();
    for segment in segments {
        match *segment {
            "" | "." => {}
            ".." => {
                if names.pop().is_none() && !absolute {
                    above += 1;
                }
            }
            name => names.push(name.to_owned()),
        }
    }
    (above, names)
}

fn path_text() -> impl Strategy<Value = (bool, Vec<&'static str>)> {
    (
        any::<bool>(),
        prop::collection::vec(prop::sample::select(vec!["a", "b", "..", ".", ""]), 0..12),
    )
}

/// The path as text, and whether it is absolute: a relative path whose
/// first segment is empty starts with `/` too.
fn text(absolute: bool, segments: &[&str]) -> (String, bool) {
    let joined = segments.join("/");
    if absolute {
        (format!("/{joined}"), true)
    } else {
        let absolute = joined.starts_with('/');
        (joined, absolute)
    }
}

proptest! {
    #[test]
    fn normalising_twice_changes_nothing((absolute, segments) in path_text()) {
        let (text, _) = text(absolute, &segments);
        let once = normalize_lexically(Path::new(&text));
        prop_assert_eq!(normalize_lexically(&once), once);
    }

    #[test]
    fn no_dot_and_no_dot_dot_after_a_root_or_a_name((absolute, segments) in path_text()) {
        let (text, _) = text(absolute, &segments);
        let normal = normalize_lexically(Path::new(&text));
        let mut seen_root_or_name = false;
        for component in normal.components() {
            match component {
                Component::CurDir => prop_assert!(false, "`.` left in {normal:?}"),
                Component::ParentDir => {
                    prop_assert!(!seen_root_or_name, "`..` after a root or a name in {normal:?}");
                }
                Component::RootDir | Component::Prefix(_) | Component::Normal(_) => {
                    seen_root_or_name = true;
                }
            }
        }
    }

    #[test]
    fn never_climbs_above_the_root((absolute, segments) in path_text()) {
        let (text, absolute) = text(absolute, &segments);
        let normal = normalize_lexically(Path::new(&text));
        prop_assert_eq!(normal.is_absolute(), absolute);
        if absolute {
            prop_assert!(normal.starts_with("/"));
            prop_assert!(!normal.components().any(|c| c == Component::ParentDir));
        }
    }

    #[test]
    fn agrees_with_a_stack_of_names((absolute, segments) in path_text()) {
        let (text, absolute) = text(absolute, &segments);
        let normal = normalize_lexically(Path::new(&text));
        let (above, names) = model(absolute, &segments);
        let mut expected = PathBuf::from(if absolute { "/" } else { "" });
        for _ in 0..above {
            expected.push("..");
        }
        for name in names {
            expected.push(name);
        }
        prop_assert_eq!(normal, expected);
    }
}
