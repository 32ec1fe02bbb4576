use super::*;

#[test]
fn output_within_the_cap_is_kept_whole() {
    let mut capture = Capture::default();
    assert_eq!(capture.text(), "");
    capture.push(b"one\n");
    capture.push(&[b'x'; MAX_OUTPUT_BYTES - 4]);
    assert!(!capture.is_cut());
    assert_eq!(capture.total(), MAX_OUTPUT_BYTES as u64);
    assert_eq!(
        capture.text(),
        format!("one\n{}", "x".repeat(MAX_OUTPUT_BYTES - 4))
    );
}

#[test]
fn output_over_the_cap_keeps_its_beginning_and_end() {
    let mut capture = Capture::default();
    let lines: String = (0..10_000).map(|i| format!("{i}\n")).collect();
    // In pieces of every size, as a pipe delivers them.
    let mut rest = lines.as_bytes();
    let mut size = 1;
    while !rest.is_empty() {
        let (piece, after) = rest.split_at(size.min(rest.len()));
        capture.push(piece);
        rest = after;
        size = size % 5000 + 7;
    }
    assert!(capture.is_cut());
    assert_eq!(capture.total(), lines.len() as u64);
    let bytes = lines.as_bytes();
    let head = String::from_utf8_lossy(&bytes[..HEAD_BYTES]);
    let tail = String::from_utf8_lossy(&bytes[bytes.len() - TAIL_BYTES..]);
    let left_out = lines.len() - MAX_OUTPUT_BYTES;
    // The head ends mid-line, so the line saying what was left out starts
    // a line of its own.
    assert!(!head.ends_with('\n'));
    assert_eq!(
        capture.text(),
        format!(
            "{head}\n[… {} bytes left out …]\n{tail}",
            crate::words::thousands(left_out as u64)
        )
    );
}

#[test]
fn a_cut_never_splits_a_character() {
    let mut capture = Capture::default();
    // "é" is two bytes: the head's last byte and the tail's first byte fall
    // in the middle of one.
    let mut text = "a".repeat(HEAD_BYTES - 1);
    text.push('é');
    text.push_str(&"b".repeat(100));
    text.push('é');
    text.push_str(&"c".repeat(TAIL_BYTES - 1));
    capture.push(text.as_bytes());
    assert_eq!(
        capture.text(),
        format!(
            "{}\n[… 104 bytes left out …]\n{}",
            "a".repeat(HEAD_BYTES - 1),
            "c".repeat(TAIL_BYTES - 1)
        )
    );
}

#[test]
fn char_boundaries() {
    let euro = "€".as_bytes(); // three bytes
    assert_eq!(char_start_before(b"abc", 3), 3);
    assert_eq!(char_start_before(euro, 1), 0);
    assert_eq!(char_start_before(euro, 2), 0);
    assert_eq!(char_start_before(euro, 3), 3);
    assert_eq!(char_start_after(&euro[1..]), 2);
    assert_eq!(char_start_after(&euro[2..]), 1);
    assert_eq!(char_start_after(euro), 0);
    // Not UTF-8 at all: nothing is skipped beyond three bytes.
    assert_eq!(char_start_after(&[0x80; 10]), 3);
}
