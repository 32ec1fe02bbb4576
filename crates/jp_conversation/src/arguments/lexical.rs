//! The lexical side of JSON for [`IncrementalArgParser`](super::IncrementalArgParser):
//! the number grammar, literals, escape-sequence progress and byte classes.
//! Each is a small state that survives a chunk boundary.

use super::fragment::Scalar;

/// The states of the JSON number grammar, named after what was read last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NumberState {
    Minus,
    Zero,
    Integer,
    Dot,
    Fraction,
    Exponent,
    ExponentSign,
    ExponentDigits,
}

impl NumberState {
    pub(super) fn is_complete(self) -> bool {
        matches!(
            self,
            Self::Zero | Self::Integer | Self::Fraction | Self::ExponentDigits
        )
    }

    /// The state after `byte`, or `None` if `byte` cannot continue the number.
    pub(super) fn next(self, byte: u8) -> Option<Self> {
        Some(match (self, byte) {
            (Self::Minus, b'0') => Self::Zero,
            (Self::Minus, b'1'..=b'9') => Self::Integer,
            (Self::Integer, b'0'..=b'9') => Self::Integer,
            (Self::Zero | Self::Integer, b'.') => Self::Dot,
            (Self::Zero | Self::Integer | Self::Fraction, b'e' | b'E') => Self::Exponent,
            (Self::Dot | Self::Fraction, b'0'..=b'9') => Self::Fraction,
            (Self::Exponent, b'+' | b'-') => Self::ExponentSign,
            (Self::Exponent | Self::ExponentSign | Self::ExponentDigits, b'0'..=b'9') => {
                Self::ExponentDigits
            }
            _ => return None,
        })
    }

    /// Whether `byte` is a digit after a lone leading `0`, which JSON forbids
    /// (`01`), rather than the start of what follows the number.
    pub(super) fn is_leading_zero_of(self, byte: u8) -> bool {
        self == Self::Zero && byte.is_ascii_digit()
    }

    /// What must follow when the number cannot end here.
    pub(super) fn expected(self) -> &'static str {
        match self {
            Self::Zero => "'.', 'e', or the end of the number (no leading zeros)",
            _ => "a digit",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Literal {
    True,
    False,
    Null,
}

impl Literal {
    pub(super) fn text(self) -> &'static [u8] {
        match self {
            Self::True => b"true",
            Self::False => b"false",
            Self::Null => b"null",
        }
    }

    pub(super) fn expected(self) -> &'static str {
        match self {
            Self::True => "the literal `true`",
            Self::False => "the literal `false`",
            Self::Null => "the literal `null`",
        }
    }

    pub(super) fn scalar(self) -> Scalar {
        match self {
            Self::True => Scalar::Bool(true),
            Self::False => Scalar::Bool(false),
            Self::Null => Scalar::Null,
        }
    }
}

/// Progress through an escape sequence. `\uXXXX` escapes of UTF-16
/// surrogates must come in high/low pairs; a lone surrogate is an error, as
/// in serde_json (Rust strings cannot hold one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Escape {
    None,
    /// After `\`.
    Backslash,
    /// Inside `\uXXXX`: `digits` read so far, their value in `code`;
    /// `high` holds a preceding high surrogate.
    Unicode {
        code: u16,
        digits: u8,
        high: Option<u16>,
    },
    /// After a high surrogate escape: `\` must follow.
    LowBackslash {
        high: u16,
    },
    /// After a high surrogate escape and `\`: `u` must follow.
    LowU {
        high: u16,
    },
}

/// Bytes that end a run of plain string content.
const fn string_specials() -> [bool; 256] {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
}
pub(super) static STRING_SPECIAL: [bool; 256] = string_specials();

pub(super) fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

pub(super) fn hex_value(byte: u8) -> Option<u16> {
    match byte {
        b'0'..=b'9' => Some(u16::from(byte - b'0')),
        b'a'..=b'f' => Some(u16::from(byte - b'a' + 10)),
        b'A'..=b'F' => Some(u16::from(byte - b'A' + 10)),
        _ => None,
    }
}

/// A number's text for an error message: whole if short, else its start and
/// its length, so a hostile number cannot bloat every later error.
pub(super) fn abbreviate(number: &str) -> String {
    const SHOWN: usize = 24;
    if number.len() <= SHOWN {
        number.to_owned()
    } else {
        // Number text is ASCII, so any byte index is a char boundary.
        format!("{}... ({} characters)", &number[..SHOWN], number.len())
    }
}

/// The position of the first byte at or after `at` that ends a run of plain
/// string content (`"`, `\\` or a control byte), or `bytes.len()`. Looks at
/// eight bytes at a time: long runs of text are the common case.
pub(super) fn skip_plain(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = ONES * 0x80;
    const QUOTES: u64 = ONES * b'"' as u64;
    const BACKSLASHES: u64 = ONES * b'\\' as u64;
    const SPACES: u64 = ONES * 0x20;
    while let Some(word) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        let word = u64::from_le_bytes(*word);
        // A byte of `x` is zero (or, in the last term, below 0x20) where
        // `x - ONES` borrows into its high bit while `x`'s own high bit is
        // clear. A borrow only runs upwards from such a byte, so the lowest
        // flagged byte is the first special one.
        let quotes = word ^ QUOTES;
        let backslashes = word ^ BACKSLASHES;
        let special = (quotes.wrapping_sub(ONES) & !quotes)
            | (backslashes.wrapping_sub(ONES) & !backslashes)
            | (word.wrapping_sub(SPACES) & !word);
        let special = special & HIGH;
        if special != 0 {
            // Little-endian: the lowest bits are the first byte.
            return at + (special.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while at < bytes.len() && !STRING_SPECIAL[usize::from(bytes[at])] {
        at += 1;
    }
    at
}

/// The escape sequence starting with the `\\` at `at`, decoded, with its
/// length in bytes, when all of it lies in `bytes` and it is valid (a
/// surrogate pair counts as one); `None` for anything else, which the
/// parser's state machine then reads byte by byte, to carry it over a chunk
/// boundary or to report the exact error.
pub(super) fn whole_escape(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let decoded = match *bytes.get(at + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let code = hex4(bytes, at + 2)?;
            return match code {
                0xD800..=0xDBFF => {
                    if bytes.get(at + 6..at + 8)? != b"\\u" {
                        return None;
                    }
                    let low = hex4(bytes, at + 8)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    let scalar =
                        0x10000 + ((u32::from(code) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                    Some((char::from_u32(scalar)?, 12))
                }
                0xDC00..=0xDFFF => None,
                _ => Some((char::from_u32(u32::from(code))?, 6)),
            };
        }
        _ => return None,
    };
    Some((decoded, 2))
}

/// The four hexadecimal digits at `at`, if all are there.
fn hex4(bytes: &[u8], at: usize) -> Option<u16> {
    let digits = bytes.get(at..at + 4)?;
    digits
        .iter()
        .try_fold(0, |code, &digit| Some(code << 4 | hex_value(digit)?))
}
