//! [`FragmentAggregator`]: collects [`StreamFragment`]s back into complete
//! [`serde_json::Value`]s (RFD 043, phase 1).

use serde_json::{Map, Value};

use super::fragment::{FragmentRef, Leaf, PathSegment, StreamFragment, StringId};
use super::pointer::JsonPointer;

/// Rebuilds JSON values from a stream of [`StreamFragment`]s.
///
/// [`push`](Self::push) returns the root value when the root's `Done`
/// arrives. While the root is an object, each top-level entry ("argument") is
/// available from [`completed_argument`](Self::completed_argument) as soon as
/// its own `Done` arrives, which is what streaming policy evaluation needs.
///
/// Duplicate keys are valid JSON and are kept as serde_json keeps them (the
/// last value wins, in the first key's position), but every duplicate is
/// recorded in [`duplicate_keys`](Self::duplicate_keys) so the tool-call
/// layer can refuse the call (architecture decision 1).
///
/// A value returned by `push` is complete, but the text it came from is only
/// known to be valid once the parser's `finish` succeeds.
///
/// A fragment that does not continue the stream (for example a `Done` for a
/// value that was never opened) puts the aggregator into a failed state,
/// reported by [`error`](Self::error); it then ignores further input.
#[derive(Debug, Default)]
pub struct FragmentAggregator {
    /// Values under construction, outermost first.
    stack: Vec<Node>,
    /// The top-level key completed by the last push, if any.
    completed: Option<String>,
    duplicates: Vec<DuplicateKey>,
    error: Option<AggregateError>,
    done: bool,
    /// Fragments pushed so far, to say which one did not fit.
    pushed: usize,
    /// The string value the last fragment appended to, when the parser
    /// named it: it is the innermost node, and a fragment of the same
    /// string is appended to it without walking the path.
    last_string: Option<StringId>,
}

/// A key that occurred twice in one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The repeated key.
    pub key: String,
    /// Pointer to the entry, e.g. `/patterns/0/old`.
    pub pointer: JsonPointer,
    /// The value the repeated key had before (the aggregated arguments keep
    /// the later one), so the user can be shown both.
    pub earlier: Box<Value>,
}

/// What has arrived of a call's arguments: for the user to read before
/// they are complete.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgumentsSoFar {
    /// The top-level arguments: the complete ones and, under
    /// [`streaming`](Self::streaming), what has arrived of the one still
    /// arriving.
    pub arguments: Map<String, Value>,
    /// The top-level argument still arriving: a string holds what arrived
    /// of it, an array or object its items and entries so far.
    pub streaming: Option<String>,
    /// Whether the arguments are complete (the root object closed).
    pub complete: bool,
}

/// A fragment that cannot follow the ones before it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fragment {index} does not continue the value stream: {reason}")]
pub struct AggregateError {
    /// Position of the offending fragment, counted from 0.
    pub index: usize,
    /// What was wrong with it.
    pub reason: &'static str,
}

#[derive(Debug)]
enum Node {
    Object {
        map: Map<String, Value>,
        /// Key of the entry whose value is the next node, if one is open.
        open: Option<String>,
    },
    Array {
        items: Vec<Value>,
        /// Whether the item at `items.len()` is the next node.
        open: bool,
    },
    String(String),
    /// A scalar or empty value waiting for its `Done`.
    Complete(Value),
}

impl FragmentAggregator {
    /// An empty aggregator.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one fragment; returns the root value when its `Done` arrives.
    pub fn push(&mut self, fragment: StreamFragment) -> Option<Value> {
        self.push_ref(&fragment)
    }

    /// Like [`push`](Self::push), for a fragment the caller keeps.
    pub fn push_ref(&mut self, fragment: &StreamFragment) -> Option<Value> {
        self.push_fragment(fragment.view())
    }

    /// Like [`push`](Self::push), for a borrowed fragment, as
    /// [`IncrementalArgParser::push_with`](crate::IncrementalArgParser::push_with)
    /// hands them out: the value is built from the fragment's path and leaf
    /// without keeping either, so memory follows the value, not the number
    /// of fragments times their depth.
    pub fn push_fragment(&mut self, fragment: FragmentRef<'_>) -> Option<Value> {
        self.completed = None;
        self.pushed += 1;
        if self.error.is_some() {
            return None;
        }
        if self.done {
            return self.reject("a fragment after the root value was done");
        }
        if let (Leaf::String(more), Some(string)) = (fragment.leaf(), fragment.string_id())
            && self.last_string == Some(string)
            && let Some(Node::String(text)) = self.stack.last_mut()
        {
            // The next piece of the string the last fragment appended to:
            // its path was checked when the string began.
            text.push_str(more);
            return None;
        }
        self.last_string = match fragment.leaf() {
            Leaf::String(_) => fragment.string_id(),
            _ => None,
        };
        match self.apply(fragment) {
            Ok(root) => root,
            Err(reason) => self.reject(reason),
        }
    }

    /// The top-level argument whose `Done` was the last fragment pushed, with
    /// its complete value. `None` after any other fragment.
    #[must_use]
    pub fn completed_argument(&self) -> Option<(&str, &Value)> {
        let key = self.completed.as_deref()?;
        match self.stack.first() {
            Some(Node::Object { map, .. }) => map.get_key_value(key).map(|(k, v)| (k.as_str(), v)),
            _ => None,
        }
    }

    /// The top-level arguments completed so far, while the root object is
    /// still open.
    #[must_use]
    pub fn arguments(&self) -> Option<&Map<String, Value>> {
        match self.stack.first() {
            Some(Node::Object { map, .. }) => Some(map),
            _ => None,
        }
    }

    /// The arguments received so far, while the root object is open, with
    /// what has arrived of the one still arriving; `None` before the root
    /// object opens and once it is done. A copy: for a user who asked to
    /// see them, not for every fragment.
    #[must_use]
    pub fn so_far(&self) -> Option<ArgumentsSoFar> {
        let Some(Node::Object { map, open }) = self.stack.first() else {
            return None;
        };
        let mut arguments = map.clone();
        let Some(key) = open else {
            return Some(ArgumentsSoFar {
                arguments,
                streaming: None,
                complete: false,
            });
        };
        // The open values, from the innermost out, each into its parent.
        let mut partial: Option<Value> = None;
        for node in self.stack[1..].iter().rev() {
            partial = Some(match node {
                Node::Object { map, open } => {
                    let mut map = map.clone();
                    if let (Some(key), Some(value)) = (open, partial.take()) {
                        map.insert(key.clone(), value);
                    }
                    Value::Object(map)
                }
                Node::Array { items, open } => {
                    let mut items = items.clone();
                    if let (true, Some(value)) = (*open, partial.take()) {
                        items.push(value);
                    }
                    Value::Array(items)
                }
                Node::String(text) => Value::String(text.clone()),
                Node::Complete(value) => value.clone(),
            });
        }
        if let Some(value) = partial {
            arguments.insert(key.clone(), value);
        }
        Some(ArgumentsSoFar {
            arguments,
            streaming: Some(key.clone()),
            complete: false,
        })
    }

    /// Every duplicate key seen so far, in order of appearance.
    #[must_use]
    pub fn duplicate_keys(&self) -> &[DuplicateKey] {
        &self.duplicates
    }

    /// Why the aggregator stopped, if a fragment did not fit.
    #[must_use]
    pub fn error(&self) -> Option<&AggregateError> {
        self.error.as_ref()
    }

    /// Whether the root value has been returned.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.done
    }

    fn reject(&mut self, reason: &'static str) -> Option<Value> {
        self.error = Some(AggregateError {
            index: self.pushed - 1,
            reason,
        });
        None
    }

    fn apply(&mut self, fragment: FragmentRef<'_>) -> Result<Option<Value>, &'static str> {
        let leaf = fragment.leaf();
        let mut segments = fragment.path().iter();
        let mut level = 0;
        loop {
            let segment = segments.next();
            if level == self.stack.len() {
                return self.open(segment, segments, leaf).map(|()| None);
            }
            let has_child = level + 1 < self.stack.len();
            match (&mut self.stack[level], segment) {
                (Node::Object { open, .. }, Some(PathSegment::Key(key))) => match open {
                    Some(open_key) if has_child && open_key == key => {}
                    None if !has_child => *open = Some(key.to_owned()),
                    _ => return Err("an entry for a key that is not the open one"),
                },
                (Node::Array { items, open }, Some(PathSegment::Index(index))) => {
                    if index != items.len() {
                        return Err("an array item out of order");
                    }
                    if !*open {
                        if has_child {
                            return Err("an array item while another is open");
                        }
                        *open = true;
                    }
                }
                (Node::String(text), None) if !has_child => {
                    return match leaf {
                        Leaf::String(more) => {
                            text.push_str(more);
                            Ok(None)
                        }
                        Leaf::Done => Ok(self.close(level)),
                        _ => Err("a fragment that does not fit the open value"),
                    };
                }
                (_, None) if !has_child && leaf == Leaf::Done => return Ok(self.close(level)),
                _ => return Err("a fragment that does not fit the open value"),
            }
            level += 1;
        }
    }

    /// Starts a new value from its first fragment: `first` and `rest` are
    /// the segments of its path not yet open, `leaf` what it says.
    fn open<'a>(
        &mut self,
        first: Option<PathSegment<'a>>,
        rest: impl Iterator<Item = PathSegment<'a>>,
        leaf: Leaf<'_>,
    ) -> Result<(), &'static str> {
        for segment in first.into_iter().chain(rest) {
            match segment {
                PathSegment::Key(key) => self.stack.push(Node::Object {
                    map: Map::new(),
                    open: Some(key.to_owned()),
                }),
                PathSegment::Index(index) => {
                    if index != 0 {
                        return Err("an array whose first item is not item 0");
                    }
                    self.stack.push(Node::Array {
                        items: Vec::new(),
                        open: true,
                    });
                }
            }
        }
        let node = match leaf {
            Leaf::String(text) => Node::String(text.to_owned()),
            Leaf::Scalar(scalar) => Node::Complete(Value::from(scalar.clone())),
            Leaf::Empty(kind) => Node::Complete(kind.value()),
            Leaf::Done => return Err("a Done for a value that never started"),
        };
        self.stack.push(node);
        Ok(())
    }

    /// Closes the value at `level` (the innermost) and stores it in its
    /// parent; returns the root when `level` is 0.
    fn close(&mut self, level: usize) -> Option<Value> {
        let node = self.stack.pop()?;
        let value = match node {
            Node::Object { map, .. } => Value::Object(map),
            Node::Array { items, .. } => Value::Array(items),
            Node::String(text) => Value::String(text),
            Node::Complete(value) => value,
        };
        if level == 0 {
            self.done = true;
            return Some(value);
        }
        let pointer = self.duplicate_pointer_prefix(level);
        match self.stack.last_mut() {
            Some(Node::Object { map, open }) => {
                let key = open.take().unwrap_or_default();
                if level == 1 {
                    self.completed = Some(key.clone());
                }
                if let Some(earlier) = map.insert(key.clone(), value) {
                    let mut pointer = pointer.unwrap_or_default();
                    pointer.push_key(&key);
                    self.duplicates.push(DuplicateKey {
                        key,
                        pointer,
                        earlier: Box::new(earlier),
                    });
                }
            }
            Some(Node::Array { items, open }) => {
                items.push(value);
                *open = false;
            }
            _ => {}
        }
        None
    }

    /// The pointer to the object at `level - 1`, but only if that object
    /// already holds the key being closed (building it is rare, so only a
    /// duplicate pays for it).
    fn duplicate_pointer_prefix(&self, level: usize) -> Option<JsonPointer> {
        let Some(Node::Object {
            map,
            open: Some(key),
        }) = self.stack.get(level - 1)
        else {
            return None;
        };
        if !map.contains_key(key) {
            return None;
        }
        let mut pointer = JsonPointer::root();
        for node in &self.stack[..level - 1] {
            match node {
                Node::Object {
                    open: Some(key), ..
                } => pointer.push_key(key),
                Node::Array { items, .. } => pointer.push_index(items.len()),
                _ => {}
            }
        }
        Some(pointer)
    }
}

#[cfg(test)]
#[path = "aggregator_tests.rs"]
mod tests;
