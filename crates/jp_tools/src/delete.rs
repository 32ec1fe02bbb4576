//! `fs_delete_file {path}`: removes one file.

use jp_tool::Request;

use crate::workspace::Workspace;

/// Deletes a file (or a symbolic link, leaving its target), never a
/// directory.
pub(crate) fn run(request: &Request) -> Result<String, String> {
    let workspace = Workspace::open(&request.context.root)?;
    let target = workspace.resolve(crate::arguments::string_argument(request, "path")?)?;
    let shown = &target.shown;
    if target.rel.as_os_str().is_empty() {
        return Err(format!("cannot delete `{shown}`: it is the workspace root"));
    }
    let metadata = match std::fs::symlink_metadata(&target.abs) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("cannot delete `{shown}`: no such file"));
        }
        Err(e) => return Err(format!("cannot delete `{shown}`: {e}")),
    };
    let file_type = metadata.file_type();
    if file_type.is_dir() {
        return Err(format!(
            "cannot delete `{shown}`: it is a directory; fs_delete_file deletes only files"
        ));
    }
    if !file_type.is_file() && !file_type.is_symlink() {
        return Err(format!("cannot delete `{shown}`: it is not a regular file"));
    }
    std::fs::remove_file(&target.abs).map_err(|e| format!("cannot delete `{shown}`: {e}"))?;
    if file_type.is_symlink() {
        Ok(format!(
            "deleted {shown} (a symbolic link; what it pointed to is unchanged)"
        ))
    } else {
        Ok(format!("deleted {shown}"))
    }
}

#[cfg(test)]
#[path = "delete_tests.rs"]
mod tests;
