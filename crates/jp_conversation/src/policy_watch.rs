//! [`PolicyWatch`]: one tool call's streaming policy evaluation (RFD D26),
//! fed by the call's [`ToolCallArgumentProgress`].
//!
//! It drives a [`StreamingPolicyState`] from `jp_config`: each top-level
//! argument is read from the [`EventBuilder`](crate::EventBuilder) when it
//! completes (no copy is kept); a nested value a rule looks at
//! (`/patterns/path`) is collected here from its fragments, only while some
//! undecided rule still wants it.

use std::collections::HashMap;

use jp_config::policy::{Decision, Piece, Segment, StreamingPolicyState, Workspace};
use serde_json::Value;

use crate::arguments::{EmptyKind, StreamFragment, ToolCallArgumentProgress};

/// One call's streaming policy evaluation.
#[derive(Debug)]
pub struct PolicyWatch {
    state: StreamingPolicyState,
    /// Nested values being collected, by their place.
    collecting: HashMap<Vec<Segment>, Value>,
}

impl PolicyWatch {
    /// Watches a call under `state`'s policy.
    #[must_use]
    pub fn new(state: StreamingPolicyState) -> Self {
        Self {
            state,
            collecting: HashMap::new(),
        }
    }

    /// Feeds one piece of the call's arguments; `argument` gives a
    /// completed top-level argument's value. Returns the decision when this
    /// piece made it.
    pub fn feed<'v>(
        &mut self,
        progress: &ToolCallArgumentProgress,
        argument: impl FnOnce(&str) -> Option<&'v Value>,
        workspace: &Workspace,
    ) -> Option<&Decision> {
        if self.state.decision().is_some() {
            return None;
        }
        let fragment = &progress.fragment;
        let StreamFragment::ObjectEntry { key, value } = fragment else {
            // The root itself (not an object, or its end): the batch
            // evaluation at the end settles it.
            return None;
        };
        if matches!(**value, StreamFragment::Done) {
            let value = argument(key)?;
            return self.state.parameter_done(key, value, workspace);
        }
        if fragment.depth() < 2 {
            // A piece of a top-level scalar or string: only its end counts.
            return None;
        }
        let (path, leaf) = place(fragment);
        let piece = match leaf {
            StreamFragment::Done => None,
            StreamFragment::Empty(EmptyKind::Array) => Some(Piece::EmptyArray),
            StreamFragment::Empty(EmptyKind::Object) => Some(Piece::EmptyObject),
            _ => Some(Piece::Value),
        };
        if let Some(piece) = piece {
            self.state.seen(&path, piece);
        }
        if matches!(leaf, StreamFragment::Done) {
            let value = self.collecting.remove(&path)?;
            return self.state.element_done(&path, &value, workspace);
        }
        let piece = match leaf {
            StreamFragment::String(text) => Value::String(text.clone()),
            StreamFragment::Scalar(scalar) => Value::from(scalar.clone()),
            StreamFragment::Empty(kind) => kind.value(),
            // A container where a rule expects a value: the parameter's end
            // settles it.
            _ => return None,
        };
        if let Some(Value::String(held)) = self.collecting.get_mut(&path) {
            if let Value::String(more) = piece {
                held.push_str(&more);
            }
            return None;
        }
        if self.state.wants(&path) {
            self.collecting.insert(path, piece);
        }
        None
    }
}

/// The place a fragment addresses, and its innermost part.
fn place(fragment: &StreamFragment) -> (Vec<Segment>, &StreamFragment) {
    let mut path = Vec::with_capacity(fragment.depth());
    let mut fragment = fragment;
    loop {
        match fragment {
            StreamFragment::ObjectEntry { key, value } => {
                path.push(Segment::Key(key.clone()));
                fragment = value;
            }
            StreamFragment::ArrayItem { index, value } => {
                path.push(Segment::Index(*index));
                fragment = value;
            }
            leaf => return (path, leaf),
        }
    }
}

#[cfg(test)]
#[path = "policy_watch_tests.rs"]
mod tests;
