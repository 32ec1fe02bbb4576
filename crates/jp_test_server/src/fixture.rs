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

/// What a fixture file without an exchange is told.
const NO_EXCHANGES: &str = "the file holds no exchanges";

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

/// Why a fixture file could not be loaded. Each message names the file.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// The file could not be read.
    #[error("{}: cannot read fixture: {source}", path.display())]
    Read {
        /// The fixture file.
        path: PathBuf,
        /// The error reading it.
        source: std::io::Error,
    },
    /// The file is not a fixture file, or holds no exchange.
    #[error("{}: {problem}", path.display())]
    Invalid {
        /// The fixture file.
        path: PathBuf,
        /// What is wrong, naming the exchange (counting from 1) where there is one.
        problem: String,
    },
}

/// Load the first exchange of a fixture file.
///
/// Most fixture files record a whole conversation, one exchange per YAML document; use
/// [`load_fixtures`] to get all of them.
///
/// # Errors
///
/// A [`FixtureError`] naming the file and what is wrong with it.
pub fn load_fixture(path: impl AsRef<Path>) -> Result<Fixture, FixtureError> {
    let path = path.as_ref();
    load_fixtures(path)?
        .into_iter()
        .next()
        .ok_or_else(|| FixtureError::Invalid {
            path: path.to_path_buf(),
            problem: NO_EXCHANGES.to_owned(),
        })
}

/// Load every exchange of a fixture file, in file order (at least one).
///
/// # Errors
///
/// A [`FixtureError`] naming the file, the exchange (counting from 1) and what is wrong with it.
pub fn load_fixtures(path: impl AsRef<Path>) -> Result<Vec<Fixture>, FixtureError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| FixtureError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_fixtures(&text).map_err(|problem| FixtureError::Invalid {
        path: path.to_path_buf(),
        problem,
    })
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
        return Err(NO_EXCHANGES.to_owned());
    }
    Ok(fixtures)
}

fn pairs(list: Vec<NameValue>) -> Vec<(String, String)> {
    list.into_iter().map(|nv| (nv.name, nv.value)).collect()
}

#[cfg(test)]
#[path = "fixture_tests.rs"]
mod tests;
