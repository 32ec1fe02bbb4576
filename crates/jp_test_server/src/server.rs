//! The server: a background thread with its own tokio runtime, one task per connection.

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::oneshot;

use crate::record::RecordedRequest;
use crate::reply::{Fault, Reply, path_mismatch};
use crate::request::{Input, ReadError, RequestHead};

/// A local HTTP/1.1 server that answers the `N`-th request with the `N`-th scripted [`Reply`]
/// and records every request.
///
/// It runs on a background thread with its own tokio runtime, so it works from plain `#[test]`s
/// and from inside another runtime. Every exchange uses its own connection: replies carry
/// `connection: close`. Dropping the server stops it and closes every open connection.
pub struct TestServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Bind `127.0.0.1:0` and start serving `replies`.
    ///
    /// The `N`-th request (from 0) gets `replies[N]`; a request beyond the script gets `500` with
    /// the body `test server: no reply scripted for request #N`, and is still recorded.
    ///
    /// # Panics
    ///
    /// If the server cannot bind a local port or start its thread; [`TestServer::try_start`]
    /// returns that error instead.
    pub fn start(replies: Vec<Reply>) -> TestServer {
        match TestServer::try_start(replies) {
            Ok(server) => server,
            Err(e) => panic!("test server: cannot start: {e}"),
        }
    }

    /// Like [`TestServer::start`], but returns an error if the server cannot start.
    pub fn try_start(replies: Vec<Reply>) -> io::Result<TestServer> {
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            replies,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let thread_shared = Arc::clone(&shared);
        // The runtime is built, used and dropped on the server thread only, so starting or
        // dropping the server from inside another runtime is fine.
        let thread = std::thread::Builder::new()
            .name(format!("jp_test_server {addr}"))
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = started_tx.send(Err(e));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => listener,
                        Err(e) => {
                            let _ = started_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = started_tx.send(Ok(()));
                    accept_loop(listener, thread_shared, shutdown_rx).await;
                });
                // Dropping the runtime cancels every connection task and closes its socket.
                drop(runtime);
            })?;
        match started_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Err(io::Error::other(
                    "the server thread ended before it started serving",
                ));
            }
        }
        Ok(TestServer {
            addr,
            shared,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        })
    }

    /// The base URL, `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A snapshot of the requests received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Block until `n` requests have completed (reply fully sent, client gone, or a fault ended
    /// the exchange) or `timeout` passes, then return a snapshot of all requests.
    ///
    /// A timeout is not an error: check the length and `ended_at` of what comes back.
    pub fn wait_for(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let deadline = Instant::now().checked_add(timeout);
        let mut state = self.shared.lock();
        loop {
            let ended = state
                .requests
                .iter()
                .filter(|r| r.ended_at.is_some())
                .count();
            if ended >= n {
                break;
            }
            let remaining = match deadline {
                Some(deadline) => match deadline.checked_duration_since(Instant::now()) {
                    Some(remaining) if !remaining.is_zero() => remaining,
                    _ => break,
                },
                None => Duration::from_secs(3600),
            };
            state = match self.shared.changed.wait_timeout(state, remaining) {
                Ok((state, _)) => state,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        state.requests.clone()
    }

    /// Problems with connections that did not produce a recorded request, such as a malformed
    /// request (answered `400`) or a client that closed mid-request, in the order they happened.
    /// Empty when every connection carried a well-formed request or nothing at all.
    pub fn errors(&self) -> Vec<String> {
        self.shared.lock().errors.clone()
    }
}

impl fmt::Debug for TestServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestServer")
            .field("addr", &self.addr)
            .field("replies", &self.shared.replies.len())
            .finish_non_exhaustive()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic on the server thread has already been printed; do not panic in drop.
            let _ = thread.join();
        }
    }
}

/// State shared between the server thread and the [`TestServer`] handle.
struct Shared {
    replies: Vec<Reply>,
    state: Mutex<State>,
    /// Notified whenever an exchange ends.
    changed: Condvar,
}

#[derive(Default)]
struct State {
    requests: Vec<RecordedRequest>,
    errors: Vec<String>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Record a fully read request and decide its reply. Numbers are handed out here, under the
    /// lock, so they follow the order in which requests finished arriving.
    fn arrive(&self, head: RequestHead, body: Vec<u8>) -> (usize, Reply) {
        let mut state = self.lock();
        let index = state.requests.len();
        let mut mismatch = None;
        let reply = match self.replies.get(index) {
            None => text_reply(
                500,
                format!("test server: no reply scripted for request #{index}"),
            ),
            Some(reply) => match reply
                .expect_path
                .as_deref()
                .and_then(|expected| path_mismatch(expected, &head.target))
            {
                Some(message) => {
                    let reply =
                        text_reply(404, format!("test server: request #{index}: {message}"));
                    mismatch = Some(message);
                    reply
                }
                None => reply.clone(),
            },
        };
        state.requests.push(RecordedRequest {
            method: head.method,
            path: head.target,
            headers: head.headers,
            body,
            received_at: Instant::now(),
            body_bytes_sent: 0,
            client_disconnected: false,
            ended_at: None,
            path_mismatch: mismatch,
        });
        (index, reply)
    }

    fn progress(&self, index: usize, sent: usize) {
        if let Some(request) = self.lock().requests.get_mut(index) {
            request.body_bytes_sent = sent;
        }
    }

    fn finish(&self, index: usize, outcome: Outcome) {
        if let Some(request) = self.lock().requests.get_mut(index) {
            request.body_bytes_sent = outcome.sent;
            request.client_disconnected = outcome.client_gone;
            request.ended_at = Some(Instant::now());
        }
        self.changed.notify_all();
    }

    fn note_error(&self, message: String) {
        self.lock().errors.push(message);
    }
}

fn text_reply(status: u16, message: String) -> Reply {
    Reply::status(status, "text/plain; charset=utf-8", message)
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    mut shutdown: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(serve_connection(stream, Arc::clone(&shared)));
                }
                Err(e) => {
                    shared.note_error(format!("accepting a connection failed: {e}"));
                    // Out of file descriptors and the like: do not spin.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
        }
    }
}

/// Read one request, answer it, close the connection.
async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    // Each piece should leave as soon as it is written, not wait for the next one.
    let _ = stream.set_nodelay(true);
    let peer = match stream.peer_addr() {
        Ok(peer) => peer.to_string(),
        Err(_) => "an unknown peer".to_owned(),
    };
    let (read, mut write) = stream.into_split();
    let mut input = Input::new(read);
    let request = async {
        let head = input.read_head().await?;
        if head.expects_continue() {
            write
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .await
                .map_err(|e| ReadError::Truncated(format!("writing 100 Continue failed: {e}")))?;
        }
        let body = input.read_body(&head).await?;
        Ok((head, body))
    }
    .await;
    let (head, body) = match request {
        Ok(request) => request,
        Err(ReadError::Idle) => return,
        Err(ReadError::Truncated(message)) => {
            shared.note_error(format!("connection from {peer}: {message}"));
            return;
        }
        Err(ReadError::Malformed(message)) => {
            shared.note_error(format!("connection from {peer}: {message} (answered 400)"));
            let body = format!("test server: {message}");
            let response = format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = write.write_all(response.as_bytes()).await;
            let _ = write.shutdown().await;
            return;
        }
    };
    let (index, reply) = shared.arrive(head, body);
    let mut conn = Conn {
        read: input.into_inner(),
        write,
    };
    let outcome = send_reply(&mut conn, &reply, |sent| shared.progress(index, sent)).await;
    shared.finish(index, outcome);
}

/// How an exchange ended.
#[derive(Debug, Clone, Copy)]
struct Outcome {
    /// Body bytes written.
    sent: usize,
    /// The client went away before the reply was complete.
    client_gone: bool,
}

/// The client closed the connection (or it broke) while the reply was still going.
struct Gone;

/// Both halves of a connection after its request has been read.
struct Conn {
    read: OwnedReadHalf,
    write: OwnedWriteHalf,
}

impl Conn {
    /// Whether the client has already closed its end, without waiting. Bytes the client sends
    /// after its request are read and ignored.
    fn client_gone_now(&self) -> bool {
        let mut scratch = [0u8; 1024];
        loop {
            match self.read.try_read(&mut scratch) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
                Err(_) => return true,
            }
        }
    }

    /// Write and flush `bytes`, giving up as soon as the client goes away.
    async fn send(&mut self, bytes: &[u8]) -> Result<(), Gone> {
        if self.client_gone_now() {
            return Err(Gone);
        }
        let Conn { read, write } = self;
        tokio::select! {
            written = async {
                write.write_all(bytes).await?;
                write.flush().await
            } => written.map_err(|_| Gone),
            () = client_gone(read) => Err(Gone),
        }
    }

    /// Wait for `pause` (or forever with `None`), ending early with [`Gone`] if the client goes
    /// away.
    async fn idle(&mut self, pause: Option<Duration>) -> Result<(), Gone> {
        match pause {
            Some(pause) => tokio::select! {
                () = tokio::time::sleep(pause) => Ok(()),
                () = client_gone(&mut self.read) => Err(Gone),
            },
            None => {
                client_gone(&mut self.read).await;
                Err(Gone)
            }
        }
    }
}

/// Resolve once the client has closed its end (end of stream) or the connection broke. Bytes
/// it sends meanwhile are discarded.
async fn client_gone(read: &mut OwnedReadHalf) {
    use tokio::io::AsyncReadExt as _;
    let mut scratch = [0u8; 1024];
    loop {
        match read.read(&mut scratch).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Send the response head and the body as chunks, applying the reply's split, pace and fault.
async fn send_reply(conn: &mut Conn, reply: &Reply, mut progress: impl FnMut(usize)) -> Outcome {
    let mut sent = 0;
    let result: Result<(), Gone> = async {
        conn.send(&response_head(reply)).await?;
        let body = reply.body.as_slice();
        let limit = match reply.fault {
            Some(Fault::DisconnectAfter(n) | Fault::StallAfter(n)) => n.min(body.len()),
            None => body.len(),
        };
        for (i, piece) in reply.split.pieces(body.len()).into_iter().enumerate() {
            if piece.start >= limit {
                break;
            }
            if i > 0 && !reply.pace.is_zero() {
                conn.idle(Some(reply.pace)).await?;
            }
            let end = piece.end.min(limit);
            conn.send(&chunk(&body[piece.start..end])).await?;
            sent = end;
            progress(sent);
        }
        match reply.fault {
            None => {
                conn.send(b"0\r\n\r\n").await?;
                let _ = conn.write.shutdown().await;
                Ok(())
            }
            Some(Fault::DisconnectAfter(_)) => {
                // FIN without the terminating chunk: the client sees the body end early.
                let _ = conn.write.shutdown().await;
                Ok(())
            }
            Some(Fault::StallAfter(_)) => conn.idle(None).await,
        }
    }
    .await;
    Outcome {
        sent,
        client_gone: result.is_err(),
    }
}

/// Headers the server always sets itself, so the reply's own values are not sent.
const FRAMING_HEADERS: [&str; 3] = ["content-length", "transfer-encoding", "connection"];

fn response_head(reply: &Reply) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        if FRAMING_HEADERS
            .iter()
            .any(|framing| name.eq_ignore_ascii_case(framing))
        {
            continue;
        }
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    head.into_bytes()
}

/// One HTTP chunk carrying `data` (which is never empty: an empty chunk ends the body).
fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "",
    }
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
