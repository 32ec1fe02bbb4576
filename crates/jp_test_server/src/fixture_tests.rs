#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

const TWO_EXCHANGES: &str = "\
when:
  path: /v1/messages
  method: POST
  json_body_str: >-
    {
      \"model\": \"m\",
      \"stream\": true
    }
then:
  status: 200
  header:
    - name: content-type
      value: text/event-stream
  body: |+
    event: ping
    data: {\"type\": \"ping\"}

    event: message_stop
    data: {}

---
when:
  path: /v1beta/models/x:streamGenerateContent
  method: POST
  query_param:
    - name: alt
      value: sse
then:
  status: 529
  body: |
    {\"a\":1}
    {\"b\":2}


";

#[test]
fn parses_every_document_keeping_body_bytes_exactly() {
    let fixtures = parse_fixtures(TWO_EXCHANGES).unwrap();
    assert_eq!(
        fixtures,
        vec![
            Fixture {
                path: "/v1/messages".to_owned(),
                method: "POST".to_owned(),
                request_body: Some(serde_json::json!({"model": "m", "stream": true})),
                status: 200,
                headers: vec![("content-type".to_owned(), "text/event-stream".to_owned())],
                body:
                    b"event: ping\ndata: {\"type\": \"ping\"}\n\nevent: message_stop\ndata: {}\n\n"
                        .to_vec(),
                query: vec![],
            },
            Fixture {
                path: "/v1beta/models/x:streamGenerateContent".to_owned(),
                method: "POST".to_owned(),
                request_body: None,
                status: 529,
                headers: vec![],
                // `|` (clip) keeps exactly one final newline.
                body: b"{\"a\":1}\n{\"b\":2}\n".to_vec(),
                query: vec![("alt".to_owned(), "sse".to_owned())],
            },
        ]
    );
}

#[test]
fn reply_carries_status_headers_body_and_expected_path_with_query() {
    let fixtures = parse_fixtures(TWO_EXCHANGES).unwrap();
    let reply = fixtures[0].reply();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.headers, fixtures[0].headers);
    assert_eq!(reply.body, fixtures[0].body);
    assert_eq!(reply.split, Split::Whole);
    assert_eq!(reply.fault, None);
    assert_eq!(reply.expect_path.as_deref(), Some("/v1/messages"));
    assert_eq!(
        fixtures[1].reply().expect_path.as_deref(),
        Some("/v1beta/models/x:streamGenerateContent?alt=sse")
    );
}

#[test]
fn trailing_empty_document_is_skipped() {
    let text = format!("{TWO_EXCHANGES}---\n");
    assert_eq!(parse_fixtures(&text).unwrap().len(), 2);
}

#[test]
fn errors_name_the_exchange_and_the_problem() {
    let cases = [
        (
            TWO_EXCHANGES.replace("\"stream\": true", "\"stream\": tru"),
            "exchange #1: when.json_body_str is not valid JSON: expected ident at line 4 \
             column 0 of the JSON text",
        ),
        (
            TWO_EXCHANGES.replace("  query_param:", "  body_contains: x\n  query_param:"),
            "exchange #2: invalid fixture YAML: when: unknown field `body_contains`, expected \
             one of `path`, `method`, `query_param`, `json_body_str` at line 25 column 3",
        ),
        (
            TWO_EXCHANGES.replace("  status: 529\n", ""),
            "exchange #2: invalid fixture YAML: then: missing field `status` at line 29 column 3",
        ),
        (
            "when: [".to_owned(),
            "exchange #1: invalid fixture YAML: when: invalid type: sequence, expected struct \
             When at line 1 column 7",
        ),
        (String::new(), "the file holds no exchanges"),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_fixtures(&text).unwrap_err(), expected);
    }
}

#[test]
fn load_errors_name_the_file() {
    let path = shared_fixture("does_not_exist.yml");
    let err = load_fixture(&path).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("{}: cannot read fixture: ", path.display())),
        "{err}"
    );
}

#[test]
fn shared_fixture_points_inside_the_repository() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .unwrap();
    assert!(workspace.join("Cargo.lock").is_file());
    assert_eq!(
        shared_fixture("x.yml"),
        workspace.join("crates/jp_test_server/tests/data/providers/x.yml")
    );
    assert!(shared_fixture("LICENSE-Apache-2.0").is_file());
}
