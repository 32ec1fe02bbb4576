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
