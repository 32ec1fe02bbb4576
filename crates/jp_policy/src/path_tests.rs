#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn lexical_normalization() {
    let cases = [
        ("src/./lib.rs", "src/lib.rs"),
        ("src//lib.rs/", "src/lib.rs"),
        ("./src", "src"),
        ("src/../.env", ".env"),
        ("a/b/../../c", "c"),
        ("..", ".."),
        ("../a/..", ".."),
        ("a/../..", ".."),
        (".", ""),
        ("/..", "/"),
        ("/a/../../b", "/b"),
        ("//etc///hosts", "/etc/hosts"),
    ];
    for (input, expected) in cases {
        assert_eq!(
            normalize_lexically(Path::new(input)),
            PathBuf::from(expected),
            "{input}"
        );
    }
}

#[test]
fn literals() {
    assert_eq!(
        PolicyPath::parse("./src//"),
        Ok(PolicyPath::Relative("src".into()))
    );
    assert_eq!(PolicyPath::parse("."), Ok(PolicyPath::Relative("".into())));
    assert_eq!(
        PolicyPath::parse("/etc/./ssh/"),
        Ok(PolicyPath::Absolute("/etc/ssh".into()))
    );
    assert_eq!(PolicyPath::parse(""), Err(PathLiteralError::Empty));
    assert_eq!(PolicyPath::parse("a\0b"), Err(PathLiteralError::Nul));
    assert_eq!(
        PolicyPath::parse("src/../../x"),
        Err(PathLiteralError::EscapesRoot)
    );
    assert_eq!(PolicyPath::Relative("".into()).display(), ".");
    assert_eq!(PolicyPath::Relative("".into()).display_prefix(), "./");
    assert_eq!(PolicyPath::Relative("src".into()).display_prefix(), "src/");
    assert_eq!(PolicyPath::Absolute("/".into()).display_prefix(), "/");
}

#[test]
fn literal_prefixes_compare_components() {
    let src = PolicyPath::Relative("src".into());
    assert!(src.is_prefix_of(&PolicyPath::Relative("src/a".into())));
    assert!(src.is_prefix_of(&PolicyPath::Relative("src".into())));
    assert!(!src.is_prefix_of(&PolicyPath::Relative("src-old".into())));
    assert!(!src.is_prefix_of(&PolicyPath::Absolute("/src/a".into())));
    assert!(PolicyPath::Relative("".into()).is_prefix_of(&PolicyPath::Relative(".env".into())));
}

fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/sub")).unwrap();
    let ws = Workspace::new(dir.path());
    (dir, ws)
}

fn texts(value: &str, ws: &Workspace) -> (String, String) {
    let forms = resolve_path(value, ws).unwrap();
    (
        forms.lexical.text(),
        forms.resolved.as_ref().unwrap().text(),
    )
}

#[test]
fn values_inside_the_workspace_are_relative() {
    let (_dir, ws) = workspace();
    assert_eq!(
        texts("src/lib.rs", &ws),
        ("src/lib.rs".into(), "src/lib.rs".into())
    );
    assert_eq!(texts("src/../.env", &ws), (".env".into(), ".env".into()));
    assert_eq!(texts("./", &ws), (".".into(), ".".into()));
    assert_eq!(texts("", &ws), (".".into(), ".".into()));
    // A missing directory followed by `..` is resolved lexically.
    assert_eq!(
        texts("src/missing/../sub/x", &ws),
        ("src/sub/x".into(), "src/sub/x".into())
    );
    let absolute = format!("{}/src/sub/a.rs", ws.root().display());
    assert_eq!(
        texts(&absolute, &ws),
        ("src/sub/a.rs".into(), "src/sub/a.rs".into())
    );
    let forms = resolve_path("src/lib.rs", &ws).unwrap();
    assert_eq!(forms.lexical.relative(), Some(Path::new("src/lib.rs")));
    assert_eq!(forms.lexical.absolute(), ws.root().join("src/lib.rs"));
}

#[test]
fn values_outside_the_workspace_stay_absolute() {
    let (_dir, ws) = workspace();
    let forms = resolve_path("/etc/hosts", &ws).unwrap();
    assert_eq!(forms.lexical.relative(), None);
    assert_eq!(forms.lexical.text(), "/etc/hosts");
    let forms = resolve_path("../outside/x", &ws).unwrap();
    assert_eq!(forms.lexical.relative(), None);
    let parent = ws.root().parent().unwrap();
    assert_eq!(forms.lexical.absolute(), parent.join("outside/x"));
    // A sibling directory sharing the root's name as a prefix is outside.
    let sibling = format!("{}-other/x", ws.root().display());
    assert_eq!(
        resolve_path(&sibling, &ws).unwrap().lexical.relative(),
        None
    );
}

#[test]
fn nul_is_not_a_path() {
    let (_dir, ws) = workspace();
    assert_eq!(resolve_path("src/a\0b", &ws), Err(NulInPath));
}

#[test]
fn a_deep_missing_path_resolves_through_its_existing_ancestor() {
    let (_dir, ws) = workspace();
    let deep = format!("src/sub/{}", "d/".repeat(2000));
    let forms = resolve_path(&deep, &ws).unwrap();
    assert_eq!(forms.resolved.as_ref().unwrap(), &forms.lexical);
    assert!(
        forms
            .resolved
            .as_ref()
            .unwrap()
            .text()
            .starts_with("src/sub/d/d/")
    );
}

#[cfg(unix)]
#[test]
fn symlinks_give_a_second_form() {
    let (dir, ws) = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "x").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("src/link")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("src/sub"), dir.path().join("docs")).unwrap();
    let outside_real = std::fs::canonicalize(outside.path()).unwrap();

    let forms = resolve_path("src/link/secret", &ws).unwrap();
    assert_eq!(forms.lexical.text(), "src/link/secret");
    assert_eq!(forms.resolved.as_ref().unwrap().relative(), None);
    assert_eq!(
        forms.resolved.as_ref().unwrap().absolute(),
        outside_real.join("secret")
    );

    // A missing file below the link resolves through it too.
    let forms = resolve_path("src/link/new/file", &ws).unwrap();
    assert_eq!(
        forms.resolved.as_ref().unwrap().absolute(),
        outside_real.join("new/file")
    );

    // `..` after a link is physical in the resolved form.
    let forms = resolve_path("src/link/../x", &ws).unwrap();
    assert_eq!(forms.lexical.text(), "src/x");
    assert_eq!(
        forms.resolved.as_ref().unwrap().absolute(),
        outside_real.parent().unwrap().join("x")
    );

    // A `..` after a missing directory leads back to the link, which is
    // followed (the file system would follow it once `nx` exists).
    let forms = resolve_path("src/nx/../link/pwned", &ws).unwrap();
    assert_eq!(forms.lexical.text(), "src/link/pwned");
    assert_eq!(
        forms.resolved.as_ref().unwrap().absolute(),
        outside_real.join("pwned")
    );

    // A dangling link is followed to its missing target.
    std::os::unix::fs::symlink(
        outside.path().join("nonexistent"),
        dir.path().join("src/dangling"),
    )
    .unwrap();
    let forms = resolve_path("src/dangling", &ws).unwrap();
    assert_eq!(
        forms.resolved.as_ref().unwrap().absolute(),
        outside_real.join("nonexistent")
    );

    // A relative link target resolves against the link's directory.
    std::os::unix::fs::symlink("../..", dir.path().join("src/sub/up")).unwrap();
    let forms = resolve_path("src/sub/up/x", &ws).unwrap();
    assert_eq!(forms.resolved.as_ref().unwrap().text(), "x");

    // A link inside the workspace resolves to a relative form.
    let forms = resolve_path("docs/a.rs", &ws).unwrap();
    assert_eq!(forms.lexical.text(), "docs/a.rs");
    assert_eq!(forms.resolved.as_ref().unwrap().text(), "src/sub/a.rs");
}

#[cfg(unix)]
#[test]
fn a_symlinked_root_is_matched_in_both_forms() {
    let real = tempfile::tempdir().unwrap();
    std::fs::create_dir(real.path().join("src")).unwrap();
    let holder = tempfile::tempdir().unwrap();
    let link = holder.path().join("ws");
    std::os::unix::fs::symlink(real.path(), &link).unwrap();
    let ws = Workspace::new(&link);
    assert_eq!(ws.root(), link);
    assert_eq!(
        ws.resolved_root(),
        std::fs::canonicalize(real.path()).unwrap()
    );
    assert_eq!(texts("src/a", &ws), ("src/a".into(), "src/a".into()));
}

/// `chains/nN/c0 -> c1 -> ... -> cN -> target`: N + 1 links, reached from
/// `src/chN` (one more).
#[cfg(unix)]
fn chain(root: &Path, n: usize, target: &Path) {
    use std::os::unix::fs::symlink;
    let dir = root.join(format!("chains/n{n}"));
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..n {
        symlink(format!("c{}", i + 1), dir.join(format!("c{i}"))).unwrap();
    }
    symlink(target, dir.join(format!("c{n}"))).unwrap();
    symlink(
        format!("../chains/n{n}/c0"),
        root.join(format!("src/ch{n}")),
    )
    .unwrap();
}

#[cfg(unix)]
#[test]
fn a_chain_longer_than_the_kernel_follows_is_unresolvable() {
    let (dir, ws) = workspace();
    let outside = tempfile::tempdir().unwrap();
    chain(dir.path(), 45, outside.path());
    let forms = resolve_path("src/ch45/pwned.txt", &ws).unwrap();
    assert_eq!(forms.lexical.text(), "src/ch45/pwned.txt");
    assert_eq!(forms.resolved, Err(Unresolvable::TooManyLinks));
    assert!(!forms.is_inside());
    assert_eq!(
        Unresolvable::TooManyLinks.to_string(),
        "more than 40 symbolic links would have to be followed"
    );
}

#[cfg(unix)]
#[test]
fn a_chain_of_forty_links_that_stays_inside_resolves() {
    let (dir, ws) = workspace();
    // src/ch38 -> c0 -> ... -> c38 -> src/sub: 40 links in all.
    chain(dir.path(), 38, &dir.path().join("src/sub"));
    let forms = resolve_path("src/ch38/a.rs", &ws).unwrap();
    assert_eq!(forms.resolved.as_ref().unwrap().text(), "src/sub/a.rs");
    assert!(forms.is_inside());
    // One more is too many.
    chain(dir.path(), 39, &dir.path().join("src/sub"));
    let forms = resolve_path("src/ch39/a.rs", &ws).unwrap();
    assert_eq!(forms.resolved, Err(Unresolvable::TooManyLinks));
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_is_unresolvable_and_named() {
    use std::os::unix::fs::symlink;
    let (dir, ws) = workspace();
    symlink("b", dir.path().join("src/a")).unwrap();
    symlink("a", dir.path().join("src/b")).unwrap();
    let forms = resolve_path("src/a/x.rs", &ws).unwrap();
    assert_eq!(
        forms.resolved,
        Err(Unresolvable::Loop {
            link: "src/a".into()
        })
    );
    assert_eq!(
        forms.resolved.unwrap_err().to_string(),
        "symbolic links loop at src/a"
    );
    // A link to itself.
    symlink("self", dir.path().join("src/self")).unwrap();
    let forms = resolve_path("src/self", &ws).unwrap();
    assert_eq!(
        forms.resolved,
        Err(Unresolvable::Loop {
            link: "src/self".into()
        })
    );
}

#[cfg(unix)]
#[test]
fn a_link_reached_twice_on_the_way_is_not_a_loop() {
    use std::os::unix::fs::symlink;
    let (dir, ws) = workspace();
    symlink("sub", dir.path().join("src/s")).unwrap();
    let forms = resolve_path("src/s/../s/../s/x", &ws).unwrap();
    assert_eq!(forms.resolved.as_ref().unwrap().text(), "src/sub/x");
}

#[test]
fn a_component_that_cannot_be_inspected_is_unresolvable() {
    let (dir, ws) = workspace();
    let long = "n".repeat(300);
    let forms = resolve_path(&format!("src/{long}/x"), &ws).unwrap();
    assert_eq!(
        forms.resolved,
        Err(Unresolvable::Inaccessible {
            at: format!("src/{long}"),
            reason: "file name too long".into()
        })
    );
    std::fs::write(dir.path().join("src/file"), "x").unwrap();
    let forms = resolve_path("src/file/x", &ws).unwrap();
    assert_eq!(
        forms.resolved.unwrap_err().to_string(),
        "src/file/x cannot be inspected: not a directory"
    );
}

/// Found by an adversarial run: `/proc/self/cwd` is jp's directory when jp
/// follows it and the tool's when the tool does, so a link through it
/// resolved inside for jp (run from a subdirectory) and outside for the
/// tool (run in the workspace root).
#[cfg(target_os = "linux")]
#[test]
fn a_link_through_proc_is_unresolvable() {
    use std::os::unix::fs::symlink;
    let (dir, ws) = workspace();
    for (name, target) in [
        ("p", "/proc/self/cwd/.."),
        ("fd", "/dev/fd/0"),
        ("root", "/proc/self/root/etc"),
        ("thread", "/proc/thread-self/cwd"),
    ] {
        symlink(target, dir.path().join("src").join(name)).unwrap();
        let forms = resolve_path(&format!("src/{name}/x"), &ws).unwrap();
        let Err(Unresolvable::ProcessDependent { link }) = &forms.resolved else {
            panic!("{target}: {:?}", forms.resolved);
        };
        assert!(link.starts_with("/proc/"), "{target}: {link}");
        assert!(!forms.is_inside(), "{target}");
    }
    assert_eq!(
        Unresolvable::ProcessDependent {
            link: "/proc/self".into()
        }
        .to_string(),
        "the way goes through /proc/self, a link under /proc that leads somewhere else for each \
         process that follows it"
    );
    // A link that only passes by /proc, into a real directory, is fine.
    symlink("/proc/../tmp", dir.path().join("src/tmp")).unwrap();
    assert!(resolve_path("src/tmp/x", &ws).unwrap().resolved.is_ok());
}

/// A `..` after a link (issue 34, item 6): the kernel goes to the parent of
/// the link's target, a tool that removes `..` first does not. Both files
/// are kept, both must be inside, and `opens` names the kernel's first.
#[cfg(unix)]
#[test]
fn a_dotdot_after_a_link_gives_two_resolved_forms() {
    let (dir, ws) = workspace();
    let outside = tempfile::tempdir().unwrap();
    let out = std::fs::canonicalize(outside.path()).unwrap();
    std::fs::create_dir_all(dir.path().join("src/c/d")).unwrap();
    std::fs::create_dir_all(out.join("sub")).unwrap();
    std::os::unix::fs::symlink("c/d", dir.path().join("src/b")).unwrap();
    std::os::unix::fs::symlink(&out, dir.path().join("src/a")).unwrap();
    std::os::unix::fs::symlink(out.join("sub"), dir.path().join("k")).unwrap();
    let text = |form: &Result<PathForm, Unresolvable>| form.as_ref().unwrap().text();
    let out_text = |rel: &str| out.join(rel).display().to_string();

    // (value, lexical, resolved, resolved lexical, inside, opens)
    type Case<'a> = (&'a str, &'a str, String, String, bool, Option<String>);
    let cases: [Case<'_>; 5] = [
        // Both resolved forms inside, but different files.
        (
            "src/b/../x.rs",
            "src/x.rs",
            "src/c/x.rs".into(),
            "src/x.rs".into(),
            true,
            Some(
                "opens src/c/x.rs (a tool that removes \"..\" before following links opens \
                 src/x.rs)"
                    .into(),
            ),
        ),
        // The first case: lexically a link out.
        (
            "src/b/../a/f.txt",
            "src/a/f.txt",
            "src/c/a/f.txt".into(),
            out_text("f.txt"),
            false,
            Some(format!(
                "opens src/c/a/f.txt (a tool that removes \"..\" before following links opens \
                 {})",
                out_text("f.txt")
            )),
        ),
        // The second case: the kernel's file is out.
        (
            "k/../notes.txt",
            "notes.txt",
            out_text("notes.txt"),
            "notes.txt".into(),
            false,
            Some(format!(
                "opens {} (a tool that removes \"..\" before following links opens notes.txt)",
                out_text("notes.txt")
            )),
        ),
        // No `..` after a link: one file, named as written.
        (
            "src/x/../y.rs",
            "src/y.rs",
            "src/y.rs".into(),
            "src/y.rs".into(),
            true,
            None,
        ),
        // A link without `..`: one file, not the one named.
        (
            "src/b/y.rs",
            "src/b/y.rs",
            "src/c/d/y.rs".into(),
            "src/c/d/y.rs".into(),
            true,
            Some("opens src/c/d/y.rs".into()),
        ),
    ];
    for (value, lexical, resolved, resolved_lexical, inside, opens) in cases {
        let forms = resolve_path(value, &ws).unwrap();
        assert_eq!(forms.lexical.text(), lexical, "{value}");
        assert_eq!(text(&forms.resolved), resolved, "{value}");
        assert_eq!(text(&forms.resolved_lexical), resolved_lexical, "{value}");
        assert_eq!(forms.is_inside(), inside, "{value}");
        assert_eq!(
            forms.is_ambiguous(),
            resolved != resolved_lexical,
            "{value}"
        );
        assert_eq!(forms.opens(), opens, "{value}");
    }
}
