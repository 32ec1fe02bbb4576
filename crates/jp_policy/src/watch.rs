//! [`PolicyWatch`]: one tool call's streaming policy evaluation (RFD D26),
//! fed by the call's [`ToolCallArgumentProgress`].
//!
//! It drives a [`StreamingPolicyState`]: each top-level argument is read
//! from the [`EventBuilder`](jp_conversation::EventBuilder) when it
//! completes (no copy is kept); a nested value a rule looks at
//! (`/patterns/path`) is collected here from its fragments, only while some
//! undecided rule still wants it.

use std::collections::{HashMap, HashSet};

use jp_conversation::{EmptyKind, FragmentRef, Leaf, PathSegment, ToolCallArgumentProgress};
use serde_json::Value;

use crate::{Decision, Piece, Segment, Step, StreamingPolicyState, Workspace};

/// One call's streaming policy evaluation.
#[derive(Debug)]
pub struct PolicyWatch {
    state: StreamingPolicyState,
    /// Nested values being collected, by their place.
    collecting: HashMap<Vec<Segment>, Value>,
    /// The top-level arguments some rule walks into; `None` when a rule
    /// walks into every one (its condition starts with `[]`). Pieces of
    /// other arguments are skipped without building their place, which
    /// for a value nested deep costs a key per level.
    walked: Option<HashSet<String>>,
}

impl PolicyWatch {
    /// Watches a call under `state`'s policy.
    #[must_use]
    pub fn new(state: StreamingPolicyState) -> Self {
        let mut walked = Some(HashSet::new());
        for rule in state.policy().rules() {
            match rule.condition.as_ref().and_then(|c| c.steps().first()) {
                Some(Step::Member(name)) => {
                    if let Some(walked) = &mut walked {
                        walked.insert(name.clone());
                    }
                }
                Some(Step::Each) => walked = None,
                None => {}
            }
        }
        Self {
            state,
            collecting: HashMap::new(),
            walked,
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
        self.feed_fragment(progress.fragment.view(), argument, workspace)
    }

    /// [`feed`](Self::feed) for a borrowed fragment, as
    /// [`EventBuilder::handle_part_with`](jp_conversation::EventBuilder::handle_part_with)
    /// hands them out. Nothing is kept of a fragment no undecided rule
    /// wants.
    pub fn feed_fragment<'v>(
        &mut self,
        fragment: FragmentRef<'_>,
        argument: impl FnOnce(&str) -> Option<&'v Value>,
        workspace: &Workspace,
    ) -> Option<&Decision> {
        if self.state.decision().is_some() {
            return None;
        }
        let Some(PathSegment::Key(key)) = fragment.path().first() else {
            // The root itself (not an object, or its end): the batch
            // evaluation at the end settles it.
            return None;
        };
        if fragment.depth() == 1 && fragment.is_done() {
            let value = argument(key)?;
            return self.state.parameter_done(key, value, workspace);
        }
        if fragment.depth() < 2 {
            // A piece of a top-level scalar or string: only its end counts.
            return None;
        }
        if self
            .walked
            .as_ref()
            .is_some_and(|walked| !walked.contains(key))
        {
            // No rule looks inside this argument; its end is fed above.
            return None;
        }
        let path = place(fragment);
        let leaf = fragment.leaf();
        let piece = match leaf {
            Leaf::Done => None,
            Leaf::Empty(EmptyKind::Array) => Some(Piece::EmptyArray),
            Leaf::Empty(EmptyKind::Object) => Some(Piece::EmptyObject),
            _ => Some(Piece::Value),
        };
        if let Some(piece) = piece {
            self.state.seen(&path, piece);
        }
        let piece = match leaf {
            Leaf::Done => {
                let value = self.collecting.remove(&path)?;
                return self.state.element_done(&path, &value, workspace);
            }
            Leaf::String(text) => Value::String(text.to_owned()),
            Leaf::Scalar(scalar) => Value::from(scalar.clone()),
            Leaf::Empty(kind) => kind.value(),
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

/// The place a fragment addresses.
fn place(fragment: FragmentRef<'_>) -> Vec<Segment> {
    fragment
        .path()
        .iter()
        .map(|segment| match segment {
            PathSegment::Key(key) => Segment::Key(key.to_owned()),
            PathSegment::Index(index) => Segment::Index(index),
        })
        .collect()
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
