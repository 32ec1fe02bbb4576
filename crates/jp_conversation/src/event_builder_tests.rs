use super::*;

fn text(body: &str) -> Buffer {
    Buffer::Text(TextKind::Message, body.to_owned())
}

fn body(buffer: Option<&Buffer>) -> Option<&str> {
    match buffer? {
        Buffer::Text(_, body) => Some(body),
        Buffer::ToolCall(_) => None,
    }
}

#[test]
fn buffers_keep_index_order_whatever_the_order_of_arrival() {
    let mut buffers = Buffers::default();
    for index in [5, 1, 3, 0, 4] {
        buffers.insert(index, text(&index.to_string()));
    }
    assert_eq!(buffers.keys().copied().collect::<Vec<_>>(), [0, 1, 3, 4, 5]);
    assert_eq!(body(buffers.get(&3)), Some("3"));
    assert!(buffers.get(&2).is_none());

    buffers.insert(3, text("again"));
    assert_eq!(body(buffers.get(&3)), Some("again"));
    assert_eq!(buffers.values().count(), 5);

    assert!(buffers.remove(&2).is_none());
    assert_eq!(body(buffers.remove(&3).as_ref()), Some("again"));
    buffers.insert(2, text("2"));
    if let Some(Buffer::Text(_, body)) = buffers.get_mut(&2) {
        body.push('!');
    }
    assert_eq!(body(buffers.get(&2)), Some("2!"));
    assert_eq!(buffers.keys().copied().collect::<Vec<_>>(), [0, 1, 2, 4, 5]);

    for index in [0, 1, 2, 4, 5] {
        assert!(buffers.remove(&index).is_some());
    }
    assert!(buffers.is_empty());
}
