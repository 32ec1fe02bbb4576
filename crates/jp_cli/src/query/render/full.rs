//! A call's arguments in full, as `v` at a prompt shows them: nothing cut
//! and nothing counted, so what the user approves is what they saw.

use serde_json::{Map, Value};

use super::line::Line;
use jp_term::printer::{Style, sanitize};

/// Every argument in `arguments`, one line per value (`path: "src/a.rs"`,
/// nested ones by their path: `patterns[0].new`), a string with a newline
/// as text lines under a `│` gutter. `streaming` names the top-level
/// argument still arriving: it is marked `(still streaming)` and, if a
/// string, shown as text up to where it has arrived, so a partial value
/// never looks complete. Everything is escaped for a terminal.
#[must_use]
pub fn full_arguments(arguments: &Map<String, Value>, streaming: Option<&str>) -> Vec<Line> {
    let mut out = Vec::new();
    for (key, value) in arguments {
        if streaming == Some(key.as_str()) {
            out.push(dim(format!("  {} (still streaming):", sanitize(key))));
            match value {
                Value::String(text) => gutter(text, &mut out),
                _ => flatten(key, value, &mut out),
            }
        } else {
            flatten(key, value, &mut out);
        }
    }
    out
}

/// The lines of `value` at `path`, depth first. The parser bounds the
/// depth, but the walk keeps its own stack anyway.
fn flatten(path: &str, value: &Value, out: &mut Vec<Line>) {
    let mut stack = vec![(path.to_owned(), value)];
    while let Some((path, value)) = stack.pop() {
        match value {
            Value::Array(items) if !items.is_empty() => {
                for (index, item) in items.iter().enumerate().rev() {
                    stack.push((format!("{path}[{index}]"), item));
                }
            }
            Value::Object(map) if !map.is_empty() => {
                for (key, item) in map.iter().rev() {
                    stack.push((format!("{path}.{key}"), item));
                }
            }
            Value::String(text) if text.contains('\n') => {
                out.push(dim(format!("  {}:", sanitize(&path))));
                gutter(text, out);
            }
            _ => out.push(dim(format!(
                "  {}: {}",
                sanitize(&path),
                sanitize(&value.to_string())
            ))),
        }
    }
}

/// `text` as lines under the gutter.
fn gutter(text: &str, out: &mut Vec<Line>) {
    for line in text.lines() {
        out.push(dim(format!("  │ {}", sanitize(line))));
    }
}

fn dim(text: String) -> Line {
    Line {
        style: Style::Dim,
        text,
    }
}
