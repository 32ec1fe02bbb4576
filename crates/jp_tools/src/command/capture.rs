//! A program's output, kept within a cap: the beginning and the end, with
//! what was left out between them counted.

use std::collections::VecDeque;

/// Output kept from the beginning.
pub(crate) const HEAD_BYTES: usize = 8 * 1024;

/// Output kept from the end.
pub(crate) const TAIL_BYTES: usize = 24 * 1024;

/// The most output shown: [`HEAD_BYTES`] and [`TAIL_BYTES`].
pub const MAX_OUTPUT_BYTES: usize = HEAD_BYTES + TAIL_BYTES;

/// Everything a program wrote, cut to at most [`MAX_OUTPUT_BYTES`].
#[derive(Debug, Default)]
pub(crate) struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    /// Adds `bytes`, the next piece of output.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let to_head = bytes.len().min(HEAD_BYTES - self.head.len());
        self.head.extend_from_slice(&bytes[..to_head]);
        self.tail.extend(&bytes[to_head..]);
        if self.tail.len() > TAIL_BYTES {
            let excess = self.tail.len() - TAIL_BYTES;
            self.tail.drain(..excess);
        }
    }

    /// How many bytes were written in all.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Whether more was written than is kept.
    pub(crate) fn is_cut(&self) -> bool {
        self.total > MAX_OUTPUT_BYTES as u64
    }

    /// The output as text: all of it, or (when cut) the beginning, a line
    /// saying how many bytes were left out, and the end. A cut never splits
    /// a UTF-8 character (the bytes of a split one are counted as left
    /// out); bytes that are not UTF-8 become U+FFFD.
    pub(crate) fn text(&self) -> String {
        let (tail_a, tail_b) = self.tail.as_slices();
        let mut tail = Vec::with_capacity(self.tail.len());
        tail.extend_from_slice(tail_a);
        tail.extend_from_slice(tail_b);
        if !self.is_cut() {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        let head = &self.head[..char_start_before(&self.head, self.head.len())];
        let tail = &tail[char_start_after(&tail)..];
        let left_out = self.total - head.len() as u64 - tail.len() as u64;
        let mut text = String::from_utf8_lossy(head).into_owned();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[… {} bytes left out …]\n",
            crate::words::thousands(left_out)
        ));
        text.push_str(&String::from_utf8_lossy(tail));
        text
    }
}

/// The largest index at or before `end` where no UTF-8 character of
/// `bytes` is split: `end` itself unless the character it falls into
/// started within the last three bytes and is incomplete.
fn char_start_before(bytes: &[u8], end: usize) -> usize {
    let continuation = |b: u8| b & 0xC0 == 0x80;
    // Walk back over at most three continuation bytes to the lead byte.
    let mut start = end;
    while start > 0 && end - start < 3 && continuation(bytes[start - 1]) {
        start -= 1;
    }
    let Some(&lead) = start.checked_sub(1).and_then(|i| bytes.get(i)) else {
        return end;
    };
    let len = match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return end,
    };
    if end - (start - 1) < len {
        start - 1
    } else {
        end
    }
}

/// The index of the first byte of `bytes` that does not continue a UTF-8
/// character begun before it (at most three skipped).
fn char_start_after(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take(3)
        .take_while(|&&b| b & 0xC0 == 0x80)
        .count()
}

#[cfg(test)]
#[path = "capture_tests.rs"]
mod tests;
