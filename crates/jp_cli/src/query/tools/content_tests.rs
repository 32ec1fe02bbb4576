#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;

fn map(value: Value) -> Map<String, Value> {
    let Value::Object(map) = value else {
        panic!("not an object");
    };
    map
}

#[test]
fn a_files_content_opens_as_text_named_like_the_file() {
    let arguments = map(json!({"path": "src/lib.rs", "content": "fn a() {}\n"}));
    assert_eq!(
        text_argument(&arguments, false),
        Some(TextArgument {
            pointer: "/content".into(),
            text: "fn a() {}\n".into(),
            file_name: "lib.rs".into(),
        })
    );
    // One long line is text too, as the display shows it.
    let long = "x".repeat(61);
    let arguments = map(json!({"note": long}));
    assert_eq!(
        text_argument(&arguments, false).map(|t| (t.pointer, t.file_name)),
        Some(("/note".into(), "text.txt".into()))
    );
}

#[test]
fn short_values_or_several_long_ones_open_as_json() {
    assert_eq!(
        text_argument(&map(json!({"path": "a.txt", "content": "short"})), false),
        None
    );
    assert_eq!(
        text_argument(&map(json!({"a": "one\n", "b": "two\n"})), false),
        None
    );
    assert_eq!(text_argument(&map(json!({"n": 1})), false), None);
}

#[test]
fn a_single_patterns_replacement_opens_and_its_old_text_does_not() {
    let arguments = map(json!({
        "path": "src/main.rs",
        "patterns": [{"old": "fn a() {\n}\n", "new": "fn b() {\n}\n"}]
    }));
    assert_eq!(
        text_argument(&arguments, true),
        Some(TextArgument {
            pointer: "/patterns/0/new".into(),
            text: "fn b() {\n}\n".into(),
            file_name: "main.rs".into(),
        })
    );
    // Any tool but jp's own counts both.
    assert_eq!(text_argument(&arguments, false), None);
    // Two replacements: which one would be ambiguous.
    let two = map(json!({
        "path": "a.rs",
        "patterns": [{"old": "a", "new": "b\n"}, {"old": "c", "new": "d\n"}]
    }));
    assert_eq!(text_argument(&two, true), None);
}

#[test]
fn the_edit_replaces_the_text_where_it_was() {
    let arguments = map(json!({"path": "x/y", "patterns": [{"old": "o", "new": "n\n"}]}));
    assert_eq!(
        with_text(&arguments, "/patterns/0/new", "edited\n".into()),
        json!({"path": "x/y", "patterns": [{"old": "o", "new": "edited\n"}]})
    );
    let keys = map(json!({"a/b": "t\n", "c~d": 1}));
    let found = text_argument(&keys, false).unwrap();
    assert_eq!(found.pointer, "/a~1b");
    assert_eq!(
        with_text(&keys, &found.pointer, "u".into()),
        json!({"a/b": "u", "c~d": 1})
    );
}

#[test]
fn the_newline_an_editor_adds_is_taken_off_only_when_the_text_had_none() {
    assert_eq!(edited_text("no newline", "edited\n".into()), "edited");
    assert_eq!(edited_text("no newline", "edited\r\n".into()), "edited");
    assert_eq!(edited_text("line\n", "edited\n".into()), "edited\n");
    assert_eq!(edited_text("x", "edited".into()), "edited");
    assert_eq!(edited_text("x", "two\n\n".into()), "two\n");
}

#[test]
fn the_file_name_keeps_the_language_and_nothing_strange() {
    assert_eq!(file_name_for("src/lib.rs").as_deref(), Some("lib.rs"));
    assert_eq!(file_name_for("Makefile").as_deref(), Some("Makefile"));
    assert_eq!(file_name_for(".gitignore").as_deref(), Some(".gitignore"));
    assert_eq!(
        file_name_for("docs/my notes.md").as_deref(),
        Some("text.md")
    );
    assert_eq!(file_name_for("a\u{1b}b"), None);
    assert_eq!(file_name_for(".."), None);
    assert_eq!(file_name_for(""), None);
}
