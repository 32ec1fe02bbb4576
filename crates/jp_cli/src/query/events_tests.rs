#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;

/// A writer whose bytes the test reads; `fail` makes every write fail.
#[derive(Clone, Default)]
struct Shared {
    bytes: Arc<Mutex<Vec<u8>>>,
    fail: Arc<Mutex<bool>>,
}

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if *self.fail.lock().unwrap() {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        self.bytes.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.bytes.lock().unwrap().clone()).unwrap()
    }
}

#[test]
fn progress_is_said_at_once_then_at_most_every_interval() {
    let start = Instant::now();
    let mut progress = Progress::new("c1");
    assert!(!progress.due(0, start), "nothing arrived yet");
    assert!(progress.due(5, start));
    progress.said = Some((start, 5));
    let soon = start + PROGRESS_EVERY / 2;
    assert!(!progress.due(900, soon), "too soon");
    let later = start + PROGRESS_EVERY;
    assert!(progress.due(900, later));
    assert!(
        !progress.due(5, later + Duration::from_secs(5)),
        "no more arrived"
    );
}

#[test]
fn each_event_is_one_line_and_progress_is_bounded() {
    let out = Shared::default();
    let stream = EventStream::new(Box::new(out.clone()));
    stream.start("17", "scripted/demo");
    stream.text("Hel");
    stream.call_started(0, "c1", "save");
    let t = Instant::now();
    // A thousand pieces within one interval: one event.
    for bytes in 1..=1000 {
        stream.progress(0, bytes, t);
    }
    stream.progress(0, 2000, t + PROGRESS_EVERY);
    // A call that never started says nothing.
    stream.progress(7, 10, t);
    stream.end("completed", 0, None);
    assert_eq!(
        out.text(),
        concat!(
            r#"{"type":"start","version":1,"conversation":"17","model":"scripted/demo"}"#,
            "\n",
            r#"{"type":"text_delta","text":"Hel"}"#,
            "\n",
            r#"{"type":"tool_call_start","id":"c1","name":"save"}"#,
            "\n",
            r#"{"type":"tool_call_progress","id":"c1","bytes":1}"#,
            "\n",
            r#"{"type":"tool_call_progress","id":"c1","bytes":2000}"#,
            "\n",
            r#"{"type":"end","reason":"completed","exit_code":0}"#,
            "\n",
        )
    );
}

#[test]
fn a_reader_that_went_away_stops_the_events_not_the_turn() {
    let out = Shared::default();
    let stream = EventStream::new(Box::new(out.clone()));
    stream.text("a");
    *out.fail.lock().unwrap() = true;
    stream.text("b");
    *out.fail.lock().unwrap() = false;
    // Broken once, nothing more is written (a line could be half out).
    stream.end("failed", 6, Some("boom"));
    assert_eq!(out.text(), "{\"type\":\"text_delta\",\"text\":\"a\"}\n");
}
