//! Finding the program to run: a name is looked up in the absolute
//! directories of PATH, a path (with a `/`) is taken relative to the
//! working directory.
//!
//! jp resolves the name itself rather than leaving it to `execvp`, for two
//! reasons: a relative directory in PATH (`.`, or an empty entry, which
//! means the same) would let a file in the workspace named `git` run
//! where the policy approved git, so such entries are skipped, here and in
//! the program's own PATH (a program that runs others, such as git running
//! `git-NAME`, must not find them there either); and a program that cannot
//! be run gets an error that says which one and why.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// `program` as a file to execute: for a name, the first executable file
/// of that name in an absolute directory of `path_var`; for a path, `cwd`
/// joined with it.
///
/// # Errors
///
/// A message naming the program and why it cannot be run.
pub(crate) fn resolve(
    program: &str,
    cwd: &Path,
    shown_cwd: &str,
    path_var: Option<&OsStr>,
) -> Result<PathBuf, String> {
    if program.contains('/') {
        let file = cwd.join(program);
        return match executable(&file) {
            Found::Executable => Ok(file),
            Found::NotExecutable(why) => Err(format!("cannot run `{program}`: it is {why}")),
            Found::Missing => Err(format!(
                "cannot run `{program}`: no such file (relative paths are taken from `{shown_cwd}`)"
            )),
        };
    }
    let path_var = path_var.unwrap_or_default();
    let mut refused = None;
    for dir in std::env::split_paths(path_var).filter(|dir| dir.is_absolute()) {
        let file = dir.join(program);
        match executable(&file) {
            Found::Executable => return Ok(file),
            Found::NotExecutable(why) => {
                refused.get_or_insert_with(|| format!(" (`{}` is {why})", file.display()));
            }
            Found::Missing => {}
        }
    }
    Err(format!(
        "cannot run `{program}`: no executable file of that name in PATH's directories{}",
        refused.unwrap_or_default()
    ))
}

/// `path_var` without its relative directories, or `None` when it has
/// none (the program then gets PATH as it is).
pub(crate) fn absolute_path_var(path_var: &OsStr) -> Option<OsString> {
    let dirs: Vec<PathBuf> = std::env::split_paths(path_var).collect();
    if dirs.iter().all(|dir| dir.is_absolute()) {
        return None;
    }
    // Joining cannot fail: the directories came from splitting, so none
    // contains the separator.
    std::env::join_paths(dirs.into_iter().filter(|dir| dir.is_absolute())).ok()
}

/// What is at a path a program could be run from.
enum Found {
    Executable,
    /// Something is there, but it cannot be run; why.
    NotExecutable(&'static str),
    Missing,
}

fn executable(file: &Path) -> Found {
    let Ok(metadata) = std::fs::metadata(file) else {
        return Found::Missing;
    };
    if metadata.is_dir() {
        return Found::NotExecutable("a directory");
    }
    if !metadata.is_file() {
        return Found::NotExecutable("not a regular file");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        if metadata.permissions().mode() & 0o111 == 0 {
            return Found::NotExecutable("not executable (no execute permission)");
        }
    }
    Found::Executable
}

#[cfg(test)]
#[path = "program_tests.rs"]
mod tests;
