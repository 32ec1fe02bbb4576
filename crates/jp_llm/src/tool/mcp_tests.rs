use proptest::prelude::*;

use super::*;

/// The lines `chunks` make, read one chunk at a time.
fn lines_of(chunks: &[&[u8]]) -> Vec<String> {
    let mut reader = StderrLines::default();
    let mut lines = Vec::new();
    for chunk in chunks {
        lines.extend(reader.push(chunk));
        assert!(reader.line.len() <= MAX_STDERR_LINE_BYTES);
    }
    lines.extend(reader.finish());
    lines
}

fn cut(kept: &str) -> String {
    format!("{kept}… (a line over {MAX_STDERR_LINE_BYTES} bytes, cut)")
}

#[test]
fn stderr_lines_are_kept_to_the_bound_however_they_arrive() {
    let long = vec![b'e'; 5000];
    let exact = vec![b'x'; MAX_STDERR_LINE_BYTES];
    let cases: Vec<(Vec<&[u8]>, Vec<String>)> = vec![
        (vec![b"one\ntwo\n"], vec!["one".into(), "two".into()]),
        (
            vec![b"on", b"e\ntw", b"o"],
            vec!["one".into(), "two".into()],
        ),
        (vec![b"\x1b[31mred\n"], vec!["\\u{1b}[31mred".into()]),
        (vec![b"\n\n"], vec![String::new(), String::new()]),
        (vec![&exact, b"\n"], vec!["x".repeat(MAX_STDERR_LINE_BYTES)]),
        // Cut at the bound, its rest dropped up to the newline.
        (
            vec![&long, b"\nnext\n"],
            vec![cut(&"e".repeat(MAX_STDERR_LINE_BYTES)), "next".into()],
        ),
        // A line without end is given once it is over the bound.
        (
            vec![&long, &long, &long],
            vec![cut(&"e".repeat(MAX_STDERR_LINE_BYTES))],
        ),
        (
            vec![&exact, b"y"],
            vec![cut(&"x".repeat(MAX_STDERR_LINE_BYTES))],
        ),
    ];
    for (chunks, expected) in cases {
        assert_eq!(lines_of(&chunks), expected, "{chunks:?}");
    }
}

proptest! {
    /// Cut into any chunks, stderr gives the same lines as read whole, each
    /// within the bound, and what is held between chunks never exceeds it.
    #[test]
    fn stderr_lines_do_not_depend_on_the_chunks_and_stay_bounded(
        text in proptest::collection::vec(prop_oneof![1 => Just(b'\n'), 300 => Just(b'a'), 5 => Just(b'\xe2')], 0..6000),
        cuts in proptest::collection::vec(0usize..6000, 0..8),
    ) {
        let mut cuts = cuts.into_iter().map(|c| c.min(text.len())).collect::<Vec<_>>();
        cuts.push(0);
        cuts.push(text.len());
        cuts.sort_unstable();
        let chunks: Vec<&[u8]> = cuts.windows(2).map(|w| &text[w[0]..w[1]]).collect();
        let lines = lines_of(&chunks);
        prop_assert_eq!(&lines, &lines_of(&[&text]));
        let expected: Vec<String> = {
            let mut whole: Vec<&[u8]> = text.split(|b| *b == b'\n').collect();
            if whole.last().is_some_and(|l| l.is_empty()) {
                whole.pop();
            }
            whole
                .into_iter()
                .map(|line| {
                    if line.len() > MAX_STDERR_LINE_BYTES {
                        cut(&escaped(&line[..MAX_STDERR_LINE_BYTES]))
                    } else {
                        escaped(line)
                    }
                })
                .collect()
        };
        prop_assert_eq!(lines, expected);
    }
}

#[test]
fn tools_list_is_bounded_in_pages_tools_and_bytes() {
    // (pages, tools per page, bytes per tool) => the error, if any.
    let cases = [
        (1, 10, 100, None),
        (MAX_TOOL_PAGES, 1, 10, None),
        (
            MAX_TOOL_PAGES + 1,
            1,
            10,
            Some("its tools/list goes on past 100 pages, the most jp reads from a server"),
        ),
        (1, MAX_SERVER_TOOLS, 10, None),
        (
            2,
            MAX_SERVER_TOOLS,
            10,
            Some("it lists more than 1000 tools, the most jp takes from a server"),
        ),
        (1, 16, 1024 * 1024, None),
        (
            1,
            17,
            1024 * 1024,
            Some("its tools/list is over 16 MiB, the most jp reads from a server"),
        ),
    ];
    for (pages, tools, bytes, expected) in cases {
        let mut tally = ToolsTally::default();
        let outcome = (|| {
            for _ in 0..pages {
                tally.page()?;
                for _ in 0..tools {
                    tally.tool(bytes)?;
                }
            }
            Ok::<(), String>(())
        })();
        assert_eq!(
            outcome.err().as_deref(),
            expected,
            "{pages} pages of {tools} tools of {bytes} bytes"
        );
    }
}
