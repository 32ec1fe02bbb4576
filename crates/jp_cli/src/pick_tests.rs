#![allow(clippy::unwrap_used)]

use super::*;

fn entry(id: &str, title: &str, age: &str) -> Entry {
    Entry {
        id: id.into(),
        title: title.into(),
        age: age.into(),
    }
}

fn three() -> Vec<Entry> {
    vec![
        entry("3", "fix the flaky test", "just now"),
        entry(
            "2",
            "explain the borrow checker error in src/main.rs",
            "5 min ago",
        ),
        entry("1", "(untitled)", "12 days ago"),
    ]
}

#[test]
fn the_list_shows_titles_cut_to_fit_and_ages_aligned() {
    let list = List::new(three(), 10);
    assert_eq!(
        list.lines(40),
        [
            "Resume which conversation? ↑/↓ or j/k t…",
            "> fix the flaky test         just now",
            "  explain the borrow check…  5 min ago",
            "  (untitled)                 12 days ago",
        ]
    );
    for width in [10, 40, 200] {
        for line in list.lines(width) {
            assert!(columns(&line) <= width, "{line:?} in {width}");
        }
    }
}

#[test]
fn arrows_and_j_k_move_within_the_list_and_enter_chooses() {
    let mut list = List::new(three(), 10);
    assert_eq!(list.key(Key::Up), Step::Stay);
    assert_eq!(list.key(Key::Down), Step::Stay);
    assert_eq!(list.key(Key::Char('j')), Step::Stay);
    // The last stays selected.
    assert_eq!(list.key(Key::Down), Step::Stay);
    assert!(list.lines(80)[3].starts_with("> (untitled)"));
    assert_eq!(list.key(Key::Char('k')), Step::Stay);
    // Other keys do nothing.
    assert_eq!(list.key(Key::Char('x')), Step::Stay);
    assert_eq!(list.key(Key::Other), Step::Stay);
    assert_eq!(list.key(Key::Enter), Step::Chosen("2".into()));
}

#[test]
fn esc_q_and_ctrl_c_cancel() {
    for key in [Key::Escape, Key::Char('q'), Key::Interrupt] {
        let mut list = List::new(three(), 10);
        list.key(Key::Down);
        assert_eq!(list.key(key), Step::Cancelled, "{key:?}");
    }
}

#[test]
fn a_long_list_scrolls_with_the_selection_and_says_where_it_is() {
    let entries: Vec<Entry> = (1..=5)
        .map(|n| entry(&n.to_string(), &format!("conversation {n}"), "1 h ago"))
        .collect();
    let mut list = List::new(entries, 2);
    assert_eq!(
        list.lines(30)[1..],
        [
            "> conversation 1       1 h ago",
            "  conversation 2       1 h ago",
            "  1 of 5"
        ]
    );
    for _ in 0..3 {
        list.key(Key::Down);
    }
    assert_eq!(
        list.lines(30)[1..],
        [
            "  conversation 3       1 h ago",
            "> conversation 4       1 h ago",
            "  4 of 5"
        ]
    );
    for _ in 0..3 {
        list.key(Key::Up);
    }
    assert_eq!(
        list.lines(30)[1..],
        [
            "> conversation 1       1 h ago",
            "  conversation 2       1 h ago",
            "  1 of 5"
        ]
    );
}

#[test]
fn wide_characters_count_as_the_columns_they_take() {
    let list = List::new(vec![entry("1", "日本語のタイトルです", "just now")], 5);
    // 20 columns of title do not fit in 14: six characters (12 columns)
    // and `…`, padded to 14.
    assert_eq!(list.lines(26)[1], "> 日本語のタイ…   just now");
}

#[test]
fn the_screen_is_erased_from_its_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tty");
    {
        let tty = std::fs::File::create(&path).unwrap();
        let mut screen = Screen { tty, drawn: 0 };
        screen.draw(&["a".into(), "b".into(), "c".into()]);
        screen.draw(&["d".into()]);
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "\r\x1b[Ja\r\nb\r\nc\r\x1b[2A\x1b[Jd\r\x1b[J"
    );
}
