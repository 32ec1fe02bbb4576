//! [`super`] where there is no `openat(2)`: each name on the way is
//! checked with `symlink_metadata` before it is used. This leaves a race
//! that the Unix version does not have (a name replaced by a link between
//! the check and the use), but never follows a link that is there when
//! jp looks.

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use super::{Access, FileKind, Refusal, shown, temporary_name};

fn kind_of(meta: &fs::Metadata) -> FileKind {
    let kind = meta.file_type();
    if kind.is_symlink() {
        FileKind::Link
    } else if kind.is_dir() {
        FileKind::Directory
    } else if kind.is_file() {
        FileKind::Regular
    } else {
        FileKind::Other
    }
}

/// `root/names[..n]`, each name checked to be a directory, not a link;
/// missing ones created when `create`.
fn walk(root: &Path, names: &[&OsStr], n: usize, create: bool) -> io::Result<PathBuf> {
    let mut path = root.to_path_buf();
    for i in 0..n {
        path.push(names[i]);
        match fs::symlink_metadata(&path) {
            Ok(meta) => match kind_of(&meta) {
                FileKind::Directory => {}
                FileKind::Link => return Err(Refusal::Link(shown(root, names, i + 1)).into_io()),
                kind => {
                    return Err(Refusal::NotDirectory {
                        path: shown(root, names, i + 1),
                        kind,
                    }
                    .into_io());
                }
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                match fs::create_dir(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        return walk(root, names, n, false);
                    }
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(path)
}

fn check_entry(path: &Path, root: &Path, names: &[&OsStr]) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) => match kind_of(&meta) {
            FileKind::Regular => Ok(()),
            FileKind::Link => Err(Refusal::Link(shown(root, names, names.len())).into_io()),
            kind => Err(Refusal::NotRegular {
                path: shown(root, names, names.len()),
                kind,
            }
            .into_io()),
        },
        Err(e) => Err(e),
    }
}

pub(super) fn open(root: &Path, names: &[&OsStr], access: Access) -> io::Result<File> {
    let dir = walk(root, names, names.len() - 1, false)?;
    let path = dir.join(names[names.len() - 1]);
    let mut options = OpenOptions::new();
    options.read(true);
    match access {
        Access::Read => {}
        Access::Write => {
            options.write(true);
        }
        Access::WriteOrCreate => {
            options.write(true).create(true);
        }
        Access::CreateNew => {
            options.write(true).create_new(true);
        }
    }
    match access {
        Access::CreateNew => {}
        Access::WriteOrCreate => match check_entry(&path, root, names) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => other?,
        },
        Access::Read | Access::Write => check_entry(&path, root, names)?,
    }
    let file = options.open(&path)?;
    let kind = kind_of(&file.metadata()?);
    if kind != FileKind::Regular {
        return Err(Refusal::NotRegular {
            path: shown(root, names, names.len()),
            kind,
        }
        .into_io());
    }
    Ok(file)
}

pub(super) fn kind(root: &Path, names: &[&OsStr]) -> io::Result<Option<FileKind>> {
    let dir = match walk(root, names, names.len() - 1, false) {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match fs::symlink_metadata(dir.join(names[names.len() - 1])) {
        Ok(meta) => Ok(Some(kind_of(&meta))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

pub(super) fn create_dir(root: &Path, names: &[&OsStr], all: bool) -> io::Result<()> {
    if all {
        return walk(root, names, names.len(), true).map(drop);
    }
    let dir = walk(root, names, names.len() - 1, false)?;
    fs::create_dir(dir.join(names[names.len() - 1]))
}

pub(super) fn write_atomic_mode(
    root: &Path,
    names: &[&OsStr],
    bytes: &[u8],
    _permissions: Option<u32>,
) -> io::Result<()> {
    write_atomic(root, names, bytes)
}

pub(super) fn entry(root: &Path, names: &[&OsStr]) -> io::Result<Option<super::Entry>> {
    let dir = match walk(root, names, names.len() - 1, false) {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match fs::symlink_metadata(dir.join(names[names.len() - 1])) {
        Ok(meta) => Ok(Some(super::Entry {
            kind: kind_of(&meta),
            mode: 0,
            size: meta.len(),
        })),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

pub(super) fn read_link(root: &Path, names: &[&OsStr]) -> io::Result<PathBuf> {
    let dir = walk(root, names, names.len() - 1, false)?;
    fs::read_link(dir.join(names[names.len() - 1]))
}

pub(super) fn symlink(_root: &Path, _names: &[&OsStr], _target: &Path) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "jp cannot make symbolic links on this platform",
    ))
}

pub(super) fn set_dir_mode(root: &Path, names: &[&OsStr], _mode: u32) -> io::Result<()> {
    // No permission bits to set here; the directory must be one.
    walk(root, names, names.len(), false).map(drop)
}

pub(super) fn remove_dir(root: &Path, names: &[&OsStr]) -> io::Result<()> {
    let dir = walk(root, names, names.len() - 1, false)?;
    fs::remove_dir(dir.join(names[names.len() - 1]))
}

pub(super) fn write_atomic(root: &Path, names: &[&OsStr], bytes: &[u8]) -> io::Result<()> {
    let dir = walk(root, names, names.len() - 1, false)?;
    let name = names[names.len() - 1];
    let tmp = dir.join(temporary_name(name));
    let create = || OpenOptions::new().write(true).create_new(true).open(&tmp);
    let mut file = match create() {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            fs::remove_file(&tmp)?;
            create()?
        }
        Err(e) => return Err(e),
    };
    let written = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, dir.join(name))
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

pub(super) fn rename(root: &Path, from: &[&OsStr], to: &[&OsStr]) -> io::Result<()> {
    let from_dir = walk(root, from, from.len() - 1, false)?;
    let to_dir = walk(root, to, to.len() - 1, false)?;
    fs::rename(
        from_dir.join(from[from.len() - 1]),
        to_dir.join(to[to.len() - 1]),
    )
}

pub(super) fn remove_file(root: &Path, names: &[&OsStr]) -> io::Result<()> {
    let dir = walk(root, names, names.len() - 1, false)?;
    fs::remove_file(dir.join(names[names.len() - 1]))
}

pub(super) fn sync_dir(root: &Path, names: &[&OsStr]) {
    if let Ok(dir) = walk(root, names, names.len(), false)
        && let Ok(dir) = File::open(dir)
    {
        let _ = dir.sync_all();
    }
}
