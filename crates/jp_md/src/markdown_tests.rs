#![allow(clippy::unwrap_used)]

use super::*;

/// `text` rendered `width` columns wide, fed in pieces of `chunk` bytes
/// (cut at char boundaries), then finished.
fn render_chunked(text: &str, width: usize, ink: Ink, chunk: usize) -> String {
    let mut markdown = Markdown::new(MarkdownOptions { width, ink });
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = chunk.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        out.push_str(&markdown.push(&rest[..end]));
        rest = &rest[end..];
    }
    out.push_str(&markdown.finish());
    out
}

const PLAIN: Ink = Ink {
    color: false,
    truecolor: false,
    hyperlinks: false,
};

const COLOR: Ink = Ink {
    color: true,
    truecolor: false,
    hyperlinks: false,
};

fn plain(text: &str, width: usize) -> String {
    render_chunked(text, width, PLAIN, 5)
}

fn color(text: &str, width: usize) -> String {
    render_chunked(text, width, COLOR, 5)
}

/// A response with every kind of block.
const RESPONSE: &str = "\
# Plan

Read the **config** first, then *write* `src/lib.rs`.

1. Parse the input
1. Check it:
   - every key is known
   - values fit
1. Write it

> Quoted advice
> that goes on.

```rust
fn main() {}
```

| Crate | Why |
| :--- | ---: |
| syntect | highlighting |
| pulldown-cmark | inline |

See [the docs](https://example.com/docs) or <https://example.com>.

---
";

/// Lines long enough to wrap at 24 columns, in a list and a quote, with
/// markdown in the middle of them; and one at the top level, which the
/// terminal wraps. (Without the empty line, the last would continue the
/// quote's paragraph, as CommonMark has it.)
const LONG: &str = "\
- a list item long enough to wrap *twice* at this width, and `more`
  - a nested item that wraps too, with a_word_wider_than_a_row_of_the_list
> a quote that wraps, with a [link](https://example.com) in it

plain words at the top level that the terminal wraps where it must
";

#[test]
fn a_response_without_colour_keeps_its_markers_and_draws_its_structure() {
    let expected = "\
# Plan

Read the **config** first, then *write* `src/lib.rs`.

1. Parse the input
2. Check it:
   • every key is known
   • values fit
3. Write it

│ Quoted advice
│ that goes on.

```rust
fn main() {}
```

┌────────────────┬──────────────┐
│ Crate          │          Why │
├────────────────┼──────────────┤
│ syntect        │ highlighting │
│ pulldown-cmark │       inline │
└────────────────┴──────────────┘

See the docs (https://example.com/docs) or https://example.com.

────────────────────────────────────────
";
    assert_eq!(plain(RESPONSE, 40), expected);
}

#[test]
fn the_same_text_renders_the_same_whatever_the_pieces_it_arrives_in() {
    for (text, width) in [(RESPONSE, 40), (LONG, 24)] {
        for ink in [PLAIN, COLOR] {
            let whole = render_chunked(text, width, ink, text.len());
            for chunk in [1, 2, 3, 7, 64] {
                assert_eq!(render_chunked(text, width, ink, chunk), whole, "{chunk}");
            }
        }
    }
}

#[test]
fn long_lines_wrap_under_their_list_indent_and_quote_bars() {
    assert_eq!(
        plain(LONG, 24),
        "• a list item long\n  \
           enough to wrap *twice*\n  \
           at this width, and\n  \
           `more`\n  \
           ◦ a nested item that\n    \
             wraps too, with\n    \
             a_word_wider_than_a_\n    \
             row_of_the_list\n\
         │ a quote that wraps,\n\
         │ with a link\n\
         │ (https://example.com)\n\
         │ in it\n\
         \n\
         plain words at the top level that the terminal wraps where it must\n"
    );
}

#[test]
fn with_colour_markers_give_way_to_styles() {
    let text = "## Title\n\nSome **bold**, *italic*, ~~gone~~ and `code`.\n";
    assert_eq!(
        color(text, 80),
        "\x1b[1;35m## Title\x1b[0m\n\
         \n\
         Some \x1b[1mbold\x1b[0m, \x1b[3mitalic\x1b[0m, \x1b[9mgone\x1b[0m and \x1b[36mcode\x1b[0m.\n"
    );
}

#[test]
fn a_first_level_heading_is_underlined_too() {
    assert_eq!(color("# Top\n", 80), "\x1b[1;4;35m# Top\x1b[0m\n");
}

#[test]
fn a_paragraph_is_drawn_word_by_word_until_markdown_may_follow() {
    let mut markdown = Markdown::new(MarkdownOptions {
        width: 80,
        ink: COLOR,
    });
    // A word shows once the space after it is in.
    assert_eq!(markdown.push("Hello, wor"), "Hello,");
    assert_eq!(markdown.push("ld.\nNext"), " world.\n");
    assert_eq!(markdown.push(" line"), "Next");
    // From a character that may be markdown, the line waits for its end.
    assert_eq!(markdown.push(" with *emp"), " line with");
    assert_eq!(markdown.push("hasis* in"), "");
    assert_eq!(markdown.push(" it\n"), " \x1b[3memphasis\x1b[0m in it\n");
    // A line that may be something else waits for its first word.
    assert_eq!(markdown.push("1"), "");
    assert_eq!(markdown.push("."), "");
    assert_eq!(markdown.push(" Fir"), "");
    assert_eq!(markdown.push("st step"), "1. First");
    assert_eq!(markdown.finish(), " step\n");
}

#[test]
fn code_lines_are_drawn_as_they_complete_before_the_fence_closes() {
    let mut markdown = Markdown::new(MarkdownOptions {
        width: 80,
        ink: COLOR,
    });
    assert_eq!(markdown.push("```rust\n"), "\x1b[2m```rust\x1b[0m\n");
    assert_eq!(
        markdown.push("let x = 1;\n"),
        // Text in the theme's foreground (`x`, `=`) keeps the terminal's.
        "\x1b[38;5;139mlet\x1b[0m x = \x1b[38;5;173m1\x1b[0m;\n"
    );
    assert_eq!(markdown.push("```\n"), "\x1b[2m```\x1b[0m\n");
}

#[test]
fn code_in_a_language_it_does_not_know_is_drawn_plain() {
    assert_eq!(
        color("```nosuchlanguage\n*not emphasis*\n```\n", 80),
        "\x1b[2m```nosuchlanguage\x1b[0m\n*not emphasis*\n\x1b[2m```\x1b[0m\n"
    );
}

#[test]
fn truecolor_terminals_get_the_themes_own_colours() {
    let ink = Ink {
        truecolor: true,
        ..COLOR
    };
    assert_eq!(
        render_chunked("```python\nx = 1\n```\n", 80, ink, 4),
        "\x1b[2m```python\x1b[0m\nx = \x1b[38;2;208;135;112m1\x1b[0m\n\x1b[2m```\x1b[0m\n"
    );
}

#[test]
fn control_characters_are_escaped_in_text_and_in_code() {
    let hostile = "red \u{1b}[31m \u{9b}2J \u{202e}x\u{200b}";
    let text =
        format!("A {hostile}\n\n```sh\necho {hostile}\n```\n\n| a |\n|---|\n| {hostile} |\n");
    let out = color(&text, 80);
    // Without the renderer's own sequences, no control character is left.
    let stripped = out
        .replace("\x1b[0m", "")
        .replace("\x1b[2m", "")
        .replace("\x1b[1m", "");
    let stripped = regex::Regex::new("\x1b\\[[0-9;]*m")
        .unwrap()
        .replace_all(&stripped, "");
    assert!(
        !stripped
            .chars()
            .any(|c| c != '\n' && jp_term::printer::needs_escape(c)),
        "{stripped:?}"
    );
    assert_eq!(
        plain(&text, 80),
        "A red \\u{1b}[31m \\u{9b}2J \\u{202e}x\\u{200b}\n\
         \n\
         ```sh\n\
         echo red \\u{1b}[31m \\u{9b}2J \\u{202e}x\\u{200b}\n\
         ```\n\
         \n\
         ┌───────────────────────────────────────────┐\n\
         │ a                                         │\n\
         ├───────────────────────────────────────────┤\n\
         │ red \\u{1b}[31m \\u{9b}2J \\u{202e}x\\u{200b} │\n\
         └───────────────────────────────────────────┘\n"
    );
}

#[test]
fn a_paragraph_wraps_at_words_under_its_list_indent_and_quote_bars() {
    let text = "- a list item long enough to wrap twice at this width\n\n\
                > a quote long enough to wrap at this width too\n";
    assert_eq!(
        plain(text, 24),
        "• a list item long\n  \
           enough to wrap twice\n  \
           at this width\n\
         \n\
         │ a quote long enough to\n\
         │ wrap at this width too\n"
    );
}

#[test]
fn a_word_wider_than_a_row_is_cut() {
    assert_eq!(
        plain("- see abcdefghijklmnopqrstuvwxyz\n", 12),
        "• see\n  abcdefghij\n  klmnopqrst\n  uvwxyz\n"
    );
}

#[test]
fn a_table_wider_than_the_terminal_wraps_its_widest_column() {
    let text =
        "| Name | Description |\n|---|---|\n| jp | a command-line assistant for programmers |\n";
    assert_eq!(
        plain(text, 30),
        "┌──────┬─────────────────────┐\n\
         │ Name │ Description         │\n\
         ├──────┼─────────────────────┤\n\
         │ jp   │ a command-line      │\n\
         │      │ assistant for       │\n\
         │      │ programmers         │\n\
         └──────┴─────────────────────┘\n"
    );
}

#[test]
fn a_table_is_drawn_when_it_ends_and_not_before() {
    let mut markdown = Markdown::new(MarkdownOptions {
        width: 80,
        ink: PLAIN,
    });
    assert_eq!(markdown.push("| a | b |\n"), "");
    assert_eq!(markdown.push("|---|---|\n| 1 | 2 |\n"), "");
    assert_eq!(
        markdown.push("\nAfter.\n"),
        "┌───┬───┐\n│ a │ b │\n├───┼───┤\n│ 1 │ 2 │\n└───┴───┘\n\nAfter.\n"
    );
}

#[test]
fn a_line_with_a_pipe_that_heads_no_table_is_text() {
    assert_eq!(
        plain("Use `a | b` to pipe.\nThen stop.\n", 80),
        "Use `a | b` to pipe.\nThen stop.\n"
    );
}

#[test]
fn links_are_hyperlinks_where_the_terminal_draws_them() {
    let ink = Ink {
        hyperlinks: true,
        ..COLOR
    };
    assert_eq!(
        render_chunked("See [docs](https://example.com/a).\n", 80, ink, 3),
        "See \x1b]8;;https://example.com/a\x1b\\\x1b[4;34mdocs\x1b[0m\x1b]8;;\x1b\\.\n"
    );
    // An address a terminal could read as more than an address is shown
    // as text, escaped.
    assert_eq!(
        render_chunked("[x](<https://e.com/\u{1b}]>)\n", 80, ink, 3),
        "\x1b[4;34mx\x1b[0m (\x1b[2mhttps://e.com/\\u{1b}]\x1b[0m)\n"
    );
}

#[test]
fn numbered_lists_count_from_their_first_number() {
    assert_eq!(
        plain("3. c\n3. d\n\n   more of d\n3. e\n", 80),
        "3. c\n4. d\n\n   more of d\n5. e\n"
    );
}

#[test]
fn nested_lists_take_their_own_bullets() {
    assert_eq!(
        plain("- a\n  - b\n    - c\n      - d\n- e\n", 80),
        "• a\n  ◦ b\n    ▪ c\n      ▪ d\n• e\n"
    );
}

#[test]
fn a_number_inside_a_paragraph_starts_no_list() {
    assert_eq!(
        plain("It was\n2024. A year.\n", 80),
        "It was\n2024. A year.\n"
    );
}

#[test]
fn a_fence_under_a_list_item_keeps_the_items_indent() {
    assert_eq!(
        plain("1. Run:\n   ```sh\n   cargo build\n  ```\n2. Done\n", 80),
        "1. Run:\n   ```sh\n   cargo build\n   ```\n2. Done\n"
    );
}

#[test]
fn windows_line_ends_are_line_ends() {
    assert_eq!(plain("a\r\n\r\n- b\r\n", 80), "a\n\n• b\n");
}

#[test]
fn an_unclosed_fence_ends_with_the_text() {
    let mut markdown = Markdown::new(MarkdownOptions {
        width: 80,
        ink: PLAIN,
    });
    assert_eq!(markdown.push("```\nlet"), "```\n");
    assert_eq!(markdown.finish(), "let\n");
    // What follows starts afresh.
    assert_eq!(markdown.push("*a*\n"), "*a*\n");
}

#[test]
fn emphasis_at_the_start_of_a_line_opens_and_block_markers_inside_are_text() {
    assert_eq!(color("_a_ and # b\n", 80), "\x1b[3ma\x1b[0m and # b\n");
    assert_eq!(plain("# a # b #\n", 80), "# a # b\n");
}

#[test]
fn hyperlinks_are_used_only_where_known_to_work() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |key: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    assert!(hyperlinks_supported(env(&[("TERM_PROGRAM", "WezTerm")])));
    assert!(hyperlinks_supported(env(&[("VTE_VERSION", "6800")])));
    assert!(!hyperlinks_supported(env(&[("VTE_VERSION", "4600")])));
    assert!(!hyperlinks_supported(env(&[("TERM", "xterm")])));
    assert!(!hyperlinks_supported(env(&[
        ("TERM_PROGRAM", "WezTerm"),
        ("TMUX", "/tmp/tmux-0/default,1,0")
    ])));
    assert!(hyperlinks_supported(env(&[
        ("TMUX", "/tmp/tmux-0/default,1,0"),
        ("FORCE_HYPERLINK", "1")
    ])));
    assert!(!hyperlinks_supported(env(&[
        ("TERM_PROGRAM", "WezTerm"),
        ("FORCE_HYPERLINK", "0")
    ])));
}

#[test]
fn a_terminal_resized_while_the_answer_streams_gets_rows_that_fit_it() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static WIDTH: AtomicUsize = AtomicUsize::new(40);
    let mut markdown = Markdown::new(MarkdownOptions {
        width: 40,
        ink: PLAIN,
    })
    .measured_by(|| WIDTH.load(Ordering::Relaxed));
    let item = "- one two three four five six seven eight\n";
    let mut out = markdown.push(item);
    // Narrowed between two lines: the next line wraps to the new width; a
    // line already arriving keeps the width it started with.
    WIDTH.store(20, Ordering::Relaxed);
    out.push_str(&markdown.push(item));
    out.push_str(&markdown.finish());
    assert_eq!(
        out,
        "• one two three four five six seven\n  \
           eight\n\
         • one two three four\n  \
           five six seven\n  \
           eight\n"
    );
}

/// A fence's info string, the text after its opening fence, is escaped
/// like every other part of the markdown: raw, `~~~x ESC]0;TITLE BEL`
/// retitled the window (issue 34).
#[test]
fn a_fences_info_string_is_escaped() {
    let text = "~~~x \u{1b}]0;TITLE\u{7}\ncode\n~~~ \u{9b}2J\n~~~\n";
    assert_eq!(
        plain(text, 80),
        "~~~x \\u{1b}]0;TITLE\\u{7}\ncode\n~~~ \\u{9b}2J\n~~~\n"
    );
    assert_eq!(
        color("```rust \u{202e}x\nlet\n```\n", 80),
        "\x1b[2m```rust \\u{202e}x\x1b[0m\n\x1b[38;5;139mlet\x1b[0m\n\x1b[2m```\x1b[0m\n"
    );
}

proptest::proptest! {
    /// Whatever the model writes, what reaches the terminal holds no
    /// character a terminal acts on or hides, but for the renderer's own
    /// styles and hyperlinks: every part of the markdown (fences and their
    /// info strings, headings, lists, quotes, tables, links and their
    /// targets, code) is escaped.
    #[test]
    fn no_part_of_the_markdown_reaches_the_terminal_raw(
        text in "(```|~~~|# |> |- |1\\. |\\| |\\[|\\]\\(|\\)|<|>|\\*|_|`|https://|a\\.b|mailto:x|[a-z ]|\n|\u{1b}|\u{7}|\u{9b}|\u{202e}|\u{206a}|\u{180b}|\u{fff9}|\u{1bca0}|\u{1d173}|\u{e0041}|\u{200b}|\r){0,60}",
        chunk in 1_usize..9,
        hyperlinks: bool,
        colour: bool,
    ) {
        let ink = Ink { color: colour, truecolor: false, hyperlinks };
        let out = render_chunked(&text, 30, ink, chunk);
        let own = regex::Regex::new("\x1b\\[[0-9;]*m|\x1b\\]8;;[!-~]*\x1b\\\\").unwrap();
        let rest = own.replace_all(&out, "");
        let raw: Vec<char> = rest.chars().filter(|&c| c != '\n' && jp_term::printer::needs_escape(c)).collect();
        proptest::prop_assert!(raw.is_empty(), "{raw:?} raw in {out:?}");
    }
}

/// A link's text that looks like an address other than its target shows
/// the target, hyperlink or not; only `http`, `https` and `mailto`
/// targets become hyperlinks (issue 34).
#[test]
fn a_link_never_passes_for_another_address() {
    let links = Ink {
        hyperlinks: true,
        ..COLOR
    };
    let osc =
        |url: &str, text: &str| format!("\x1b]8;;{url}\x1b\\\x1b[4;34m{text}\x1b[0m\x1b]8;;\x1b\\");
    let shown = |text: &str, url: &str| format!("\x1b[4;34m{text}\x1b[0m (\x1b[2m{url}\x1b[0m)");
    // (markdown, with hyperlinks, without colour)
    let table: &[(&str, String, &str)] = &[
        // Text that is no address: a hyperlink.
        (
            "[docs](https://example.com/a)",
            osc("https://example.com/a", "docs"),
            "docs (https://example.com/a)",
        ),
        // Text that is its own address, with or without its scheme.
        (
            "[https://example.com](https://example.com)",
            osc("https://example.com", "https://example.com"),
            "https://example.com",
        ),
        (
            "[example.com](https://example.com/)",
            osc("https://example.com/", "example.com"),
            "example.com",
        ),
        (
            "[a@b.example](mailto:a@b.example)",
            osc("mailto:a@b.example", "a@b.example"),
            "a@b.example",
        ),
        // Text that passes for another address: the target shows.
        (
            "[https://bank.example](https://evil.example)",
            shown("https://bank.example", "https://evil.example"),
            "https://bank.example (https://evil.example)",
        ),
        (
            "[bank.example/login](https://evil.example)",
            shown("bank.example/login", "https://evil.example"),
            "bank.example/login (https://evil.example)",
        ),
        (
            "[www.bank.example](http://evil.example)",
            shown("www.bank.example", "http://evil.example"),
            "www.bank.example (http://evil.example)",
        ),
        (
            "[log in at pаypal.com](https://evil.example)",
            shown("log in at pаypal.com", "https://evil.example"),
            "log in at pаypal.com (https://evil.example)",
        ),
        (
            "[help@bank.example](mailto:x@evil.example)",
            shown("help@bank.example", "mailto:x@evil.example"),
            "help@bank.example (mailto:x@evil.example)",
        ),
        // Other schemes are never hyperlinks.
        (
            "[notes](file:///etc/passwd)",
            shown("notes", "file:///etc/passwd"),
            "notes (file:///etc/passwd)",
        ),
        (
            "[run](javascript:alert(1))",
            shown("run", "javascript:alert(1)"),
            "run (javascript:alert(1))",
        ),
        (
            "[lib](src/lib.rs)",
            shown("lib", "src/lib.rs"),
            "lib (src/lib.rs)",
        ),
        ("[x](ssh://h)", shown("x", "ssh://h"), "x (ssh://h)"),
    ];
    for (markdown, linked, plain_text) in table {
        let line = format!("{markdown}\n");
        assert_eq!(
            render_chunked(&line, 200, links, 4),
            format!("{linked}\n"),
            "{markdown}"
        );
        assert_eq!(plain(&line, 200), format!("{plain_text}\n"), "{markdown}");
    }
}
