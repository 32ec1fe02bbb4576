use super::*;

fn keys(chunks: &[&[u8]]) -> Vec<Key> {
    let mut decoder = Decoder::default();
    let mut out = Vec::new();
    for chunk in chunks {
        out.extend(decoder.push(chunk));
    }
    out.extend(decoder.settle());
    out
}

#[test]
fn the_keys_a_prompt_reads() {
    assert_eq!(
        keys(&[b"yN?\r\n\x7f\x08\x15\x03\x04\t"]),
        [
            Key::Char('y'),
            Key::Char('N'),
            Key::Char('?'),
            Key::Enter,
            Key::Enter,
            Key::Backspace,
            Key::Backspace,
            Key::Clear,
            Key::Interrupt,
            Key::Interrupt,
            Key::Other,
        ]
    );
}

#[test]
fn characters_of_several_bytes_are_one_key_even_split_across_reads() {
    assert_eq!(
        keys(&[
            "é語".as_bytes(),
            &"🦀".as_bytes()[..2],
            &"🦀".as_bytes()[2..]
        ]),
        [Key::Char('é'), Key::Char('語'), Key::Char('🦀')]
    );
    assert_eq!(
        keys(&[b"\xff\xc3(a"]),
        [Key::Other, Key::Other, Key::Char('('), Key::Char('a')]
    );
}

#[test]
fn escape_sequences_are_one_key_ignored_but_up_down_and_esc() {
    // Up (CSI and SS3), Down, Right, F1 (SS3), F5 with parameters,
    // Shift+Up, Alt+y, a lone Esc.
    assert_eq!(
        keys(&[
            b"\x1b[A\x1bOA\x1b[B\x1b[C\x1bOP\x1b[15;2~\x1b[1;2Ay\x1by",
            b"\x1b"
        ]),
        [
            Key::Up,
            Key::Up,
            Key::Down,
            Key::Other,
            Key::Other,
            Key::Other,
            Key::Other,
            Key::Char('y'),
            Key::Other,
            Key::Escape
        ]
    );
    // A sequence split across reads waits for its end.
    assert_eq!(
        keys(&[b"\x1b[1", b";5D", b"n"]),
        [Key::Other, Key::Char('n')]
    );
    assert_eq!(keys(&[b"\x1b[", b"B"]), [Key::Down]);
    // Esc then a key at once is Alt+key, not Esc.
    assert_eq!(keys(&[b"\x1bq"]), [Key::Other]);
}

#[test]
fn an_endless_sequence_is_dropped_not_kept() {
    let mut decoder = Decoder::default();
    let mut long = b"\x1b[".to_vec();
    long.extend([b'1'; 64]);
    assert_eq!(decoder.push(&long), [Key::Other]);
    assert_eq!(decoder.push(b"y"), [Key::Char('y')]);
}
