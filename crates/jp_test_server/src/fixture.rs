//! Recorded provider exchanges in the httpmock-like YAML of `tests/data/providers/*.yml`
//! (in this crate).
//!
//! A fixture file holds one or more YAML documents separated by `---`, one per HTTP exchange, in
//! the order the conversation made them:
//!
//! ```yaml
//! when:
//!   path: /v1/messages
//!   method: POST
//!   query_param:            # optional
//!     - name: alt
//!       value: sse
//!   json_body_str: >-       # optional; the request body, as JSON text
//!     {"model": "claude-haiku-4-5"}
//! then:
//!   status: 200
//!   header:
//!     - name: content-type
//!       value: text/event-stream
//!   body: |+                # `|+` keeps the trailing blank line that ends the last SSE event
//!     event: message_stop
//!     data: {"type":"message_stop"}
//!
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::reply::{Reply, Split};

/// One recorded HTTP exchange: what the client sent and the exact bytes the provider answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Fixture {
    /// The request path, without the query string (`when.path`).
    pub path: String,
    /// The request method (`when.method`).
    pub method: String,
    /// The request body the client sent (`when.json_body_str`, parsed), if recorded.
    pub request_body: Option<serde_json::Value>,
    /// Response status code (`then.status`).
    pub status: u16,
    /// Response headers in file order (`then.header`).
    pub headers: Vec<(String, String)>,
    /// The exact response body bytes (`then.body`).
    pub body: Vec<u8>,
    /// Query parameters the request carried (`when.query_param`), in file order.
    pub query: Vec<(String, String)>,
}

impl Fixture {
    /// A reply with this exchange's status, headers and body, sent whole, that expects this
    /// exchange's path and query parameters (see [`Reply::expect_path`](field@Reply::expect_path)).
    pub fn reply(&self) -> Reply {
        let expect_path = if self.query.is_empty() {
            self.path.clone()
        } else {
            let query: Vec<String> = self
                .query
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            format!("{}?{}", self.path, query.join("&"))
        };
        Reply {
            status: self.status,
            headers: self.headers.clone(),
            body: self.body.clone(),
            split: Split::Whole,
            pace: std::time::Duration::ZERO,
            fault: None,
            expect_path: Some(expect_path),
        }
    }
}

/// Load the first exchange of a fixture file.
///
/// Most fixture files record a whole conversation, one exchange per YAML document; use
/// [`load_fixtures`] to get all of them. The error names the file and what is wrong with it.
pub fn load_fixture(path: impl AsRef<Path>) -> Result<Fixture, String> {
    let path = path.as_ref();
    load_fixtures(path)?
        .into_iter()
        .next()
        .ok_or_else(|| format!("{}: the file holds no exchanges", path.display()))
}

/// Load every exchange of a fixture file, in file order (at least one).
///
/// The error names the file, the exchange (counting from 1) and what is wrong with it.
pub fn load_fixtures(path: impl AsRef<Path>) -> Result<Vec<Fixture>, String> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read fixture: {e}", path.display()))?;
    parse_fixtures(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The path of a recorded provider exchange shared by the workspace's tests,
/// `crates/jp_test_server/tests/data/providers/<name>` (see the README there for where the
/// recordings come from). The file need not exist; `shared_fixture("")` is the directory.
pub fn shared_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
        .join("providers")
        .join(name)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Exchange {
    when: When,
    then: Then,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct When {
    path: String,
    method: String,
    #[serde(default)]
    query_param: Vec<NameValue>,
    json_body_str: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Then {
    status: u16,
    #[serde(default)]
    header: Vec<NameValue>,
    #[serde(default)]
    body: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NameValue {
    name: String,
    value: String,
}

/// Parse the text of a fixture file; errors name the exchange but not the file.
fn parse_fixtures(text: &str) -> Result<Vec<Fixture>, String> {
    let mut fixtures = Vec::new();
    for (index, document) in serde_norway::Deserializer::from_str(text).enumerate() {
        let number = index + 1;
        // An empty document (e.g. after a trailing `---`) is not an exchange.
        let raw: Option<Exchange> = Option::deserialize(document)
            .map_err(|e| format!("exchange #{number}: invalid fixture YAML: {e}"))?;
        let Some(raw) = raw else { continue };
        let request_body = match raw.when.json_body_str {
            Some(json) => Some(serde_json::from_str(&json).map_err(|e| {
                format!(
                    "exchange #{number}: when.json_body_str is not valid JSON: {e} of the JSON text"
                )
            })?),
            None => None,
        };
        fixtures.push(Fixture {
            path: raw.when.path,
            method: raw.when.method,
            request_body,
            status: raw.then.status,
            headers: pairs(raw.then.header),
            body: raw.then.body.into_bytes(),
            query: pairs(raw.when.query_param),
        });
    }
    if fixtures.is_empty() {
        return Err("the file holds no exchanges".to_owned());
    }
    Ok(fixtures)
}

fn pairs(list: Vec<NameValue>) -> Vec<(String, String)> {
    list.into_iter().map(|nv| (nv.name, nv.value)).collect()
}

#[cfg(test)]
mod tests {
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
                    body: b"event: ping\ndata: {\"type\": \"ping\"}\n\nevent: message_stop\ndata: {}\n\n"
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
        let err = load_fixture(&path).unwrap_err();
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
}
