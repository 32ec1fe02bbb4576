#![allow(clippy::unwrap_used)]

use jp_conversation::{EventBuilder, EventPart, FlushedEvent, ResponseStatus, ToolCallPart};
use jp_tools::DefaultTool;

use super::*;
use jp_term::printer::{columns, expand_tabs};

fn options(format: CallFormat) -> RenderOptions {
    RenderOptions {
        format,
        show_arguments: true,
        max_lines: 4,
        call_lines: 100,
        width: 80,
    }
}

/// What a terminal shows for `calls` (index, id, name, argument chunks),
/// streamed in the order given, each call flushed when `flush` holds; and
/// the summary of each unflushed call at the end.
fn render(options: RenderOptions, calls: &[(usize, &str, &str, &[&str])], flush: bool) -> String {
    let mut builder = EventBuilder::new();
    let mut renderer = ToolRenderer::new(options);
    let mut lines = Vec::new();
    let mut started = std::collections::HashSet::new();
    for (index, id, name, chunks) in calls {
        if started.insert(*index) {
            let start = ToolCallPart::Start {
                id: (*id).into(),
                name: (*name).into(),
            };
            builder
                .handle_part(*index, EventPart::ToolCall(start))
                .unwrap();
            lines.extend(renderer.start(id, name, DefaultTool::named(name)));
        }
        for chunk in *chunks {
            let part = EventPart::ToolCall(ToolCallPart::ArgumentChunk((*chunk).into()));
            for progress in builder.handle_part(*index, part).unwrap() {
                lines.extend(renderer.progress(&progress));
            }
        }
    }
    let mut out = String::new();
    let mut ids: Vec<(usize, &str)> = calls.iter().map(|(i, id, ..)| (*i, *id)).collect();
    ids.dedup();
    if flush {
        for (index, _) in &ids {
            if let Some(FlushedEvent::ToolCallRequest(call)) = builder.handle_flush(*index) {
                lines.extend(renderer.finish(&call));
            }
        }
    }
    for line in lines {
        out.push_str(&format!(
            "{:<6} {}\n",
            format!("{:?}", line.style),
            line.text
        ));
    }
    if !flush {
        for (_, id) in ids {
            out.push_str(&format!(
                "summary {id}: {}\n",
                renderer.summary(id).unwrap()
            ));
        }
    }
    out
}

const CREATE: &str = r#"{"path": "src/lib.rs", "mode": 420, "content": "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\n"}"#;

#[test]
fn partial_arguments() {
    // The content stops half-way through its third line.
    let half = &CREATE[..CREATE.find("line 3").unwrap() + 4];
    for format in [CallFormat::FunctionCall, CallFormat::Json] {
        let shown = render(
            options(format),
            &[(0, "a", "fs_create_file", &[half])],
            false,
        );
        insta::assert_snapshot!(format!("partial_{format:?}"), shown);
    }
}

#[test]
fn long_content_is_capped_with_a_tail() {
    for format in [CallFormat::FunctionCall, CallFormat::Json] {
        let shown = render(
            options(format),
            &[(0, "a", "fs_create_file", &[CREATE])],
            true,
        );
        insta::assert_snapshot!(format!("long_{format:?}"), shown);
    }
}

#[test]
fn a_modify_call_shows_a_diff() {
    let args = r#"{"path": "src/lib.rs", "patterns": [{"old": "fn main() {\n    old();\n}", "new": "fn main() {\n    new();\n    more();\n}"}, {"old": "a", "new": "b"}]}"#;
    for format in [CallFormat::FunctionCall, CallFormat::Json] {
        let shown = render(
            options(format),
            &[(0, "a", "fs_modify_file", &[args])],
            true,
        );
        insta::assert_snapshot!(format!("modify_{format:?}"), shown);
    }
}

#[test]
fn a_narrow_terminal_wraps_and_never_panics() {
    for width in 0..14 {
        let options = RenderOptions {
            width,
            ..options(CallFormat::FunctionCall)
        };
        render(options, &[(0, "a", "fs_create_file", &[CREATE])], true);
    }
    let narrow = RenderOptions {
        width: 12,
        ..options(CallFormat::FunctionCall)
    };
    let shown = render(narrow, &[(0, "a", "fs_create_file", &[CREATE])], true);
    insta::assert_snapshot!(shown);
}

#[test]
fn a_narrow_terminal_wraps_the_json_format_too() {
    for width in 0..14 {
        let options = RenderOptions {
            width,
            ..options(CallFormat::Json)
        };
        render(options, &[(0, "a", "fs_create_file", &[CREATE])], true);
    }
    let narrow = RenderOptions {
        width: 12,
        ..options(CallFormat::Json)
    };
    let shown = render(narrow, &[(0, "a", "fs_create_file", &[CREATE])], true);
    insta::assert_snapshot!(shown);
}

#[test]
fn without_show_arguments_only_the_header_shows() {
    let modify = r#"{"path": "src/lib.rs", "patterns": [{"old": "a\nb", "new": "c"}]}"#;
    for format in [CallFormat::FunctionCall, CallFormat::Json] {
        let hidden = RenderOptions {
            show_arguments: false,
            ..options(format)
        };
        let shown = render(
            hidden,
            &[
                (0, "a", "fs_create_file", &[CREATE]),
                (1, "b", "fs_modify_file", &[modify]),
            ],
            true,
        );
        assert_eq!(
            shown, "Header Calling tool fs_create_file\nHeader Calling tool fs_modify_file\n",
            "{format:?}"
        );
    }
}

#[test]
fn rendering_does_not_depend_on_how_the_arguments_are_split() {
    let args = r#"{"path": "a/b.rs", "n": 1.5, "ok": true, "content": "x\ny\u00e9\nz", "e": "", "l": [1, {"k": "v"}]}"#;
    for format in [CallFormat::FunctionCall, CallFormat::Json] {
        let whole = render(options(format), &[(0, "a", "t", &[args])], true);
        let mut split_at: Vec<usize> = (1..args.len())
            .filter(|i| args.is_char_boundary(*i))
            .collect();
        split_at.push(args.len());
        for at in split_at {
            let (head, tail) = args.split_at(at);
            let pieces: Vec<&str> = [head, tail].into_iter().filter(|p| !p.is_empty()).collect();
            let shown = render(options(format), &[(0, "a", "t", &pieces)], true);
            assert_eq!(shown, whole, "split at {at}");
        }
        let bytes: Vec<String> = args.chars().map(String::from).collect();
        let bytes: Vec<&str> = bytes.iter().map(String::as_str).collect();
        assert_eq!(
            render(options(format), &[(0, "a", "t", &bytes)], true),
            whole
        );
    }
}

#[test]
fn escape_sequences_from_the_model_are_shown_escaped() {
    let args =
        "{\"pa\\u001b]0;x\\u0007th\": \"\\u001b[8m\", \"content\": \"ok\\n\\u001b[2Jgone\\r\\n\"}";
    let shown = render(
        options(CallFormat::FunctionCall),
        &[(0, "a", "t\u{1b}[1m", &[args])],
        true,
    );
    assert!(!shown.contains('\u{1b}'), "{shown}");
    insta::assert_snapshot!(shown);
}

#[test]
fn interleaved_calls_are_told_apart() {
    let shown = render(
        options(CallFormat::FunctionCall),
        &[
            (
                0,
                "a",
                "fs_create_file",
                &[r#"{"path": "one.txt", "content": "1\n2"#],
            ),
            (
                1,
                "b",
                "fs_create_file",
                &[r#"{"path": "two.txt", "content": "3\n"#],
            ),
            (0, "a", "fs_create_file", &["\\n\"}"]),
            (1, "b", "fs_create_file", &["4\"}"]),
        ],
        true,
    );
    insta::assert_snapshot!(shown);
}

#[test]
fn the_summary_marks_exactly_what_still_streams() {
    let cases = [
        (r#"{"path": "a"#, "path: <streaming>"),
        (r#"{"path": "a", "#, r#"path: "a""#),
        (
            r#"{"path": "a", "content": "x"#,
            r#"path: "a", content: <streaming>"#,
        ),
        // A number is known once something follows it.
        (
            r#"{"path": "a", "content": "x", "n": 3"#,
            r#"path: "a", content: "x""#,
        ),
        (
            r#"{"path": "a", "content": "x", "n": 3,"#,
            r#"path: "a", content: "x", n: 3"#,
        ),
        (r#"{"l": [1, 2"#, "l: <streaming>"),
        (r#"{"l": [1, 2], "#, "l: …"),
    ];
    for (args, summary) in cases {
        let shown = render(
            options(CallFormat::FunctionCall),
            &[(0, "a", "t", &[args])],
            false,
        );
        let line = shown.lines().last().unwrap();
        assert_eq!(line, format!("summary a: {summary}"), "{args}");
    }
}

#[test]
fn the_prompt_summary_follows_the_format_and_marks_what_streams() {
    for (format, expected) in [
        (
            CallFormat::FunctionCall,
            [
                "fs_create_file(<streaming>)",
                "fs_create_file(path: \"src/a.rs\", content: <streaming>)",
                "fs_create_file(path: \"src/a.rs\", …)",
            ],
        ),
        (
            CallFormat::Json,
            [
                "fs_create_file(<streaming>)",
                "fs_create_file {\"path\": \"src/a.rs\", \"content\": <streaming>}",
                "fs_create_file {\"path\": \"src/a.rs\", …}",
            ],
        ),
    ] {
        let mut renderer = ToolRenderer::new(RenderOptions {
            format,
            show_arguments: true,
            max_lines: 20,
            call_lines: 100,
            width: 80,
        });
        renderer.start("a", "fs_create_file", DefaultTool::named("fs_create_file"));
        assert_eq!(renderer.prompt_summary("a").unwrap(), expected[0]);
        let mut parser = jp_conversation::IncrementalArgParser::new();
        for fragment in parser
            .push(r#"{"path": "src/a.rs", "content": "fn ma"#)
            .unwrap()
        {
            renderer.progress(&ToolCallArgumentProgress {
                tool_call_id: "a".into(),
                tool_name: "fs_create_file".into(),
                fragment,
            });
        }
        assert_eq!(renderer.prompt_summary("a").unwrap(), expected[1]);
        assert_eq!(renderer.prompt_summary("b"), None);
        // Only `path` so far: more may follow.
        renderer.start("c", "fs_create_file", DefaultTool::named("fs_create_file"));
        let mut parser = jp_conversation::IncrementalArgParser::new();
        for fragment in parser.push(r#"{"path": "src/a.rs", "#).unwrap() {
            renderer.progress(&ToolCallArgumentProgress {
                tool_call_id: "c".into(),
                tool_name: "fs_create_file".into(),
                fragment,
            });
        }
        assert_eq!(renderer.prompt_summary("c").unwrap(), expected[2]);
    }
}

/// Lines as a snapshot shows them: each one's style, then its text.
fn shown(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|line| format!("{:<6} {}\n", format!("{:?}", line.style), line.text))
        .collect()
}

fn result(status: ResponseStatus, content: &str) -> ToolCallResponse {
    ToolCallResponse {
        id: "1".into(),
        status,
        content: content.into(),
        ran: None,
    }
}

#[test]
fn a_long_result_is_capped_with_a_tail() {
    let content = "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\n";
    let lines = result_lines(
        "fs_read_file",
        &result(ResponseStatus::Success, content),
        None,
        4,
        false,
    );
    insta::assert_snapshot!(shown(&lines));
}

#[test]
fn an_error_result_is_bad() {
    let content =
        "tool `fs_read_file` exited with code 3; its stderr ends with:\nno such file: a.txt";
    let lines = result_lines(
        "fs_read_file",
        &result(ResponseStatus::Error, content),
        None,
        4,
        false,
    );
    insta::assert_snapshot!(shown(&lines));
}

#[test]
fn a_withheld_result_shows_the_note_first() {
    let response = result(
        ResponseStatus::Withheld,
        "The tool ran, but the user's policy withholds its result from you.",
    );
    let note = Some("fs_read_file: result withheld by you");
    let mut out = shown(&result_lines("fs_read_file", &response, note, 4, false));
    // A hidden tool shows the note alone.
    out.push_str("-- hidden:\n");
    out.push_str(&shown(&result_lines(
        "fs_read_file",
        &response,
        note,
        4,
        true,
    )));
    insta::assert_snapshot!(out);
}

#[test]
fn a_one_line_result_shares_the_status_line() {
    let lines = result_lines(
        "fs_create_file",
        &result(ResponseStatus::Success, "created src/lib.rs (120 bytes)"),
        None,
        4,
        false,
    );
    insta::assert_snapshot!(shown(&lines));
}

#[test]
fn an_empty_result_shows_the_status_alone() {
    let mut out = shown(&result_lines(
        "fs_delete_file",
        &result(ResponseStatus::Success, ""),
        None,
        4,
        false,
    ));
    // So does any result when no lines may show.
    out.push_str("-- max_lines = 0:\n");
    out.push_str(&shown(&result_lines(
        "fs_read_file",
        &result(ResponseStatus::Success, "a\nb\nc"),
        None,
        0,
        false,
    )));
    insta::assert_snapshot!(out);
}

#[test]
fn a_long_result_line_is_cut_not_wrapped() {
    // `result_lines` does not wrap (a log keeps one line per result line;
    // on a terminal the shell wraps them with `wrap`, below); a line is cut
    // at RESULT_LINE_CHARS characters, whatever the width.
    let long = "x".repeat(RESULT_LINE_CHARS + 50);
    let mut out = shown(&result_lines(
        "t",
        &result(ResponseStatus::Success, &long),
        None,
        4,
        false,
    ));
    out.push_str(&shown(&result_lines(
        "t",
        &result(ResponseStatus::Success, &format!("short\n{long}\né")),
        None,
        4,
        false,
    )));
    insta::assert_snapshot!(out);
}

#[test]
fn escape_sequences_in_a_result_are_shown_escaped() {
    let lines = result_lines(
        "t\u{1b}[1m",
        &result(
            ResponseStatus::Success,
            "ok\n\u{1b}[2Jgone\r\n\u{1b}]0;title\u{7}",
        ),
        Some("t: result \u{1b}[8mhidden"),
        4,
        false,
    );
    let out = shown(&lines);
    assert!(!out.contains('\u{1b}'), "{out}");
    insta::assert_snapshot!(out);
}

/// Checks what `wrap` promises of `wrapped`, the lines of `lines` at
/// `width`: no line takes more terminal columns, each continuation starts
/// with its line's indent and keeps its style, and the pieces join back
/// into each line, its tabs drawn as spaces.
fn assert_wrapped(lines: &[Line], wrapped: &[Line], width: usize) {
    let mut at = wrapped.iter();
    for line in lines {
        let text = expand_tabs(&line.text).into_owned();
        let indent: String = text.chars().take_while(|c| *c == ' ').collect();
        let indent = if indent.len() * 2 > width.max(8) {
            String::new()
        } else {
            indent
        };
        let first = at.next().unwrap();
        assert_eq!(first.style, line.style);
        let mut joined = first.text.clone();
        while joined.len() < text.len() {
            let next = at.next().unwrap();
            assert_eq!(next.style, line.style, "{next:?}");
            let piece = next.text.strip_prefix(&indent).unwrap();
            assert!(!piece.is_empty(), "{next:?}");
            joined.push_str(piece);
        }
        assert_eq!(joined, text);
    }
    assert_eq!(at.next(), None);
    for line in wrapped {
        assert!(columns(&line.text) <= width, "{line:?}");
        assert!(!line.text.contains('\t'), "{line:?}");
    }
}

#[test]
fn wide_characters_and_tabs_wrap_at_the_terminal_s_columns() {
    let line = |text: &str| Line {
        style: Style::Dim,
        text: text.to_owned(),
    };
    // Each of 日本語 takes two columns; `e\u{301}` is one column (a
    // combining accent); a tab takes TAB_COLUMNS. A wide character that
    // does not fit at the end of a row starts the next one.
    let lines = vec![
        line("日本語のファイル名.rs"),
        line("  \tif x {\treturn;\t}"),
        line("  日本語日本語"),
        line("cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301}"),
        line("ab日本語"),
    ];
    let wrapped = wrap(lines.clone(), 9);
    assert_wrapped(&lines, &wrapped, 9);
    let texts: Vec<&str> = wrapped.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "日本語の",
            "ファイル",
            "名.rs",
            "      if ",
            "x {    re",
            "turn;    ",
            "}",
            "  日本語",
            "  日本語",
            "cafe\u{301} cafe\u{301}",
            " cafe\u{301} caf",
            "e\u{301}",
            "ab日本語",
        ]
    );
    // Wrapping is the same at every width, however narrow.
    for width in 0..40 {
        assert_wrapped(&lines, &wrap(lines.clone(), width), width.max(8));
    }
}

#[test]
fn a_result_wraps_to_a_narrow_terminal_keeping_the_indent() {
    const WIDTH: usize = 20;
    let note = Some("fs_read_file: result withheld by you, then sent");
    let one_line = result(
        ResponseStatus::Success,
        "created src/lib.rs (120 bytes, 3 lines)",
    );
    let many = result(
        ResponseStatus::Error,
        "exit code 3; stderr ends with:\nshort\nno such file or directory: src/very/long/path.rs\n\
         \nfour\nfive\nsix",
    );
    let mut out = String::new();
    for (title, name, response, note) in [
        ("one line, after a note", "fs_read_file", &one_line, note),
        ("many lines, with a tail", "fs_read_file", &many, None),
    ] {
        let lines = result_lines(name, response, note, 4, false);
        let wrapped = wrap(lines.clone(), WIDTH);
        assert_wrapped(&lines, &wrapped, WIDTH);
        out.push_str(&format!("-- {title}:\n{}", shown(&wrapped)));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn results_and_notes_wrap_at_words() {
    let line = |text: &str| Line {
        style: Style::Dim,
        text: text.to_owned(),
    };
    let lines = vec![
        line("    `printf \"x\"` exited with status 0"),
        line("  no diff to show: patterns[0].old occurs 0 times"),
        line("    averyveryverylongwordthatcannotfit here"),
    ];
    let wrapped = wrap_words(lines.clone(), 24);
    assert_wrapped(&lines, &wrapped, 24);
    let texts: Vec<&str> = wrapped.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "    `printf \"x\"` exited ",
            "    with status 0",
            "  no diff to show: ",
            "  patterns[0].old ",
            "  occurs 0 times",
            // A word wider than a row is cut as `wrap` cuts it.
            "    averyveryverylongwor",
            "    dthatcannotfit here",
        ]
    );
    for width in 0..60 {
        assert_wrapped(&lines, &wrap_words(lines.clone(), width), width.max(8));
    }
}

#[test]
fn a_cut_result_line_wraps_whole() {
    // A line past RESULT_LINE_CHARS is cut, and on a terminal what is left
    // wraps; so does a line at every width, however narrow.
    let long = format!("{}\nend", "x".repeat(RESULT_LINE_CHARS + 50));
    let lines = result_lines("t", &result(ResponseStatus::Success, &long), None, 4, false);
    for width in 0..=RESULT_LINE_CHARS + 10 {
        let wrapped = wrap(lines.clone(), width);
        assert_wrapped(&lines, &wrapped, width.max(8));
    }
    let wrapped = wrap(lines.clone(), 60);
    let texts: Vec<&str> = wrapped.iter().map(|l| l.text.as_str()).collect();
    let x = |n| "x".repeat(n);
    assert_eq!(
        texts,
        [
            "  t success:".to_owned(),
            format!("    {}", x(56)),
            format!("    {}", x(56)),
            format!("    {}", x(56)),
            format!("    {}…", x(31)),
            "    end".to_owned(),
        ]
    );
}

/// What a terminal shows of one call streamed in `chunks`, with a `--`
/// line after each chunk that showed something (so a snapshot tells what
/// showed live), then what showing the finished call adds.
fn render_live(options: RenderOptions, name: &str, chunks: &[&str]) -> String {
    let mut builder = EventBuilder::new();
    let mut renderer = ToolRenderer::new(options);
    let start = ToolCallPart::Start {
        id: "a".into(),
        name: name.into(),
    };
    builder.handle_part(0, EventPart::ToolCall(start)).unwrap();
    let mut out = shown(&renderer.start("a", name, DefaultTool::named(name)));
    let mut received = 0;
    for chunk in chunks {
        received += chunk.len();
        let part = EventPart::ToolCall(ToolCallPart::ArgumentChunk((*chunk).into()));
        let mut lines = Vec::new();
        for progress in builder.handle_part(0, part).unwrap() {
            lines.extend(renderer.progress(&progress));
        }
        if !lines.is_empty() {
            out.push_str(&format!("-- after {received} bytes:\n{}", shown(&lines)));
        }
    }
    if let Some(FlushedEvent::ToolCallRequest(call)) = builder.handle_flush(0) {
        out.push_str(&format!("-- finished:\n{}", shown(&renderer.finish(&call))));
    }
    out
}

/// `text` split into pieces of `size` bytes (on character boundaries).
fn pieces(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = size.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (piece, tail) = rest.split_at(end);
        out.push(piece);
        rest = tail;
    }
    out
}

/// A minified file: 200 KB on one line.
fn minified() -> String {
    let code: String = (0..)
        .map(|n| format!("function f{n}(a){{return a+{n}}};"))
        .take_while({
            let mut length = 0;
            move |piece: &String| {
                length += piece.len();
                length <= 200_000
            }
        })
        .collect();
    serde_json::json!({"path": "dist/app.min.js", "content": code}).to_string()
}

#[test]
fn a_long_line_shows_live_and_its_rows_are_capped() {
    // One logical line of 200 KB: the rows show as they fill, before the
    // string ends; the cap counts rows, so the line is cut after
    // `max_lines` of them, and the rest is counted in bytes.
    let args = minified();
    let narrow = |format| RenderOptions {
        width: 40,
        ..options(format)
    };
    for format in [CallFormat::FunctionCall, CallFormat::Json] {
        let shown = render_live(narrow(format), "fs_create_file", &pieces(&args, 100)[..4]);
        insta::assert_snapshot!(format!("long_line_live_{format:?}"), shown);
        let whole = render_live(narrow(format), "fs_create_file", &pieces(&args, 4096));
        insta::assert_snapshot!(format!("long_line_capped_{format:?}"), whole);
    }
}

#[test]
fn a_line_past_the_line_cap_is_cut_and_the_next_lines_show() {
    // Room for many rows: a line shows its first LINE_CHARS characters
    // and ends in `…`; the lines after it show; the tail counts the bytes
    // left out (and, past the cap, the lines).
    let long: String = "0123456789".repeat(100);
    let content = format!("{long}\nshort line\n{long}\nlast\n");
    for (format, max_lines) in [
        (CallFormat::FunctionCall, 20),
        (CallFormat::Json, 20),
        (CallFormat::FunctionCall, 13),
    ] {
        let args = serde_json::json!({"path": "a.txt", "content": content}).to_string();
        let options = RenderOptions {
            max_lines,
            ..options(format)
        };
        let shown = render_live(options, "fs_create_file", &pieces(&args, 64));
        insta::assert_snapshot!(format!("line_cap_{format:?}_{max_lines}"), shown);
    }
}

#[test]
fn a_calls_values_are_capped_in_all() {
    // A thousand array items would be a thousand lines; the call's cap
    // stops them and counts the rest when the call is complete.
    let items: Vec<u32> = (1..=1000).collect();
    let patterns: Vec<serde_json::Value> = (1..=50)
        .map(|n| serde_json::json!({"old": format!("a{n}\nb"), "new": format!("c{n}")}))
        .collect();
    for format in [CallFormat::FunctionCall, CallFormat::Json] {
        let options = RenderOptions {
            call_lines: 10,
            ..options(format)
        };
        let args = serde_json::json!({"path": "a", "items": items, "mode": 1}).to_string();
        let mut out = render_live(options, "t", &pieces(&args, 512));
        let args = serde_json::json!({"path": "src/lib.rs", "patterns": patterns}).to_string();
        out.push_str(&render_live(options, "fs_modify_file", &pieces(&args, 512)));
        insta::assert_snapshot!(format!("call_cap_{format:?}"), out);
    }
}

#[test]
fn zero_width_characters_count_toward_the_caps() {
    // 100,000 joiners (zero columns each) on one line: the line is still
    // cut at the row and line caps, and the rest is counted, not held.
    let content = format!("a{}\nend", "\u{200d}".repeat(100_000));
    let args = serde_json::json!({"path": "a", "content": content}).to_string();
    let options = RenderOptions {
        width: 30,
        max_lines: 3,
        ..options(CallFormat::FunctionCall)
    };
    let out = render(options, &[(0, "a", "t", &pieces(&args, 4096))], true);
    assert!(out.len() < 1_000, "{} bytes shown", out.len());
    assert!(out.contains(" more bytes"), "{out}");
    for line in out.lines() {
        assert!(columns(&line[7..]) <= 30, "{line}");
    }
}

#[test]
fn long_lines_render_the_same_however_they_are_split() {
    // Rows fill character by character, so where the chunks end never
    // changes them; escapes, tabs and wide characters included.
    let line = "é\u{1b}[2J→日\t".repeat(40);
    let content = format!("{line}\n{line}{line}\nend");
    let args = serde_json::json!({"path": "a", "content": content}).to_string();
    for (width, max_lines) in [(12, 3), (30, 5), (80, 20)] {
        let options = RenderOptions {
            width,
            max_lines,
            ..options(CallFormat::FunctionCall)
        };
        let whole = render(options, &[(0, "a", "t", &[&args])], true);
        for size in [1, 3, 7, 64] {
            assert_eq!(
                render(options, &[(0, "a", "t", &pieces(&args, size))], true),
                whole,
                "width {width}, pieces of {size}"
            );
        }
        // Each line is `STYLE  TEXT`, the style padded to 6.
        for line in whole.lines() {
            let text = &line[7..];
            assert!(columns(text) <= width.max(8), "{line}");
            assert!(!text.contains('\t'), "{line}");
        }
    }
}

/// What a terminal shows of call `a` of `name`, which runs `runs`, with
/// `args` streamed in one chunk.
fn lines_of(name: &str, runs: Option<DefaultTool>, args: &str) -> Vec<String> {
    let mut builder = EventBuilder::new();
    let mut renderer = ToolRenderer::new(options(CallFormat::FunctionCall));
    let start = ToolCallPart::Start {
        id: "a".into(),
        name: name.into(),
    };
    builder.handle_part(0, EventPart::ToolCall(start)).unwrap();
    let mut out = renderer.start("a", name, runs);
    let chunk = EventPart::ToolCall(ToolCallPart::ArgumentChunk(args.into()));
    for progress in builder.handle_part(0, chunk).unwrap() {
        out.extend(renderer.progress(&progress));
    }
    out.iter()
        .map(|line| format!("{:?} {}", line.style, line.text))
        .collect()
}

#[test]
fn the_diff_is_for_a_call_of_jps_modify_tool_whatever_it_is_called() {
    let args = r#"{"path": "src/lib.rs", "patterns": [{"old": "a\nb", "new": "c\nd"}]}"#;
    let renamed = lines_of("edit", Some(DefaultTool::ModifyFile), args);
    let other = lines_of("fs_modify_file", None, args);
    assert_eq!(
        renamed,
        [
            "Header Calling tool edit",
            "Dim   path: \"src/lib.rs\"",
            "Dim   patterns[0].old:",
            "Bad   - a",
            "Bad   - b",
            "Dim   patterns[0].new:",
            "Good   + c",
            "Good   + d",
        ]
    );
    // A tool of the same name that is not jp's: its text is only text.
    assert_eq!(
        other,
        [
            "Header Calling tool fs_modify_file",
            "Dim   path: \"src/lib.rs\"",
            "Dim   patterns[0].old:",
            "Dim   │ a",
            "Dim   │ b",
            "Dim   patterns[0].new:",
            "Dim   │ c",
            "Dim   │ d",
        ]
    );
}
