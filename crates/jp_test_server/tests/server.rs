//! The server against a raw TCP client: framing, splitting, pacing, faults, numbering and
//! recording, checked byte for byte.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write as _;
use std::time::{Duration, Instant};

use common::{
    PATIENCE, Response, connect, parse, post, read_timed, read_to_close, read_until, send,
};
use jp_test_server::{Fault, Reply, Split, TestServer};

/// A body that is hard to cut well: multi-byte UTF-8 (2, 3 and 4 bytes) and JSON escapes.
const AWKWARD: &str = "data: {\"text\":\"caf\u{e9} \u{2192} \u{1F60A} \\\"q\\\" \\u00e9\\n\"}\n\n";

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

fn sse_headers() -> Vec<(String, String)> {
    pairs(&[
        ("content-type", "text/event-stream"),
        ("transfer-encoding", "chunked"),
        ("connection", "close"),
    ])
}

#[test]
fn whole_reply_arrives_as_one_chunk_with_exact_head() {
    let server = TestServer::start(vec![Reply::sse(AWKWARD).header("x-request-id", "req_1")]);
    let response = post(&server, "/v1/messages", b"{}");
    assert_eq!(
        response,
        Response {
            status_line: "HTTP/1.1 200 OK".to_owned(),
            headers: pairs(&[
                ("content-type", "text/event-stream"),
                ("x-request-id", "req_1"),
                ("transfer-encoding", "chunked"),
                ("connection", "close"),
            ]),
            chunks: vec![AWKWARD.as_bytes().to_vec()],
            terminated: true,
            leftover: vec![],
        }
    );
    let requests = server.wait_for(1, PATIENCE);
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body_bytes_sent, AWKWARD.len());
    assert!(!requests[0].client_disconnected);
    assert!(requests[0].ended_at.is_some());
}

#[test]
fn every_1_sends_one_byte_per_chunk_even_inside_characters() {
    let server = TestServer::start(vec![Reply::sse(AWKWARD).split(Split::Every(1))]);
    let response = post(&server, "/", b"");
    assert_eq!(response.chunk_lengths(), vec![1; AWKWARD.len()]);
    assert_eq!(response.body_text(), AWKWARD);
    assert!(response.terminated);
    assert_eq!(response.leftover, Vec::<u8>::new());
    assert_eq!(response.headers, sse_headers());
}

#[test]
fn offsets_cut_exactly_at_the_given_bytes() {
    // 19 is inside the two-byte "é", 27 inside the four-byte emoji, 39 inside `\u00e9`.
    let server = TestServer::start(vec![
        Reply::ndjson(AWKWARD).split(Split::Offsets(vec![27, 19, 39, 19])),
    ]);
    let response = post(&server, "/", b"");
    let bytes = AWKWARD.as_bytes();
    assert_eq!(&bytes[18..20], "\u{e9}".as_bytes());
    assert_eq!(&bytes[25..29], "\u{1F60A}".as_bytes());
    assert_eq!(&bytes[36..42], b"\\u00e9");
    assert_eq!(
        response.chunks,
        vec![
            bytes[..19].to_vec(),
            bytes[19..27].to_vec(),
            bytes[27..39].to_vec(),
            bytes[39..].to_vec(),
        ]
    );
    assert!(std::str::from_utf8(&response.chunks[0]).is_err());
    assert_eq!(
        response.header("content-type"),
        Some("application/x-ndjson")
    );
    assert!(response.terminated);
}

#[test]
fn random_split_is_deterministic_bounded_and_lossless() {
    let body = AWKWARD.repeat(20);
    let fetch = |seed: u64| {
        let server = TestServer::start(vec![
            Reply::sse(body.clone()).split(Split::Random { seed, max: 9 }),
        ]);
        post(&server, "/", b"")
    };
    let first = fetch(7);
    assert_eq!(first.body_text(), body);
    assert!(first.terminated);
    assert!(
        first
            .chunk_lengths()
            .iter()
            .all(|len| (1..=9).contains(len)),
        "{:?}",
        first.chunk_lengths()
    );
    assert_eq!(
        first.chunk_lengths(),
        Split::Random { seed: 7, max: 9 }
            .pieces(body.len())
            .iter()
            .map(std::ops::Range::len)
            .collect::<Vec<_>>()
    );
    assert_eq!(fetch(7).chunks, first.chunks);
    let other = fetch(8);
    assert_eq!(other.body_text(), body);
    assert_ne!(other.chunk_lengths(), first.chunk_lengths());
}

#[test]
fn pace_spaces_pieces_while_the_client_already_reads() {
    let pace = Duration::from_millis(60);
    let server = TestServer::start(vec![
        Reply::sse("aaaabbbbccccdddd")
            .split(Split::Every(4))
            .pace(pace),
    ]);
    let mut stream = connect(&server);
    send(&mut stream, "POST", "/", &[], b"");
    let (response, first_chunk_at, closed_at) = read_timed(&mut stream);
    assert_eq!(
        response.chunks,
        vec![
            b"aaaa".to_vec(),
            b"bbbb".to_vec(),
            b"cccc".to_vec(),
            b"dddd".to_vec()
        ]
    );
    assert!(response.terminated);
    // Three pauses separate four pieces, and the first piece was readable before them.
    assert!(
        closed_at - first_chunk_at >= 3 * pace,
        "{:?}",
        closed_at - first_chunk_at
    );
    let request = &server.wait_for(1, PATIENCE)[0];
    let ended_at = request.ended_at.unwrap();
    assert!(ended_at - request.received_at >= 3 * pace);
    assert_eq!(request.body_bytes_sent, 16);
}

#[test]
fn disconnect_after_sends_exactly_n_bytes_then_eof_without_final_chunk() {
    let server = TestServer::start(vec![
        Reply::sse("abcdefghijklmnop")
            .split(Split::Every(4))
            .fault(Fault::DisconnectAfter(10)),
    ]);
    let response = post(&server, "/", b"");
    assert_eq!(
        response.chunks,
        vec![b"abcd".to_vec(), b"efgh".to_vec(), b"ij".to_vec()]
    );
    assert!(!response.terminated);
    assert_eq!(response.leftover, Vec::<u8>::new());
    let request = &server.wait_for(1, PATIENCE)[0];
    assert_eq!(request.body_bytes_sent, 10);
    assert!(!request.client_disconnected);
    assert!(request.ended_at.is_some());
}

#[test]
fn disconnect_after_zero_or_past_the_end() {
    let server = TestServer::start(vec![
        Reply::sse("abc").fault(Fault::DisconnectAfter(0)),
        Reply::sse("abc").fault(Fault::DisconnectAfter(99)),
    ]);
    let nothing = post(&server, "/", b"");
    assert_eq!(nothing.status_line, "HTTP/1.1 200 OK");
    assert_eq!(nothing.chunks, Vec::<Vec<u8>>::new());
    assert!(!nothing.terminated);
    let everything = post(&server, "/", b"");
    assert_eq!(everything.chunks, vec![b"abc".to_vec()]);
    assert!(!everything.terminated);
    let sent: Vec<usize> = server
        .wait_for(2, PATIENCE)
        .iter()
        .map(|r| r.body_bytes_sent)
        .collect();
    assert_eq!(sent, vec![0, 3]);
}

#[test]
fn stall_after_holds_the_connection_until_the_client_leaves() {
    let server = TestServer::start(vec![
        Reply::sse("0123456789")
            .split(Split::Every(3))
            .fault(Fault::StallAfter(5)),
    ]);
    let mut stream = connect(&server);
    send(&mut stream, "POST", "/v1/messages", &[], b"{}");
    let response = read_until(&mut stream, |r| r.body().len() >= 5);
    assert_eq!(response.chunks, vec![b"012".to_vec(), b"34".to_vec()]);
    assert!(!response.terminated);

    // Still stalled: nothing has ended.
    let requests = server.wait_for(1, Duration::from_millis(150));
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].ended_at, None);
    assert_eq!(requests[0].body_bytes_sent, 5);
    assert!(!requests[0].client_disconnected);

    let left_at = Instant::now();
    drop(stream);
    let request = &server.wait_for(1, PATIENCE)[0];
    assert!(request.client_disconnected);
    assert!(request.ended_at.unwrap() >= left_at);
    assert_eq!(request.body_bytes_sent, 5);
}

#[test]
fn client_leaving_during_a_pause_is_noticed_without_waiting_for_the_pause() {
    let pace = Duration::from_secs(3);
    let server = TestServer::start(vec![
        Reply::sse("aaaaabbbbb").split(Split::Every(5)).pace(pace),
    ]);
    let mut stream = connect(&server);
    send(&mut stream, "POST", "/", &[], b"");
    let response = read_until(&mut stream, |r| !r.chunks.is_empty());
    assert_eq!(response.chunks, vec![b"aaaaa".to_vec()]);
    drop(stream);
    let request = &server.wait_for(1, PATIENCE)[0];
    assert!(request.client_disconnected);
    assert_eq!(request.body_bytes_sent, 5);
    let ended_at = request.ended_at.unwrap();
    assert!(
        ended_at - request.received_at < pace,
        "{:?}",
        ended_at - request.received_at
    );
}

#[test]
fn request_beyond_the_script_gets_500_and_is_recorded() {
    let server = TestServer::start(vec![Reply::sse("first")]);
    assert_eq!(post(&server, "/a", b"").body_text(), "first");
    let response = post(&server, "/b", b"{\"n\":2}");
    assert_eq!(response.status_line, "HTTP/1.1 500 Internal Server Error");
    assert_eq!(
        response.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(
        response.body_text(),
        "test server: no reply scripted for request #1"
    );
    assert!(response.terminated);
    let requests = server.wait_for(2, PATIENCE);
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, vec!["/a", "/b"]);
    assert_eq!(requests[1].json(), serde_json::json!({"n": 2}));
    assert_eq!(requests[1].body_bytes_sent, 45);
}

#[test]
fn expect_path_mismatch_gets_404_and_is_recorded() {
    let server = TestServer::start(vec![
        Reply::sse("ok").expect_path("/v1/messages"),
        Reply::sse("ok").expect_path("/v1/messages"),
        Reply::sse("gemini").expect_path("/v1beta/models/m:streamGenerateContent?alt=sse"),
        Reply::sse("gemini").expect_path("/v1beta/models/m:streamGenerateContent?alt=sse"),
    ]);
    let wrong = post(&server, "/v1/chat/completions", b"");
    assert_eq!(wrong.status_line, "HTTP/1.1 404 Not Found");
    assert_eq!(
        wrong.body_text(),
        "test server: request #0: expected path \"/v1/messages\", got \"/v1/chat/completions\""
    );
    assert_eq!(
        post(&server, "/v1/messages?beta=true", b"").body_text(),
        "ok"
    );
    assert_eq!(
        post(
            &server,
            "/v1beta/models/m:streamGenerateContent?key=k&alt=sse",
            b""
        )
        .body_text(),
        "gemini"
    );
    let missing_query = post(&server, "/v1beta/models/m:streamGenerateContent", b"");
    assert_eq!(missing_query.status_line, "HTTP/1.1 404 Not Found");

    let mismatches: Vec<Option<String>> = server
        .wait_for(4, PATIENCE)
        .into_iter()
        .map(|r| r.path_mismatch)
        .collect();
    assert_eq!(
        mismatches,
        vec![
            Some("expected path \"/v1/messages\", got \"/v1/chat/completions\"".to_owned()),
            None,
            None,
            Some(
                "expected path \"/v1beta/models/m:streamGenerateContent?alt=sse\", \
                 got \"/v1beta/models/m:streamGenerateContent\""
                    .to_owned()
            ),
        ]
    );
}

#[test]
fn nth_request_gets_nth_reply_across_connections() {
    let server = TestServer::start(vec![
        Reply::sse("zero"),
        Reply::status(429, "application/json", "{\"error\":\"slow down\"}"),
        Reply::ndjson("two\n"),
    ]);
    let responses: Vec<(String, String)> = (0..3)
        .map(|_| {
            let r = post(&server, "/", b"");
            (r.status_line.clone(), r.body_text())
        })
        .collect();
    assert_eq!(
        responses,
        vec![
            ("HTTP/1.1 200 OK".to_owned(), "zero".to_owned()),
            (
                "HTTP/1.1 429 Too Many Requests".to_owned(),
                "{\"error\":\"slow down\"}".to_owned()
            ),
            ("HTTP/1.1 200 OK".to_owned(), "two\n".to_owned()),
        ]
    );
    assert_eq!(server.wait_for(3, PATIENCE).len(), 3);
}

#[test]
fn numbers_follow_request_arrival_not_connection_order() {
    let server = TestServer::start(vec![Reply::sse("first"), Reply::sse("second")]);
    let mut early = connect(&server);
    let mut late = connect(&server);
    send(&mut late, "POST", "/late", &[], b"");
    let late_response = parse(&read_to_close(&mut late)).unwrap();
    send(&mut early, "POST", "/early", &[], b"");
    let early_response = parse(&read_to_close(&mut early)).unwrap();
    assert_eq!(late_response.body_text(), "first");
    assert_eq!(early_response.body_text(), "second");
    let paths: Vec<String> = server
        .wait_for(2, PATIENCE)
        .into_iter()
        .map(|r| r.path)
        .collect();
    assert_eq!(paths, vec!["/late", "/early"]);
}

#[test]
fn requests_are_recorded_with_lowercase_headers_and_decoded_bodies() {
    let server = TestServer::start(vec![Reply::sse("a"), Reply::sse("b")]);
    let mut stream = connect(&server);
    send(
        &mut stream,
        "POST",
        "/v1/messages?beta=true",
        &[
            ("X-Api-Key", "sk-test"),
            ("Anthropic-Version", " 2023-06-01 "),
        ],
        b"{\"model\":\"claude\"}",
    );
    assert_eq!(parse(&read_to_close(&mut stream)).unwrap().body_text(), "a");

    let mut stream = connect(&server);
    stream
        .write_all(
            b"PUT /chunked HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
              5\r\n{\"a\":\r\n3;x=y\r\n[1]\r\n1\r\n}\r\n0\r\n\r\n",
        )
        .unwrap();
    assert_eq!(parse(&read_to_close(&mut stream)).unwrap().body_text(), "b");

    let requests = server.wait_for(2, PATIENCE);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].path, "/v1/messages?beta=true");
    assert_eq!(
        requests[0].headers,
        pairs(&[
            ("host", "127.0.0.1"),
            ("x-api-key", "sk-test"),
            ("anthropic-version", "2023-06-01"),
            ("content-length", "18"),
        ])
    );
    assert_eq!(requests[0].header("X-API-KEY"), Some("sk-test"));
    assert_eq!(requests[0].json(), serde_json::json!({"model": "claude"}));
    assert_eq!(requests[1].method, "PUT");
    assert_eq!(requests[1].body, b"{\"a\":[1]}".to_vec());
    assert_eq!(requests[1].json(), serde_json::json!({"a": [1]}));
    assert!(requests[1].received_at >= requests[0].received_at);
}

#[test]
fn expect_100_continue_is_answered_before_the_body() {
    let server = TestServer::start(vec![Reply::sse("done")]);
    let mut stream = connect(&server);
    stream
        .write_all(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        .unwrap();
    let mut interim = [0u8; 25];
    std::io::Read::read_exact(&mut stream, &mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(b"{}").unwrap();
    assert_eq!(
        parse(&read_to_close(&mut stream)).unwrap().body_text(),
        "done"
    );
    assert_eq!(server.wait_for(1, PATIENCE)[0].body, b"{}".to_vec());
}

#[test]
fn malformed_request_gets_400_and_an_error_but_no_number() {
    let server = TestServer::start(vec![Reply::sse("for the good one")]);
    let mut stream = connect(&server);
    stream.write_all(b"NONSENSE\r\n\r\n").unwrap();
    let raw = read_to_close(&mut stream);
    let body = "test server: malformed request line \"NONSENSE\"";
    assert_eq!(
        String::from_utf8(raw).unwrap(),
        format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    );
    assert_eq!(post(&server, "/", b"").body_text(), "for the good one");
    assert_eq!(server.wait_for(1, PATIENCE).len(), 1);
    let errors = server.errors();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].ends_with(": malformed request line \"NONSENSE\" (answered 400)"),
        "{errors:?}"
    );
}

#[test]
fn connection_closed_without_a_request_is_ignored() {
    let server = TestServer::start(vec![Reply::sse("x")]);
    drop(connect(&server));
    assert_eq!(post(&server, "/", b"").body_text(), "x");
    assert_eq!(server.wait_for(1, PATIENCE).len(), 1);
    assert_eq!(server.errors(), Vec::<String>::new());
}

#[test]
fn wait_for_returns_the_snapshot_when_the_timeout_passes() {
    let server = TestServer::start(vec![]);
    let started = Instant::now();
    assert_eq!(server.wait_for(1, Duration::from_millis(50)), vec![]);
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert!(server.url().starts_with("http://127.0.0.1:"));
    assert_eq!(
        server.url(),
        format!("http://127.0.0.1:{}", server.addr().port())
    );
}

#[test]
fn drop_closes_stalled_connections_and_stops_listening() {
    let server = TestServer::start(vec![Reply::sse("abc").fault(Fault::StallAfter(1))]);
    let addr = server.addr();
    let mut stream = connect(&server);
    send(&mut stream, "POST", "/", &[], b"");
    let response = read_until(&mut stream, |r| !r.chunks.is_empty());
    assert_eq!(response.chunks, vec![b"a".to_vec()]);
    drop(server);
    // The stalled connection ends (without the rest of the body) instead of hanging.
    assert_eq!(read_to_close(&mut stream), Vec::<u8>::new());
    assert_eq!(
        std::net::TcpStream::connect(addr)
            .map_err(|e| e.kind())
            .err(),
        Some(std::io::ErrorKind::ConnectionRefused)
    );
}

#[tokio::test]
async fn works_from_inside_a_tokio_runtime() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let server = TestServer::start(vec![Reply::sse("async").split(Split::Every(2))]);
    let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    stream
        .write_all(b"GET /x HTTP/1.1\r\nhost: h\r\n\r\n")
        .await
        .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let response = parse(&raw).unwrap();
    assert_eq!(
        response.chunks,
        vec![b"as".to_vec(), b"yn".to_vec(), b"c".to_vec()]
    );
    assert!(response.terminated);
    assert_eq!(server.requests()[0].method, "GET");
    drop(server);
}
