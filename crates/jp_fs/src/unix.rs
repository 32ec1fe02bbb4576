//! [`super`] on Unix: `openat(2)` one name at a time from the root, each
//! with `O_NOFOLLOW`, and `fstat(2)` on what was opened.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::{Access, FileKind, Refusal, shown, temporary_name};

fn kind_of(stat: &rustix::fs::Stat) -> FileKind {
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => FileKind::Regular,
        FileType::Directory => FileKind::Directory,
        FileType::Symlink => FileKind::Link,
        FileType::Fifo => FileKind::Fifo,
        FileType::Socket => FileKind::Socket,
        FileType::CharacterDevice => FileKind::CharDevice,
        FileType::BlockDevice => FileKind::BlockDevice,
        FileType::Unknown => FileKind::Other,
    }
}

/// The error for `name` in `dir` (shown as `path`), which an open refused
/// with `error`: a [`Refusal`] when it is a link or (for `want_dir`) not a
/// directory, else `error`.
fn refusal(
    dir: &OwnedFd,
    name: &OsStr,
    path: std::path::PathBuf,
    error: Errno,
    want_dir: bool,
) -> io::Error {
    let Ok(stat) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
        return error.into();
    };
    match kind_of(&stat) {
        FileKind::Link => Refusal::Link(path).into_io(),
        FileKind::Directory if want_dir => error.into(),
        kind if want_dir => Refusal::NotDirectory { path, kind }.into_io(),
        FileKind::Regular => error.into(),
        kind => Refusal::NotRegular { path, kind }.into_io(),
    }
}

/// The root, followed as the system resolves it: the user chose it.
fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// The directory `root/names[..n]`, every name opened without following a
/// link; missing ones created when `create`.
fn walk(root: &Path, names: &[&OsStr], n: usize, create: bool) -> io::Result<OwnedFd> {
    let mut dir = open_root(root)?;
    for (i, name) in names[..n].iter().enumerate() {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut made = false;
        dir = loop {
            match rustix::fs::openat(&dir, *name, flags, Mode::empty()) {
                Ok(fd) => break fd,
                Err(Errno::NOENT) if create && !made => {
                    match rustix::fs::mkdirat(&dir, *name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => made = true,
                        Err(e) => return Err(e.into()),
                    }
                }
                // O_NOFOLLOW on a link is ELOOP (EMLINK on some BSDs);
                // O_DIRECTORY on a file is ENOTDIR.
                Err(e @ (Errno::LOOP | Errno::MLINK | Errno::NOTDIR)) => {
                    return Err(refusal(&dir, name, shown(root, names, i + 1), e, true));
                }
                Err(e) => return Err(e.into()),
            }
        };
    }
    Ok(dir)
}

fn split<'a>(names: &[&'a OsStr]) -> (&'a OsStr, usize) {
    // `names` is never empty (see `super::names`).
    (names[names.len() - 1], names.len() - 1)
}

pub(super) fn open(root: &Path, names: &[&OsStr], access: Access) -> io::Result<File> {
    let (name, parents) = split(names);
    let dir = walk(root, names, parents, false)?;
    // O_NONBLOCK: opening a FIFO never waits for its other end (and a
    // regular file ignores the flag).
    let base = OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    let flags = match access {
        Access::Read => OFlags::RDONLY,
        Access::Write => OFlags::RDWR,
        Access::WriteOrCreate => OFlags::RDWR | OFlags::CREATE,
        Access::CreateNew => OFlags::RDWR | OFlags::CREATE | OFlags::EXCL,
    };
    let path = || shown(root, names, names.len());
    let fd = match rustix::fs::openat(&dir, name, base | flags, Mode::from_raw_mode(0o666)) {
        Ok(fd) => fd,
        Err(Errno::ISDIR) => {
            return Err(Refusal::NotRegular {
                path: path(),
                kind: FileKind::Directory,
            }
            .into_io());
        }
        // ENXIO: a socket, or a FIFO opened for writing with no reader.
        Err(e @ (Errno::LOOP | Errno::MLINK | Errno::NXIO | Errno::OPNOTSUPP)) => {
            return Err(refusal(&dir, name, path(), e, false));
        }
        Err(e) => return Err(e.into()),
    };
    let kind = kind_of(&rustix::fs::fstat(&fd)?);
    if kind != FileKind::Regular {
        return Err(Refusal::NotRegular { path: path(), kind }.into_io());
    }
    Ok(File::from(fd))
}

pub(super) fn kind(root: &Path, names: &[&OsStr]) -> io::Result<Option<FileKind>> {
    Ok(entry(root, names)?.map(|entry| entry.kind))
}

pub(super) fn create_dir(root: &Path, names: &[&OsStr], all: bool) -> io::Result<()> {
    if all {
        return walk(root, names, names.len(), true).map(drop);
    }
    let (name, parents) = split(names);
    let dir = walk(root, names, parents, false)?;
    Ok(rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777))?)
}

pub(super) fn write_atomic(root: &Path, names: &[&OsStr], bytes: &[u8]) -> io::Result<()> {
    write_atomic_mode(root, names, bytes, None)
}

pub(super) fn write_atomic_mode(
    root: &Path,
    names: &[&OsStr],
    bytes: &[u8],
    permissions: Option<u32>,
) -> io::Result<()> {
    let (name, parents) = split(names);
    let dir = walk(root, names, parents, false)?;
    let tmp = temporary_name(name);
    let flags = OFlags::WRONLY
        | OFlags::CREATE
        | OFlags::EXCL
        | OFlags::NOFOLLOW
        | OFlags::CLOEXEC
        | OFlags::NOCTTY;
    let mode = Mode::from_raw_mode(0o666);
    let fd = match rustix::fs::openat(&dir, &tmp, flags, mode) {
        Ok(fd) => fd,
        // Left by a crash of a process with this pid, or planted (a link
        // to somewhere else): the entry goes, whatever it names stays.
        Err(Errno::EXIST) => {
            rustix::fs::unlinkat(&dir, &tmp, AtFlags::empty())?;
            rustix::fs::openat(&dir, &tmp, flags, mode)?
        }
        Err(e) => return Err(e.into()),
    };
    let mut file = File::from(fd);
    let written = (|| -> io::Result<()> {
        if let Some(permissions) = permissions {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(permissions & 0o7777))?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        rustix::fs::renameat(&dir, &tmp, &dir, name)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&dir, &tmp, AtFlags::empty());
    }
    written?;
    let _ = rustix::fs::fsync(&dir);
    Ok(())
}

pub(super) fn rename(root: &Path, from: &[&OsStr], to: &[&OsStr]) -> io::Result<()> {
    let (from_name, from_parents) = split(from);
    let (to_name, to_parents) = split(to);
    let from_dir = walk(root, from, from_parents, false)?;
    let to_dir = walk(root, to, to_parents, false)?;
    Ok(rustix::fs::renameat(
        &from_dir, from_name, &to_dir, to_name,
    )?)
}

pub(super) fn remove_file(root: &Path, names: &[&OsStr]) -> io::Result<()> {
    let (name, parents) = split(names);
    let dir = walk(root, names, parents, false)?;
    Ok(rustix::fs::unlinkat(&dir, name, AtFlags::empty())?)
}

pub(super) fn entry(root: &Path, names: &[&OsStr]) -> io::Result<Option<super::Entry>> {
    let (name, parents) = split(names);
    let dir = match walk(root, names, parents, false) {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some(super::Entry {
            kind: kind_of(&stat),
            mode: stat.st_mode & 0o7777,
            size: u64::try_from(stat.st_size).unwrap_or(0),
        })),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

pub(super) fn read_link(root: &Path, names: &[&OsStr]) -> io::Result<std::path::PathBuf> {
    use std::os::unix::ffi::OsStringExt as _;
    let (name, parents) = split(names);
    let dir = walk(root, names, parents, false)?;
    let target = rustix::fs::readlinkat(&dir, name, Vec::new())?;
    Ok(std::ffi::OsString::from_vec(target.into_bytes()).into())
}

pub(super) fn symlink(root: &Path, names: &[&OsStr], target: &Path) -> io::Result<()> {
    let (name, parents) = split(names);
    let dir = walk(root, names, parents, false)?;
    rustix::fs::symlinkat(target, &dir, name)?;
    let _ = rustix::fs::fsync(&dir);
    Ok(())
}

pub(super) fn set_dir_mode(root: &Path, names: &[&OsStr], mode: u32) -> io::Result<()> {
    let dir = walk(root, names, names.len(), false)?;
    Ok(rustix::fs::fchmod(
        &dir,
        Mode::from_raw_mode(mode & 0o7777),
    )?)
}

pub(super) fn remove_dir(root: &Path, names: &[&OsStr]) -> io::Result<()> {
    let (name, parents) = split(names);
    let dir = walk(root, names, parents, false)?;
    Ok(rustix::fs::unlinkat(&dir, name, AtFlags::REMOVEDIR)?)
}

pub(super) fn sync_dir(root: &Path, names: &[&OsStr]) {
    if let Ok(dir) = walk(root, names, names.len(), false) {
        let _ = rustix::fs::fsync(&dir);
    }
}
