//! The HTTP provider, written once for every API: [`HttpProvider`] holds
//! the base URL and the retry policy, and streams over the API's [`Api`]
//! (its endpoint, headers, body and decoder).
//!
//! The streaming POST every HTTP provider shares: send the request, retry
//! rate-limit and overload answers, turn other error statuses into
//! [`ProviderError::Http`], and pass the body through the provider's
//! [`WireDecoder`].
//!
//! The returned [`EventStream`] owns the HTTP response, so dropping the
//! stream closes the connection, which is how jp stops a generation (and
//! its billing) early. Nothing is sent before the stream is first polled,
//! and a request is never sent again once content has been received: only
//! answers that carry no response are retried. Those are the error
//! statuses 429, 503 and 529, an `overloaded_error` error body, and a
//! success whose stream reports `overloaded_error` or `rate_limit_error`
//! before any content (Anthropic answers 200 and then sends such an
//! `error` event when it is busy). To tell that last case apart, the events
//! of a response that precede its first content ([`Holdback`]) are held
//! back, so a retried response leaves nothing behind.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use super::{ChatRequest, EventStream, Provider, StreamEvent, WireDecoder};
use crate::error::ProviderError;

/// A provider that streams over HTTP in the wire format of its [`Api`]:
/// [`Anthropic`](super::anthropic::Anthropic),
/// [`OpenAiResponses`](super::openai_responses::OpenAiResponses),
/// [`OpenAiCompatible`](super::openai::OpenAiCompatible) and
/// [`Ollama`](super::ollama::Ollama) are this provider over their APIs.
#[derive(Clone)]
pub struct HttpProvider<A> {
    api: A,
    base_url: String,
    retry: RetryPolicy,
    /// How to start the provider's server when nothing listens at
    /// `base_url` (a provider on the user's machine).
    start_hint: Option<&'static str>,
}

impl<A> HttpProvider<A> {
    /// `api` at `base_url` (trailing `/`s are ignored), retrying as
    /// [`RetryPolicy::default`] says.
    pub(crate) fn with_api(base_url: String, api: A) -> Self {
        Self {
            api,
            base_url: trim_base_url(base_url),
            retry: RetryPolicy::default(),
            start_hint: None,
        }
    }

    /// The same provider, saying `hint` (how to start its server) when
    /// nothing listens at its base URL.
    #[must_use]
    pub fn with_start_hint(mut self, hint: Option<&'static str>) -> Self {
        self.start_hint = hint;
        self
    }

    /// The same provider, retrying rate-limit and overload answers as
    /// `retry` says.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }
}

/// Shows the provider as its API's type, with the name when the provider
/// is named by its configuration, the base URL, the API key (redacted)
/// and the retry policy.
impl<A: Api> std::fmt::Debug for HttpProvider<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct(A::TYPE_NAME);
        if let Some(name) = self.api.configured_name() {
            out.field("name", &name);
        }
        out.field("base_url", &self.base_url)
            .field("api_key", self.api.api_key())
            .field("retry", &self.retry)
            .finish()
    }
}

/// What one HTTP API asks of a request and makes of its answer.
pub(crate) trait Api: Send + Sync + 'static {
    /// The provider's type, as `Debug` shows it (`Anthropic`).
    const TYPE_NAME: &'static str;

    /// The streaming endpoint, after the base URL (`/v1/messages`).
    const PATH: &'static str;

    /// The endpoint for `request`, after the base URL: [`Self::PATH`],
    /// unless the API names the model in the path (Gemini).
    fn path(&self, _request: &ChatRequest) -> String {
        Self::PATH.to_owned()
    }

    /// The provider's name if the configuration gives it (several
    /// providers speak this API), for `Debug`.
    fn configured_name(&self) -> Option<&str> {
        None
    }

    /// The API key, for `Debug` (a [`Secret`] shows redacted).
    fn api_key(&self) -> &dyn std::fmt::Debug;

    /// The provider's name, in model ids and messages.
    fn name(&self) -> &str;

    /// The headers besides `content-type: application/json`.
    fn headers(&self) -> Vec<Header>;

    /// The JSON body of the request, borrowing it.
    fn body<'a>(&self, request: &'a ChatRequest) -> impl Serialize + use<'a, Self>;

    /// Makes a fresh decoder for each response to `request` (a retry
    /// starts over).
    fn decoders(
        &self,
        request: &ChatRequest,
    ) -> impl Fn() -> Box<dyn WireDecoder> + Send + use<Self>;
}

impl<A: Api> Provider for HttpProvider<A> {
    fn name(&self) -> &str {
        self.api.name()
    }

    fn stream(&self, request: ChatRequest) -> EventStream {
        let provider = self.api.name();
        let post = Post {
            provider: provider.to_owned(),
            url: format!("{}{}", self.base_url, self.api.path(&request)),
            headers: self.api.headers(),
            body: json_body(provider, &self.api.body(&request)),
            retry: self.retry,
            start_hint: self.start_hint,
        };
        post_stream(post, self.api.decoders(&request))
    }
}

/// How a provider retries rate-limit (HTTP 429, a `rate_limit_error` event
/// before any content) and overload (HTTP 503, HTTP 529, an
/// `overloaded_error` body or event) answers. All of them count against
/// the same `max_attempts`.
///
/// The wait before the second request is `base_delay`, and it doubles for
/// each request after that, up to `max_delay`. Up to 20% is then added at
/// random ("jitter"), so that clients turned away at the same moment do not
/// all come back at the same moment; the result is rounded down to what the
/// notice shows (whole milliseconds under a second, tenths of a second
/// above), but never below the computed wait. Waits under 5 ms are
/// therefore never lengthened, which keeps tests that use tiny delays exact.
///
/// A `retry-after` header (in seconds) replaces the computed wait, without
/// jitter (the server chose it), capped at 60 seconds; `0` retries at once.
/// Each wait is announced as a [`StreamEvent::Notice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// How many requests to send at most, the first included (`1` never
    /// retries; `0` is treated as `1`).
    pub max_attempts: u32,
    /// The wait before the first retry.
    pub base_delay: Duration,
    /// The longest computed wait, before jitter.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Five requests, waiting 1 s, 2 s, 4 s and 8 s (plus jitter) between
    /// them (at most 30 s before jitter).
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The computed wait after request number `attempt` (1-based) failed.
    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }

    /// The wait after request number `attempt` (1-based) failed: the
    /// computed backoff with jitter drawn from `entropy`.
    fn jittered_backoff(&self, attempt: u32, entropy: u64) -> Duration {
        with_jitter(self.backoff(attempt), entropy)
    }
}

/// The most jitter adds to a computed wait, in thousandths of it (20%).
const MAX_JITTER_PER_MILLE: u32 = 200;

/// `delay` plus a share of up to [`MAX_JITTER_PER_MILLE`] of it picked by
/// `entropy`, rounded down to the precision of [`format_delay`] but never
/// below `delay`.
fn with_jitter(delay: Duration, entropy: u64) -> Duration {
    // `entropy`'s own low bits may be constant (clocks with microsecond
    // resolution report nanoseconds ending in 000): mix every bit in.
    let mixed = splitmix64(entropy);
    let per_mille = u32::try_from(mixed % u64::from(MAX_JITTER_PER_MILLE)).unwrap_or(0);
    let extra = delay
        .checked_mul(per_mille)
        .map_or(Duration::ZERO, |scaled| scaled / 1000);
    let total = delay.saturating_add(extra);
    let rounded = if total < Duration::from_secs(1) {
        Duration::from_millis(u64::from(total.subsec_millis()))
    } else {
        Duration::new(total.as_secs(), total.subsec_millis() / 100 * 100_000_000)
    };
    rounded.max(delay)
}

/// A well-spread 64-bit value from `seed` (the splitmix64 finaliser).
fn splitmix64(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Entropy for jitter, without a random-number dependency: the clock's
/// sub-second nanoseconds. Two clients turned away together still differ in
/// when they got the answer, which is all jitter needs.
fn clock_entropy() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| u64::from(since.subsec_nanos()))
}

/// The longest wait a `retry-after` header can ask for.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How long to wait for a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a response may stay silent before jp gives up on it. There is
/// no limit on the whole response: streams legitimately run for minutes.
const READ_TIMEOUT: Duration = Duration::from_secs(300);

/// The most of an error body jp reads.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// One header of a request.
#[derive(Clone)]
pub(crate) struct Header {
    /// The header's name.
    pub(crate) name: &'static str,
    /// Its value.
    pub(crate) value: String,
    /// Whether the value is a secret (kept out of debug output).
    pub(crate) sensitive: bool,
}

impl std::fmt::Debug for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = if self.sensitive {
            "<redacted>"
        } else {
            &self.value
        };
        write!(f, "{}: {value}", self.name)
    }
}

impl Header {
    /// A header whose value may be shown.
    pub(crate) fn plain(name: &'static str, value: impl Into<String>) -> Self {
        Self {
            name,
            value: value.into(),
            sensitive: false,
        }
    }

    /// A header whose value is a secret.
    pub(crate) fn secret(name: &'static str, value: impl Into<String>) -> Self {
        Self {
            name,
            value: value.into(),
            sensitive: true,
        }
    }
}

/// An API key. Its debug output never shows it, so a provider holding one
/// can derive `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    /// Wraps a key.
    pub(crate) fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the request header.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("\"<redacted>\"")
    }
}

/// `Authorization: Bearer {key}` when there is a non-empty key, else no
/// header (the OpenAI-compatible and Ollama APIs).
pub(crate) fn bearer(key: Option<&Secret>) -> Vec<Header> {
    key.filter(|key| !key.expose().is_empty())
        .map(|key| Header::secret("authorization", format!("Bearer {}", key.expose())))
        .into_iter()
        .collect()
}

/// A streaming request to send.
#[derive(Debug, Clone)]
pub(crate) struct Post {
    /// The provider's name, for errors.
    pub(crate) provider: String,
    /// Where to send it.
    pub(crate) url: String,
    /// Headers besides `content-type: application/json`.
    pub(crate) headers: Vec<Header>,
    /// The JSON body as sent, or why it could not be written (see
    /// [`json_body`]).
    pub(crate) body: Result<Bytes, ProviderError>,
    /// How to retry.
    pub(crate) retry: RetryPolicy,
    /// How to start the provider's server, said when nothing listens.
    pub(crate) start_hint: Option<&'static str>,
}

/// `body` as JSON text, for [`Post::body`].
///
/// Providers build their bodies as borrowed, typed views of the request and
/// write them here in one pass: a call's arguments go from the conversation
/// into these bytes without an intermediate `Value` copy (issue 14).
/// Writing them cannot fail for the types the providers use (string keys
/// only); if it ever does, the stream reports it instead of sending
/// anything, as [`ProviderError::Config`] naming `provider`.
fn json_body(provider: &str, body: &impl Serialize) -> Result<Bytes, ProviderError> {
    serde_json::to_vec(body).map(Bytes::from).map_err(|error| {
        ProviderError::Config(format!("{provider}: cannot write the request: {error}"))
    })
}

/// `base_url` without trailing slashes.
fn trim_base_url(mut base_url: String) -> String {
    while base_url.ends_with('/') {
        base_url.pop();
    }
    base_url
}

/// The HTTP client all providers share (one connection pool).
fn client() -> Result<reqwest::Client, Arc<reqwest::Error>> {
    static CLIENT: OnceLock<Result<reqwest::Client, Arc<reqwest::Error>>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // reqwest is built without a crypto provider (Cargo.toml says
            // why); ring is installed for the process before the one
            // client is built. `Err` means one is installed already.
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::builder()
                .user_agent(concat!("jp/", env!("CARGO_PKG_VERSION")))
                .connect_timeout(CONNECT_TIMEOUT)
                .read_timeout(READ_TIMEOUT)
                // A redirect would turn the POST into a GET and drop the
                // body; report it instead (see `check`).
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(Arc::new)
        })
        .clone()
}

/// Sends `post` when the stream is first polled and streams the response
/// through a decoder from `new_decoder` (a fresh one for each response).
pub(crate) fn post_stream(
    post: Post,
    new_decoder: impl Fn() -> Box<dyn WireDecoder> + Send + 'static,
) -> EventStream {
    Box::pin(async_stream::try_stream! {
        let client = client().map_err(|error| ProviderError::Connect {
            provider: post.provider.clone(),
            url: post.url.clone(),
            message: format!("cannot set up the HTTP client: {}", describe(&*error)),
        })?;
        let body = post.body.clone()?;
        let max_attempts = post.retry.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            let response = send(&client, &post, body.clone()).await?;
            let (reason, retry_after) = match check(&post, response).await? {
                Checked::Retry { reason, retry_after } => (reason, retry_after),
                Checked::Streaming(mut response) => {
                    let mut decoder = new_decoder();
                    let mut holdback = Holdback::default();
                    let reason = loop {
                        let chunk = response.chunk().await;
                        let mut events = Vec::new();
                        let step = decode_chunk(decoder.as_mut(), chunk, &mut events);
                        for event in events {
                            for event in holdback.accept(event) {
                                yield event;
                            }
                        }
                        match step {
                            Step::More => {}
                            Step::End => {
                                for event in holdback.release() {
                                    yield event;
                                }
                                return;
                            }
                            Step::Failed(error) => {
                                if let Some(reason) = holdback.retry_reason(&error) {
                                    break reason;
                                }
                                for event in holdback.release() {
                                    yield event;
                                }
                                Err(error)?;
                            }
                        }
                    };
                    // Close this response before waiting: the events it
                    // produced are dropped with it.
                    drop(response);
                    (reason, None)
                }
            };
            if attempt >= max_attempts {
                Err(ProviderError::RetriesExhausted {
                    provider: post.provider.clone(),
                    reason: reason.clone(),
                    attempts: attempt,
                })?;
            }
            let delay = retry_after
                .unwrap_or_else(|| post.retry.jittered_backoff(attempt, clock_entropy()));
            attempt += 1;
            tracing::debug!(provider = %post.provider, %reason, ?delay, attempt, "retrying");
            yield StreamEvent::Notice(format!(
                "{reason}; retrying in {} (attempt {attempt} of {max_attempts})",
                format_delay(delay)
            ));
            tokio::time::sleep(delay).await;
        }
    })
}

/// Where a response stands after one read from its body.
#[derive(Debug, PartialEq)]
enum Step {
    /// More of the body may come.
    More,
    /// The body ended and is complete.
    End,
    /// The body cannot be read further.
    Failed(ProviderError),
}

/// Passes the outcome of one read from the body through `decoder`, adding
/// the events it produced to `events` (also when it then fails).
fn decode_chunk(
    decoder: &mut dyn WireDecoder,
    chunk: Result<Option<Bytes>, reqwest::Error>,
    events: &mut Vec<StreamEvent>,
) -> Step {
    let decoded = match chunk {
        Ok(Some(bytes)) => {
            // A decoder that fails after some events of a chunk returns the
            // error from its next call: ask for it now, not when the next
            // chunk arrives.
            for input in [&bytes[..], &[]] {
                match decoder.feed(input) {
                    Ok(more) => events.extend(more),
                    Err(error) => return Step::Failed(error),
                }
            }
            return Step::More;
        }
        Ok(None) => decoder.finish(),
        // A read error after the format's end marker loses nothing; before
        // it, it is the disconnection to report.
        Err(error) => decoder.finish().map_err(|finished| match finished {
            ProviderError::Disconnected { provider, .. } => ProviderError::Disconnected {
                provider,
                message: format!("error reading the response: {}", describe(cause_of(&error))),
            },
            other => other,
        }),
    };
    match decoded {
        Ok(more) => {
            events.extend(more);
            Step::End
        }
        Err(error) => Step::Failed(error),
    }
}

/// Holds back the events of a response that come before its content.
///
/// Until the first [`StreamEvent::Part`], [`StreamEvent::Flush`] or
/// [`StreamEvent::Finished`], a response has said nothing the user sees:
/// its other events (the usage of `message_start`) wait here. An overload
/// or rate-limit error event in that window means the response never
/// started, so the request is sent again and the held events are dropped
/// with the response; after it, the response has started and any error is
/// final.
#[derive(Debug, Default)]
struct Holdback {
    /// Whether content was passed on.
    started: bool,
    /// The events waiting for content.
    held: Vec<StreamEvent>,
}

impl Holdback {
    /// The events to pass on now that `event` was decoded.
    fn accept(&mut self, event: StreamEvent) -> Vec<StreamEvent> {
        if !self.started {
            let content = matches!(
                event,
                StreamEvent::Part { .. } | StreamEvent::Flush { .. } | StreamEvent::Finished(_)
            );
            if !content {
                self.held.push(event);
                return Vec::new();
            }
            self.started = true;
        }
        let mut ready = std::mem::take(&mut self.held);
        ready.push(event);
        ready
    }

    /// The held events, for a response that ended or failed for good.
    fn release(&mut self) -> Vec<StreamEvent> {
        std::mem::take(&mut self.held)
    }

    /// Why the request may be sent again after `error`, worded for a
    /// notice: an overload or rate-limit error event before any content.
    fn retry_reason(&self, error: &ProviderError) -> Option<String> {
        if self.started {
            return None;
        }
        // Anthropic's error types, and the statuses Gemini's error events
        // carry for the same answers (HTTP 503 and 429).
        match error {
            ProviderError::Api { kind, .. }
                if kind == "overloaded_error" || kind == "UNAVAILABLE" =>
            {
                Some(format!("overloaded ({kind})"))
            }
            ProviderError::Api { kind, .. }
                if kind == "rate_limit_error" || kind == "RESOURCE_EXHAUSTED" =>
            {
                Some(format!("rate limited ({kind})"))
            }
            _ => None,
        }
    }
}

/// Sends the request once.
async fn send(
    client: &reqwest::Client,
    post: &Post,
    body: Bytes,
) -> Result<reqwest::Response, ProviderError> {
    let mut request = client
        .post(&post.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json");
    for header in &post.headers {
        let mut value = reqwest::header::HeaderValue::from_str(&header.value).map_err(|_| {
            ProviderError::Config(format!(
                "{}: the `{}` header's value contains characters HTTP does not allow{}",
                post.provider,
                header.name,
                if header.sensitive {
                    " (check the API key)"
                } else {
                    ""
                }
            ))
        })?;
        value.set_sensitive(header.sensitive);
        request = request.header(header.name, value);
    }
    tracing::debug!(provider = %post.provider, url = %post.url, "sending request");
    request
        .body(body)
        .send()
        .await
        .map_err(|error| ProviderError::Connect {
            provider: post.provider.clone(),
            url: post.url.clone(),
            message: match start_hint(post.start_hint, &error) {
                Some(hint) => format!("{}; {hint}", describe(cause_of(&error))),
                None => describe(cause_of(&error)),
            },
        })
}

/// `hint` (how to start a local provider's server), when the connection
/// was refused: nothing listens where jp looked for it.
fn start_hint(hint: Option<&'static str>, error: &reqwest::Error) -> Option<&'static str> {
    let refused = error.is_connect()
        && std::error::Error::source(error)
            .into_iter()
            .flat_map(|e| std::iter::successors(Some(e), |e| e.source()))
            .any(|e| {
                e.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
            });
    hint.filter(|_| refused)
}

/// What an answer's status means.
enum Checked {
    /// A success: its body is the stream.
    Streaming(reqwest::Response),
    /// A rate-limit or overload answer, to be retried.
    Retry {
        /// What happened, for the notice.
        reason: String,
        /// The wait the server asked for.
        retry_after: Option<Duration>,
    },
}

/// Sorts an answer into a stream, a retry, or an error.
async fn check(post: &Post, mut response: reqwest::Response) -> Result<Checked, ProviderError> {
    let status = response.status();
    if status.is_success() {
        return Ok(Checked::Streaming(response));
    }
    let retry_after = retry_after(response.headers());
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let body = read_error_body(&mut response).await;
    let error = ErrorBody::parse(&body);
    tracing::debug!(provider = %post.provider, status = status.as_u16(), %body, "error answer");
    if let Some(reason) = retry_reason(status.as_u16(), &error) {
        return Ok(Checked::Retry {
            reason,
            retry_after,
        });
    }
    let message = match location {
        Some(location) if status.is_redirection() => format!(
            "{} redirects to {location}; set the provider's base URL to where it points",
            post.url
        ),
        _ => error_message(status, &body, error),
    };
    Err(ProviderError::Http {
        provider: post.provider.clone(),
        status: status.as_u16(),
        message,
    })
}

/// Why a failed request may be retried, worded for a notice.
fn retry_reason(status: u16, error: &ErrorBody) -> Option<String> {
    if error.kind.as_deref() == Some("overloaded_error") {
        return Some(format!("overloaded (HTTP {status})"));
    }
    match status {
        429 => Some(format!("rate limited (HTTP {status})")),
        503 => Some(format!("unavailable (HTTP {status})")),
        529 => Some(format!("overloaded (HTTP {status})")),
        _ => None,
    }
}

/// The parts of a JSON error body jp uses.
#[derive(Debug, Default, PartialEq)]
struct ErrorBody {
    /// The error's type (`overloaded_error`), when the body names one.
    kind: Option<String>,
    /// The error's message, when the body has one.
    message: Option<String>,
}

impl ErrorBody {
    /// Reads Anthropic (`{"error": {"type", "message"}}`), OpenAI and
    /// OpenRouter (`{"error": {"message", "type" or "code"}}`), Gemini
    /// (`{"error": {"code", "message", "status"}}`) and Ollama
    /// (`{"error": "..."}`) error bodies.
    fn parse(body: &str) -> Self {
        let Ok(value) = serde_json::from_str::<Value>(body) else {
            return Self::default();
        };
        let string = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
        match value.get("error") {
            Some(Value::String(message)) => Self {
                kind: None,
                message: Some(message.clone()),
            },
            Some(error @ Value::Object(_)) => Self {
                kind: string(error.get("type")).or_else(|| string(error.get("status"))),
                message: string(error.get("message")),
            },
            _ => Self {
                kind: string(value.get("type")),
                message: string(value.get("message")),
            },
        }
    }
}

/// The message of an HTTP error: the provider's own, else the body's
/// start, else the status's reason phrase.
fn error_message(status: reqwest::StatusCode, body: &str, error: ErrorBody) -> String {
    if let Some(message) = error.message.filter(|m| !m.trim().is_empty()) {
        return message;
    }
    let body = body.trim();
    if body.is_empty() {
        return status
            .canonical_reason()
            .unwrap_or("no error message")
            .to_owned();
    }
    match body.char_indices().nth(500) {
        Some((cut, _)) => format!("{}…", &body[..cut]),
        None => body.to_owned(),
    }
}

/// The wait a `retry-after` header asks for, if it is a number of seconds.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let seconds: f64 = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    (seconds.is_finite() && seconds >= 0.0)
        .then(|| Duration::from_secs_f64(seconds.min(MAX_RETRY_AFTER.as_secs_f64())))
}

/// A wait as a notice shows it: `2s`, `1.5s`, `250ms`.
fn format_delay(delay: Duration) -> String {
    if delay.subsec_nanos() == 0 {
        format!("{}s", delay.as_secs())
    } else if delay < Duration::from_secs(1) {
        format!("{}ms", delay.as_millis())
    } else {
        format!("{:.1}s", delay.as_secs_f64())
    }
}

/// What went wrong under a reqwest error: its source, whose chain says
/// more than reqwest's own "error sending request for url (...)" (the URL is
/// in the message already).
fn cause_of(error: &reqwest::Error) -> &(dyn std::error::Error + 'static) {
    std::error::Error::source(error).unwrap_or(error)
}

/// An error and its causes, `: `-separated, without repeats.
fn describe(error: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = vec![error.to_string()];
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of an error response, as text.
async fn read_error_body(response: &mut reqwest::Response) -> String {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY {
        match response.chunk().await {
            Ok(Some(bytes)) => body.extend_from_slice(&bytes),
            Ok(None) | Err(_) => break,
        }
    }
    body.truncate(MAX_ERROR_BODY);
    String::from_utf8_lossy(&body).into_owned()
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
