#![allow(clippy::unwrap_used)]

use super::*;

/// The lines as the screen shows them, each with a mark for its style.
fn shown(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|line| {
            let mark = match line.style {
                Style::Header => 'H',
                Style::Dim => '.',
                Style::Good => '+',
                Style::Bad => '-',
                Style::Warn => '!',
            };
            format!("{mark}|{}\n", line.text)
        })
        .collect()
}

#[test]
fn a_one_line_change_shows_with_its_context_and_line_numbers() {
    let before = "use std::io;\n\npub fn main() {}\n\n// end\n";
    let after = "use std::io;\n\npub fn hello() {}\n\n// end\n";
    assert_eq!(
        shown(&unified("src/lib.rs", "fs_modify_file", before, after)),
        "H|  --- src/lib.rs\n\
         H|  +++ src/lib.rs (after fs_modify_file)\n\
         .|  @@ -1,5 +1,5 @@\n\
         .|  1 1   use std::io;\n\
         .|  2 2   \n\
         -|  3   - pub fn main() {}\n\
         +|    3 + pub fn hello() {}\n\
         .|  4 4   \n\
         .|  5 5   // end\n"
    );
}

#[test]
fn far_apart_changes_are_separate_hunks_numbered_from_the_file() {
    let before: String = (1..=20).map(|n| format!("line {n}\n")).collect();
    let after = before
        .replace("line 2\n", "line two\n")
        .replace("line 18\n", "line 18\nline 18½\n");
    assert_eq!(
        shown(&unified("notes.txt", "fs_modify_file", &before, &after)),
        "H|  --- notes.txt\n\
         H|  +++ notes.txt (after fs_modify_file)\n\
         .|  @@ -1,5 +1,5 @@\n\
         .|   1  1   line 1\n\
         -|   2    - line 2\n\
         +|      2 + line two\n\
         .|   3  3   line 3\n\
         .|   4  4   line 4\n\
         .|   5  5   line 5\n\
         .|  @@ -16,5 +16,6 @@\n\
         .|  16 16   line 16\n\
         .|  17 17   line 17\n\
         .|  18 18   line 18\n\
         +|     19 + line 18½\n\
         .|  19 20   line 19\n\
         .|  20 21   line 20\n"
    );
}

#[test]
fn a_missing_final_newline_and_an_empty_file_are_said() {
    assert_eq!(
        shown(&unified("a", "t", "one\ntwo", "one\nthree")),
        "H|  --- a\n\
         H|  +++ a (after t)\n\
         .|  @@ -1,2 +1,2 @@\n\
         .|  1 1   one\n\
         -|  2   - two\n\
         .|  \\ no newline at end of file\n\
         +|    2 + three\n\
         .|  \\ no newline at end of file\n"
    );
    assert_eq!(
        shown(&unified("a", "t", "", "first\n")),
        "H|  --- a\nH|  +++ a (after t)\n.|  @@ -0,0 +1,1 @@\n+|    1 + first\n"
    );
    assert_eq!(
        shown(&unified("a", "t", "same\n", "same\n")),
        ".|  no change to a\n"
    );
}

#[test]
fn control_characters_are_escaped_and_crlf_endings_are_line_ends() {
    let before = "title\r\nplain\r\n";
    let after = "title\r\nred \u{1b}[31m\u{202e}\r\n";
    assert_eq!(
        shown(&unified("w\u{1b}.txt", "t", before, after)),
        "H|  --- w\\u{1b}.txt\n\
         H|  +++ w\\u{1b}.txt (after t)\n\
         .|  @@ -1,2 +1,2 @@\n\
         .|  1 1   title\n\
         -|  2   - plain\n\
         +|    2 + red \\u{1b}[31m\\u{202e}\n"
    );
}

#[test]
fn a_long_diff_is_capped_and_says_what_it_left_out() {
    let lines = unified("a", "t", "1\n2\n3\n", "4\n5\n6\n");
    assert_eq!(lines.len(), 9);
    assert_eq!(
        shown(&capped(lines.clone(), 4)),
        "H|  --- a\nH|  +++ a (after t)\n.|  @@ -1,3 +1,3 @@\n-|  1   - 1\n\
         .|  … 5 more lines of the diff (v shows it all)\n"
    );
    assert_eq!(capped(lines.clone(), 9), lines);
    assert_eq!(capped(lines.clone(), 0), lines);
    assert_eq!(plain(&lines[..2]), "  --- a\n  +++ a (after t)\n");
}

/// A lone CR is part of its line, shown as `\u{d}`, so the line numbers
/// after it are the file's (it once split the line, issue 34); a CRLF
/// ending is a line's end.
#[test]
fn a_lone_cr_is_shown_inside_its_line() {
    let before = "a\rb\nc\r\nd\n";
    let after = "a\rb\nc\r\nD\r\r\n";
    assert_eq!(
        shown(&unified("f", "t", before, after)),
        "H|  --- f\n\
         H|  +++ f (after t)\n\
         .|  @@ -1,3 +1,3 @@\n\
         .|  1 1   a\\u{d}b\n\
         .|  2 2   c\n\
         -|  3   - d\n\
         +|    3 + D\\u{d}\n"
    );
    // The last line, without its newline.
    assert_eq!(
        shown(&unified("f", "t", "x\ry", "x\rz")),
        "H|  --- f\nH|  +++ f (after t)\n.|  @@ -1,1 +1,1 @@\n\
         -|  1   - x\\u{d}y\n.|  \\ no newline at end of file\n\
         +|    1 + x\\u{d}z\n.|  \\ no newline at end of file\n"
    );
}

proptest::proptest! {
    /// Every numbered line of the diff is the line of the file with that
    /// number, counted at newlines, whatever CRs the files hold.
    #[test]
    fn each_line_number_names_the_files_line(
        before in "[ab\r\n]{0,40}",
        after in "[ab\r\n]{0,40}",
    ) {
        let file_line = |text: &str, n: usize| -> String {
            let line = text.split_inclusive('\n').nth(n - 1).unwrap_or("");
            let line = line.strip_suffix("\r\n").or_else(|| line.strip_suffix('\n')).unwrap_or(line);
            sanitize(line).into_owned()
        };
        let lines = unified("f", "t", &before, &after);
        // The numbers' width: that of the last line a hunk names
        // (`@@ -S,L +S,L @@`).
        let mut last = 0;
        for line in &lines {
            let Some(ranges) = line.text.strip_prefix("  @@ ") else { continue };
            for range in ranges.split(' ').take(2) {
                let (start, len) = range[1..].split_once(',').unwrap();
                let (start, len): (usize, usize) = (start.parse().unwrap(), len.parse().unwrap());
                last = last.max(if len == 0 { start } else { start + len - 1 });
            }
        }
        let w = last.to_string().len();
        // Each hunk's header names the lines it shows: (header, old
        // numbers, new numbers).
        let mut hunks: Vec<(String, Vec<usize>, Vec<usize>)> = Vec::new();
        for line in &lines {
            let rest = &line.text[2..];
            if rest.starts_with("@@") {
                hunks.push((rest.to_owned(), Vec::new(), Vec::new()));
                continue;
            }
            if rest.starts_with("---") || rest.starts_with("+++")
                || rest.starts_with('\\') || rest.starts_with("no change")
            {
                continue;
            }
            // `OLD NEW S TEXT`, the numbers right-aligned in one width.
            let old = rest[..w].trim().parse::<usize>().ok();
            let new = rest[w + 1..2 * w + 1].trim().parse::<usize>().ok();
            let text = &rest[2 * w + 4..];
            if let Some(n) = old {
                proptest::prop_assert_eq!(text, file_line(&before, n));
            }
            if let Some(n) = new {
                proptest::prop_assert_eq!(text, file_line(&after, n));
            }
            if let Some((_, olds, news)) = hunks.last_mut() {
                olds.extend(old);
                news.extend(new);
            }
        }
        let named = |numbers: &[usize]| match (numbers.first(), numbers.last()) {
            (Some(first), Some(last)) => format!("{first},{}", last - first + 1),
            _ => "0,0".to_owned(),
        };
        for (header, olds, news) in &hunks {
            proptest::prop_assert_eq!(header, &format!("@@ -{} +{} @@", named(olds), named(news)));
        }
    }
}
