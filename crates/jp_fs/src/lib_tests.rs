#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::Path;

use super::*;

/// What a workspace can have planted where jp keeps a file.
#[derive(Debug, Clone, Copy)]
enum Plant {
    /// A link to a file outside the root.
    LinkOut,
    /// A link to `/dev/zero`.
    LinkToZero,
    /// A link to nothing.
    Dangling,
    /// A FIFO.
    Fifo,
    /// A directory.
    Directory,
    /// The directory holding the file is a link to one outside.
    DirLink,
}

const PLANTS: [Plant; 6] = [
    Plant::LinkOut,
    Plant::LinkToZero,
    Plant::Dangling,
    Plant::Fifo,
    Plant::Directory,
    Plant::DirLink,
];

const SECRET: &str = "outside, never to be read or changed\n";

/// A root with `d/f` planted as `plant`, and a directory outside it
/// holding `f` (the secret).
fn planted(plant: Plant) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let top = tempfile::tempdir().unwrap();
    let root = top.path().join("root");
    let outside = top.path().join("outside");
    std::fs::create_dir_all(root.join("d")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("f"), SECRET).unwrap();
    let at = root.join("d/f");
    match plant {
        Plant::LinkOut => symlink(outside.join("f"), &at).unwrap(),
        Plant::LinkToZero => symlink("/dev/zero", &at).unwrap(),
        Plant::Dangling => symlink(outside.join("new"), &at).unwrap(),
        Plant::Fifo => {
            rustix::fs::mkfifoat(rustix::fs::CWD, &at, rustix::fs::Mode::from_raw_mode(0o644))
                .unwrap();
        }
        Plant::Directory => std::fs::create_dir(&at).unwrap(),
        Plant::DirLink => {
            std::fs::remove_dir(root.join("d")).unwrap();
            symlink(&outside, root.join("d")).unwrap();
        }
    }
    (top, root, outside)
}

fn outside_untouched(outside: &Path) {
    assert_eq!(std::fs::read_to_string(outside.join("f")).unwrap(), SECRET);
    assert!(!outside.join("new").exists(), "a file was created outside");
    let names: Vec<_> = std::fs::read_dir(outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["f"], "something was written outside");
}

#[test]
fn every_way_in_refuses_every_plant_and_leaves_the_outside_alone() {
    type Op = fn(&Path) -> io::Result<()>;
    let ops: [(&str, Op); 14] = [
        ("open Read", |root| {
            open(root, Path::new("d/f"), Access::Read).map(drop)
        }),
        ("open Write", |root| {
            open(root, Path::new("d/f"), Access::Write).map(drop)
        }),
        ("open WriteOrCreate", |root| {
            open(root, Path::new("d/f"), Access::WriteOrCreate).map(drop)
        }),
        ("open CreateNew", |root| {
            open(root, Path::new("d/f"), Access::CreateNew).map(drop)
        }),
        ("read", |root| {
            read(root, Path::new("d/f"), 1 << 20).map(drop)
        }),
        ("read_to_string", |root| {
            read_to_string(root, Path::new("d/f"), 1 << 20).map(drop)
        }),
        ("create_dir d/f/x", |root| {
            create_dir_all(root, Path::new("d/f/x"))
        }),
        ("remove_file d/f/x", |root| {
            remove_file(root, Path::new("d/f/x"))
        }),
        ("write_atomic_mode d/f/x", |root| {
            write_atomic_mode(root, Path::new("d/f/x"), b"x", 0o600)
        }),
        ("symlink d/f/x", |root| {
            super::symlink(root, Path::new("d/f/x"), Path::new("/etc/passwd"))
        }),
        ("remove_dir d/f/x", |root| {
            remove_dir(root, Path::new("d/f/x"))
        }),
        ("set_dir_mode d/f", |root| {
            set_dir_mode(root, Path::new("d/f"), 0o700)
        }),
        ("read_link d/f/x", |root| {
            read_link(root, Path::new("d/f/x")).map(drop)
        }),
        ("entry d/f/x", |root| {
            entry(root, Path::new("d/f/x"))?
                .map(drop)
                .ok_or_else(|| io::Error::other("nothing there"))
        }),
    ];
    for plant in PLANTS {
        for (name, op) in ops {
            // A directory is what a directory operation wants.
            let makes = ["create_dir", "write_atomic_mode", "symlink", "set_dir_mode"];
            if matches!(plant, Plant::Directory) && makes.iter().any(|op| name.starts_with(op)) {
                continue;
            }
            let (_top, root, outside) = planted(plant);
            let result = op(&root);
            assert!(result.is_err(), "{name} on {plant:?} succeeded");
            outside_untouched(&outside);
        }
    }
}

#[test]
fn the_refusal_names_what_and_where() {
    let cases = [
        (
            Plant::LinkOut,
            "d/f is a symbolic link, and jp follows no link among the files it keeps in a workspace",
        ),
        (
            Plant::LinkToZero,
            "d/f is a symbolic link, and jp follows no link among the files it keeps in a workspace",
        ),
        (
            Plant::Dangling,
            "d/f is a symbolic link, and jp follows no link among the files it keeps in a workspace",
        ),
        (
            Plant::Fifo,
            "d/f is a FIFO (named pipe), not a regular file",
        ),
        (Plant::Directory, "d/f is a directory, not a regular file"),
        (
            Plant::DirLink,
            "d is a symbolic link, and jp follows no link among the files it keeps in a workspace",
        ),
    ];
    for (plant, want) in cases {
        for access in [Access::Read, Access::Write, Access::WriteOrCreate] {
            let (_top, root, _outside) = planted(plant);
            let error = open(&root, Path::new("d/f"), access).unwrap_err();
            let refusal =
                Refusal::of(&error).unwrap_or_else(|| panic!("{plant:?} {access:?}: {error}"));
            assert_eq!(
                refusal.to_string(),
                format!("{}/{want}", root.display()),
                "{plant:?} {access:?}"
            );
        }
    }
}

#[test]
fn write_atomic_replaces_a_link_and_never_writes_through_it() {
    for plant in [Plant::LinkOut, Plant::LinkToZero, Plant::Dangling] {
        let (_top, root, outside) = planted(plant);
        write_atomic(&root, Path::new("d/f"), b"mine\n").unwrap();
        outside_untouched(&outside);
        assert_eq!(std::fs::read(root.join("d/f")).unwrap(), b"mine\n");
        assert!(
            !std::fs::symlink_metadata(root.join("d/f"))
                .unwrap()
                .is_symlink()
        );
    }
    let (_top, root, outside) = planted(Plant::DirLink);
    assert!(write_atomic(&root, Path::new("d/f"), b"mine\n").is_err());
    outside_untouched(&outside);
}

#[test]
fn write_atomic_removes_a_link_planted_at_its_temporary_name() {
    let (_top, root, outside) = planted(Plant::Directory);
    let tmp = root.join("d").join(temporary_name(OsStr::new("g")));
    symlink(outside.join("f"), &tmp).unwrap();
    write_atomic(&root, Path::new("d/g"), b"mine\n").unwrap();
    outside_untouched(&outside);
    assert_eq!(std::fs::read(root.join("d/g")).unwrap(), b"mine\n");
    assert!(
        std::fs::symlink_metadata(&tmp).is_err(),
        "the temporary name is left"
    );
}

#[test]
fn paths_that_leave_the_root_are_refused() {
    let (_top, root, outside) = planted(Plant::Directory);
    for rel in ["../outside/f", "d/../../outside/f", "/etc/passwd", "", "."] {
        let error = read(&root, Path::new(rel), 1 << 20).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{rel}");
        assert_eq!(
            error.to_string(),
            format!(
                "`{rel}` is not a path inside {} (it must be relative, without `..`)",
                root.display()
            )
        );
    }
    outside_untouched(&outside);
}

#[test]
fn reads_are_bounded() {
    let top = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(top.path().join("big")).unwrap();
    // Sparse: costs no disk.
    file.set_len((1 << 30) + 1).unwrap();
    let error = read(top.path(), Path::new("big"), 1 << 30).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::FileTooLarge);
    assert_eq!(
        error.to_string(),
        format!(
            "{} is larger than 1 GiB, the most jp reads of it",
            top.path().join("big").display()
        )
    );
    std::fs::write(top.path().join("small"), "12345").unwrap();
    assert_eq!(read(top.path(), Path::new("small"), 5).unwrap(), b"12345");
    assert!(read(top.path(), Path::new("small"), 4).is_err());
}

#[test]
fn what_is_fine_works() {
    let top = tempfile::tempdir().unwrap();
    let root = top.path();
    create_dir_all(root, Path::new("a/b")).unwrap();
    create_dir_all(root, Path::new("a/b")).unwrap();
    assert_eq!(
        create_dir(root, Path::new("a/b")).unwrap_err().kind(),
        io::ErrorKind::AlreadyExists
    );
    assert_eq!(kind(root, Path::new("a/b/c")).unwrap(), None);
    assert_eq!(kind(root, Path::new("x/y")).unwrap(), None);
    assert_eq!(
        open(root, Path::new("a/b/c"), Access::Read)
            .unwrap_err()
            .kind(),
        io::ErrorKind::NotFound
    );
    drop(open(root, Path::new("a/b/c"), Access::CreateNew).unwrap());
    assert!(is_file(root, Path::new("a/b/c")));
    assert_eq!(
        open(root, Path::new("a/b/c"), Access::CreateNew)
            .unwrap_err()
            .kind(),
        io::ErrorKind::AlreadyExists
    );
    write_atomic(root, Path::new("a/b/c"), b"x").unwrap();
    rename(root, Path::new("a/b"), Path::new("a/d")).unwrap();
    assert_eq!(read(root, Path::new("a/d/c"), 1).unwrap(), b"x");
    remove_file(root, Path::new("a/d/c")).unwrap();
    assert_eq!(
        kind(root, Path::new("a/d")).unwrap(),
        Some(FileKind::Directory)
    );
    // What a rewind puts back: a file with its mode, a link as written,
    // an emptied directory gone.
    write_atomic_mode(root, Path::new("a/d/m"), b"#!", 0o751).unwrap();
    assert_eq!(
        entry(root, Path::new("a/d/m")).unwrap(),
        Some(Entry {
            kind: FileKind::Regular,
            mode: 0o751,
            size: 2
        })
    );
    super::symlink(root, Path::new("a/d/l"), Path::new("../../nowhere")).unwrap();
    assert_eq!(
        read_link(root, Path::new("a/d/l")).unwrap(),
        Path::new("../../nowhere")
    );
    assert_eq!(
        entry(root, Path::new("a/d/l")).unwrap().map(|e| e.kind),
        Some(FileKind::Link)
    );
    assert_eq!(
        super::symlink(root, Path::new("a/d/l"), Path::new("x"))
            .unwrap_err()
            .kind(),
        io::ErrorKind::AlreadyExists
    );
    assert!(remove_dir(root, Path::new("a/d")).is_err(), "not empty");
    remove_file(root, Path::new("a/d/m")).unwrap();
    remove_file(root, Path::new("a/d/l")).unwrap();
    set_dir_mode(root, Path::new("a/d"), 0o701).unwrap();
    assert_eq!(
        entry(root, Path::new("a/d")).unwrap().map(|e| e.mode),
        Some(0o701)
    );
    remove_dir(root, Path::new("a/d")).unwrap();
    assert_eq!(entry(root, Path::new("a/d")).unwrap(), None);
    create_dir(root, Path::new("a/d")).unwrap();
    // A root reached through a link is the user's choice, and is followed.
    symlink(root.join("a"), root.join("via")).unwrap();
    write_atomic(&root.join("via"), Path::new("d/e"), b"y").unwrap();
    assert_eq!(read(root, Path::new("a/d/e"), 1).unwrap(), b"y");
}
