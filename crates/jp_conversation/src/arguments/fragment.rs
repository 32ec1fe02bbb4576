//! The fragment protocol of RFD 043: how a JSON value is described while it
//! is still arriving.

use std::fmt;

use super::pointer::JsonPointer;

/// A non-string, non-compound JSON value.
///
/// Kept apart from [`serde_json::Value`] so that strings, arrays and objects
/// can only travel through their own [`StreamFragment`] variants.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, parsed by serde_json from its exact source text.
    Number(serde_json::Number),
}

impl From<Scalar> for serde_json::Value {
    fn from(scalar: Scalar) -> Self {
        match scalar {
            Scalar::Null => Self::Null,
            Scalar::Bool(b) => Self::Bool(b),
            Scalar::Number(n) => Self::Number(n),
        }
    }
}

/// Which kind of value an [`StreamFragment::Empty`] fragment announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmptyKind {
    /// `""`
    String,
    /// `[]`
    Array,
    /// `{}`
    Object,
}

impl EmptyKind {
    /// The empty JSON value of this kind.
    #[must_use]
    pub fn value(self) -> serde_json::Value {
        match self {
            Self::String => serde_json::Value::String(String::new()),
            Self::Array => serde_json::Value::Array(Vec::new()),
            Self::Object => serde_json::Value::Object(serde_json::Map::new()),
        }
    }
}

/// One fragment of an incrementally parsed JSON value.
///
/// A value is described by zero or more content fragments followed by exactly
/// one [`Done`](Self::Done). Nesting encodes the path from the root to the
/// leaf, so every fragment is self-describing: a chunk of the string at
/// `/patterns/0/old` arrives as
/// `ObjectEntry { "patterns", ArrayItem { 0, ObjectEntry { "old", String(..) } } }`.
///
/// RFD 043 lists the variants `Scalar`, `String`, `ArrayItem`, `ObjectEntry`
/// and `Done`. Those five cannot tell `""`, `[]` and `{}` apart (none of them
/// has any content to stream), so jp adds [`Empty`](Self::Empty): the single
/// content fragment of an empty string, array or object.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamFragment {
    /// A complete scalar (null, bool or number).
    Scalar(Scalar),

    /// Decoded text of a string value: what arrived for it in one
    /// [`push`](crate::IncrementalArgParser::push). Never empty.
    String(String),

    /// A fragment of the item at `index` of an array.
    ArrayItem {
        /// Position of the item in its array, from 0.
        index: usize,
        /// The fragment of the item's value.
        value: Box<StreamFragment>,
    },

    /// A fragment of the value stored under `key` in an object.
    ObjectEntry {
        /// The entry's key, decoded and complete.
        key: String,
        /// The fragment of the entry's value.
        value: Box<StreamFragment>,
    },

    /// The value is an empty string, array or object.
    Empty(EmptyKind),

    /// No more fragments for this value.
    Done,
}

impl StreamFragment {
    /// Wraps `self` as the value of the array item at `index`.
    #[must_use]
    pub fn in_array(self, index: usize) -> Self {
        Self::ArrayItem {
            index,
            value: Box::new(self),
        }
    }

    /// Wraps `self` as the value of the object entry `key`.
    #[must_use]
    pub fn in_object(self, key: impl Into<String>) -> Self {
        Self::ObjectEntry {
            key: key.into(),
            value: Box::new(self),
        }
    }

    /// The innermost fragment: what this fragment says about its leaf value.
    #[must_use]
    pub fn leaf(&self) -> &Self {
        let mut fragment = self;
        while let Self::ArrayItem { value, .. } | Self::ObjectEntry { value, .. } = fragment {
            fragment = value;
        }
        fragment
    }

    /// How many containers lie between the root and the leaf.
    #[must_use]
    pub fn depth(&self) -> usize {
        let mut depth = 0;
        let mut fragment = self;
        while let Self::ArrayItem { value, .. } | Self::ObjectEntry { value, .. } = fragment {
            depth += 1;
            fragment = value;
        }
        depth
    }

    /// Whether this fragment closes the value it addresses.
    #[must_use]
    pub fn is_done(&self) -> bool {
        matches!(self.leaf(), Self::Done)
    }
}

/// Renders a fragment on one line, addressed by JSON pointer:
/// `/patterns/0/old += "text"`, `/path: done`, `(root) = 12`.
impl fmt::Display for StreamFragment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut pointer = JsonPointer::root();
        let mut fragment = self;
        loop {
            match fragment {
                Self::ObjectEntry { key, value } => {
                    pointer.push_key(key);
                    fragment = value;
                }
                Self::ArrayItem { index, value } => {
                    pointer.push_index(*index);
                    fragment = value;
                }
                Self::Scalar(scalar) => {
                    return write!(f, "{pointer} = {}", serde_json::Value::from(scalar.clone()));
                }
                Self::String(text) => {
                    // JSON string syntax escapes every control character.
                    let quoted = serde_json::Value::from(text.as_str());
                    return write!(f, "{pointer} += {quoted}");
                }
                Self::Empty(kind) => return write!(f, "{pointer} = {}", kind.value()),
                Self::Done => return write!(f, "{pointer}: done"),
            }
        }
    }
}

/// Ephemeral progress event emitted by the
/// [`EventBuilder`](crate::EventBuilder) while a tool call's arguments
/// stream in. Never persisted to the conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallArgumentProgress {
    /// The provider's id of the tool call.
    pub tool_call_id: String,
    /// The name of the tool being called.
    pub tool_name: String,
    /// What arrived for the call's arguments.
    pub fragment: StreamFragment,
}
