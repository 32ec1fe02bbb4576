#![allow(clippy::unwrap_used)]

use super::*;

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

#[test]
fn the_message_comes_from_the_arguments_the_pipe_or_both() {
    assert_eq!(
        message(&args(&["explain", "this"]), None).unwrap(),
        "explain this"
    );
    assert_eq!(message(&[], Some("explain\n")).unwrap(), "explain\n");
    assert_eq!(
        message(&args(&["-"]), Some("all of it")).unwrap(),
        "all of it"
    );
    assert_eq!(
        message(&args(&["explain", "this"]), Some("fn main() {}\n")).unwrap(),
        "explain this\n\n```\nfn main() {}\n```"
    );
    // An empty pipe (`< /dev/null`, a closed one) adds nothing.
    assert_eq!(message(&args(&["hi"]), Some(" \n")).unwrap(), "hi");
    assert_eq!(message(&[], None), Err(InputError::NoMessage));
    assert_eq!(message(&[], Some(" \n")), Err(InputError::NoMessage));
    assert_eq!(message(&args(&["-"]), None), Err(InputError::Empty));
    assert_eq!(message(&args(&["  "]), Some("")), Err(InputError::Empty));
}

#[test]
fn the_fence_is_longer_than_any_backticks_in_the_text() {
    let text = "a ```rust\nblock\n``` and ````four````";
    assert_eq!(
        message(&args(&["look"]), Some(text)).unwrap(),
        format!("look\n\n`````\n{text}\n`````")
    );
}

#[test]
fn piped_bytes_must_be_text_and_at_most_a_mebibyte() {
    assert_eq!(read_piped(&b"hello"[..]).unwrap(), "hello");
    assert_eq!(
        read_piped(&b"ab\0c"[..]),
        Err(InputError::NotText("a NUL byte at offset 2".into()))
    );
    assert_eq!(
        read_piped(&b"ok\xffno"[..]),
        Err(InputError::NotText(
            "an invalid UTF-8 byte at offset 2".into()
        ))
    );
    let exactly = vec![b'a'; MAX_PIPED_BYTES];
    assert_eq!(read_piped(&exactly[..]).unwrap().len(), MAX_PIPED_BYTES);
    let over = vec![b'a'; MAX_PIPED_BYTES + 1];
    assert_eq!(read_piped(&over[..]), Err(InputError::TooLarge));
}
