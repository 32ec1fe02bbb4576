//! The HTTP providers against a local server replaying recorded provider
//! bytes: what they send, what they make of the answer, and how they
//! behave when it goes wrong (rate limits, error statuses, dropped
//! connections, cancellation).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use jp_conversation::{EventPart, ToolCallPart};
use jp_llm::anthropic::{Anthropic, RetryPolicy};
use jp_llm::google::Google;
use jp_llm::ollama::Ollama;
use jp_llm::openai::OpenAiCompatible;
use jp_llm::openai_responses::OpenAiResponses;
use jp_llm::{
    ChatRequest, EventStream, FinishReason, Message, Provider, ProviderError, StreamEvent,
    ToolDefinition, Usage,
};
use jp_test_server::{
    Fault, Fixture, RecordedRequest, Reply, Split, TestServer, load_fixtures, shared_fixture,
};
use serde_json::json;

const ANTHROPIC: &str = "anthropic_test_tool_call_stream.yml";
const OPENROUTER: &str = "openrouter_test_anthropic_opus_5_parallel_tool_round_trip.yml";
const LLAMACPP: &str = "llamacpp_test_tool_call_stream.yml";
const OLLAMA: &str = "ollama_test_tool_call_stream.yml";
const GOOGLE: &str = "google_test_tool_call_stream.yml";
const OPENAI: &str = "openai_test_tool_call_stream.yml";

fn fixture(name: &str, exchange: usize) -> Fixture {
    load_fixtures(shared_fixture(name))
        .unwrap()
        .remove(exchange)
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        system: Some("You are terse.".into()),
        messages: vec![Message::User(
            "Please run the tool, providing whatever arguments you want.".into(),
        )],
        tools: vec![ToolDefinition {
            name: "run_me".into(),
            description: Some("Runs.".into()),
            parameters: json!({
                "type": "object",
                "properties": {"foo": {"type": "string"}, "bar": {"type": "string"}},
                "additionalProperties": false,
            }),
        }],
        max_tokens: 1000,
        temperature: None,
        top_p: None,
    }
}

/// Retries without real waiting. Waits this short get no jitter (it is
/// rounded away; see `RetryPolicy`), so notices are exact.
fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 5,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
    }
}

/// Every event up to the end of the stream or its first error.
async fn collect(mut stream: EventStream) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => return (events, Some(error)),
        }
    }
    (events, None)
}

/// The requests once `n` exchanges have ended, without blocking the
/// runtime (the HTTP client's connection tasks run on it).
async fn ended_requests(server: &TestServer, n: usize) -> Vec<RecordedRequest> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let requests = server.requests();
        if requests.iter().filter(|r| r.ended_at.is_some()).count() >= n
            || Instant::now() > deadline
        {
            return requests;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn part(index: usize, part: EventPart) -> StreamEvent {
    StreamEvent::Part { index, part }
}

fn start(index: usize, id: &str, name: &str) -> StreamEvent {
    part(
        index,
        EventPart::ToolCall(ToolCallPart::Start {
            id: id.into(),
            name: name.into(),
        }),
    )
}

fn chunk(index: usize, text: &str) -> StreamEvent {
    part(
        index,
        EventPart::ToolCall(ToolCallPart::ArgumentChunk(text.into())),
    )
}

fn usage(input: u64, output: u64, cached: Option<u64>) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        cache_read_tokens: cached,
        cache_write_tokens: None,
    })
}

/// Anthropic's usage: it reports cache reads and writes (both 0 in the
/// recording).
fn anthropic_usage(input: u64, output: u64) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        cache_read_tokens: Some(0),
        cache_write_tokens: Some(0),
    })
}

/// The recorded Anthropic tool call, decoded.
fn anthropic_tool_call_events() -> Vec<StreamEvent> {
    let id = "toolu_0113bSV1GiCA46VddyWm86oR";
    vec![
        anthropic_usage(599, 26),
        start(0, id, "run_me"),
        chunk(0, "{\"bar\": "),
        chunk(0, "\"foo\""),
        chunk(0, ", \"foo"),
        chunk(0, "\": \"foo\"}"),
        StreamEvent::Flush { index: 0 },
        anthropic_usage(599, 71),
        StreamEvent::Finished(FinishReason::ToolUse),
    ]
}

fn headers_without_host(request: &RecordedRequest) -> Vec<(String, String)> {
    request
        .headers
        .iter()
        .filter(|(name, _)| name != "host")
        .cloned()
        .collect()
}

fn user_agent() -> (String, String) {
    (
        "user-agent".into(),
        format!("jp/{}", env!("CARGO_PKG_VERSION")),
    )
}

#[tokio::test]
async fn anthropic_replays_a_recorded_tool_call_split_at_every_byte() {
    let recorded = fixture(ANTHROPIC, 0);
    let server = TestServer::start(vec![recorded.reply().split(Split::Every(1))]);
    let provider = Anthropic::new(format!("{}/", server.url()), "sk-ant-test");
    assert_eq!(provider.name(), "anthropic");

    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(error, None);
    assert_eq!(events, anthropic_tool_call_events());

    let requests = ended_requests(&server, 1).await;
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.path_mismatch, None);
    let length = sent.body.len().to_string();
    assert_eq!(
        headers_without_host(sent),
        vec![
            ("content-type".into(), "application/json".into()),
            ("x-api-key".into(), "sk-ant-test".into()),
            ("anthropic-version".into(), "2023-06-01".into()),
            ("accept".into(), "*/*".into()),
            user_agent(),
            ("content-length".into(), length),
        ]
    );
    assert_eq!(
        String::from_utf8_lossy(&sent.body),
        body_text(&jp_llm::anthropic::request_body(
            &request(),
            jp_llm::anthropic::Caching::Breakpoints
        ))
    );
}

#[tokio::test]
async fn openrouter_replays_recorded_parallel_tool_calls_split_at_every_byte() {
    let recorded = fixture(OPENROUTER, 0);
    let server = TestServer::start(vec![recorded.reply().split(Split::Every(1))]);
    let provider = OpenAiCompatible::new(
        "openrouter",
        format!("{}/api/v1", server.url()),
        Some("or-key".into()),
    );
    assert_eq!(provider.name(), "openrouter");

    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(error, None);
    let list = "toolu_01TVUg5BitZKezwKEnwpHQby";
    let search = "toolu_01HWdXMAbtonx7U5f8wrXi6e";
    assert_eq!(
        events,
        vec![
            part(0, EventPart::Message("I".into())),
            part(
                0,
                EventPart::Message("'ll call both tools in parallel now.".into())
            ),
            start(2, list, "list_items"),
            chunk(2, "{}"),
            start(3, search, "search_items"),
            chunk(3, "{}"),
            StreamEvent::Flush { index: 0 },
            StreamEvent::Flush { index: 2 },
            StreamEvent::Flush { index: 3 },
            StreamEvent::Finished(FinishReason::ToolUse),
            usage(425, 63, Some(0)),
        ]
    );

    let requests = ended_requests(&server, 1).await;
    let sent = &requests[0];
    assert_eq!(sent.path, "/api/v1/chat/completions");
    assert_eq!(sent.path_mismatch, None);
    assert_eq!(sent.header("authorization"), Some("Bearer or-key"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        String::from_utf8_lossy(&sent.body),
        body_text(&jp_llm::openai::request_body("openrouter", &request()))
    );
    assert_eq!(sent.json()["max_tokens"], json!(1000));
    assert_eq!(sent.json().get("max_completion_tokens"), None);
}

#[tokio::test]
async fn llamacpp_replays_a_recorded_tool_call_without_a_key() {
    let recorded = fixture(LLAMACPP, 0);
    let server = TestServer::start(vec![recorded.reply().split(Split::Every(1))]);
    let provider = OpenAiCompatible::new("llamacpp", format!("{}/v1", server.url()), None);

    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(error, None);
    let id = "XQaGnE82XyTYGBNOz5nJ4UCK5rTKyxJ3";
    let mut expected = vec![start(2, id, "run_me")];
    for piece in [
        "{",
        "\"foo\":\"",
        "test",
        "\"",
        ",\"bar\":\"",
        "[\\\"",
        "foo",
        "\\\",",
        " \\\"",
        "bar",
        "\\\"]",
        "\"",
        "}",
    ] {
        expected.push(chunk(2, piece));
    }
    expected.extend([
        StreamEvent::Flush { index: 2 },
        StreamEvent::Finished(FinishReason::ToolUse),
    ]);
    assert_eq!(events, expected);

    let requests = ended_requests(&server, 1).await;
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.path_mismatch, None);
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        String::from_utf8_lossy(&sent.body),
        body_text(&jp_llm::openai::request_body("llamacpp", &request()))
    );
    assert_eq!(sent.json()["max_tokens"], json!(1000));
}

#[tokio::test]
async fn openai_sends_the_token_limit_as_max_completion_tokens() {
    // A recorded Chat Completions answer, served where OpenAI serves it.
    let server = TestServer::start(vec![
        fixture(OPENROUTER, 1)
            .reply()
            .expect_path("/v1/chat/completions"),
    ]);
    let provider =
        OpenAiCompatible::new("openai", format!("{}/v1", server.url()), Some("sk".into()));
    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(error, None);
    assert_eq!(events.last(), Some(&usage(164, 110, Some(0))));

    let requests = ended_requests(&server, 1).await;
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.path_mismatch, None);
    assert_eq!(
        sent.json(),
        json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Please run the tool, providing whatever arguments you want."},
            ],
            "tools": [{"type": "function", "function": {
                "name": "run_me",
                "description": "Runs.",
                "parameters": {
                    "type": "object",
                    "properties": {"foo": {"type": "string"}, "bar": {"type": "string"}},
                    "additionalProperties": false,
                },
            }}],
            "max_completion_tokens": 1000,
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn openai_speaks_the_responses_api() {
    // jp's recorded Responses answer, split at random places, served where
    // OpenAI serves it.
    let server = TestServer::start(vec![
        fixture(OPENAI, 0)
            .reply()
            .split(Split::Random { seed: 23, max: 97 })
            .expect_path("/v1/responses"),
    ]);
    let provider = OpenAiResponses::new(format!("{}/v1/", server.url()), "sk-test");
    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(error, None);
    let id = "call_AujnMFG9aQStXpHVXQ5Gwfgi";
    assert_eq!(
        events.first(),
        Some(&StreamEvent::Part {
            index: 1,
            part: EventPart::ToolCall(ToolCallPart::Start {
                id: id.into(),
                name: "run_me".into(),
            }),
        })
    );
    assert_eq!(
        events[events.len() - 3..],
        [
            StreamEvent::Flush { index: 1 },
            usage(72, 36, Some(0)),
            StreamEvent::Finished(FinishReason::ToolUse),
        ]
    );

    let requests = ended_requests(&server, 1).await;
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.path_mismatch, None);
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(
        String::from_utf8(sent.body.clone()).unwrap(),
        json!({
            "model": "test-model",
            "instructions": "You are terse.",
            "input": [
                {"role": "user", "content": "Please run the tool, providing whatever arguments you want."},
            ],
            "tools": [{
                "type": "function",
                "name": "run_me",
                "description": "Runs.",
                "parameters": {
                    "type": "object",
                    "properties": {"foo": {"type": "string"}, "bar": {"type": "string"}},
                    "additionalProperties": false,
                },
                "strict": false,
            }],
            "max_output_tokens": 1000,
            "store": false,
            "stream": true,
        })
        .to_string()
    );
}

#[tokio::test]
async fn ollama_replays_a_recorded_tool_call_split_at_every_byte() {
    let recorded = fixture(OLLAMA, 0);
    let server = TestServer::start(vec![recorded.reply().split(Split::Every(1))]);
    let provider = Ollama::new(server.url(), Some("ollama-key".into()));
    assert_eq!(provider.name(), "ollama");

    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            start(2, "call_7bvei3gw", "run_me"),
            chunk(2, "{}"),
            StreamEvent::Flush { index: 2 },
            StreamEvent::Usage(Usage {
                input_tokens: Some(253),
                output_tokens: Some(15),
                cache_read_tokens: None,
                cache_write_tokens: None,
            }),
            StreamEvent::Finished(FinishReason::EndTurn),
        ]
    );

    let requests = ended_requests(&server, 1).await;
    let sent = &requests[0];
    assert_eq!(sent.path, "/api/chat");
    assert_eq!(sent.path_mismatch, None);
    assert_eq!(sent.header("authorization"), Some("Bearer ollama-key"));
    assert_eq!(
        String::from_utf8_lossy(&sent.body),
        body_text(&jp_llm::ollama::request_body(&request()))
    );
}

#[tokio::test]
async fn google_replays_a_recorded_tool_call_split_at_every_byte() {
    let recorded = fixture(GOOGLE, 0);
    let server = TestServer::start(vec![recorded.reply().split(Split::Every(1))]);
    let provider = Google::new(server.url(), "gemini-key");
    assert_eq!(provider.name(), "google");
    let request = ChatRequest {
        model: "gemini-2.5-flash-lite".into(),
        ..request()
    };

    let (events, error) = collect(provider.stream(request.clone())).await;
    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            // The chunk with the call is one group (issue 34).
            StreamEvent::GroupStart,
            start(2, "jp_call_0", "run_me"),
            chunk(2, r#"{"bar": ["hello","world"],"foo": "test"}"#),
            StreamEvent::Flush { index: 2 },
            usage(67, 248, None),
            StreamEvent::Finished(FinishReason::EndTurn),
            StreamEvent::GroupEnd,
        ]
    );

    let requests = ended_requests(&server, 1).await;
    let sent = &requests[0];
    assert_eq!(
        sent.path,
        "/v1beta/models/gemini-2.5-flash-lite:streamGenerateContent?alt=sse"
    );
    assert_eq!(sent.path_mismatch, None);
    assert_eq!(sent.header("x-goog-api-key"), Some("gemini-key"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        String::from_utf8_lossy(&sent.body),
        body_text(&jp_llm::google::request_body(&request))
    );
}

#[tokio::test]
async fn ollama_answer_with_multibyte_text_split_at_every_byte() {
    let recorded = fixture(OLLAMA, 1);
    let server = TestServer::start(vec![recorded.reply().split(Split::Every(1))]);
    let provider = Ollama::new(server.url(), None);
    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(error, None);
    let text: String = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::Part {
                index: 0,
                part: EventPart::Message(text),
            } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        text,
        "The tool ran successfully! It output: `working!`. \n\nIs there a specific task or \
         calculation you'd like me to try next? \u{1f60a}"
    );
    assert_eq!(
        events[events.len() - 3..],
        [
            StreamEvent::Flush { index: 0 },
            StreamEvent::Usage(Usage {
                input_tokens: Some(53),
                output_tokens: Some(31),
                cache_read_tokens: None,
                cache_write_tokens: None,
            }),
            StreamEvent::Finished(FinishReason::EndTurn),
        ]
    );
    assert_eq!(events.len(), 28 + 3);
}

#[tokio::test]
async fn nothing_is_sent_before_the_stream_is_polled() {
    let server = TestServer::start(vec![fixture(ANTHROPIC, 0).reply()]);
    let provider = Anthropic::new(server.url(), "k");
    let stream = provider.stream(request());
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(server.requests().len(), 0);
    let (events, error) = collect(stream).await;
    assert_eq!((events, error), (anthropic_tool_call_events(), None));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_429_with_retry_after_zero_is_retried_once_with_a_notice() {
    let server = TestServer::start(vec![
        Reply::status(
            429,
            "application/json",
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
        )
        .header("retry-after", "0"),
        fixture(ANTHROPIC, 0).reply(),
    ]);
    // The default policy would wait a second; `retry-after: 0` says not to.
    let provider = Anthropic::new(server.url(), "k");
    let started = Instant::now();
    let (events, error) = collect(provider.stream(request())).await;
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "waited {:?}",
        started.elapsed()
    );
    assert_eq!(error, None);
    let mut expected = vec![StreamEvent::Notice(
        "rate limited (HTTP 429); retrying in 0s (attempt 2 of 5)".into(),
    )];
    expected.extend(anthropic_tool_call_events());
    assert_eq!(events, expected);
    let requests = ended_requests(&server, 2).await;
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body);
}

#[tokio::test]
async fn overload_answers_back_off_and_then_give_up() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let server = TestServer::start(vec![
        Reply::status(529, "application/json", overloaded),
        Reply::status(500, "application/json", overloaded),
        Reply::status(503, "text/plain", "busy"),
    ]);
    let provider = Anthropic::new(server.url(), "k").with_retry(RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(3),
    });
    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(
        events,
        vec![
            StreamEvent::Notice("overloaded (HTTP 529); retrying in 2ms (attempt 2 of 3)".into()),
            StreamEvent::Notice("overloaded (HTTP 500); retrying in 3ms (attempt 3 of 3)".into()),
        ]
    );
    let error = error.unwrap();
    assert_eq!(
        error,
        ProviderError::RetriesExhausted {
            provider: "anthropic".into(),
            reason: "unavailable (HTTP 503)".into(),
            attempts: 3,
        }
    );
    assert_eq!(
        error.to_string(),
        "anthropic: still unavailable (HTTP 503) after 3 attempts; try again later"
    );
    assert_eq!(ended_requests(&server, 3).await.len(), 3);
}

/// An Anthropic body of `data` events, each named by its type.
fn anthropic_sse(events: &[&str]) -> String {
    events
        .iter()
        .map(|data| {
            let kind = serde_json::from_str::<serde_json::Value>(data).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned();
            format!("event: {kind}\ndata: {data}\n\n")
        })
        .collect()
}

const MESSAGE_START: &str = r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"test-model","usage":{"input_tokens":7,"output_tokens":1}}}"#;
const PING: &str = r#"{"type":"ping"}"#;
const OVERLOADED_EVENT: &str =
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

/// Gemini's stream may report an overload as an error event before any
/// content: retried like Anthropic's `overloaded_error`.
#[tokio::test]
async fn a_gemini_unavailable_error_event_before_any_content_is_retried() {
    let unavailable = "data: {\"error\": {\"code\": 503, \"message\": \"The model is overloaded. Please try again later.\", \"status\": \"UNAVAILABLE\"}}\r\n\r\n";
    let server = TestServer::start(vec![Reply::sse(unavailable), fixture(GOOGLE, 0).reply()]);
    let provider = Google::new(server.url(), "k").with_retry(fast_retry());
    let request = ChatRequest {
        model: "gemini-2.5-flash-lite".into(),
        ..request()
    };
    let (events, error) = collect(provider.stream(request)).await;
    assert_eq!(error, None);
    assert_eq!(
        events[0],
        StreamEvent::Notice("overloaded (UNAVAILABLE); retrying in 1ms (attempt 2 of 5)".into())
    );
    assert_eq!(
        events[1..3],
        [StreamEvent::GroupStart, start(2, "jp_call_0", "run_me")],
        "the retried response's events follow"
    );
    assert_eq!(ended_requests(&server, 2).await.len(), 2);
}

#[tokio::test]
async fn an_overloaded_error_event_before_any_content_is_retried() {
    let overloaded = anthropic_sse(&[MESSAGE_START, PING, OVERLOADED_EVENT]);
    let server = TestServer::start(vec![
        Reply::sse(overloaded).split(Split::Every(1)),
        fixture(ANTHROPIC, 0).reply(),
    ]);
    let provider = Anthropic::new(server.url(), "k").with_retry(fast_retry());
    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(error, None);
    // The first response's usage (7 in, 1 out) is dropped with it.
    let mut expected = vec![StreamEvent::Notice(
        "overloaded (overloaded_error); retrying in 1ms (attempt 2 of 5)".into(),
    )];
    expected.extend(anthropic_tool_call_events());
    assert_eq!(events, expected);
    let requests = ended_requests(&server, 2).await;
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body);
}

#[tokio::test]
async fn an_overloaded_error_event_after_text_is_final() {
    let body = anthropic_sse(&[
        MESSAGE_START,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        PING,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}"#,
        OVERLOADED_EVENT,
    ]);
    let server = TestServer::start(vec![
        Reply::sse(body).split(Split::Every(7)),
        fixture(ANTHROPIC, 0).reply(),
    ]);
    let provider = Anthropic::new(server.url(), "k").with_retry(fast_retry());
    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(
        events,
        vec![
            StreamEvent::Usage(Usage {
                input_tokens: Some(7),
                output_tokens: Some(1),
                cache_read_tokens: None,
                cache_write_tokens: None,
            }),
            part(0, EventPart::Message("Hel".into())),
            part(0, EventPart::Message("lo".into())),
        ]
    );
    assert_eq!(
        error,
        Some(ProviderError::Api {
            provider: "anthropic".into(),
            kind: "overloaded_error".into(),
            message: "Overloaded".into(),
        })
    );
    // The stream has ended: nothing more will be sent.
    assert_eq!(ended_requests(&server, 1).await.len(), 1);
}

#[tokio::test]
async fn rate_limit_error_events_share_the_attempt_budget_with_statuses() {
    let rate_limited = anthropic_sse(&[
        MESSAGE_START,
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
    ]);
    let server = TestServer::start(vec![
        Reply::status(529, "application/json", OVERLOADED_EVENT),
        Reply::sse(rate_limited),
        fixture(ANTHROPIC, 0).reply(),
    ]);
    let provider = Anthropic::new(server.url(), "k").with_retry(RetryPolicy {
        max_attempts: 2,
        ..fast_retry()
    });
    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(
        events,
        vec![StreamEvent::Notice(
            "overloaded (HTTP 529); retrying in 1ms (attempt 2 of 2)".into()
        )]
    );
    let error = error.unwrap();
    assert_eq!(
        error.to_string(),
        "anthropic: still rate limited (rate_limit_error) after 2 attempts; try again later"
    );
    assert_eq!(ended_requests(&server, 2).await.len(), 2);
}

/// Builds a provider for a server's URL.
type MakeProvider = Box<dyn Fn(String) -> Box<dyn Provider>>;

#[tokio::test]
async fn error_statuses_carry_the_providers_message() {
    let cases: Vec<(MakeProvider, Reply, ProviderError)> = vec![
        (
            Box::new(|url| Box::new(Anthropic::new(url, "k"))),
            Reply::status(
                500,
                "application/json",
                r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
            ),
            ProviderError::Http {
                provider: "anthropic".into(),
                status: 500,
                message: "Internal server error".into(),
            },
        ),
        (
            Box::new(|url| Box::new(OpenAiCompatible::new("openai", url, Some("k".into())))),
            Reply::status(
                401,
                "application/json",
                r#"{"error":{"message":"Incorrect API key provided: sk-...","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
            ),
            ProviderError::Http {
                provider: "openai".into(),
                status: 401,
                message: "Incorrect API key provided: sk-...".into(),
            },
        ),
        (
            Box::new(|url| Box::new(Ollama::new(url, None))),
            Reply::status(
                404,
                "application/json",
                r#"{"error":"model \"test-model\" not found, try pulling it first"}"#,
            ),
            ProviderError::Http {
                provider: "ollama".into(),
                status: 404,
                message: "model \"test-model\" not found, try pulling it first".into(),
            },
        ),
        (
            Box::new(|url| Box::new(Google::new(url, "k"))),
            // Recorded by the Vercel AI SDK (see its README).
            Reply::status(
                400,
                "application/json",
                std::fs::read_to_string(shared_fixture(
                    "vercel_ai/issue-8943-gemini-2.5-flash-error.json",
                ))
                .unwrap(),
            ),
            ProviderError::Http {
                provider: "google".into(),
                status: 400,
                message: "Penalty is not enabled for models/gemini-2.5-flash".into(),
            },
        ),
        (
            Box::new(|url| Box::new(OpenAiCompatible::new("llamacpp", url, None))),
            Reply::status(301, "text/plain", "moved")
                .header("location", "https://example.invalid/v1/chat/completions"),
            ProviderError::Http {
                provider: "llamacpp".into(),
                status: 301,
                message: "http://SERVER/chat/completions redirects to \
                          https://example.invalid/v1/chat/completions; \
                          set the provider's base URL to where it points"
                    .into(),
            },
        ),
        (
            Box::new(|url| Box::new(OpenAiCompatible::new("llamacpp", url, None))),
            Reply::status(502, "text/html", "<html><body>Bad Gateway</body></html>\n"),
            ProviderError::Http {
                provider: "llamacpp".into(),
                status: 502,
                message: "<html><body>Bad Gateway</body></html>".into(),
            },
        ),
    ];
    for (make, reply, expected) in cases {
        let server = TestServer::start(vec![reply]);
        let provider = make(server.url());
        let (events, error) = collect(provider.stream(request())).await;
        let expected = match expected {
            ProviderError::Http {
                provider,
                status,
                message,
            } => ProviderError::Http {
                provider,
                status,
                message: message.replace("http://SERVER", &server.url()),
            },
            other => other,
        };
        assert_eq!((events, error), (vec![], Some(expected)));
        assert_eq!(ended_requests(&server, 1).await.len(), 1, "no retry");
    }
}

#[tokio::test]
async fn a_dropped_connection_mid_stream_keeps_the_events_before_it() {
    let recorded = fixture(ANTHROPIC, 0);
    let body = std::str::from_utf8(&recorded.body).unwrap();
    // Cut inside the last argument delta's event.
    let cut = body
        .find("\"partial_json\":\"\\\": \\\"foo\\\"}\"")
        .unwrap();
    let server = TestServer::start(vec![
        recorded
            .reply()
            .split(Split::Every(16))
            .fault(Fault::DisconnectAfter(cut)),
    ]);
    let provider = Anthropic::new(server.url(), "k").with_retry(fast_retry());
    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(events, anthropic_tool_call_events()[..5]);
    // What hyper says about the truncated body varies with its version and
    // the platform; jp's part of the message does not.
    let Some(ProviderError::Disconnected { provider, message }) = error.clone() else {
        panic!("not a disconnection: {error:?}");
    };
    assert_eq!(provider, "anthropic");
    let cause = message
        .strip_prefix("error reading the response: ")
        .unwrap_or_else(|| panic!("unexpected message: {message:?}"));
    assert_ne!(cause.trim(), "", "no cause in {message:?}");
    assert_eq!(
        error.unwrap().to_string(),
        format!(
            "anthropic: the connection dropped mid-response: error reading the response: {cause}"
        )
    );
    // Never re-sent after the body started.
    assert_eq!(ended_requests(&server, 1).await.len(), 1);
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let recorded = fixture(OPENROUTER, 1);
    let server = TestServer::start(vec![
        recorded
            .reply()
            .split(Split::Every(64))
            .pace(Duration::from_millis(20)),
    ]);
    let provider = OpenAiCompatible::new("openrouter", format!("{}/api/v1", server.url()), None);
    let mut stream = provider.stream(request());
    let first = stream.next().await;
    assert_eq!(
        first,
        Some(Ok(part(0, EventPart::Message("Both tools have".into()))))
    );
    drop(stream);
    let requests = ended_requests(&server, 1).await;
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].client_disconnected,
        "the server saw no disconnect: {requests:?}"
    );
    assert!(
        requests[0].body_bytes_sent < recorded.body.len(),
        "the whole body was sent: {} bytes",
        requests[0].body_bytes_sent
    );
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error_naming_the_url() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let provider = Ollama::new(format!("http://127.0.0.1:{port}"), None);
    let (events, error) = collect(provider.stream(request())).await;
    assert_eq!(events, vec![]);
    // The OS's words for the refusal vary by platform (and language); jp's
    // part of the message does not.
    let error = error.unwrap();
    let url = format!("http://127.0.0.1:{port}/api/chat");
    let ProviderError::Connect { message, .. } = &error else {
        panic!("not a connect error: {error:?}");
    };
    let message = message.clone();
    assert_ne!(message.trim(), "", "no cause in {error:?}");
    assert_eq!(
        error,
        ProviderError::Connect {
            provider: "ollama".into(),
            url: url.clone(),
            message: message.clone(),
        }
    );
    assert_eq!(
        error.to_string(),
        format!("ollama: cannot reach {url}: {message}")
    );
}

/// `body` as the exact JSON text jp sends.
fn body_text(body: &impl serde::Serialize) -> String {
    serde_json::to_string(body).unwrap()
}
