//! `fs_read_file {path}`: a text file's content.

use jp_tool::Request;

use crate::text::{TextError, read_text};
use crate::workspace::Workspace;

/// The file's content, exactly.
pub(crate) fn run(request: &Request) -> Result<String, String> {
    let workspace = Workspace::open(&request.context.root)?;
    let target = workspace.resolve(crate::arguments::string_argument(request, "path")?)?;
    match read_text(&target) {
        Ok((text, _)) => Ok(text),
        Err(TextError::Directory) => Err(format!(
            "cannot read `{}`: it is a directory; fs_list_files lists the files in it",
            target.shown
        )),
        Err(e) => Err(e.message("fs_read_file", "read", &target.shown)),
    }
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
