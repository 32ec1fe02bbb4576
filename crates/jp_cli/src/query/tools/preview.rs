//! What a call would do to a file, shown before it runs: jp's own
//! `fs_modify_file` as a unified diff against the file as it is on disk
//! ([`crate::query::diff`]).

use jp_config::tool::ToolConfig;
use serde_json::{Map, Value};

use super::ToolCoordinator;
use crate::printer::{Style, sanitize};
use crate::query::diff::unified;
use crate::query::render::Line;

/// Whether `tool` runs jp's own default tool `which` (`jp tool
/// fs_modify_file`), whatever it is called: only then does jp know what
/// the call does with its arguments.
#[must_use]
pub fn runs_jp_tool(tool: &ToolConfig, which: &str) -> bool {
    tool.command
        .as_ref()
        .is_some_and(|command| command.argv() == ["jp", "tool", which])
}

impl ToolCoordinator<'_> {
    /// The change call `name` with `arguments` would make to an existing
    /// file, as a unified diff (not wrapped) against the file as it is now:
    /// for a tool that runs jp's `fs_modify_file`; `None` for any other.
    /// When the change cannot be made (an `old` that does not occur once,
    /// a file that is not there), one line says why, in the tool's words.
    #[must_use]
    pub fn file_change(&self, name: &str, arguments: &Map<String, Value>) -> Option<Vec<Line>> {
        let tool = self.tool(name)?;
        if !runs_jp_tool(tool, "fs_modify_file") {
            return None;
        }
        Some(match jp_tools::preview_modify(&self.root, arguments) {
            Ok(change) => unified(&change.shown, name, &change.before, &change.after),
            Err(why) => vec![Line {
                style: Style::Warn,
                text: format!("  no diff to show: {}", sanitize(&why)),
            }],
        })
    }
}
