#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value};

use super::*;

fn event(content: &str) -> ConversationEvent {
    ConversationEvent {
        at_ms: 7,
        kind: EventKind::ChatRequest {
            content: content.into(),
        },
    }
}

fn log_path(store: &Store, id: &str) -> PathBuf {
    store.root().join(id).join(log::LOG_NAME)
}

fn header_line(id: &str, created_ms: u64) -> String {
    format!(
        "{{\"format\":\"jp-conversation-log\",\"version\":2,\"id\":\"{id}\",\"created_ms\":{created_ms}}}\n"
    )
}

/// A conversation with events `one` and `two`, unlocked.
fn two_events(store: &Store) -> Conversation {
    let (mut c, mut lock) = store.create().unwrap();
    lock.append(&mut c, [event("one")]).unwrap();
    lock.append(&mut c, [event("two")]).unwrap();
    c
}

#[test]
fn create_append_load_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (mut c, mut lock) = store.create().unwrap();
    let path = log_path(&store, &c.id);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        header_line(&c.id, c.created_ms)
    );
    lock.append(&mut c, [event("hi \"there\"\nline two")])
        .unwrap();
    assert_eq!(c.events, vec![event("hi \"there\"\nline two")]);
    assert_eq!(store.load(&c.id).unwrap(), c);
    assert_eq!(store.ids().unwrap(), vec![c.id.clone()]);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        format!(
            "{}{{\"at_ms\":7,\"type\":\"chat_request\",\"content\":\"hi \\\"there\\\"\\nline two\"}}\n",
            header_line(&c.id, c.created_ms)
        )
    );
}

#[test]
fn an_append_writes_only_its_events_after_what_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (mut c, mut lock) = store.create().unwrap();
    lock.append(&mut c, [event(&"x".repeat(100_000))]).unwrap();
    let path = log_path(&store, &c.id);
    let before = fs::read(&path).unwrap();
    // Two events, one commit.
    lock.append(&mut c, [event("a"), event("b")]).unwrap();
    let after = fs::read(&path).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    assert_eq!(
        String::from_utf8(after[before.len()..].to_vec()).unwrap(),
        "{\"at_ms\":7,\"type\":\"chat_request\",\"content\":\"a\"}\n{\"at_ms\":7,\"type\":\"chat_request\",\"content\":\"b\"}\n"
    );
    assert_eq!(store.load(&c.id).unwrap().events.len(), 3);
}

#[test]
fn the_title_is_the_start_of_the_first_message() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (mut c, mut lock) = store.create().unwrap();
    assert_eq!(c.title(), None);
    let long = format!("{}\nsecond line", "é".repeat(70));
    lock.append(&mut c, [event(&long), event("later")]).unwrap();
    assert_eq!(
        store.load(&c.id).unwrap().title(),
        Some(format!("{}…", "é".repeat(59)))
    );
}

#[test]
fn an_append_refuses_a_conversation_it_did_not_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (mut c, mut lock) = store.create().unwrap();
    c.events.push(event("pushed"));
    assert_eq!(
        lock.append(&mut c, [event("appended")])
            .unwrap_err()
            .to_string(),
        format!(
            "cannot append to conversation `{}`: the conversation in memory has 1 events and its log 0; events were added or removed without being appended",
            c.id
        )
    );
    let mut other = store.create().unwrap().0;
    assert_eq!(
        lock.append(&mut other, [event("x")])
            .unwrap_err()
            .to_string(),
        format!(
            "cannot append to conversation `{}`: it was given conversation `{}`",
            c.id, other.id
        )
    );
    assert_eq!(store.load(&c.id).unwrap().events, Vec::new());
    assert_eq!(other.events, Vec::new());
}

#[test]
fn a_second_writer_is_refused_until_the_first_lets_go() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (c, lock) = store.create().unwrap();
    let err = store.open(&c.id).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "conversation `{}` is in use by another jp process (pid {}); wait for it to finish",
            c.id,
            std::process::id()
        )
    );
    assert_eq!(
        store.remove(&c.id).unwrap_err().to_string(),
        err.to_string()
    );
    drop(lock);
    let (reopened, _lock) = store.open(&c.id).unwrap();
    assert_eq!(reopened, c);
}

#[test]
fn ids_are_unique_and_ordered() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let a = store.create().unwrap().0.id;
    let b = store.create().unwrap().0.id;
    let c = store.create().unwrap().0.id;
    assert_eq!(store.ids().unwrap(), vec![a, b, c]);
}

#[test]
fn a_store_under_a_directory_keeps_everything_in_it_and_follows_no_link_below_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::under(dir.path(), Path::new("conversations"));
    assert_eq!(store.root(), dir.path().join("conversations"));
    let c = two_events(&store);
    store.set_active(&c.id).unwrap();
    assert_eq!(store.active(), Some(c.id.clone()));
    assert_eq!(store.load(&c.id).unwrap().events.len(), 2);
    assert!(log_path(&store, &c.id).is_file());
    assert!(dir.path().join("conversations/active").is_file());
    // Nothing named `.jp` anywhere.
    assert!(!dir.path().join(".jp").exists());
    #[cfg(unix)]
    {
        // A link in place of the store's directory is not followed.
        let elsewhere = tempfile::tempdir().unwrap();
        let linked = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), linked.path().join("conversations")).unwrap();
        let store = Store::under(linked.path(), Path::new("conversations"));
        assert!(store.create().is_err());
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }
}

#[test]
fn active_and_remove() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    assert_eq!(store.active(), None);
    let (c, lock) = store.create().unwrap();
    drop(lock);
    store.set_active(&c.id).unwrap();
    assert_eq!(store.active(), Some(c.id.clone()));
    store.remove(&c.id).unwrap();
    assert_eq!(store.active(), None);
    assert!(matches!(store.load(&c.id), Err(StoreError::NotFound(_))));
    assert!(matches!(store.open(&c.id), Err(StoreError::NotFound(_))));
    assert_eq!(store.ids().unwrap(), Vec::<String>::new());
    assert_eq!(
        store.set_active("../x").unwrap_err().to_string(),
        "`../x` is not a conversation id"
    );
}

#[test]
fn a_failed_append_changes_nothing_and_the_next_one_cuts_what_it_left() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (mut c, mut lock) = store.create().unwrap();
    lock.append(&mut c, [event("one")]).unwrap();
    let path = log_path(&store, &c.id);
    let before = fs::read(&path).unwrap();
    // A handle that cannot write makes the append fail.
    let writable = std::mem::replace(&mut lock.appender.file, File::open(&path).unwrap());
    let err = lock.append(&mut c, [event("two")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot write {}: Bad file descriptor (os error 9)",
            path.display()
        )
    );
    assert_eq!(c.events, vec![event("one")]);
    assert_eq!(store.load(&c.id).unwrap(), c);
    // What a write that failed part-way would leave.
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"at_ms\":7,\"ty")
        .unwrap();
    lock.appender.file = writable;
    lock.append(&mut c, [event("three")]).unwrap();
    let after = fs::read(&path).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    assert_eq!(
        String::from_utf8(after[before.len()..].to_vec()).unwrap(),
        "{\"at_ms\":7,\"type\":\"chat_request\",\"content\":\"three\"}\n"
    );
    assert_eq!(store.load(&c.id).unwrap(), c);
}

#[test]
fn a_file_must_carry_its_own_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (c, lock) = store.create().unwrap();
    drop(lock);
    let path = log_path(&store, &c.id);
    fs::write(&path, header_line("elsewhere", 1)).unwrap();
    let expected = format!(
        "{} is not a readable conversation: it says its id is `elsewhere`, but it is stored as `{}`",
        path.display(),
        c.id
    );
    assert_eq!(store.load(&c.id).unwrap_err().to_string(), expected);
    assert_eq!(store.open(&c.id).unwrap_err().to_string(), expected);
}

#[test]
fn a_half_finished_removal_does_not_block_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (c, lock) = store.create().unwrap();
    drop(lock);
    fs::create_dir_all(store.root().join(format!(".removing-{}", c.id)).join("x")).unwrap();
    store.remove(&c.id).unwrap();
    assert!(!store.root().join(format!(".removing-{}", c.id)).exists());
    assert_eq!(store.ids().unwrap(), Vec::<String>::new());
}

/// The error `load` and `open` give for the log of `c` holding `text`.
fn corrupt(store: &Store, c: &Conversation, text: &[u8]) -> String {
    let path = log_path(store, &c.id);
    fs::write(&path, text).unwrap();
    let loaded = store.load(&c.id).unwrap_err().to_string();
    let opened = store.open(&c.id).unwrap_err().to_string();
    assert_eq!(loaded, opened);
    // Nothing was cut.
    assert_eq!(fs::read(&path).unwrap(), text);
    loaded.replace(&path.display().to_string(), "<log>")
}

#[test]
fn bad_logs_are_named_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (c, lock) = store.create().unwrap();
    drop(lock);
    let header = header_line(&c.id, 5);
    let good = "{\"at_ms\":7,\"type\":\"turn_start\"}\n";
    assert_eq!(
        corrupt(&store, &c, b""),
        "<log> is not a readable conversation: it is empty (line 1 must be its header)"
    );
    assert_eq!(
        corrupt(&store, &c, b"{\"format\":\"jp-conversation-log\""),
        "<log> is not a readable conversation: its header (line 1) is unfinished"
    );
    assert_eq!(
        corrupt(&store, &c, b"{\"version\": 1}\n"),
        "<log> is not a readable conversation: its header (line 1) does not say `\"format\":\"jp-conversation-log\"`"
    );
    assert_eq!(
        corrupt(
            &store,
            &c,
            b"{\"format\":\"jp-conversation-log\",\"version\":3,\"id\":\"x\"}\n"
        ),
        "<log> is not a readable conversation: it is format version 3, and this jp reads version 2 (a newer jp wrote it)"
    );
    assert_eq!(
        corrupt(
            &store,
            &c,
            b"{\"format\":\"jp-conversation-log\",\"version\":2}\n"
        ),
        "<log> is not a readable conversation: its header (line 1) is not readable: missing field `id` (column 44)"
    );
    // A bad line with a line after it is not a torn last line.
    assert_eq!(
        corrupt(
            &store,
            &c,
            format!("{header}{good}{{\"at_ms\":7,\n{good}").as_bytes()
        ),
        "<log> is not a readable conversation: line 3 is not JSON: EOF while parsing a value (column 11)"
    );
    assert_eq!(
        corrupt(&store, &c, format!("{header}\n{good}").as_bytes()),
        "<log> is not a readable conversation: line 2 is not JSON: EOF while parsing a value (column 0)"
    );
    // A whole line of a kind this jp does not know (a newer jp's event) is
    // never dropped, even when it is the last.
    assert_eq!(
        corrupt(
            &store,
            &c,
            format!("{header}{good}{{\"at_ms\":7,\"type\":\"hologram\"}}\n").as_bytes()
        ),
        "<log> is not a readable conversation: line 3 is not an event this jp knows: unknown variant `hologram`, expected one of `turn_start`, `chat_request`, `attachments`, `assistant_message`, `assistant_reasoning`, `tool_call_request`, `tool_call_response`, `config_delta`, `policy_denied`, `stream_stopped`, `usage`, `session_approval`, `approvals_forgotten`, `file_change`, `changes_not_kept`, `rewind`, `compaction`, `call_decision` (column 29)"
    );
    // A long bad value is quoted short.
    let long = format!(
        "{header}{{\"at_ms\":7,\"type\":\"{}\"}}\n",
        "z".repeat(5000)
    );
    let message = corrupt(&store, &c, long.as_bytes());
    assert_eq!(
        message,
        format!(
            "<log> is not a readable conversation: line 2 is not an event this jp knows: unknown variant `{}… (column 5021)",
            "z".repeat(382)
        )
    );
}

#[test]
fn a_torn_last_line_is_reported_by_readers_and_cut_by_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let c = two_events(&store);
    let path = log_path(&store, &c.id);
    let whole = fs::read(&path).unwrap();
    let torn = b"{\"at_ms\":7,\"type\":\"chat_requ";
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(torn)
        .unwrap();

    let read = store.load(&c.id).unwrap();
    assert_eq!(read.events, c.events);
    let tail = read.torn_tail.unwrap();
    assert_eq!(
        tail.to_string(),
        format!(
            "{}: ignored its last line (line 4, 28 bytes at offset {}): it is not a whole event (a crash or kill left it unfinished, or a jp is writing it now)",
            path.display(),
            whole.len()
        )
    );
    // Reading changes nothing.
    assert_eq!(fs::read(&path).unwrap().len(), whole.len() + torn.len());

    let (mut opened, mut lock) = store.open(&c.id).unwrap();
    assert_eq!(opened.events, c.events);
    assert_eq!(
        opened.torn_tail.as_ref().unwrap().to_string(),
        format!(
            "{}: dropped its last line (line 4, 28 bytes at offset {}): an event that a crash or kill left unfinished; the conversation continues from the event before it",
            path.display(),
            whole.len()
        )
    );
    assert_eq!(fs::read(&path).unwrap(), whole);
    lock.append(&mut opened, [event("three")]).unwrap();
    drop(lock);
    let again = store.load(&c.id).unwrap();
    assert_eq!(again.torn_tail, None);
    assert_eq!(again.events.len(), 3);
}

#[test]
fn a_last_line_that_is_not_json_is_torn_even_with_its_newline() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let c = two_events(&store);
    let path = log_path(&store, &c.id);
    let whole = fs::read(&path).unwrap();
    // A file system that kept the length but not the data.
    let mut text = whole.clone();
    text.extend_from_slice(&[0; 40]);
    text.push(b'\n');
    fs::write(&path, &text).unwrap();
    let tail = store.load(&c.id).unwrap().torn_tail.unwrap();
    assert_eq!((tail.line, tail.bytes), (4, 41));
    let (opened, _lock) = store.open(&c.id).unwrap();
    assert_eq!(opened.events, c.events);
    assert_eq!(fs::read(&path).unwrap(), whole);
}

#[test]
fn a_whole_event_without_its_newline_was_not_committed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let c = two_events(&store);
    let path = log_path(&store, &c.id);
    let whole = fs::read(&path).unwrap();
    let mut text = whole.clone();
    text.extend_from_slice(b"{\"at_ms\":7,\"type\":\"turn_start\"}");
    fs::write(&path, &text).unwrap();
    let read = store.load(&c.id).unwrap();
    assert_eq!(read.events, c.events);
    assert_eq!(read.torn_tail.unwrap().bytes, 31);
}

fn v1_text(id: &str, title: Option<&str>, events: &[ConversationEvent]) -> String {
    let mut text = format!("{{\n  \"version\": 1,\n  \"id\": \"{id}\",\n  \"created_ms\": 5,\n");
    if let Some(title) = title {
        text.push_str(&format!("  \"title\": \"{title}\",\n"));
    }
    text.push_str("  \"events\": [");
    for (i, event) in events.iter().enumerate() {
        text.push_str(if i == 0 { "\n    " } else { ",\n    " });
        text.push_str(&serde_json::to_string(event).unwrap());
    }
    text.push_str(if events.is_empty() {
        "]\n}\n"
    } else {
        "\n  ]\n}\n"
    });
    text
}

/// A conversation directory `id` holding a version 1 file.
fn v1_conversation(store: &Store, id: &str, title: Option<&str>) -> PathBuf {
    let dir = store.root().join(id);
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(v1::V1_NAME);
    fs::write(&path, v1_text(id, title, &[event("one"), event("two")])).unwrap();
    path
}

#[test]
fn a_version_1_conversation_is_read_as_it_is_and_converted_by_the_first_writer() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let old = v1_conversation(&store, "42", Some("my title"));
    let expected = Conversation {
        id: "42".into(),
        created_ms: 5,
        title: Some("my title".into()),
        events: vec![event("one"), event("two")],
        torn_tail: None,
    };
    assert_eq!(store.ids().unwrap(), vec!["42".to_owned()]);
    store.set_active("42").unwrap();
    assert_eq!(store.active(), Some("42".into()));
    // A reader reads it and leaves it.
    assert_eq!(store.load("42").unwrap(), expected);
    assert!(old.is_file());
    assert!(!log_path(&store, "42").exists());

    let (mut opened, mut lock) = store.open("42").unwrap();
    assert_eq!(opened, expected);
    assert!(!old.exists());
    let line = |e: &ConversationEvent| serde_json::to_string(e).unwrap() + "\n";
    assert_eq!(
        fs::read_to_string(log_path(&store, "42")).unwrap(),
        format!(
            "{{\"format\":\"jp-conversation-log\",\"version\":2,\"id\":\"42\",\"created_ms\":5,\"title\":\"my title\"}}\n{}{}",
            line(&event("one")),
            line(&event("two"))
        )
    );
    lock.append(&mut opened, [event("three")]).unwrap();
    drop(lock);
    let read = store.load("42").unwrap();
    assert_eq!(read.events.len(), 3);
    assert_eq!(read.title(), Some("my title".into()));
    assert_eq!(fs::read_dir(store.root().join("42")).unwrap().count(), 2);
}

#[test]
fn a_migration_stopped_before_its_rename_starts_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let old = v1_conversation(&store, "42", None);
    // What a crash while writing the log leaves.
    let tmp = store.root().join("42").join(".events.jsonl.99999.tmp");
    fs::write(&tmp, "{\"format\":\"jp-conv").unwrap();
    assert_eq!(store.load("42").unwrap().events.len(), 2);
    let (opened, _lock) = store.open("42").unwrap();
    assert_eq!(opened.events, vec![event("one"), event("two")]);
    assert_eq!(opened.title(), Some("one".into()));
    assert!(!tmp.exists());
    assert!(!old.exists());
    assert_eq!(
        fs::read_to_string(log_path(&store, "42"))
            .unwrap()
            .lines()
            .next(),
        Some("{\"format\":\"jp-conversation-log\",\"version\":2,\"id\":\"42\",\"created_ms\":5}")
    );
}

#[test]
fn a_migration_stopped_after_its_rename_is_finished() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let old = v1_conversation(&store, "42", None);
    // Both files: the log is whole (it was synced before the rename), so
    // it wins, even over a version 1 file that says something else.
    let log_text = format!(
        "{}{}\n",
        header_line("42", 5),
        serde_json::to_string(&event("from the log")).unwrap()
    );
    fs::write(log_path(&store, "42"), &log_text).unwrap();
    assert_eq!(
        store.load("42").unwrap().events,
        vec![event("from the log")]
    );
    assert!(old.exists());
    let (opened, _lock) = store.open("42").unwrap();
    assert_eq!(opened.events, vec![event("from the log")]);
    assert!(!old.exists());
    assert_eq!(
        fs::read_to_string(log_path(&store, "42")).unwrap(),
        log_text
    );
}

#[test]
fn a_bad_version_1_file_is_named_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let path = v1_conversation(&store, "42", None);
    fs::write(&path, "{\"version\": 1, \"id\": ").unwrap();
    let expected = format!(
        "{} is not a readable conversation: EOF while parsing a value at line 1 column 21",
        path.display()
    );
    assert_eq!(store.load("42").unwrap_err().to_string(), expected);
    assert_eq!(store.open("42").unwrap_err().to_string(), expected);
    assert!(path.exists());
    assert!(!log_path(&store, "42").exists());
}

/// A crash can stop a write after any byte: cut a log at every offset
/// after its header, and it always reads as the whole lines before the
/// cut (with the rest reported), and the next writer continues it.
#[test]
fn a_log_cut_at_any_byte_reads_as_its_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (mut c, mut lock) = store.create().unwrap();
    let events = vec![event("one"), event("twö \"2\""), event("three\nlines")];
    lock.append(&mut c, events.clone()).unwrap();
    drop(lock);
    let path = log_path(&store, &c.id);
    let full = fs::read(&path).unwrap();
    let header_len = header_line(&c.id, c.created_ms).len();
    let ends: Vec<usize> = full
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    for cut in header_len..=full.len() {
        fs::write(&path, &full[..cut]).unwrap();
        let whole = ends.iter().filter(|end| **end <= cut).count() - 1;
        let line_start = ends
            .iter()
            .copied()
            .filter(|end| *end <= cut)
            .max()
            .unwrap();
        let read = store.load(&c.id).unwrap();
        assert_eq!(read.events, events[..whole], "cut at {cut}");
        let expected_tail = (cut > line_start).then(|| TornTail {
            path: path.clone(),
            line: whole + 2,
            offset: line_start as u64,
            bytes: (cut - line_start) as u64,
            removed: false,
        });
        assert_eq!(read.torn_tail, expected_tail, "cut at {cut}");

        let (mut opened, mut lock) = store.open(&c.id).unwrap();
        assert_eq!(
            fs::read(&path).unwrap(),
            &full[..line_start],
            "cut at {cut}"
        );
        lock.append(&mut opened, [event("next")]).unwrap();
        drop(lock);
        let mut expected = events[..whole].to_vec();
        expected.push(event("next"));
        let again = store.load(&c.id).unwrap();
        assert_eq!(
            (again.events, again.torn_tail),
            (expected, None),
            "cut at {cut}"
        );
    }
}

/// Arguments nested `depth` levels deep, the object itself being the first:
/// `{"data": [[...]]}`.
fn nested_arguments(depth: usize) -> Map<String, Value> {
    let mut value = Value::Array(Vec::new());
    for _ in 2..depth {
        value = Value::Array(vec![value]);
    }
    let mut arguments = Map::new();
    arguments.insert("data".into(), value);
    arguments
}

#[test]
fn the_deepest_call_the_parser_accepts_reads_back() {
    // A call as deep as the argument parser goes, and a response that ran
    // with arguments as deep: deeper than serde_json reads by default once
    // inside an event line.
    let depth = crate::ParserLimits::DEFAULT_MAX_DEPTH;
    let arguments = nested_arguments(depth);
    let call = ConversationEvent {
        at_ms: 7,
        kind: EventKind::ToolCallRequest(crate::ToolCallRequest::new("c1", "t", arguments.clone())),
    };
    let mut response = crate::ToolCallResponse::new("c1", crate::ResponseStatus::Success, "ok");
    response.ran = Some(crate::RanWith {
        arguments: Some(arguments),
        keys: std::collections::BTreeMap::new(),
    });
    let response = ConversationEvent {
        at_ms: 8,
        kind: EventKind::ToolCallResponse(response),
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (mut c, mut lock) = store.create().unwrap();
    lock.append(&mut c, [call.clone(), response.clone()])
        .unwrap();
    drop(lock);
    assert_eq!(store.load(&c.id).unwrap().events, [call.clone(), response]);

    // A version 1 file holding it reads too.
    let id = "1795350600000";
    let v1_dir = store.root().join(id);
    fs::create_dir_all(&v1_dir).unwrap();
    fs::write(
        v1_dir.join(v1::V1_NAME),
        v1_text(id, None, std::slice::from_ref(&call)),
    )
    .unwrap();
    assert_eq!(store.load(id).unwrap().events, [call]);
}

#[test]
fn a_line_deeper_than_jp_writes_is_refused_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let (c, lock) = store.create().unwrap();
    drop(lock);
    let deep = format!(
        "{{\"at_ms\":7,\"type\":\"chat_request\",\"content\":\"[[[\",\"x\":{}{}}}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let text = format!("{}{deep}", header_line(&c.id, 5));
    assert_eq!(
        corrupt(&store, &c, text.as_bytes()),
        "<log> is not a readable conversation: line 2 nests deeper than 136 levels, more than jp writes"
    );
}
