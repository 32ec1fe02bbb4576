//! What a call would do to a file, shown before it runs: jp's own
//! `fs_modify_file` as a unified diff ([`crate::query::diff`]) against the
//! file as it is on disk, or as the calls before it in the same response
//! leave it.

use std::cell::Cell;
use std::sync::PoisonError;

use serde_json::{Map, Value};

use super::asker::{Asker, Planned};
use crate::query::decision::Verdict;
use crate::query::diff::unified;
use crate::query::render::Line;
use jp_term::printer::{Style, sanitize};
use jp_tools::DefaultTool;

impl Asker<'_> {
    /// The change call `call` (its id) of `name` with `arguments` would
    /// make to an existing file, as a unified diff (not wrapped): for a
    /// tool that runs jp's `fs_modify_file`; `None` for any other. The
    /// diff is against the file as the calls before it in this response
    /// leave it, where one of them changes it too (a line says so), and as
    /// it is on disk otherwise. When the change cannot be made (an `old`
    /// that does not occur once, a file that is not there), one line says
    /// why, in the tool's words.
    #[must_use]
    pub fn file_change(
        &self,
        call: &str,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Option<Vec<Line>> {
        if self.judge.default_tool(name) != Some(DefaultTool::ModifyFile) {
            return None;
        }
        let mut planned = self.planned.lock().unwrap_or_else(PoisonError::into_inner);
        let own = planned.iter().position(|p| p.call == call);
        let earlier = &planned[..own.unwrap_or(planned.len())];
        let over_earlier = Cell::new(false);
        let result = jp_tools::preview_modify_over(&self.judge.root, arguments, &|file| {
            let text = earlier.iter().rev().find(|p| p.file == file)?.after.clone();
            over_earlier.set(true);
            Some(text)
        });
        Some(match result {
            Ok(change) => {
                let mut lines = Vec::new();
                if over_earlier.get() {
                    lines.push(Line {
                        style: Style::Dim,
                        text: format!(
                            "  against {} as the calls before this one leave it",
                            sanitize(&change.shown)
                        ),
                    });
                }
                lines.extend(unified(&change.shown, name, &change.before, &change.after));
                let entry = Planned {
                    call: call.to_owned(),
                    file: change.shown,
                    after: change.after,
                };
                match own {
                    Some(at) => planned[at] = entry,
                    None => planned.push(entry),
                }
                lines
            }
            Err(why) => {
                // It would fail: later calls are not shown its change.
                if let Some(at) = own {
                    planned.remove(at);
                }
                vec![Line {
                    style: Style::Warn,
                    text: format!("  no diff to show: {}", sanitize(&why)),
                }]
            }
        })
    }

    /// A new response starts: the files are as the calls before it left
    /// them, on disk.
    pub fn new_response(&self) {
        self.planned
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Call `call` (its id) was decided: a call that does not run changes
    /// no file, and one the user edited changes it as edited.
    pub fn settled(&self, call: &str, verdict: &Verdict) {
        match verdict {
            Verdict::Run {
                tool,
                arguments,
                edited: true,
                ..
            } => {
                if let Value::Object(arguments) = arguments.as_value() {
                    let _ = self.file_change(call, tool, arguments);
                }
            }
            Verdict::Run { .. } => {}
            Verdict::NotRun { .. } => self
                .planned
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|p| p.call != call),
        }
    }
}

#[cfg(test)]
#[path = "preview_tests.rs"]
mod tests;
