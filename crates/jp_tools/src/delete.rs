//! `fs_delete_file {path}`: removes one file.

use jp_tool::Request;

use crate::workspace::Workspace;

/// Deletes a file (or a symbolic link, leaving its target), never a
/// directory.
pub(crate) fn run(request: &Request) -> Result<String, String> {
    let workspace = Workspace::open(&request.context.root)?;
    let target = workspace.resolve(crate::string_argument(request, "path")?)?;
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
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use jp_tool::Outcome;
    use serde_json::json;

    use crate::test_support::{Fixture, error};

    fn delete(f: &Fixture, path: &str) -> Outcome {
        f.run("fs_delete_file", json!({ "path": path }))
    }

    #[test]
    fn deletes_a_file() {
        let f = Fixture::new();
        f.write("src/old.rs", "x");
        f.write("src/lib.rs", "x");
        assert_eq!(
            delete(&f, "./src/old.rs"),
            Outcome::success("deleted src/old.rs")
        );
        assert_eq!(f.tree(), ["src", "src/lib.rs"]);
    }

    #[test]
    fn refuses_directories_and_missing_files() {
        let f = Fixture::new();
        f.write("src/lib.rs", "x");
        assert_eq!(
            delete(&f, "src"),
            error("cannot delete `src`: it is a directory; fs_delete_file deletes only files")
        );
        assert_eq!(
            delete(&f, "src/gone.rs"),
            error("cannot delete `src/gone.rs`: no such file")
        );
        assert_eq!(
            delete(&f, "."),
            error("cannot delete `.`: it is the workspace root")
        );
        assert_eq!(
            delete(&f, "src/.."),
            error("cannot delete `.`: it is the workspace root")
        );
        assert_eq!(f.tree(), ["src", "src/lib.rs"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_deleted_not_its_target() {
        let f = Fixture::new();
        f.write("src/lib.rs", "x");
        std::os::unix::fs::symlink("src/lib.rs", f.path("link.rs")).unwrap();
        assert_eq!(
            delete(&f, "link.rs"),
            Outcome::success("deleted link.rs (a symbolic link; what it pointed to is unchanged)")
        );
        assert_eq!(f.tree(), ["src", "src/lib.rs"]);
    }

    #[cfg(unix)]
    #[test]
    fn confinement() {
        let f = Fixture::new();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), f.path("ext")).unwrap();
        assert_eq!(
            delete(&f, "ext/keep"),
            error(format!(
                "refused `ext/keep`: `ext/keep` leads to `{}/keep` through a symbolic link, outside the workspace",
                outside.path().canonicalize().unwrap().display()
            ))
        );
        assert!(outside.path().join("keep").exists());
        assert_eq!(
            delete(&f, "../keep"),
            error(
                "refused `../keep`: it leads outside the workspace (`..` goes above the workspace root)"
            )
        );
    }
}
