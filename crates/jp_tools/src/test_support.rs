//! A temporary workspace for the tools' tests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use jp_tool::{Context, Outcome, Request, ToolInfo};
use serde_json::{Map, Value};

/// A temporary workspace root.
pub(crate) struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The absolute path of `rel`.
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    /// Writes `content` to `rel`, creating directories.
    pub(crate) fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// The content of `rel`.
    pub(crate) fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    /// A request in this workspace with these arguments.
    pub(crate) fn request(&self, arguments: Value) -> Request {
        let Value::Object(arguments) = arguments else {
            panic!("arguments must be an object");
        };
        Request {
            tool: ToolInfo {
                name: "test".into(),
                arguments,
                answers: Map::new(),
                options: Map::new(),
            },
            context: Context::run(self.root()),
        }
    }

    /// Runs tool `name` with `arguments`.
    pub(crate) fn run(&self, name: &str, arguments: Value) -> Outcome {
        crate::run(name, self.request(arguments))
    }

    /// The names in the root (and below, as relative paths), sorted; to
    /// check that nothing else was written.
    pub(crate) fn tree(&self) -> Vec<String> {
        fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                out.push(path.strip_prefix(root).unwrap().display().to_string());
                if path.is_dir() && !path.is_symlink() {
                    walk(&path, root, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self.root(), self.root(), &mut out);
        out.sort();
        out
    }
}

/// An error outcome.
pub(crate) fn error(message: impl Into<String>) -> Outcome {
    Outcome::error(message)
}
