//! `fs_create_file {path, content}`: a new file, with its directories.

use jp_tool::Request;

use crate::atomic;
use crate::workspace::Workspace;

/// Creates the file; refuses to replace anything.
pub(crate) fn run(request: &Request) -> Result<String, String> {
    let workspace = Workspace::open(&request.context.root)?;
    let raw = crate::arguments::string_argument(request, "path")?;
    let target = workspace.resolve(raw)?;
    let content = crate::arguments::string_argument(request, "content")?;
    let shown = &target.shown;

    if target.rel.as_os_str().is_empty() {
        return Err(format!("cannot create `{shown}`: it is the workspace root"));
    }
    if raw.ends_with('/') {
        return Err(format!(
            "cannot create `{raw}`: the path ends with `/`, so it names a directory; fs_create_file creates files"
        ));
    }
    if let Ok(metadata) = std::fs::symlink_metadata(&target.abs) {
        return Err(if metadata.is_dir() {
            format!("cannot create `{shown}`: a directory with that name exists")
        } else {
            format!("cannot create `{shown}`: it already exists; use fs_modify_file to change it")
        });
    }
    if let Some(parent) = target.abs.parent() {
        std::fs::create_dir_all(parent).map_err(|e| {
            let dir = target
                .rel
                .parent()
                .map_or_else(|| ".".to_owned(), crate::workspace::show);
            format!("cannot create `{shown}`: cannot create the directory `{dir}`: {e}")
        })?;
    }
    atomic::create_new(&target.abs, content.as_bytes()).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            format!("cannot create `{shown}`: it already exists; use fs_modify_file to change it")
        } else {
            format!("cannot create `{shown}`: {e}")
        }
    })?;
    let size = match content.lines().count() {
        0 => "empty".to_owned(),
        lines => crate::words::plural(lines, "line", "lines"),
    };
    Ok(format!("created {shown} ({size})"))
}

#[cfg(test)]
#[path = "create_tests.rs"]
mod tests;
