//! Every shared provider fixture loads, its bodies are byte-exact, and a recorded conversation
//! replays through the server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{PATIENCE, post};
use jp_test_server::{Fixture, Split, TestServer, load_fixture, load_fixtures, shared_fixture};

/// What each fixture file holds: request path, response content type, and the byte length of
/// each exchange's response body. The lengths were computed independently with PyYAML 6.0.3
/// (`len(doc["then"]["body"].encode())`).
const EXPECTED: &[(&str, &str, &str, &[usize])] = &[
    (
        "anthropic_test_multi_turn_conversation.yml",
        "/v1/messages",
        "text/event-stream; charset=utf-8",
        &[2222, 3541, 1504, 2342, 5606],
    ),
    (
        "anthropic_test_tool_call_stream.yml",
        "/v1/messages",
        "text/event-stream; charset=utf-8",
        &[1806, 2708],
    ),
    (
        "google_test_tool_call_reasoning.yml",
        "/v1beta/models/gemini-2.5-flash-lite:streamGenerateContent",
        "text/event-stream",
        &[448, 1079],
    ),
    (
        "google_test_tool_call_stream.yml",
        "/v1beta/models/gemini-2.5-flash-lite:streamGenerateContent",
        "text/event-stream",
        &[1848, 742],
    ),
    (
        "llamacpp_test_tool_call_stream.yml",
        "/v1/chat/completions",
        "text/event-stream",
        &[5006, 16119],
    ),
    (
        "ollama_test_tool_call_stream.yml",
        "/api/chat",
        "application/x-ndjson",
        &[512, 3863],
    ),
    (
        "openai_test_tool_call_stream.yml",
        "/v1/responses",
        "text/event-stream; charset=utf-8",
        &[7611, 20358],
    ),
    (
        "openrouter_test_anthropic_opus_5_parallel_tool_round_trip.yml",
        "/api/v1/chat/completions",
        "text/event-stream",
        &[4011, 2719],
    ),
];

fn fixture_files() -> Vec<String> {
    let dir = shared_fixture("");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".yml"))
        .collect();
    names.sort();
    names
}

#[test]
fn every_fixture_file_is_covered_and_loads_as_expected() {
    let listed: Vec<&str> = EXPECTED.iter().map(|(name, ..)| *name).collect();
    assert_eq!(
        fixture_files(),
        listed,
        "a fixture file was added or removed"
    );
    for (name, path, content_type, lengths) in EXPECTED {
        let fixtures = load_fixtures(shared_fixture(name)).unwrap();
        let got_lengths: Vec<usize> = fixtures.iter().map(|f| f.body.len()).collect();
        assert_eq!(&got_lengths, lengths, "{name}");
        for fixture in &fixtures {
            assert_eq!(fixture.path, *path, "{name}");
            assert_eq!(fixture.method, "POST", "{name}");
            assert_eq!(fixture.status, 200, "{name}");
            assert_eq!(
                fixture.headers,
                vec![("content-type".to_owned(), (*content_type).to_owned())],
                "{name}"
            );
            assert!(
                fixture
                    .request_body
                    .as_ref()
                    .is_some_and(serde_json::Value::is_object),
                "{name}: request body {:?}",
                fixture.request_body
            );
        }
        assert_eq!(
            load_fixture(shared_fixture(name)).unwrap(),
            fixtures[0],
            "{name}"
        );
    }
}

/// A second, naive reading of the YAML: take the lines of each `body: |+` / `body: |` block,
/// drop the four-space indentation, and apply the chomping indicator by hand.
fn naive_bodies(text: &str) -> Vec<Vec<u8>> {
    let mut bodies = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let keep = match line {
            "  body: |+" => true,
            "  body: |" => false,
            _ => continue,
        };
        let mut block: Vec<&str> = Vec::new();
        while let Some(next) = lines.peek() {
            if !(next.is_empty() || next.starts_with("    ")) {
                break;
            }
            block.push(next.get(4..).unwrap_or(""));
            lines.next();
        }
        if !keep {
            while block.last() == Some(&"") {
                block.pop();
            }
        }
        let mut body = String::new();
        for line in block {
            body.push_str(line);
            body.push('\n');
        }
        bodies.push(body.into_bytes());
    }
    bodies
}

#[test]
fn bodies_match_a_line_by_line_reading_of_the_yaml() {
    for name in fixture_files() {
        let path = shared_fixture(&name);
        let text = std::fs::read_to_string(&path).unwrap();
        let loaded: Vec<Vec<u8>> = load_fixtures(&path)
            .unwrap()
            .into_iter()
            .map(|f| f.body)
            .collect();
        assert_eq!(loaded, naive_bodies(&text), "{name}");
    }
}

#[test]
fn anthropic_tool_call_body_keeps_sse_blank_lines() {
    let fixtures = load_fixtures(shared_fixture("anthropic_test_tool_call_stream.yml")).unwrap();
    let body = String::from_utf8(fixtures[0].body.clone()).unwrap();
    assert!(body.starts_with("event: message_start\ndata: {\"type\":\"message_start\","));
    assert!(body.contains(
        "\"caller\":{\"type\":\"direct\"}}     }\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n\
         event: content_block_delta\n"
    ));
    assert!(body.ends_with(
        "\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"               }\n\n"
    ));
    // Eleven events, each ended by a blank line, and no other blank lines.
    assert_eq!(body.matches("\n\n").count(), 11);
    assert_eq!(body.matches("event: ").count(), 11);
    assert_eq!(
        fixtures[0].request_body.as_ref().unwrap()["tools"][0]["name"],
        serde_json::json!("run_me")
    );
    assert_eq!(
        fixtures[1].request_body.as_ref().unwrap()["messages"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn ollama_body_is_one_json_value_per_line() {
    for fixture in load_fixtures(shared_fixture("ollama_test_tool_call_stream.yml")).unwrap() {
        let body = String::from_utf8(fixture.body).unwrap();
        assert!(body.ends_with("}\n") && !body.ends_with("\n\n"));
        let lines: Vec<&str> = body.lines().collect();
        for line in &lines {
            let value: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("line {line:?} is not JSON: {e}"));
            assert_eq!(value["model"], serde_json::json!("qwen3.5:9b"));
        }
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(lines.last().unwrap()).unwrap()["done"],
            serde_json::json!(true)
        );
    }
}

#[test]
fn every_sse_body_ends_with_the_blank_line_that_ends_its_last_event() {
    for (name, _, content_type, _) in EXPECTED {
        if !content_type.starts_with("text/event-stream") {
            continue;
        }
        for fixture in load_fixtures(shared_fixture(name)).unwrap() {
            assert!(fixture.body.ends_with(b"\n\n"), "{name}");
            assert!(!fixture.body.ends_with(b"\n\n\n"), "{name}");
        }
    }
}

#[test]
fn google_fixture_records_the_alt_sse_query_and_expects_it() {
    let fixtures = load_fixtures(shared_fixture("google_test_tool_call_stream.yml")).unwrap();
    for fixture in &fixtures {
        assert_eq!(fixture.query, vec![("alt".to_owned(), "sse".to_owned())]);
        assert_eq!(
            fixture.reply().expect_path.as_deref(),
            Some("/v1beta/models/gemini-2.5-flash-lite:streamGenerateContent?alt=sse")
        );
    }
    let others = load_fixtures(shared_fixture("openai_test_tool_call_stream.yml")).unwrap();
    assert_eq!(others[0].query, vec![]);
    assert_eq!(
        others[0].reply().expect_path.as_deref(),
        Some("/v1/responses")
    );
}

#[test]
fn recorded_conversation_replays_in_order_through_the_server() {
    let fixtures: Vec<Fixture> =
        load_fixtures(shared_fixture("anthropic_test_multi_turn_conversation.yml")).unwrap();
    let replies = fixtures
        .iter()
        .enumerate()
        .map(|(i, f)| {
            f.reply().split(Split::Random {
                seed: i as u64,
                max: 13,
            })
        })
        .collect();
    let server = TestServer::start(replies);
    for fixture in &fixtures {
        let request = serde_json::to_vec(fixture.request_body.as_ref().unwrap()).unwrap();
        let response = post(&server, "/v1/messages", &request);
        assert_eq!(response.status_line, "HTTP/1.1 200 OK");
        assert_eq!(
            response.header("content-type"),
            Some("text/event-stream; charset=utf-8")
        );
        assert_eq!(response.body(), fixture.body);
        assert!(response.terminated);
        assert!(response.chunks.len() > fixture.body.len() / 13);
    }
    let requests = server.wait_for(fixtures.len(), PATIENCE);
    for (request, fixture) in requests.iter().zip(&fixtures) {
        assert_eq!(Some(request.json()), fixture.request_body);
        assert_eq!(request.path_mismatch, None);
        assert_eq!(request.body_bytes_sent, fixture.body.len());
    }
}

#[test]
fn missing_fixture_error_names_the_file() {
    let path = shared_fixture("no_such_provider.yml");
    let err = load_fixture(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: cannot read fixture: No such file or directory (os error 2)",
            path.display()
        )
    );
    assert!(Path::new(&shared_fixture("")).is_dir());
}
