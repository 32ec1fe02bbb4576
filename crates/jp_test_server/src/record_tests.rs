use super::*;

fn request(body: &[u8]) -> RecordedRequest {
    RecordedRequest {
        method: "POST".to_owned(),
        path: "/".to_owned(),
        headers: vec![
            ("x-api-key".to_owned(), "k1".to_owned()),
            ("x-api-key".to_owned(), "k2".to_owned()),
        ],
        body: body.to_vec(),
        received_at: Instant::now(),
        body_bytes_sent: 0,
        client_disconnected: false,
        ended_at: None,
        path_mismatch: None,
    }
}

#[test]
fn json_parses_the_body_or_gives_null() {
    assert_eq!(
        request(br#"{"model":"m","n":[1,2]}"#).json(),
        serde_json::json!({"model": "m", "n": [1, 2]})
    );
    assert_eq!(request(b"data: {}").json(), serde_json::Value::Null);
    assert_eq!(request(b"").json(), serde_json::Value::Null);
}

#[test]
fn header_finds_the_first_value_ignoring_case() {
    let r = request(b"");
    assert_eq!(r.header("X-API-Key"), Some("k1"));
    assert_eq!(r.header("authorization"), None);
}
