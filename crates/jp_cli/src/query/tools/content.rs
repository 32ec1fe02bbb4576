//! The text a call carries: when a call's content is one long string (a
//! file's text, a replacement), `e` at the prompt opens that text itself
//! in the editor, not its JSON escaping, and the edit replaces it.

use std::path::Path;

use serde_json::{Map, Value};

use crate::query::render::SHORT;

/// A call's one long string argument, as the editor opens it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextArgument {
    /// Where it is in the arguments, as a JSON pointer (`/content`,
    /// `/patterns/0/new`).
    pub pointer: String,
    /// The text.
    pub text: String,
    /// The name of the file the editor opens: the file name of the call's
    /// `path` argument (`lib.rs`), so that the editor knows the language,
    /// else `text.txt`.
    pub file_name: String,
}

/// The one long string among `arguments` (a string the display shows as
/// text: with a newline, or longer than a line's [`SHORT`] characters),
/// or `None` when there is none or more than one. `skip_old` leaves out
/// the `old` texts of `patterns` (jp's `fs_modify_file`: they must match
/// the file, and are no content to write), so that a single pattern's
/// `new` text is what opens.
#[must_use]
pub fn text_argument(arguments: &Map<String, Value>, skip_old: bool) -> Option<TextArgument> {
    let mut found = Vec::new();
    for (key, value) in arguments {
        long_strings(value, &mut format!("/{}", escape(key)), &mut found);
    }
    if skip_old {
        found.retain(|(pointer, _)| !is_pattern_old(pointer));
    }
    let [(pointer, text)] = <[_; 1]>::try_from(found).ok()?;
    let file_name = arguments
        .get("path")
        .and_then(Value::as_str)
        .and_then(file_name_for)
        .unwrap_or_else(|| "text.txt".to_owned());
    Some(TextArgument {
        pointer,
        text: text.to_owned(),
        file_name,
    })
}

/// `arguments` with the string at `pointer` replaced by `text`.
#[must_use]
pub fn with_text(arguments: &Map<String, Value>, pointer: &str, text: String) -> Value {
    let mut value = Value::Object(arguments.clone());
    if let Some(slot) = value.pointer_mut(pointer) {
        *slot = Value::String(text);
    }
    value
}

/// The edited text, without the newline an editor adds at the end of the
/// file when `original` had none (a replacement in the middle of a line
/// would otherwise gain a line break).
#[must_use]
pub fn edited_text(original: &str, mut edited: String) -> String {
    if !original.ends_with('\n') && edited.ends_with('\n') {
        edited.pop();
        if !original.ends_with('\r') && edited.ends_with('\r') {
            edited.pop();
        }
    }
    edited
}

/// Collects the long strings under `value`, at `pointer`.
fn long_strings<'a>(value: &'a Value, pointer: &mut String, found: &mut Vec<(String, &'a str)>) {
    match value {
        Value::String(text) if text.contains('\n') || text.chars().count() > SHORT => {
            found.push((pointer.clone(), text));
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{index}"));
                long_strings(item, pointer, found);
                pointer.truncate(len);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&escape(key));
                long_strings(item, pointer, found);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

/// `key` as one JSON pointer token.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Whether `pointer` is `/patterns/N/old`.
fn is_pattern_old(pointer: &str) -> bool {
    let parts: Vec<&str> = pointer.split('/').collect();
    matches!(
        parts.as_slice(),
        ["", "patterns", index, "old"] if index.parse::<usize>().is_ok()
    )
}

/// The name to give the editor's file for a call on `path`: its file
/// name when that is plain (letters, digits, `.`, `_`, `-`, `+`, at most
/// 100 of them), else `text.EXT` with its extension when that is plain;
/// `None` when neither is.
fn file_name_for(path: &str) -> Option<String> {
    let plain = |name: &str| {
        !name.is_empty()
            && name.len() <= 100
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+'))
    };
    let path = Path::new(path);
    let name = path.file_name()?.to_str()?;
    if plain(name) && name.chars().any(|c| c != '.') {
        return Some(name.to_owned());
    }
    let extension = path.extension()?.to_str()?;
    plain(extension).then(|| format!("text.{extension}"))
}

#[cfg(test)]
#[path = "content_tests.rs"]
mod tests;
