#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// Decodes `input` fed in pieces of `size` bytes.
fn decode_in(input: &[u8], size: usize) -> Result<Vec<SseEvent>, SseError> {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for piece in input.chunks(size.max(1)) {
        decoder.push(piece);
        while let Some(event) = decoder.next_event() {
            events.push(event?);
        }
    }
    Ok(events)
}

/// Decodes `input` at every piece size up to its length, checks every
/// size agrees, and returns the result.
fn decode(input: &[u8]) -> Result<Vec<SseEvent>, SseError> {
    let whole = decode_in(input, input.len());
    for size in 1..input.len() {
        assert_eq!(decode_in(input, size), whole, "pieces of {size} bytes");
    }
    whole
}

fn event(event: Option<&str>, data: &str, line: usize) -> SseEvent {
    SseEvent {
        event: event.map(str::to_owned),
        data: data.to_owned(),
        line,
    }
}

#[test]
fn events_with_names_data_and_comments() {
    let input = b": keep-alive\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\ndata:[DONE]\n\n";
    assert_eq!(
        decode(input).unwrap(),
        vec![
            event(Some("ping"), "{\"type\": \"ping\"}", 3),
            event(None, "[DONE]", 6),
        ]
    );
}

#[test]
fn every_line_ending_and_a_split_crlf() {
    let input = b"data: a\r\n\r\ndata: b\r\rdata: c\n\n";
    assert_eq!(
        decode(input).unwrap(),
        vec![
            event(None, "a", 1),
            event(None, "b", 3),
            event(None, "c", 5)
        ]
    );
}

#[test]
fn data_lines_join_and_only_one_space_is_stripped() {
    let input = b"data: one\ndata:  two\ndata\nid: 7\nretry: 10\nfoo: bar\n\n";
    assert_eq!(decode(input).unwrap(), vec![event(None, "one\n two\n", 1)]);
}

#[test]
fn an_event_without_data_is_not_dispatched_and_its_name_is_reset() {
    let input = b"event: orphan\n\ndata: x\n\nevent:\ndata: y\n\n";
    assert_eq!(
        decode(input).unwrap(),
        vec![event(None, "x", 3), event(None, "y", 5)]
    );
}

#[test]
fn empty_data_is_still_an_event() {
    assert_eq!(decode(b"data:\n\n").unwrap(), vec![event(None, "", 1)]);
}

#[test]
fn utf8_split_anywhere_and_a_leading_bom() {
    let input = "\u{feff}data: h\u{e9}llo \u{1f60a}\n\n".as_bytes();
    assert_eq!(
        decode(input).unwrap(),
        vec![event(None, "h\u{e9}llo \u{1f60a}", 1)]
    );
}

#[test]
fn an_unfinished_event_is_not_dispatched() {
    assert_eq!(
        decode(b"data: a\n\ndata: b\n").unwrap(),
        vec![event(None, "a", 1)]
    );
    assert_eq!(decode(b"data: a").unwrap(), vec![]);
}

#[test]
fn invalid_utf8_names_the_line() {
    let error = decode(b"data: ok\n\ndata: \xff\xfe bad\n\n").unwrap_err();
    assert_eq!(
        error.to_string(),
        "line 3 is not valid UTF-8 (invalid utf-8 sequence of 1 bytes from index 6): \
         `data: \u{fffd}\u{fffd} bad`"
    );
}

#[test]
fn a_line_over_the_limit_is_an_error_even_unterminated() {
    let mut decoder = SseDecoder::with_max_line(10);
    decoder.push(b"data: 1\n\ndata: 123");
    assert_eq!(decoder.next_event(), Some(Ok(event(None, "1", 1))));
    assert_eq!(decoder.next_event(), None);
    decoder.push(b"45");
    assert_eq!(
        decoder.next_event(),
        Some(Err(SseError::Line(LineError::LineTooLong {
            line: 3,
            limit: 10
        })))
    );
    assert_eq!(
        SseError::Line(LineError::LineTooLong { line: 3, limit: 10 }).to_string(),
        "line 3 is longer than the limit of 10 bytes"
    );
}

#[test]
fn event_data_over_the_limit_is_an_error() {
    let mut decoder = SseDecoder::with_max_line(12);
    decoder.push(b"data:123456\ndata:123456\n\n");
    assert_eq!(
        decoder.next_event(),
        Some(Err(SseError::EventTooLarge { line: 1, limit: 12 }))
    );
}
