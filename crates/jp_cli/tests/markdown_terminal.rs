//! The assistant's markdown through the real `jp` binary: drawn on a
//! terminal (tmux), with and without colour and with `style.markdown =
//! false`, and written byte for byte when stdout is a pipe. The model is
//! the offline scripted provider, streaming the response in 7-byte pieces.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Workspace;
use common::query::initialized;
use common::tmux::Tmux;

/// What the model answers: headings, emphasis, code spans, a nested and
/// numbered list, a code block, a table and a quote.
const RESPONSE: &str = "\
# Adding `hello()`

Two steps, **both** small:

1. Create `src/lib.rs`
2. Export it:
   - from the crate root
   - with a doc comment

```rust
pub fn hello() -> &'static str {
    \"Hello, world!\"
}
```

| File | Change |
| --- | --- |
| src/lib.rs | new |
| README.md | one line |

> Run `cargo test` after.
";

/// A workspace whose scripted model, `.jp/md.toml`, answers
/// [`RESPONSE`].
fn workspace() -> Workspace {
    let ws = initialized();
    ws.write(
        "project/.jp/md.toml",
        &format!("chunk_size = 7\ndelay_ms = 0\n\n[[responses]]\nparts = [{{ text = '''\n{RESPONSE}''' }}]\n"),
    );
    ws
}

/// `jp query hello` in a terminal with `env` added, then the exit code.
fn run_in_terminal(ws: &Workspace, env: &str) -> Option<(String, String)> {
    let command = format!(
        "env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/xdg' JP_TRUST_WORKSPACE=1 TERM=xterm {env} \
         JP_CFG_ASSISTANT__MODEL__ID=scripted/.jp/md.toml '{jp}' query hello; \
         echo EXIT=$?; sleep 60",
        path = std::env::var("PATH").unwrap_or_default(),
        home = ws.root().display(),
        jp = env!("CARGO_BIN_EXE_jp"),
    );
    let tmux = Tmux::start_sized(ws, &command, 60)?;
    let screen = tmux.wait_for("EXIT=");
    Some((trimmed(&screen), tmux.screen_with_escapes()))
}

/// The screen's lines without trailing spaces, up to the last one with
/// text.
fn trimmed(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    lines[..end].join("\n")
}

const RENDERED: &str = "\
── jp (scripted/.jp/md.toml) ──
# Adding hello()

Two steps, both small:

1. Create src/lib.rs
2. Export it:
   • from the crate root
   • with a doc comment

```rust
pub fn hello() -> &'static str {
    \"Hello, world!\"
}
```

┌────────────┬──────────┐
│ File       │ Change   │
├────────────┼──────────┤
│ src/lib.rs │ new      │
│ README.md  │ one line │
└────────────┴──────────┘

│ Run cargo test after.
EXIT=0";

/// The capture in docs/terminal.md's "Markdown" section.
fn documented() -> String {
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/terminal.md"
    ))
    .unwrap();
    let section = docs.split_once("\n## Markdown\n").unwrap().1;
    let block = section.split_once("````text\n").unwrap().1;
    block.split_once("````").unwrap().0.to_owned()
}

#[test]
fn markdown_is_drawn_on_a_terminal() {
    let ws = workspace();
    let Some((screen, escapes)) = run_in_terminal(&ws, "") else {
        return;
    };
    assert_eq!(screen, RENDERED);
    assert_eq!(
        format!("{}EXIT=0", documented()),
        RENDERED,
        "docs/terminal.md shows another screen"
    );
    // The heading is underlined and coloured, strong text bold, code spans
    // cyan, the code highlighted (in the 256-colour palette, as xterm has
    // no 24-bit colour). tmux writes only what changes from one cell to the
    // next.
    for styled in [
        "\u{1b}[4m\u{1b}[35m# Adding",
        "\u{1b}[1mboth",
        "\u{1b}[36msrc/lib.rs",
        "\u{1b}[38;5;139mfn",
    ] {
        assert!(escapes.contains(styled), "{styled:?} in {escapes:?}");
    }
}

#[test]
fn without_colour_the_markers_stay_and_nothing_is_styled() {
    let ws = workspace();
    let Some((screen, escapes)) = run_in_terminal(&ws, "NO_COLOR=1") else {
        return;
    };
    let expected = RENDERED
        .replace("# Adding hello()", "# Adding `hello()`")
        .replace("both small", "**both** small")
        .replace("Create src/lib.rs", "Create `src/lib.rs`")
        .replace("Run cargo test after", "Run `cargo test` after");
    assert_eq!(screen, expected);
    assert!(!escapes.contains('\u{1b}'), "{escapes:?}");
}

#[test]
fn style_markdown_false_shows_the_text_as_the_model_wrote_it() {
    let ws = workspace();
    let Some((screen, _)) = run_in_terminal(&ws, "JP_CFG_STYLE__MARKDOWN=false") else {
        return;
    };
    assert_eq!(
        screen,
        format!("── jp (scripted/.jp/md.toml) ──\n{RESPONSE}EXIT=0")
    );
}

#[test]
fn piped_output_is_the_models_markdown_byte_for_byte() {
    let ws = workspace();
    for color in ["auto", "always"] {
        let run = ws.jp_with_env(
            &["query", "hello"],
            &[
                ("JP_CFG_ASSISTANT__MODEL__ID", "scripted/.jp/md.toml"),
                ("JP_CFG_STYLE__COLOR", color),
            ],
        );
        assert_eq!(run.code, 0, "{run:?}");
        assert_eq!(run.stdout, RESPONSE, "--color {color}");
    }
}

/// A workspace whose scripted model answers `text` (a TOML basic string's
/// content: `\u001b` is ESC).
fn answering(text: &str) -> Workspace {
    let ws = initialized();
    ws.write(
        "project/.jp/md.toml",
        &format!(
            "chunk_size = 7\ndelay_ms = 0\n\n[[responses]]\nparts = [{{ text = \"{text}\" }}]\n"
        ),
    );
    ws
}

/// A fence's info string is escaped like the rest of the markdown: raw,
/// `~~~x ESC]0;TITLE BEL` retitled the window (issue 34).
#[test]
fn a_fences_info_string_reaches_the_terminal_escaped() {
    let ws = answering("~~~x \\u001b]0;TITLE\\u0007\\ncode\\n~~~\\n");
    let Some((screen, _)) = run_in_terminal(&ws, "") else {
        return;
    };
    assert_eq!(
        screen,
        "── jp (scripted/.jp/md.toml) ──\n~~~x \\u{1b}]0;TITLE\\u{7}\ncode\n~~~\nEXIT=0"
    );
}

/// A link whose text looks like another address shows its target, and
/// only `http`, `https` and `mailto` targets become hyperlinks: on a
/// terminal that draws them, the others show their target too (issue 34).
#[test]
fn a_link_never_passes_for_another_address_on_the_terminal() {
    let ws = answering(
        "Log in at [https://bank.example](https://evil.example), read [notes](file:///etc/passwd) or [the docs](https://example.com/docs).\\n",
    );
    let Some((screen, _)) = run_in_terminal(&ws, "FORCE_HYPERLINK=1") else {
        return;
    };
    assert_eq!(
        screen,
        "── jp (scripted/.jp/md.toml) ──\nLog in at https://bank.example (https://evil.example), read notes (file:///etc/passwd) or the docs.\nEXIT=0"
    );
}
