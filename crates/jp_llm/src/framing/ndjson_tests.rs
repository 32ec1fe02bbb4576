#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// Numbered lines and the remainder.
type Split = (Vec<(usize, String)>, Option<String>);

/// The lines of `input` fed in pieces of `size` bytes, with their line
/// numbers, then the remainder.
fn split_in(input: &[u8], size: usize) -> Result<Split, NdjsonError> {
    let mut splitter = NdjsonSplitter::new();
    let mut lines = Vec::new();
    for piece in input.chunks(size.max(1)) {
        splitter.push(piece);
        while let Some(line) = splitter.next_line() {
            let (number, line) = line?;
            lines.push((number, line.to_owned()));
        }
    }
    let rest = splitter.finish()?.map(|(_, line)| line.to_owned());
    Ok((lines, rest))
}

fn split(input: &[u8]) -> Result<Split, NdjsonError> {
    let whole = split_in(input, input.len());
    for size in 1..input.len() {
        assert_eq!(split_in(input, size), whole, "pieces of {size} bytes");
    }
    whole
}

#[test]
fn lines_blank_lines_crlf_and_utf8_split_anywhere() {
    let input = "{\"a\":1}\n\n  \r\n{\"b\":\"\u{1f60a}\"}\r\n{\"c\":3}".as_bytes();
    assert_eq!(
        split(input).unwrap(),
        (
            vec![
                (1, "{\"a\":1}".to_owned()),
                (4, "{\"b\":\"\u{1f60a}\"}".to_owned()),
            ],
            Some("{\"c\":3}".to_owned())
        )
    );
}

#[test]
fn a_blank_remainder_is_nothing() {
    assert_eq!(
        split(b"{}\n \n").unwrap(),
        (vec![(1, "{}".to_owned())], None)
    );
}

#[test]
fn invalid_utf8_names_the_line() {
    assert_eq!(
        split(b"{}\n{\"x\":\"\xc3\x28\"}\n")
            .unwrap_err()
            .to_string(),
        "line 2 is not valid UTF-8 (invalid utf-8 sequence of 1 bytes from index 6): \
         `{\"x\":\"\u{fffd}(\"}`"
    );
}

#[test]
fn a_line_over_the_limit_is_an_error() {
    let mut splitter = NdjsonSplitter::with_max_line(4);
    splitter.push(b"1234\n12345");
    assert_eq!(splitter.next_line(), Some(Ok((1, "1234"))));
    assert_eq!(
        splitter.next_line(),
        Some(Err(NdjsonError::LineTooLong { line: 2, limit: 4 }))
    );
}
