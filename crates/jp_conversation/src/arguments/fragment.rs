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
        self.view().fmt(f)
    }
}

impl StreamFragment {
    /// This fragment as a [`FragmentRef`], the form the streaming
    /// consumers take.
    #[must_use]
    pub fn view(&self) -> FragmentRef<'_> {
        let mut leaf = self;
        while let Self::ArrayItem { value, .. } | Self::ObjectEntry { value, .. } = leaf {
            leaf = value;
        }
        let leaf = match leaf {
            Self::Scalar(scalar) => Leaf::Scalar(scalar),
            Self::String(text) => Leaf::String(text),
            Self::Empty(kind) => Leaf::Empty(*kind),
            // The loop above stopped at a leaf, so this is `Done`.
            _ => Leaf::Done,
        };
        FragmentRef {
            path: FragmentPath(PathRepr::Nested(self)),
            leaf,
            string: None,
        }
    }
}

/// One step from a value into a value inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSegment<'a> {
    /// The entry `key` of an object.
    Key(&'a str),
    /// The item at this index of an array.
    Index(usize),
}

/// What a fragment says about the value its path leads to: the innermost
/// part of a [`StreamFragment`], borrowed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Leaf<'a> {
    /// A complete scalar.
    Scalar(&'a Scalar),
    /// Decoded text of a string value; never empty.
    String(&'a str),
    /// The value is an empty string, array or object.
    Empty(EmptyKind),
    /// No more fragments for this value.
    Done,
}

/// The containers between the root and a fragment's leaf, outermost first.
///
/// Borrowed from whoever produced the fragment (the parser's stack of open
/// containers, or an owned [`StreamFragment`]), so handing out a fragment
/// copies nothing, however deep it is.
#[derive(Clone, Copy)]
pub struct FragmentPath<'a>(PathRepr<'a>);

#[derive(Clone, Copy)]
enum PathRepr<'a> {
    /// The parser's open containers: `(key, count)` per level, `key` being
    /// `None` for an array whose current item is `count - 1`.
    Frames(&'a [super::parser::Frame]),
    /// The wrappers of an owned fragment.
    Nested(&'a StreamFragment),
}

impl<'a> FragmentPath<'a> {
    pub(crate) fn frames(frames: &'a [super::parser::Frame]) -> Self {
        Self(PathRepr::Frames(frames))
    }

    /// The segments, outermost first.
    #[must_use]
    pub fn iter(&self) -> PathIter<'a> {
        PathIter(match self.0 {
            PathRepr::Frames(frames) => IterRepr::Frames(frames.iter()),
            PathRepr::Nested(fragment) => IterRepr::Nested(fragment),
        })
    }

    /// How many containers lie between the root and the leaf.
    #[must_use]
    pub fn len(&self) -> usize {
        match self.0 {
            PathRepr::Frames(frames) => frames.len(),
            PathRepr::Nested(fragment) => fragment.depth(),
        }
    }

    /// Whether the fragment is about the root value itself.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first segment: the top-level key or index, if any.
    #[must_use]
    pub fn first(&self) -> Option<PathSegment<'a>> {
        self.iter().next()
    }

    /// The path as a JSON pointer.
    #[must_use]
    pub fn pointer(&self) -> JsonPointer {
        let mut pointer = JsonPointer::root();
        for segment in self.iter() {
            match segment {
                PathSegment::Key(key) => pointer.push_key(key),
                PathSegment::Index(index) => pointer.push_index(index),
            }
        }
        pointer
    }
}

impl fmt::Debug for FragmentPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &FragmentPath<'a> {
    type Item = PathSegment<'a>;
    type IntoIter = PathIter<'a>;

    fn into_iter(self) -> PathIter<'a> {
        self.iter()
    }
}

/// The segments of a [`FragmentPath`], outermost first.
#[derive(Clone)]
pub struct PathIter<'a>(IterRepr<'a>);

#[derive(Clone)]
enum IterRepr<'a> {
    Frames(std::slice::Iter<'a, super::parser::Frame>),
    Nested(&'a StreamFragment),
}

impl<'a> Iterator for PathIter<'a> {
    type Item = PathSegment<'a>;

    fn next(&mut self) -> Option<PathSegment<'a>> {
        match &mut self.0 {
            IterRepr::Frames(frames) => frames.next().map(super::parser::Frame::segment),
            IterRepr::Nested(fragment) => match fragment {
                StreamFragment::ObjectEntry { key, value } => {
                    *fragment = value;
                    Some(PathSegment::Key(key))
                }
                StreamFragment::ArrayItem { index, value } => {
                    *fragment = value;
                    Some(PathSegment::Index(*index))
                }
                _ => None,
            },
        }
    }
}

/// A fragment handed to a visitor: the same information as a
/// [`StreamFragment`], borrowed instead of owned.
///
/// [`IncrementalArgParser::push_with`](crate::IncrementalArgParser::push_with)
/// hands these out with the path borrowed from its own stack, so a fragment
/// costs nothing however deep its value is: hostile arguments of many tiny
/// values nested a hundred levels deep cannot multiply their size in memory
/// (issue 14). [`to_fragment`](Self::to_fragment) gives the RFD 043 form when one
/// must be kept.
#[derive(Clone, Copy)]
pub struct FragmentRef<'a> {
    path: FragmentPath<'a>,
    leaf: Leaf<'a>,
    /// For a `String` leaf from the parser: which string value it belongs
    /// to, so the aggregator can append the next piece of the same string
    /// without walking the path again. Not part of what the fragment says:
    /// equality, `Debug` and [`to_fragment`](Self::to_fragment) ignore it.
    string: Option<StringId>,
}

/// One string value of one parser: the parser's id, unique in the process,
/// and the string's serial number in that parser's input. Two fragments
/// with the same id are about the same string, hence the same path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StringId {
    pub(crate) parser: u64,
    pub(crate) serial: u64,
}

impl<'a> FragmentRef<'a> {
    pub(crate) fn new(path: FragmentPath<'a>, leaf: Leaf<'a>) -> Self {
        Self {
            path,
            leaf,
            string: None,
        }
    }

    /// A `String` fragment of the string value `string`.
    pub(crate) fn string(path: FragmentPath<'a>, text: &'a str, string: StringId) -> Self {
        Self {
            path,
            leaf: Leaf::String(text),
            string: Some(string),
        }
    }

    /// The string value this fragment continues, if the parser said.
    pub(crate) fn string_id(&self) -> Option<StringId> {
        self.string
    }

    /// The containers between the root and the leaf.
    #[must_use]
    pub fn path(&self) -> FragmentPath<'a> {
        self.path
    }

    /// What the fragment says about its value.
    #[must_use]
    pub fn leaf(&self) -> Leaf<'a> {
        self.leaf
    }

    /// How many containers lie between the root and the leaf.
    #[must_use]
    pub fn depth(&self) -> usize {
        self.path.len()
    }

    /// Whether this fragment closes the value it addresses.
    #[must_use]
    pub fn is_done(&self) -> bool {
        matches!(self.leaf, Leaf::Done)
    }

    /// The top-level key when this fragment is the `Done` of a top-level
    /// argument (`ObjectEntry { key, Done }`).
    #[must_use]
    pub fn completes_argument(&self) -> Option<&'a str> {
        match (self.is_done(), self.depth(), self.path.first()) {
            (true, 1, Some(PathSegment::Key(key))) => Some(key),
            _ => None,
        }
    }

    /// The owned [`StreamFragment`] with this path and leaf.
    #[must_use]
    pub fn to_fragment(&self) -> StreamFragment {
        let mut fragment = match self.leaf {
            Leaf::Scalar(scalar) => StreamFragment::Scalar(scalar.clone()),
            Leaf::String(text) => StreamFragment::String(text.to_owned()),
            Leaf::Empty(kind) => StreamFragment::Empty(kind),
            Leaf::Done => StreamFragment::Done,
        };
        let segments: Vec<PathSegment<'a>> = self.path.iter().collect();
        for segment in segments.into_iter().rev() {
            fragment = match segment {
                PathSegment::Key(key) => fragment.in_object(key),
                PathSegment::Index(index) => fragment.in_array(index),
            };
        }
        fragment
    }
}

impl fmt::Debug for FragmentRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FragmentRef")
            .field("path", &self.path)
            .field("leaf", &self.leaf)
            .finish()
    }
}

impl PartialEq for FragmentRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.leaf == other.leaf && self.path.iter().eq(other.path.iter())
    }
}

/// Renders a fragment on one line, addressed by JSON pointer:
/// `/patterns/0/old += "text"`, `/path: done`, `(root) = 12`.
impl fmt::Display for FragmentRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = self.path.pointer();
        match self.leaf {
            Leaf::Scalar(scalar) => {
                write!(f, "{pointer} = {}", serde_json::Value::from(scalar.clone()))
            }
            Leaf::String(text) => {
                // JSON string syntax escapes every control character.
                let quoted = serde_json::Value::from(text);
                write!(f, "{pointer} += {quoted}")
            }
            Leaf::Empty(kind) => write!(f, "{pointer} = {}", kind.value()),
            Leaf::Done => write!(f, "{pointer}: done"),
        }
    }
}

/// A [`ToolCallArgumentProgress`] handed to a visitor: the call's identity
/// and a borrowed fragment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressRef<'a> {
    /// The provider's id of the tool call.
    pub tool_call_id: &'a str,
    /// The name of the tool being called.
    pub tool_name: &'a str,
    /// What arrived for the call's arguments.
    pub fragment: FragmentRef<'a>,
}

impl ProgressRef<'_> {
    /// The owned [`ToolCallArgumentProgress`].
    #[must_use]
    pub fn to_progress(&self) -> ToolCallArgumentProgress {
        ToolCallArgumentProgress {
            tool_call_id: self.tool_call_id.to_owned(),
            tool_name: self.tool_name.to_owned(),
            fragment: self.fragment.to_fragment(),
        }
    }
}

impl ToolCallArgumentProgress {
    /// This progress as a [`ProgressRef`].
    #[must_use]
    pub fn view(&self) -> ProgressRef<'_> {
        ProgressRef {
            tool_call_id: &self.tool_call_id,
            tool_name: &self.tool_name,
            fragment: self.fragment.view(),
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
