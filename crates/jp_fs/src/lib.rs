//! The files jp keeps inside a workspace (conversation logs, their locks,
//! the active-conversation marker, `.jp/config.toml` as `jp init` writes it,
//! a scripted provider's script and recordings), opened so that nothing a
//! repository commits can send a read or a write out of it.
//!
//! Every function takes a `root` that the user chose (the workspace root,
//! followed as the operating system resolves it) and a path `rel` below it.
//! `rel` must be relative and made of plain names (no `..`, no `.`, no
//! root). Each directory on the way from `root` is opened without following
//! a symbolic link (`openat(2)` with `O_NOFOLLOW` on Unix), and so is the
//! file at the end: a link anywhere below `root` is refused
//! ([`Refusal::Link`]), never followed. What is opened must be a regular
//! file ([`Refusal::NotRegular`]: a FIFO, a device or a directory is
//! refused; the open itself never blocks on a FIFO), and the `read_*`
//! functions read at most a limit the caller names
//! ([`Refusal::TooLarge`]).
//!
//! A refusal is an [`io::Error`] whose inner error is a [`Refusal`] (see
//! [`Refusal::of`]), so callers report it the way they report any failed
//! open; a file that is not there stays [`io::ErrorKind::NotFound`].
//!
//! It also owns [`normalize_lexically`], the one lexical path normaliser
//! (`.`, `..`, repeated separators) that policies and tools share: pure,
//! with no I/O.
//! [`io_reason`] words an I/O error (any, not only these) the way jp's
//! messages quote it.
//!
//! It depends on no other jp crate, so every jp crate may use it.

use std::ffi::OsStr;
use std::fmt;
use std::fs::File;
use std::io::{self, Read as _};
use std::path::{Component, Path, PathBuf};

mod lexical;
#[cfg(not(unix))]
mod portable;
#[cfg(not(unix))]
use portable as sys;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as sys;

pub use lexical::normalize_lexically;

/// What kind of file something is (as `lstat(2)` says), for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A symbolic link.
    Link,
    /// A FIFO (named pipe).
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device (`/dev/zero`, a terminal).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Something else.
    Other,
}

impl FileKind {
    /// The kind in words, with its article: `a directory`.
    #[must_use]
    pub fn described(self) -> &'static str {
        match self {
            Self::Regular => "a regular file",
            Self::Directory => "a directory",
            Self::Link => "a symbolic link",
            Self::Fifo => "a FIFO (named pipe)",
            Self::Socket => "a socket",
            Self::CharDevice => "a character device",
            Self::BlockDevice => "a block device",
            Self::Other => "not a regular file",
        }
    }
}

/// Why a file was not opened or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `path` (the file, or a directory on the way to it) is a symbolic
    /// link.
    Link(PathBuf),
    /// `path` is on the way to the file but is not a directory.
    NotDirectory {
        /// What is there.
        path: PathBuf,
        /// What kind of file it is.
        kind: FileKind,
    },
    /// `path` is not a regular file.
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What kind of file it is.
        kind: FileKind,
    },
    /// `path` holds more than `limit` bytes.
    TooLarge {
        /// The file.
        path: PathBuf,
        /// How many bytes the caller reads at most.
        limit: u64,
    },
    /// `rel` is not a path below `root` made of plain names.
    NotInside {
        /// The directory it must stay in.
        root: PathBuf,
        /// The path as given.
        rel: PathBuf,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Link(path) => write!(
                f,
                "{} is a symbolic link, and jp follows no link among the files it keeps in a workspace",
                path.display()
            ),
            Self::NotDirectory { path, kind } => write!(
                f,
                "{} is {}, not a directory",
                path.display(),
                kind.described()
            ),
            Self::NotRegular { path, kind } => write!(
                f,
                "{} is {}, not a regular file",
                path.display(),
                kind.described()
            ),
            Self::TooLarge { path, limit } => write!(
                f,
                "{} is larger than {}, the most jp reads of it",
                path.display(),
                size(*limit)
            ),
            Self::NotInside { root, rel } => write!(
                f,
                "`{}` is not a path inside {} (it must be relative, without `..`)",
                rel.display(),
                root.display()
            ),
        }
    }
}

impl std::error::Error for Refusal {}

impl From<Refusal> for io::Error {
    fn from(refusal: Refusal) -> Self {
        refusal.into_io()
    }
}

impl Refusal {
    /// The refusal `error` carries, if it is one.
    #[must_use]
    pub fn of(error: &io::Error) -> Option<&Self> {
        error.get_ref()?.downcast_ref()
    }

    fn into_io(self) -> io::Error {
        let kind = match &self {
            Self::TooLarge { .. } => io::ErrorKind::FileTooLarge,
            Self::NotRegular {
                kind: FileKind::Directory,
                ..
            } => io::ErrorKind::IsADirectory,
            Self::NotDirectory { .. } => io::ErrorKind::NotADirectory,
            Self::NotInside { .. } => io::ErrorKind::InvalidInput,
            Self::Link(_) | Self::NotRegular { .. } => io::ErrorKind::Other,
        };
        io::Error::new(kind, self)
    }
}

/// `limit` bytes for a message: `64 MiB`, `1 GiB`, `4096 bytes`.
fn size(limit: u64) -> String {
    const KIB: u64 = 1024;
    match limit {
        n if n >= KIB * KIB * KIB && n % (KIB * KIB * KIB) == 0 => {
            format!("{} GiB", n / (KIB * KIB * KIB))
        }
        n if n >= KIB * KIB && n % (KIB * KIB) == 0 => format!("{} MiB", n / (KIB * KIB)),
        n if n >= KIB && n % KIB == 0 => format!("{} KiB", n / KIB),
        n => format!("{n} bytes"),
    }
}

/// The plain names of `rel`, or [`Refusal::NotInside`].
fn names<'a>(root: &Path, rel: &'a Path) -> io::Result<Vec<&'a OsStr>> {
    let mut names = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(name) => names.push(name),
            // `a/./b` is `a/b`; `Path::components` keeps only a leading
            // `.`, which names nothing.
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(not_inside(root, rel));
            }
        }
    }
    if names.is_empty() {
        return Err(not_inside(root, rel));
    }
    Ok(names)
}

fn not_inside(root: &Path, rel: &Path) -> io::Error {
    Refusal::NotInside {
        root: root.to_path_buf(),
        rel: rel.to_path_buf(),
    }
    .into_io()
}

/// An I/O error as a short lowercase phrase, without the `(os error N)`
/// suffix: `permission denied`, `file name too long`.
#[must_use]
pub fn io_reason(error: &std::io::Error) -> String {
    let text = error.to_string();
    let text = text
        .split_once(" (os error")
        .map_or(text.as_str(), |(reason, _)| reason);
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

/// How [`open`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read only; the file must exist.
    Read,
    /// Read and write, without truncating; the file must exist.
    Write,
    /// Read and write, without truncating; created (empty) if missing.
    WriteOrCreate,
    /// Read and write a new file; [`io::ErrorKind::AlreadyExists`] when
    /// anything (a link included) is there.
    CreateNew,
}

/// Opens the regular file `root/rel`, following no link below `root`.
///
/// # Errors
///
/// A [`Refusal`] when a directory on the way or the file is a link, a
/// directory on the way is not one, or the file is not a regular file;
/// [`io::ErrorKind::NotFound`] when it (or a directory on the way) is not
/// there; any other error of the open.
pub fn open(root: &Path, rel: &Path, access: Access) -> io::Result<File> {
    let names = names(root, rel)?;
    sys::open(root, &names, access)
}

/// Reads the regular file `root/rel` whole, when it holds at most `limit`
/// bytes.
///
/// # Errors
///
/// As [`open`]; [`Refusal::TooLarge`] when it holds more than `limit`
/// bytes.
pub fn read(root: &Path, rel: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open(root, rel, Access::Read)?;
    read_file(file, &root.join(rel), limit)
}

/// Reads the rest of the open `file` (named `path` in messages), when it
/// holds at most `limit` bytes.
///
/// # Errors
///
/// [`Refusal::TooLarge`] when there is more than `limit`; a read error.
pub fn read_file(file: File, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let too_large = || {
        Refusal::TooLarge {
            path: path.to_path_buf(),
            limit,
        }
        .into_io()
    };
    let len = file.metadata()?.len();
    if len > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // The file may grow while it is read: read one byte past the limit to
    // see that it did.
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read`] as UTF-8 text.
///
/// # Errors
///
/// As [`read`]; [`io::ErrorKind::InvalidData`] when it is not UTF-8.
pub fn read_to_string(root: &Path, rel: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read(root, rel, limit)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not UTF-8 text", root.join(rel).display()),
        )
    })
}

/// What is at `root/rel`, without following a link there or on the way:
/// `None` when nothing is.
///
/// # Errors
///
/// A [`Refusal`] when a directory on the way is a link or not a
/// directory; an error of `lstat(2)`.
pub fn kind(root: &Path, rel: &Path) -> io::Result<Option<FileKind>> {
    let names = names(root, rel)?;
    sys::kind(root, &names)
}

/// Whether `root/rel` is a regular file reached through no link (for
/// checks whose answer only decides what to try next: the open that
/// follows reports what is wrong).
#[must_use]
pub fn is_file(root: &Path, rel: &Path) -> bool {
    matches!(kind(root, rel), Ok(Some(FileKind::Regular)))
}

/// Creates the directory `root/rel` and the directories on the way that
/// are missing. A link on the way, or at `rel`, is refused.
///
/// # Errors
///
/// A [`Refusal`] for a link or a file on the way; an error of `mkdir(2)`.
pub fn create_dir_all(root: &Path, rel: &Path) -> io::Result<()> {
    let names = names(root, rel)?;
    sys::create_dir(root, &names, true)
}

/// Creates the directory `root/rel`, whose parent must exist;
/// [`io::ErrorKind::AlreadyExists`] when anything is there.
///
/// # Errors
///
/// As [`create_dir_all`]; `AlreadyExists`.
pub fn create_dir(root: &Path, rel: &Path) -> io::Result<()> {
    let names = names(root, rel)?;
    sys::create_dir(root, &names, false)
}

/// Replaces `root/rel` with `bytes` whole: a new temporary file beside it
/// (`.NAME.PID.tmp`, created with `O_EXCL`, so a link planted at that name
/// is removed, never written through), synced, renamed over `rel` (which
/// replaces a link there rather than following it), and the directory
/// synced.
///
/// # Errors
///
/// A [`Refusal`] for a link on the way; an error of the write.
pub fn write_atomic(root: &Path, rel: &Path, bytes: &[u8]) -> io::Result<()> {
    let names = names(root, rel)?;
    sys::write_atomic(root, &names, bytes)
}

/// [`write_atomic`], with the new file's permission bits set to `mode`
/// (`0o644`) before it replaces `rel` (on platforms without permission
/// bits, `mode` is ignored).
///
/// # Errors
///
/// As [`write_atomic`].
pub fn write_atomic_mode(root: &Path, rel: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let names = names(root, rel)?;
    sys::write_atomic_mode(root, &names, bytes, Some(mode))
}

/// What `lstat(2)` says of an entry: its kind, permission bits and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// What it is.
    pub kind: FileKind,
    /// Its permission bits (`0o7777` of its mode; 0 where there are none).
    pub mode: u32,
    /// Its size in bytes.
    pub size: u64,
}

/// The entry `root/rel` itself (a link is described, not followed);
/// `None` when nothing is there, or a directory on the way is missing.
///
/// # Errors
///
/// A [`Refusal`] for a link on the way; an error of `stat(2)`.
pub fn entry(root: &Path, rel: &Path) -> io::Result<Option<Entry>> {
    let names = names(root, rel)?;
    sys::entry(root, &names)
}

/// The text of the symbolic link `root/rel` (where it points).
///
/// # Errors
///
/// A [`Refusal`] for a link on the way; an error of `readlink(2)` (it is
/// not a link).
pub fn read_link(root: &Path, rel: &Path) -> io::Result<PathBuf> {
    let names = names(root, rel)?;
    sys::read_link(root, &names)
}

/// Creates the symbolic link `root/rel` pointing at `target` (written as
/// given, never followed); [`io::ErrorKind::AlreadyExists`] when anything
/// is there.
///
/// # Errors
///
/// A [`Refusal`] for a link on the way; an error of `symlink(2)`;
/// [`io::ErrorKind::Unsupported`] where jp cannot make links.
pub fn symlink(root: &Path, rel: &Path, target: &Path) -> io::Result<()> {
    let names = names(root, rel)?;
    sys::symlink(root, &names, target)
}

/// Sets the permission bits of the directory `root/rel` to `mode`,
/// through the directory itself (opened following no link, so a link put
/// in its place is refused, never followed).
///
/// # Errors
///
/// A [`Refusal`] for a link on the way or at `rel`, or when it is not a
/// directory; an error of `fchmod(2)`.
pub fn set_dir_mode(root: &Path, rel: &Path, mode: u32) -> io::Result<()> {
    let names = names(root, rel)?;
    sys::set_dir_mode(root, &names, mode)
}

/// Removes the directory `root/rel` when it is empty.
///
/// # Errors
///
/// A [`Refusal`] for a link on the way; an error of `rmdir(2)` (it is not
/// empty, or not a directory).
pub fn remove_dir(root: &Path, rel: &Path) -> io::Result<()> {
    let names = names(root, rel)?;
    sys::remove_dir(root, &names)
}

/// Renames `root/from` to `root/to`, following no link on the way to
/// either (the entries themselves are moved, whatever they are).
///
/// # Errors
///
/// A [`Refusal`] for a link on the way; an error of `rename(2)`.
pub fn rename(root: &Path, from: &Path, to: &Path) -> io::Result<()> {
    let from = names(root, from)?;
    let to = names(root, to)?;
    sys::rename(root, &from, &to)
}

/// Removes the entry `root/rel` (a link itself, not what it names); not
/// a directory.
///
/// # Errors
///
/// A [`Refusal`] for a link on the way; an error of `unlink(2)`.
pub fn remove_file(root: &Path, rel: &Path) -> io::Result<()> {
    let names = names(root, rel)?;
    sys::remove_file(root, &names)
}

/// Syncs the directory `root/rel` (so that an entry created, renamed or
/// removed in it survives a crash); best effort.
pub fn sync_dir(root: &Path, rel: &Path) {
    if let Ok(names) = names(root, rel) {
        sys::sync_dir(root, &names);
    }
}

/// `root` joined with the first `n` of `names`, for messages.
fn shown(root: &Path, names: &[&OsStr], n: usize) -> PathBuf {
    let mut path = root.to_path_buf();
    for name in &names[..n] {
        path.push(name);
    }
    path
}

/// The temporary name [`write_atomic`] writes `name` through.
fn temporary_name(name: &OsStr) -> std::ffi::OsString {
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".{}.tmp", std::process::id()));
    tmp
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
