//! The keys a prompt reads, decoded from the bytes the terminal sends in
//! raw mode.
//!
//! jp reads the terminal itself rather than through crossterm's event
//! reader: that reader spins on a terminal that hung up, and after a
//! resize it could leave a key unread while jp polled in a loop. A prompt
//! needs few keys: characters, Enter, Backspace, Ctrl+U, and Ctrl+C or
//! Ctrl+D to interrupt; a list to choose from (`jp query --resume`) also
//! the Up and Down arrows and a lone Esc. Everything else (other arrows,
//! function keys, Alt+key) is [`Key::Other`] and ignored.

/// A key a prompt acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A character typed.
    Char(char),
    /// Enter (Return).
    Enter,
    /// Backspace.
    Backspace,
    /// Ctrl+U: clear the line.
    Clear,
    /// Ctrl+C or Ctrl+D.
    Interrupt,
    /// The Up arrow.
    Up,
    /// The Down arrow.
    Down,
    /// Esc on its own (not the start of a sequence that followed at once).
    Escape,
    /// Anything else.
    Other,
}

/// Turns bytes into keys; a key split across two reads (a multi-byte
/// character, an escape sequence) waits for its rest.
#[derive(Debug, Default)]
pub struct Decoder {
    pending: Vec<u8>,
}

/// The most bytes an unfinished sequence may hold before it is dropped as
/// [`Key::Other`] (no key jp reads is longer).
const MAX_PENDING: usize = 32;

impl Decoder {
    /// The keys `bytes` complete, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Key> {
        self.pending.extend_from_slice(bytes);
        let mut keys = Vec::new();
        let mut at = 0;
        while at < self.pending.len() {
            match decode(&self.pending[at..]) {
                Some((key, used)) => {
                    keys.push(key);
                    at += used;
                }
                None => break,
            }
        }
        self.pending.drain(..at);
        if self.pending.len() > MAX_PENDING {
            self.pending.clear();
            keys.push(Key::Other);
        }
        keys
    }

    /// Nothing more came: what is pending is a key of its own (a lone Esc
    /// is Esc, not the start of a sequence).
    pub fn settle(&mut self) -> Option<Key> {
        if self.pending.is_empty() {
            return None;
        }
        let key = if self.pending == [0x1b] {
            Key::Escape
        } else {
            Key::Other
        };
        self.pending.clear();
        Some(key)
    }

    /// Forgets what is pending (keys typed before a prompt showed).
    pub fn clear(&mut self) {
        self.pending.clear();
    }
}

/// The first key in `bytes` and how many bytes it takes; `None` when
/// `bytes` holds only its start.
fn decode(bytes: &[u8]) -> Option<(Key, usize)> {
    let first = *bytes.first()?;
    let key = match first {
        0x03 | 0x04 => Key::Interrupt,
        0x15 => Key::Clear,
        b'\r' | b'\n' => Key::Enter,
        0x7f | 0x08 => Key::Backspace,
        0x1b => return escape(bytes),
        0x00..=0x1f => Key::Other,
        0x20..=0x7e => Key::Char(char::from(first)),
        _ => return utf8(bytes),
    };
    Some((key, 1))
}

/// An escape sequence: CSI (`ESC [` parameters, a final byte), SS3
/// (`ESC O` and one byte), or Alt with a key (`ESC` and one byte). The
/// arrows Up and Down (final byte `A` or `B`, without parameters: with
/// them they are Shift+Up and the like) are keys of their own.
fn escape(bytes: &[u8]) -> Option<(Key, usize)> {
    let arrow = |last: u8| match last {
        b'A' => Key::Up,
        b'B' => Key::Down,
        _ => Key::Other,
    };
    match bytes.get(1)? {
        b'[' => {
            let end = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b))?;
            let key = if end == 0 {
                arrow(bytes[2])
            } else {
                Key::Other
            };
            Some((key, end + 3))
        }
        b'O' => bytes.get(2).map(|last| (arrow(*last), 3)),
        _ => Some((Key::Other, 2)),
    }
}

/// A character of more than one byte; an invalid byte is
/// [`Key::Other`].
fn utf8(bytes: &[u8]) -> Option<(Key, usize)> {
    let length = match bytes[0] {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return Some((Key::Other, 1)),
    };
    let whole = bytes.get(..length)?;
    Some(match std::str::from_utf8(whole) {
        Ok(text) => (text.chars().next().map_or(Key::Other, Key::Char), length),
        Err(_) => (Key::Other, 1),
    })
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
