//! The Streamable HTTP transport to a server with a `url`: rmcp's client
//! on a reqwest client of jp's own (rustls with ring, no redirects), with
//! the server's headers, and the same bounds on what a server may send as
//! over stdio.
//!
//! What a server says is bounded: one JSON response or one SSE event of at
//! most [`MAX_LINE_BYTES`] (rmcp refuses a larger one before parsing it), an
//! error body read only to its first 64 KiB, and a stream that drops is
//! resumed once at most (when the server gave its events ids), then the
//! call fails. A call's own timeout bounds the rest; plain `http://` (on
//! this machine only, see `check_url`) never goes through a proxy.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use jp_config::mcp::{McpServerConfig, check_url};
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};

use super::error::McpError;
use super::lines::MAX_LINE_BYTES;

/// How often a dropped event stream is resumed before the call fails:
/// once, for a connection that broke by chance; a server that went away
/// fails the call at once.
const RESUME_TIMES: usize = 1;

/// The longest wait between two attempts to resume a stream.
const RESUME_MAX_DELAY: Duration = Duration::from_secs(1);

/// The transport to server `name` at `url`, not yet connected: nothing is
/// sent until the handshake.
///
/// # Errors
///
/// A setting that cannot be used: a `url` jp does not send a session over
/// (config validation refuses it first), a header's variable that is not
/// set or holds what a header cannot carry.
pub(super) fn transport(
    name: &str,
    config: &McpServerConfig,
    url: &str,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, McpError> {
    let setting = |key: String, reason: String| McpError::Setting {
        server: name.to_owned(),
        key,
        reason,
    };
    check_url(url).map_err(|reason| setting("url".to_owned(), reason))?;
    let mut headers = HashMap::new();
    for (header, value) in &config.headers {
        let key = format!("headers.{header}");
        let (header, value) =
            header_pair(header, value.clone()).map_err(|reason| setting(key, reason))?;
        headers.insert(header, value);
    }
    for (header, variable) in &config.headers_env {
        let key = format!("headers_env.{header}");
        let value = variable_value(variable).map_err(|reason| setting(key.clone(), reason))?;
        let (header, value) = header_pair(header, value).map_err(|reason| setting(key, reason))?;
        headers.insert(header, value);
    }
    let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(headers)
        .max_sse_event_size(MAX_LINE_BYTES)
        .max_json_response_size(MAX_LINE_BYTES);
    if let Some(variable) = &config.bearer_token_env {
        let token = variable_value(variable)
            .map_err(|reason| setting("bearer_token_env".to_owned(), reason))?;
        if HeaderValue::from_str(&format!("Bearer {token}")).is_err() {
            return Err(setting(
                "bearer_token_env".to_owned(),
                format!(
                    "the environment variable `{variable}` holds characters a header cannot carry"
                ),
            ));
        }
        transport_config = transport_config.auth_header(token);
    }
    let mut resume = ExponentialBackoff::default();
    resume.max_times = Some(RESUME_TIMES);
    resume.max_delay = Some(RESUME_MAX_DELAY);
    transport_config.retry_config = Arc::new(resume);
    // `check_url` let plain http through only for this machine; a proxy
    // from the environment would carry it over the network in clear.
    let direct = reqwest::Url::parse(url).is_ok_and(|u| u.scheme() == "http");
    let client = client(config.startup_timeout(), direct).map_err(|e| McpError::Protocol {
        server: name.to_owned(),
        reason: format!("cannot make an HTTP client: {e}"),
        stderr: String::new(),
    })?;
    Ok(StreamableHttpClientTransport::with_client(
        client,
        transport_config,
    ))
}

/// The HTTP client of one server: rustls with ring (installed for the
/// process, as for the providers), no redirects (a redirect would replay
/// the session and the headers to where the server points), no pooled
/// idle connections (rmcp's advice: a half-read response would stall the
/// next request), and, when `direct`, no proxy.
fn client(connect_timeout: Duration, direct: bool) -> Result<reqwest::Client, reqwest::Error> {
    // `Err` means a provider is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let builder = reqwest::Client::builder()
        .user_agent(concat!("jp/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(0);
    if direct {
        builder.no_proxy().build()
    } else {
        builder.build()
    }
}

/// A header as reqwest takes it, its value marked sensitive (never shown
/// by `Debug`); the error never quotes the value.
fn header_pair(name: &str, value: String) -> Result<(HeaderName, HeaderValue), String> {
    let header = HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| format!("`{name}` is no HTTP header name"))?;
    let mut value = HeaderValue::try_from(value)
        .map_err(|_| format!("the value of `{name}` has characters a header cannot carry"))?;
    value.set_sensitive(true);
    Ok((header, value))
}

/// The value of environment variable `variable`, which must be set.
fn variable_value(variable: &str) -> Result<String, String> {
    match std::env::var(variable) {
        Ok(value) if !value.is_empty() => Ok(value),
        Ok(_) => Err(format!("the environment variable `{variable}` is empty")),
        Err(std::env::VarError::NotPresent) => {
            Err(format!("the environment variable `{variable}` is not set"))
        }
        Err(std::env::VarError::NotUnicode(_)) => Err(format!(
            "the environment variable `{variable}` is not valid UTF-8"
        )),
    }
}

/// A transport error as one line: each cause once, outermost first, and
/// no URL reqwest adds (the server's `url` may carry a secret in its
/// query; the message names the server).
pub(super) fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(error) = next {
        // rmcp's wrapper of reqwest's error says only "Client error" and
        // does not give it as its source: go on with reqwest's.
        if let Some(StreamableHttpError::Client(inner)) =
            error.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            next = Some(inner);
            continue;
        }
        let mut text = error.to_string();
        // The URL exactly as reqwest writes it, whatever it holds; the
        // pattern below for what else carries it.
        if let Some(url) = error
            .downcast_ref::<reqwest::Error>()
            .and_then(reqwest::Error::url)
        {
            text = text.replace(&format!(" for url ({url})"), "");
        }
        let text = without_url(&text);
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = error.source();
    }
    parts.join(": ")
}

/// `text` without reqwest's ` for url (...)`.
fn without_url(text: &str) -> String {
    match text.find(" for url (") {
        Some(at) => {
            let rest = &text[at..];
            let end = rest.find(')').map_or(text.len(), |e| at + e + 1);
            format!("{}{}", &text[..at], &text[end..])
        }
        None => text.to_owned(),
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
