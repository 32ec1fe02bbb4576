//! The server's stdout, line by line, between the server and rmcp: each
//! line that is JSON goes on to rmcp. A line that is not is skipped with a
//! debug log, as the official clients do: some published servers print a
//! few lines of their own (`Service initialized`) before they speak
//! JSON-RPC. Past [`MAX_NOISE_BYTES`] of such lines, or a line that grows
//! past [`MAX_LINE_BYTES`], the server is at fault, which fails the call in
//! flight at once rather than leave it waiting for its timeout.

use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::watch;

/// The longest line jp reads from an MCP server: 16 MiB. A result that
/// large is refused in any case (a tool's `max_output_bytes` is 1 MiB
/// unless raised); the bound keeps a runaway server from exhausting
/// memory.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The most bytes of lines that are not JSON a server may write on its
/// stdout over its life before jp stops it: 1 MiB.
pub const MAX_NOISE_BYTES: usize = 1024 * 1024;

/// What went wrong on the server's stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Lines that are not JSON, more than [`MAX_NOISE_BYTES`] of them: the
    /// start of the last, quoted and escaped.
    NotJson(String),
    /// A line longer than [`MAX_LINE_BYTES`].
    Oversized,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotJson(excerpt) => {
                write!(
                    f,
                    "it wrote more than {} MiB of lines that are not JSON-RPC, the last: {excerpt}",
                    MAX_NOISE_BYTES / (1024 * 1024)
                )
            }
            Self::Oversized => write!(
                f,
                "it wrote a message longer than {} MiB",
                MAX_LINE_BYTES / (1024 * 1024)
            ),
        }
    }
}

/// Copies `from` to `to` line by line until `from` ends (or `to` is
/// closed), reporting each [`Fault`] on `faults`.
pub async fn forward(
    from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    faults: watch::Sender<Option<Fault>>,
) {
    let mut from = BufReader::new(from);
    let mut line = Vec::new();
    let mut noise = 0usize;
    loop {
        line.clear();
        match read_line(&mut from, &mut line).await {
            Ok(Read::End) | Err(_) => return,
            Ok(Read::Oversized) => {
                faults.send_replace(Some(Fault::Oversized));
                continue;
            }
            Ok(Read::Line) => {}
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        if serde_json::from_slice::<serde::de::IgnoredAny>(text).is_err() {
            let start = crate::framing::excerpt(&String::from_utf8_lossy(text));
            noise = noise.saturating_add(line.len());
            if noise > MAX_NOISE_BYTES {
                faults.send_replace(Some(Fault::NotJson(start)));
            } else {
                tracing::debug!(
                    "skipped a line on an MCP server's stdout that is not JSON: {start}"
                );
            }
            continue;
        }
        if to.write_all(&line).await.is_err() || to.flush().await.is_err() {
            return;
        }
    }
}

enum Read {
    Line,
    Oversized,
    End,
}

/// Reads one line (with its newline) into `line`, or skips the rest of a
/// line that grows past [`MAX_LINE_BYTES`].
async fn read_line(
    from: &mut BufReader<impl AsyncRead + Unpin>,
    line: &mut Vec<u8>,
) -> std::io::Result<Read> {
    let mut oversized = false;
    loop {
        let buffer = from.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(if oversized {
                Read::Oversized
            } else if line.is_empty() {
                Read::End
            } else {
                line.push(b'\n');
                Read::Line
            });
        }
        let (take, done) = match buffer.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        if !oversized {
            if line.len() + take > MAX_LINE_BYTES {
                oversized = true;
                line.clear();
            } else {
                line.extend_from_slice(&buffer[..take]);
            }
        }
        from.consume(take);
        if done {
            return Ok(if oversized {
                Read::Oversized
            } else {
                Read::Line
            });
        }
    }
}
