#![allow(clippy::unwrap_used)]

use jp_conversation::{EventPart, ToolCallPart};

use super::*;

fn part(index: usize, part: EventPart) -> Input {
    Input::Event(StreamEvent::Part { index, part })
}

fn flush(index: usize) -> Input {
    Input::Event(StreamEvent::Flush { index })
}

fn start(id: &str) -> EventPart {
    EventPart::ToolCall(ToolCallPart::Start {
        id: id.into(),
        name: "t".into(),
    })
}

fn chunk(text: &str) -> EventPart {
    EventPart::ToolCall(ToolCallPart::ArgumentChunk(text.into()))
}

fn run(turn: &mut TurnCoordinator, inputs: Vec<Input>) -> Vec<Action> {
    inputs.into_iter().flat_map(|i| turn.handle(i)).collect()
}

fn kinds(actions: &[Action]) -> Vec<&'static str> {
    actions
        .iter()
        .map(|a| match a {
            Action::Request { .. } => "request",
            Action::Text(_) => "text",
            Action::Reasoning(_) => "reasoning",
            Action::Notice(_) => "notice",
            Action::ToolCallStarted { .. } => "started",
            Action::ArgumentProgress { .. } => "progress",
            Action::Record(EventKind::AssistantMessage { .. }) => "record message",
            Action::Record(EventKind::ToolCallRequest(_)) => "record call",
            // The response, after how the call was decided.
            Action::Record(EventKind::ToolCallResponse(_)) | Action::Unrun { .. } => {
                "record response"
            }
            Action::Record(_) => "record",
            Action::Decide { .. } => "decide",
            Action::RunTools(_) => "run tools",
            Action::CancelStream { .. } => "cancel stream",
            Action::ArgumentsTooLarge { .. } => "too large",
            Action::AskReply => "ask reply",
            Action::Usage(_) => "usage",
            Action::Finish(_) => "finish",
        })
        .collect()
}

fn without_progress(actions: &[Action]) -> Vec<&'static str> {
    kinds(actions)
        .into_iter()
        .filter(|k| *k != "progress")
        .collect()
}

#[test]
fn text_only_turn() {
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    assert_eq!(turn.start(), vec![Action::Request { cycle: 1 }]);
    let actions = run(
        &mut turn,
        vec![
            part(0, EventPart::Message("Hel".into())),
            part(0, EventPart::Message("lo".into())),
            flush(0),
            Input::Event(StreamEvent::Finished(FinishReason::EndTurn)),
            Input::StreamEnded,
        ],
    );
    assert_eq!(
        actions,
        vec![
            Action::Text("Hel".into()),
            Action::Text("lo".into()),
            Action::Record(EventKind::AssistantMessage {
                content: "Hello".into()
            }),
            Action::Finish(TurnEnd::Completed),
        ]
    );
    assert!(turn.is_done());
}

#[test]
fn an_abandoned_call_ends_with_its_completed_arguments_and_stops_the_stream_when_last() {
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    turn.start();
    let actions = run(
        &mut turn,
        vec![
            part(1, start("a")),
            part(1, chunk(r#"{"path":".env","content":"AAAA"#)),
            part(2, start("b")),
            part(2, chunk(r#"{"path":"x""#)),
        ],
    );
    assert_eq!(
        without_progress(&actions),
        ["started", "started"],
        "{actions:?}"
    );
    assert_eq!(turn.argument(0, "path"), Some(&serde_json::json!(".env")));
    assert_eq!(turn.argument(0, "content"), None, "still streaming");
    // Besides call 0, call 1 streams, with 11 bytes so far.
    assert_eq!(turn.others_streaming(0), (1, 11));
    assert_eq!(turn.others_streaming(1), (1, 30));
    // Call 0 (index 1) is declined while call 1 still streams: it ends,
    // and the stream goes on for call 1.
    let actions = turn.handle(Input::Abandon { call: 0 });
    assert_eq!(kinds(&actions), ["record call", "decide"]);
    let Some(Action::Decide { call: 0, request }) = actions.last() else {
        panic!("{actions:?}")
    };
    assert_eq!(
        serde_json::Value::Object(request.received_arguments().clone()),
        serde_json::json!({ "path": ".env" })
    );
    assert!(request.arguments().is_err(), "an abandoned call never runs");
    // Its later chunks and flush are dropped.
    let actions = run(
        &mut turn,
        vec![part(1, chunk(r#"BBBB"}"#)), flush(1), part(2, chunk("}"))],
    );
    assert_eq!(without_progress(&actions), Vec::<&str>::new());
    // Declining the last streaming call stops the stream; the response
    // ends there with both calls.
    let actions = turn.handle(Input::Abandon { call: 1 });
    assert_eq!(
        kinds(&actions),
        [
            "record call",
            "decide",
            "record",
            "cancel stream",
            "run tools"
        ]
    );
    // The conversation keeps what stopping early saved.
    assert_eq!(
        actions[2],
        Action::Record(EventKind::StreamStopped {
            call_id: "b".into(),
            tool: "t".into(),
            bytes: 12,
            whole: false,
        })
    );
    assert!(matches!(
        &actions[3],
        Action::CancelStream { call: 1, tool, bytes: 12, whole: false } if tool == "t"
    ));
    let Some(Action::RunTools(calls)) = actions.last() else {
        panic!()
    };
    assert_eq!(
        calls
            .iter()
            .map(|(n, c)| (*n, c.id.as_str()))
            .collect::<Vec<_>>(),
        [(0, "a"), (1, "b")]
    );
    // An abandon after the stream ended changes nothing.
    assert_eq!(turn.handle(Input::Abandon { call: 1 }), Vec::new());
}

/// Issue 14: the chunk that would take a call past its limit is not
/// parsed; the call is refused and ended with what had completed, and
/// the stream stops when it was the last call streaming.
#[test]
fn a_call_over_its_argument_limit_is_refused_and_the_stream_stops() {
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    turn.start();
    let mut actions = turn.handle(part(0, start("a")));
    turn.limit_arguments(0, 20);
    // 19 bytes: within the limit; 7 more would pass it.
    actions.extend(turn.handle(part(0, chunk(r#"{"path":"a.rs","x":"#))));
    actions.extend(turn.handle(part(0, chunk(r#""more"}"#))));
    // The rest of the call is dropped.
    actions.extend(turn.handle(part(0, chunk("ignored"))));
    assert_eq!(
        without_progress(&actions),
        [
            "started",
            "too large",
            "record call",
            "decide",
            "record",
            "cancel stream",
            "run tools"
        ]
    );
    assert_eq!(
        actions[actions.len() - 6],
        Action::ArgumentsTooLarge {
            call: 0,
            tool: "t".into(),
            limit: 20,
            bytes: 26,
        }
    );
    let Some(Action::Decide { request, .. }) =
        actions.iter().find(|a| matches!(a, Action::Decide { .. }))
    else {
        panic!("{actions:?}")
    };
    assert_eq!(
        request.received_arguments(),
        serde_json::json!({"path": "a.rs"}).as_object().unwrap()
    );
    assert_eq!(
        actions[actions.len() - 2],
        Action::CancelStream {
            call: 0,
            tool: "t".into(),
            bytes: 26,
            whole: false,
        }
    );
}

#[test]
fn tool_calls_then_follow_up() {
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    turn.start();
    let actions = run(
        &mut turn,
        vec![
            part(1, start("a")),
            part(1, chunk(r#"{"x":"#)),
            part(2, start("b")),
            part(2, chunk("{}")),
            part(1, chunk("1}")),
            flush(2),
            flush(1),
            // `stop` on a tool call: the calls still run.
            Input::Event(StreamEvent::Finished(FinishReason::EndTurn)),
            Input::StreamEnded,
        ],
    );
    // Progress for each call, as its arguments arrive; the exact
    // fragments are the parser's business (tested there).
    let progressed: std::collections::BTreeSet<&str> = actions
        .iter()
        .filter_map(|a| match a {
            Action::ArgumentProgress { progress: p, .. } => Some(p.tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(progressed.into_iter().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(
        without_progress(&actions),
        [
            "started",
            "started",
            "record call",
            "decide",
            "record call",
            "decide",
            "run tools"
        ]
    );
    let Some(Action::RunTools(calls)) = actions.last() else {
        panic!()
    };
    assert_eq!(
        calls.iter().map(|(_, c)| c.id.as_str()).collect::<Vec<_>>(),
        ["b", "a"]
    );
    assert_eq!(
        turn.handle(Input::ToolsDone),
        vec![Action::Request { cycle: 2 }]
    );
    let end = run(
        &mut turn,
        vec![
            part(0, EventPart::Message("ok".into())),
            flush(0),
            Input::StreamEnded,
        ],
    );
    assert_eq!(kinds(&end), ["text", "record message", "finish"]);
}

#[test]
fn a_call_cut_off_by_max_tokens_is_decided_as_truncated() {
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    turn.start();
    let actions = run(
        &mut turn,
        vec![
            part(0, start("a")),
            part(0, chunk(r#"{"path": "sr"#)),
            Input::Event(StreamEvent::Finished(FinishReason::MaxTokens)),
            Input::StreamEnded,
        ],
    );
    let decided = actions
        .iter()
        .find_map(|a| match a {
            Action::Decide { request, .. } => Some(request.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        decided.arguments().unwrap_err().to_string(),
        "arguments are truncated: input ended inside a string at /path"
    );
    assert_eq!(kinds(&actions).last(), Some(&"run tools"));
}

#[test]
fn a_failed_stream_keeps_text_and_answers_every_call() {
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    turn.start();
    let actions = run(
        &mut turn,
        vec![
            part(0, EventPart::Message("partial".into())),
            part(1, start("a")),
            part(1, chunk("{}")),
            flush(1),
            Input::StreamFailed(ProviderError::Disconnected {
                provider: "anthropic".into(),
                message: "reset".into(),
            }),
        ],
    );
    assert_eq!(
        without_progress(&actions),
        [
            "text",
            "started",
            "record call",
            "decide",
            "record message",
            "record response",
            "finish"
        ]
    );
    assert_eq!(
        actions.last(),
        Some(&Action::Finish(TurnEnd::Failed(
            "anthropic: the connection dropped mid-response: reset".into()
        )))
    );
}

#[test]
fn a_repeated_call_id_is_renamed_and_refused() {
    let mut turn = TurnCoordinator::new(8, HashSet::from(["old".to_owned()]));
    turn.start();
    let actions = run(
        &mut turn,
        vec![
            part(0, start("dup")),
            part(0, chunk("{}")),
            part(1, start("dup")),
            part(1, chunk("{}")),
            part(2, start("old")),
            part(2, chunk("{}")),
            flush(0),
            flush(1),
            flush(2),
            Input::StreamEnded,
        ],
    );
    let Some(Action::RunTools(calls)) = actions.last() else {
        panic!("{actions:?}")
    };
    let summary: Vec<(&str, Option<String>)> = calls
        .iter()
        .map(|(_, c)| (c.id.as_str(), c.error().map(ToString::to_string)))
        .collect();
    let refused = |id: &str| {
        Some(format!(
            "the call reused the id `{id}` of another call; it is refused because its result could be taken for the other call's"
        ))
    };
    assert_eq!(
        summary,
        [
            ("dup", None),
            ("dup-2", refused("dup")),
            ("old-2", refused("old"))
        ]
    );
}

#[test]
fn the_cycle_limit_ends_the_turn() {
    let mut turn = TurnCoordinator::new(1, HashSet::new());
    turn.start();
    run(
        &mut turn,
        vec![part(0, start("a")), flush(0), Input::StreamEnded],
    );
    assert_eq!(
        turn.handle(Input::ToolsDone),
        vec![Action::Finish(TurnEnd::CycleLimit(1))]
    );
}

#[test]
fn stop_and_reply_keeps_what_arrived_and_sends_the_reply() {
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    turn.start();
    let actions = run(
        &mut turn,
        vec![
            part(0, EventPart::Message("Half an ans".into())),
            part(1, start("a")),
            part(1, chunk(r#"{"x": 1}"#)),
            flush(1),
            part(2, start("b")),
            part(2, chunk(r#"{"x": "#)),
            Input::Stopped,
        ],
    );
    assert_eq!(
        without_progress(&actions),
        [
            "text",
            "started",
            "record call",
            "decide",
            "started",
            "record message",
            "record call",
            "record response",
            "record response",
            "ask reply"
        ]
    );
    let reply = turn.handle(Input::Reply(Some("No, use b.txt".into())));
    assert_eq!(
        reply,
        vec![
            Action::Record(EventKind::ChatRequest {
                content: "No, use b.txt".into()
            }),
            Action::Request { cycle: 2 }
        ]
    );

    // Stopped while tools run, and no reply: the turn ends.
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    turn.start();
    run(
        &mut turn,
        vec![part(0, start("a")), flush(0), Input::StreamEnded],
    );
    assert_eq!(turn.handle(Input::Stopped), vec![Action::AskReply]);
    assert_eq!(
        turn.handle(Input::Reply(None)),
        vec![Action::Finish(TurnEnd::Stopped)]
    );
    assert!(turn.is_done());
}

fn reported(input: u64, output: u64) -> Input {
    Input::Event(StreamEvent::Usage(Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        cache_read_tokens: None,
        cache_write_tokens: None,
    }))
}

/// Providers report counts so far; the turn hands the shell the last
/// report of each response once, before the response's calls run or the
/// turn ends, and the next response starts with none.
#[test]
fn each_response_hands_on_its_last_usage_report_once() {
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    turn.start();
    let actions = run(
        &mut turn,
        vec![
            reported(100, 1),
            part(0, start("a")),
            part(0, chunk("{}")),
            flush(0),
            reported(100, 7),
            Input::StreamEnded,
        ],
    );
    assert_eq!(
        without_progress(&actions),
        ["started", "record call", "decide", "usage", "run tools"]
    );
    assert!(actions.contains(&Action::Usage(Usage {
        input_tokens: Some(100),
        output_tokens: Some(7),
        cache_read_tokens: None,
        cache_write_tokens: None,
    })));
    turn.handle(Input::ToolsDone);
    // The second response reports nothing: no usage is handed on.
    let actions = run(
        &mut turn,
        vec![
            part(0, EventPart::Message("ok".into())),
            flush(0),
            Input::StreamEnded,
        ],
    );
    assert_eq!(kinds(&actions), ["text", "record message", "finish"]);
}

/// A stream jp stops early keeps what was reported before it stopped
/// (Anthropic's input count arrives first).
#[test]
fn a_stopped_stream_hands_on_what_was_reported() {
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    turn.start();
    run(
        &mut turn,
        vec![
            reported(900, 1),
            part(0, start("a")),
            part(0, chunk(r#"{"path":"x","#)),
        ],
    );
    let actions = turn.handle(Input::Abandon { call: 0 });
    assert_eq!(
        kinds(&actions),
        [
            "record call",
            "decide",
            "record",
            "cancel stream",
            "usage",
            "run tools"
        ]
    );
}

/// The events of one Gemini chunk: a call, whole, then (`ends`) the
/// response's usage and end.
fn gemini_chunk(ends: bool) -> Vec<Input> {
    let mut inputs = vec![
        Input::Event(StreamEvent::GroupStart),
        part(2, start("g")),
        part(2, chunk(r#"{"path":"a.rs"}"#)),
        flush(2),
    ];
    if ends {
        inputs.push(Input::Event(StreamEvent::Usage(Usage {
            input_tokens: Some(10),
            output_tokens: Some(5),
            cache_read_tokens: None,
            cache_write_tokens: None,
        })));
        inputs.push(Input::Event(StreamEvent::Finished(FinishReason::EndTurn)));
    }
    inputs.push(Input::Event(StreamEvent::GroupEnd));
    inputs
}

/// A call declined as a group of events arrives (Gemini sends a call
/// whole, with the response's end) is ended once the group is in: its
/// arguments, the response's usage and its end are read, and the stream,
/// which has ended, is not said to be stopped (issue 34).
#[test]
fn a_call_declined_in_a_group_that_ends_the_response_stops_nothing() {
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    turn.start();
    let mut inputs = gemini_chunk(true);
    // Declined the moment it starts (the shell sends this back).
    inputs.insert(2, Input::Abandon { call: 0 });
    inputs.push(Input::StreamEnded);
    let actions = run(&mut turn, inputs);
    assert_eq!(
        without_progress(&actions),
        ["started", "record call", "decide", "usage", "run tools"],
        "{actions:?}"
    );
    let Some(Action::Decide { request, .. }) =
        actions.iter().find(|a| matches!(a, Action::Decide { .. }))
    else {
        panic!()
    };
    assert_eq!(
        request.arguments().unwrap(),
        serde_json::json!({"path": "a.rs"}).as_object().unwrap()
    );
}

/// When the response goes on after the group, the stream stops after the
/// declined call, which had arrived whole.
#[test]
fn a_call_declined_in_a_group_stops_the_stream_after_it_when_more_follows() {
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    turn.start();
    let mut inputs = gemini_chunk(false);
    inputs.insert(2, Input::Abandon { call: 0 });
    let actions = run(&mut turn, inputs);
    assert_eq!(
        without_progress(&actions),
        [
            "started",
            "record call",
            "decide",
            "record",
            "cancel stream",
            "run tools"
        ],
        "{actions:?}"
    );
    assert_eq!(
        actions[actions.len() - 3],
        Action::Record(EventKind::StreamStopped {
            call_id: "g".into(),
            tool: "t".into(),
            bytes: 15,
            whole: true,
        })
    );
    // Whatever the order, the same: declined after the group, the same
    // stop.
    let mut turn = TurnCoordinator::new(8, HashSet::new());
    turn.start();
    let mut actions = run(&mut turn, gemini_chunk(false));
    actions.extend(turn.handle(Input::Abandon { call: 0 }));
    assert_eq!(
        without_progress(&actions),
        [
            "started",
            "record call",
            "decide",
            "record",
            "cancel stream",
            "run tools"
        ],
        "{actions:?}"
    );
}
