//! JSON Pointer (RFC 6901) text, used to say where in the arguments something
//! happened.

use std::fmt;

/// A JSON Pointer such as `/patterns/0/old`, kept as its escaped text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct JsonPointer(String);

impl JsonPointer {
    /// The pointer to the root value (the empty string).
    #[must_use]
    pub fn root() -> Self {
        Self(String::new())
    }

    /// Appends an object key, escaping `~` and `/` as RFC 6901 requires.
    pub fn push_key(&mut self, key: &str) {
        self.0.push('/');
        for c in key.chars() {
            match c {
                '~' => self.0.push_str("~0"),
                '/' => self.0.push_str("~1"),
                c => self.0.push(c),
            }
        }
    }

    /// Appends an array index.
    pub fn push_index(&mut self, index: usize) {
        use fmt::Write as _;
        // Writing into a String cannot fail.
        let _ = write!(self.0, "/{index}");
    }

    /// The escaped pointer text; empty for the root.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this points at the root value.
    #[must_use]
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

/// Shows the pointer text, or `(root)` for the empty pointer, which would
/// otherwise be invisible in a message. Keys come from the model, so control
/// characters are shown escaped and never reach the terminal raw.
impl fmt::Display for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_root() {
            f.write_str("(root)")
        } else {
            write_escaped(f, &self.0)
        }
    }
}

/// Writes `text` with control characters as `\u{..}` escapes.
pub(crate) fn write_escaped(f: &mut impl fmt::Write, text: &str) -> fmt::Result {
    for c in text.chars() {
        if c.is_control() {
            write!(f, "\\u{{{:04x}}}", u32::from(c))?;
        } else {
            f.write_char(c)?;
        }
    }
    Ok(())
}

/// A key ready to be shown in a message: control characters escaped.
#[derive(Debug)]
pub(crate) struct DisplayKey<'a>(pub &'a str);

impl fmt::Display for DisplayKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_escaped(f, self.0)
    }
}

#[cfg(test)]
#[path = "pointer_tests.rs"]
mod tests;
